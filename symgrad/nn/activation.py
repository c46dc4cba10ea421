"""Activations, normalizations, ``embedding`` and attention of ``torch.nn.functional``.

Compositions of Tensor operations, like the rest of :mod:`symgrad.nn.functional`:
their gradients (and double backward) come from the primitives' rules (``layer_norm``
of a float32 or float64 tensor is one, :mod:`symgrad.prims.layer_norm`). Where
PyTorch's backward differs from the derivative of the obvious formula at a
boundary (``hardswish`` and ``hardsigmoid`` at ±3), the formula is written
with PyTorch's strict and non-strict comparisons so that the branch taken there
is PyTorch's.

    >>> import symgrad as torch
    >>> import symgrad.nn.functional as F
    >>> F.silu(torch.tensor([0.0, 1.0]))
    tensor([0.0000, 0.7311])
    >>> F.layer_norm(torch.tensor([[1.0, 2.0, 3.0]]), (3,))
    tensor([[-1.2247,  0.0000,  1.2247]])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..eager import dtypes as dt
from ..eager.bf16 import in_float32
from ..eager.grad_mode import no_grad
from ..eager.methods import PRIMITIVE_FLOATS, named
from ..eager.methods import layer_norm_rows as _layer_norm_rows  # not F's public name
from ..eager.random import numpy_generator
from ..eager.saved_indices import watch_indices
from ..eager.select_methods import no_gradient_at_nan
from ..eager.tensor import Tensor
from ..numpy_api import functions as ops
from ..numpy_api import scipy_namespace as special

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


@in_float32
def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """``x·Φ(x)``; ``approximate='tanh'`` is ``0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))``."""
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (input + 0.044715 * input * input * input)
        out = 0.5 * input * (1.0 + inner.tanh())
    elif approximate == "none":
        out = 0.5 * input * (1.0 + special.erf(input * (1.0 / math.sqrt(2.0))))
    else:
        raise ValueError(f"approximate argument must be either none or tanh, not {approximate!r}")
    return named(out, input, "GeluBackward0", (input,))


@in_float32
def silu(input: Tensor, inplace: bool = False) -> Tensor:
    return named(input * input.sigmoid(), input, "SiluBackward0", (input,))


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    return named(input * ops.softplus(input).tanh(), input, "MishBackward0", (input,))


def _neg_part(input: Tensor) -> Tensor:
    return ops.where(input > 0, 0.0, input)


def _elu_at_zero(out: Tensor, input: Tensor, slope: float) -> Tensor:
    """``elu``/``selu``/``celu``'s ``out`` with PyTorch's derivatives at an input of exactly
    0: the first is the negative side's (``slope``), the second 0 (its double backward's
    mask is ``x < 0``; ``expm1``'s gave ``slope``). There ``out`` follows ``input * slope``
    (the same value, ±0), only where there is such an element and a graph is recorded."""
    if not getattr(out, "_requires_grad", False):
        return out
    zero = input._value == 0  # (~5 us for 16384 float64: count_nonzero's is 15)
    if not zero.any():
        return out
    return ops.where(zero, input * slope, out)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    out = ops.where(input > 0, input, alpha * np.expm1(_neg_part(input)))
    return named(_elu_at_zero(out, input, alpha), input, "EluBackward0", (input,))


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    out = SELU_SCALE * ops.where(input > 0, input, SELU_ALPHA * np.expm1(_neg_part(input)))
    out = _elu_at_zero(out, input, SELU_SCALE * SELU_ALPHA)
    return named(out, input, "EluBackward0", (input,))


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    out = ops.where(input > 0, input, alpha * np.expm1(_neg_part(input) / alpha))
    return named(_elu_at_zero(out, input, 1.0), input, "EluBackward0", (input,))


def softsign(input: Tensor) -> Tensor:
    return input / (1.0 + input.abs())


@in_float32
def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x·relu6(x + 3)/6``, bit for bit as PyTorch's: its value
    ``x·min(max(x + 3, 0), 6)/6`` (-0.0 below -3, NaN at -inf, ``x·6/6`` above 3) and its
    gradient ``g·(x/3 + 1/2)`` strictly inside (-3, 3), 0 at and below -3 (at -inf too),
    ``g`` at and above 3; its second derivative 1/3 inside. The value is data, the
    gradient comes from ``h = x·slope + d·d/6`` (``d = x - x`` = 0, whose derivative gives
    the second one) through ``value - (h - h)``: one path from ``x``, so a zero gradient
    keeps its sign (a ``where`` of branches adds a +0.0). At a NaN the gradient is NaN,
    as PyTorch's vectorized loop gives (its scalar tail gives ``g``)."""
    v = input._value
    w = v.astype(np.float32) if v.dtype == np.float16 else v  # (half: in float32)
    with np.errstate(invalid="ignore"):
        value = (w * np.clip(w + 3, 0, 6) / 6).astype(v.dtype)
        inside = (w > -3) & (w < 3)
        slope = np.where(w <= -3, 0, np.where(inside, w / 3 + w.dtype.type(0.5), 1))
    # data: no path at and below -3 (PyTorch's gradient there is its constant +0.0, not
    # g·0) nor at ±inf
    x = input.float() if w is not v else input
    finite = ops.where(np.isinf(v) | (w <= -3), 0.0, x)
    d = finite - finite.detach()
    h = finite * slope + d * d * (inside / 6).astype(w.dtype)
    out = input._make(value) - (h.detach() - h).to(input.dtype)
    if np.isposinf(v).any():  # the value inf, the gradient g
        out = ops.where(np.isposinf(v), input, out)
    return named(out, input, "HardswishBackward0", (input,))


