"""``F.ctc_loss``: the connectionist temporal classification loss (Graves et al. 2006),
PyTorch's CPU kernel (``aten/src/ATen/native/LossCTC.cpp``).

The negative log-likelihood of each sequence comes from the log-space forward (alpha)
recursion over the target with blanks between its labels; its node,
``CtcLossBackward0``, gives PyTorch's gradient, computed with the backward (beta)
recursion when a backward asks for it:
``exp(lp[t, c]) - exp(log(sum of alpha * beta over the positions of c) + nll - lp[t, c])``
for ``t`` below the input length, 0 after. That is the gradient with respect to the
logits of a ``log_softmax`` (the derivative of ``nll`` through ``log_softmax``), not
the derivative of ``nll`` in ``log_probs`` itself: for ``log_probs`` from
``log_softmax`` the chain gives the true gradient, as PyTorch's; for other inputs
PyTorch's numbers, which no finite difference reproduces. With ``zero_infinity`` an
impossible alignment's loss and gradient are 0. The gradient has no derivative (as
PyTorch's: its double backward raises). Reductions as PyTorch's: ``mean`` divides each
loss by its target length (at least 1), then averages over the batch.

    >>> import symgrad as torch
    >>> lp = torch.tensor([[[-0.5, -1.0]], [[-0.7, -0.7]]])   # (T=2, N=1, C=2)
    >>> # -log(p(1,1) + p(blank,1) + p(1,blank)) over the three alignments of [1], as PyTorch's
    >>> round(float(torch.nn.functional.ctc_loss(lp, torch.tensor([[1]]), (2,), (1,),
    ...                                            reduction="sum")), 4)
    0.4056
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.ir import FLOAT, Aval
from ..eager.grad_mode import is_grad_enabled
from ..eager.host_nodes import Host, held, host_node, no_derivative
from ..eager.saved_indices import watch_indices
from ..eager.tensor import Tensor
from .more_functional import _reduce

__all__ = ["ctc_loss"]

_NEG = -np.inf


def _lengths(x: Any, n: int, what: str) -> np.ndarray:
    """Input or target lengths (a Tensor or a sequence of ints), one per sequence."""
    if isinstance(x, Tensor):
        if x.dtype.is_floating_point:
            raise RuntimeError(f"{what} must be integral")
        a = np.asarray(x._value).reshape(-1)
    elif isinstance(x, Sequence):
        a = np.asarray([int(v) for v in x], dtype=np.int64)
    else:
        raise TypeError(f"ctc_loss(): {what} must be a Tensor or a tuple of ints, "
                        f"not {type(x).__name__}")
    if a.size != n:
        raise RuntimeError(f"{what} must be of size batch_size")
    return a.astype(np.int64)


def _labels(targets: np.ndarray, tl: np.ndarray, n: int, classes: int) -> np.ndarray:
    """The targets as an (N, max length) table (padded with 0), from a padded 2-D
    tensor or the 1-D concatenation, with PyTorch's size checks."""
    width = int(tl.max(initial=0))
    table = np.zeros((n, width), dtype=np.int64)
    where = "for argument #2 'targets' (while checking arguments for ctc_loss_allocate_outputs)"
    if targets.ndim == 2:
        if targets.shape[0] != n:
            raise RuntimeError(f"Expected tensor to have size {n} at dimension 0, but got size "
                               f"{targets.shape[0]} {where}")
        if width > targets.shape[1]:
            raise RuntimeError(f"Expected tensor to have size at least {width} at dimension 1, "
                               f"but got size {targets.shape[1]} {where}")
        for b in range(n):
            table[b, :tl[b]] = targets[b, :tl[b]]
    elif targets.ndim == 1:
        ends = np.cumsum(tl)
        if targets.size != int(tl.sum()):
            raise RuntimeError(f"Expected tensor to have size {int(tl.sum())} at dimension 0, "
                               f"but got size {targets.size} {where}")
        for b in range(n):
            table[b, :tl[b]] = targets[ends[b] - tl[b]:ends[b]]
    else:
        raise RuntimeError("ctc_loss: targets must be 2-D (batch, max target length) or 1-D "
                           "(the targets concatenated)")
    used = np.arange(width) < tl[:, None]
    if np.any(used & ((table < 0) | (table >= classes))):
        raise IndexError(f"ctc_loss: a target is outside the {classes} classes of log_probs "
                         "(PyTorch's CPU kernel reads outside its table there)")
    return table


