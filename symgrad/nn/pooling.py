"""Pooling of ``torch.nn.functional`` (max, average, adaptive), for 1, 2 and 3 spatial dims.

Pooling takes the windows of :mod:`.convolution` (the ``windows`` primitive); max
pooling picks the first maximum of each window (or its last NaN, as PyTorch's
kernels do: :mod:`.pool_choice`), so its gradient goes to that one element as
PyTorch's does, ties and NaNs included.

    >>> import symgrad as torch
    >>> import symgrad.nn.functional as F
    >>> F.max_pool2d(torch.arange(16.0).reshape(1, 1, 4, 4), 2)
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from ..eager import dtypes as dt
from ..eager.methods import named
from ..eager.tensor import Tensor
from .convolution import _batched, _out_size, _padded, _tuple, _windows
from .pool_choice import (
    first_inside_where_padding_picked,
    negative_zeros,
    window_argmax,
    window_first_max,
)


def _pool_geometry(x: Tensor, d: int, kernel_size: Any, stride: Any, padding: Any,
                   dilation: Any, ceil_mode: bool):
    kernel = _tuple(kernel_size, d, "kernel_size")
    stride = kernel if stride is None or stride == [] or stride == () else _tuple(stride, d,
                                                                                    "stride")
    padding, dilation = _tuple(padding, d, "padding"), _tuple(dilation, d, "dilation")
    if any(2 * p > k for p, k in zip(padding, kernel)):
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={padding}, kernel_size={kernel}")
    spatial = tuple(x.shape[2:])
    out = [_out_size(spatial[i], kernel[i], stride[i], padding[i], dilation[i], ceil_mode)
           for i in range(d)]
    # right padding up to the last window (ceil_mode may reach past the padded input)
    right = [max((out[i] - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1
                 - spatial[i] - padding[i], 0) for i in range(d)]
    return kernel, stride, padding, dilation, out, right


def _max_pool(input: Tensor, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
              ceil_mode: bool, return_indices: bool, d: int, name: str) -> Any:
    x, unbatched = _batched(input, d, name)
    kernel, stride, padding, dilation, out, right = _pool_geometry(
        x, d, kernel_size, stride, padding, dilation, ceil_mode)
    spatial = tuple(x.shape[2:])
    widths = [(0, 0), (0, 0), *zip(padding, right)]
    xp = _padded(x, widths, -np.inf) if any(map(any, widths)) else x
    windows = _windows(xp, out, kernel, stride, dilation)
    flat = windows.reshape(*windows.shape[:2 + d], math.prod(kernel))
    values = _read(flat)
    # the first maximum of each window, picked by a mask that enters as data (a gather
    # would carry one index per output element in the graph)
    picked = window_first_max(values)
    if xp is not x:
        picked = first_inside_where_padding_picked(picked, spatial, out, kernel, stride,
                                                    padding, dilation)
    y = np.where(picked, flat, 0.0).sum(-1)
    # a sum gives +0.0 where the maximum is -0.0 (PyTorch's: -0.0)
    if not y._value.all() and (zeros := negative_zeros(values)) is not None:
        negative_zero = (picked & zeros).any(-1, keepdims=True)
        if negative_zero.any():  # so those windows are summed negated
            sign = np.where(negative_zero, -1, 1).astype(values.dtype)
            y = np.where(picked, flat * sign, 0.0).sum(-1) * sign[..., 0]
    if unbatched:
        y = y.squeeze(0)
    y = named(y, input, f"MaxPool{d}DWithIndicesBackward0", (input,))
    if not return_indices:
        return y
    # the chosen element's position in the (unpadded) input, flattened over the spatial axes
    choice = np.argmax(picked, axis=-1)[..., None]
    offsets = np.unravel_index(choice[..., 0], kernel)
    position = np.zeros(choice.shape[:-1], dtype=np.int64)
    for i in range(d):
        shape = [1] * (2 + d)
        shape[2 + i] = out[i]
        coord = (np.arange(out[i]) * stride[i]).reshape(shape) + offsets[i] * dilation[i]
        position = position * spatial[i] + (coord - padding[i])
    indices = Tensor._make(position[0] if unbatched else position)
    return y, indices


def _read(windows: Tensor) -> np.ndarray:
    """The windows' values, read only (``detach().numpy()`` would hand their memory out:
    a copy of it kept, 1.2 MB for LeNet's first pooling, and compared by the backward);
    a bfloat16 Tensor refuses as ``numpy()`` does."""
    return windows.detach().numpy() if windows.dtype is dt.bfloat16 else windows._held_value()


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
                     1, "max_pool1d")


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """``F.max_pool2d``; the gradient goes to the first maximum of each window, as
    PyTorch's does; ``return_indices`` gives its flat index in the input plane."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
                     2, "max_pool2d")


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
                     3, "max_pool3d")


