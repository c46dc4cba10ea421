"""``numpy.fft`` on traced values: ``fft``, ``ifft``, ``rfft``, ``irfft`` and their 2-d
and n-d forms, with numpy's ``n=``/``s=``, ``axis=``/``axes=`` and ``norm=``.

Each is one ``fft`` equation (:mod:`symgrad.prims.fft`) after numpy's own
preparation, done with primitives: a real operand of ``fft``/``ifft`` becomes
complex (``convert``), and ``n``/``s`` truncate (a slice) or zero-pad (``unslice``)
the input along each transformed axis, as numpy does (for ``irfft`` the last
axis to ``n // 2 + 1``). ``fftshift``/``ifftshift`` are rolls (gathers).

    >>> import numpy as np, symgrad as sg
    >>> f = sg.grad(lambda x: np.sum(np.abs(np.fft.rfft(x)) ** 2), backend="numpy")
    >>> np.allclose(f(np.array([1.0, 2.0, 0.5, -1.0])), [7.0, 10.0, 5.0, -2.0])
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.errors import UnsupportedFunctionError
from ..core.ir import complex_of
from ..core.tracing import shape_of
from ..prims.convert import convert
from ..prims.elementwise import as_float
from ..prims.fft import NORMS, fft
from ..prims.indexing import gather, strided, unslice
from .dispatch import implements


def _dtype(x: Any) -> np.dtype:
    dtype = getattr(x, "dtype", None)
    dtype = getattr(dtype, "numpy", dtype)  # an eager Tensor's dtype names numpy's
    return np.asarray(x).dtype if dtype is None else np.dtype(dtype)


def _resized(x: Any, axis: int, n: int) -> Any:
    """``x`` truncated or zero-padded to length ``n`` along ``axis`` (numpy's ``n=``)."""
    shape = tuple(shape_of(x))
    if n < 1:
        raise ValueError(f"invalid number of data points ({n}) specified")
    if n == shape[axis]:
        return x
    if n < shape[axis]:
        return strided(x, tuple((0, n if k == axis else m, 1) for k, m in enumerate(shape)))
    big = tuple(n if k == axis else m for k, m in enumerate(shape))
    return unslice(x, big, tuple((0, m, 1) for m in shape))


def _norm(norm: str | None) -> str:
    norm = "backward" if norm is None else norm
    if norm not in NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or '
                         '"forward".')
    return norm


def _transform(kind: str, a: Any, s: Sequence[int] | None, axes: Sequence[int] | None,
               norm: str | None, name: str) -> Any:
    ndim = len(tuple(shape_of(a)))
    if axes is None:
        axes = range(ndim) if s is None else range(ndim - len(s), ndim)
    axes = tuple(int(ax) % ndim if -ndim <= int(ax) < ndim else _bad_axis(name, ax, ndim)
                 for ax in axes)
    if len(set(axes)) != len(axes):
        raise UnsupportedFunctionError(f"{name} with repeated axes {axes} is not supported")
    shape = tuple(shape_of(a))
    if s is None:
        s = [shape[ax] for ax in axes]
        if kind == "irfft":
            s[-1] = 2 * (shape[axes[-1]] - 1)
    s = [int(n) for n in s]
    if len(s) != len(axes):
        raise ValueError(f"{name}: s and axes have different lengths")
    x = a
    if kind == "rfft":
        if _dtype(x).kind == "c":
            raise TypeError(f"{name} takes a real array, got a complex one")
        x = as_float(x)
    else:
        x = convert(as_float(x), complex_of(_dtype(as_float(x)).name))
    sizes = list(s)
    if kind == "irfft":
        sizes[-1] = s[-1] // 2 + 1
    for ax, n in zip(axes, sizes):
        x = _resized(x, ax, n)
    return fft(x, fft_type=kind, axes=axes, lengths=tuple(s), norm=_norm(norm))


def _bad_axis(name: str, ax: Any, ndim: int) -> int:
    raise np.exceptions.AxisError(f"{name}: axis {ax} is out of bounds for array of dimension "
                                  f"{ndim}")


def _one(kind: str, name: str):
    def fn(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None,
           out: Any = None) -> Any:
        _no_out(name, out)
        return _transform(kind, a, None if n is None else [n], [axis], norm, name)
    fn.__name__ = kind
    return fn


def _many(kind: str, name: str, default_axes: tuple[int, ...] | None):
    def fn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = default_axes,
           norm: str | None = None, out: Any = None) -> Any:
        _no_out(name, out)
        return _transform(kind, a, s, axes, norm, name)
    fn.__name__ = name.rsplit(".", 1)[-1]
    return fn


def _no_out(name: str, out: Any) -> None:
    if out is not None:
        raise UnsupportedFunctionError(f"{name}(..., out=) on a traced value: traced values "
                                       "are immutable; use the returned array")


for _kind in ("fft", "ifft", "rfft", "irfft"):
    implements(getattr(np.fft, _kind))(_one(_kind, f"np.fft.{_kind}"))
    implements(getattr(np.fft, _kind + "2"))(_many(_kind, f"np.fft.{_kind}2", (-2, -1)))
    implements(getattr(np.fft, _kind + "n"))(_many(_kind, f"np.fft.{_kind}n", None))


def _roll(x: Any, axes: Sequence[int] | int | None, sign: int) -> Any:
    shape = tuple(shape_of(x))
    if axes is None:
        axes = tuple(range(len(shape)))
    elif isinstance(axes, (int, np.integer)):
        axes = (int(axes),)
    for ax in axes:
        n = shape[ax]
        shift = sign * (n // 2)
        x = gather(x, tuple(int(i) for i in (np.arange(n) - shift) % n), ax % len(shape))
    return x


@implements(np.fft.fftshift)
def fftshift(x: Any, axes: Any = None) -> Any:
    """The zero frequency to the centre: a roll by ``n // 2`` along each axis."""
    return _roll(x, axes, 1)


@implements(np.fft.ifftshift)
def ifftshift(x: Any, axes: Any = None) -> Any:
    """The inverse of :func:`fftshift`: a roll by ``-(n // 2)``."""
    return _roll(x, axes, -1)
