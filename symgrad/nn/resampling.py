"""``F.interpolate``: one resampling matrix per spatial axis for ``nearest``,
``nearest-exact``, ``linear``, ``bilinear``, ``bicubic`` and ``trilinear`` (the gradient is
the transposed resampling, as PyTorch's), with ``antialias=True`` PyTorch's separable
antialiasing filters for ``bilinear``, ``bicubic`` and ``lanczos`` (Lanczos-3, which
PyTorch 2.13 has antialiased only), and ``area``, which is PyTorch's
``adaptive_avg_pool`` to the output size.

    >>> import symgrad as torch
    >>> import symgrad.nn.functional as F
    >>> F.interpolate(torch.arange(4.0).reshape(1, 1, 4), size=2, mode="area")
    tensor([[[0.5000, 2.5000]]])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..eager.methods import named
from ..eager.tensor import Tensor
from .convolution import _tuple
from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d


def _resample_matrix(size: int, out: int, mode: str, align_corners: bool | None,
                     scale: float | None) -> np.ndarray:
    """The ``(out, size)`` matrix that resamples one axis as PyTorch's kernels do;
    ``scale`` is PyTorch's ``1 / scale_factor`` when one was given."""
    i = np.arange(out, dtype=np.float64)
    ratio = scale if scale is not None else size / out
    matrix = np.zeros((out, size))
    rows = np.arange(out)
    if mode in ("nearest", "nearest-exact"):
        src = np.floor((i + 0.5) * ratio) if mode == "nearest-exact" else np.floor(i * ratio)
        matrix[rows, np.minimum(src.astype(np.int64), size - 1)] = 1.0
        return matrix
    if align_corners:
        src = i * ((size - 1) / (out - 1)) if out > 1 else np.zeros(out)
    else:
        src = (i + 0.5) * ratio - 0.5
    if mode == "linear":
        src = np.maximum(src, 0.0) if not align_corners else src
        low = np.minimum(np.floor(src).astype(np.int64), size - 1)
        high = np.minimum(low + 1, size - 1)
        frac = src - low
        np.add.at(matrix, (rows, low), 1.0 - frac)
        np.add.at(matrix, (rows, high), frac)
        return matrix
    # cubic convolution with A = -0.75, indices clamped at the borders (PyTorch's bicubic)
    a = -0.75
    low = np.floor(src).astype(np.int64)
    t = src - low

    def near(x: np.ndarray) -> np.ndarray:
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: np.ndarray) -> np.ndarray:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    for offset, weight in ((-1, far(t + 1)), (0, near(t)), (1, near(1 - t)), (2, far(2 - t))):
        np.add.at(matrix, (rows, np.clip(low + offset, 0, size - 1)), weight)
    return matrix


#: the support (in input pixels, at scale 1) of each antialiasing filter: PyTorch's
#: ``interp_size``
_AA_SIZE = {"linear": 2, "cubic": 4, "lanczos": 6}


def _aa_filter(kind: str, x: np.ndarray) -> np.ndarray:
    """PyTorch's antialiasing filters: the triangle, Keys' cubic with ``a = -0.5``
    (PIL's; the plain bicubic mode uses -0.75), or Lanczos-3 ``sinc(x) sinc(x / 3)``."""
    x = np.abs(x)
    if kind == "linear":
        return np.where(x < 1.0, 1.0 - x, 0.0)
    if kind == "lanczos":
        return np.where(x < 3.0, np.sinc(x) * np.sinc(x / 3.0), 0.0)
    a = -0.5
    return np.where(x < 1.0, ((a + 2.0) * x - (a + 3.0)) * x * x + 1,
                    np.where(x < 2.0, (((x - 5) * x + 8) * x - 4) * a, 0.0))


def _antialias_matrix(size: int, out: int, kind: str, align_corners: bool,
                      scale: float | None) -> np.ndarray:
    """The ``(out, size)`` matrix of PyTorch's separable antialiased resampling
    (``_compute_index_ranges_weights`` with ``antialias=True``, after PIL): the filter
    stretched by the scale when shrinking, over the input pixels within its support of
    each output pixel's center ``scale * (i + 0.5)``, normalized to sum 1."""
    if align_corners:
        ratio = (size - 1) / (out - 1) if out > 1 else 0.0
    else:
        ratio = scale if scale is not None else size / out
    support = _AA_SIZE[kind] * 0.5 * (ratio if ratio >= 1.0 else 1.0)
    widest = math.ceil(support) * 2 + 1
    invscale = 1.0 / ratio if ratio >= 1.0 else 1.0
    matrix = np.zeros((out, size))
    for i in range(out):
        center = ratio * (i + 0.5)
        low = max(int(center - support + 0.5), 0)  # (C++'s casts truncate toward 0)
        n = min(max(min(int(center + support + 0.5), size) - low, 0), widest)
        w = _aa_filter(kind, (np.arange(n) + low - center + 0.5) * invscale)
        total = w.sum()
        matrix[i, low:low + n] = w / total if total != 0.0 else w
    return matrix