def _logsumexp(*terms: np.ndarray) -> np.ndarray:
    """PyTorch's ``log(sum exp(a - m)) + m`` with ``m = max`` (0 where all are -inf)."""
    m = np.maximum.reduce(terms)
    m = np.where(m == _NEG, 0.0, m)
    with np.errstate(divide="ignore"):  # (all -inf: -inf)
        return np.log(sum(np.exp(t - m) for t in terms)) + m


def _shift(a: np.ndarray, k: int, fill: float = _NEG) -> np.ndarray:
    """``a`` moved ``k`` places along its last axis (right for k > 0), filled."""
    out = np.full_like(a, fill)
    if k > 0:
        out[..., k:] = a[..., :-k]
    else:
        out[..., :k] = a[..., -k:]
    return out


class _Ctc:
    """The alpha recursion of a batch (float64), and PyTorch's gradient from it."""

    def __init__(self, lp: np.ndarray, labels: np.ndarray, il: np.ndarray, tl: np.ndarray,
                 blank: int, zero_infinity: bool):
        self.lp, self.il, self.tl, self.zero_infinity = lp, il, tl, zero_infinity
        T, n, _ = lp.shape
        width = 2 * labels.shape[1] + 1
        ext = np.full((n, width), blank, dtype=np.int64)
        ext[:, 1::2] = labels
        self.ext = ext
        s = np.arange(width)
        self.inside = s < (2 * tl + 1)[:, None]  # (N, S'): the extended target's positions
        self.skip = (s >= 2) & (ext != _shift(ext, 2, blank)) & self.inside
        self.emit = np.take_along_axis(lp, np.broadcast_to(ext, (T, n, width)), axis=2)
        alpha = np.full((T, n, width), _NEG)
        alpha[0, :, 0] = self.emit[0, :, 0]
        if width > 1:
            alpha[0, :, 1] = np.where(tl > 0, self.emit[0, :, 1], _NEG)
        for t in range(1, T):
            a = alpha[t - 1]
            new = _logsumexp(a, _shift(a, 1), np.where(self.skip, _shift(a, 2), _NEG))
            alpha[t] = np.where(self.inside, new + self.emit[t], _NEG)
        self.alpha = alpha
        rows = np.arange(n)
        last = alpha[il - 1, rows]  # (N, S')
        end = last[rows, 2 * tl]
        before = np.where(tl > 0, last[rows, np.maximum(2 * tl - 1, 0)], _NEG)
        self.nll = -np.where(tl > 0, _logsumexp(end, before), end)

    def grad(self) -> np.ndarray:
        """d loss_b / d lp, PyTorch's (for one unit of each loss)."""
        lp, emit, il, tl = self.lp, self.emit, self.il, self.tl
        T, n, classes = lp.shape
        s = np.arange(emit.shape[2])
        top = 2 * tl[:, None]
        start = np.where((s == top) | ((s == top - 1) & (tl[:, None] > 0)), 0.0, _NEG)
        skip = (s <= top - 2) & (self.ext != _shift(self.ext, -2, -1))
        beta = np.full(emit.shape, _NEG)
        for t in range(T - 1, -1, -1):
            if t + 1 < T:
                b = beta[t + 1]
                new = _logsumexp(b, _shift(b, -1), np.where(skip, _shift(b, -2), _NEG))
            else:
                new = np.full(emit.shape[1:], _NEG)
            new = np.where((t == il - 1)[:, None], start, np.where((t < il - 1)[:, None],
                                                                   new, _NEG))
            beta[t] = np.where(self.inside, new + emit[t], _NEG)
        ab = self.alpha + beta
        # PyTorch's last step assigns the last label's sum over the blank's: a last label
        # equal to the blank (a target holding the blank) drops the blank's term there
        rows = np.arange(n)
        over = (tl > 0) & (self.ext[rows, np.maximum(2 * tl - 1, 0)] == self.ext[rows, 2 * tl])
        ab[il[over] - 1, rows[over], 2 * tl[over]] = _NEG
        m = ab.max(axis=2, keepdims=True)
        m = np.where(m == _NEG, 0.0, m)
        onehot = (self.ext[:, :, None] == np.arange(classes)) & self.inside[:, :, None]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            lcab = np.log(np.einsum("tbs,bsc->tbc", np.exp(ab - m), onehot * 1.0)) + m
            g = np.exp(lp) - np.exp(lcab + self.nll[None, :, None] - lp)
        g[np.arange(T)[:, None] >= il[None, :]] = 0.0
        if self.zero_infinity:
            g[:, self.nll == np.inf] = 0.0
        return g


