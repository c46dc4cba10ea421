"""The array family: indexing, functional updates and shape ops.

Six primitives, each declared once below with all its facets, carry every
operation here; the rest are exact compositions of them (as in JAX):

- ``slice``: a strided view ``x[a:b:c, ...]``, one ``(start, stop, step)`` per axis;
- ``unslice``: its adjoint, ``x`` written into zeros of a shape at such a slice;
- ``gather``: ``np.take(x, indices, axis)`` with constant ``indices``;
- ``scatter_add``: its adjoint, ``out[..., indices[k], ...] += x[..., k, ...]``
  into zeros (repeated indices accumulate);
- ``concatenate`` along an axis;
- ``cumsum`` along an axis (adjoint: the reversed cumulative sum).

Indices are data of the program, never traced: they are parameters of the
equations (tuples of Python ints, so that equations hash and compare for CSE
and cache keys) and constants of the generated source (a tuple, a ``range``, or
int32 bytes for long irregular sets, which Numba compiles fastest). Basic indexing
(integers, slices, ``...``, ``None``) is a ``slice`` and a ``reshape``; integer
arrays and boolean masks are a ``gather`` of the flattened array at the flat
positions numpy itself computes for the index, so every numpy indexing rule
(mixed basic and advanced indices included) holds by construction; a single
integer array among slices gathers along its own axis instead, which keeps the
kernel generic over the other axes. ``sg.at`` updates scatter into the
flattened array in the same way.

    >>> import numpy as np, symgrad as sg
    >>> sg.grad(lambda x: np.sum(x[::-1][[0, 0, 2]] ** 2))(np.array([1.0, 2.0, 3.0]))
    array([ 2.,  0., 12.])
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from . import ops
from . import primitives as P
from .errors import ShapeError, UnsupportedFunctionError, user_location
from .ir import BOOL, FLOAT, Aval
from .ops import apply, as_float, implements, normalize_axes, reshape
from .trace import Tracer, as_constant_array

Triple = tuple[int, int, int]


# ---------------------------------------------------------------------------
# slice: a strided view; unslice: its adjoint


def _py_slice(start: int, stop: int, step: int) -> slice:
    # a normalized stop of -1 with a negative step means "through index 0"
    return slice(start, None if stop < 0 else stop, step)


def _length(t: Triple) -> int:
    return len(range(*t))


def _slice_rule(x: Aval, *, index: tuple[Triple, ...]) -> Aval:
    if len(index) != x.ndim:
        raise ShapeError(f"slice: {len(index)} slices for the {x.ndim} axes of {x}")
    for n, (start, stop, step) in zip(x.shape, index):
        if step == 0 or not (0 <= start <= n and -1 <= stop <= n):
            raise ShapeError(f"slice: {start}:{stop}:{step} is not a normalized slice of {x}")
    return Aval(tuple(_length(t) for t in index), x.dtype)


def _slice_text(index: tuple[Triple, ...], shape: tuple[int, ...]) -> str:
    """``1:3, ::-1`` for the source: bounds that are the default are left out."""
    parts = []
    for n, (start, stop, step) in zip(shape, index):
        first = "" if start == (0 if step > 0 else n - 1) else str(start)
        last = "" if stop == (n if step > 0 else -1) else str(stop)
        parts.append(f"{first}:{last}" + ("" if step == 1 else f":{step}"))
    while len(parts) > 1 and parts[-1] == ":":  # x[::-1, :] is x[::-1]
        parts.pop()
    return ", ".join(parts)


def _slice_impl(x: Any, index: tuple[Triple, ...]) -> Any:
    return x[tuple(_py_slice(*t) for t in index)]


def _unslice_impl(x: Any, shape: tuple[int, ...], index: tuple[Triple, ...]) -> Any:
    out = np.zeros(shape, dtype=np.asarray(x).dtype)
    out[tuple(_py_slice(*t) for t in index)] = x
    return out


slice_p = P.register(
    name="slice", kind="structural", shape_rule=_slice_rule, impl=_slice_impl,
    emit=lambda out, args, avals, out_aval, *, index: [
        f"{out} = {args[0]}[{_slice_text(index, avals[0].shape)}]"],
    vjp=lambda g, ans, x, index: (unslice(g, x.shape, index),),
    sympy=lambda sp, x, index: _slice_impl(x, index), view=True)


def _unslice_rule(x: Aval, *, shape: tuple[int, ...], index: tuple[Triple, ...]) -> Aval:
    if _slice_rule(Aval(shape, x.dtype), index=index).shape != x.shape:
        raise ShapeError(f"unslice: {x} does not fill slice {index} of shape {shape}")
    return Aval(tuple(shape), x.dtype)


def _dtype_text(aval: Aval) -> str:
    """The dtype argument of a new array in the kernel: float64 is numpy's default."""
    return ", dtype=np.bool_" if aval.dtype == BOOL else ""


