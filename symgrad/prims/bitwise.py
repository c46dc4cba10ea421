"""``bitwise``: numpy's ``& | ^ ~ << >>`` on integers, and the logical ones on bools.

Contract: ``bitwise(x, y, op=...)`` is ``np.bitwise_and`` (``op="and"``),
``bitwise_or``, ``bitwise_xor``, ``invert`` (one operand), ``left_shift`` or
``right_shift`` of int64 values, with numpy's results also where C leaves a
shift undefined: a count outside 0..63 shifts every bit out (0, or -1 for a
negative number shifted right). Integers carry no gradient. On bools the
operators are numpy's logical functions (:func:`symgrad.prims.integers.logical_and`,
...), compositions of comparisons and selections, so that masks stay in the
float arithmetic the fused loops already do; on a float operand numpy raises a
TypeError, and so does symgrad.

    >>> import numpy as np
    >>> int(bitwise(np.int64(-8), np.int64(70), op="right_shift"))
    -1
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.ir import INT, Aval, Literal
from ..core.tracing import Traced, apply
from . import elementwise as E
from .integers import logical_and, logical_not, logical_or, logical_xor
from .promotion import dtype_of, kind
from .registry import broadcast_shapes, register, require

_UFUNCS = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
           "invert": np.invert, "left_shift": np.left_shift, "right_shift": np.right_shift}


def _rule(*avals: Aval, op: str) -> Aval:
    if op not in _UFUNCS or len(avals) != (1 if op == "invert" else 2):
        raise TypeError(f"bitwise: unknown operation {op!r} on {len(avals)} operands")
    require(f"bitwise {op}", avals, INT)
    return Aval(broadcast_shapes("bitwise", *avals), INT)


def _impl(*xs: Any, op: str) -> Any:
    return _UFUNCS[op](*(np.asarray(x, dtype=np.int64) for x in xs))[()]


def _sympy(sp: Any, *xs: Any, op: str) -> Any:
    """The integer itself for integer operands (a loop counter SymPy unrolled), else an
    undefined function (integers are never differentiated)."""
    if all(isinstance(x, int) or getattr(x, "is_Integer", False) for x in xs):
        return sp.Integer(int(_impl(*(int(x) for x in xs), op=op)))
    return sp.Function(f"bitwise_{op}")(*xs)


bitwise_p = register(
    name="bitwise", kind="elementwise", shape_rule=_rule, impl=_impl,
    vjp=lambda g, ans, *xs, op: (None,) * len(xs), sympy=_sympy)

_LOGICAL = {"and": logical_and, "or": logical_or, "xor": logical_xor, "invert": logical_not}


def bitwise(*xs: Any, op: str) -> Any:
    """numpy's bitwise ``op`` on ``xs``: on int64 values one ``bitwise`` equation, on bools
    numpy's logical operation; float operands (and bool shifts) are a TypeError, as in numpy."""
    kinds = "".join(map(kind, xs))
    if not any(isinstance(x, Traced) for x in xs):
        return _UFUNCS[op](*xs)  # no traced operand: numpy itself
    if kinds.strip("b") == "" and op in _LOGICAL:
        return _LOGICAL[op](*xs)
    if kinds.strip("bi") != "":
        types = ", ".join(str(dtype_of(x)) if isinstance(x, Traced) else type(x).__name__
                          for x in xs)
        raise TypeError(f"ufunc '{_UFUNCS[op].__name__}' not supported for the input types "
                        f"({types}): numpy's bitwise operations take integers and bools; for "
                        "a mask of a float x write x != 0 (or np.logical_and/or/xor/not)")
    return apply(bitwise_p, *(_as_int(x) for x in xs), op=op)


def _as_int(x: Any) -> Any:
    """An integer operand as an int64 atom (a bool as 0/1, as numpy promotes it)."""
    if isinstance(x, Traced):
        return x if x.dtype == np.int64 else apply(E.where_p, x, Literal(1), Literal(0))
    value = np.asarray(x)
    if value.ndim:
        raise TypeError("a bitwise operation of a traced integer and a constant integer "
                        "array: symgrad holds constant arrays as floats; pass the array as an "
                        "argument of the function (an int64 array is traced as integers)")
    return Literal(int(value))
