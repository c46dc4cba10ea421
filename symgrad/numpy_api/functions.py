"""numpy's functions on traced values: selection, stable functions, reductions, shapes.

Argument normalization in front of the primitives. Every function here takes
tracers, numpy arrays and Python scalars alike. When no argument is traced it
simply computes with numpy, so ``symgrad.where`` also works on plain arrays.

    >>> import numpy as np, symgrad as sg
    >>> sg.where(np.array([1.0, -1.0]) > 0, 1.0, 0.0)
    array([1., 0.])
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.errors import ShapeError, UnsupportedFunctionError, user_location
from ..core.ir import Primitive
from ..core.tracing import Traced, Tracer, apply, shape_of
from ..prims import elementwise as E
from ..prims import reductions as R
from ..prims.complex import imag, make_complex, real
from ..prims.convert import convert
from ..prims.elementwise import as_float
from ..prims.integers import logical_or
from ..prims.norms import norm2
from ..prims.special import remainder
from . import complex_order
from .dispatch import float_dtype, implements, in_dtype, normalize_axes, refuse_kwargs

add, subtract, multiply, divide, power = E.add, E.sub, E.mul, E.div, E.power
negative, absolute, exp, log = E.neg, E.absolute, E.exp, E.log
greater, greater_equal, less, less_equal = E.greater, E.greater_equal, E.less, E.less_equal
equal, not_equal = E.equal, E.not_equal


# ---------------------------------------------------------------------------
# selection


@implements(np.where)
def where(condition: Any, x: Any = None, y: Any = None) -> Any:
    """Elementwise ``x if condition else y`` with broadcasting, differentiable in x and y.

    The operand that is not selected contributes exactly 0 to the gradient,
    even where its own derivative is nan or inf (the adjoint masks it, see
    :mod:`symgrad.passes.adjoint`):

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
    chosen = E.where(condition, x, y)
    if all(type(a) is bool or getattr(a, "dtype", None) == np.bool_ for a in (x, y)):
        return chosen != 0  # a choice between bools is a bool (computed as 0.0 and 1.0)
    return chosen


# ---------------------------------------------------------------------------
# numerically stable functions (top level: sg.sigmoid, ...)


def relu(x: Any) -> Any:
    """``max(x, 0)`` elementwise, with ``relu'(0) = 0`` (PyTorch's convention).

        >>> import numpy as np, symgrad as sg
        >>> sg.grad(lambda x: np.sum(sg.relu(x)))(np.array([-1.0, 0.0, 2.0]))
        array([0., 0., 1.])
    """
    return E.relu(x)


def sigmoid(x: Any) -> Any:
    """The logistic function ``1 / (1 + exp(-x))``, without overflow for any ``x``.

        >>> import numpy as np, symgrad as sg
        >>> [float(v) for v in sg.value_and_grad(sg.sigmoid)(-800.0)]
        [0.0, 0.0]
    """
    return E.sigmoid(x)


def softplus(x: Any) -> Any:
    """``log(1 + exp(x))`` without overflow; its derivative is ``sigmoid(x)``.

        >>> import numpy as np, symgrad as sg
        >>> [float(v) for v in sg.value_and_grad(sg.softplus)(800.0)]
        [800.0, 1.0]
    """
    return E.softplus(x)


def xlogy(x: Any, y: Any) -> Any:
    """``x * log(y)``, and 0 where ``x == 0`` (unless ``y`` is nan), as scipy.special.xlogy.

    Where ``x == 0`` and ``y <= 0`` both partial derivatives are 0 (PyTorch's
    convention); where ``y > 0`` the function is smooth, also at ``x == 0``, and its
    derivatives are ``log(y)`` and ``x / y``, as PyTorch's.

        >>> import numpy as np, symgrad as sg
        >>> [float(v) for v in sg.grad(sg.xlogy, argnums=(0, 1))(0.0, 0.0)]
        [0.0, 0.0]
        >>> [float(round(v, 6)) for v in sg.grad(sg.xlogy, argnums=(0, 1))(0.0, 2.0)]
        [0.693147, 0.0]
    """
    return E.xlogy(x, y)


