"""Numba lowering of :mod:`symgrad.prims.reductions`: reductions as whole-array calls
(to a scalar) or loop nests, and the moves ``broadcast_to`` (read through by index in
fused loops), ``reshape`` and ``transpose`` (a view ``c.T`` that BLAS reads as it is)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ....core.index_text import broadcast_index, loop_nest
from ....core.ir import COMPLEXES, Aval
from ....prims import reductions as R
from ..scope import dtype_arg, rounded_sum, sum_dtype_arg
from .table import lower, transposed


def _reduction_emit(whole: str, init: str, update: list[str], finish: bool = False,
                    exact: bool = False) -> Callable:
    """Numba emit: ``whole`` for a reduction to a scalar, loops otherwise.

    ``update`` lines use ``{acc}`` (the output element) and ``{x}`` (the input
    element); ``finish`` divides by the count (mean). The result has the IR's dtype (a
    float32 sum is float32: np.dot of it and a float32 matrix compiles). A float32 or
    complex64 sum over axes without the last adds in its dtype, slice after slice as
    numpy does (the same bits); over the last axis, which numpy sums pairwise, in
    float64 (complex128), rounded once at the end, as the fused loops' sums. ``exact``:
    the update loses nothing in any dtype (max, min).
    """
    def emit(out: str, args: list[str], avals: list[Aval], out_aval: Aval, *, axes) -> list[str]:
        (x,), (aval,) = args, avals
        if not axes:
            return [f"{out} = {x}"]
        if not out_aval.shape:
            return [f"{out} = {whole.format(x)}"]
        kept = [k for k in range(aval.ndim) if k not in axes]
        shape = "".join(f"{x}.shape[{k}], " for k in kept)
        start = f"complex({init}, 0.0)" if out_aval.dtype in COMPLEXES else init
        wide = not exact and aval.ndim - 1 in axes
        kind = sum_dtype_arg(out_aval.dtype) if wide else dtype_arg(out_aval.dtype)
        lines = [f"{out} = np.full(({shape}), {start}{kind})"]
        nest, depth = loop_nest([f"{x}.shape[{k}]" for k in range(aval.ndim)])
        lines += nest
        pad = "    " * depth
        acc = f"{out}[{', '.join(f'i{k}' for k in kept)}]"
        elem = f"{x}[{', '.join(f'i{k}' for k in range(aval.ndim))}]"
        lines += [pad + u.format(acc=acc, x=elem) for u in update]
        if finish:
            count = " * ".join(f"{x}.shape[{k}]" for k in axes)
            lines.append(f"{out} /= {count}")
        return lines + (rounded_sum(out, out_aval.dtype, True) if wide else [])
    return emit


def _count_emit(out, args, avals, out_aval, *, axes) -> list[str]:
    sizes = " * ".join(str(avals[0].shape[a]) for a in axes) or "1"  # named sizes in kernels
    return [f"{out} = float({sizes})"]


def _extremum_weights_emit(out, args, avals, out_aval, *, axes, largest) -> list[str]:
    """One row per group of the reduced axes: find the extremum (nan sticks, as
    in numpy's max), count its ties, give each 1/k."""
    (x,), (aval,) = args, avals
    if not axes:
        return [f"{out} = np.ones_like({x})" if aval.shape else f"{out} = 1.0"]
    kept = [k for k in range(aval.ndim) if k not in axes]
    perm = (*kept, *axes)
    identity = perm == tuple(range(aval.ndim))
    rows = transposed(x, perm)
    m = " * ".join(f"{x}.shape[{k}]" for k in kept) or "1"
    n = " * ".join(f"{x}.shape[{k}]" for k in axes)
    better = ">" if largest else "<"
    # temporaries carry the output's name: printer names are letters and digits
    r, w, i, j, k, best = (f"{out}_{t}" for t in ("rows", "w", "i", "j", "k", "best"))
    lines = [
        f"{r} = np.ascontiguousarray({rows}).reshape(({m}, {n}))",
        f"{w} = np.zeros_like({r})",
        f"for {i} in range({r}.shape[0]):",
        f"    {best} = {r}[{i}, 0]",
        f"    for {j} in range(1, {r}.shape[1]):",
        f"        if {r}[{i}, {j}] {better} {best} or {r}[{i}, {j}] != {r}[{i}, {j}]:",
        f"            {best} = {r}[{i}, {j}]",
        f"    {k} = 0",
        f"    for {j} in range({r}.shape[1]):",
        f"        if {r}[{i}, {j}] == {best}:",
        f"            {k} += 1",
        f"    for {j} in range({r}.shape[1]):",
        f"        if {best} != {best}:",
        f"            {w}[{i}, {j}] = np.nan",
        f"        elif {r}[{i}, {j}] == {best}:",
        f"            {w}[{i}, {j}] = 1.0 / {k}",
    ]
    shape = "".join(f"{x}.shape[{k}], " for k in perm)
    grouped = f"{w}.reshape(({shape}))"
    if identity:
        lines.append(f"{out} = {grouped}")
    else:
        inverse = tuple(int(i) for i in np.argsort(perm))
        lines.append(f"{out} = np.ascontiguousarray({transposed(grouped, inverse)})")
    return lines


def _broadcast_to_emit(out, args, avals, out_aval, *, shape) -> list[str]:
    (x,), (aval,) = args, avals
    if not aval.shape:  # (the result's dtype: a float32 number is a float64 in Numba)
        return [f"{out} = np.full({shape!r}, {x}{dtype_arg(out_aval.dtype)})"]
    return [f"{out} = np.broadcast_to({x}, {shape!r})"]


def _reshape_emit(out, args, avals, out_aval, *, shape) -> list[str]:
    (x,), (aval,) = args, avals
    if not aval.shape:
        return [f"{out} = np.full({shape!r}, {x}{dtype_arg(out_aval.dtype)})"]
    if not shape:
        return [f"{out} = {x}.ravel()[0]"]
    return [f"{out} = np.ascontiguousarray({x}).reshape({shape!r})"]


lower(R.sum_p, _reduction_emit("np.sum({})", "0.0", ["{acc} += {x}"]))
lower(R.mean_p, _reduction_emit("np.mean({})", "0.0", ["{acc} += {x}"], finish=True))
lower(R.count_p, _count_emit, shape_only=True)
lower(R.prod_p, _reduction_emit("np.prod({})", "1.0", ["{acc} *= {x}"]))
def _extremum_emit(op: str, init: str) -> Callable:
    """max/min as numpy's loop takes them: the element replaces the extremum so far unless
    that is ``op`` it or nan (numpy's ``scalar_max(acc, x)``: nan sticks, a tie of 0.0 and
    -0.0 gives the later element, where Numba's ``np.max`` keeps the first). numpy's
    SIMD loop over a contiguous whole array picks among such ties by lanes (from 9
    elements on, measured): there its sign of a zero maximum can differ."""
    update = ["acc = {x}", f"if not ({{acc}} {op} acc or {{acc}} != {{acc}}):", "    {acc} = acc"]
    by_axes = _reduction_emit("", init, update, exact=True)

    def emit(out: str, args: list[str], avals: list[Aval], out_aval: Aval, *, axes) -> list[str]:
        if out_aval.shape or not axes:
            return by_axes(out, args, avals, out_aval, axes=axes)
        (x,) = args
        if out_aval.dtype in COMPLEXES:
            return [f"{out} = np.{'max' if op == '>' else 'min'}({x})"]
        flat = f"{out}_flat"
        return [f"{flat} = {x}.ravel()", f"{out} = {flat}[0]",
                f"for {out}_k in range(1, {flat}.size):",
                f"    if not ({out} {op} {flat}[{out}_k] or {out} != {out}):",
                f"        {out} = {flat}[{out}_k]"]
    return emit


lower(R.max_p, _extremum_emit(">", "-np.inf"))
lower(R.min_p, _extremum_emit("<", "np.inf"))
lower(R.extremum_weights_p, _extremum_weights_emit)
lower(R.broadcast_to_p, _broadcast_to_emit,
      element=lambda index, avals, out, shape: [
          ([], 0, broadcast_index(avals[0].shape, shape, index))])
lower(R.reshape_p, _reshape_emit, contiguous=True)
lower(R.transpose_p, lambda out, args, avals, out_aval, *, perm: [
    f"{out} = {transposed(args[0], perm)}"], transposes=True)
