"""numpy's API on traced values: argument normalization in front of the primitives.

Every function here takes tracers, numpy arrays and Python scalars alike. When
no argument is traced it simply computes with numpy, so ``symgrad.where`` also
works on plain arrays. ``HANDLED_FUNCTIONS`` maps public numpy functions to
these implementations for ``__array_function__``; ufuncs map to primitives by
their ``numpy`` facet.

    >>> import numpy as np, symgrad as sg
    >>> sg.where(np.array([1.0, -1.0]) > 0, 1.0, 0.0)
    array([1., 0.])
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from . import primitives as P
from .errors import ShapeError, UnsupportedFunctionError, user_location
from .ir import Primitive
from .trace import Tracer, _qualname, as_constant_array, find_trace

HANDLED_FUNCTIONS: dict[Callable, Callable] = {}

#: ufuncs that trace to an elementwise primitive
UFUNCS: dict[np.ufunc, Primitive] = {
    p.numpy: p for p in P.REGISTRY.values() if isinstance(p.numpy, np.ufunc)}


F = TypeVar("F", bound=Callable)


def implements(*numpy_functions: Callable) -> Callable[[F], F]:
    """Register the decorated function as the traced version of ``numpy_functions``."""
    def decorate(fn: F) -> F:
        for f in numpy_functions:
            HANDLED_FUNCTIONS[f] = fn
        return fn
    return decorate


def supported_functions() -> list[str]:
    """Names of the numpy functions and ufuncs symgrad can trace."""
    names = {f"np.{_qualname(f)}" for f in HANDLED_FUNCTIONS}
    names |= {f"np.{u.__name__}" for u in UFUNCS}
    return sorted(names)


def apply(prim: Primitive, *args: Any, **params: Any) -> Any:
    """``prim(*args, **params)``: recorded while tracing, computed with numpy otherwise."""
    trace = find_trace(args)
    if trace is None:
        with np.errstate(all="ignore"):
            return prim.impl(*(as_constant_array(a) for a in args), **params)
    return trace.apply(prim, args, params)


def _dtype(x: Any) -> np.dtype:
    return x.dtype if isinstance(x, Tracer) else as_constant_array(x).dtype


def as_float(x: Any) -> Any:
    """Booleans enter arithmetic as 0.0/1.0, as numpy promotes them."""
    if _dtype(x) != np.bool_:
        return x
    if isinstance(x, Tracer):
        return apply(P.where_p, x, 1.0, 0.0)
    return as_constant_array(x).astype(np.float64)


def as_bool(x: Any) -> Any:
    """A condition: booleans as they are, numbers compared with 0 (numpy's truth)."""
    return x if _dtype(x) == np.bool_ else apply(P.ne_p, as_float(x), 0.0)


def _elementwise(prim: Primitive) -> Callable:
    def fn(*args: Any) -> Any:
        return apply(prim, *map(as_float, args))
    fn.__name__ = prim.name
    fn.__doc__ = f"Elementwise ``{prim.name}`` with numpy broadcasting (traces to one equation)."
    return fn


add = _elementwise(P.add_p)
subtract = _elementwise(P.sub_p)
multiply = _elementwise(P.mul_p)
divide = _elementwise(P.div_p)
power = _elementwise(P.pow_p)
negative = _elementwise(P.neg_p)
absolute = _elementwise(P.abs_p)
greater = _elementwise(P.gt_p)
greater_equal = _elementwise(P.ge_p)
less = _elementwise(P.lt_p)
less_equal = _elementwise(P.le_p)
equal = _elementwise(P.eq_p)
not_equal = _elementwise(P.ne_p)
exp = _elementwise(P.exp_p)
log = _elementwise(P.log_p)

def apply_ufunc(ufunc: np.ufunc, method: str, inputs: Sequence[Any], kwargs: dict) -> Any:
    """``__array_ufunc__``: a ufunc call on traced operands."""
    name = f"np.{ufunc.__name__}"
    if method != "__call__":
        raise UnsupportedFunctionError(
            f"{name}.{method} on a traced value (at {user_location()}) is not supported; "
            "use the numpy function instead (np.sum for np.add.reduce, ...)")
    _refuse_kwargs(name, kwargs, allowed={"dtype": _float_dtype})
    if ufunc is np.positive:
        return inputs[0]
    if ufunc in HANDLED_FUNCTIONS:  # ufuncs that are not elementwise, such as np.matmul
        return HANDLED_FUNCTIONS[ufunc](*inputs, **kwargs)
    prim = UFUNCS.get(ufunc)
    if prim is None:
        raise UnsupportedFunctionError(
            f"{name} is not supported on traced values (at {user_location()}); "
            "symgrad.ops.supported_functions() lists what is")
    return _elementwise(prim)(*inputs)


def _float_dtype(dtype: Any) -> bool:
    return dtype is None or np.dtype(dtype) == np.float64


def _refuse_kwargs(name: str, kwargs: dict, allowed: dict[str, Callable[[Any], bool]]) -> None:
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


# ---------------------------------------------------------------------------
# selection


@implements(np.where)
def where(condition: Any, x: Any = None, y: Any = None) -> Any:
    """Elementwise ``x if condition else y`` with broadcasting, differentiable in x and y.

    The operand that is not selected contributes exactly 0 to the gradient,
    even where its own derivative is nan or inf (the adjoint masks it, see
    :mod:`symgrad.adjoint`):

        >>> import numpy as np, symgrad as sg
        >>> sg.grad(lambda x: np.sum(sg.where(x > 1, x * x, 0.0)))(np.array([0.5, 3.0]))
        array([0., 6.])
        >>> sg.grad(lambda x: np.sum(sg.where(x > 0, np.sqrt(x), 0.0)))(np.array([-1.0, 4.0]))
        array([0.  , 0.25])
    """
    if x is None or y is None:
        raise UnsupportedFunctionError(
            "np.where(condition) with one argument returns indices, which symgrad cannot "
            "trace; pass np.where(condition, x, y)")
    return apply(P.where_p, as_bool(condition), as_float(x), as_float(y))


# ---------------------------------------------------------------------------
# numerically stable functions (top level: sg.sigmoid, ...)


def relu(x: Any) -> Any:
    """``max(x, 0)`` elementwise, with ``relu'(0) = 0`` (PyTorch's convention).

        >>> import numpy as np, symgrad as sg
        >>> sg.grad(lambda x: np.sum(sg.relu(x)))(np.array([-1.0, 0.0, 2.0]))
        array([0., 0., 1.])
    """
    return apply(P.relu_p, as_float(x))


def sigmoid(x: Any) -> Any:
    """The logistic function ``1 / (1 + exp(-x))``, without overflow for any ``x``.

        >>> import numpy as np, symgrad as sg
        >>> [float(v) for v in sg.value_and_grad(sg.sigmoid)(-800.0)]
        [0.0, 0.0]
    """
    return apply(P.sigmoid_p, as_float(x))


def softplus(x: Any) -> Any:
    """``log(1 + exp(x))`` without overflow; its derivative is ``sigmoid(x)``.

        >>> import numpy as np, symgrad as sg
        >>> [float(v) for v in sg.value_and_grad(sg.softplus)(800.0)]
        [800.0, 1.0]
    """
    return apply(P.softplus_p, as_float(x))


def xlogy(x: Any, y: Any) -> Any:
    """``x * log(y)``, and 0 where ``x == 0`` (unless ``y`` is nan), as scipy.special.xlogy.

    Where ``x == 0`` both partial derivatives are 0 (PyTorch's convention).

        >>> import numpy as np, symgrad as sg
        >>> [float(v) for v in sg.grad(sg.xlogy, argnums=(0, 1))(0.0, 0.0)]
        [0.0, 0.0]
    """
    return apply(P.xlogy_p, as_float(x), as_float(y))


def logsumexp(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``log(sum(exp(x), axis))`` computed after shifting by the maximum.

    ``-inf`` entries contribute 0 to the value and get gradient 0. A group whose
    maximum is infinite has that maximum as its value (all ``-inf``: ``-inf``;
    any ``+inf``: ``+inf``) and its tied infinite maxima share the gradient,
    1/k each, as a max does; a nan anywhere in a group makes it nan.

        >>> import numpy as np, symgrad as sg
        >>> float(sg.logsumexp(np.array([1000.0, 1000.0])))
        1000.6931471805599
    """
    x = as_float(x)
    top = max(x, axis=axis, keepdims=True)
    finite = less(absolute(top), np.inf)
    shift = where(finite, top, 0.0)
    total = log(sum(exp(subtract(x, shift)), axis=axis, keepdims=True))
    # the unselected branch never leaks: where's adjoint masks it (see symgrad.adjoint)
    result = where(finite, add(total, shift), top)
    if keepdims:
        return result
    return reshape(result, tuple(d for i, d in enumerate(_shape_of(x))
                                 if i not in normalize_axes(axis, len(_shape_of(x)))))


def log_softmax(x: Any, axis: Any = -1) -> Any:
    """``x - logsumexp(x, axis, keepdims=True)``: log-probabilities that never overflow."""
    x = as_float(x)
    return subtract(x, logsumexp(x, axis=axis, keepdims=True))


def softmax(x: Any, axis: Any = -1) -> Any:
    """``exp(log_softmax(x, axis))``: probabilities along ``axis``, summing to 1.

        >>> import numpy as np, symgrad as sg
        >>> sg.softmax(np.array([0.0, np.log(3.0)]))
        array([0.25, 0.75])
    """
    return exp(log_softmax(x, axis=axis))


@implements(np.clip)
def clip(a: Any, a_min: Any = None, a_max: Any = None, out: Any = None, **kwargs: Any) -> Any:
    """``np.clip``: the gradient in ``a`` is 1 on the closed interval ``[a_min, a_max]``,
    boundaries included (PyTorch's clamp), and 0 outside, where ``a_min`` (below) or
    ``a_max`` (above) gets it instead. ``a_min > a_max`` gives ``a_max``, as numpy.

        >>> import numpy as np, symgrad as sg
        >>> sg.grad(lambda x: np.sum(np.clip(x, 0.0, 1.0)))(np.array([-1.0, 0.0, 0.5, 1.0, 2.0]))
        array([0., 1., 1., 1., 0.])
    """
    kwargs = {k: v for k, v in kwargs.items() if not (k in ("min", "max") and v is None)}
    a_min = kwargs.pop("min", a_min)
    a_max = kwargs.pop("max", a_max)
    _refuse_kwargs("np.clip", {"out": out, **kwargs}, allowed={})
    result = as_float(a)
    if a_min is not None:
        result = where(less(result, a_min), a_min, result)
    if a_max is not None:
        result = where(greater(result, a_max), a_max, result)
    return result


# ---------------------------------------------------------------------------
# reductions


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


def _reduction(prim: Primitive, numpy_name: str) -> Callable:
    def fn(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
           keepdims: bool = False, **kwargs: Any) -> Any:
        _refuse_kwargs(numpy_name, {"dtype": dtype, "out": out, **kwargs},
                       allowed={"dtype": _float_dtype})
        a = as_float(a)
        shape = _shape_of(a)
        axes = normalize_axes(axis, len(shape))
        result = apply(prim, a, axes=axes)
        if keepdims:
            result = reshape(result, tuple(1 if i in axes else d for i, d in enumerate(shape)))
        return result
    fn.__name__ = numpy_name.removeprefix("np.")
    return fn


sum = implements(np.sum)(_reduction(P.sum_p, "np.sum"))
mean = implements(np.mean)(_reduction(P.mean_p, "np.mean"))
prod = implements(np.prod)(_reduction(P.prod_p, "np.prod"))
_max = _reduction(P.max_p, "np.max")
_min = _reduction(P.min_p, "np.min")


def extremum_weights(x: Any, axes: tuple[int, ...], largest: bool) -> Any:
    """The share of a max (``largest``) or min reduction's cotangent each element of
    ``x`` gets: 1/k for each of k tied extrema, 0 for the others."""
    return apply(P.extremum_weights_p, x, axes=axes, largest=largest)


def _record_weights(a: Any, axis: Any, largest: bool) -> None:
    # recorded in the forward pass for the VJP to reuse (see primitives._extremum_vjp);
    # dead, and dropped by DCE, when nothing differentiates the result
    if isinstance(a, Tracer):
        extremum_weights(a, normalize_axes(axis, a.ndim), largest)


@implements(np.max, np.amax)
def max(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, **kwargs: Any) -> Any:
    result = _max(a, axis, None, out, keepdims, **kwargs)
    _record_weights(a, axis, largest=True)
    return result


@implements(np.min, np.amin)
def min(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, **kwargs: Any) -> Any:
    result = _min(a, axis, None, out, keepdims, **kwargs)
    _record_weights(a, axis, largest=False)
    return result


def _variance(name: str, a: Any, axis: Any, dtype: Any, out: Any, ddof: Any,
              keepdims: bool, kwargs: dict) -> Any:
    # numpy's formula: sum((a - mean(a))**2) / (n - ddof), the mean kept for broadcasting
    _refuse_kwargs(name, {"dtype": dtype, "out": out, **kwargs}, allowed={"dtype": _float_dtype})
    a = as_float(a)
    axes = normalize_axes(axis, len(_shape_of(a)))
    centered = subtract(a, mean(a, axis, keepdims=True))
    return divide(sum(apply(P.square_p, centered), axis, keepdims=keepdims),
                  apply(P.maximum_p, subtract(count(a, axes), float(ddof)), 0.0))


@implements(np.var)
def var(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
        keepdims: bool = False, **kwargs: Any) -> Any:
    """``np.var``: ``sum((a - mean(a))**2) / (n - ddof)`` over ``axis``."""
    return _variance("np.var", a, axis, dtype, out, ddof, keepdims, kwargs)


@implements(np.std)
def std(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
        keepdims: bool = False, **kwargs: Any) -> Any:
    """``np.std``: the square root of :func:`var`; its gradient is nan where all the
    values are equal (``sqrt'(0) = inf`` times 0), as in PyTorch.

        >>> import numpy as np, symgrad as sg
        >>> sg.grad(lambda x: np.std(x))(np.array([1.0, 3.0]))
        array([-0.5,  0.5])
    """
    return apply(P.sqrt_p, _variance("np.std", a, axis, dtype, out, ddof, keepdims, kwargs))


@implements(np.round, np.around)
def round(a: Any, decimals: int = 0, out: Any = None) -> Any:
    """``np.round`` (half to even), computed as numpy does: ``rint(a * 10**decimals) /
    10**decimals`` (for negative ``decimals``, divided first); the gradient is 0."""
    _refuse_kwargs("np.round", {"out": out}, allowed={})
    a, decimals = as_float(a), operator.index(decimals)
    if decimals == 0:
        return apply(P.rint_p, a)
    if decimals > 0:
        factor = 10.0 ** decimals
        return divide(apply(P.rint_p, multiply(a, factor)), factor)
    factor = 10.0 ** -decimals
    return multiply(apply(P.rint_p, divide(a, factor)), factor)


# ---------------------------------------------------------------------------
# shapes


def _shape_of(x: Any) -> tuple[int, ...]:
    return x.shape if isinstance(x, Tracer) else np.shape(x)


def _shape_arg(shape: Any) -> tuple[int, ...]:
    shape = shape if isinstance(shape, (tuple, list)) else (shape,)
    return tuple(operator.index(d) for d in shape)


@implements(np.reshape)
def reshape(a: Any, shape: Any = None, order: str = "C", **kwargs: Any) -> Any:
    """``np.reshape`` in C order, with one ``-1`` inferred."""
    if shape is None:
        shape = kwargs.pop("newshape", None)
    _refuse_kwargs("np.reshape", kwargs, allowed={})
    if order != "C":
        raise UnsupportedFunctionError(f"np.reshape(..., order={order!r}): only order='C' is "
                                       "supported; transpose explicitly first")
    old = _shape_of(a)
    new = list(_shape_arg(shape))
    if new.count(-1) > 1:
        raise ShapeError(f"reshape: can only infer one dimension of {tuple(new)}")
    if -1 in new:
        known = math.prod(d for d in new if d != -1)
        if known == 0 or math.prod(old) % known:
            raise ShapeError(f"reshape: cannot reshape {old} into {tuple(new)}")
        new[new.index(-1)] = math.prod(old) // known
    new_shape = tuple(new)
    if new_shape == tuple(old):
        return a
    return apply(P.reshape_p, a, shape=new_shape)


@implements(np.ravel)
def ravel(a: Any, order: str = "C") -> Any:
    return reshape(a, (-1,), order=order)


@implements(np.transpose)
def transpose(a: Any, axes: Any = None) -> Any:
    """``np.transpose``: reverse the axes, or permute them as ``axes`` says."""
    ndim = len(_shape_of(a))
    if axes is None:
        perm = tuple(reversed(range(ndim)))
    else:
        perm = tuple(operator.index(p) % ndim if ndim else operator.index(p) for p in axes)
    if perm == tuple(range(ndim)):
        return a
    return apply(P.transpose_p, a, perm=perm)


@implements(np.broadcast_to)
def broadcast_to(array: Any, shape: Any, subok: bool = False) -> Any:
    shape = _shape_arg(shape)
    if _shape_of(array) == shape:
        return array
    return apply(P.broadcast_to_p, array, shape=shape)


def astype(x: Any, dtype: Any) -> Any:
    """Only float64 is supported: bools become 0.0/1.0, floats stay as they are."""
    if np.dtype(dtype) != np.float64:
        raise UnsupportedFunctionError(
            f".astype({np.dtype(dtype).name}) on a traced value (at {user_location()}): "
            "symgrad computes in float64")
    return as_float(x)


def count(x: Any, axes: tuple[int, ...]) -> Any:
    """How many elements of ``x`` a reduction over ``axes`` combines, as a float value
    of the program (not a literal), so that kernels do not depend on the length."""
    return apply(P.count_p, x, axes=tuple(axes))


def unbroadcast(g: Any, shape: tuple[int, ...]) -> Any:
    """Sum ``g`` over the axes numpy broadcasting added to reach ``shape``.

    The adjoint of broadcasting: a value used at shape ``g.shape`` receives the
    sum of the cotangents of all the places it was copied to.
    """
    gshape = _shape_of(g)
    shape = tuple(shape)
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    if lead < 0 or any(d != 1 and d != gd for d, gd in zip(shape, gshape[lead:])):
        return broadcast_to(g, shape)  # a scalar cotangent of a value that was not broadcast
    axes = tuple(range(lead)) + tuple(
        lead + i for i, d in enumerate(shape) if d == 1 and gshape[lead + i] != 1)
    return reshape(sum(g, axis=axes), shape)


# numpy function families in modules of their own register their primitives
# and numpy functions on import; they need the functions above
from . import array as _array_family  # noqa: E402,F401
from . import linalg  # noqa: E402, F401
