"""Numba lowering of :mod:`symgrad.prims.layer_norm`."""

from __future__ import annotations

from ....core.ir import F32, Aval
from ....prims import layer_norm as P
from ..scope import dtype_arg
from .table import lower


def _layer_norm_emit(out: str, args: list[str], avals: list[Aval], out_aval: Aval, *,
                     ndim: int, eps: float, weight: bool, bias: bool) -> list[str]:
    """Per row (the last ``ndim`` axes, flattened): the mean (the sum in the row's
    order), the biased variance of the deviations from it, ``rstd``, and each deviation
    times ``rstd`` (times the weight, plus the bias). A float32 row is float32
    arithmetic, as the interpreter's."""
    x, aval = args[0], avals[0]
    num = (lambda v: f"np.float32({v})") if aval.dtype == F32 else str
    n = " * ".join(f"{x}.shape[{k}]" for k in range(aval.ndim - ndim, aval.ndim))
    m = " * ".join(f"{x}.shape[{k}]" for k in range(aval.ndim - ndim)) or "1"
    r, o, i, j, s, d, mean, rstd, count = (f"{out}_{name}" for name in (
        "rows", "all", "i", "j", "s", "d", "mean", "rstd", "n"))
    affine = [f"{out}_{name}" for name, given in (("w", weight), ("b", bias)) if given]
    value = f"({r}[{i}, {j}] - {mean}) * {rstd}"
    if weight:
        value = f"{value} * {affine[0]}[{j}]"
    if bias:
        value = f"{value} + {affine[-1]}[{j}]"
    return [
        f"{r} = np.ascontiguousarray({x}).reshape(({m}, {n}))",
        *(f"{name} = np.ascontiguousarray({a}).reshape({n})"
          for name, a in zip(affine, args[1:])),
        f"{o} = np.empty({r}.shape{dtype_arg(out_aval.dtype)})",
        f"{count} = {num(f'{r}.shape[1]')}",
        f"for {i} in range({r}.shape[0]):",
        f"    {s} = {num('0.0')}",
        f"    for {j} in range({r}.shape[1]):",
        f"        {s} += {r}[{i}, {j}]",
        f"    {mean} = {s} / {count}",
        f"    {s} = {num('0.0')}",
        f"    for {j} in range({r}.shape[1]):",
        f"        {d} = {r}[{i}, {j}] - {mean}",
        f"        {s} += {d} * {d}",
        f"    {rstd} = {num('1.0')} / np.sqrt({s} / {count} + {num(repr(float(eps)))})",
        f"    for {j} in range({r}.shape[1]):",
        f"        {o}[{i}, {j}] = {value}",
        f"{out} = {o}.reshape({x}.shape)",
    ]


lower(P.layer_norm_p, _layer_norm_emit)
