"""numpy's array-making and array-shaping functions on traced values.

``zeros_like``/``ones_like``/``empty_like`` are constants, ``full_like`` a
broadcast of its fill value (traced or not); ``linspace`` with traced
endpoints follows numpy's formula (``start + arange(num) * step``, the last
point ``stop`` itself); ``np.ndim``, ``np.shape`` and ``np.size`` read the
shape; ``select`` is nested ``where``; ``rollaxis``, ``atleast_3d``,
``hsplit``/``vsplit``/``dsplit`` are shape functions; ``gradient`` is
numpy's finite-difference formula on slices.

:func:`array` (``sg.array``) builds an array from nested lists and tuples of
traced values and numbers, as ``np.array`` does for numbers.
``np.array([x, y])`` itself gives numpy's object array of traced elements
(:meth:`symgrad.numpy_api.traced_array.ArrayMethods.__array__`): arithmetic on it
works, and symgrad turns it back into one traced array (:func:`from_elements`)
wherever it meets a symgrad operation or is returned; numpy's own reductions
of it (``np.max``, ``np.mean``) cannot, as they need the values.

    >>> import numpy as np, symgrad as sg
    >>> sg.grad(lambda x: np.sum(sg.array([[x, 2.0 * x], [1.0, x ** 2]])))(3.0)
    np.float64(9.0)
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..core.errors import ShapeError, UnsupportedFunctionError, user_location
from ..core.tracing import Traced, apply, shape_of
from ..prims import elementwise as E
from ..prims.convert import convert
from ..prims.elementwise import as_float
from ..prims.indexing import along, concatenate_p
from .dispatch import implements, normalize_axes
from .functions import broadcast_to, reshape, transpose
from .shapes import _atleast, array_split, concatenate, moveaxis, split


def _shape(a: Any, shape: Any) -> tuple[int, ...]:
    if shape is None:
        return tuple(shape_of(a))
    return tuple(operator.index(d) for d in (shape if isinstance(shape, (tuple, list))
                                            else (shape,)))


def _like(a: Any, dtype: Any) -> Any:
    """The dtype of ``*_like(a)``: ``dtype`` if given, else ``a``'s for a float32 or
    complex ``a`` (as numpy), float64 otherwise (a float constant, as every value
    symgrad traces)."""
    if dtype is not None:
        return dtype
    kind = getattr(a, "dtype", None)
    return kind if kind in (np.float32, np.complex128, np.complex64) else np.float64


@implements(np.zeros_like, np.empty_like)
def zeros_like(a: Any, dtype: Any = None, order: str = "K", subok: bool = True,
               shape: Any = None, **kwargs: Any) -> np.ndarray:
    """Zeros of ``a``'s shape: a constant (``empty_like`` too: its values are unspecified)."""
    return np.zeros(_shape(a, shape), dtype=_like(a, dtype))


@implements(np.ones_like)
def ones_like(a: Any, dtype: Any = None, order: str = "K", subok: bool = True,
              shape: Any = None, **kwargs: Any) -> np.ndarray:
    return np.ones(_shape(a, shape), dtype=_like(a, dtype))


@implements(np.full_like)
def full_like(a: Any, fill_value: Any, dtype: Any = None, order: str = "K", subok: bool = True,
              shape: Any = None, **kwargs: Any) -> Any:
    """``fill_value`` (traced or not) broadcast to ``a``'s shape."""
    shape = _shape(a, shape)
    if isinstance(fill_value, Traced):
        kind = np.dtype(_like(a, dtype))
        value = as_float(fill_value)
        if kind.kind == "c" and not np.iscomplexobj(value):  # numpy casts it to a's dtype
            value = convert(value, kind.name)
        return broadcast_to(value, shape)
    return np.full(shape, fill_value, dtype=_like(a, dtype))


@implements(np.linspace)
def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype: Any = None, axis: int = 0, **kwargs: Any) -> Any:
    """``np.linspace`` with traced ``start``/``stop`` (numpy's formula: the points are
    ``start + k * (stop - start) / div``, the last one ``stop`` itself)."""
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    div = num - 1 if endpoint else num
    start, stop = as_float(start), as_float(stop)
    delta = stop - start
    extra = len(shape_of(delta))
    steps = np.arange(0, num, dtype=np.float64).reshape((-1,) + (1,) * extra)
    step = delta / div if div > 0 else np.nan
    y = (steps * step if div > 0 else steps * delta) + start
    if endpoint and num > 1:
        last = reshape(broadcast_to(stop, shape_of(y)[1:]), (1,) + shape_of(y)[1:])
        y = concatenate([along(y, 0, 0, num - 1), last], axis=0)
    if axis != 0:
        y = moveaxis(y, 0, axis)
    return (y, step) if retstep else y


@implements(np.ndim)
def ndim(a: Any) -> int:
    return len(shape_of(a))


@implements(np.shape)
def shape(a: Any) -> tuple[int, ...]:
    return tuple(shape_of(a))


@implements(np.size)
def size(a: Any, axis: Any = None) -> int:
    s = shape_of(a)
    if axis is None:
        return int(np.prod(s, dtype=np.int64))
    return s[normalize_axes(axis, len(s))[0]]


