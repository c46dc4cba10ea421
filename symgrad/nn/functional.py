"""``torch.nn.functional`` for symgrad Tensors: activations, ``linear``, ``dropout``, losses.

Each function is a composition of Tensor operations, so it runs eagerly, records
its primitives and is differentiated by symgrad's adjoint. Class labels (int64
tensors) never enter the recorded graph as indices: the losses turn them into a
mask that enters as data, so a training loop over batches with different labels
keeps one graph structure and compiles its backward once.

    >>> import symgrad as torch
    >>> import symgrad.nn.functional as F
    >>> logits = torch.tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 3.0]], requires_grad=True)
    >>> loss = F.cross_entropy(logits, torch.tensor([0, 2]))
    >>> round(loss.item(), 6)
    0.175456
    >>> loss.backward(); logits.grad.shape
    torch.Size([2, 3])

Losses take ``reduction='mean' | 'sum' | 'none'``; ``cross_entropy`` and
``nll_loss`` take ``weight=``, ``ignore_index=`` and (``cross_entropy``)
``label_smoothing=`` and class-probability targets, with PyTorch's formulas.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..eager.bf16 import in_float32 as _in_float32
from ..eager.dtypes import TYPE_NAMES as _TYPE_NAMES
from ..eager.host_nodes import no_derivative as _no_derivative
from ..eager.method_args import same_dtype as _same_dtype
from ..eager.methods import PRIMITIVE_FLOATS, named
from ..eager.methods import addmm_rows as _addmm_rows  # not F's public name
from ..eager.methods import linear_rows as _linear_rows  # not F's public name
from ..eager.methods import nll_loss_rows as _nll_loss_rows  # not F's public name
from ..eager.random import numpy_generator as _numpy_generator
from ..eager.saved_indices import watch_copied as _watch_copied
from ..eager.select_methods import no_gradient_at_nan as _no_gradient_at_nan
from ..eager.tensor import Tensor
from ..numpy_api import functions as ops
from .activation import (  # noqa: F401 -- torch.nn.functional's namespace
    _implicit_dim,
    batch_norm,
    celu,
    cosine_similarity,
    dropout,
    elu,
    embedding,
    gelu,
    glu,
    group_norm,
    hardshrink,
    hardsigmoid,
    hardswish,
    instance_norm,
    layer_norm,
    logsigmoid,
    mish,
    normalize,
    prelu,
    scaled_dot_product_attention,
    selu,
    silu,
    softmin,
    softshrink,
    softsign,
    tanhshrink,
    threshold,
)
from .convolution import (  # noqa: F401
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    pad,
)
from .ctc import ctc_loss  # noqa: F401
from .extra_functional import (  # noqa: F401
    alpha_dropout,
    channel_shuffle,
    feature_alpha_dropout,
    local_response_norm,
    lp_pool1d,
    lp_pool2d,
    multilabel_margin_loss,
    pairwise_distance,
    pdist,
    triplet_margin_with_distance_loss,
)
from .folding import fold, max_unpool1d, max_unpool2d, max_unpool3d, unfold  # noqa: F401
from .grid_sampling import affine_grid, grid_sample  # noqa: F401
from .more_functional import (  # noqa: F401
    _reduce,  # the one rule of reductions (and the legacy arguments)
    bilinear,
    cosine_embedding_loss,
    dropout1d,
    dropout2d,
    dropout3d,
    embedding_bag,
    gaussian_nll_loss,
    hinge_embedding_loss,
    margin_ranking_loss,
    multi_margin_loss,
    multilabel_soft_margin_loss,
    pixel_shuffle,
    pixel_unshuffle,
    poisson_nll_loss,
    rms_norm,
    soft_margin_loss,
    triplet_margin_loss,
)
from .pooling import (  # noqa: F401
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    adaptive_max_pool3d,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    max_pool1d,
    max_pool2d,
    max_pool3d,
)
from .resampling import interpolate  # noqa: F401


def _value(x: Any) -> Any:
    return x._value if isinstance(x, Tensor) else np.asarray(x)


# ---------------------------------------------------------------------------
# layers and activations


@_in_float32
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``. Of a float32 or float64 input of three axes or more
    (a transformer's ``(N, L, E)``): one product of its rows, one node, the bias (of one
    element per row of ``weight``) added into it. Named as PyTorch 2.13's: ``ViewBackward0``
    with a bias (its ``addmm`` of the ``(N·L, E)`` view, viewed), else that of ``matmul``
    (``UnsafeViewBackward0``); of a 2-D input ``AddmmBackward0`` (with a bias: that one
    node too, by one gemm) or ``MmBackward0``."""
    _same_dtype("linear", input, weight, bias)
    if weight.ndim == 1 and bias is not None and (input.ndim == 2 or bias.ndim == 1):
        # PyTorch 2.13 adds such a bias by addmm, which refuses the vector weight
        raise RuntimeError("mat2 must be a matrix, got 1-D tensor")
    if input.ndim > 2 and _same_float(input, weight):
        if _same_float(input, bias, ndim=1) and bias.shape == weight.shape[:1]:
            return named(_linear_rows(input, weight, bias), input, "ViewBackward0")
        out = named(_linear_rows(input, weight), input, "UnsafeViewBackward0")
        return out if bias is None else named(out + bias, input, "ViewBackward0")
    if input.ndim == 2 and _same_float(input, weight) and _same_float(input, bias, ndim=1) \
            and bias.shape == weight.shape[:1]:
        return _addmm_rows(input, weight, bias)
    wt = weight.t()
    out = input @ wt
    matrices = input.ndim == 2 and weight.ndim == 2
    if bias is None:
        return named(out, input, "MmBackward0", (input, wt)) if matrices else out
    if not matrices:  # (of a 1-D weight, matmul then add: AddBackward0)
        return named(out + bias, input, "ViewBackward0" if weight.ndim == 2 else None)
    return named(out + bias, input, "AddmmBackward0", (bias, input, wt))


