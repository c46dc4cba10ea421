"""numpy's arithmetic on bools and integers, where it differs from float arithmetic.

Bools enter arithmetic as 0.0/1.0 and integers as floats (numpy's values), except
where numpy's result differs (the oracle: each ufunc on bool and int64 arrays,
``tests/test_numpy_edges.py``):

- bool operands only: ``+`` and ``maximum`` are logical or, ``*`` and ``minimum``
  logical and, ``abs``/``floor``/``ceil``/``trunc`` the bool itself; ``-``, unary
  minus and ``np.sign`` raise numpy's TypeError;
- bool and integer operands: ``//`` and ``%`` give 0 for a zero divisor (floats give
  inf and nan), ``np.reciprocal`` (numpy's integer division ``1 // x``) is refused,
  ``x ** k`` for a literal ``k`` is int64 products by squaring (refusing to wrap,
  :mod:`.overflow`; a negative ``k`` numpy's ValueError);
- a traced bool with integer constants: ``+ - * maximum minimum`` in int64, as numpy's
  (:func:`integer_operands`; a traced int64 with a uint64 constant: float64);
- ``np.logical_and``/``or``/``xor``/``not`` take numpy's truth of any operand
  (``x != 0``): compositions of comparisons and selections, no primitive of their own.

Importing this module fills the tables that :func:`symgrad.prims.elementwise.call`
consults (:data:`symgrad.prims.promotion.ON_BOOLS`, ``ON_INTEGERS``, ``INTEGER_CONSTANTS``).

    >>> import numpy as np
    >>> bool(logical_xor(np.array(True), np.array(False)))
    True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.ir import INT, Primitive
from ..core.tracing import Traced, Tracer, apply
from .elementwise import (
    abs_p,
    add_p,
    as_bool,
    as_float,
    call,
    ceil_p,
    eq_p,
    floor_p,
    maximum_p,
    minimum_p,
    mul_p,
    ne_p,
    neg_p,
    pow_p,
    reciprocal_p,
    sign_p,
    sub_p,
    trunc_p,
    where_p,
)
from .promotion import INTEGER_CONSTANTS, ON_BOOLS, ON_INTEGERS, is_integer, kind
from .sorting import to_int_p
from .special import floor_divide_p, remainder_p


def logical_and(x: Any, y: Any) -> Any:
    """``np.logical_and``: numpy's truth of each operand (``x != 0``), both true."""
    return apply(ne_p, apply(where_p, as_bool(x), as_float(as_bool(y)), 0.0), 0.0)


def logical_or(x: Any, y: Any) -> Any:
    return apply(ne_p, apply(where_p, as_bool(x), 1.0, as_float(as_bool(y))), 0.0)


def logical_xor(x: Any, y: Any) -> Any:
    return apply(ne_p, as_float(as_bool(x)), as_float(as_bool(y)))


def logical_not(x: Any) -> Any:
    return apply(eq_p, as_float(as_bool(x)), 0.0)


def _refuse(message: str) -> Callable[..., Any]:
    def refuse(*args: Any) -> Any:
        raise TypeError(message)
    return refuse


_BOOL_NEGATIVE = ("The numpy boolean negative, the `-` operator, is not supported, use the "
                  "`~` operator or the logical_not function instead.")
_INTEGER_RECIPROCAL = (
    "np.reciprocal of an integer or bool is numpy's integer division 1 // x (0 for |x| > 1, "
    "0 at x = 0), which symgrad does not compute: write 1.0 / x for the float reciprocal")


def _integer_division(prim: Primitive) -> Callable[..., Any]:
    """numpy's integer ``//`` and ``%``: the float quotient's values, and 0 where the
    divisor is 0 (not inf or nan, as for floats); an int64 result where an operand is
    an integer, as numpy's (``x[np.argmax(x) // 2]``), of operands below 2**53 (larger
    ones refused), whose float quotient is exact."""
    def divide(x: Any, y: Any) -> Any:
        name = f"np.{prim.numpy.__name__}"
        integer = "i" in kind(x) + kind(y)
        x, y = as_float(x, name), as_float(y, name)
        out = apply(where_p, apply(eq_p, y, 0.0), 0.0, apply(prim, x, y))
        return apply(to_int_p, out) if integer else out
    return divide


def _identity(x: Any) -> Any:
    return x