_INTERPOLATE_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3, "lanczos": 2}


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """``F.interpolate`` for ``nearest``, ``nearest-exact``, ``linear``, ``bilinear``,
    ``bicubic``, ``trilinear``, ``lanczos`` (``antialias=True`` only, as PyTorch's) and
    ``area``: one resampling matrix per spatial axis, so the gradient is the transposed
    resampling, as PyTorch's (``antialias=True``: PyTorch's antialiasing filters)."""
    d = input.ndim - 2
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    if mode == "lanczos" and input.ndim == 4:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if mode == "area":
        return _area(input, size, scale_factor, d)
    if d < 1 or (mode in _INTERPOLATE_DIMS and _INTERPOLATE_DIMS[mode] != d):
        raise ValueError(f"interpolate: mode {mode!r} does not fit a {input.ndim}-d input")
    if mode not in ("nearest", "nearest-exact", *_INTERPOLATE_DIMS):
        raise NotImplementedError(f"interpolate: mode must be nearest, nearest-exact, linear, "
                                  f"bilinear, bicubic, trilinear, lanczos or area, not "
                                  f"{mode!r}")
    if mode.startswith("nearest") and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined")
    spatial = tuple(input.shape[2:])
    scales: list[float | None]
    if size is not None:
        out = list(_tuple(size, d, "size"))
        scales = [None] * d
    else:
        factors = ([float(scale_factor)] * d if not isinstance(scale_factor, (tuple, list))
                   else [float(f) for f in scale_factor])
        out = [int(math.floor(s * f)) for s, f in zip(spatial, factors)]
        scales = [None if recompute_scale_factor else 1.0 / f for f in factors]
    if min(spatial) <= 0 or min(out) <= 0:
        names = ("D", "H", "W")[3 - d:]
        sizes = [", ".join(f"{n}: {v}" for n, v in zip(names, vs)) for vs in (spatial, out)]
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({sizes[0]}){' and' if d == 1 else ''} output ({sizes[1]})")
    kind = ("cubic" if mode == "bicubic" else mode if mode == "lanczos" else
            "linear" if mode in _INTERPOLATE_DIMS else mode)
    y = input
    for i in range(d):
        matrix = (_antialias_matrix if antialias else _resample_matrix)(
            spatial[i], out[i], kind, bool(align_corners), scales[i])
        y = np.moveaxis(np.moveaxis(y, 2 + i, -1) @ matrix.T.astype(input._value.dtype), -1,
                        2 + i)
    return named(y, input, _upsample_name(mode, d, antialias), (input,))


def _upsample_name(mode: str, d: int, antialias: bool) -> str:
    """PyTorch's node for ``F.interpolate`` in ``mode`` on ``d`` spatial axes
    (``UpsampleBilinear2DAaBackward0``)."""
    kind = "".join(w.capitalize() for w in mode.split("-"))
    return f"Upsample{kind}{d}D{'Aa' if antialias else ''}Backward0"


def _area(input: Tensor, size: Any, scale_factor: Any, d: int) -> Tensor:
    """``mode='area'``: ``adaptive_avg_pool{d}d`` to the size (or ``floor(size * scale)``),
    as PyTorch computes it."""
    if not 1 <= d <= 3:
        raise ValueError(f"interpolate: mode 'area' takes a 3-d, 4-d or 5-d input, not "
                         f"{input.ndim}-d")
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        out = _tuple(size, d, "size")
    else:
        factors = ([float(scale_factor)] * d if not isinstance(scale_factor, (tuple, list))
                   else [float(f) for f in scale_factor])
        out = tuple(int(math.floor(float(s) * f)) for s, f in zip(input.shape[2:], factors))
    pool = (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[d - 1]
    return pool(input, out if d > 1 else out[0])