def _unslice_emit(out, args, avals, out_aval, *, shape, index) -> list[str]:
    return [f"{out} = np.zeros({tuple(shape)!r}{_dtype_text(out_aval)})",
            f"{out}[{_slice_text(index, shape)}] = {args[0]}"]


unslice_p = P.register(
    name="unslice", kind="structural", shape_rule=_unslice_rule, impl=_unslice_impl,
    emit=_unslice_emit,
    vjp=lambda g, ans, x, shape, index: (apply(slice_p, g, index=index),),
    sympy=lambda sp, x, shape, index: _unslice_impl(x, shape, index))


def unslice(x: Any, shape: tuple[int, ...], index: tuple[Triple, ...]) -> Any:
    """Zeros of ``shape`` with ``x`` at the slice ``index`` (the adjoint of ``slice``)."""
    return apply(unslice_p, x, shape=tuple(shape), index=index)


def strided(x: Any, index: tuple[Triple, ...]) -> Any:
    """``x`` at the normalized slices ``index``; nothing is recorded for a full slice."""
    shape = ops._shape_of(x)
    if all(t == (0, n, 1) for t, n in zip(index, shape)):
        return x
    return apply(slice_p, x, index=index)


def _normalize(s: slice, n: int) -> Triple:
    start, stop, step = s.indices(n)
    if len(range(start, stop, step)) == 0:
        return (0, 0, 1)  # every empty slice alike; no start of -1 to misread
    return (start, stop, step)


# ---------------------------------------------------------------------------
# gather along an axis at constant indices; scatter_add: its adjoint


def _moved(shape: tuple[int, ...], axis: int, n: int) -> tuple[int, ...]:
    return (*shape[:axis], n, *shape[axis + 1:])


def _gather_rule(x: Aval, *, indices: tuple[int, ...], axis: int) -> Aval:
    if not 0 <= axis < x.ndim or any(not 0 <= i < x.shape[axis] for i in indices):
        raise ShapeError(f"gather: indices {indices} along axis {axis} are out of range of {x}")
    return Aval(_moved(x.shape, axis, len(indices)), x.dtype)


def _shape_text(x: str, shape: tuple[int, ...], axis: int, n: int) -> str:
    dims = [f"{x}.shape[{k}]" if k != axis else str(n) for k in range(len(shape))]
    return f"({dims[0]},)" if len(dims) == 1 else f"({', '.join(dims)})"


#: index sets up to this long are written out as tuples in kernels
SHORT_INDICES = 16


def _index_source(indices: tuple[int, ...]) -> str:
    """The constant ``indices`` as kernel source: a tuple when short, a ``range``
    when evenly spaced, else int32 bytes (Numba takes seconds to type a tuple
    of a thousand literals, and no time to read a buffer)."""
    if len(indices) <= SHORT_INDICES:
        return repr(tuple(indices))
    step = indices[1] - indices[0]
    if step and all(b - a == step for a, b in zip(indices, indices[1:])):
        return f"range({indices[0]}, {indices[-1] + step}, {step})"
    data = np.asarray(indices, dtype=np.int32).tobytes()  # native order, as the kernel reads it
    return f"np.frombuffer({data!r}, dtype=np.int32)"


def _gather_emit(out, args, avals, out_aval, *, indices, axis) -> list[str]:
    (x,), (aval,) = args, avals
    lines = [f"{out} = np.empty({_shape_text(x, aval.shape, axis, len(indices))}"
             f"{_dtype_text(out_aval)})"]
    if indices:
        at = ":, " * axis
        lines += [f"for i0, i1 in enumerate({_index_source(indices)}):",
                  f"    {out}[{at}i0] = {x}[{at}i1]"]
    return lines


def _take(x: Any, indices: tuple[int, ...], axis: int) -> Any:
    return np.take(x, np.asarray(indices, dtype=int), axis=axis)


