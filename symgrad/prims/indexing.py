"""Primitives that move elements by constant indices: the indexing family.

Six primitives, each declared once below with all its facets:

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
int32 bytes for long irregular sets, which Numba compiles fastest). ``slice``,
``unslice`` and ``concatenate`` have ``element`` facets: fused loops read
through them by index arithmetic (``x[1:]`` at ``i0`` is ``x[i0 + 1]``).

    >>> import numpy as np
    >>> reverse(np.array([1.0, 2.0, 3.0]), 0)
    array([3., 2., 1.])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import ShapeError
from ..core.index_text import term
from ..core.ir import BOOL, FLOAT, Aval, float_of
from ..core.tracing import apply, shape_of
from .registry import register, require

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


def _sliced(i: str, triple: Triple) -> str:
    """The position in the sliced array of element ``i`` of the slice."""
    start, _, step = triple
    if step == 1:
        return f"{i} + {start}" if start else i
    if step == -1:
        return f"{start} - {term(i)}"
    return f"{start} + {term(i)} * {step}"


slice_p = register(
    name="slice", complex=True, kind="structural", shape_rule=_slice_rule, impl=_slice_impl,
    emit=lambda out, args, avals, out_aval, *, index: [
        f"{out} = {args[0]}[{_slice_text(index, avals[0].shape)}]"],
    vjp=lambda g, ans, x, index: (unslice(g, x.shape, index),),
    sympy=lambda sp, x, index: _slice_impl(x, index),
    # element i of the slice is element start + i * step of its operand
    element=lambda at, avals, out, *, index: [
        ([], 0, tuple(_sliced(i, t) for i, t in zip(at, index)))],
    view=True, linear=True,
    batch=lambda b, args, flags, *, index: (
        b.bind(slice_p, args, index=((0, b.size, 1), *index)), True),
    torch_name="SliceBackward0")


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


def _position(i: str, triple: Triple) -> str:
    """Which element of the slice position ``i`` is (when it is one)."""
    start, _, step = triple
    if step == 1:
        return f"{i} - {start}" if start else i
    if step == -1:
        return f"{start} - {term(i)}"
    return f"{_offset(i, start)} // {step}"


def _offset(i: str, start: int) -> str:
    """``i - start`` as an operand."""
    return f"({i} - {start})" if start else term(i)


def _within(i: str, triple: Triple, n: int) -> list[str]:
    """Conditions for position ``i`` of an axis of length ``n`` to be in the slice."""
    start, stop, step = triple
    if step > 0:
        tests = [f"{i} >= {start}" if start != 0 else "", f"{i} < {stop}" if stop != n else ""]
    else:
        tests = [f"{i} <= {start}" if start != n - 1 else "", f"{i} > {stop}" if stop != -1 else ""]
    if abs(step) != 1:
        tests.append(f"{_offset(i, start)} % {abs(step)} == 0")
    return [t for t in tests if t]


def _unslice_element(at, avals, out, *, shape, index) -> list:
    # inside the slice: the operand's element there; outside: 0
    conditions = [c for i, t, n in zip(at, index, shape) for c in _within(i, t, n)]
    return [(conditions, 0, tuple(_position(i, t) for i, t in zip(at, index)))]


unslice_p = register(
    name="unslice", complex=True, kind="structural", shape_rule=_unslice_rule, impl=_unslice_impl,
    emit=_unslice_emit,
    vjp=lambda g, ans, x, shape, index: (apply(slice_p, g, index=index),),
    sympy=lambda sp, x, shape, index: _unslice_impl(x, shape, index),
    element=_unslice_element, linear=True,
    batch=lambda b, args, flags, *, shape, index: (b.bind(
        unslice_p, args, shape=(b.size, *shape), index=((0, b.size, 1), *index)), True))


def unslice(x: Any, shape: tuple[int, ...], index: tuple[Triple, ...]) -> Any:
    """Zeros of ``shape`` with ``x`` at the slice ``index`` (the adjoint of ``slice``)."""
    return apply(unslice_p, x, shape=tuple(shape), index=index)


def strided(x: Any, index: tuple[Triple, ...]) -> Any:
    """``x`` at the normalized slices ``index``; nothing is recorded for a full slice."""
    shape = shape_of(x)
    if all(t == (0, n, 1) for t, n in zip(index, shape)):
        return x
    return apply(slice_p, x, index=index)


def normalize(s: slice, n: int) -> Triple:
    start, stop, step = s.indices(n)
    if len(range(start, stop, step)) == 0:
        return (0, 0, 1)  # every empty slice alike; no start of -1 to misread
    return (start, stop, step)


# ---------------------------------------------------------------------------
# gather along an axis at constant indices; scatter_add: its adjoint


def _moved(shape: tuple[int, ...], axis: int, n: int) -> tuple[int, ...]:
    return (*shape[:axis], n, *shape[axis + 1:])


def _gather_rule(x: Aval, *, indices: tuple[int, ...], axis: int) -> Aval:
    if not 0 <= axis < x.ndim or indices and not 0 <= min(indices) <= max(indices) < x.shape[axis]:
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


gather_p = register(
    name="gather", complex=True, kind="structural", shape_rule=_gather_rule, impl=_take,
    emit=_gather_emit,
    vjp=lambda g, ans, x, indices, axis: (
        apply(scatter_add_p, g, indices=indices, axis=axis, size=x.shape[axis]),),
    sympy=lambda sp, x, indices, axis: _take(x, indices, axis),
    linear=True, torch_name="IndexBackward0",
    batch=lambda b, args, flags, *, indices, axis: (
        b.bind(gather_p, args, indices=indices, axis=axis + 1), True))


def _scatter_add_rule(x: Aval, *, indices: tuple[int, ...], axis: int, size: int) -> Aval:
    if not 0 <= axis < x.ndim or x.shape[axis] != len(indices):
        raise ShapeError(f"scatter_add: {len(indices)} indices along axis {axis} of {x}")
    if indices and not 0 <= min(indices) <= max(indices) < size:
        raise ShapeError(f"scatter_add: indices {indices} are out of range of size {size}")
    return Aval(_moved(x.shape, axis, size), x.dtype)


def _scatter_add_impl(x: Any, indices: tuple[int, ...], axis: int, size: int) -> Any:
    x = np.asarray(x)
    out = np.zeros(_moved(x.shape, axis, size), dtype=x.dtype)
    # np.add.at adds in the order of the indices, as the kernel's loop: the same bits
    np.add.at(out, (slice(None),) * axis + (np.asarray(indices, dtype=np.intp),), x)
    return out


def _scatter_add_emit(out, args, avals, out_aval, *, indices, axis, size) -> list[str]:
    (x,), (aval,) = args, avals
    lines = [f"{out} = np.zeros({_shape_text(x, aval.shape, axis, size)}{_dtype_text(out_aval)})"]
    if indices:
        at = ":, " * axis
        lines += [f"for i0, i1 in enumerate({_index_source(indices)}):",
                  f"    {out}[{at}i1] += {x}[{at}i0]"]
    return lines


# repeated indices add up, so an array primitive (not structural), though linear
scatter_add_p = register(
    name="scatter_add", complex=True, kind="array", shape_rule=_scatter_add_rule,
    impl=_scatter_add_impl,
    emit=_scatter_add_emit,
    vjp=lambda g, ans, x, indices, axis, size: (
        apply(gather_p, g, indices=indices, axis=axis),),
    sympy=lambda sp, x, indices, axis, size: _scatter_add_impl(x, indices, axis, size),
    linear=True,
    batch=lambda b, args, flags, *, indices, axis, size: (
        b.bind(scatter_add_p, args, indices=indices, axis=axis + 1, size=size), True))


def gather(x: Any, indices: Any, axis: int) -> Any:
    """``np.take(x, indices, axis)`` for non-negative in-range constant ``indices``."""
    return apply(gather_p, x, indices=tuple(np.ravel(indices).astype(np.int64).tolist()),
                 axis=axis)


# ---------------------------------------------------------------------------
# concatenate and cumsum


def _concatenate_rule(*xs: Aval, axis: int) -> Aval:
    require("concatenate", xs, FLOAT)
    first = xs[0]
    if not 0 <= axis < first.ndim or any(
            x.ndim != first.ndim or _moved(x.shape, axis, 0) != _moved(first.shape, axis, 0)
            for x in xs):
        shapes = ", ".join(str(x) for x in xs)
        raise ShapeError(f"concatenate: arrays of shapes {shapes} differ in an axis other "
                         f"than axis {axis}; only the concatenation axis may differ")
    return Aval(_moved(first.shape, axis, sum(x.shape[axis] for x in xs)), float_of(*xs))


def _concatenate_vjp(g, ans, *xs, axis):
    cts, start = [], 0
    for x in xs:
        cts.append(along(g, axis, start, start + x.shape[axis]))
        start += x.shape[axis]
    return tuple(cts)


def _concatenate_element(at, avals, out, *, axis) -> list:
    # the operand whose stretch of the axis holds the element, at its own position
    pieces, start = [], ""  # where the operand starts along the axis, as source
    for k, a in enumerate(avals):
        end = f"{start} + {a.shape[axis]}" if start else str(a.shape[axis])
        last = k == len(avals) - 1
        i = at[axis]
        pieces.append(([] if last else [f"{i} < {end}"], k,
                       (*at[:axis], f"{i} - {term(start)}" if start else i, *at[axis + 1:])))
        start = end
    return pieces


concatenate_p = register(
    name="concatenate", complex=True, kind="structural", shape_rule=_concatenate_rule,
    impl=lambda *xs, axis: np.concatenate(xs, axis=axis),
    emit=lambda out, args, avals, out_aval, *, axis: [
        f"{out} = np.concatenate(({', '.join(args)},), axis={axis})"],
    vjp=_concatenate_vjp,
    sympy=lambda sp, *xs, axis: np.concatenate(xs, axis=axis),
    element=_concatenate_element, linear=True, torch_name="CatBackward0",
    batch=lambda b, args, flags, *, axis: (b.bind(
        concatenate_p, [x if f else b.with_batch(x) for x, f in zip(args, flags)],
        axis=axis + 1), True))


def _cumsum_rule(x: Aval, *, axis: int) -> Aval:
    require("cumsum", (x,), FLOAT)
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
    return reverse(apply(cumsum_p, reverse(g, axis), axis=axis), axis)


# computes sums, so an array primitive (not structural), though linear
cumsum_p = register(
    name="cumsum", complex=True, kind="array", shape_rule=_cumsum_rule,
    impl=lambda x, axis: np.cumsum(x, axis=axis), emit=_cumsum_emit,
    vjp=lambda g, ans, x, axis: (_reverse_cumsum(g, axis),),
    sympy=lambda sp, x, axis: np.cumsum(x, axis=axis), linear=True,
    batch=lambda b, args, flags, *, axis: (b.bind(cumsum_p, args, axis=axis + 1), True))


# ---------------------------------------------------------------------------
# recording helpers


def along(a: Any, axis: int, lo: int, hi: int) -> Any:
    """``a[..., lo:hi, ...]`` with the slice at ``axis``."""
    return strided(a, tuple((lo, hi, 1) if k == axis else (0, d, 1)
                            for k, d in enumerate(shape_of(a))))


def reverse(a: Any, axis: int) -> Any:
    """``a`` with ``axis`` reversed (``np.flip``)."""
    return strided(a, tuple(normalize(slice(None, None, -1) if k == axis else slice(None), n)
                            for k, n in enumerate(shape_of(a))))


