"""numpy's order statistics and running products on traced values: ``sort``,
``partition``, ``cumprod``, ``average``, ``ptp``.

``sort`` gathers through the stable sorting permutation (tied values take the
cotangent of the position the stable sort gives them); ``partition`` is a full
sort, which is one of the arrangements numpy allows (the order within the two
sides of the kth element is unspecified, and numpy's own differs);
``cumprod`` is exact where ``x`` has zeros (the gradient at the first zero of a
run is the product of the others); ``average`` is numpy's weighted mean;
``ptp`` is ``max - min``, with their tie rules. ``np.argsort``, ``np.argmax`` and
``np.argmin`` are :mod:`.positions`'; ``np.argpartition`` is refused.

    >>> import numpy as np, symgrad as sg
    >>> sg.grad(lambda x: np.sum(np.sort(x) * np.array([1.0, 2.0, 3.0])))(np.array([5.0, 1.0, 3.0]))
    array([3., 1., 2.])
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from ..core.errors import UnsupportedFunctionError, user_location
from ..core.tracing import Traced, shape_of
from ..prims import complex as CX
from ..prims import elementwise as E
from ..prims import sorting as P
from ..prims.elementwise import as_float
from . import complex_order
from .dispatch import float_dtype, implements, in_dtype, normalize_axes, refuse_kwargs
from .functions import max, mean, min, reshape, sum
from .shapes import cumsum, moveaxis


def _flat_or_axis(a: Any, axis: Any) -> tuple[Any, int]:
    a = as_float(a)
    if axis is None:
        return reshape(a, (-1,)), 0
    if not shape_of(a):
        raise np.exceptions.AxisError(axis, 0)
    return a, normalize_axes(axis, len(shape_of(a)))[0]


@implements(np.sort)
def sort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *,
         stable: Any = None) -> Any:
    """``np.sort`` along ``axis`` (``None``: of the flattened array)."""
    if order is not None:
        raise UnsupportedFunctionError("np.sort(..., order=...) sorts structured arrays, "
                                       "which symgrad does not trace")
    a, axis = _flat_or_axis(a, axis)
    last = moveaxis(a, axis, -1)
    sort = complex_order.order if np.iscomplexobj(a) else P.argsort
    return moveaxis(P.take_along(last, sort(last)), -1, axis)


@implements(np.partition)
def partition(a: Any, kth: Any, axis: Any = -1, kind: str = "introselect",
              order: Any = None) -> Any:
    """``np.partition`` as a full sort: every element at or before ``kth`` is at most
    the kth smallest and every one after at least, as numpy promises (the order
    within each side, which numpy leaves unspecified, is sorted here)."""
    a, ax = _flat_or_axis(a, axis)
    n = shape_of(a)[ax]
    for k in np.atleast_1d(kth):
        if not -n <= operator.index(k) < n:
            raise ValueError(f"kth(={k}) out of bounds ({n})")
    return sort(a, ax, order=order)


def _refuse_positions(name: str) -> Any:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise UnsupportedFunctionError(
            f"{name} of a traced value (at {user_location()}) returns integer positions that "
            "depend on the values; use np.argsort (a full sort, one of the arrangements "
            "numpy allows) instead")
    return refuse


implements(np.argpartition)(_refuse_positions("np.argpartition"))


@implements(np.cumprod)
def cumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    """``np.cumprod``, differentiable where ``a`` has zeros too.

    ``y = where(a == 0, 1, a)`` has no zeros, so ``cumprod(y)`` has a plain
    gradient. Up to the first zero the result is ``cumprod(y)``; from the first to
    the second zero it is ``a_z * cumprod(y)``, where ``a_z`` (0) is the first
    zero, whose gradient is then the product of the others; after the second zero
    ``a_z a_z2 * cumprod(y)`` and after the third ``a_z a_z2 a_z3 * cumprod(y)``
    (0 with the product's second and third derivatives); after more, 0 with zero
    derivatives up to the third (every one keeps a zero factor).
    """
    refuse_kwargs("np.cumprod", {"dtype": dtype, "out": out}, allowed={"dtype": float_dtype})
    a = in_dtype(dtype, as_float(a))
    if axis is None or not shape_of(a):
        a, axis = reshape(a, (-1,)), 0
    (axis,) = normalize_axes(axis, len(shape_of(a)))
    zero = E.equal(CX.cabs(a) if np.iscomplexobj(a) else a, 0.0)
    zeros = cumsum(E.where(zero, 1.0, 0.0), axis)  # how many zeros so far
    y = P.cumprod(E.where(zero, 1.0, a), axis)
    result = E.mul(y, 0.0)
    # after k zeros: a_1 ... a_k * cumprod(y), the a_i the zeros themselves (0), so that
    # the derivatives in them are the product's: up to k = 3, enough for third
    # derivatives (with more zeros every derivative up to the third is 0 there)
    factor = y
    for k in (1.0, 2.0, 3.0):
        kth = E.greater(E.where(zero, E.where(E.equal(zeros, k), 1.0, 0.0), 0.0), 0.0)
        factor = E.mul(sum(E.where(kth, a, 0.0), axis=axis, keepdims=True), factor)
        result = E.where(E.equal(zeros, k), factor, result)
    return E.where(E.equal(zeros, 0.0), y, result)


@implements(np.average)
def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *,
            keepdims: Any = np._NoValue) -> Any:
    """``np.average``: ``sum(a * w) / sum(w)`` over ``axis`` (``mean`` without weights);
    traced weights that sum to 0 give inf or nan where numpy raises."""
    a = as_float(a)
    keep = {} if keepdims is np._NoValue else {"keepdims": bool(keepdims)}
    shape = shape_of(a)
    if weights is None:
        avg = mean(a, axis=axis, **keep)
        scale = np.float64(math.prod(shape) / (math.prod(shape_of(avg)) or 1))
    else:
        w = as_float(weights)
        if shape_of(w) != shape:
            if axis is None:
                raise TypeError("Axis must be specified when shapes of a and weights differ.")
            axes = normalize_axes(axis, len(shape))
            if len(shape_of(w)) != len(axes):
                raise ValueError("Shape of weights must be consistent with shape of a along "
                                 "specified axis.")
            w = reshape(w, tuple(s if k in axes else 1 for k, s in enumerate(shape)))
        if isinstance(w, Traced):  # its sum is known only when the function runs
            scale = sum(w, axis=axis, **keep)
        else:
            scale = np.sum(w, axis=axis, **keep)
            if np.any(scale == 0.0):
                raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        avg = E.div(sum(E.mul(a, w), axis=axis, **keep), scale)
    if not returned:
        return avg
    if shape_of(scale) != shape_of(avg):
        scale = np.broadcast_to(scale, shape_of(avg))
    return avg, scale


@implements(np.ptp)
def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: Any = np._NoValue) -> Any:
    """``max - min`` over ``axis`` (ties of either share their gradient, 1/k each)."""
    refuse_kwargs("np.ptp", {"out": out}, allowed={})
    keep = False if keepdims is np._NoValue else bool(keepdims)
    return E.sub(max(a, axis=axis, keepdims=keep), min(a, axis=axis, keepdims=keep))
