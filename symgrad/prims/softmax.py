"""The two primitives of a cross entropy, each one node as PyTorch's: ``log_softmax``
(``LogSoftmaxBackward0``) and ``nll_loss`` (``NllLossBackward0``), which the eager Tensor's
``log_softmax``, ``F.nll_loss`` and ``F.cross_entropy`` record; and ``softmax``
(``SoftmaxBackward0``), the eager Tensor's ``softmax`` (attention's). Each computes its value
with numpy at once (the eager forward of a cross entropy: two operations, not twenty), and
its VJP is PyTorch's closed form, written with primitives, so a second derivative
differentiates it as any graph.

``log_softmax(x, axis)`` computes PyTorch's values: ``x`` less its maximum, less the log
of the sum of the exponents, that log computed as the composite
:func:`symgrad.numpy_api.functions.log_softmax` (``sg.log_softmax``) computes it (``log1p``
of the others' sum plus the ties less one, so a row ruled by one value keeps what the
others add): where a row's maximum is finite, its values are the composite's, bit for bit.
A row holding ``+inf``, or all ``-inf``, or a nan, is nan everywhere, as PyTorch's (the
composite, which is scipy's, keeps ``-inf`` beside a ``+inf``). Its VJP is
``g - exp(ans) * sum(g)`` over the axis (``_log_softmax_backward_data``).

``softmax(x, axis)``: ``exp(x - max)`` over its sum, as the composite
:func:`symgrad.numpy_api.functions.softmax` (``sg.softmax``) computes it: where a row's
maximum is finite, its values are the composite's, bit for bit; a row holding ``+inf``, or
all ``-inf``, or a nan, is nan everywhere, as PyTorch's (the composite gives 0 beside a
``+inf``). Its VJP is ``ans * (g - sum(g * ans))`` over the axis
(``_softmax_backward_data``).

``nll_loss(logp, target, w, total, axis, reduction)``: each sample's loss is ``-logp`` at
its ``target`` class along ``axis`` times its weight ``w``; an ignored sample has target -1
(no class) and weight 0, so its loss is +0, and a nan elsewhere in its row does not reach
it. ``"sum"`` adds them, ``"mean"`` divides that sum by ``total`` (the weights' sum, an
operand, as it changes from one batch to the next; 0: nan, as PyTorch's). The targets are
floats (exact for fewer than 2**24 classes in float32), so that every operand is of the
input's dtype; ``target``, ``w`` and ``total`` are data (PyTorch's ``nll_loss``
differentiates neither the target nor the weight); the VJP is ``w * -(g / total)`` at the
targets.

    >>> import numpy as np
    >>> log_softmax(np.array([[0.0, np.log(3.0)]]), 1)
    array([[-1.38629436, -0.28768207]])
    >>> softmax(np.array([[0.0, np.log(3.0)], [1.0, np.inf]]), 1)
    array([[0.25, 0.75],
           [ nan,  nan]])
    >>> float(nll_loss(np.log([[0.25, 0.75], [0.5, 0.5]]), np.array([1.0, 0.0]), np.ones(2),
    ...                np.array(2.0), 1, "mean"))
    0.4904146265058631
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import ShapeError
from ..core.ir import FLOAT, Aval, float_of
from ..core.tracing import apply
from .elementwise import div_p, exp, where
from .reductions import broadcast_to, expand, reduce, sum_p
from .registry import register, require


def _rows_rule(name: str) -> Any:
    def rule(x: Aval, *, axis: int) -> Aval:
        require(name, (x,), FLOAT)
        if not 0 <= axis < x.ndim:
            raise ShapeError(f"{name}: axis {axis} is not an axis of {x}")
        return x
    return rule


def _log_softmax(x: Any, axis: int) -> Any:
    """The values, computed by numpy in ``x``'s dtype."""
    x = np.asarray(x)
    if x.shape[axis] == 0:
        return x.copy()
    # (the arrays' methods: numpy's reductions without their Python wrappers)
    shifted = x - x.max(axis, keepdims=True)  # (-inf - -inf, inf - inf: nan)
    e = np.exp(shifted)
    tied = shifted == 0
    others = np.where(tied, 0, e).sum(axis, keepdims=True)
    ties = np.where(tied, e, 0).sum(axis, keepdims=True)
    return shifted - np.log1p(others + (ties - 1))


def _log_softmax_vjp(g: Any, ans: Any, x: Any, axis: int) -> tuple:
    return (g - exp(ans) * expand(reduce(sum_p, g, (axis,)), x.shape, (axis,)),)