def _avg_divisor(spatial, kernel, stride, padding, out, count_include_pad) -> np.ndarray:
    """PyTorch's divisor of each window: the window clipped to the padded input
    (``count_include_pad``) or to the input itself."""
    divisor = np.ones(out)
    for i in range(len(out)):
        start = np.arange(out[i]) * stride[i] - padding[i]
        end = np.minimum(start + kernel[i], spatial[i] + padding[i])
        size = end - start
        if not count_include_pad:
            size = np.minimum(end, spatial[i]) - np.maximum(start, 0)
        shape = [1] * len(out)
        shape[i] = out[i]
        divisor = divisor * size.reshape(shape)
    return divisor


@functools.lru_cache(maxsize=64)
def _divisor(spatial: tuple, kernel: tuple, stride: tuple, padding: tuple, out: tuple,
             count_include_pad: bool, dtype: np.dtype) -> Any:
    """:func:`_avg_divisor` in ``dtype``, read only, made once per geometry (its numpy
    steps were ~15 us of each call: 15% of a LeNet avg pool at batch 2); a number where
    it is one (no padding) and ``dtype`` a float of 4 bytes or more: the eager fast
    path's, the same bits."""
    divisor = _avg_divisor(spatial, kernel, stride, padding, out,
                           count_include_pad).astype(dtype)
    if dtype.kind == "f" and dtype.itemsize >= 4 and (divisor == divisor.flat[0]).all():
        return float(divisor.flat[0])
    divisor.flags.writeable = False
    return divisor


def _avg_pool(input: Tensor, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool,
              count_include_pad: bool, divisor_override: Any, d: int, name: str) -> Tensor:
    x, unbatched = _batched(input, d, name)
    kernel, stride, padding, dilation, out, right = _pool_geometry(
        x, d, kernel_size, stride, padding, 1, ceil_mode)
    widths = [(0, 0), (0, 0), *zip(padding, right)]
    xp = np.pad(x, widths) if any(map(any, widths)) else x
    windows = _windows(xp, out, kernel, stride, dilation)
    total = windows.sum(tuple(range(-d, 0)))
    if divisor_override:
        divisor: Any = float(divisor_override)
    else:
        divisor = _divisor(tuple(x.shape[2:]), kernel, stride, padding, tuple(out),
                           count_include_pad, x._value.dtype)
    y = total / divisor
    if unbatched:
        y = y.squeeze(0)
    return named(y, input, f"AvgPool{d}DBackward0", (input,))


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None,
                     1, "avg_pool1d")


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, 2, "avg_pool2d")


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, 3, "avg_pool3d")


def _adaptive_bounds(size: int, out: int) -> tuple[np.ndarray, np.ndarray]:
    i = np.arange(out)
    return (i * size) // out, -((-(i + 1) * size) // out)


def _adaptive_out(x: Tensor, output_size: Any, d: int) -> tuple[int, ...]:
    sizes = output_size if isinstance(output_size, (tuple, list)) else (output_size,) * d
    return tuple(x.shape[2 + i] if s is None else int(s) for i, s in enumerate(sizes))


