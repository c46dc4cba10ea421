"""More of ``torch.nn.functional`` (exported there): the margin and likelihood losses
(``margin_ranking_loss``, ``hinge_embedding_loss``, ``soft_margin_loss``,
``cosine_embedding_loss``, ``triplet_margin_loss``, ``poisson_nll_loss``,
``gaussian_nll_loss``, ``multi_margin_loss``, ``multilabel_soft_margin_loss``),
``pixel_shuffle``/``pixel_unshuffle``, channel dropout (``dropout1d/2d/3d``),
``rms_norm``, ``bilinear`` and ``embedding_bag``.

Each is PyTorch's formula (ATen's kernel or ``torch/nn/functional.py``) written with
Tensor operations, so values, gradients and double backward come from symgrad's
primitives; the op table (tests/optable_nn.py) compares them with PyTorch.

    >>> import symgrad as torch
    >>> import symgrad.nn.functional as F
    >>> F.pixel_shuffle(torch.arange(8.0).reshape(1, 4, 1, 2), 2).shape
    torch.Size([1, 1, 2, 4])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..eager.functions import einsum
from ..eager.methods import named
from ..eager.random import numpy_generator
from ..eager.saved_indices import watch_indices
from ..eager.tensor import Tensor
from ..numpy_api import functions as ops
from .activation import embedding, logsigmoid

__all__ = ["margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss",
           "cosine_embedding_loss", "triplet_margin_loss", "poisson_nll_loss",
           "gaussian_nll_loss", "multi_margin_loss", "multilabel_soft_margin_loss",
           "pixel_shuffle", "pixel_unshuffle", "dropout1d", "dropout2d", "dropout3d",
           "rms_norm", "bilinear", "embedding_bag"]


def legacy_reduction(size_average: Any, reduce: Any, reduction: str) -> str:
    """``reduction``, or what PyTorch's deprecated ``size_average``/``reduce`` say when
    either is given (None counts as True): ``reduce=False`` is 'none', ``size_average=False``
    'sum'."""
    if size_average is None and reduce is None:
        return reduction
    if reduce is not None and not reduce:
        return "none"
    return "sum" if size_average is not None and not size_average else "mean"


_REDUCTIONS = ("mean", "sum", "none")


def _reduce(loss: Any, reduction: str, size_average: Any = None, reduce: Any = None) -> Any:
    """A loss's elements reduced as ``reduction`` (or the legacy arguments) says; the one
    home of this rule (``nn.functional``'s losses call it too)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction: use one of "
                     f"{', '.join(_REDUCTIONS)}")


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Any, margin: float = 0.0,
                        size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``."""
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction,
                   size_average, reduce)


def hinge_embedding_loss(input: Tensor, target: Any, margin: float = 1.0,
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    """``input`` where ``target == 1``, ``max(0, margin - input)`` where ``target == -1``."""
    zero = input * 0
    hinge = ops.where(target != 1, (margin - input).clamp_min(0), zero)
    return _reduce(hinge + ops.where(target != -1, input, zero), reduction, size_average,
                   reduce)


def soft_margin_loss(input: Tensor, target: Any, size_average: Any = None,
                     reduce: Any = None, reduction: str = "mean") -> Tensor:
    """``log(1 + exp(-target * input))`` (ATen's ``log1p(exp(.))``)."""
    # (one node in PyTorch, which reads the target at backward: a composite here)
    return named(_reduce((-input * target).exp().log1p(), reduction, size_average, reduce),
                 input, "SoftMarginLossBackward0", (input,))


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Any, margin: float = 0.0,
                          size_average: Any = None, reduce: Any = None,
                          reduction: str = "mean") -> Tensor:
    """``1 - cos`` where ``target == 1``, ``max(0, cos - margin)`` where ``target == -1``;
    ``cos`` with ATen's ``1e-12`` added to each squared norm."""
    if input1.dim() not in (1, 2) or tuple(input1.shape) != tuple(input2.shape):
        raise RuntimeError("cosine_embedding_loss: expected 1D or 2D inputs of one shape, got "
                           f"{tuple(input1.shape)} and {tuple(input2.shape)}")
    dim = input1.dim() - 1
    dot = (input1 * input2).sum(dim)
    mag1 = (input1 * input1).sum(dim) + 1e-12
    mag2 = (input2 * input2).sum(dim) + 1e-12
    cos = dot / (mag1 * mag2).sqrt()
    zero = cos * 0
    loss = ops.where(target == 1, 1 - cos, zero) + ops.where(
        target == -1, (cos - margin).clamp_min(0), zero)
    return _reduce(loss, reduction, size_average, reduce)


