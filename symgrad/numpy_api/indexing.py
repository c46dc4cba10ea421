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
from ..prims.indexing import concatenate_p, gather, normalize, scatter_add_p, strided
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


#: how many values at one position ``at(x)[i].add`` adds one by one (:meth:`_Update.add`)
_LEVELS = 4


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

    def add(self, v: Any) -> Any:
        """``x`` with ``v`` added at ``index``; repeated indices add up (as ``np.add.at``,
        in order). The first, second... value at each position is gathered (``-0.0``
        where there is none) and added to ``x``: a scatter into zeros would turn
        ``-0.0 + -0.0`` into ``+0.0``. Values after the ``_LEVELS``-th at one position
        are summed (into zeros) and added last."""
        flat = [int(p) for p in self._pos.ravel()]
        values = self._spread(v)
        padded = apply(concatenate_p, values, np.array([-0.0], _dtype(values)), axis=0)

        def added(x: Any, lo: int, size: int) -> Any:
            seen: dict[int, list[int]] = {}
            for k, p in enumerate(flat):
                seen.setdefault(p - lo, []).append(k)
            for j in range(min(_LEVELS, max(map(len, seen.values())))):
                x = x + gather(padded, [seen[p][j] if len(seen.get(p, ())) > j
                                        else len(flat) for p in range(size)], 0)
            rest = [k for ks in seen.values() for k in ks[_LEVELS:]]
            if rest:
                targets = tuple(flat[k] - lo for k in rest)
                summed = apply(scatter_add_p, gather(values, rest, 0), indices=targets,
                               axis=0, size=size)
                repeated = np.zeros(size, dtype=bool)
                repeated[list(targets)] = True
                x = _where(repeated, x + summed, x)
            return x
        return self._on_span(flat, added)

    def set(self, v: Any) -> Any:
        """``x`` with ``v`` written at ``index``; of repeated indices the last write wins.
        One gather from ``v`` and ``x`` side by side: every bit is kept (a scatter into
        zeros would turn ``-0.0`` into ``+0.0``), and ``x`` gets a zero cotangent where it
        was overwritten, ``v`` where it was overwritten again."""
        flat = [int(p) for p in self._pos.ravel()]
        values = self._spread(v)

        def written(x: Any, lo: int, size: int) -> Any:
            last = {p - lo: k for k, p in enumerate(flat)}  # position -> its last write
            both = apply(concatenate_p, values, x, axis=0)
            return gather(both, [last.get(p, len(flat) + p) for p in range(size)], 0)
        return self._on_span(flat, written)

    def _on_span(self, flat: list[int], update: Any) -> Any:
        """``x`` (flattened) with ``update(x[lo:hi], lo, hi - lo)`` in place of its
        elements from the first to the last updated position ``lo:hi`` (gathers of
        that length, not of the whole array)."""
        size = math.prod(self._shape)
        x = as_float(reshape(self._x, (-1,)))
        if not flat:
            return reshape(x, self._shape)
        lo, hi = min(flat), max(flat) + 1
        pieces = [strided(x, ((0, lo, 1),))] if lo else []
        pieces.append(update(x if hi - lo == size else strided(x, ((lo, hi, 1),)), lo, hi - lo))
        if hi < size:
            pieces.append(strided(x, ((hi, size, 1),)))
        joined = pieces[0] if len(pieces) == 1 else apply(concatenate_p, *pieces, axis=0)
        return reshape(joined, self._shape)


def _dtype(v: Any) -> np.dtype:
    """numpy's dtype of ``v``: an eager Tensor's data (an integer one stays integer), a
    traced value's, a constant's."""
    data = getattr(v, "_value", None)
    if isinstance(data, np.ndarray):
        return data.dtype
    return np.dtype(v.aval.dtype) if isinstance(v, Traced) else np.asarray(v).dtype


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