def _known_finite(top: Any) -> bool:
    """Whether ``top`` has values now (an array or an eager Tensor, not a Tracer) and
    every one is finite (both parts of a complex one)."""
    if isinstance(top, Tracer):
        return False
    value = top._value if isinstance(top, Traced) else top
    return isinstance(value, np.ndarray) and bool(np.isfinite(value).all())


def _shifted(x: Any, axis: Any) -> tuple[Any, Any, Any]:
    """The maximum along ``axis`` (kept), whether it is finite, and ``x - max`` (``x`` where
    the maximum is infinite, which is then the result itself). Where every maximum is
    known finite now (eager values), ``finite`` is None and ``x - max`` needs no mask:
    three operations fewer per eager call, the same values and gradients (a ``where``
    whose mask is all true passes both through)."""
    top = max(x, axis=axis, keepdims=True)  # (numpy's order of complex values: scipy's)
    if _known_finite(top):
        return top, None, subtract(x, top)
    if complex_order.is_complex(x):  # both parts finite
        finite = less(E.maximum(absolute(real(top)), absolute(imag(top))), np.inf)
    else:
        finite = less(absolute(top), np.inf)
    return top, finite, subtract(x, where(finite, top, 0.0))


def _complex_logsumexp(x: Any, axis: Any) -> Any:
    """scipy's ``logsumexp`` of complex values (kept axes): shifted by the last element of
    largest real part ``m``, ``log1p`` of the others' ``sum(exp(x - m))``, plus ``m``, the
    imaginary part wrapped into (-pi, pi] (the principal log, as scipy's); where that is
    not finite (an infinite or nan entry), ``log(sum(exp(x)))`` itself, as scipy's."""
    re = real(x)
    first = equal(re, max(re, axis=axis, keepdims=True))
    index = np.arange(math.prod(shape_of(x)), dtype=np.float64).reshape(shape_of(x))
    ranked = where(first, index, -1.0)
    chosen = equal(ranked, max(ranked, axis=axis, keepdims=True))
    top = sum(where(chosen, x, 0.0), axis=axis, keepdims=True)
    others = sum(where(chosen, 0.0, exp(subtract(x, top))), axis=axis, keepdims=True)
    value = add(E.log1p(others), top)
    finite = less(E.maximum(absolute(real(value)), absolute(imag(value))), np.inf)
    value = where(finite, value, log(sum(exp(x), axis=axis, keepdims=True)))
    im = imag(value)
    wrapped = E.neg(E.sub(remainder(E.add(E.neg(im), math.pi), 2 * math.pi), math.pi))
    im = convert(where(less(absolute(im), math.pi), im, wrapped), x.dtype.name)
    return add(real(value), E.mul(im, 1j))  # (scipy's sum: a nan imaginary part's real too)


def _log_sum_exp(shifted: Any, axis: Any) -> Any:
    """``log(sum(exp(shifted)))`` along ``axis`` (kept), where the maxima of ``shifted`` are
    0 (or none is finite): ``log1p`` of the sum over the others, plus the ties less one,
    so that a group ruled by one value keeps what the others add (``logsumexp([0, -40])``
    is 4.2e-18, where ``log(1 + 4.2e-18)`` is 0). One loop: both sums fuse."""
    top = equal(shifted, 0.0)
    others = sum(where(top, 0.0, exp(shifted)), axis=axis, keepdims=True)
    # the count of the maxima as exp(0) = 1 each (the same bits): through exp their own
    # derivative reaches a second derivative, where a constant 1 would drop the curvature
    # of a tie (logsumexp's Hessian at [a, a] is [[1/4, -1/4], [-1/4, 1/4]], not 0)
    ties = sum(where(top, exp(shifted), 0.0), axis=axis, keepdims=True)
    return E.log1p(add(others, subtract(ties, 1.0)))


