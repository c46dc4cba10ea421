"""The Euclidean norm over axes, scaled as LAPACK's ``dnrm2`` scales it.

``norm2(x, axes)`` is ``sqrt(sum(x**2))`` over sorted, unique ``axes``, computed on
``x / m`` with ``m = max(|x|)`` of each group and multiplied by ``m`` afterwards, so
that no square overflows or underflows: ``norm2([1e-170, 2e-170])`` is
``2.24e-170`` (the squares would be 0) and ``norm2([1e200, 1e200])`` is ``1.41e200``
(they would be inf). A primitive of its own, not a composite, because its VJP must
be scaled too: ``x / norm2(x)`` computed as ``(x/m) / norm2(x/m)``, which is right
where the norm itself is subnormal (``[5e-324, 5e-324]``) or overflows
(``[1.5e308, 1.5e308]``), and exactly 0 where ``x`` is 0 (the norm at 0 is the
constant 0 there: the minimum-norm subgradient, pytorch #2421). The chain rule
through a composite ``m * sqrt(sum((x/m)**2))`` would multiply the cotangent by
``m`` first, and underflow or overflow there.

:func:`symgrad.numpy_api.linalg.norm` (``np.linalg.norm``) and
:func:`symgrad.numpy_api.functions.std` (the norm of the centered values) use it.

    >>> import numpy as np
    >>> float(norm2(np.array([1e-170, 2e-170]), (0,)))
    2.23606797749979e-170
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.tracing import apply
from .elementwise import absolute, sign, where
from .reductions import _reduction_rule, broadcast_to, expand, max_p, reduce
from .registry import register


def _norm2(x: Any, axes: tuple[int, ...]) -> Any:
    x = np.asarray(x, dtype=float)
    if not axes:
        return np.abs(x)
    top = np.max(np.abs(x), axis=axes, keepdims=True, initial=0.0)  # a nan sticks
    scale = np.where((top > 0.0) & (top < np.inf), top, 1.0)
    total = np.sum(np.square(x / scale), axis=axes)
    return (np.sqrt(total) * np.squeeze(scale, axis=axes))[()]


def _norm2_vjp(g, ans, x, axes):
    if not axes:
        return (g * sign(x),)  # |x|, with abs'(0) = 0
    if any(x.shape[a] == 0 for a in axes):
        return (broadcast_to(0.0, x.shape),)  # no elements, no gradient
    # x / norm2(x) = (x/m) / norm2(x/m), m the largest magnitude of each group: a ratio
    # of numbers near 1, whatever the norm's own range; 0 where the group is 0
    top = expand(reduce(max_p, absolute(x), axes), x.shape, axes)
    scale = where(top > 0.0, where(top < np.inf, top, 1.0), 1.0)
    scaled = x / scale
    unit = scaled / expand(norm2(scaled, axes), x.shape, axes)
    return (where(top == 0.0, 0.0, expand(g, x.shape, axes) * unit),)


def _norm2_sympy(sp, xs):
    # the constant 0 where every element is 0, so that SymPy's derivative there is the
    # convention's 0, not 0/0
    total = sp.Add(*(x ** 2 for x in xs))
    return sp.Piecewise((0, sp.Eq(total, 0)), (sp.sqrt(total), True))


norm2_p = register(
    name="norm2", kind="reduction", shape_rule=_reduction_rule("norm2", True), impl=_norm2,
    vjp=_norm2_vjp, sympy=_norm2_sympy)


def norm2(x: Any, axes: tuple[int, ...]) -> Any:
    """The Euclidean norm of ``x`` over sorted ``axes`` (one equation), scaled."""
    return apply(norm2_p, x, axes=tuple(axes))
