"""Comparisons and ``where``: the primitives of booleans, which carry no gradient, and how
booleans and integers enter arithmetic (:func:`as_float`, :func:`as_bool`).

Below :mod:`.elementwise` (which re-exports every name here): ``where``'s VJP records
``where`` equations itself, so nothing here needs the recording helpers.

    >>> import numpy as np
    >>> float(as_float(np.True_))
    1.0
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.ir import BOOL, FLOAT, INT, Aval, Eqn, Literal, Primitive, float_of
from ..core.rewrite import Producer, Rewrite, lit, made_by, same_aval
from ..core.tracing import Traced, Tracer, apply, as_constant_array
from .promotion import dtype_of, to_float_p
from .registry import binary, broadcast_shapes, register, require

# ---------------------------------------------------------------------------
# comparisons and selection: booleans carry no gradient


def _comparison(name: str, ufunc: np.ufunc, op: str, sympy: Callable, **facts: Any) -> Primitive:
    # complex operands: numpy's order, by real part, then by imaginary part (a nan part
    # compares false), which numpy's ufunc computes
    return binary(name, ufunc, out_dtype=BOOL,
                  vjp=lambda g, ans, x, y: (None, None), sympy=sympy,
                  integer=True, complex=True, **facts)


def _gt_simplify(e: Eqn, producer: Producer) -> Rewrite:
    # where(c, 1.0, 0.0) > 0.0 -> c   (the masks of symgrad.passes.adjoint; any a > 0)
    x, y = e.inputs
    inner = made_by(producer, x, where_p)
    if lit(y, 0.0) and inner is not None:
        c, a, b = inner.inputs
        if (isinstance(a, Literal) and isinstance(b, Literal) and a.value > 0.0
                and b.value == 0.0):
            return same_aval(e, c)
    return None


gt_p = _comparison("gt", np.greater, ">", lambda sp, x, y: sp.StrictGreaterThan(x, y),
                   simplify=_gt_simplify)
ge_p = _comparison("ge", np.greater_equal, ">=", lambda sp, x, y: sp.GreaterThan(x, y))
lt_p = _comparison("lt", np.less, "<", lambda sp, x, y: sp.StrictLessThan(x, y))
le_p = _comparison("le", np.less_equal, "<=", lambda sp, x, y: sp.LessThan(x, y))
eq_p = _comparison("eq", np.equal, "==", lambda sp, x, y: sp.Eq(x, y), commutative=True)
ne_p = _comparison("ne", np.not_equal, "!=", lambda sp, x, y: sp.Ne(x, y), commutative=True)


def _where_rule(c: Aval, x: Aval, y: Aval) -> Aval:
    require("where", (c,), BOOL)
    if x.dtype == y.dtype == INT:  # a select of integers (vmap of a loop counter)
        return Aval(broadcast_shapes("where", c, x, y), INT)
    require("where", (x, y), FLOAT)  # a choice of two literals is weak: bool 0.0/1.0
    return Aval(broadcast_shapes("where", c, x, y), float_of(x, y), weak=x.weak and y.weak)


def _where_simplify(e: Eqn, producer: Producer) -> Rewrite:
    c, x, y = e.inputs
    if isinstance(c, Literal):
        return x if c.value else y  # where(True, x, y) -> x   (broadcast to the output)
    if x == y:
        return x  # where(c, x, x) -> x
    return None


_UNSIGNED = {np.dtype(np.float64): np.dtype(np.uint64), np.dtype(np.float32): np.dtype(np.uint32)}


def select(c: Any, x: Any, y: Any) -> Any:
    """``np.where(c, x, y)``, bit for bit. For a large boolean ``c`` and float arrays (or
    Python floats) of one dtype, it picks the bits with a mask instead (``x & m | y & ~m``,
    ``m`` all ones where ``c``): numpy's ``where`` branches on every element, and a
    condition of no pattern (a ReLU's, a max pool's choice) mispredicts half the branches,
    ten times the cost of the mask's few passes."""
    if type(c) is np.ndarray and c.size >= 4096 and c.dtype == np.bool_:
        dtype = x.dtype if type(x) is np.ndarray else y.dtype if type(y) is np.ndarray else None
        unsigned = _UNSIGNED.get(dtype)
        if unsigned is not None and all(type(v) is float or (type(v) is np.ndarray and
                                                             v.dtype == dtype) for v in (x, y)):
            mask = c.astype(unsigned)
            np.negative(mask, out=mask)  # (0 - 1 wraps to all ones)
            bits = [np.asarray(v, dtype).view(unsigned) for v in (x, y)]
            if type(y) is float and bits[1] == 0:  # where(c, x, 0.0)
                return np.bitwise_and(bits[0], mask).view(dtype)
            out = np.bitwise_and(bits[0], mask)
            np.invert(mask, out=mask)
            if type(x) is float and bits[0] == 0:
                return np.bitwise_and(bits[1], mask).view(dtype)
            np.bitwise_or(out, np.bitwise_and(bits[1], mask), out=out)
            return out.view(dtype)
    return np.where(c, x, y)


# the unselected operand gets an exact 0: the cotangent itself never mixes branches
where_p = register(
    name="where", complex=True, kind="elementwise", shape_rule=_where_rule, impl=select,
    vjp=lambda g, ans, c, x, y: (None, apply(where_p, c, g, 0.0),
                                apply(where_p, c, 0.0, g)),
    sympy=lambda sp, c, x, y: sp.Piecewise((x, c), (y, True)), numpy=np.where,
    simplify=_where_simplify, linear=True)


def as_float(x: Any, exact: str | None = None, total: bool = False) -> Any:
    """Booleans enter arithmetic as 0.0/1.0, integers as floats, as numpy promotes them.
    ``exact`` names the numpy function whose result is an integer: a traced int64 is
    then converted refusing values float64 would round (see ``to_float_p``)."""
    dtype = dtype_of(x)
    if dtype == np.int64 and isinstance(x, Tracer):
        # a traced integer (concrete integers are floats already; an int64 Tensor
        # computes in the dtype PyTorch's promotion gives, see symgrad.eager)
        if exact is None:
            return apply(to_float_p, x)
        return apply(to_float_p, x, exact=exact, **({"total": True} if total else {}))
    if dtype != np.bool_:
        return x
    if isinstance(x, Traced):
        return apply(where_p, x, 1.0, 0.0)
    if isinstance(x, bool):  # a Python bool stays a Python number (a literal when traced)
        return float(x)
    return as_constant_array(x).astype(np.float64)


def as_bool(x: Any) -> Any:
    """A condition: booleans as they are, numbers compared with 0 (numpy's truth)."""
    return x if dtype_of(x) == np.bool_ else apply(ne_p, as_float(x), 0.0)
