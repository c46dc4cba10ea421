"""``F.affine_grid`` and ``F.grid_sample`` (4-D and 5-D inputs; modes ``bilinear``,
``nearest`` and (4-D) ``bicubic``; padding ``zeros``, ``border`` and ``reflection``;
``align_corners``), as PyTorch's CPU kernels compute them.

``affine_grid`` is PyTorch's base grid (``linspace(-1, 1, n)``, times ``(n - 1) / n``
without ``align_corners``) times ``theta`` transposed. ``grid_sample`` unnormalizes each
grid coordinate to a pixel position, applies the padding mode, and interpolates: the
position enters as a Tensor ``p`` whose value is PyTorch's padded coordinate and whose
derivative is PyTorch's (``clip``: 0 at and beyond the borders; ``reflection``: +-1 by
the number of flips), the corners ``floor(p)`` as data, and the output is the sum over
the 2**d corners of ``input[corner] * prod(1 - |p - corner|)``, a corner outside the
input giving 0. So the gradients with respect to the input and to the grid, and their
double backward, are PyTorch's. ``mode='nearest'`` takes the nearest pixel (half to even,
as ``nearbyint``), with no gradient for the grid. ``mode='bicubic'`` (4-D only, as
PyTorch's) weights the 4 x 4 pixels around the unpadded position by Keys' cubic kernel
(A = -0.75) of the fractions, each pixel's index padded on its own (PyTorch's
``get_value_bounded``), so the grid's gradient has no padding factor, as PyTorch's.

    >>> import symgrad as torch
    >>> import symgrad.nn.functional as F
    >>> x = torch.arange(4.0).reshape(1, 1, 2, 2)
    >>> F.grid_sample(x, torch.zeros(1, 1, 1, 2), align_corners=True)
    tensor([[[[1.5000]]]])
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from ..eager import dtypes as dt
from ..eager.functions import stack
from ..eager.methods import named
from ..eager.tensor import Tensor
from ..numpy_api import functions as ops


def _linspace(n: int, align_corners: bool, like: Tensor) -> np.ndarray:
    """PyTorch's ``linspace_from_neg_one``, in ``like``'s dtype."""
    dtype = like._value.dtype
    if n <= 1:
        return np.zeros(max(n, 1), dtype)
    r = np.linspace(-1, 1, n).astype(dtype)
    if n > 1:  # PyTorch's linspace: the second half counted back from the end
        half = n // 2
        step = dtype.type(2) / dtype.type(n - 1)
        r[:half] = dtype.type(-1) + step * np.arange(half, dtype=dtype)
        r[half:] = dtype.type(1) - step * np.arange(n - 1 - half, -1, -1, dtype=dtype)
    return r if align_corners else r * dtype.type(n - 1) / dtype.type(n)


def affine_grid(theta: Tensor, size: Any, align_corners: bool | None = None) -> Tensor:
    """``F.affine_grid``: the sampling grid ``(N, H, W, 2)`` (``(N, D, H, W, 3)``) of the
    affine maps ``theta`` ``(N, 2, 3)`` (``(N, 3, 4)``) for an output of ``size``."""
    align = bool(align_corners)
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got "
                         f"{theta.dtype}")
    size = [int(s) for s in size]
    d = len(size) - 2
    if d not in (2, 3):
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and "
                                  f"3D affine transforms, respectively. Got size {size}.")
    if theta.ndim != 3 or tuple(theta.shape[1:]) != (d, d + 1):
        raise ValueError(f"Expected a batch of {d}D affine matrices of shape Nx{d}x{d + 1} "
                         f"for size {size}. Got {list(theta.shape)}.")
    if theta.shape[0] != size[0]:
        raise ValueError(f"Expected the batch of theta ({theta.shape[0]}) and of size "
                         f"({size[0]}) to agree")
    spatial = size[2:]  # (D,) H, W
    dtype = theta._value.dtype
    base = np.ones((*spatial, d + 1), dtype)
    for k in range(d):  # coordinate k is x (W), then y (H), then z (D)
        axis = d - 1 - k
        shape = [1] * d
        shape[axis] = spatial[axis]
        base[..., k] = _linspace(spatial[axis], align, theta).reshape(shape)
    points = Tensor._make(np.ascontiguousarray(base.reshape(1, -1, d + 1)))
    grid = (points @ theta.transpose(1, 2)).reshape(size[0], *spatial, d)
    return named(grid, theta, "AffineGridGeneratorBackward0", (theta,))


def _reflect(p: np.ndarray, low2: float, high2: float) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's ``reflect_coordinates_set_grad``: ``p`` reflected into ``[low2 / 2,
    high2 / 2]``, and its derivative (+-1)."""
    if low2 == high2:
        return np.zeros_like(p), np.zeros_like(p)
    low, span = p.dtype.type(low2 / 2), p.dtype.type((high2 - low2) / 2)
    q = p - low
    sign = np.where(q < 0, -1, 1).astype(p.dtype)
    q = np.abs(q)
    extra = np.fmod(q, span)
    even = np.floor(q / span) % 2 == 0
    return np.where(even, extra + low, span - extra + low), np.where(even, sign, -sign)