# PyTorch's hardsigmoid_backward multiplies by ``1.0f / 6.0f``, a float32 constant, in
# float64 too (its gradient is 0.1666666716337204, not 1/6)
_ONE_SIXTH_F32 = float(np.float32(1.0) / np.float32(6.0))


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3)/6``; its derivative is ``1.0f/6.0f`` (float32's sixth, in float64
    too) strictly inside (-3, 3), as PyTorch's."""
    if input.dtype is dt.float16:  # in float32, rounded once, as PyTorch's
        return named(hardsigmoid(input.float()).half(), input, "HardsigmoidBackward0",
                     (input,))
    slope = input * _ONE_SIXTH_F32  # the gradient's formula; its value is not used
    inside = ((input + 3.0) / 6.0).detach() + (slope - slope.detach())
    out = ops.where(input <= -3.0, 0.0, ops.where(input >= 3.0, 1.0, inside))
    return named(no_gradient_at_nan(out, input), input, "HardsigmoidBackward0", (input,))


def logsigmoid(input: Tensor) -> Tensor:
    # 0 - softplus(-x): +0.0 at inf as PyTorch's (a negation gave -0.0)
    return named(0.0 - ops.softplus(-input), input, "LogSigmoidBackward0", (input,))


def tanhshrink(input: Tensor) -> Tensor:
    return input - input.tanh()


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    out = ops.where(input > lambd, input - lambd, ops.where(input < -lambd, input + lambd, 0.0))
    # NaN at a NaN (it gave 0), no gradient (PyTorch's vectorized loop; its tail passes it)
    out = no_gradient_at_nan(out, input, value=np.nan)
    return named(out, input, "SoftshrinkBackward0", (input,))


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    return input.hardshrink(lambd)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    # x <= threshold ? value : x, as PyTorch's: a NaN stays NaN
    return named(ops.where(input <= threshold, value, input), input, "ThresholdBackward0",
                 (input,))


def glu(input: Tensor, dim: int = -1) -> Tensor:
    if input.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size "
                           f"{input.shape[dim]}")
    a, b = input.chunk(2, dim)
    return named(a * b.sigmoid(), input, "GluBackward0", (input,))


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    return input.prelu(weight)


def softmin(input: Tensor, dim: int | None = None, dtype: Any = None) -> Tensor:
    return (-input).softmax(_implicit_dim(input, dim), dtype)