gather_p = P.register(
    name="gather", kind="structural", shape_rule=_gather_rule, impl=_take,
    emit=_gather_emit,
    vjp=lambda g, ans, x, indices, axis: (
        apply(scatter_add_p, g, indices=indices,  # type: ignore[has-type]
              axis=axis, size=x.shape[axis]),),
    sympy=lambda sp, x, indices, axis: _take(x, indices, axis))


def _scatter_add_rule(x: Aval, *, indices: tuple[int, ...], axis: int, size: int) -> Aval:
    if not 0 <= axis < x.ndim or x.shape[axis] != len(indices):
        raise ShapeError(f"scatter_add: {len(indices)} indices along axis {axis} of {x}")
    if any(not 0 <= i < size for i in indices):
        raise ShapeError(f"scatter_add: indices {indices} are out of range of size {size}")
    return Aval(_moved(x.shape, axis, size), x.dtype)


def _scatter_add_impl(x: Any, indices: tuple[int, ...], axis: int, size: int) -> Any:
    x = np.asarray(x)
    out = np.zeros(_moved(x.shape, axis, size), dtype=x.dtype)
    for k, j in enumerate(indices):  # in order: sums agree with the kernel's bit for bit
        out[(slice(None),) * axis + (j,)] += x[(slice(None),) * axis + (k,)]
    return out


def _scatter_add_emit(out, args, avals, out_aval, *, indices, axis, size) -> list[str]:
    (x,), (aval,) = args, avals
    lines = [f"{out} = np.zeros({_shape_text(x, aval.shape, axis, size)}{_dtype_text(out_aval)})"]
    if indices:
        at = ":, " * axis
        lines += [f"for i0, i1 in enumerate({_index_source(indices)}):",
                  f"    {out}[{at}i1] += {x}[{at}i0]"]
    return lines


scatter_add_p = P.register(
    name="scatter_add", kind="structural", shape_rule=_scatter_add_rule, impl=_scatter_add_impl,
    emit=_scatter_add_emit,
    vjp=lambda g, ans, x, indices, axis, size: (
        apply(gather_p, g, indices=indices, axis=axis),),
    sympy=lambda sp, x, indices, axis, size: _scatter_add_impl(x, indices, axis, size))


def gather(x: Any, indices: Any, axis: int) -> Any:
    """``np.take(x, indices, axis)`` for non-negative in-range constant ``indices``."""
    return apply(gather_p, x, indices=tuple(int(i) for i in np.ravel(indices)), axis=axis)


# ---------------------------------------------------------------------------
# concatenate and cumsum


def _concatenate_rule(*xs: Aval, axis: int) -> Aval:
    P._require("concatenate", xs, FLOAT)
    first = xs[0]
    if not 0 <= axis < first.ndim or any(
            x.ndim != first.ndim or _moved(x.shape, axis, 0) != _moved(first.shape, axis, 0)
            for x in xs):
        shapes = ", ".join(str(x) for x in xs)
        raise ShapeError(f"concatenate: arrays of shapes {shapes} differ in an axis other "
                         f"than axis {axis}; only the concatenation axis may differ")
    return Aval(_moved(first.shape, axis, sum(x.shape[axis] for x in xs)))


def _concatenate_vjp(g, ans, *xs, axis):
    cts, start = [], 0
    for x in xs:
        cts.append(_along(g, axis, start, start + x.shape[axis]))
        start += x.shape[axis]
    return tuple(cts)


concatenate_p = P.register(
    name="concatenate", kind="structural", shape_rule=_concatenate_rule,
    impl=lambda *xs, axis: np.concatenate(xs, axis=axis),
    emit=lambda out, args, avals, out_aval, *, axis: [
        f"{out} = np.concatenate(({', '.join(args)},), axis={axis})"],
    vjp=_concatenate_vjp,
    sympy=lambda sp, *xs, axis: np.concatenate(xs, axis=axis))


def _cumsum_rule(x: Aval, *, axis: int) -> Aval:
    P._require("cumsum", (x,), FLOAT)
    if not 0 <= axis < x.ndim:
        raise ShapeError(f"cumsum: axis {axis} is not an axis of {x}")
    return x


