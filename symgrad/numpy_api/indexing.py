"""Indexing and functional updates of traced arrays: ``x[index]`` and ``sg.at``.

Indices are data of the program, never traced (see :mod:`symgrad.prims.indexing`).
Basic indexing (integers, slices, ``...``, ``None``) is a ``slice`` and a
``reshape``; integer arrays and boolean masks are a ``gather`` of the flattened
array at the flat positions numpy itself computes for the index, so every numpy
indexing rule (mixed basic and advanced indices included) holds by
construction; a single integer array among slices gathers along its own axis
instead, which keeps the kernel generic over the other axes. ``sg.at`` updates
scatter into the flattened array in the same way.

    >>> import numpy as np, symgrad as sg
    >>> sg.grad(lambda x: np.sum(x[::-1][[0, 0, 2]] ** 2))(np.array([1.0, 2.0, 3.0]))
    array([ 2.,  0., 12.])
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from ..core.errors import user_location
from ..core.tracing import Traced, apply, shape_of
from ..prims.elementwise import as_float
from ..prims.elementwise import where as _where
from ..prims.indexing import gather, normalize, scatter_add_p, strided
from ..prims.promotion import dtype_of
from .functions import broadcast_to, reshape


def _index_error(index: Any, problem: str, fix: str) -> Exception:
    return IndexError(f"x[{_show(index)}] at {user_location()}: {problem}; {fix}")


def _show(index: Any) -> str:
    parts = index if isinstance(index, tuple) else (index,)
    return ", ".join("..." if p is Ellipsis else f"{p!r:.40}" for p in parts)


def _check_index(index: Any) -> tuple[Any, ...]:
    """``index`` as a tuple of constant parts; traced or non-integer parts are refused."""
    parts = index if isinstance(index, tuple) else (index,)
    for p in parts:
        if isinstance(p, Traced) or (isinstance(p, slice) and any(
                isinstance(b, Traced) for b in (p.start, p.stop, p.step))):
            raise _index_error(
                index, "the index is a traced value, but symgrad compiles each index into "
                "the kernel, so it must be known while tracing",
                "pass constant integers, slices, integer arrays or boolean masks (a mask "
                "computed from traced values selects with sg.where(mask, x, 0.0) instead; "
                "traced int64 positions index alone, x[i], or through np.take_along_axis)")
        if p is None or p is Ellipsis or isinstance(p, slice):
            continue
        if isinstance(p, list) and not p:
            continue  # x[[]]: no elements, as numpy
        kind = np.asarray(p).dtype.kind
        if kind not in "biu":
            raise _index_error(index, f"{p!r:.40} is not an integer, slice, integer array "
                               "or boolean mask", "index with integers (int(i), "
                               "np.asarray(i, dtype=int))")
    return parts


def _is_basic(parts: tuple[Any, ...]) -> bool:
    return all(p is None or p is Ellipsis or isinstance(p, slice)
               or (np.ndim(p) == 0 and np.asarray(p).dtype.kind in "iu") for p in parts)


def _positions(shape: tuple[int, ...], index: Any) -> np.ndarray:
    """The flat position in an array of ``shape`` of each element ``x[index]`` selects."""
    try:
        return np.arange(math.prod(shape)).reshape(shape)[index]
    except IndexError as e:
        raise _index_error(index, f"{e} (the array has shape {shape})",
                           "use indices within the array's shape") from None


def getitem(x: Any, index: Any) -> Any:
    """``x[index]`` for a traced ``x`` with numpy's semantics (see the module docstring)."""
    if isinstance(index, Traced) and index.dtype == np.int64:  # x[np.argmax(x)]
        from .positions import getitem_traced
        return getitem_traced(x, index)
    parts = _check_index(index)
    shape = shape_of(x)
    if not _is_basic(parts):
        pos = _positions(shape, index)  # numpy's checks, and the general case
        arrays = [k for k, p in enumerate(parts) if not _is_basic((p,))]
        k = arrays[0]
        array = np.asarray(parts[k], dtype=int) if isinstance(parts[k], list) and not parts[k] \
            else np.asarray(parts[k])
        if len(arrays) > 1 or array.dtype.kind == "b" or any(
                np.ndim(p) == 0 and np.asarray(p).dtype.kind in "iu" for p in parts):
            return reshape(gather(reshape(x, (-1,)), pos, 0), pos.shape)
        # one integer array among slices: slice, then gather along its axis (the
        # common x[:, [0, 2]]; the kernel stays generic over the other axes)
        basic = getitem(x, (*parts[:k], slice(None), *parts[k + 1:]))
        spanned = len(shape) - sum(p is not None and p is not Ellipsis for p in parts)
        axis = sum(spanned if p is Ellipsis else 1 for p in parts[:k])
        bshape = shape_of(basic)
        taken = gather(basic, array % bshape[axis], axis)
        return reshape(taken, (*bshape[:axis], *array.shape, *bshape[axis + 1:]))
    try:
        result_shape = np.broadcast_to(0.0, shape)[index].shape  # numpy's checks, no data
    except IndexError as e:
        raise _index_error(index, f"{e} (the array has shape {shape})",
                           "use indices within the array's shape") from None
    n_axes = sum(p is not None and p is not Ellipsis for p in parts)
    if Ellipsis in parts:
        at = parts.index(Ellipsis)
        parts = (*parts[:at], *(slice(None),) * (len(shape) - n_axes), *parts[at + 1:])
    parts = tuple(p for p in parts if p is not None) + (slice(None),) * (len(shape) - n_axes)
    index_triples = tuple(
        normalize(p, n) if isinstance(p, slice)
        else (operator.index(p) % n, operator.index(p) % n + 1, 1)
        for p, n in zip(parts, shape))
    return reshape(strided(x, index_triples), result_shape)


