"""Numba lowering of :mod:`symgrad.prims.norms`."""

from __future__ import annotations

from ....core.ir import Aval
from ....prims import norms as P
from .table import lower, transposed


def _norm2_emit(out: str, args: list[str], avals: list[Aval], out_aval: Aval, *,
                axes: tuple[int, ...]) -> list[str]:
    """Per group (a row of the reduced axes, moved last): the largest magnitude (a nan
    sticks), then the sum of squares of the elements divided by it."""
    (x,), (aval,) = args, avals
    if not axes:
        return [f"{out} = np.abs({x})"]
    kept = [k for k in range(aval.ndim) if k not in axes]
    perm = (*kept, *axes)
    rows = transposed(x, perm)
    m = " * ".join(f"{x}.shape[{k}]" for k in kept) or "1"
    n = " * ".join(f"{x}.shape[{k}]" for k in axes)
    # temporaries carry the output's name: printer names are letters and digits
    r, o, i, j, top, s, t, v = (f"{out}_{t}" for t in
                                ("rows", "all", "i", "j", "top", "s", "t", "v"))
    lines = [
        f"{r} = np.ascontiguousarray({rows}).reshape(({m}, {n}))",
        f"{o} = np.empty({r}.shape[0])",
        f"for {i} in range({r}.shape[0]):",
        f"    {top} = 0.0",
        f"    for {j} in range({r}.shape[1]):",
        f"        {v} = abs({r}[{i}, {j}])",
        f"        if {v} > {top} or {v} != {v}:",
        f"            {top} = {v}",
        f"    {s} = {top} if 0.0 < {top} < np.inf else 1.0",
        f"    {t} = 0.0",
        f"    for {j} in range({r}.shape[1]):",
        f"        {v} = {r}[{i}, {j}] / {s}",
        f"        {t} += {v} * {v}",
        f"    {o}[{i}] = np.sqrt({t}) * {s}",
    ]
    if kept:
        shape = "".join(f"{x}.shape[{k}], " for k in kept)
        return [*lines, f"{out} = {o}.reshape(({shape}))"]
    return [*lines, f"{out} = {o}[0]"]


lower(P.norm2_p, _norm2_emit)