def _cumsum_emit(out, args, avals, out_aval, *, axis) -> list[str]:
    (x,), (aval,) = args, avals
    if aval.ndim == 1:
        return [f"{out} = np.cumsum({x})"]
    at = ":, " * axis
    return [f"{out} = {x}.copy()",
            f"for i0 in range({out}.shape[{axis}] - 1):",
            f"    {out}[{at}i0 + 1] += {out}[{at}i0]"]


def _reverse_cumsum(g, axis: int):
    """``sum(g[k:])`` at each ``k`` along ``axis``: each prefix sum's cotangent flows back."""
    return flip(apply(cumsum_p, flip(g, axis), axis=axis), axis)


cumsum_p = P.register(
    name="cumsum", kind="structural", shape_rule=_cumsum_rule,
    impl=lambda x, axis: np.cumsum(x, axis=axis), emit=_cumsum_emit,
    vjp=lambda g, ans, x, axis: (_reverse_cumsum(g, axis),),
    sympy=lambda sp, x, axis: np.cumsum(x, axis=axis))


# ---------------------------------------------------------------------------
# indexing


def _index_error(index: Any, problem: str, fix: str) -> Exception:
    return IndexError(f"x[{_show(index)}] at {user_location()}: {problem}; {fix}")


def _show(index: Any) -> str:
    parts = index if isinstance(index, tuple) else (index,)
    return ", ".join("..." if p is Ellipsis else f"{p!r:.40}" for p in parts)


def _check_index(index: Any) -> tuple[Any, ...]:
    """``index`` as a tuple of constant parts; traced or non-integer parts are refused."""
    parts = index if isinstance(index, tuple) else (index,)
    for p in parts:
        if isinstance(p, Tracer) or (isinstance(p, slice) and any(
                isinstance(b, Tracer) for b in (p.start, p.stop, p.step))):
            raise _index_error(
                index, "the index is a traced value, but symgrad compiles each index into "
                "the kernel, so it must be known while tracing",
                "pass constant integers, slices, integer arrays or boolean masks (a mask "
                "computed from traced values selects with sg.where(mask, x, 0.0) instead)")
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
    parts = _check_index(index)
    shape = ops._shape_of(x)
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
        bshape = ops._shape_of(basic)
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
        _normalize(p, n) if isinstance(p, slice)
        else (operator.index(p) % n, operator.index(p) % n + 1, 1)
        for p, n in zip(parts, shape))
    return reshape(strided(x, index_triples), result_shape)


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
        self._shape = ops._shape_of(x)
        self._pos = _positions(self._shape, index)

    def _spread(self, v: Any) -> Any:
        """``v`` broadcast to the indexed shape, flattened as the positions are."""
        return reshape(ops.broadcast_to(as_float(v), self._pos.shape), (-1,))

    def add(self, v: Any) -> Any:
        """``x`` with ``v`` added at ``index``; repeated indices add up (as ``np.add.at``)."""
        size = math.prod(self._shape)
        added = apply(scatter_add_p, self._spread(v), indices=tuple(map(int, self._pos.ravel())),
                      axis=0, size=size)
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
        if sources != tuple(range(len(flat))):
            values = apply(gather_p, values, indices=sources, axis=0)
        placed = apply(scatter_add_p, values, indices=targets, axis=0, size=size)
        # x gets a zero cotangent where it was overwritten, v where it was overwritten again
        x = as_float(reshape(self._x, (-1,)))
        return reshape(ops.where(written, placed, x), self._shape)


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


# ---------------------------------------------------------------------------
# shape ops as numpy functions


def _ndim(x: Any) -> int:
    return len(ops._shape_of(x))


@implements(np.expand_dims)
def expand_dims(a: Any, axis: Any) -> Any:
    shape = ops._shape_of(a)
    axes = normalize_axes(axis, len(shape) + (len(axis) if isinstance(axis, (tuple, list))
                                                else 1))
    rest = iter(shape)
    return reshape(a, tuple(1 if k in axes else next(rest) for k in range(len(shape) + len(axes))))


@implements(np.squeeze)
def squeeze(a: Any, axis: Any = None) -> Any:
    shape = ops._shape_of(a)
    axes = (tuple(k for k, d in enumerate(shape) if d == 1) if axis is None
            else normalize_axes(axis, len(shape)))
    if any(shape[k] != 1 for k in axes):
        raise ShapeError(f"squeeze: axis {axis} of shape {shape} does not have length 1; "
                         "only axes of length 1 can be squeezed")
    return reshape(a, tuple(d for k, d in enumerate(shape) if k not in axes))