def _numpy_dtype(x: Any) -> np.dtype:
    d = dtype_of(x)
    return np.dtype(getattr(d, "numpy", d))  # (an eager Tensor's dtype names its numpy one)


class _At:
    """``sg.at(x)[index]``: the place of a functional update; see :func:`at`."""

    def __init__(self, x: Any):
        self._x = x

    def __getitem__(self, index: Any) -> _Update:
        return _Update(self._x, index)


class _Update:
    def __init__(self, x: Any, index: Any):
        self._x, self._index = x, index
        _check_index(index)
        self._shape = shape_of(x)
        self._pos = _positions(self._shape, index)

    def _spread(self, v: Any) -> Any:
        """``v`` broadcast to the indexed shape, flattened as the positions are."""
        return reshape(broadcast_to(as_float(v), self._pos.shape), (-1,))

    @staticmethod
    def _onto(values: Any) -> dict[str, Any]:
        """Real float values scatter onto -0.0, the identity of ``+`` (``-0.0 + v`` is
        ``v``, ``x + -0.0`` is ``x``; +0.0 turned a -0.0 into +0.0); others onto 0."""
        return {"neg_zero": True} if _numpy_dtype(values).kind == "f" else {}

    def add(self, v: Any) -> Any:
        """``x`` with ``v`` added at ``index``; repeated indices add up (as ``np.add.at``)."""
        size = math.prod(self._shape)
        values = self._spread(v)
        added = apply(scatter_add_p, values, indices=tuple(map(int, self._pos.ravel())),
                      axis=0, size=size, **self._onto(values))
        return reshape(as_float(reshape(self._x, (-1,))) + added, self._shape)

    def set(self, v: Any) -> Any:
        """``x`` with ``v`` written at ``index``; of repeated indices the last write wins."""
        size = math.prod(self._shape)
        flat = self._pos.ravel()
        last = {int(p): k for k, p in enumerate(flat)}   # position -> its last write
        targets = tuple(sorted(last))
        sources = tuple(last[p] for p in targets)
        written = np.zeros(size, dtype=bool)
        written[list(targets)] = True
        values = self._spread(v)
        onto = self._onto(values)
        if sources != tuple(range(len(flat))):  # earlier writes of a position add -0.0
            wins = np.zeros(len(flat), dtype=bool)   # (their cotangent is 0, as JAX's)
            wins[list(sources)] = True
            values = _where(wins, values, -0.0 if onto else np.zeros((), _numpy_dtype(values)))
            targets = tuple(map(int, flat))
        placed = apply(scatter_add_p, values, indices=targets, axis=0, size=size, **onto)
        # x gets a zero cotangent where it was overwritten, v where it was overwritten again
        x = as_float(reshape(self._x, (-1,)))
        return reshape(_where(written, placed, x), self._shape)


def at(x: Any) -> _At:
    """Functional updates: ``at(x)[index].set(v)`` and ``at(x)[index].add(v)``.

    Return a new array; ``x`` is never modified (traced arrays are immutable,
    so ``x[index] = v`` raises). ``index`` is anything numpy accepts (constant
    integers, slices, ``...``, ``None``, integer arrays, boolean masks).
    ``set`` with repeated indices keeps the last write, as numpy's ``x[index] = v``
    does, and only that write gets a gradient; ``add`` accumulates them, as
    ``np.add.at``. Works on plain arrays too.

        >>> import numpy as np, symgrad as sg
        >>> sg.at(np.zeros(3))[[0, 0, 2]].add(1.0)
        array([2., 0., 1.])
        >>> sg.grad(lambda x: np.sum(sg.at(x)[1].set(x[0] ** 2)))(np.array([3.0, 4.0]))
        array([7., 0.])
    """
    return _At(x)