@implements(np.select)
def select(condlist: Any, choicelist: Any, default: Any = 0) -> Any:
    """``np.select``: the first true condition's choice, else ``default`` (nested where)."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if not condlist:
        raise ValueError("select with an empty condition list is not possible")
    result = default
    for cond, choice in reversed(list(zip(condlist, choicelist))):
        result = E.where(cond, choice, result)
    shape = np.broadcast_shapes(*(shape_of(x) for x in (*condlist, *choicelist, default)))
    return result if shape_of(result) == shape else broadcast_to(result, shape)


@implements(np.rollaxis)
def rollaxis(a: Any, axis: int, start: int = 0) -> Any:
    n = len(shape_of(a))
    (axis,) = normalize_axes(axis, n)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise np.exceptions.AxisError(f"start arg requires {-n} <= start < {n + 1}, "
                                      f"but {start} was passed in")
    if axis < start:
        start -= 1
    if axis == start:
        return a
    order = [k for k in range(n) if k != axis]
    order.insert(start, axis)
    return transpose(a, tuple(order))


@implements(np.atleast_3d)
def atleast_3d(*arys: Any) -> Any:
    out = [_atleast(a, 3) for a in arys]
    return out[0] if len(out) == 1 else tuple(out)


@implements(np.hsplit)
def hsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    if not shape_of(ary):
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(ary, indices_or_sections, 1 if len(shape_of(ary)) > 1 else 0)


@implements(np.vsplit)
def vsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    if len(shape_of(ary)) < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(ary, indices_or_sections, 0)


@implements(np.dsplit)
def dsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    if len(shape_of(ary)) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(ary, indices_or_sections, 2)


# ---------------------------------------------------------------------------
# np.gradient


def _spacing(d: Any, n: int) -> tuple[Any, bool]:
    """A spacing argument of np.gradient: (a scalar or the differences of coordinates,
    whether it is uniform)."""
    if not shape_of(d):
        return d, True
    if len(shape_of(d)) != 1 or shape_of(d)[0] != n:
        raise ValueError("when 1d, distances must match the length of the corresponding "
                         "dimension")
    if isinstance(d, Traced):
        return along(d, 0, 1, n) - along(d, 0, 0, n - 1), False
    diffx = np.diff(np.asarray(d, dtype=np.float64))
    return (diffx[0], True) if (diffx == diffx[0]).all() else (diffx, False)


def _edge(f: Any, axis: int, ks: tuple[int, ...], coefficients: tuple[Any, ...]) -> Any:
    n = shape_of(f)[axis]
    total = None
    for k, c in zip(ks, coefficients):
        k %= n
        term = E.mul(c, along(f, axis, k, k + 1))
        total = term if total is None else E.add(total, term)
    return total


def _along_axis(v: Any, axis: int, ndim: int) -> Any:
    """A vector of coefficients along ``axis`` of an ``ndim``-dimensional array."""
    return reshape(v, tuple(-1 if k == axis else 1 for k in range(ndim)))


def _gradient_axis(f: Any, axis: int, dx: Any, uniform: bool, edge_order: int) -> Any:
    n, nd = shape_of(f)[axis], len(shape_of(f))
    if n < edge_order + 1:
        raise ValueError("Shape of array too small to calculate a numerical gradient, "
                         "at least (edge_order + 1) elements are required.")

    def part(lo: int, hi: int) -> Any:
        return along(f, axis, lo, hi + n if hi <= 0 else hi)

    if uniform:
        interior = E.div(E.sub(part(2, 0), part(0, -2)), E.mul(2.0, dx))
    else:
        dx1, dx2 = along(dx, 0, 0, n - 2), along(dx, 0, 1, n - 1)
        a = E.div(E.neg(dx2), E.mul(dx1, E.add(dx1, dx2)))
        b = E.div(E.sub(dx2, dx1), E.mul(dx1, dx2))
        c = E.div(dx1, E.mul(dx2, E.add(dx1, dx2)))
        a, b, c = (_along_axis(t, axis, nd) for t in (a, b, c))
        interior = E.add(E.add(E.mul(a, part(0, -2)), E.mul(b, part(1, -1))),
                         E.mul(c, part(2, 0)))
    if edge_order == 1:
        first = dx if uniform else _item(dx, 0)
        last = dx if uniform else _item(dx, -1)
        lo = E.div(E.sub(part(1, 2), part(0, 1)), first)
        hi = E.div(E.sub(part(n - 1, n), part(n - 2, n - 1)), last)
    else:
        if uniform:
            a, b, c = E.div(-1.5, dx), E.div(2.0, dx), E.div(-0.5, dx)
        else:
            d1, d2 = _item(dx, 0), _item(dx, 1)
            a = E.div(E.neg(E.add(E.mul(2.0, d1), d2)), E.mul(d1, E.add(d1, d2)))
            b = E.div(E.add(d1, d2), E.mul(d1, d2))
            c = E.div(E.neg(d1), E.mul(d2, E.add(d1, d2)))
        lo = _edge(f, axis, (0, 1, 2), (a, b, c))
        if uniform:
            a, b, c = E.div(0.5, dx), E.div(-2.0, dx), E.div(1.5, dx)
        else:
            d1, d2 = _item(dx, -2), _item(dx, -1)
            a = E.div(d2, E.mul(d1, E.add(d1, d2)))
            b = E.div(E.neg(E.add(d2, d1)), E.mul(d1, d2))
            c = E.div(E.add(E.mul(2.0, d2), d1), E.mul(d2, E.add(d1, d2)))
        hi = _edge(f, axis, (-3, -2, -1), (a, b, c))
    return apply(concatenate_p, lo, interior, hi, axis=axis)


def _item(v: Any, k: int) -> Any:
    n = shape_of(v)[0]
    k %= n
    return reshape(along(v, 0, k, k + 1), ()) if isinstance(v, Traced) else v[k]


@implements(np.gradient)
def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    """``np.gradient``: second-order central differences inside, first- or second-order
    one-sided ones at the edges, with uniform or coordinate spacing (traced or not)."""
    f = as_float(f)
    nd = len(shape_of(f))
    axes = tuple(range(nd)) if axis is None else tuple(
        normalize_axes(a, nd)[0] for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if len(set(axes)) != len(axes):
        raise ValueError("duplicate value in 'axis'")
    if edge_order not in (1, 2):
        raise ValueError("'edge_order' greater than 2 not supported")
    if not varargs:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1 and not shape_of(varargs[0]):
        spacings = [varargs[0]] * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError("invalid number of arguments")
    outs = []
    for ax, d in zip(axes, spacings):
        dx, uniform = _spacing(as_float(d), shape_of(f)[ax])
        outs.append(_gradient_axis(f, ax, dx, uniform, edge_order))
    return outs[0] if len(outs) == 1 else tuple(outs)


# ---------------------------------------------------------------------------
# arrays of traced elements

#: the largest traced array that np.array / np.asarray turn into numpy's object array
#: of its elements (one traced scalar each)
MAX_ELEMENTS = 100


def from_elements(objects: np.ndarray) -> Any:
    """A numpy object array of traced scalars and numbers as one traced array."""
    flat = [as_float(o) for o in objects.ravel()]
    for o in flat:
        if shape_of(o):
            raise ShapeError(
                f"a numpy object array holds an array of shape {shape_of(o)} (at "
                f"{user_location()}); symgrad takes object arrays of traced scalars and "
                "numbers only; build arrays of traced arrays with np.stack")
    if not flat:
        return np.zeros(objects.shape)
    if not any(isinstance(o, Traced) for o in flat):
        return np.array([float(o) for o in flat]).reshape(objects.shape)
    parts = [reshape(o, (1,)) if isinstance(o, Traced) else np.full((1,), float(o))
             for o in flat]
    joined = parts[0] if len(parts) == 1 else apply(concatenate_p, *parts, axis=0)
    return reshape(joined, objects.shape)


def elements(x: Any) -> np.ndarray:
    """numpy's object array of the traced scalars ``x[i, j, ...]``: what ``np.array(x)``
    holds for a traced ``x`` of at most :data:`MAX_ELEMENTS` elements."""
    shape = tuple(shape_of(x))
    out = np.empty(shape, dtype=object)
    if not shape:
        out[()] = x
        return out
    size = int(np.prod(shape))
    if size > MAX_ELEMENTS:
        raise UnsupportedFunctionError(
            f"np.array or np.asarray of a traced array of {size} elements (at "
            f"{user_location()}): numpy would hold one Python object per element; pass the "
            "traced array itself, or build arrays with np.stack / sg.array")
    flat = reshape(x, (size,))
    for k, idx in enumerate(np.ndindex(*shape)):
        out[idx] = reshape(along(flat, 0, k, k + 1), ())
    return out


def array(obj: Any, dtype: Any = None) -> Any:
    """``np.array`` for nested lists and tuples of traced values (of equal shapes) and
    numbers: one traced array, differentiable in every element.

        >>> import numpy as np, symgrad as sg
        >>> sg.grad(lambda x: np.sum(sg.array([x, x ** 2]) * np.array([1.0, 3.0])))(2.0)
        np.float64(13.0)
    """
    if dtype is not None and np.dtype(dtype) != np.float64:
        raise UnsupportedFunctionError(f"sg.array(..., dtype={dtype!r}): symgrad computes in "
                                       "float64")
    if isinstance(obj, (list, tuple)):
        items = [array(o) for o in obj]
        if not items:
            return np.zeros((0,))
        shapes = {tuple(shape_of(i)) for i in items}
        if len(shapes) != 1:
            raise ShapeError(f"sg.array: the items have different shapes {sorted(shapes)}")
        if not any(isinstance(i, Traced) for i in items):
            return np.array(items, dtype=np.float64)
        (shape,) = shapes
        return concatenate([reshape(as_float(i), (1, *shape)) for i in items], axis=0)
    if isinstance(obj, np.ndarray) and obj.dtype == object:
        return from_elements(obj)
    return obj if isinstance(obj, Traced) else np.array(obj, dtype=np.float64)


__all__ = ["array", "array_split", "elements", "from_elements"]