def _pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                       keepdim: bool = False) -> Tensor:
    """ATen's ``norm(x1 - x2 + eps, p, -1)`` (F.pairwise_distance's formula; here for
    ``triplet_margin_loss``)."""
    return (x1 - x2 + eps).norm(p, -1, keepdim)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """``max(0, margin + d(a, p) - d(a, n))`` with the pairwise distance ``d`` (and
    ``d(a, n)`` replaced by ``min(d(a, n), d(p, n))`` with ``swap``)."""
    if not anchor.dim() == positive.dim() == negative.dim():
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have "
                           "the same number of dimensions")
    d_pos = _pairwise_distance(anchor, positive, p, eps)
    d_neg = _pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = np.minimum(d_neg, _pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction, size_average,
                   reduce)


def poisson_nll_loss(input: Tensor, target: Any, log_input: bool = True, full: bool = False,
                     size_average: Any = None, eps: float = 1e-8, reduce: Any = None,
                     reduction: str = "mean") -> Tensor:
    """``exp(input) - target * input`` (or ``input - target * log(input + eps)``), plus
    Stirling's term where ``target > 1`` with ``full``."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        t = target if isinstance(target, Tensor) else Tensor._make(np.asarray(target))
        safe = ops.where(t > 1, t, t * 0 + 2)  # (the masked-out entries' logs stay finite)
        stirling = safe * safe.log() - safe + 0.5 * (2 * math.pi * safe).log()
        loss = loss + ops.where(t > 1, stirling, stirling * 0)
    return _reduce(loss, reduction, size_average, reduce)


def gaussian_nll_loss(input: Tensor, target: Any, var: Any, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """``0.5 * (log(var) + (input - target)^2 / var)``, ``var`` clamped at ``eps`` with the
    gradient passed through the clamp, as PyTorch's (which clamps a clone in place under
    ``no_grad``)."""
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = input.detach() * 0 + var
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (input.dim() == var.dim() and sum(
                b for a, b in zip(input.shape, var.shape) if a != b) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var + (var.detach().clamp_min(eps) - var.detach())
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, size_average: Any = None,
                      reduce: Any = None, reduction: str = "mean") -> Tensor:
    """``sum_{i != y} max(0, margin - x[y] + x[i])^p / C`` per sample (times
    ``weight[y]``), ATen's multi-class hinge."""
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    x = input if input.dim() == 2 else input.reshape(1, -1)
    labels = np.asarray(target._value if isinstance(target, Tensor) else target).reshape(-1)
    onehot = np.arange(x.shape[1])[None, :] == labels[:, None]  # data, not indices
    mask = Tensor._make(onehot.astype(x._value.dtype))
    z = (margin - (x * mask).sum(1, keepdim=True) + x).clamp_min(0)
    if p == 2:
        z = z * z
    if weight is not None:  # (no gradient for weight, as in PyTorch)
        z = z * Tensor._make(weight._value[labels][:, None].astype(x._value.dtype))
    loss = watch_indices((z * (1 - mask)).sum(1) / x.shape[1], target)  # (the mask's source)
    if input.dim() < 2:
        loss = loss.reshape(target.shape)
    return _reduce(loss, reduction, size_average, reduce)


def multilabel_soft_margin_loss(input: Tensor, target: Any, weight: Tensor | None = None,
                                size_average: Any = None, reduce: Any = None,
                                reduction: str = "mean") -> Tensor:
    """The mean over classes of the binary logistic losses."""
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(input.dim() - 1) / input.shape[-1]
    return _reduce(loss, reduction, size_average, reduce)


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """``(*, C r^2, H, W)`` to ``(*, C, H r, W r)``."""
    r = upscale_factor
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c}"
                           f" is not divisible by {r * r}")
    n = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """``(*, C, H r, W r)`` to ``(*, C r^2, H, W)``."""
    r = downscale_factor
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError("pixel_unshuffle expects height and width to be divisible by "
                           f"downscale_factor, but got {h} and {w} for {r}")
    n = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


