"""Numba lowering of :mod:`symgrad.prims.indexing`."""

from __future__ import annotations

import numpy as np

from ....core.index_text import term
from ....core.ir import BOOL, COMPLEXES, Aval
from ....prims import indexing as P
from ....prims.indexing import Triple
from .table import lower


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


def _sliced(i: str, triple: Triple) -> str:
    """The position in the sliced array of element ``i`` of the slice."""
    start, _, step = triple
    if step == 1:
        return f"{i} + {start}" if start else i
    if step == -1:
        return f"{start} - {term(i)}"
    return f"{start} + {term(i)} * {step}"


def _dtype_text(aval: Aval) -> str:
    """The dtype argument of a new array in the kernel: float64 is numpy's default."""
    return (", dtype=np.bool_" if aval.dtype == BOOL
            else f", dtype=np.{aval.dtype}" if aval.dtype in COMPLEXES else "")


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


def _scatter_add_emit(out, args, avals, out_aval, *, indices, axis, size,
                      neg_zero=False) -> list[str]:
    (x,), (aval,) = args, avals
    shape = _shape_text(x, aval.shape, axis, size)
    lines = [f"{out} = np.full({shape}, -0.0{_dtype_text(out_aval)})" if neg_zero
             else f"{out} = np.zeros({shape}{_dtype_text(out_aval)})"]
    if indices:
        at = ":, " * axis
        lines += [f"for i0, i1 in enumerate({_index_source(indices)}):",
                  f"    {out}[{at}i1] += {x}[{at}i0]"]
    return lines


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


def _cumsum_emit(out, args, avals, out_aval, *, axis) -> list[str]:
    (x,), (aval,) = args, avals
    if aval.ndim == 1:
        return [f"{out} = np.cumsum({x})"]
    at = ":, " * axis
    return [f"{out} = {x}.copy()",
            f"for i0 in range({out}.shape[{axis}] - 1):",
            f"    {out}[{at}i0 + 1] += {out}[{at}i0]"]


lower(P.slice_p, lambda out, args, avals, out_aval, *, index: [
        f"{out} = {args[0]}[{_slice_text(index, avals[0].shape)}]"],
      element=lambda at, avals, out, *, index: [
        ([], 0, tuple(_sliced(i, t) for i, t in zip(at, index)))])
lower(P.unslice_p, _unslice_emit, element=_unslice_element)
lower(P.gather_p, _gather_emit)
lower(P.scatter_add_p, _scatter_add_emit)
lower(P.concatenate_p, lambda out, args, avals, out_aval, *, axis: [
        f"{out} = np.concatenate(({', '.join(args)},), axis={axis})"], element=_concatenate_element)
lower(P.cumsum_p, _cumsum_emit)
