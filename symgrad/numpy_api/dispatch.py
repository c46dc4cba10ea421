"""How numpy calls reach symgrad: the table of numpy functions and ufunc dispatch.

``HANDLED_FUNCTIONS`` maps public numpy functions to their traced versions
(filled by :func:`implements` in the modules of this package) for
``__array_function__``; ufuncs map to primitives by their ``numpy`` facet,
looked up in the registry when they are called.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from ..core.errors import UnsupportedFunctionError, user_location
from ..core.tracing import Traced, Tracer
from ..prims.complex import cabs
from ..prims.convert import convert
from ..prims.elementwise import as_float, call
from ..prims.promotion import kind
from ..prims.registry import REGISTRY, of_numpy
from ..prims.sorting import to_int
from .scipy_special import lookup, scipy_name, supported

HANDLED_FUNCTIONS: dict[Callable, Callable] = {}

F = TypeVar("F", bound=Callable)


def implements(*numpy_functions: Callable) -> Callable[[F], F]:
    """Register the decorated function as the traced version of ``numpy_functions``."""
    def decorate(fn: F) -> F:
        for f in numpy_functions:
            HANDLED_FUNCTIONS[f] = fn
        return fn
    return decorate


def supported_functions() -> list[str]:
    """Names of the numpy functions and ufuncs symgrad can trace.

        >>> import symgrad as sg
        >>> {"np.exp", "np.sum", "np.linalg.inv"} <= set(sg.ops.supported_functions())
        True
    """
    names = {f"np.{qualname(f)}" for f in HANDLED_FUNCTIONS}
    names |= {f"np.{p.numpy.__name__}" for p in REGISTRY.values()
              if isinstance(p.numpy, np.ufunc)}
    return sorted(names)


def qualname(func: Callable) -> str:
    """``sum`` for ``np.sum``, ``linalg.svd`` for ``np.linalg.svd``."""
    module = (getattr(func, "__module__", None) or "").removeprefix("numpy").lstrip(".")
    name = getattr(func, "__name__", repr(func))
    return f"{module}.{name}" if module else name


def apply_ufunc(ufunc: np.ufunc, method: str, inputs: Sequence[Any], kwargs: dict) -> Any:
    """``__array_ufunc__``: a ufunc call on traced operands."""
    name = f"np.{ufunc.__name__}"
    if method != "__call__":
        raise UnsupportedFunctionError(
            f"{name}.{method} on a traced value (at {user_location()}) is not supported; "
            "use the numpy function instead (np.sum for np.add.reduce, ...)")
    refuse_kwargs(name, kwargs, allowed={"dtype": float_dtype})
    if kwargs.get("dtype") is not None:  # np.add(x32, y, dtype=np.float64): in float64
        inputs = [in_dtype(kwargs["dtype"], x) for x in inputs]
    kwargs = {k: v for k, v in kwargs.items() if k != "dtype"}
    if ufunc is np.positive:
        return inputs[0]
    if ufunc in HANDLED_FUNCTIONS:  # ufuncs that are not elementwise, such as np.matmul
        return HANDLED_FUNCTIONS[ufunc](*inputs, **kwargs)
    if ufunc is np.absolute and np.iscomplexobj(inputs[0]):
        return cabs(inputs[0])  # |z| of a complex value
    prim = of_numpy(ufunc)
    if prim is None or prim.kind != "elementwise":
        special = lookup(ufunc)
        if special is not None:
            return special(*inputs)
        if scipy_name(ufunc) is not None:
            name = f"scipy.special.{ufunc.__name__}"
            raise UnsupportedFunctionError(
                f"{name} is not supported on traced values (at {user_location()}); the "
                f"scipy.special functions symgrad differentiates are {supported()}. "
                "Compute it with sg.pure_callback(..., vjp=...) and give its derivative, "
                "or write it with numpy functions")
        raise UnsupportedFunctionError(
            f"{name} is not supported on traced values (at {user_location()}); "
            "symgrad.ops.supported_functions() lists what is")
    return call(prim, *inputs)


def array_function(func: Callable, args: Any, kwargs: Any) -> Any:
    """``__array_function__``: a public numpy function on traced operands."""
    impl = HANDLED_FUNCTIONS.get(func)
    if impl is None:
        raise UnsupportedFunctionError(
            f"np.{qualname(func)} is not supported on traced values (at {user_location()}); "
            "symgrad.ops.supported_functions() lists what is")
    # a traced integer (an int argument, a loop counter) enters numpy's functions as a float
    integer = _integer_result(func, args, kwargs)
    held = _held_integer_product(func, args, kwargs)
    if held is not None:
        return held
    if any(_is_integer(a) or isinstance(a, (list, tuple)) for a in args):
        args = _integers_as_floats(func, args)
    result = impl(*args, **kwargs)
    if integer and isinstance(result, Tracer) and result.dtype == np.float64:
        return to_int(result)  # exact: the conversion of the integers refused larger sums
    if _bool_product(func, args, kwargs) and isinstance(result, Tracer):
        return result != 0  # numpy's products of bools: or of ands (the counts, before)
    return result


#: numpy functions whose result on bools only is a bool: sums of products, as logical or
#: of logical and (``mask @ mask`` is True where symgrad's float product counts 2)
_BOOL_PRODUCTS = frozenset({"matmul", "dot", "inner", "vdot", "outer", "tensordot", "einsum",
                            "kron", "linalg.multi_dot", "convolve", "correlate"})


def _bool_product(func: Callable, args: Sequence[Any], kwargs: dict) -> bool:
    if qualname(func) not in _BOOL_PRODUCTS or kwargs.get("dtype") is not None:
        return False
    operands = [a for arg in args for a in (arg if isinstance(arg, (list, tuple)) else (arg,))
                if isinstance(a, (Traced, np.ndarray, np.generic, bool))]
    return bool(operands) and all(getattr(a, "dtype", np.bool_) == np.bool_ for a in operands)


#: numpy functions whose result on int64 values is int64 (symgrad computes it in float64),
#: and where the function has one, the position of their ``dtype`` argument
_INTEGER_SUMS = {"sum": 2, "nansum": 2, "cumsum": 2, "nancumsum": 2, "cumulative_sum": 2,
                 "prod": 2, "nanprod": 2, "cumprod": 2, "nancumprod": 2, "trace": 4}
_INTEGER_RESULTS = {**_INTEGER_SUMS, "diff": None, "ediff1d": None, "max": None, "amax": None,
                    "min": None, "amin": None, "nanmax": None, "nanmin": None, "ptp": None}


def _integer_result(func: Callable, args: Sequence[Any], kwargs: dict) -> bool:
    """Whether numpy's result is int64 where symgrad computes float64: sums, products
    and extrema of traced int64 values, and sums and products of bools (numpy sums bools
    as int64; their extrema are bools), without a ``dtype=`` (float64, the only one
    allowed, which numpy then returns)."""
    name = qualname(func)
    if name == "where" and len(args) == 3:  # np.where(c, u, -u) of integers (and bools)
        return any(map(_is_integer, args[1:])) and kind(args[1]) + kind(args[2]) in (
            "ii", "ib", "bi")
    if name not in _INTEGER_RESULTS or not args or not isinstance(args[0], Tracer):
        return False
    if not (args[0].dtype == np.int64 or args[0].dtype == np.bool_ and name in _INTEGER_SUMS):
        return False
    at = _INTEGER_RESULTS[name]
    return kwargs.get("dtype", args[at] if at is not None and len(args) > at else None) is None


def _is_integer(x: Any) -> bool:
    return isinstance(x, Traced) and x.dtype == np.int64


#: numpy functions whose result on integers is a float: numpy rounds int64 too
_FLOAT_RESULT = frozenset({
    "mean", "average", "std", "var", "median", "percentile", "quantile", "nanmean",
    "nanstd", "nanvar", "nanmedian", "nanpercentile", "nanquantile", "gradient", "interp",
    "trapezoid", "trapz", "cov", "corrcoef", "linspace", "logspace", "geomspace", "hypot"})
#: numpy functions that sum integers: exact in float64 where the sum of magnitudes is
_SUMS = frozenset({"sum", "nansum", "cumsum", "nancumsum", "trace", "diff", "ediff1d",
                   "cumulative_sum"})
#: numpy functions that multiply integers: float64 cannot follow them exactly
_PRODUCTS = frozenset({"prod", "nanprod", "cumprod", "nancumprod", "cumulative_prod", "dot",
                       "vdot", "inner", "outer", "matmul", "tensordot", "einsum", "kron",
                       "cross", "convolve", "correlate", "polyval", "linalg.multi_dot",
                       "linalg.matrix_power"})


def _held_integer_product(func: Callable, args: Sequence[Any], kwargs: Any) -> Any:
    """A product of integer Tensors (``m @ m`` of int64 ones), whose numbers are held now
    (no traced value among the operands): numpy's exact integer result, as PyTorch's
    (a traced one is refused below: symgrad computes it in float64, which rounds);
    None for anything else."""
    if qualname(func) not in _PRODUCTS:
        return None
    flat = [a for x in args for a in (x if isinstance(x, (list, tuple)) else (x,))]
    held = [a for a in flat if isinstance(a, Traced)]
    if not held or any(isinstance(a, Tracer) or a._held_value().dtype.kind not in "iu"
                       for a in held) or any(isinstance(v, Traced) for v in kwargs.values()):
        return None

    def value(a: Any) -> Any:
        if isinstance(a, (list, tuple)):
            return type(a)(map(value, a))
        return a._held_value() if isinstance(a, Traced) else a
    return type(held[0])._holding(np.asarray(func(*map(value, args), **kwargs)))


def _integers_as_floats(func: Callable, args: Sequence[Any]) -> list[Any]:
    """Traced int64 operands as float64, which symgrad computes in. Where numpy's result
    is an integer, exact in int64, that conversion refuses what float64 would round
    (values above 2**53, for sums a sum of magnitudes above it); products of integers,
    with no such bound on an operand, are refused here."""
    name = qualname(func)
    if name in _FLOAT_RESULT or name.startswith("linalg.") and name not in _PRODUCTS:
        return [as_float(a) if _is_integer(a) else a for a in args]
    if name in _PRODUCTS and sum(map(_is_integer, args)) >= 2 - (name in _ONE_OPERAND):
        raise TypeError(
            f"np.{name} of traced int64 arrays (at {user_location()}): numpy computes it "
            "in int64, symgrad in float64, which rounds products above 2**53; convert the "
            "integers to float first (x.astype(np.float64)) to accept that")
    total = name in _SUMS

    def convert(a: Any) -> Any:
        if isinstance(a, (list, tuple)):  # np.concatenate([a, b]), np.stack
            return type(a)(map(convert, a))
        return as_float(a, f"np.{name}", total) if _is_integer(a) else a
    if name == "take_along_axis":  # its indices stay integers (positions.py)
        return [convert(args[0]), *args[1:]]
    return [convert(a) for a in args]


_ONE_OPERAND = frozenset({"prod", "nanprod", "cumprod", "nancumprod", "cumulative_prod",
                          "linalg.matrix_power"})


def float_dtype(dtype: Any) -> bool:
    return dtype is None or np.dtype(dtype) == np.float64


def in_dtype(dtype: Any, x: Any) -> Any:
    """``x`` as numpy computes it for ``dtype=`` (None or float64, :func:`float_dtype`):
    a float32 value with ``dtype=np.float64`` converted first, since numpy computes
    (accumulates, for a sum) and returns float64 then; anything else as it is."""
    if dtype is None or getattr(x, "dtype", None) != np.float32:
        return x
    return convert(x, "float64")


def refuse_kwargs(name: str, kwargs: dict, allowed: dict[str, Callable[[Any], bool]]) -> None:
    """Raise for keyword arguments symgrad does not implement, with what to do instead."""
    for key, value in kwargs.items():
        if key == "out" and (value is None or (isinstance(value, tuple)  # ufuncs: a tuple
                                               and all(v is None for v in value))):
            continue
        check = allowed.get(key)
        if check is not None and check(value):
            continue
        hint = {"out": "symgrad functions are pure: return the result instead of writing to out=",
                "where": "mask explicitly with np.where(cond, x, fill) before reducing",
                "dtype": "symgrad computes in float64",
                }.get(key, "this argument is not supported")
        raise UnsupportedFunctionError(
            f"{name}(..., {key}={value!r}) on a traced value (at {user_location()}): {hint}")


def normalize_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """numpy's ``axis=`` (None, int or tuple, negatives allowed) as sorted axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in axes:
        if isinstance(a, (bool, np.bool_)):
            raise TypeError(f"axis must be an integer, not {a!r}")
        a = operator.index(a)
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(a, ndim)
        out.append(a % ndim if ndim else a)
    if len(set(out)) != len(out):
        raise ValueError(f"duplicate value in 'axis': {axis!r}")
    return tuple(sorted(out))
