"""``F.unfold``/``F.fold`` (im2col and col2im as PyTorch lays them out) and
``F.max_unpool1d/2d/3d``, with their modules.

Compositions of the ``windows``/``unwindows`` primitives of the convolutions and
so their gradients are those primitives' own: ``unfold`` and ``fold`` are each
other's transpose. ``max_unpool`` is an autograd.Function: its gradient gathers the
cotangent at the indices for every input, as PyTorch's does, also where indices
repeat (overlapping pooling windows), which no derivative of a scatter gives.

    >>> import symgrad as torch
    >>> import symgrad.nn.functional as F
    >>> x = torch.arange(9.0).reshape(1, 1, 3, 3)
    >>> F.unfold(x, 2)
    tensor([[[0., 1., 3., 4.],
             [1., 2., 4., 5.],
             [3., 4., 6., 7.],
             [4., 5., 7., 8.]]])
    >>> F.fold(F.unfold(x, 2), (3, 3), 2)
    tensor([[[[ 0.,  2.,  2.],
              [ 6., 16., 10.],
              [ 6., 14.,  8.]]]])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..eager.function import Function
from ..eager.methods import named
from ..eager.saved_indices import watch_indices
from ..eager.tensor import Tensor
from ..numpy_api.shapes import add_windows
from .convolution import _out_size, _tuple, _windows, pad
from .module import Module


def _geometry(kernel_size: Any, dilation: Any, padding: Any, stride: Any):
    return (_tuple(kernel_size, 2, "kernel_size"), _tuple(dilation, 2, "dilation"),
            _tuple(padding, 2, "padding"), _tuple(stride, 2, "stride"))


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
           stride: Any = 1) -> Tensor:
    """``(N, C, H, W) -> (N, C·kh·kw, L)``: each column one window, channels first
    then the kernel's positions row by row; ``L`` counts the windows row by row."""
    if input.ndim not in (3, 4):
        raise RuntimeError(f"unfold: expected a 3-d (unbatched) or 4-d (batched) input, got "
                           f"one of shape {tuple(input.shape)}")
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    kernel, dilation, padding, stride = _geometry(kernel_size, dilation, padding, stride)
    if any(padding):
        x = pad(x, (padding[1], padding[1], padding[0], padding[0]))
    n, c, h, w = x.shape
    out = [_out_size(size, k, s, 0, d) for size, k, s, d in zip((h, w), kernel, stride, dilation)]
    cols = _windows(x, out, kernel, stride, dilation)            # (N, C, oh, ow, kh, kw)
    y = cols.permute(0, 1, 4, 5, 2, 3).reshape(n, c * math.prod(kernel), math.prod(out))
    if unbatched:
        y = y.squeeze(0)
    return named(y, input, "Im2ColBackward0", (input,))


def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
         stride: Any = 1) -> Tensor:
    """The transpose of :func:`unfold`: ``(N, C·kh·kw, L) -> (N, C, *output_size)``, the
    windows added where they overlap."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"fold: expected a 2-d (unbatched) or 3-d (batched) input, got "
                           f"one of shape {tuple(input.shape)}")
    unbatched = input.ndim == 2
    x = input.unsqueeze(0) if unbatched else input
    size = _tuple(output_size, 2, "output_size")
    kernel, dilation, padding, stride = _geometry(kernel_size, dilation, padding, stride)
    padded = tuple(s + 2 * p for s, p in zip(size, padding))
    out = [_out_size(s, k, st, 0, d) for s, k, st, d in zip(padded, kernel, stride, dilation)]
    n, rows, blocks = x.shape
    per = math.prod(kernel)
    if rows % per or blocks != math.prod(out):
        raise RuntimeError(
            f"fold: expected an input of shape (N, C*{per}, {math.prod(out)}) for output_size "
            f"{size}, kernel_size {kernel}, dilation {dilation}, padding {padding} and stride "
            f"{stride}, got {tuple(input.shape)}")
    c = rows // per
    cols = x.reshape(n, c, *kernel, *out).permute(0, 1, 4, 5, 2, 3)
    y = add_windows(cols, kernel, stride, dilation, padded)
    y = y[:, :, padding[0]:padding[0] + size[0], padding[1]:padding[1] + size[1]]
    if unbatched:
        y = y.squeeze(0)
    return named(y, input, "Col2ImBackward0", (input,))


def _max_unpool(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any, padding: Any,
                output_size: Any, d: int) -> Tensor:
    name = f"max_unpool{d}d"
    if input.ndim not in (d + 1, d + 2):
        raise RuntimeError(f"{name}: expected a {d + 1}-d (unbatched) or {d + 2}-d (batched) "
                           f"input, got one of shape {tuple(input.shape)}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"{name}: indices of shape {tuple(indices.shape)} do not match the "
                           f"input's {tuple(input.shape)}")
    kernel = _tuple(kernel_size, d, "kernel_size")
    stride = kernel if stride is None else _tuple(stride, d, "stride")
    padding = _tuple(padding, d, "padding")
    spatial_in = tuple(input.shape[-d:])
    default = tuple((i - 1) * s - 2 * p + k
                    for i, s, p, k in zip(spatial_in, stride, padding, kernel))
    if output_size is None:
        size = default
    else:
        size = tuple(int(s) for s in output_size)[-d:]
        if len(size) != d or any(abs(s - m) >= st for s, m, st in zip(size, default, stride)):
            raise RuntimeError(f"{name}: output_size {tuple(output_size)} must be within one "
                               f"stride {stride} of the default size {default}")
    lead = tuple(input.shape[:-d])
    planes = math.prod(size)
    flat_index = indices.reshape(*lead, -1)
    if flat_index.numel() and (int(flat_index.min()) < 0 or int(flat_index.max()) >= planes):
        raise RuntimeError(f"{name}: an index is outside the output plane of {planes} elements "
                           f"(output size {size})")
    out = _Unpool.apply(input.reshape(*lead, -1), flat_index._value, planes)
    return watch_indices(named(out.reshape(*lead, *size), input, f"MaxUnpool{d}DBackward0",
                               (input,)), indices)


class _Unpool(Function):
    """The values put at their indices in planes of zeros (the last of repeated
    indices wins; PyTorch's choice among different values there is unspecified,
    and max_pool's indices repeat only with equal values), and PyTorch's gradient, which is no
    transpose of that when indices repeat: a gather, ``grad_in = grad_out[index]``
    for every input (linear, so its own double backward is a scatter-add)."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, index: np.ndarray, planes: int) -> Tensor:
        ctx.index = index
        out = np.zeros((*index.shape[:-1], planes), dtype=x._value.dtype)
        np.put_along_axis(out, index, x._value, axis=-1)
        return Tensor._make(out)

    @staticmethod
    def backward(ctx: Any, g: Any) -> tuple:
        return g.gather(g.ndim - 1, Tensor._make(ctx.index)), None, None


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Each value of ``input`` put back at its position ``indices`` (from
    ``max_pool2d(..., return_indices=True)``) in a plane of zeros."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3)


class Unfold(Module):
    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1):
        super().__init__()
        self.kernel_size, self.dilation = kernel_size, dilation
        self.padding, self.stride = padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)


class Fold(Module):
    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                    self.stride)


class _MaxUnpoolNd(Module):
    _d = 2

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        return _max_unpool(input, indices, self.kernel_size, self.stride, self.padding,
                           output_size, self._d)


class MaxUnpool1d(_MaxUnpoolNd):
    _d = 1


class MaxUnpool2d(_MaxUnpoolNd):
    _d = 2


class MaxUnpool3d(_MaxUnpoolNd):
    _d = 3