def _adaptive_avg(input: Tensor, output_size: Any, d: int, name: str) -> Tensor:
    x, unbatched = _batched(input, d, name)
    out = _adaptive_out(x, output_size, d)
    y = x
    for i in range(d):  # one averaging matrix per axis: windows differ in size
        size = x.shape[2 + i]
        start, end = _adaptive_bounds(size, out[i])
        cols = np.arange(size)
        weights = ((cols >= start[:, None]) & (cols < end[:, None])) / (end - start)[:, None]
        y = np.moveaxis(np.moveaxis(y, 2 + i, -1) @ weights.T.astype(x._value.dtype), -1,
                        2 + i)
    if unbatched:
        y = y.squeeze(0)
    # (PyTorch averages to a single element with mean, its node saves nothing; 1-d pools
    # squeeze a 2-d pool's result)
    name = (f"AdaptiveAvgPool{d}DBackward0" if set(out) != {1} else
            "MeanBackward1" if d > 1 else "SqueezeBackward1")
    return named(y, input, name, (input,))


def adaptive_avg_pool1d(input, output_size):
    return _adaptive_avg(input, output_size, 1, "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input, output_size):
    return _adaptive_avg(input, output_size, 2, "adaptive_avg_pool2d")


def adaptive_avg_pool3d(input, output_size):
    return _adaptive_avg(input, output_size, 3, "adaptive_avg_pool3d")


def _adaptive_max(input: Tensor, output_size: Any, return_indices: bool, d: int, name: str
                  ) -> Any:
    x, unbatched = _batched(input, d, name)
    out = _adaptive_out(x, output_size, d)
    spatial = tuple(x.shape[2:])
    index, kernel = [], []
    for i in range(d):
        start, end = _adaptive_bounds(spatial[i], out[i])
        k = int((end - start).max())
        # windows of the largest size, the shorter ones repeating their last element
        # (which changes no maximum and no first position of one)
        pos = np.minimum(start[:, None] + np.arange(k), end[:, None] - 1)
        shape = [1] * (2 * d)
        shape[i], shape[d + i] = out[i], k
        index.append(pos.reshape(shape))
        kernel.append(k)
    windows = x[(slice(None), slice(None), *index)]
    flat = windows.reshape(*windows.shape[:2 + d], math.prod(kernel))
    choice = window_argmax(_read(flat))
    y = flat.gather(-1, Tensor._make(choice)).squeeze(-1)
    y = named(y.squeeze(0) if unbatched else y, input, f"AdaptiveMaxPool{d}DBackward0", (input,))
    if not return_indices:
        return y
    position = np.zeros(choice.shape[:-1], dtype=np.int64)
    offsets = np.unravel_index(choice[..., 0], kernel)
    for i in range(d):
        full = np.broadcast_to(index[i], np.broadcast_shapes(*(a.shape for a in index)))
        taken = full.reshape(*out, math.prod(kernel))
        flat_k = np.ravel_multi_index(offsets, kernel)
        coord = np.take_along_axis(np.broadcast_to(taken, (*choice.shape[:2], *taken.shape)),
                                   flat_k[..., None], axis=-1)[..., 0]
        position = position * spatial[i] + coord
    indices = Tensor._make(position[0] if unbatched else position)
    return y, indices


def adaptive_max_pool1d(input, output_size, return_indices=False):
    return _adaptive_max(input, output_size, return_indices, 1, "adaptive_max_pool1d")


def adaptive_max_pool2d(input, output_size, return_indices=False):
    return _adaptive_max(input, output_size, return_indices, 2, "adaptive_max_pool2d")


def adaptive_max_pool3d(input, output_size, return_indices=False):
    return _adaptive_max(input, output_size, return_indices, 3, "adaptive_max_pool3d")
