"""``fft``: numpy.fft's transforms over ``axes`` as one primitive (JAX's ``fft_p``).

``fft(x, fft_type=..., axes=..., lengths=..., norm=...)`` is

- ``"fft"``/``"ifft"``: ``np.fft.fftn``/``ifftn`` of a complex ``x`` over ``axes``;
- ``"rfft"``: ``np.fft.rfftn`` of a real ``x`` (the last of ``axes`` becomes
  ``n // 2 + 1`` long);
- ``"irfft"``: ``np.fft.irfftn(x, s=lengths)`` of a complex ``x``, a real result whose
  last axis is ``lengths[-1]`` long (``x``'s is ``lengths[-1] // 2 + 1``);

``lengths`` are the transform's sizes (the real signal's for ``rfft``/``irfft``) and
``norm`` numpy's (``"backward"``, ``"ortho"``, ``"forward"``). numpy's ``n=``/``s=``
(zero padding, truncation) are slices and pads before it
(:mod:`symgrad.numpy_api.fft`), as in ``jax.numpy.fft``.

VJPs are transposes under ``Re(sum(a * b))`` (README, "Complex numbers"), JAX's
rules with the normalization carried along (``swap`` exchanges "backward" and
"forward"):

- ``fft``, ``ifft``: the DFT matrix is symmetric, so the transpose is the same
  transform with the same ``norm``;
- ``rfft``: ``irfft(conj(g) / mask, norm=swap(norm))``, where ``mask`` is 2 on the
  bins whose mirror image ``rfft`` drops, 1 on the DC bin (and the Nyquist bin for an
  even length): an ``irfft`` counts those bins twice;
- ``irfft``: ``conj(mask * rfft(g, norm=swap(norm)))``.

All four are linear, so forward mode (the double VJP) and second derivatives follow.
The SymPy form is the DFT sum itself (small sizes only: it has ``n**2`` terms).
Kernels: Numba has no FFT, so on the Numba backend an ``fft`` equation runs numpy's
transform between the kernels before and after it (``backend/numba/lowering/complex.py``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.errors import ShapeError
from ..core.ir import COMPLEXES, FLOATS, Aval, complex_of, real_of
from ..core.tracing import apply
from .complex import conj
from .elementwise import div, mul
from .registry import register

FFT_TYPES = ("fft", "ifft", "rfft", "irfft")
NORMS = ("backward", "ortho", "forward")
_SWAP = {"backward": "forward", "ortho": "ortho", "forward": "backward"}
#: the largest transform the SymPy form writes out (n**2 terms per axis)
SYMPY_MAX = 64


def _fft_rule(x: Aval, *, fft_type: str, axes: tuple[int, ...], lengths: tuple[int, ...],
              norm: str) -> Aval:
    if fft_type not in FFT_TYPES or norm not in NORMS or len(axes) != len(lengths) or \
            not axes or len(set(axes)) != len(axes) or any(not 0 <= a < x.ndim for a in axes):
        raise ShapeError(f"fft: bad parameters {fft_type}, axes={axes}, lengths={lengths}, "
                         f"norm={norm} for {x}")
    real_in = fft_type == "rfft"
    if (x.dtype in FLOATS) != real_in or (not real_in and x.dtype not in COMPLEXES):
        raise TypeError(f"fft ({fft_type}) takes a {'real' if real_in else 'complex'} "
                        f"operand, got {x}")
    sizes = [x.shape[a] for a in axes]
    if fft_type == "irfft":
        sizes[-1] = 2 * (sizes[-1] - 1)  # compared below with lengths[-1] // 2 + 1
        expected = (*lengths[:-1], lengths[-1] // 2 + 1)
        if tuple(x.shape[a] for a in axes) != expected:
            raise ShapeError(f"fft (irfft): {x} over axes {axes} should have sizes {expected}")
    elif tuple(sizes) != tuple(lengths) or min(lengths) < 1:
        raise ShapeError(f"fft ({fft_type}): {x} over axes {axes} has sizes {tuple(sizes)}, "
                         f"not {lengths}")
    shape = list(x.shape)
    if fft_type == "rfft":
        shape[axes[-1]] = lengths[-1] // 2 + 1
        return Aval(tuple(shape), complex_of(x.dtype))
    if fft_type == "irfft":
        shape[axes[-1]] = lengths[-1]
        return Aval(tuple(shape), real_of(x.dtype))
    return Aval(x.shape, x.dtype)


_NUMPY = {"fft": "fftn", "ifft": "ifftn", "rfft": "rfftn", "irfft": "irfftn"}


def _fft_impl(x: Any, *, fft_type: str, axes: tuple[int, ...], lengths: tuple[int, ...],
              norm: str) -> Any:
    x = np.asarray(x)
    fn = getattr(np.fft, _NUMPY[fft_type])
    if fft_type == "irfft":
        out = fn(x, s=lengths, axes=axes, norm=norm)
        return out.astype(real_of(x.dtype.name), copy=False)
    out = fn(x, axes=axes, norm=norm)
    return out.astype(complex_of(x.dtype.name), copy=False)


def _mask(shape_len: int, ndim: int, axis: int, n: int) -> np.ndarray:
    """2 on the bins of a half spectrum whose mirror image is dropped, 1 on the DC bin
    and (for an even ``n``) the Nyquist bin, along ``axis`` of an ``ndim`` array."""
    mask = np.full(shape_len, 2.0)
    mask[0] = 1.0
    if n % 2 == 0:
        mask[-1] = 1.0
    return mask.reshape([shape_len if k == axis else 1 for k in range(ndim)])


def _fft_vjp(g: Any, ans: Any, x: Any, *, fft_type: str, axes: tuple[int, ...],
             lengths: tuple[int, ...], norm: str) -> tuple:
    params = {"axes": axes, "lengths": lengths}
    if fft_type in ("fft", "ifft"):
        return (fft(g, fft_type=fft_type, norm=norm, **params),)
    ndim, half = len(x.shape), lengths[-1] // 2 + 1
    mask = _mask(half, ndim, axes[-1], lengths[-1])
    if fft_type == "rfft":
        return (fft(div(conj(g), mask), fft_type="irfft", norm=_SWAP[norm], **params),)
    spectrum = fft(g, fft_type="rfft", norm=_SWAP[norm], **params)
    return (conj(mul(spectrum, mask)),)


def _fft_sympy(sp: Any, x: Any, *, fft_type: str, axes: tuple[int, ...],
               lengths: tuple[int, ...], norm: str) -> Any:
    """The DFT sum over each axis, on numpy object arrays of SymPy expressions."""
    if math.prod(lengths) > SYMPY_MAX:
        raise NotImplementedError(f"the SymPy form of fft writes n**2 terms: only for "
                                  f"transforms of at most {SYMPY_MAX} points")
    x = np.asarray(x, dtype=object)
    inverse = fft_type in ("ifft", "irfft")
    if fft_type == "irfft":  # the full Hermitian spectrum of the last axis first
        a, n = axes[-1], lengths[-1]
        half = np.moveaxis(x, a, -1)
        full = [half[..., k] if k < half.shape[-1] else
                np.vectorize(sp.conjugate, otypes=[object])(half[..., n - k])
                for k in range(n)]
        x = np.moveaxis(np.stack(full, axis=-1), -1, a)
    for a, n in zip(axes, lengths):
        sign = 1 if inverse else -1
        w = np.array([[sp.exp(sign * 2 * sp.pi * sp.I * j * k / n) for k in range(n)]
                      for j in range(n)], dtype=object)
        x = np.moveaxis(np.moveaxis(x, a, -1) @ w, -1, a)
    total = math.prod(lengths)
    scale = {"backward": sp.Integer(1) / total if inverse else sp.Integer(1),
             "ortho": 1 / sp.sqrt(total),
             "forward": sp.Integer(1) if inverse else sp.Integer(1) / total}[norm]
    x = x * scale
    if fft_type == "rfft":
        x = np.moveaxis(np.moveaxis(x, axes[-1], -1)[..., :lengths[-1] // 2 + 1], -1, axes[-1])
    if fft_type == "irfft":  # the imaginary parts of the DC and Nyquist bins do not count
        x = np.vectorize(sp.re, otypes=[object])(x)
    return x


def _fft_batch(b: Any, args: Any, flags: Any, **params: Any) -> tuple:
    axes = tuple(a + 1 for a in params.pop("axes"))
    return b.bind(fft_p, args, axes=axes, **params), True


fft_p = register(
    name="fft", kind="array", complex=True, shape_rule=_fft_rule, impl=_fft_impl,
    vjp=_fft_vjp, sympy=_fft_sympy, batch=_fft_batch, linear=True)


def fft(x: Any, *, fft_type: str, axes: tuple[int, ...], lengths: tuple[int, ...],
        norm: str = "backward") -> Any:
    """One ``fft`` equation (see the module docstring)."""
    return apply(fft_p, x, fft_type=fft_type, axes=tuple(axes), lengths=tuple(lengths),
                 norm=norm)