def _implicit_dim(input: Tensor, dim: int | None) -> int:
    """PyTorch's choice when ``dim`` is left out: 0 for 0-, 1- and 3-d inputs, else 1."""
    if dim is not None:
        return dim
    return 0 if input.ndim in (0, 1, 3) else 1


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False,
            generator: Any = None) -> Tensor:
    """Zero each element with probability ``p`` and scale the others by ``1 / (1 - p)``
    (in training only). The mask comes from the default generator (``torch.manual_seed``)
    or ``generator``, and enters the graph as data."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    keep = numpy_generator(generator).random(input.shape) >= p
    scale = np.where(keep, 1.0 / (1.0 - p) if p < 1.0 else 0.0, 0.0)
    out = input * scale.astype(input._value.dtype)
    if inplace:
        return input.copy_(out)
    return named(out, input, "NativeDropoutBackward0", (input,))


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """``x / max(‖x‖_p, eps)`` along ``dim``."""
    norm = input.norm(p, dim, keepdim=True)
    return input / norm.clamp_min(eps)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``sum(x1 / max(‖x1‖, eps) * x2 / max(‖x2‖, eps))`` along ``dim`` (broadcast first),
    by PyTorch's formula: each operand divided by its norm, the norm clamped at ``eps``
    without a gradient of the clamp (PyTorch clamps it in place under ``no_grad``)."""
    shape = np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    x1, x2 = (x if tuple(x.shape) == shape else x.expand(*shape) for x in (x1, x2))

    def unit(x: Tensor) -> Tensor:
        norm = x.norm(2, dim, keepdim=True)
        floor = (norm.clamp_min(eps) - norm).detach()  # 0 unless the norm is below eps
        return x / (norm + floor)
    return named((unit(x1) * unit(x2)).sum(dim), x1, "SumBackward1", (x1, x2))


# ---------------------------------------------------------------------------
# normalization and embedding


def _affine(out: Tensor, weight: Any, bias: Any, shape: Sequence[int]) -> Tensor:
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


@in_float32
def layer_norm(input: Tensor, normalized_shape: Sequence[int] | int, weight: Any = None,
               bias: Any = None, eps: float = 1e-5) -> Tensor:
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.ndim - len(shape):]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, shape))}], but got input of size "
                           f"{list(input.shape)}")
    if shape and _one_node(input, weight, bias):
        return _layer_norm_rows(input, weight, bias, len(shape), eps)
    if input.dtype is dt.float16 and all(a is None or getattr(a, "dtype", None) is dt.float16
                                         for a in (weight, bias)):
        # PyTorch's CPU kernel computes half in float32 and rounds once (op by op in
        # float16, half of the elements were an ulp off)
        up = [None if a is None else a.float() for a in (weight, bias)]
        out = layer_norm(input.float(), shape, *up, eps=eps).half()
        return named(out, input, "NativeLayerNormBackward0", (input, weight, bias))
    axes = tuple(range(-len(shape), 0))
    mean = input.mean(axes, keepdim=True)
    centred = input - mean
    var = (centred * centred).mean(axes, keepdim=True)
    out = _affine(centred / (var + eps).sqrt(), weight, bias, shape)
    return named(out, input, "NativeLayerNormBackward0", (input, weight, bias))


def _one_node(input: Tensor, *affine: Any) -> bool:
    """Whether ``layer_norm`` is one primitive (PyTorch's one node): a float32 or float64
    Tensor, and a weight and bias of its dtype or None (others: the composite)."""
    dtype = input._value.dtype
    return dtype in PRIMITIVE_FLOATS and all(
        a is None or (isinstance(a, Tensor) and a._value.dtype == dtype) for a in affine)


def group_norm(input: Tensor, num_groups: int, weight: Any = None, bias: Any = None,
               eps: float = 1e-5) -> Tensor:
    n, c = input.shape[0], input.shape[1]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input ({c}) to be divisible by "
                           f"num_groups ({num_groups})")
    g = input.reshape(n, num_groups, -1)
    mean = g.mean(-1, keepdim=True)
    centred = g - mean
    var = (centred * centred).mean(-1, keepdim=True)
    out = (centred / (var + eps).sqrt()).reshape(tuple(input.shape))
    out = _affine(out, weight, bias, (c, *([1] * (input.ndim - 2))))
    return named(out, input, "NativeGroupNormBackward0", (input, weight, bias))