def _rows_sympy(row: Any) -> Any:
    """A SymPy form applying ``row(sp, values)`` to each row along ``axis``."""
    def sympy(sp: Any, x: np.ndarray, axis: int) -> np.ndarray:
        rows = np.moveaxis(x, axis, -1)
        out = np.empty(rows.shape, dtype=object)
        for idx in np.ndindex(*rows.shape[:-1]):
            out[idx] = row(sp, list(rows[idx]))
        return np.moveaxis(out, -1, axis)
    return sympy


def _log_softmax_row(sp: Any, values: list) -> list:
    total = sp.log(sp.Add(*(sp.exp(v) for v in values)))
    return [v - total for v in values]


def _log_softmax_batch(b: Any, args: list, flags: list, *, axis: int) -> tuple:
    (x,) = args  # (batched along a new first axis)
    return b.bind(log_softmax_p, [x], axis=axis + 1), True


log_softmax_p = register(
    name="log_softmax", kind="array", shape_rule=_rows_rule("log_softmax"), impl=_log_softmax,
    vjp=_log_softmax_vjp, sympy=_rows_sympy(_log_softmax_row), batch=_log_softmax_batch)


def log_softmax(x: Any, axis: int) -> Any:
    """``log_softmax`` of ``x`` along the non-negative ``axis`` (one equation)."""
    return apply(log_softmax_p, x, axis=int(axis))


def _softmax(x: Any, axis: int) -> Any:
    """The values, computed by numpy in ``x``'s dtype."""
    return normalized(shifted_exp(x, axis), axis)


def shifted_exp(x: Any, axis: int) -> np.ndarray:
    """``exp(x - max(x, axis))``, a fresh array (softmax before its division by the sums;
    the eager path divides by a compiled loop, :mod:`symgrad.eager.fastpath`)."""
    x = np.asarray(x)
    if x.shape[axis] == 0:
        return x.copy()
    e = x - _row_max(x, axis)  # (-inf - -inf, inf - inf: nan)
    np.exp(e, out=e)  # (in place: the same bits)
    return e


def normalized(e: np.ndarray, axis: int) -> np.ndarray:
    """``e`` divided by its sums along ``axis``, in place."""
    return e if e.shape[axis] == 0 else np.divide(e, e.sum(axis, keepdims=True), out=e)


def _row_max(x: np.ndarray, axis: int) -> np.ndarray:
    """``x.max(axis, keepdims=True)``; along a last axis of 2 to 64 elements (attention's
    rows) by halving it with ``np.maximum``: numpy's reduction over so short an inner axis
    cost 230 us for (64, 4, 16, 16) float32, the halving ~30. The same maxima (a nan
    sticks); of a -0.0 and a 0.0 either may be kept, which changes no value of ``exp(x -
    max)``."""
    n = x.shape[axis]
    if axis != x.ndim - 1 or not 2 <= n <= 64 or x.size < 4096:
        return x.max(axis, keepdims=True)
    m = x
    while m.shape[-1] > 1:
        half = m.shape[-1] // 2
        top = np.maximum(m[..., :half], m[..., half:2 * half])
        if m.shape[-1] % 2:
            top[..., :1] = np.maximum(top[..., :1], m[..., 2 * half:])
        m = top
    return m


def _softmax_vjp(g: Any, ans: Any, x: Any, axis: int) -> tuple:
    return (ans * (g - expand(reduce(sum_p, g * ans, (axis,)), x.shape, (axis,))),)


def _softmax_row(sp: Any, values: list) -> list:
    total = sp.Add(*(sp.exp(v) for v in values))
    return [sp.exp(v) / total for v in values]


def _softmax_batch(b: Any, args: list, flags: list, *, axis: int) -> tuple:
    (x,) = args  # (batched along a new first axis)
    return b.bind(softmax_p, [x], axis=axis + 1), True


softmax_p = register(
    name="softmax", kind="array", shape_rule=_rows_rule("softmax"), impl=_softmax,
    vjp=_softmax_vjp, sympy=_rows_sympy(_softmax_row), batch=_softmax_batch)


def softmax(x: Any, axis: int) -> Any:
    """``softmax`` of ``x`` along the non-negative ``axis`` (one equation)."""
    return apply(softmax_p, x, axis=int(axis))


