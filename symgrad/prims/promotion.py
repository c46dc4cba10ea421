"""numpy's promotion of operands, as the recording helpers of :mod:`.elementwise` apply it.

What kind of operand numpy sees (:func:`kind`: a Python int is an integer, a bool a
bool), whether numpy's result on integers is an integer that symgrad computes in
float64 (:func:`integer_result`), the tables of numpy's arithmetic on bools and
integers (:data:`ON_BOOLS`, :data:`ON_INTEGERS`, filled by :mod:`.integers`), and
``to_float_p``, the primitive by which a traced int64 enters float arithmetic, and the
narrowing of constants and weak floats next to float32 operands (:func:`narrow_constants`,
:func:`rounded_weak`, by ``convert_p``). :func:`symgrad.prims.elementwise.call` reads them;
this module knows no other primitive, so that the declarations there can import it.

    >>> kind(2), kind(2.0), kind(True), kind(np.int32(2))
    ('i', 'f', 'b', 'i')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.ir import C64, C128, F32, FLOAT, INT, Aval, Primitive, is_float
from ..core.tracing import Traced, Tracer, apply, as_constant_array, current_trace
from .convert import convert_p
from .overflow import check_exact
from .registry import register, require

# numpy's arithmetic on bools and integers where it differs from float arithmetic on
# their values (the oracle: the ufunc itself on bool and int64 arrays). Elsewhere
# bools enter as 0.0/1.0 and integers as floats, which gives numpy's values.

KINDS = {"float64": "f", "float32": "f", "bool": "b", "int64": "i"}


def kind(x: Any) -> str:
    """numpy's dtype kind of an operand as numpy sees it: ``b``, ``i`` (``u``), ``f``;
    a Python int is an integer (NEP 50), though it enters float arithmetic as a float."""
    t = type(x)
    if t is float:
        return "f"
    if t is int or t is bool:
        return "i" if t is int else "b"
    if isinstance(x, Traced):  # a Tensor's aval: an int64 Tensor computes as PyTorch's, in
        return KINDS.get(x.aval.dtype, "O")  # floats (symgrad.eager), so it is no integer
    return "b" if isinstance(x, (bool, np.bool_)) else np.asarray(x).dtype.kind.replace("u", "i")


#: numpy's results on bool operands only, and on bool and integer ones, where they differ
#: from float arithmetic on their values: prim -> function of the operands (filled by
#: :mod:`symgrad.prims.integers`)
ON_BOOLS: dict[Primitive, Callable[..., Any]] = {}
ON_INTEGERS: dict[Primitive, Callable[..., Any]] = {}
#: ``+ - * maximum minimum``: their operands as numpy's promotion of integer constants
#: takes them (:func:`symgrad.prims.integers.integer_operands`)
INTEGER_CONSTANTS: dict[Primitive, Callable[[tuple], tuple]] = {}


def dtype_of(x: Any) -> np.dtype:
    """numpy's dtype of an operand (a traced value's own, a constant's as numpy makes it)."""
    if isinstance(x, Traced) or (isinstance(x, np.ndarray) and x.dtype == object):
        return x.dtype  # (an object array of traced elements: its trace assembles it)
    return as_constant_array(x).dtype


def is_integer(x: Any) -> bool:
    """A traced int64 value, or a Python/numpy integer. (An int64 Tensor is not one:
    the eager layer computes in the dtype PyTorch's promotion gives.)"""
    if isinstance(x, Traced):
        return isinstance(x, Tracer) and x.dtype == np.int64
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def scalar_known_later(y: Any) -> bool:
    """A scalar whose value the kernel takes as an argument: a traced 0-d value, or a
    float that the trace makes a 0-d constant (read from outside, or computed by numpy:
    see Trace.takes_as_argument)."""
    if isinstance(y, Tracer):
        return y.aval.shape == () and is_float(y.aval.dtype)
    trace = current_trace()
    return (isinstance(y, (float, np.floating)) and trace is not None
            and trace.takes_as_argument(y))


def integer_result(prim: Primitive, args: tuple) -> str | None:
    """numpy's name for ``prim`` where numpy's result on these operands is an integer
    (``abs``, ``sign``, ``maximum`` of integers) which symgrad computes in float64: the
    integers then enter refusing values above 2**53 (as_float's ``exact``)."""
    if not any(is_integer(a) and isinstance(a, Tracer) for a in args):
        return None
    kinds = "".join(map(kind, args))
    ufunc = prim.numpy
    if kinds.strip("bi") or not isinstance(ufunc, np.ufunc):
        return None
    with np.errstate(all="ignore"):
        out = ufunc(*(np.int64(1) for _ in args))
    return f"np.{ufunc.__name__}" if np.asarray(out).dtype.kind in "iub" else None


def _to_float_rule(x: Aval, exact: str | None = None, total: bool = False) -> Aval:
    require("to_float", (x,), INT)
    return Aval(x.shape, FLOAT, weak=x.weak)  # a Python int argument's: x32 * n is float32


def _to_float(x: Any, exact: str | None = None, total: bool = False) -> Any:
    if exact is not None:
        check_exact(x, exact, total)
    return np.asarray(x, dtype=np.float64)


# an int64 value (a loop counter, an integer argument) entering float arithmetic, as
# numpy promotes it; integers carry no gradient. ``exact`` (the numpy function's name)
# where numpy's result is an integer, which float64 gives only below 2**53: there the
# conversion refuses larger values (``total``: a larger sum of magnitudes, for sums)
# rather than round them (prims.overflow.check_exact)
to_float_p = register(
    name="to_float", kind="elementwise", shape_rule=_to_float_rule, impl=_to_float,
    vjp=lambda g, ans, x: (None,), sympy=lambda sp, x: x)


def narrow_constants(args: tuple, first: int = 0) -> tuple:
    """A constant (an array or a numpy scalar) of a dtype that float32 holds exactly
    (bool, int8, int16, uint8, uint16, float16) next to a float32 traced value enters as
    float32, as numpy promotes it: ``x32 * mask`` is float32 (it became float64). The
    arguments before ``first`` stay as they are (``where``'s condition: a bool mask
    converted to float32 and compared with 0 again was two passes over it, 0.3 ms of
    each max pooling of LeNet-5, for the same truth values)."""
    if not any(isinstance(a, Traced) and a.dtype == F32 for a in args):
        return args
    return args[:first] + tuple(
        a.astype(np.float32) if isinstance(a, (np.ndarray, np.generic))
        and a.dtype.kind in "biuf" and a.dtype != F32
        and np.result_type(a.dtype, np.float32) == F32 else a for a in args[first:])


def rounded_weak(args: list) -> list:
    """A weak float64 value (a Python float argument, or one read from outside) next to
    float32 operands enters as float32, rounded first, as numpy 2 rounds a Python float
    (NEP 50): ``x32 == 0.1`` compares with float32(0.1), ``x32 - 0.1`` subtracts it; a
    weak complex128 (a Python complex argument) next to float32 or complex64 operands
    enters as complex64."""
    avals = [a.aval for a in args if isinstance(a, Traced)]
    if not any(v.weak and v.dtype in (FLOAT, C128) for v in avals):
        return args
    strong = [v.dtype for v in avals if not v.weak]
    if not strong or any(d not in (F32, C64) for d in strong):
        return args
    return [apply(convert_p, a, dtype=F32 if a.aval.dtype == FLOAT and C64 not in strong
                  else C64) if isinstance(a, Traced) and a.aval.weak
            and a.aval.dtype in (FLOAT, C128) else a for a in args]