def batch_norm(input: Tensor, running_mean: Any, running_var: Any, weight: Any = None,
               bias: Any = None, training: bool = False, momentum: float = 0.1,
               eps: float = 1e-5) -> Tensor:
    """Batch statistics in training (and the running ones updated in place, the variance
    unbiased, as PyTorch's); the running statistics in evaluation."""
    axes = (0, *range(2, input.ndim))
    shape = (input.shape[1], *([1] * (input.ndim - 2)))
    if training:
        count = input.numel() // input.shape[1]
        if count <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {list(input.shape)}")
        mean = input.mean(axes, keepdim=True)
        centred = input - mean
        var = (centred * centred).mean(axes, keepdim=True)
        if running_mean is not None:
            m = float(momentum)
            batch_mean = mean.detach().reshape(-1)
            batch_var = var.detach().reshape(-1) * (count / (count - 1))
            running_mean.data.mul_(1 - m).add_(batch_mean * m)
            running_var.data.mul_(1 - m).add_(batch_var * m)
        out = centred / (var + eps).sqrt()
    else:
        if running_mean is None:
            raise RuntimeError("running_mean and running_var are needed in evaluation mode")
        out = (input - running_mean.reshape(shape)) / (running_var.reshape(shape) + eps).sqrt()
    out = _affine(out, weight, bias, shape)
    return named(out, input, "NativeBatchNormBackward0", (input, weight, bias))


def instance_norm(input: Tensor, running_mean: Any = None, running_var: Any = None,
                  weight: Any = None, bias: Any = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Each instance's statistics over its spatial axes (and the running ones, when given,
    updated in place with the mean over the batch of the instances', the variance unbiased,
    as PyTorch's); the running statistics with ``use_input_stats=False``."""
    shape = (input.shape[1], *([1] * (input.ndim - 2)))
    if use_input_stats:
        count = input.numel() // (input.shape[0] * input.shape[1]) if input.numel() else 0
        if count <= 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input "
                             f"size {list(input.shape)}")
        axes = tuple(range(2, input.ndim))
        mean = input.mean(axes, keepdim=True)
        centred = input - mean
        var = (centred * centred).mean(axes, keepdim=True)
        m, flat = float(momentum), (input.shape[0], input.shape[1])
        if running_mean is not None:
            running_mean.data.mul_(1 - m).add_(mean.detach().reshape(flat).mean(0) * m)
        if running_var is not None:
            unbiased = var.detach().reshape(flat) * (count / (count - 1))
            running_var.data.mul_(1 - m).add_(unbiased.mean(0) * m)
        out = centred / (var + eps).sqrt()
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("Expected running_mean and running_var to be defined when "
                               "use_input_stats is false")
        out = (input - running_mean.reshape(shape)) / (running_var.reshape(shape) + eps).sqrt()
    return _affine(out, weight, bias, shape)


def _embedding_renorm_(weight: Tensor, index: np.ndarray, max_norm: float,
                       norm_type: float) -> None:
    """PyTorch's ``embedding_renorm_``: each row of ``weight`` that ``index`` refers to and
    whose ``norm_type``-norm exceeds ``max_norm`` scaled in place to ``max_norm`` (with
    PyTorch's 1e-7 in the denominator), under no_grad."""
    rows = np.unique(index)
    if not rows.size:
        return
    values = weight._value[rows]
    norms = np.linalg.norm(values.astype(np.float64), ord=norm_type, axis=1)
    over = norms > max_norm
    if over.any():
        scale = (max_norm / (norms[over] + 1e-7)).astype(values.dtype)
        with no_grad():
            weight[Tensor._make(rows[over])] = Tensor._make(values[over] * scale[:, None])