def _same_float(x: Any, w: Any, ndim: int = 2) -> bool:
    """Whether ``x @ w.T`` is the rows' primitive's: a matrix ``w`` of ``x``'s float dtype
    (a 1-D ``w`` is PyTorch's ``x @ w``: the general path); with ``ndim=1``, whether ``w``
    is a vector of that dtype (a bias the primitive adds)."""
    dtype = x._value.dtype
    return dtype in PRIMITIVE_FLOATS and isinstance(w, Tensor) and w._value.dtype == dtype \
        and w._value.ndim == ndim


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    return input.relu_() if inplace else input.relu()


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return hardtanh(input, 0.0, 6.0)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    # PyTorch's derivative is 1 strictly inside (min_val, max_val) and 0 at the bounds
    # (clamp's ties would give 1/2 there)
    # (its value is clamp's, data there: relu6(-0.0) is -0.0, as PyTorch's)
    bounds = input.detach().clamp(min_val, max_val)
    out = ops.where((input <= min_val) | (input >= max_val), bounds, input)
    # at a NaN: 0 (PyTorch's vectorized loop; its scalar tail passes the gradient)
    return named(_no_gradient_at_nan(out, input), input, "HardtanhBackward0", (input,))


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    return named(ops.where(input > 0, input, input * negative_slope), input,
                 "LeakyReluBackward0", (input,))


def tanh(input: Tensor) -> Tensor:
    return input.tanh()


def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:  # noqa: F811
    """``log(1 + exp(beta * x)) / beta``, linear where ``beta * x > threshold`` (PyTorch's)."""
    scaled = input * beta
    smooth = ops.softplus(scaled) / beta if beta != 1.0 else ops.softplus(scaled)
    return named(ops.where(scaled > threshold, input, smooth), input, "SoftplusBackward0",
                 (input,))


def softmax(input: Tensor, dim: int | None = None, dtype: Any = None) -> Tensor:
    return input.softmax(_implicit_dim(input, dim), dtype)