@implements(np.concatenate)
def concatenate(arrays: Any, axis: Any = 0, out: Any = None, dtype: Any = None,
                casting: str = "same_kind") -> Any:
    ops._refuse_kwargs("np.concatenate", {"out": out, "dtype": dtype},
                       allowed={"dtype": ops._float_dtype})
    arrays = [as_float(a) for a in arrays]
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        arrays, axis = [reshape(a, (-1,)) for a in arrays], 0
    ndim = _ndim(arrays[0])
    if ndim == 0:
        raise ShapeError("concatenate: zero-dimensional arrays cannot be concatenated; "
                         "use np.stack")
    (axis,) = normalize_axes(axis, ndim)
    if len(arrays) == 1:
        return arrays[0]
    return apply(concatenate_p, *arrays, axis=axis)


@implements(np.stack)
def stack(arrays: Any, axis: int = 0, out: Any = None, **kwargs: Any) -> Any:
    ops._refuse_kwargs("np.stack", {"out": out, **kwargs}, allowed={"dtype": ops._float_dtype})
    arrays = list(arrays)
    if not arrays:
        raise ValueError("need at least one array to stack")
    shapes = {ops._shape_of(a) for a in arrays}
    if len(shapes) != 1:
        raise ShapeError(f"stack: all input arrays must have the same shape, got {shapes}")
    (axis,) = normalize_axes(axis, _ndim(arrays[0]) + 1)
    return concatenate([expand_dims(a, axis) for a in arrays], axis=axis)


@implements(np.flip)
def flip(m: Any, axis: Any = None) -> Any:
    shape = ops._shape_of(m)
    axes = normalize_axes(axis, len(shape))
    index = tuple(_normalize(slice(None, None, -1) if k in axes else slice(None), n)
                  for k, n in enumerate(shape))
    return strided(m, index)


@implements(np.cumsum)
def cumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    ops._refuse_kwargs("np.cumsum", {"dtype": dtype, "out": out},
                       allowed={"dtype": ops._float_dtype})
    a = as_float(a)
    if axis is None or _ndim(a) == 0:
        a, axis = reshape(a, (-1,)), 0
    (axis,) = normalize_axes(axis, _ndim(a))
    return apply(cumsum_p, a, axis=axis)


def _int_sequence(x: Any, what: str) -> np.ndarray:
    if isinstance(x, Tracer):
        raise UnsupportedFunctionError(
            f"{what} is a traced value (at {user_location()}); it must be a constant integer "
            "(or sequence of them), known while tracing")
    array = np.asarray(x)
    if array.dtype.kind not in "iu":
        raise TypeError(f"{what} must be integers, got {array.dtype}: {x!r:.40}")
    return array


def _one_axis(a: Any, axis: Any) -> tuple[Any, int, int]:
    """``a`` as float, the axis numpy's ``axis=`` names (``None``: of ``a`` flattened),
    and that axis's length."""
    a = as_float(a)
    if axis is None:
        a, axis = reshape(a, (-1,)), 0
    (axis,) = normalize_axes(axis, _ndim(a))
    return a, axis, ops._shape_of(a)[axis]


@implements(np.repeat)
def repeat(a: Any, repeats: Any, axis: Any = None) -> Any:
    """``np.repeat``: a gather along ``axis`` (each index repeated)."""
    counts = _int_sequence(repeats, "np.repeat's repeats")
    a, axis, n = _one_axis(a, axis)
    try:
        indices = np.repeat(np.arange(n), counts)
    except ValueError as e:
        raise ShapeError(f"repeat: {e} (repeats {counts.tolist()} for an axis of length {n})"
                         ) from None
    if indices.size == n:  # every count is 1
        return a
    return gather(a, indices, axis)


@implements(np.tile)
def tile(A: Any, reps: Any) -> Any:
    """``np.tile``: broadcast a new axis in front of each axis, then merge the pairs."""
    reps_t = tuple(int(r) for r in np.atleast_1d(_int_sequence(reps, "np.tile's reps")))
    A = as_float(A)
    shape = ops._shape_of(A)
    ndim = max(len(shape), len(reps_t))
    shape = (1,) * (ndim - len(shape)) + tuple(shape)
    reps_t = (1,) * (ndim - len(reps_t)) + reps_t
    paired = tuple(d for n in shape for d in (1, n))
    spread = tuple(d for r, n in zip(reps_t, shape) for d in (r, n))
    tiled = ops.broadcast_to(reshape(A, paired), spread)
    return reshape(tiled, tuple(r * n for r, n in zip(reps_t, shape)))


