"""``log_softmax`` as one primitive: the eager Tensor's ``log_softmax`` (so
``F.cross_entropy``), one node as PyTorch's ``LogSoftmaxBackward0``.

``log_softmax(x, axis)`` computes PyTorch's values: ``x`` less its maximum, less the log
of the sum of the exponents, that log computed as the composite
:func:`symgrad.numpy_api.functions.log_softmax` (``sg.log_softmax``) computes it (``log1p``
of the others' sum plus the ties less one, so a row ruled by one value keeps what the
others add): where a row's maximum is finite, its values are the composite's, bit for bit.
A row holding ``+inf``, or all ``-inf``, or a nan, is nan everywhere, as PyTorch's (the
composite, which is scipy's, keeps ``-inf`` beside a ``+inf``). Its VJP is PyTorch's closed form
``g - exp(ans) * sum(g)`` over the axis (``_log_softmax_backward_data``), written with
primitives, so a second derivative differentiates it as any graph. The eager forward is
one numpy computation instead of about fifteen eager operations.

    >>> import numpy as np
    >>> log_softmax(np.array([[0.0, np.log(3.0)]]), 1)
    array([[-1.38629436, -0.28768207]])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import ShapeError
from ..core.ir import FLOAT, Aval
from ..core.tracing import apply
from .elementwise import exp
from .reductions import expand, reduce, sum_p
from .registry import register, require


def _log_softmax_rule(x: Aval, *, axis: int) -> Aval:
    require("log_softmax", (x,), FLOAT)
    if not 0 <= axis < x.ndim:
        raise ShapeError(f"log_softmax: axis {axis} is not an axis of {x}")
    return x


def _log_softmax(x: Any, axis: int) -> Any:
    """The values, computed by numpy in ``x``'s dtype."""
    x = np.asarray(x)
    if x.shape[axis] == 0:
        return x.copy()
    shifted = x - np.max(x, axis=axis, keepdims=True)  # (-inf - -inf, inf - inf: nan)
    e = np.exp(shifted)
    tied = shifted == 0
    others = np.sum(np.where(tied, 0, e), axis=axis, keepdims=True)
    ties = np.sum(np.where(tied, e, 0), axis=axis, keepdims=True)
    return shifted - np.log1p(others + (ties - 1))


def _log_softmax_vjp(g: Any, ans: Any, x: Any, axis: int) -> tuple:
    return (g - exp(ans) * expand(reduce(sum_p, g, (axis,)), x.shape, (axis,)),)


def _log_softmax_sympy(sp: Any, x: np.ndarray, axis: int) -> np.ndarray:
    rows = np.moveaxis(x, axis, -1)
    out = np.empty(rows.shape, dtype=object)
    for idx in np.ndindex(*rows.shape[:-1]):
        total = sp.log(sp.Add(*(sp.exp(v) for v in rows[idx])))
        out[idx] = [v - total for v in rows[idx]]
    return np.moveaxis(out, -1, axis)


def _log_softmax_batch(b: Any, args: list, flags: list, *, axis: int) -> tuple:
    (x,) = args  # (batched along a new first axis)
    return b.bind(log_softmax_p, [x], axis=axis + 1), True


log_softmax_p = register(
    name="log_softmax", kind="array", shape_rule=_log_softmax_rule, impl=_log_softmax,
    vjp=_log_softmax_vjp, sympy=_log_softmax_sympy, batch=_log_softmax_batch)


def log_softmax(x: Any, axis: int) -> Any:
    """``log_softmax`` of ``x`` along the non-negative ``axis`` (one equation)."""
    return apply(log_softmax_p, x, axis=int(axis))
