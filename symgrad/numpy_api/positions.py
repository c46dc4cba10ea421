"""Positions that depend on the values: ``np.argmax``, ``np.argmin``, ``np.argsort``
on traced arrays, and ``np.take_along_axis`` and ``x[i]`` with traced int64 indices.

The positions are traced int64 arrays (:func:`symgrad.prims.sorting.to_int` of float
positions) with no gradient, as JAX's; gathering with them is differentiable in the
gathered array (``take_along``, whose adjoint scatters back).

- ``argmax``/``argmin``: numpy's first extreme, and where a NaN is present numpy's
  first NaN: the least position among ``x == max(x)`` (or ``isnan(x)`` in a row with
  a NaN); ``-0.0`` and ``0.0`` tie, as in numpy;
- ``argsort``: the stable order whatever ``kind`` (numpy's ``kind="stable"`` and
  JAX's default; numpy's default quicksort may order tied values otherwise on more
  than 16 elements), NaNs last, as numpy's.

    >>> import numpy as np, symgrad as sg
    >>> sg.grad(lambda x: x[np.argmax(x)] ** 2)(np.array([1.0, 3.0, 2.0]))
    array([0., 6., 0.])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import UnsupportedFunctionError
from ..core.tracing import Traced, apply, shape_of
from ..prims import elementwise as E
from ..prims import reductions as R
from ..prims import sorting as P
from ..prims.elementwise import as_float
from . import complex_order
from .dispatch import implements, normalize_axes
from .functions import broadcast_to, reshape
from .shapes import moveaxis


def _refuse_out(name: str, out: Any) -> None:
    if out is not None:
        raise UnsupportedFunctionError(f"{name}(..., out=...) writes into an array: traced "
                                       "arrays are immutable, use the returned value")


def _extreme_position(name: str, a: Any, axis: Any, out: Any, keepdims: Any,
                      largest: bool) -> Any:
    _refuse_out(name, out)
    a = as_float(a)
    shape = shape_of(a)
    if axis is None:
        flat = reshape(a, (-1,))
        pos = _extreme_position(name, flat, 0, None, False, largest)
        return reshape(pos, (1,) * len(shape)) if keepdims is True else pos
    (ax,) = normalize_axes(axis, len(shape))
    n = shape[ax]
    if n == 0:
        raise ValueError(f"attempt to get {name.removeprefix('np.')} of an empty sequence")
    rp = R.max_p if largest else R.min_p
    kept = shape[:ax] + (1,) + shape[ax + 1:]

    def extreme(x: Any) -> Any:
        return reshape(apply(rp, x, axes=(ax,)), kept)
    isnan = E.not_equal(a, a)  # (of a complex value: a nan part)
    anynan = reshape(apply(R.max_p, E.where(isnan, 1.0, 0.0), axes=(ax,)), kept)
    hits = (complex_order.extreme_hits(a, largest, extreme) if np.iscomplexobj(a)
            else E.equal(a, extreme(a)))
    hit = E.where(E.greater(anynan, 0.0), isnan, hits)
    iota = np.arange(n, dtype=np.float64).reshape((n,) + (1,) * (len(shape) - ax - 1))
    pos = apply(R.min_p, E.where(hit, iota, float(n)), axes=(ax,))
    if keepdims is True:
        pos = reshape(pos, shape[:ax] + (1,) + shape[ax + 1:])
    return P.to_int(pos)


@implements(np.argmax)
def argmax(a: Any, axis: Any = None, out: Any = None, *, keepdims: Any = np._NoValue) -> Any:
    """``np.argmax``: the first maximum's position (the first NaN's, if any)."""
    return _extreme_position("np.argmax", a, axis, out, keepdims, largest=True)


@implements(np.argmin)
def argmin(a: Any, axis: Any = None, out: Any = None, *, keepdims: Any = np._NoValue) -> Any:
    """``np.argmin``: the first minimum's position (the first NaN's, if any)."""
    return _extreme_position("np.argmin", a, axis, out, keepdims, largest=False)


@implements(np.argsort)
def argsort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *,
            stable: Any = None) -> Any:
    """``np.argsort``: the stable order (ties keep their order) whatever ``kind``."""
    if order is not None:
        raise UnsupportedFunctionError("np.argsort(..., order=...) sorts structured arrays, "
                                       "which symgrad does not trace")
    a = as_float(a)
    if axis is None or not shape_of(a):
        a, axis = reshape(a, (-1,)), 0  # a 0-d array's argsort is [0], as numpy's
    (ax,) = normalize_axes(axis, len(shape_of(a)))
    sort = complex_order.order if np.iscomplexobj(a) else P.argsort
    return P.to_int(moveaxis(sort(moveaxis(a, ax, -1)), -1, ax))


def _float_positions(indices: Any, n: int) -> Any:
    """int64 ``indices`` along an axis of length ``n`` as float positions, negative ones
    counted from the end; those out of range stay out of range (take_along raises)."""
    if not isinstance(indices, Traced):
        idx = np.asarray(indices)
        if idx.dtype.kind not in "iu":
            raise IndexError("`indices` must be an integer array")
        if np.any((idx < -n) | (idx >= n)):
            raise IndexError(f"index out of bounds for an axis of size {n}")
        return np.where(idx < 0, idx + n, idx).astype(np.float64)
    if indices.dtype != np.int64:
        raise IndexError(f"`indices` must be an integer array, not {indices.dtype}")
    f = as_float(indices)
    return E.where(E.less(f, 0.0), E.where(E.less(f, -float(n)), float(n), E.add(f, float(n))),
                   f)


@implements(np.take_along_axis)
def take_along_axis(arr: Any, indices: Any, axis: Any = -1) -> Any:
    """``np.take_along_axis``, the indices traced (np.argsort's) or constant."""
    arr = as_float(arr)
    if axis is None:
        if len(shape_of(indices)) != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        arr, axis = reshape(arr, (-1,)), 0
    ndim = len(shape_of(arr))
    if len(shape_of(indices)) != ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    (ax,) = normalize_axes(axis, ndim)
    return _take_along(arr, _float_positions(indices, shape_of(arr)[ax]), ax)


def _take_along(arr: Any, idx: Any, ax: int) -> Any:
    """``arr`` taken along axis ``ax`` at float positions ``idx`` (in range or raising)."""
    n = shape_of(arr)[ax]
    # numpy broadcasts the two except along the axis
    a_sh, i_sh = list(shape_of(arr)), list(shape_of(idx))
    a_sh[ax] = i_sh[ax] = 1
    common = np.broadcast_shapes(tuple(a_sh), tuple(i_sh))
    arr = broadcast_to(arr, common[:ax] + (n,) + common[ax + 1:])
    k = shape_of(idx)[ax]
    idx = broadcast_to(idx, common[:ax] + (k,) + common[ax + 1:])
    return moveaxis(P.take_along(moveaxis(arr, ax, -1), moveaxis(idx, ax, -1)), -1, ax)


def getitem_traced(x: Any, index: Any) -> Any:
    """``x[i]`` for one traced int64 array ``i``: ``x``'s first axis taken at ``i``."""
    shape = shape_of(x)
    if not shape:
        raise IndexError("too many indices for array: array is 0-dimensional")
    s = shape_of(index)
    k = int(np.prod(s, dtype=np.int64))
    flat = reshape(_float_positions(index, shape[0]), (k,) + (1,) * (len(shape) - 1))
    taken = _take_along(as_float(x), broadcast_to(flat, (k,) + shape[1:]), 0)
    return reshape(taken, s + shape[1:])