class _Backward(Host):
    """The node's VJP: ``ct[b] * grad_b`` (the gradient's graph, with create_graph, is a
    node whose backward raises PyTorch's error)."""

    def __init__(self) -> None:
        super().__init__(self._run, "CtcLossBackward0'")

    @staticmethod
    def _run(handle: Any, lp: Any, ct: Any) -> list[np.ndarray]:
        ct = np.asarray(ct, dtype=np.float64)
        with np.errstate(invalid="ignore"):
            return [np.zeros(()), held(handle).grad() * ct[None, :, None]]

    def replay(self, values: list[Any], like: Any) -> tuple:
        ct = values[2]
        value = self._run(values[0], None, ct._value if isinstance(ct, Tensor) else ct)[1]
        deps = tuple(v for v in values[1:] if isinstance(v, Tensor) and v.requires_grad)
        return (type(like)._make(np.zeros(())), no_derivative(
            value, deps, "NotImplemented",
            "derivative for aten::_ctc_loss_backward is not implemented"))


_FORWARD = Host(lambda handle, lp: [held(handle).nll], "CtcLossBackward0")
_BACKWARD = _Backward()


def _nll(log_probs: Tensor, ctc: _Ctc) -> Tensor:
    """The losses (N,) as a Tensor of a ``CtcLossBackward0`` node of ``log_probs``."""
    value = ctc.nll.astype(log_probs._value.dtype)
    if not (log_probs.requires_grad and is_grad_enabled()):
        return Tensor._make(value)
    aval = Aval(value.shape, FLOAT)  # (a callback's values are float64, as a Function's)
    part = host_node("CtcLossBackward0", ctc, (log_probs,), aval, _FORWARD, _BACKWARD)
    part.inputs[0].versions = ((log_probs, log_probs._version),)  # (PyTorch's node saves it)
    return Tensor._make(value, part)


def ctc_loss(log_probs: Tensor, targets: Any, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """The CTC loss of ``log_probs`` (T, N, C) (or (T, C), one sequence) against
    ``targets`` (N, S) padded or 1-D concatenated, PyTorch's (see the module)."""
    if log_probs.dtype.name not in ("float32", "float64"):
        names = {"float16": "Half", "bfloat16": "BFloat16", "int64": "Long", "int32": "Int",
                 "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}
        name = names.get(log_probs.dtype.name, log_probs.dtype.name.capitalize())
        raise NotImplementedError(f"\"ctc_loss_cpu\" not implemented for '{name}'")
    if log_probs.ndim not in (2, 3):
        raise RuntimeError(f"ctc_loss: log_probs must be 2-D (T, C) or 3-D (T, N, C), got "
                           f"{log_probs.ndim}-D")
    single = log_probs.ndim == 2
    lp_t = log_probs.unsqueeze(1) if single else log_probs
    T, n, classes = lp_t.shape
    tg = np.asarray(targets._value if isinstance(targets, Tensor) else targets)
    il = _lengths(input_lengths, n, "input_lengths")
    tl = _lengths(target_lengths, n, "target_lengths")
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    if np.any(il > T):
        raise RuntimeError(f"Expected input_lengths to have value at most {T}, but got value "
                           f"{int(il.max())} (while checking arguments for "
                           f"ctc_loss_allocate_outputs)")
    for what, a in (("input_lengths", il), ("target_lengths", tl)):
        if np.any(a < 0):
            raise RuntimeError(f"Expected {what} to have value at least 0, but got value "
                               f"{int(a.min())} (while checking arguments for "
                               f"ctc_loss_allocate_outputs)")
    if np.any(il == 0):
        raise NotImplementedError(
            "ctc_loss: an input length of 0 is not supported (PyTorch's CPU kernel reads "
            "before its table there, its result is not defined); drop that sequence")
    labels = _labels(np.trunc(tg).astype(np.int64), tl, n, classes)
    ctc = _Ctc(np.asarray(lp_t._value, dtype=np.float64), labels, il, tl, blank,
               zero_infinity)
    loss = watch_indices(_nll(lp_t, ctc), targets, input_lengths, target_lengths)
    if zero_infinity:
        loss = loss.masked_fill(Tensor._make(ctc.nll == np.inf), 0.0)
    if reduction == "mean":
        lengths = Tensor._make(np.maximum(tl, 1).astype(loss._value.dtype))
        return (loss / lengths).mean()
    if single:
        loss = loss.squeeze(0)
    return _reduce(loss, reduction)