def embedding(input: Any, weight: Tensor, padding_idx: int | None = None, max_norm: Any = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False
              ) -> Tensor:
    """The rows of ``weight`` at the int64 ``input``; the row at ``padding_idx`` gets no
    gradient, as PyTorch's. With ``max_norm`` the rows referred to are first renormalized
    in place (as PyTorch's); with ``scale_grad_by_freq`` each row's gradient is divided by
    the number of times ``input`` refers to it."""
    if sparse:
        raise NotImplementedError("F.embedding: sparse gradients are not supported; use "
                                  "sparse=False (the gradient is then dense, same values)")
    index = input._value if isinstance(input, Tensor) else np.asarray(input)
    if index.dtype.kind not in "iu":
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {index.dtype} instead")
    if index.size and (index.min() < 0 or index.max() >= weight.shape[0]):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        _embedding_renorm_(weight, index, float(max_norm), float(norm_type))
    rows = weight[index]
    if scale_grad_by_freq and index.size:
        counts = np.bincount(index.ravel(), minlength=weight.shape[0])[index]
        scale = Tensor._make((1.0 / counts)[..., None].astype(weight._value.dtype))
        frozen = rows.detach()
        rows = frozen + (rows - frozen) * scale  # the same values; the gradient divided
    if padding_idx is not None:
        pad = padding_idx % weight.shape[0]
        rows = ops.where((index == pad)[..., None], rows.detach(), rows)
    return watch_indices(named(rows, weight, "EmbeddingBackward0", (weight,)), input)


# ---------------------------------------------------------------------------
# attention


def _attention_mask(mask: Any, scores: Tensor) -> Tensor:
    value = mask._value if isinstance(mask, Tensor) else np.asarray(mask)
    if value.dtype == np.bool_:  # True: take part (scaled_dot_product_attention's convention)
        return ops.where(value, scores, -np.inf)
    return scores + mask


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Any = None,
                                 dropout_p: float = 0.0, is_causal: bool = False,
                                 scale: float | None = None, enable_gqa: bool = False) -> Tensor:
    """``softmax(Q·Kᵀ·scale + mask)·V``; a boolean mask says which positions take part,
    ``is_causal`` keeps the lower triangle."""
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        key, value = (_repeat_heads(t, query.shape[-3]) for t in (key, value))
    scores = (query @ key.transpose(-2, -1)) * scale
    if is_causal:
        length, source = query.shape[-2], key.shape[-2]
        scores = _attention_mask(np.tril(np.ones((length, source), dtype=bool)), scores)
    elif attn_mask is not None:
        scores = _attention_mask(attn_mask, scores)
    weights = safe_softmax(scores)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p)
    return weights @ value


def safe_softmax(scores: Tensor) -> Tensor:
    """PyTorch's safe softmax over the last axis: a query whose every position is masked
    (-inf) attends to nothing (0), not nan, and its gradient is 0 (nan reached every
    element of k.grad)."""
    weights = scores.softmax(-1)
    # such a row is nan throughout in softmax's (-inf less its maximum -inf): where the
    # result has no nan there is none (one pass, not numpy's all() over short rows:
    # 0.14 -> 0.02 ms for a transformer's (64, 4, 16, 16) float32 scores)
    if not np.isnan(weights._value).any():
        return weights
    masked = (scores._value == -np.inf).all(-1, keepdims=True)  # (data: no node)
    if masked.any():
        return ops.where(masked, 0.0, ops.where(masked, 0.0, scores).softmax(-1))
    return weights


def _repeat_heads(t: Tensor, heads: int) -> Tensor:
    """Grouped-query attention: each of ``t``'s heads (dim -3) repeated for its group of
    query heads (PyTorch's ``repeat_interleave``)."""
    n = t.shape[-3]
    if heads % n:
        raise RuntimeError(f"scaled_dot_product_attention(enable_gqa=True): the number of "
                           f"query heads ({heads}) must be a multiple of the key/value heads' "
                           f"({n})")
    shape = tuple(t.shape)
    grouped = t.unsqueeze(-3).expand(*shape[:-2], heads // n, *shape[-2:])
    return grouped.reshape(*shape[:-3], heads, *shape[-2:])