def _integer_power(x: Any, y: Any) -> Any:
    """numpy's integer ``x ** k`` for a traced int64 ``x`` and a literal ``k`` >= 0: int64
    products by squaring (each refusing to wrap, :mod:`.overflow`); a negative ``k`` is
    numpy's ValueError (a bool ``x`` as int64). Other integer powers (a traced or array
    exponent) are refused: numpy's are int64 products that wrap and an error for a
    negative exponent, which float64 would neither round to nor raise (``u ** n`` at
    ``u = 3, n = 35``)."""
    if isinstance(x, Tracer) and x.dtype == np.bool_ and kind(y) == "i":
        x = apply(to_int_p, as_float(x))  # numpy's bool ** int is int64
    if not (isinstance(x, Tracer) and x.dtype == np.int64 and kind(y) == "i"
            and not isinstance(y, Traced) and np.ndim(y) == 0):
        raise TypeError(
            "np.power of integers with a traced or array exponent: numpy computes it in "
            "int64 (wrapping, an error for a negative exponent), symgrad only for a "
            "literal Python int exponent; pass the exponent as a number the function "
            "holds (static_argnums) or compute in float: x.astype(float) ** n")
    k = int(y)
    if k < 0:
        raise ValueError("Integers to negative integer powers are not allowed.")
    result, square_ = None, x
    while k:
        if k & 1:
            result = square_ if result is None else call(mul_p, result, square_)
        k >>= 1
        if k:
            square_ = call(mul_p, square_, square_)
    return call(add_p, call(mul_p, x, 0), 1) if result is None else result


def integer_operands(args: tuple) -> tuple:
    """The operands of ``+ - * maximum minimum`` where numpy's integer promotion decides
    the result and no traced int64 operand leads symgrad's integer path: a traced bool
    with integer constants is numpy's int64 arithmetic (``mask * 3`` is int64, exact, not
    float64); a traced int64 with a uint64 constant is float64 arithmetic, as numpy's
    ``int64 + uint64`` (not int64); a traced bool with an int8 (..., uint64) constant,
    whose arithmetic wraps at other bounds, is refused (TypeError)."""
    if not any(isinstance(a, Tracer) for a in args) or any(
            isinstance(a, Traced) and (not isinstance(a, Tracer) or a.aval.dtype not in
                                       ("bool", INT)) for a in args):
        return args
    kinds = "".join(map(kind, args))
    if kinds.strip("bi") or "i" not in kinds or all(
            isinstance(a, Tracer) or type(a) in (int, bool) for a in args) and any(
            is_integer(a) and isinstance(a, Tracer) for a in args):
        return args
    dtype = np.result_type(*(a.dtype if isinstance(a, Tracer) else 0 if type(a) is int
                             else np.asarray(a).dtype for a in args))
    if dtype == np.int64:
        return tuple(apply(to_int_p, as_float(a)) if isinstance(a, Tracer) and a.dtype == np.bool_
                     else a for a in args)
    if dtype == np.float64:
        return tuple(as_float(a) if isinstance(a, Tracer) else np.asarray(a, np.float64)
                     for a in args)
    raise TypeError(f"a traced bool meets an integer constant: numpy computes this in "
                    f"{dtype}, which wraps at other bounds than int64, symgrad's only integer "
                    "dtype; make the constant an int64 (np.int64(c), c.astype(np.int64))")


#: bool operands only: numpy's result is bool (the Boolean algebra) or an error
ON_BOOLS.update({
    add_p: logical_or, maximum_p: logical_or, mul_p: logical_and, minimum_p: logical_and,
    abs_p: _identity, floor_p: _identity, ceil_p: _identity, trunc_p: _identity,
    sub_p: _refuse("numpy boolean subtract, the `-` operator, is not supported, use the "
                   "bitwise_xor, the `^` operator, or the logical_xor function instead."),
    neg_p: _refuse(_BOOL_NEGATIVE),
    sign_p: _refuse("np.sign of a bool array: numpy has no loop for it (ufunc 'sign' did not "
                    "contain a loop with signature matching types bool); use x.astype(float)"),
})
#: bool and integer operands (at least one traced): numpy's integer arithmetic
ON_INTEGERS.update({
    reciprocal_p: _refuse(_INTEGER_RECIPROCAL), pow_p: _integer_power,
    floor_divide_p: _integer_division(floor_divide_p),  # x // 0 is 0 for integers
    remainder_p: _integer_division(remainder_p),  # and x % 0 too
})
INTEGER_CONSTANTS.update(dict.fromkeys((add_p, sub_p, mul_p, maximum_p, minimum_p),
                                    integer_operands))