def log_softmax(input: Tensor, dim: int | None = None, dtype: Any = None) -> Tensor:
    return input.log_softmax(_implicit_dim(input, dim), dtype)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot rows: ``one_hot(tensor([0, 2]), 3)`` is ``[[1, 0, 0], [0, 0, 1]]``."""
    labels = _value(tensor)
    if labels.dtype.kind not in "iu":
        raise RuntimeError("one_hot is only applicable to index tensor (int64)")
    n = int(labels.max()) + 1 if num_classes == -1 else num_classes
    if labels.size and (labels.min() < 0 or labels.max() >= n):
        raise RuntimeError("Class values must be smaller than num_classes.")
    return Tensor._make(np.eye(n, dtype=np.int64)[labels])


# ---------------------------------------------------------------------------
# losses


def mse_loss(input: Tensor, target: Any, reduction: str = "mean") -> Tensor:
    return named(_reduce((input - target) ** 2, reduction), input, "MseLossBackward0",
                 (input, target))


def l1_loss(input: Tensor, target: Any, reduction: str = "mean") -> Tensor:
    return _reduce((input - target).abs(), reduction)  # PyTorch's is a composite too


def smooth_l1_loss(input: Tensor, target: Any, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    if beta == 0.0:
        return _reduce((input - target).abs(), reduction)
    # |u| as where(u >= 0, u, -u), not abs: the loss is u**2 / (2 beta) near u = 0,
    # smooth there, and abs'(0) = 0 would make its second derivative 0 at input ==
    # target instead of 1 / beta (PyTorch's double backward gives 1 / beta)
    u = input - target
    d = ops.where(u >= 0, u, -u)
    small = ops.where(d < beta, d, 0.0)
    loss = ops.where(d < beta, 0.5 * small * small / beta, d - 0.5 * beta)
    return named(_reduce(loss, reduction), input, "SmoothL1LossBackward0", (input, target))


def _class_dim(input: Tensor) -> int:
    return 1 if input.ndim >= 2 else 0


#: the dtypes of class indices PyTorch's nll_loss and cross_entropy take (int64, uint8)
_INDEX_DTYPES = (np.dtype(np.int64), np.dtype(np.uint8))


def _aten_name(a: np.ndarray) -> str:
    """The dtype of ``a`` as PyTorch's errors name it (``Long``, ``Int``, ``Float``)."""
    return _TYPE_NAMES.get(a.dtype.name, a.dtype.name)