@implements(np.diff)
def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = np._NoValue,
         append: Any = np._NoValue) -> Any:
    """``np.diff``: differences of neighbours along ``axis``, ``n`` times (two slices each)."""
    a = as_float(a)
    if _ndim(a) == 0:
        raise ShapeError("diff requires input that is at least one dimensional")
    (axis,) = normalize_axes(axis, _ndim(a))
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if n == 0:
        return a  # numpy neither prepends nor appends then
    ends = []
    for value, where in ((prepend, 0), (append, 1)):
        if value is not np._NoValue:
            value = as_float(value)
            if _ndim(value) == 0:
                value = ops.broadcast_to(value, ops._shape_of(a)[:axis] + (1,)
                                         + ops._shape_of(a)[axis + 1:])
            ends.append((where, value))
    if ends:
        parts = [v for w, v in ends if w == 0] + [a] + [v for w, v in ends if w == 1]
        a = concatenate(parts, axis=axis)
    for _ in range(n):
        m = ops._shape_of(a)[axis]
        if m == 0:
            break
        a = _along(a, axis, 1, m) - _along(a, axis, 0, m - 1)
    return a


def _along(a: Any, axis: int, lo: int, hi: int) -> Any:
    """``a[..., lo:hi, ...]`` with the slice at ``axis``."""
    return strided(a, tuple((lo, hi, 1) if k == axis else (0, d, 1)
                            for k, d in enumerate(ops._shape_of(a))))