def _nll_rule(logp: Aval, target: Aval, w: Aval, total: Aval, *, axis: int,
              reduction: str) -> Aval:
    require("nll_loss", (logp, target, w, total), FLOAT)
    kept = tuple(d for k, d in enumerate(logp.shape) if k != axis)
    if not 0 <= axis < logp.ndim or target.shape != kept or w.shape != kept \
            or total.shape != ():
        raise ShapeError(f"nll_loss: takes log-probabilities, a target class and a weight "
                         f"per sample and a total weight; got {logp}, {target}, {w}, {total} "
                         f"along axis {axis}")
    if reduction not in ("none", "sum", "mean"):
        raise ValueError(f"nll_loss: reduction {reduction!r} is not none, sum or mean")
    return Aval(kept if reduction == "none" else (), float_of(logp, target, w, total))


def _classes(n: int, axis: int, ndim: int) -> np.ndarray:
    """``0, 1, ..., n - 1`` along ``axis`` of ``ndim`` axes (length 1 elsewhere)."""
    return np.arange(n, dtype=np.float64).reshape((n,) + (1,) * (ndim - axis - 1))


def _shared_classes(n: int, axis: int, ndim: int) -> np.ndarray:
    """:func:`_classes`, read-only and made once per (n, axis, ndim), for the values (a
    training loop's loss asks for it at every step; a graph gets its own)."""
    key = (n, axis, ndim)
    found = _CLASSES.get(key)
    if found is None:
        found = _classes(n, axis, ndim)
        found.flags.writeable = False
        if len(_CLASSES) < 1000:
            _CLASSES[key] = found
    return found


_CLASSES: dict[tuple[int, int, int], np.ndarray] = {}


def _nll(logp: Any, target: Any, w: Any, total: Any, axis: int, reduction: str) -> Any:
    """The losses, computed by numpy in the operands' dtype (one term per sample's sum:
    the picked value itself)."""
    target = np.asarray(target)  # (with a length-1 axis at ``axis``: np.expand_dims's)
    at = target.reshape(target.shape[:axis] + (1,) + target.shape[axis:])
    picked = np.where(_shared_classes(logp.shape[axis], axis, logp.ndim) == at, logp, 0)
    losses = 0 - picked.sum(axis) * w
    if reduction == "none":
        return losses
    return losses.sum() if reduction == "sum" else losses.sum() / total


def _nll_vjp(g: Any, ans: Any, logp: Any, target: Any, w: Any, total: Any, axis: int,
             reduction: str) -> tuple:
    if reduction == "mean":
        g = g / total
    per_sample = w * -broadcast_to(g, w.shape)  # (PyTorch's: weight * -(grad / total))
    picked = expand(target, logp.shape, (axis,)) == _classes(logp.shape[axis], axis, logp.ndim)
    return (where(picked, expand(per_sample, logp.shape, (axis,)), 0.0), None, None, None)


def _nll_sympy(sp: Any, logp: np.ndarray, target: np.ndarray, w: np.ndarray, total: Any,
               axis: int, reduction: str) -> Any:
    at = np.expand_dims(np.vectorize(float, otypes=[float])(target), axis)
    picked = np.sum(np.where(_classes(logp.shape[axis], axis, logp.ndim) == at, logp, 0),
                    axis=axis)
    losses = np.asarray(-(picked * w), dtype=object)
    if reduction == "none":
        return losses
    return sp.Add(*losses.ravel()) / (total if reduction == "mean" else 1)


def _nll_batch(b: Any, args: list, flags: list, *, axis: int, reduction: str) -> tuple:
    """Every operand but the total batched (along a new first axis), each example's
    samples' losses, then their sum (divided by the total, batched or not, for a mean)."""
    logp, target, w = (a if f else b.with_batch(a) for a, f in zip(args[:3], flags[:3]))
    total = args[3]
    # ("none" does not read its total: any 0-d value of its dtype)
    some_total = b.bind(sum_p, [total], axes=(0,)) if flags[3] else total
    losses = b.bind(nll_loss_p, [logp, target, w, some_total], axis=axis + 1, reduction="none")
    if reduction == "none":
        return losses, True
    sums = b.bind(sum_p, [losses], axes=tuple(range(1, len(b.shape(losses)))))
    return (sums if reduction == "sum" else b.bind(div_p, [sums, total])), True


nll_loss_p = register(
    name="nll_loss", kind="array", shape_rule=_nll_rule, impl=_nll, vjp=_nll_vjp,
    sympy=_nll_sympy, batch=_nll_batch)


def nll_loss(logp: Any, target: Any, w: Any, total: Any, axis: int, reduction: str) -> Any:
    """The negative log-likelihood of ``logp`` at the ``target`` class of each sample along
    ``axis`` (a float; -1 picks none), weighted by ``w`` per sample, reduced as
    ``reduction`` says (one equation)."""
    return apply(nll_loss_p, logp, target, w, total, axis=int(axis), reduction=reduction)
