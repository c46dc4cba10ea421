"""Primitives that move elements by constant indices: the indexing family.

Six primitives, each declared once below with all its facets:

- ``slice``: a strided view ``x[a:b:c, ...]``, one ``(start, stop, step)`` per axis;
- ``unslice``: its adjoint, ``x`` written into zeros of a shape at such a slice;
- ``gather``: ``np.take(x, indices, axis)`` with constant ``indices``;
- ``scatter_add``: its adjoint, ``out[..., indices[k], ...] += x[..., k, ...]``
  into zeros (repeated indices accumulate; ``neg_zero=True``: into -0.0, the identity
  of ``+`` that keeps a -0.0 added, for ``sg.at``);
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
from ..core.ir import FLOAT, Aval, float_of
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


def _slice_impl(x: Any, index: tuple[Triple, ...]) -> Any:
    return x[tuple(_py_slice(*t) for t in index)]


def _unslice_impl(x: Any, shape: tuple[int, ...], index: tuple[Triple, ...]) -> Any:
    out = np.zeros(shape, dtype=np.asarray(x).dtype)
    out[tuple(_py_slice(*t) for t in index)] = x
    return out


slice_p = register(
    name="slice", complex=True, kind="structural", shape_rule=_slice_rule, impl=_slice_impl,
    vjp=lambda g, ans, x, index: (unslice(g, x.shape, index),),
    sympy=lambda sp, x, index: _slice_impl(x, index),
    view=True, linear=True,
    batch=lambda b, args, flags, *, index: (
        b.bind(slice_p, args, index=((0, b.size, 1), *index)), True))


def _unslice_rule(x: Aval, *, shape: tuple[int, ...], index: tuple[Triple, ...]) -> Aval:
    if _slice_rule(Aval(shape, x.dtype), index=index).shape != x.shape:
        raise ShapeError(f"unslice: {x} does not fill slice {index} of shape {shape}")
    return Aval(tuple(shape), x.dtype)


unslice_p = register(
    name="unslice", complex=True, kind="structural", shape_rule=_unslice_rule, impl=_unslice_impl,
    vjp=lambda g, ans, x, shape, index: (apply(slice_p, g, index=index),),
    sympy=lambda sp, x, shape, index: _unslice_impl(x, shape, index), linear=True,
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


def _take(x: Any, indices: tuple[int, ...], axis: int) -> Any:
    return np.take(x, np.asarray(indices, dtype=int), axis=axis)


gather_p = register(
    name="gather", complex=True, kind="structural", shape_rule=_gather_rule, impl=_take,
    vjp=lambda g, ans, x, indices, axis: (
        apply(scatter_add_p, g, indices=indices, axis=axis, size=x.shape[axis]),),
    sympy=lambda sp, x, indices, axis: _take(x, indices, axis),
    linear=True,
    batch=lambda b, args, flags, *, indices, axis: (
        b.bind(gather_p, args, indices=indices, axis=axis + 1), True))


def _scatter_add_rule(x: Aval, *, indices: tuple[int, ...], axis: int, size: int,
                      neg_zero: bool = False) -> Aval:
    if not 0 <= axis < x.ndim or x.shape[axis] != len(indices):
        raise ShapeError(f"scatter_add: {len(indices)} indices along axis {axis} of {x}")
    if indices and not 0 <= min(indices) <= max(indices) < size:
        raise ShapeError(f"scatter_add: indices {indices} are out of range of size {size}")
    return Aval(_moved(x.shape, axis, size), x.dtype)


def _scatter_add_impl(x: Any, indices: tuple[int, ...], axis: int, size: int,
                      neg_zero: bool = False) -> Any:
    x = np.asarray(x)
    # onto -0.0 (neg_zero): -0.0 + v is v for every v, 0.0 + -0.0 is +0.0
    out = np.full(_moved(x.shape, axis, size), -0.0 if neg_zero else 0, dtype=x.dtype)
    # np.add.at adds in the order of the indices, as the kernel's loop: the same bits
    np.add.at(out, (slice(None),) * axis + (np.asarray(indices, dtype=np.intp),), x)
    return out


# repeated indices add up, so an array primitive (not structural), though linear
scatter_add_p = register(
    name="scatter_add", complex=True, kind="array", shape_rule=_scatter_add_rule,
    impl=_scatter_add_impl,
    vjp=lambda g, ans, x, indices, axis, size, **_: (
        apply(gather_p, g, indices=indices, axis=axis),),
    sympy=lambda sp, x, indices, axis, size, **_: _scatter_add_impl(x, indices, axis, size),
    linear=True,
    batch=lambda b, args, flags, *, indices, axis, size, **kw: (
        b.bind(scatter_add_p, args, indices=indices, axis=axis + 1, size=size, **kw), True))


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


concatenate_p = register(
    name="concatenate", complex=True, kind="structural", shape_rule=_concatenate_rule,
    impl=lambda *xs, axis: np.concatenate(xs, axis=axis),
    vjp=_concatenate_vjp,
    sympy=lambda sp, *xs, axis: np.concatenate(xs, axis=axis), linear=True,
    batch=lambda b, args, flags, *, axis: (b.bind(
        concatenate_p, [x if f else b.with_batch(x) for x, f in zip(args, flags)],
        axis=axis + 1), True))


def _cumsum_rule(x: Aval, *, axis: int) -> Aval:
    require("cumsum", (x,), FLOAT)
    if not 0 <= axis < x.ndim:
        raise ShapeError(f"cumsum: axis {axis} is not an axis of {x}")
    return x


def _reverse_cumsum(g, axis: int):
    """``sum(g[k:])`` at each ``k`` along ``axis``: each prefix sum's cotangent flows back."""
    return reverse(apply(cumsum_p, reverse(g, axis), axis=axis), axis)


# computes sums, so an array primitive (not structural), though linear
cumsum_p = register(
    name="cumsum", complex=True, kind="array", shape_rule=_cumsum_rule,
    impl=lambda x, axis: np.cumsum(x, axis=axis),
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