def logsumexp(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``log(sum(exp(x), axis))`` computed after shifting by the maximum.

    ``-inf`` entries contribute 0 to the value and get gradient 0. A group whose
    maximum is infinite has that maximum as its value (all ``-inf``: ``-inf``;
    any ``+inf``: ``+inf``) and its tied infinite maxima share the gradient,
    1/k each, as a max does; a nan anywhere in a group makes it nan.

        >>> import numpy as np, symgrad as sg
        >>> float(sg.logsumexp(np.array([1000.0, 1000.0])))
        1000.6931471805599
        >>> float(sg.logsumexp(np.array([0.0, -40.0])))
        4.248354255291589e-18
    """
    x = as_float(x)
    if complex_order.is_complex(x):
        result = _complex_logsumexp(x, axis)
    else:
        top, finite, shifted = _shifted(x, axis)
        if finite is None:  # every maximum finite
            result = add(_log_sum_exp(shifted, axis), top)
        else:
            total = add(_log_sum_exp(shifted, axis), where(finite, top, 0.0))
            # the unselected branch never leaks: where's adjoint masks it (symgrad.passes.adjoint)
            result = where(finite, total, top)
    if keepdims:
        return result
    return reshape(result, tuple(d for i, d in enumerate(shape_of(x))
                                 if i not in normalize_axes(axis, len(shape_of(x)))))


def log_softmax(x: Any, axis: Any = -1) -> Any:
    """Log-probabilities along ``axis`` that never overflow: ``(x - max) - log(sum(exp(x -
    max)))``, the log of the sum as in :func:`logsumexp`. Not ``x - logsumexp(x)``, which
    rounds to 0 where ``x`` is so large that ``x + log(2) == x``. (The gradient of the
    largest entry in itself is ``1 - p``, as in JAX and PyTorch: 0 where its probability
    ``p`` is within 1e-16 of 1, not the others' sum.)

        >>> import numpy as np, symgrad as sg
        >>> sg.log_softmax(np.array([1e16, 1e16]))
        array([-0.69314718, -0.69314718])
    """
    x = as_float(x)
    _, _, shifted = _shifted(x, axis)
    return subtract(shifted, _log_sum_exp(shifted, axis))


def softmax(x: Any, axis: Any = -1) -> Any:
    """Probabilities along ``axis``, summing to 1: ``exp(x - max) / sum(exp(x - max))``,
    each accurate in relative terms (``exp(log_softmax(x))`` would carry the absolute
    rounding of the log into the exponent: 256 ulp at ``exp(-700.69)``).

        >>> import numpy as np, symgrad as sg
        >>> sg.softmax(np.array([0.0, np.log(3.0)]))
        array([0.25, 0.75])
        >>> sg.softmax(np.array([1e16, 1e16]))
        array([0.5, 0.5])
    """
    x = as_float(x)
    _, _, shifted = _shifted(x, axis)
    e = exp(shifted)
    return divide(e, sum(e, axis=axis, keepdims=True))


@implements(np.clip)
def clip(a: Any, a_min: Any = None, a_max: Any = None, out: Any = None, **kwargs: Any) -> Any:
    """``np.clip``: the gradient in ``a`` is 1 on the closed interval ``[a_min, a_max]``,
    boundaries included (PyTorch's clamp), and 0 outside, where ``a_min`` (below) or
    ``a_max`` (above) gets it instead. ``a_min > a_max`` gives ``a_max``, as numpy; a nan
    anywhere (``a``, ``a_min`` or ``a_max``) gives nan, as numpy's
    ``minimum(maximum(a, a_min), a_max)`` (at a tie of zeros numpy returns the bound's
    sign of zero, symgrad ``a``'s, whose gradient it is).

        >>> import numpy as np, symgrad as sg
        >>> sg.grad(lambda x: np.sum(np.clip(x, 0.0, 1.0)))(np.array([-1.0, 0.0, 0.5, 1.0, 2.0]))
        array([0., 1., 1., 1., 0.])
    """
    kwargs = {k: v for k, v in kwargs.items() if not (k in ("min", "max") and v is None)}
    a_min = kwargs.pop("min", a_min)
    a_max = kwargs.pop("max", a_max)
    refuse_kwargs("np.clip", {"out": out, **kwargs}, allowed={})
    if any(map(np.iscomplexobj, (a, a_min, a_max))):  # numpy's order of complex values
        return complex_order.clip(a, a_min, a_max)
    result = as_float(a)
    if a_min is not None:  # (a nan bound is the result: it is not equal to itself)
        result = where(logical_or(less(result, a_min), not_equal(a_min, a_min)), a_min, result)
    if a_max is not None:
        result = where(logical_or(greater(result, a_max), not_equal(a_max, a_max)), a_max,
                       result)
    return result


# ---------------------------------------------------------------------------
# reductions


def _reduction(prim: Primitive, numpy_name: str) -> Callable:
    def fn(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
           keepdims: bool = False, **kwargs: Any) -> Any:
        refuse_kwargs(numpy_name, {"dtype": dtype, "out": out, **kwargs},
                      allowed={"dtype": float_dtype})
        a = in_dtype(dtype, as_float(a))
        shape = shape_of(a)
        axes = normalize_axes(axis, len(shape))
        result = apply(prim, a, axes=axes)
        if keepdims:
            result = reshape(result, tuple(1 if i in axes else d for i, d in enumerate(shape)))
        return result
    fn.__name__ = numpy_name.removeprefix("np.")
    return fn


sum = implements(np.sum)(_reduction(R.sum_p, "np.sum"))
mean = implements(np.mean)(_reduction(R.mean_p, "np.mean"))
prod = implements(np.prod)(_reduction(R.prod_p, "np.prod"))
_max = _reduction(R.max_p, "np.max")
_min = _reduction(R.min_p, "np.min")


def _is_bool(a: Any) -> bool:
    return isinstance(a, Tracer) and a.dtype == np.bool_


def _record_weights(a: Any, axis: Any, largest: bool) -> None:
    # recorded in the forward pass for the VJP to reuse (see prims.reductions._extremum_vjp);
    # dead, and dropped by DCE, when nothing differentiates the result. Not for an eager
    # Tensor: its backward lowers only what the result depends on, never these weights
    if isinstance(a, Tracer):
        R.extremum_weights(a, normalize_axes(axis, a.ndim), largest)


def _complex_extremum(a: Any, axis: Any, out: Any, keepdims: bool, kwargs: dict,
                      largest: bool) -> Any:
    """np.max / np.min of complex values, ordered as numpy orders them: by real part, then
    by imaginary part, and the first element with a nan part where there is one (numpy's
    ``maximum.reduce``), bit for bit. The gradient goes to the elements equal to the
    result, shared evenly among them (autograd's and JAX's rule; a part equal to -inf
    shares it with the elements not chosen)."""
    pick = _max if largest else _min
    re, im = np.real(a), np.imag(a)
    tied = np.equal(re, pick(re, axis, None, out, True, **kwargs))
    fill = -np.inf if largest else np.inf
    chosen = np.logical_and(tied, np.equal(im, pick(np.where(tied, im, fill), axis, keepdims=True)))
    # the first nan in C order (numpy reduces in it): the least flat position holding one
    position = np.arange(math.prod(shape_of(a)), dtype=np.float64).reshape(shape_of(a))
    first = _min(np.where(np.not_equal(a, a), position, np.inf), axis, keepdims=True)
    chosen = np.where(np.less(first, np.inf), np.equal(position, first), chosen)
    # each part: the largest among the chosen elements, whose parts are equal (but for
    # the sign of a zero: the first one's, as numpy's), so that the real reduction's
    # gradient goes to them, shared evenly at a tie of equal values
    re, im = (_max(np.where(chosen, part, -np.inf), axis, keepdims=keepdims)
              for part in (re, im))
    return make_complex(re, im)


@implements(np.max, np.amax)
def max(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, **kwargs: Any) -> Any:
    if np.iscomplexobj(a):
        return _complex_extremum(a, axis, out, keepdims, kwargs, largest=True)
    result = _max(a, axis, None, out, keepdims, **kwargs)
    if _is_bool(a):  # numpy's extremum of bools is a bool (no gradient)
        return not_equal(result, 0.0)
    _record_weights(a, axis, largest=True)
    return result


@implements(np.min, np.amin)
def min(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, **kwargs: Any) -> Any:
    if np.iscomplexobj(a):
        return _complex_extremum(a, axis, out, keepdims, kwargs, largest=False)
    result = _min(a, axis, None, out, keepdims, **kwargs)
    if _is_bool(a):  # numpy's extremum of bools is a bool (no gradient)
        return not_equal(result, 0.0)
    _record_weights(a, axis, largest=False)
    return result


def _variance(name: str, a: Any, axis: Any, dtype: Any, out: Any, ddof: Any,
              keepdims: bool, kwargs: dict) -> Any:
    # numpy's formula: sum((a - mean(a))**2) / (n - ddof), the mean kept for broadcasting
    refuse_kwargs(name, {"dtype": dtype, "out": out, **kwargs}, allowed={"dtype": float_dtype})
    a = in_dtype(dtype, as_float(a))
    axes = normalize_axes(axis, len(shape_of(a)))
    centered = subtract(a, mean(a, axis, keepdims=True))
    if np.iscomplexobj(a):  # numpy's var of complex values: the mean of |a - mean(a)|**2
        squares = E.add(E.square(np.real(centered)), E.square(np.imag(centered)))
    else:
        squares = E.square(centered)
    return divide(sum(squares, axis, keepdims=keepdims),
                  _count_as(a, E.maximum(subtract(R.count(a, axes), float(ddof)), 0.0)))


def _count_as(a: Any, n: Any) -> Any:
    """A count ``n`` (float64) in ``a``'s float dtype: numpy's var and std of float32
    values are float32."""
    return convert(n, "float32") if getattr(a, "dtype", None) in (np.float32, np.complex64) else n


@implements(np.var)
def var(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
        keepdims: bool = False, **kwargs: Any) -> Any:
    """``np.var``: ``sum((a - mean(a))**2) / (n - ddof)`` over ``axis``."""
    return _variance("np.var", a, axis, dtype, out, ddof, keepdims, kwargs)


@implements(np.std)
def std(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
        keepdims: bool = False, **kwargs: Any) -> Any:
    """``np.std``: ``norm(a - mean(a)) / sqrt(n - ddof)`` over ``axis``, the norm scaled as
    ``np.linalg.norm``'s (:mod:`symgrad.prims.norms`), so that neither tiny nor huge
    values lose it to squares that underflow or overflow. Where all the values are
    equal the centered values are 0, and the gradient is 0, as for a norm at 0
    (a convention, ``std_equal`` in :mod:`symgrad.core.conventions`; PyTorch gives nan).
    With no degrees of freedom (``n - ddof <= 0``) the value is numpy's nan, and so is
    the gradient (``sqrt(var)``: it was 0, the norm's, for a value that is not 0).

        >>> import numpy as np, symgrad as sg
        >>> sg.grad(lambda x: np.std(x))(np.array([1.0, 3.0]))
        array([-0.5,  0.5])
        >>> sg.grad(lambda x: np.std(x))(np.array([1e-170, 2e-170]))
        array([-0.5,  0.5])
        >>> float(sg.grad(np.std)(3.5))
        0.0
    """
    refuse_kwargs("np.std", {"dtype": dtype, "out": out, **kwargs}, allowed={"dtype": float_dtype})
    a = in_dtype(dtype, as_float(a))
    shape = shape_of(a)
    axes = normalize_axes(axis, len(shape))
    if all(isinstance(shape[i], int) for i in axes) and math.prod(
            shape[i] for i in axes) - ddof <= 0:  # no degrees of freedom: numpy's nan (or
        return E.sqrt(var(a, axis, ddof=ddof, keepdims=keepdims))  # inf), var's nan gradient
    centered = subtract(a, mean(a, axis, keepdims=True))
    dof = _count_as(a, E.maximum(subtract(R.count(a, axes), float(ddof)), 0.0))
    if np.iscomplexobj(a):  # numpy's (real) std of complex values: the norm of both parts
        centered = np.stack([np.real(centered), np.imag(centered)], axis=-1)
        axes = (*axes, len(shape))
    result = divide(norm2(centered, axes), E.sqrt(dof))
    if keepdims:
        result = reshape(result, tuple(1 if i in axes else d for i, d in enumerate(shape)))
    return result


@implements(np.round, np.around)
def round(a: Any, decimals: int = 0, out: Any = None) -> Any:
    """``np.round`` (half to even), computed as numpy does: ``rint(a * 10**decimals) /
    10**decimals`` (for negative ``decimals``, divided first); the gradient is 0."""
    refuse_kwargs("np.round", {"out": out}, allowed={})
    a, decimals = as_float(a), operator.index(decimals)
    if decimals == 0:
        return E.rint(a)  # (of a complex value: of each part, as numpy's)
    if np.iscomplexobj(a):  # numpy's: each part rounded
        return make_complex(round(real(a), decimals), round(imag(a), decimals))
    if decimals > 0:
        factor = 10.0 ** decimals
        return divide(E.rint(multiply(a, factor)), factor)
    factor = 10.0 ** -decimals
    return multiply(E.rint(divide(a, factor)), factor)


# ---------------------------------------------------------------------------
# shapes


def _shape_arg(shape: Any) -> tuple[int, ...]:
    shape = shape if isinstance(shape, (tuple, list)) else (shape,)
    return tuple(operator.index(d) for d in shape)


@implements(np.reshape)
def reshape(a: Any, shape: Any = None, order: str = "C", **kwargs: Any) -> Any:
    """``np.reshape`` in C order, with one ``-1`` inferred."""
    if shape is None:
        shape = kwargs.pop("newshape", None)
    refuse_kwargs("np.reshape", kwargs, allowed={})
    if order != "C":
        raise UnsupportedFunctionError(f"np.reshape(..., order={order!r}): only order='C' is "
                                       "supported; transpose explicitly first")
    old = tuple(shape_of(a))
    new_shape = reshaped(old, _shape_arg(shape))
    if new_shape == old:
        return a
    return apply(R.reshape_p, a, shape=new_shape)


def reshaped(old: tuple[int, ...], new: tuple[int, ...]) -> tuple[int, ...]:
    """The shape ``new`` (ints) with its one ``-1`` inferred from the shape ``old``."""
    if -1 not in new:
        return new
    if new.count(-1) > 1:
        raise ShapeError(f"reshape: can only infer one dimension of {new}")
    known = math.prod(d for d in new if d != -1)
    if known == 0 or math.prod(old) % known:
        raise ShapeError(f"reshape: cannot reshape {old} into {new}")
    k = new.index(-1)
    return (*new[:k], math.prod(old) // known, *new[k + 1:])


@implements(np.ravel)
def ravel(a: Any, order: str = "C") -> Any:
    return reshape(a, (-1,), order=order)


@implements(np.transpose)
def transpose(a: Any, axes: Any = None) -> Any:
    """``np.transpose``: reverse the axes, or permute them as ``axes`` says."""
    ndim = len(shape_of(a))
    if axes is None:
        perm = tuple(reversed(range(ndim)))
    else:
        perm = tuple(operator.index(p) % ndim if ndim else operator.index(p) for p in axes)
    if perm == tuple(range(ndim)):
        return a
    return apply(R.transpose_p, a, perm=perm)


@implements(np.broadcast_to)
def broadcast_to(array: Any, shape: Any, subok: bool = False) -> Any:
    shape = _shape_arg(shape)
    if shape_of(array) == shape:
        return array
    return apply(R.broadcast_to_p, array, shape=shape)


def astype(x: Any, dtype: Any) -> Any:
    """float64 or float32: bools become 0.0/1.0, floats are converted (``convert``); a
    real value as complex128 or complex64 (a complex one to a real dtype: use np.real)."""
    if np.dtype(dtype).kind == "c" and np.dtype(dtype) in (np.complex128, np.complex64):
        return convert(as_float(x), np.dtype(dtype).name)
    if np.iscomplexobj(x):
        raise UnsupportedFunctionError(
            f".astype({np.dtype(dtype).name}) of a complex traced value (at "
            f"{user_location()}) would drop the imaginary part: take np.real(z) instead")
    if np.dtype(dtype) not in (np.float64, np.float32):
        raise UnsupportedFunctionError(
            f".astype({np.dtype(dtype).name}) on a traced value (at {user_location()}): "
            "symgrad computes in float64 or float32")
    return convert(as_float(x), np.dtype(dtype).name)