@implements(np.take)
def take(a: Any, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise") -> Any:
    """``np.take`` at constant integer indices (negative ones count from the end)."""
    ops._refuse_kwargs("np.take", {"out": out}, allowed={})
    if mode != "raise":
        raise UnsupportedFunctionError(f"np.take(..., mode={mode!r}): only mode='raise' is "
                                       "supported; clip or wrap the indices with numpy first")
    idx = _int_sequence(indices, "np.take's indices")
    a, axis, n = _one_axis(a, axis)
    if np.any((idx < -n) | (idx >= n)):
        raise IndexError(f"np.take at {user_location()}: indices {idx.tolist()} are out of "
                         f"bounds for an axis of length {n}; use indices in [{-n}, {n})")
    shape = ops._shape_of(a)
    taken = gather(a, idx % n if n else idx, axis)
    return reshape(taken, (*shape[:axis], *idx.shape, *shape[axis + 1:]))


@implements(np.swapaxes)
def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    ndim = _ndim(a)
    (i,), (j,) = normalize_axes(axis1, ndim), normalize_axes(axis2, ndim)
    perm = list(range(ndim))
    perm[i], perm[j] = j, i
    return ops.transpose(a, tuple(perm))


@implements(np.moveaxis)
def moveaxis(a: Any, source: Any, destination: Any) -> Any:
    ndim = _ndim(a)
    src = [normalize_axes(s, ndim)[0] for s in np.atleast_1d(source)]
    dst = [normalize_axes(d, ndim)[0] for d in np.atleast_1d(destination)]
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number "
                         "of elements")
    order = [k for k in range(ndim) if k not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return ops.transpose(a, tuple(order))


@implements(np.pad)
def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Any:
    """``np.pad`` in ``mode="constant"``: ``array`` placed in zeros (``unslice``), plus
    the constant border."""
    if mode != "constant":
        raise UnsupportedFunctionError(
            f"np.pad(..., mode={mode!r}) on a traced value (at {user_location()}): only "
            "mode='constant' is supported; build other borders with np.concatenate and slices")
    values = kwargs.pop("constant_values", 0.0)
    ops._refuse_kwargs("np.pad", kwargs, allowed={})
    array = as_float(array)
    shape = ops._shape_of(array)
    widths = np.broadcast_to(_int_sequence(pad_width, "np.pad's pad_width"), (len(shape), 2))
    if np.any(widths < 0):
        raise ValueError(f"np.pad: pad_width {pad_width!r} has negative widths")
    padded = tuple(int(n + lo + hi) for n, (lo, hi) in zip(shape, widths))
    index = tuple(_normalize(slice(int(lo), int(lo) + n), m)
                  for n, (lo, _), m in zip(shape, widths, padded))
    placed = unslice(array, padded, index) if padded != shape else array
    border = np.pad(np.zeros(shape), widths, constant_values=as_constant_array(values))
    return placed + border if np.any(border) else placed


@implements(np.hstack)
def hstack(tup: Any, **kwargs: Any) -> Any:
    arrays = [atleast_1d(a) for a in tup]
    return concatenate(arrays, axis=0 if arrays and _ndim(arrays[0]) == 1 else 1, **kwargs)


@implements(np.vstack)
def vstack(tup: Any, **kwargs: Any) -> Any:
    return concatenate([atleast_2d(a) for a in tup], axis=0, **kwargs)


@implements(np.append)
def append(arr: Any, values: Any, axis: Any = None) -> Any:
    return concatenate([arr, values], axis=axis)


def _atleast(a: Any, ndim: int) -> Any:
    shape = ops._shape_of(a)
    if len(shape) >= ndim:
        return a
    # numpy's rules: a scalar becomes (1, 1), a vector (1, n); 3-d adds a trailing 1
    new = {0: (1,) * ndim, 1: (1, *shape) if ndim == 2 else (1, *shape, 1),
           2: (*shape, 1)}[len(shape)]
    return reshape(as_float(a), new)


@implements(np.column_stack)
def column_stack(tup: Any) -> Any:
    arrays = [a if _ndim(a) >= 2 else reshape(as_float(a), (-1, 1)) for a in tup]
    return concatenate(arrays, axis=1)


@implements(np.array_split)
def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """``np.array_split``: one slice per piece (a list, as numpy returns)."""
    (axis,) = normalize_axes(axis, _ndim(ary))
    n = ops._shape_of(ary)[axis]
    if isinstance(indices_or_sections, Tracer):
        raise UnsupportedFunctionError(
            f"split points are a traced value (at {user_location()}); they must be constant")
    if np.ndim(indices_or_sections) == 0:
        sections = operator.index(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        bounds = np.concatenate([[0], np.cumsum(sizes)]).tolist()
    else:
        cuts = [min(max(c + n if c < 0 else c, 0), n)
                for c in map(operator.index, indices_or_sections)]
        bounds = [0, *cuts, n]
    return [_along(ary, axis, lo, max(lo, hi)) for lo, hi in zip(bounds, bounds[1:])]


@implements(np.split)
def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    if np.ndim(indices_or_sections) == 0 and not isinstance(indices_or_sections, Tracer):
        n = ops._shape_of(ary)[normalize_axes(axis, _ndim(ary))[0]]
        if n % operator.index(indices_or_sections):
            raise ValueError("array split does not result in an equal division")
    return array_split(ary, indices_or_sections, axis)


@implements(np.fliplr)
def fliplr(m: Any) -> Any:
    return flip(m, 1)


@implements(np.flipud)
def flipud(m: Any) -> Any:
    return flip(m, 0)


@implements(np.atleast_1d)
def atleast_1d(*arys: Any) -> Any:
    out = [_atleast(a, 1) for a in arys]
    return out[0] if len(out) == 1 else tuple(out)


@implements(np.atleast_2d)
def atleast_2d(*arys: Any) -> Any:
    out = [_atleast(a, 2) for a in arys]
    return out[0] if len(out) == 1 else tuple(out)


@implements(np.roll)
def roll(a: Any, shift: Any, axis: Any = None) -> Any:
    """``np.roll``: the two parts of each rolled axis, swapped (slices: no size in the kernel)."""
    a = as_float(a)
    if axis is None:
        return reshape(roll(reshape(a, (-1,)), shift, 0), ops._shape_of(a))
    shifts = np.atleast_1d(_int_sequence(shift, "np.roll's shift"))
    axes = np.atleast_1d(axis)
    shifts, axes = np.broadcast_arrays(shifts, axes)
    for s, ax in zip(shifts.tolist(), axes.tolist()):
        (ax,) = normalize_axes(ax, _ndim(a))
        n = ops._shape_of(a)[ax]
        if n and s % n:
            k = n - s % n  # the element that comes first
            a = apply(concatenate_p, _along(a, ax, k, n), _along(a, ax, 0, k), axis=ax)
    return a