def _clip(p: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's ``clip_coordinates_set_grad``: ``p`` clipped to ``[0, size - 1]``, and its
    derivative: 1 strictly inside, 0 at and beyond the borders."""
    top = p.dtype.type(size - 1)
    inside = (p > 0) & (p < top)
    return np.where(p <= 0, p.dtype.type(0), np.where(inside, p, top)), inside.astype(p.dtype)


def _unnormalize(coord: Tensor, size: int, align: bool) -> Tensor:
    """PyTorch's ``grid_sampler_unnormalize``: the pixel position of the normalized grid
    coordinate ``coord`` along an axis of ``size``."""
    return (coord + 1) / 2 * (size - 1) if align else ((coord + 1) * size - 1) / 2


def _position(coord: Tensor, size: int, padding_mode: str, align: bool) -> Tensor:
    """The pixel position of the normalized grid coordinate ``coord`` along an axis of
    ``size``, after padding: PyTorch's value and derivative."""
    p = _unnormalize(coord, size, align)
    if padding_mode == "zeros":
        return p
    value = p._value
    slope = np.ones_like(value)
    with np.errstate(invalid="ignore"):
        if padding_mode == "reflection":
            value, slope = _reflect(value, 0.0, 2.0 * (size - 1)) if align else \
                _reflect(value, -1.0, 2.0 * size - 1)
        value, inside = _clip(value, size)
    slope = slope * inside
    # the padded value, the derivative ``slope`` (``p - p.detach()`` is 0 where p is finite;
    # an infinite p is clipped to a border, derivative 0, not inf - inf = NaN)
    moved = (p - p.detach()) * Tensor._make(slope)
    if not np.isfinite(p._value).all():
        moved = ops.where(np.isfinite(p._value), moved, np.zeros((), p._value.dtype))
    return Tensor._make(np.asarray(value, p._value.dtype)) + moved


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """``F.grid_sample``: ``input`` ``(N, C, H, W)`` (``(N, C, D, H, W)``) sampled at the
    normalized points ``grid`` ``(N, Ho, Wo, 2)`` (``(N, Do, Ho, Wo, 3)``, x first)."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be "
                         f"'zeros', 'border', or 'reflection', but got: '{padding_mode}'")
    d = input.ndim - 2
    if mode == "bicubic" and d == 3:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if d not in (2, 3) or grid.ndim != input.ndim or grid.shape[-1] != d \
            or grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sample(): expected a 4-D or 5-D input and a grid of the "
                           f"same batch and number of dims, its last dim the number of "
                           f"spatial dims; got input {list(input.shape)}, grid "
                           f"{list(grid.shape)}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f'"grid_sampler_{input.ndim - 2}d_cpu" not implemented for '
                           f"'{dt.TYPE_NAMES[input.dtype.name]}': sample a float tensor "
                           f"(input.double())")
    if input.dtype is not grid.dtype:
        raise RuntimeError(f"expected scalar type {dt.TYPE_NAMES[input.dtype.name]} but found "
                           f"{dt.TYPE_NAMES[grid.dtype.name]}: grid_sample takes an input and "
                           f"a grid of one dtype (grid.to(input.dtype))")
    n, c, spatial = input.shape[0], input.shape[1], tuple(input.shape[2:])
    align = bool(align_corners)
    rows = input.permute(0, *range(2, 2 + d), 1).reshape(-1, c)  # (N * prod(spatial), C)
    batch = (np.arange(n) * math.prod(spatial)).reshape(n, *([1] * d))
    if mode == "bicubic":
        out = _bicubic(rows, batch, grid, spatial, padding_mode, align)
        return named(out.permute(0, 3, 1, 2), input, "GridSampler2DBackward0", (input, grid))
    # positions along the input's axes (D,) H, W: grid coordinate d - 1 - axis
    pos = [_position(grid[..., d - 1 - a], spatial[a], padding_mode, align) for a in range(d)]
    if mode == "nearest":
        near = [np.rint(p._value).astype(np.int64) for p in pos]  # (half to even)
        out = _corner(rows, batch, near, spatial)
    else:
        low = [np.floor(p._value) for p in pos]
        frac = [p - Tensor._make(lo) for p, lo in zip(pos, low)]
        out = None
        for corner in itertools.product((0, 1), repeat=d):
            weight = None
            for a, up in enumerate(corner):
                w = frac[a] if up else 1 - frac[a]
                weight = w if weight is None else weight * w
            where = [(lo + up).astype(np.int64) for lo, up in zip(low, corner)]
            term = _corner(rows, batch, where, spatial) * weight.unsqueeze(-1)
            out = term if out is None else out + term
    result = out.permute(0, d + 1, *range(1, d + 1))  # (N, C, *out_spatial)
    return named(result, input, f"GridSampler{d}DBackward0", (input, grid))


def _corner(rows: Tensor, batch: np.ndarray, where: list[np.ndarray],
            spatial: tuple[int, ...]) -> Tensor:
    """``input`` at the integer positions ``where`` (one array per axis), ``(N, *out, C)``;
    0 where a position is outside the input."""
    inside = np.ones(where[0].shape, bool)
    flat = np.zeros(where[0].shape, np.int64)
    for w, size in zip(where, spatial):
        inside &= (w >= 0) & (w < size)
        flat = flat * size + np.clip(w, 0, size - 1)
    picked = rows[Tensor._make(flat + batch)]
    if inside.all():
        return picked
    return ops.where(inside[..., None], picked, np.zeros((), rows._value.dtype))


#: PyTorch's bicubic convolution constant
_A = -0.75


def _cubic_coefficients(t: Tensor) -> list[Tensor]:
    """PyTorch's ``get_cubic_upsample_coefficients``: the weights of the taps at -1, 0, 1,
    2 from the floor, for the fraction ``t`` (Keys' kernel with A = -0.75)."""
    def near(x: Tensor) -> Tensor:  # |x| <= 1
        return ((_A + 2) * x - (_A + 3)) * x * x + 1

    def far(x: Tensor) -> Tensor:  # 1 < |x| < 2
        return ((_A * x - 5 * _A) * x + 8 * _A) * x - 4 * _A

    return [far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)]


def _tap(w: np.ndarray, size: int, padding_mode: str, align: bool) -> np.ndarray:
    """PyTorch's ``compute_coordinates`` of an integer tap position (as a float) along an
    axis of ``size``: unchanged for zeros (outside: 0 later), clipped for border,
    reflected then clipped for reflection; truncated to an index."""
    if padding_mode == "reflection":
        w = _reflect(w, 0.0, 2.0 * (size - 1))[0] if align else \
            _reflect(w, -1.0, 2.0 * size - 1)[0]
    if padding_mode != "zeros":
        w = _clip(w, size)[0]
    return w.astype(np.int64)


def _bicubic(rows: Tensor, batch: np.ndarray, grid: Tensor, spatial: tuple[int, ...],
             padding_mode: str, align: bool) -> Tensor:
    """PyTorch's bicubic ``grid_sample`` (4-D): the 4 x 4 taps around the unnormalized
    (unpadded) position, each tap's index padded on its own (:func:`_tap`), weighted by
    the cubic coefficients of the fractions, which carry the grid's gradient;
    ``(N, Ho, Wo, C)``. (One gather of all 16 taps: a few nodes, not 16 x 4.)"""
    pos = [_unnormalize(grid[..., 1 - a], spatial[a], align) for a in range(2)]  # y, x
    with np.errstate(invalid="ignore"):
        low = [np.floor(p._value) for p in pos]
    cy, cx = (stack(_cubic_coefficients(p - Tensor._make(lo)), -1) for p, lo in zip(pos, low))
    k = np.arange(4) - 1
    ty = _tap(low[0][..., None, None] + k[:, None], spatial[0], padding_mode, align)
    tx = _tap(low[1][..., None, None] + k, spatial[1], padding_mode, align)
    shape = np.broadcast_shapes(ty.shape, tx.shape)
    taps = _corner(rows, batch[..., None, None], [np.broadcast_to(ty, shape),
                                                  np.broadcast_to(tx, shape)], spatial)
    weights = (cy.unsqueeze(-1) * cx.unsqueeze(-2)).unsqueeze(-1)  # (N, Ho, Wo, 4, 4, 1)
    return (taps * weights).sum((3, 4))