def _labels(input: Tensor, target: Any, weight: Any, ignore_index: int
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For class-index targets: the class of each sample (where it is not ignored), whether
    it is not ignored, and its weight (0 where ignored)."""
    labels = _value(target)
    if labels.dtype not in _INDEX_DTYPES:  # (PyTorch's kernels take these two only)
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{_aten_name(labels)}: class indices are int64 (or uint8); convert "
                           "with .long(), or pass class probabilities of the input's shape "
                           "to cross_entropy")
    c = _class_dim(input)
    n_classes = input.shape[c]
    expected = tuple(input.shape[:c] + input.shape[c + 1:])
    if not c and labels.ndim:  # a 1-D input's target: 0-d, or (1,) (see _size_one_target)
        if labels.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if labels.size != 1:
            raise ValueError("For 1D input, 1D target must have size 1, but got target size: "
                             f"{labels.size}")
        labels = labels.reshape(())
    if labels.shape != expected:  # PyTorch's three errors
        if c and labels.ndim and labels.shape[0] != input.shape[0]:
            raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                             f"batch_size ({labels.shape[0]}).")
        if input.ndim == 2:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported: "
                               f"class indices of shape {list(expected)}")
        raise (RuntimeError if c else ValueError)(
            f"Expected target size {list(expected)}, got {list(labels.shape)}")
    valid = labels != ignore_index
    safe = np.where(valid, labels, 0)
    if safe.size and (safe.min() < 0 or safe.max() >= n_classes):
        bad = safe[(safe < 0) | (safe >= n_classes)].flat[0]
        raise IndexError(f"Target {bad} is out of bounds.")
    per_sample = valid.astype(np.float64) if weight is None else \
        np.where(valid, _value(weight).astype(np.float64)[safe], 0.0)
    return safe, valid, per_sample


def _nll(logp: Tensor, target: Any, weight: Any, ignore_index: int, reduction: str) -> Tensor:
    safe, valid, per_sample = _labels(logp, target, weight, ignore_index)
    dtype = logp._value.dtype
    total = np.asarray(per_sample.sum(), dtype=dtype)
    if reduction not in ("mean", "sum", "none"):
        _reduce(logp, reduction)  # (raises the one error of a reduction's name)
    c = _class_dim(logp)
    # one node, one numpy computation (symgrad.prims.softmax), its targets as floats
    if dtype in PRIMITIVE_FLOATS and logp.shape[c] < 2 ** 24:
        # (the node holds the targets and weights as floats: copies of the tensors
        # PyTorch's node saves, watched)
        out = _nll_loss_rows(logp, np.where(valid, safe, -1).astype(dtype),
                             per_sample.astype(dtype, copy=False), total, c, reduction)
        return _watch_copied(_watch_copied(out, 1, target), 2, weight)
    # (float16, bfloat16): the composite; each sample's weight at its target, 0 elsewhere
    classes = np.arange(logp.shape[c]).reshape((-1,) + (1,) * (logp.ndim - c - 1))
    mask = (np.expand_dims(safe, c) == classes) & np.expand_dims(valid, c)
    # (the mask and weights: copies of the tensors PyTorch's node saves, watched)
    picked = _watch_copied(ops.where(mask, logp, np.zeros((), dtype)), 0, target, weight)
    if weight is not None:
        weights = np.where(mask, np.expand_dims(per_sample, c), 0.0)
        picked = picked * weights.astype(dtype)
    losses = 0.0 - picked.sum(c)  # an ignored target's loss is +0, not -0
    if reduction == "mean":
        return losses.sum() / total
    return _reduce(losses, reduction)


def _size_one_target(loss: Tensor, input: Tensor, target: Any) -> Tensor:
    """``loss``, or, for a 1-D input (C,) and a target of shape (1,), which PyTorch 2.13's
    forward takes as the 0-d target, the same value whose backward raises PyTorch's
    error (its backward refuses that target)."""
    if input.ndim != 1 or np.shape(_value(target)) != (1,) or not loss.requires_grad:
        return loss
    return _no_derivative(loss._value, (input,), "NllLossBackward0",
                          f"size mismatch (got input: [{input.shape[0]}], target: [1]) (the "
                          "target of a 1-D input is 0-d: pass target[0] to differentiate)")


def nll_loss(input: Tensor, target: Any, weight: Any = None, ignore_index: int = -100,
             reduction: str = "mean") -> Tensor:
    """``-input[n, target[n]] * weight[target[n]]``; the mean divides by the total weight."""
    return _size_one_target(named(
        _nll(input, target, weight, ignore_index, reduction), input,
        "NllLoss2DBackward0" if input.ndim > 2 else "NllLossBackward0", (input,)), input, target)


def cross_entropy(input: Tensor, target: Any, weight: Any = None, ignore_index: int = -100,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """``nll_loss(log_softmax(input, 1), target)``, or with class probabilities as target
    ``-sum(target * log_softmax(input, 1))``; ``label_smoothing`` mixes in the uniform
    distribution, as PyTorch does."""
    c = _class_dim(input)
    logp = input.log_softmax(c)
    n_classes = input.shape[c]
    dtype = logp._value.dtype
    given = getattr(target, "shape", None)  # (np.shape of a Tensor: numpy's dispatch)
    if tuple(np.shape(target) if given is None else given) == tuple(input.shape):
        # class probabilities, as PyTorch tells them: by the shape, then the dtype
        if not getattr(target, "is_floating_point", lambda: False)():
            raise RuntimeError("Expected floating point type for target with class "
                               f"probabilities, got {_aten_name(_value(target))}: class "
                               "indices have the input's shape without its class dimension")
        probs = target  # differentiable too, as in PyTorch
        if label_smoothing:
            probs = probs * (1 - label_smoothing) + label_smoothing / n_classes
        terms = logp * probs  # (ATen's order: -(input * target * weight), so its
        if weight is not None:  # MulBackward0 reads the target as it is at backward)
            shape = [1] * input.ndim
            shape[c] = n_classes
            terms = terms * _value(weight).astype(dtype, copy=False).reshape(shape)
            _watch_copied(terms, 1, weight)  # (a copy of another dtype's)
        if reduction == "none":
            return -terms.sum(c)
        total = -(terms.sum())
        if reduction == "sum":
            return total
        _reduce(total, reduction)  # checks the name
        return named(total / (input.numel() / n_classes), total, "DivBackward1", (total,))
    # (PyTorch's node shows only its input: the target and the weight are not differentiated)
    nll = named(_nll(logp, target, weight, ignore_index, reduction), logp,
                "NllLoss2DBackward0" if input.ndim > 2 else "NllLossBackward0", (logp,))
    if not label_smoothing:
        return _size_one_target(nll, input, target)
    if input.ndim == 1 and np.shape(_value(target)) == (1,):
        raise RuntimeError("output with shape [] doesn't match the broadcast shape [1] (the "
                           "target of a 1-D input is 0-d: pass target[0])")
    labels = _value(target)
    ignored = labels == ignore_index
    if weight is not None:
        shape = [1] * input.ndim
        shape[c] = n_classes
        smooth = -(logp * _value(weight).astype(dtype).reshape(shape)).sum(c)
    else:
        smooth = -logp.sum(c)
    smooth = ops.where(ignored, np.zeros((), dtype), smooth)
    if reduction == "mean":
        w = np.ones(n_classes) if weight is None else _value(weight)
        total = w[labels[~ignored]].sum() if weight is not None else (~ignored).sum()
        smooth = smooth.sum() / np.asarray(total, dtype=dtype)
    else:
        smooth = _reduce(smooth, reduction)
    # (products by Python numbers in ATen: MulBackward1, which shows only the tensor)
    return (named((1 - label_smoothing) * nll, nll, "MulBackward1", (nll,))
            + named(smooth * (label_smoothing / n_classes), smooth, "MulBackward1", (smooth,)))


def binary_cross_entropy(input: Tensor, target: Any, weight: Any = None,
                         reduction: str = "mean") -> Tensor:
    """``-(t log x + (1 - t) log(1 - x))``, each log clamped at -100 as PyTorch does."""
    values = _value(input)
    if values.size and (values.min() < 0 or values.max() > 1):
        raise RuntimeError("all elements of input should be between 0 and 1")
    log_x = np.log(input).clamp(min=-100.0)
    log_1mx = np.log(1 - input).clamp(min=-100.0)
    # ((1 - target) is a copy of the target, which PyTorch's node saves: watched)
    loss = -(target * log_x + _watch_copied((1 - target) * log_1mx, 0, target))
    if weight is not None:
        loss = loss * weight
    return named(_reduce(loss, reduction), input, "BinaryCrossEntropyBackward0",
                 (input, target, weight))


def binary_cross_entropy_with_logits(input: Tensor, target: Any, weight: Any = None,
                                     reduction: str = "mean", pos_weight: Any = None) -> Tensor:
    """``-(p t log sigmoid(x) + (1 - t) log(1 - sigmoid(x)))`` computed stably:
    ``(1 - t) x + (1 + (p - 1) t) softplus(-x)``."""
    softplus_neg = ops.softplus(-input)
    # (the products' factors of the target are copies of the tensors PyTorch's node saves:
    # watched)
    loss = _watch_copied((1 - target) * input, 0, target)
    if pos_weight is None:
        loss = loss + softplus_neg
    else:
        loss = loss + _watch_copied((1 + (pos_weight - 1) * target) * softplus_neg, 0,
                                    target, pos_weight)
    if weight is not None:
        loss = loss * weight
    return named(_reduce(loss, reduction), input, "BinaryCrossEntropyWithLogitsBackward0",
                 (input, target, weight, pos_weight))


# ---------------------------------------------------------------------------
# huber_loss, kl_div, rrelu (pairwise_distance: .extra_functional). rrelu in training
# mode draws each negative element's slope uniformly from [lower, upper] with the default generator
# (torch.manual_seed), as dropout draws its mask: the slopes differ from PyTorch's (its
# generator is not reproduced), their law is the same; in evaluation mode it is PyTorch's
# leaky_relu with the slope (lower + upper) / 2.


def huber_loss(input: Tensor, target: Any, reduction: str = "mean", delta: float = 1.0,
               weight: Any = None) -> Tensor:
    """``u**2 / 2`` where ``|u| < delta``, else ``delta * (|u| - delta / 2)`` (``u = input -
    target``), times ``weight`` if given."""
    if delta <= 0:
        raise RuntimeError(f"huber_loss does not support non-positive values for delta, got "
                           f"{delta}")
    u = input - target
    # |u| as a where (abs'(0) = 0 would make the second derivative 0 at input == target;
    # PyTorch's is 1 there), the quadratic branch fed only small values
    d = ops.where(u >= 0, u, -u)
    small = ops.where(d < delta, u, 0.0)
    loss = ops.where(d < delta, 0.5 * small * small, delta * (d - 0.5 * delta))
    if weight is not None:
        if tuple(weight.shape) != tuple(input.shape):
            raise ValueError("Weights and input must have the same size.")
        loss = loss * weight
    return named(_reduce(loss, reduction), input, "HuberLossBackward0", (input, target))


def kl_div(input: Tensor, target: Any, size_average: Any = None, reduce: Any = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """The pointwise ``target * (log(target) - input)`` (``input`` holds log-probabilities;
    ``target`` too with ``log_target=True``): ``xlogy(t, t) - t * input``, 0 where ``t`` is
    0, as PyTorch's. ``reduction='batchmean'`` divides the sum by the batch size."""
    if size_average is not None or reduce is not None:
        raise NotImplementedError("kl_div: size_average and reduce are deprecated; pass "
                                  "reduction=")
    if log_target:
        loss = np.exp(target) * (target - input)
    else:
        loss = ops.xlogy(target, target) - target * input
    if reduction == "batchmean":
        total = loss.sum()
        return total / input.shape[0] if input.ndim else total
    return _reduce(loss, reduction)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
          training: bool = False, inplace: bool = False) -> Tensor:
    """``x`` where ``x >= 0``, else ``a * x``: ``a`` uniform in ``[lower, upper]`` per
    element in training (drawn from ``torch.manual_seed``'s stream), ``(lower + upper) / 2``
    in evaluation."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"\"rrelu_with_noise\" not implemented for "
                           f"'{input.dtype.name.capitalize()}'")
    if training:
        slopes = _numpy_generator(None).uniform(lower, upper, tuple(input.shape))
        slopes = np.where(input._value >= 0, 1.0, slopes).astype(input._value.dtype)
        out = named(input * slopes, input, "RreluWithNoiseBackward0", (input,))
    else:
        out = leaky_relu(input, (lower + upper) / 2)
    return input.copy_(out) if inplace else out


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False) -> Tensor:
    return rrelu(input, lower, upper, training, inplace=True)


__all__ = ["linear", "relu", "relu6", "hardtanh", "leaky_relu", "elu", "tanh", "sigmoid",
           "softplus", "softmax", "log_softmax", "dropout", "one_hot", "mse_loss", "l1_loss",
           "smooth_l1_loss", "nll_loss", "cross_entropy", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "huber_loss", "kl_div", "pairwise_distance",
           "rrelu", "rrelu_"]