def _feature_dropout(input: Tensor, p: float, training: bool, batched_dims: int,
                     generator: Any = None) -> Tensor:
    """Zero whole channels: one mask entry per (sample, channel), the input unbatched
    when it has ``batched_dims - 1`` dimensions."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    lead = 2 if input.dim() == batched_dims else 1
    shape = tuple(input.shape[:lead]) + (1,) * (input.dim() - lead)
    keep = numpy_generator(generator).random(shape) >= p
    scale = np.where(keep, 1.0 / (1.0 - p) if p < 1.0 else 0.0, 0.0)
    return input * Tensor._make(scale.astype(input._value.dtype))


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Channel dropout of ``(N, C, L)`` or ``(C, L)`` inputs."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a "
                           f"{input.dim()}D input.")
    return _feature_dropout(input, p, training, 3)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Channel dropout: one mask entry per ``(N, C)`` (PyTorch's reading of every input,
    a 3-D one included)."""
    return _feature_dropout(input, p, training, input.dim())


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Channel dropout of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` inputs."""
    return _feature_dropout(input, p, training, 5 if input.dim() in (4, 5) else input.dim())


def rms_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """``input / sqrt(mean(input^2) + eps) * weight`` over the last ``normalized_shape``
    dimensions; ``eps`` defaults to the dtype's machine epsilon, as PyTorch's."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.dim() - len(shape):]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, shape))}], but got input of size "
                           f"{list(input.shape)}")
    if eps is None:
        eps = float(np.finfo(input._value.dtype).eps)
    dims = tuple(range(input.dim() - len(shape), input.dim()))
    out = input * ((input * input).mean(dims, keepdim=True) + eps).rsqrt()
    return out if weight is None else out * weight


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor,
             bias: Tensor | None = None) -> Tensor:
    """``y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]``."""
    out = einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias


def _bags(index: np.ndarray, offsets: Any, include_last_offset: bool
          ) -> tuple[np.ndarray, np.ndarray, int]:
    """The indices, each one's bag and the number of bags."""
    if index.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is "
                             "treated is a mini-batch of fixed length sequences.")
        return index.ravel(), np.repeat(np.arange(index.shape[0]), index.shape[1]), \
            index.shape[0]
    if index.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{index.ndim}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    starts = np.asarray(offsets._value if isinstance(offsets, Tensor) else offsets)
    starts = starts.astype(np.int64).reshape(-1)
    if include_last_offset:
        if starts.size == 0 or starts[-1] != index.size:
            # (PyTorch's float32 kernel then drops the entries after it, its float64 kernel
            # adds them to the last bag)
            raise ValueError(f"embedding_bag(include_last_offset=True): the last offset must "
                             f"be the number of indices, {index.size}")
        starts = starts[:-1]
    bag = np.searchsorted(starts, np.arange(index.size), side="right") - 1
    return index, bag, len(starts)


def embedding_bag(input: Any, weight: Tensor, offsets: Any = None, max_norm: Any = None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean",
                  sparse: bool = False, per_sample_weights: Tensor | None = None,
                  include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """The sum, mean or max of each bag of embedding rows: the rows of a 2-D ``input``,
    or the runs of a 1-D ``input`` that ``offsets`` start; entries equal to
    ``padding_idx`` left out (and not counted); an empty bag gives zeros."""
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, but got {mode}")
    if scale_grad_by_freq and mode == "max":  # (PyTorch's refusal: not a guess)
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    index = np.asarray(input._value if isinstance(input, Tensor) else input)
    flat, bag, count = _bags(index, offsets, include_last_offset)
    keep = bag >= 0
    if padding_idx is not None:
        keep &= flat != padding_idx % weight.shape[0]
    rows = watch_indices(embedding(Tensor._make(flat), weight, None, max_norm, norm_type,
                                   scale_grad_by_freq, sparse), input, offsets)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1, 1)
    dtype = weight._value.dtype
    if mode != "max":
        member = np.zeros((count, flat.size), dtype)
        member[bag[keep], np.nonzero(keep)[0]] = 1
        out = Tensor._make(member) @ rows
        if mode == "mean":
            sizes = np.maximum(member.sum(1), 1)[:, None].astype(dtype)
            out = out / Tensor._make(sizes)
        return out
    positions = [np.nonzero(keep & (bag == b))[0] for b in range(count)]
    width = max([len(p) for p in positions] + [1])
    gather = np.zeros((count, width), np.int64)
    valid = np.zeros((count, width, 1), bool)
    for b, p in enumerate(positions):
        gather[b, :len(p)], valid[b, :len(p)] = p, True
    padded = ops.where(Tensor._make(valid), rows[gather], -np.inf)
    out = padded.max(1).values
    return ops.where(Tensor._make(valid.any(1)), out, 0.0)
