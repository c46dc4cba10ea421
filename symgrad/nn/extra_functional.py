"""Still more of ``torch.nn.functional`` (exported there): ``pairwise_distance``,
``pdist``, ``lp_pool1d/2d``, ``local_response_norm``, ``channel_shuffle``,
``alpha_dropout``/``feature_alpha_dropout``, ``multilabel_margin_loss`` and
``triplet_margin_with_distance_loss``.

Each is PyTorch's formula (``torch/nn/functional.py`` or ATen's kernel) in Tensor
operations, so gradients come from symgrad's primitives. ``alpha_dropout`` in training
draws its mask from the default generator (``torch.manual_seed``), as ``dropout`` does:
the formula is PyTorch's, the random stream is not (the masks differ from PyTorch's for
the same seed); in eval mode it is the identity.

    >>> import symgrad as torch
    >>> import symgrad.nn.functional as F
    >>> F.pdist(torch.tensor([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]]))
    tensor([ 5., 10.,  5.])
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..eager.functions import cat
from ..eager.random import numpy_generator
from ..eager.saved_indices import watch_indices
from ..eager.tensor import Tensor
from ..numpy_api import functions as ops
from .more_functional import _reduce
from .pooling import avg_pool1d, avg_pool2d

__all__ = ["pdist", "lp_pool1d", "lp_pool2d", "local_response_norm", "channel_shuffle",
           "alpha_dropout", "feature_alpha_dropout", "multilabel_margin_loss",
           "triplet_margin_with_distance_loss", "pairwise_distance"]


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """The ``p``-norm distances of the rows ``i < j`` of an ``(N, M)`` input, row-major
    (``N (N - 1) / 2`` of them). The gradient is PyTorch's: 0 where a distance (or, for
    ``p < 1``, a coordinate difference) is 0, ``sign`` times the indicator of the maximal
    differences for ``p = inf`` (every tie gets the whole gradient)."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not p >= 0:
        raise RuntimeError("pdist only supports non-negative p values")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    i, j = np.triu_indices(input.shape[0], 1)
    d = input[i] - input[j]
    a = d.abs()
    if p == 0:  # (the count of differences; its gradient is 0, as PyTorch's)
        count = (a != 0).sum(-1).to(input.dtype)
        return ops.where(np.ones(tuple(count.shape), bool), count, a.sum(-1))
    if p == 1:
        return a.sum(-1)
    if math.isinf(p):
        top = a.amax(-1, keepdim=True).detach()
        tie = (a.detach() == top) & (top > 0)  # (no gradient at a distance of 0)
        return top.squeeze(-1) + ((a - a.detach()) * tie).sum(-1)
    zero_a = a == 0
    powered = ops.where(zero_a, 0.0, ops.where(zero_a, 1.0, a) ** p) if p < 1 else a ** p
    if p == 2:
        powered = d * d
    total = powered.sum(-1)
    zero = total == 0
    safe = ops.where(zero, 1.0, total)
    root = safe.sqrt() if p == 2 else safe ** (1.0 / p)
    return ops.where(zero, 0.0, root)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """``‖x1 - x2 + eps‖_p`` along the last dim (PyTorch's formula, ``eps`` inside)."""
    dim = max(x1.ndim, x2.ndim, 1) - 1
    diff = x1 - x2 + eps
    if diff.ndim == 0:
        diff = diff.reshape(1)
    return diff.norm(p, dim, keepdim)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """``(sum over the window of x**norm_type) ** (1 / norm_type)`` (PyTorch's: an average
    pool of the powers times the window's size; negative sums as 0)."""
    out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(kernel_size).pow(1.0 / norm_type)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """``lp_pool1d`` over 2-d windows."""
    kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
    out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(kw * kh).pow(1.0 / norm_type)


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """``x / (k + alpha * mean of x**2 over `size` neighbouring channels) ** beta``, the
    window zero-padded by ``size // 2`` before and ``(size - 1) // 2`` after (PyTorch's)."""
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} "
                         "dimensions)")
    if input.numel() == 0:
        return input
    sq = input * input
    n, c = input.shape[0], input.shape[1]
    rest = tuple(input.shape[2:])
    zeros = (lambda m: Tensor._make(np.zeros((n, m, *rest), input.dtype.numpy)))
    padded = cat([zeros(size // 2), sq, zeros((size - 1) // 2)], 1)
    window = padded[:, 0:c]
    for s in range(1, size):
        window = window + padded[:, s:s + c]
    div = (window / size).mul(alpha).add(k).pow(beta)
    return input / div


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """The channels in ``groups`` groups, interleaved: ``(N, g, C/g, ...)`` transposed to
    ``(N, C/g, g, ...)`` and flattened back."""
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value "
                           f"of groups:{groups}")
    if input.ndim < 3:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but "
                           f"got input with sizes {list(input.shape)}")
    n, c = input.shape[0], input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    rest = tuple(input.shape[2:])
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(n, c, *rest)


_SELU_ALPHA = 1.7580993408473766  # ATen's alpha' = -scale * alpha of SELU


def _alpha_dropout(input: Tensor, p: float, training: bool, inplace: bool, feature: bool,
                   generator: Any) -> Tensor:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:
        out = input * 0.0
    else:
        shape = (tuple(input.shape[:2]) + (1,) * (input.ndim - 2) if feature
                 else tuple(input.shape))
        keep = (numpy_generator(generator).random(shape) >= p).astype(input.dtype.numpy)
        a = 1.0 / math.sqrt((_SELU_ALPHA * _SELU_ALPHA * p + 1) * (1 - p))
        b = (keep - 1) * (_SELU_ALPHA * a) + _SELU_ALPHA * a * p
        out = input * (keep * a).astype(input.dtype.numpy) + b.astype(input.dtype.numpy)
    return input.copy_(out) if inplace else out


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False, generator: Any = None) -> Tensor:
    """SELU's dropout: dropped elements set to SELU's negative saturation, then an affine
    map keeping mean and variance (ATen's ``a``, ``b``); the identity unless ``training``."""
    return _alpha_dropout(input, p, training, inplace, False, generator)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False, generator: Any = None) -> Tensor:
    """``alpha_dropout`` of whole channels (one draw per ``(N, C)``)."""
    return _alpha_dropout(input, p, training, inplace, True, generator)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: Any = None,
                           reduce: Any = None, reduction: str = "mean") -> Tensor:
    """``sum over target classes j and non-target classes i of max(0, 1 - (x[j] - x[i]))
    / C`` per sample; ``target`` holds class indices up to its first -1."""
    if not isinstance(target, Tensor) or target.dtype.is_floating_point:
        raise RuntimeError("multilabel_margin_loss: expected target of dtype int64")
    if input.ndim > 2 or tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    x = input if input.ndim == 2 else input.reshape(1, -1)
    t = target._value.reshape(tuple(x.shape))
    n, c = x.shape
    weight = np.zeros((n, c))
    for row in range(n):
        for j in t[row]:
            if j < 0:
                break
            if j >= c:
                raise IndexError(f"Target {j} is out of bounds.")
            weight[row, j] += 1.0
    others = (weight == 0).astype(weight.dtype)
    mask = (weight[:, :, None] * others[:, None, :]).astype(x.dtype.numpy)
    margins = (1 - x.unsqueeze(2) + x.unsqueeze(1)).relu()
    loss = watch_indices((margins * mask).sum((1, 2)) / c, target)  # (the mask's source)
    loss = loss if input.ndim == 2 else loss.reshape(())
    return _reduce(loss, reduction, size_average, reduce)


def triplet_margin_with_distance_loss(
        anchor: Tensor, positive: Tensor, negative: Tensor, *,
        distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
        margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Tensor:
    """``max(0, margin + d(a, p) - d(a, n))`` with a distance of your choice
    (``pairwise_distance`` by default); ``swap`` uses ``min(d(a, n), d(p, n))``."""
    if margin <= 0:
        raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, "
                         f"got {margin} instead")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor {anchor.ndim}D, "
                           f"positive {positive.ndim}D, and negative {negative.ndim}D inputs")
    distance = pairwise_distance if distance_function is None else distance_function
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = np.minimum(d_neg, distance(positive, negative))
    loss = (margin + d_pos - d_neg).clamp_min(0)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _reduce(loss, reduction)
