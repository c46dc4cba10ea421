"""Numba lowering of :mod:`symgrad.prims.softmax`."""

from __future__ import annotations

from ....core.ir import F32, Aval
from ....prims import softmax as P
from ..scope import dtype_arg
from .table import lower, transposed


def _log_softmax_emit(out: str, args: list[str], avals: list[Aval], out_aval: Aval, *,
                      axis: int) -> list[str]:
    """Per row (the axis moved last): the maximum (a nan sticks), the shift by it, the
    sums of the exponents of the ties and of the others (the interpreter's terms, in the
    row's order), and the shifted values less the log of their sum. A float32 row is
    float32 arithmetic, as the interpreter's."""
    (x,), (aval,) = args, avals
    num = (lambda v: f"np.float32({v})") if out_aval.dtype == F32 else str
    r, o, i, j, top, s, e, others, ties, lse = (f"{out}_{n}" for n in (
        "rows", "all", "i", "j", "top", "s", "e", "others", "ties", "lse"))
    lines = [
        *_row_maxima(out, x, aval, axis, out_aval),
        f"    {others} = {num('0.0')}",
        f"    {ties} = {num('0.0')}",
        f"    for {j} in range({r}.shape[1]):",
        f"        {s} = {r}[{i}, {j}] - {top}",
        f"        {e} = np.exp({s})",
        f"        if {s} == 0:",
        f"            {ties} += {e}",
        "        else:",
        f"            {others} += {e}",
        f"    {lse} = np.log1p({others} + ({ties} - {num('1.0')}))",
        f"    for {j} in range({r}.shape[1]):",
        f"        {o}[{i}, {j}] = ({r}[{i}, {j}] - {top}) - {lse}",
    ]
    return [*lines, _rows_back(out, x, aval, axis)]


lower(P.log_softmax_p, _log_softmax_emit)


def _softmax_emit(out: str, args: list[str], avals: list[Aval], out_aval: Aval, *,
                  axis: int) -> list[str]:
    """Per row (the axis moved last): the maximum (a nan sticks), the exponents of the
    values less it, their sum in the row's order, and each exponent over the sum. A
    float32 row is float32 arithmetic, as the interpreter's."""
    (x,), (aval,) = args, avals
    num = (lambda v: f"np.float32({v})") if out_aval.dtype == F32 else str
    r, o, i, j, top, e, t = (f"{out}_{n}" for n in ("rows", "all", "i", "j", "top", "e", "t"))
    return [
        *_row_maxima(out, x, aval, axis, out_aval),
        f"    {t} = {num('0.0')}",
        f"    for {j} in range({r}.shape[1]):",
        f"        {e} = np.exp({r}[{i}, {j}] - {top})",
        f"        {o}[{i}, {j}] = {e}",
        f"        {t} += {e}",
        f"    for {j} in range({r}.shape[1]):",
        f"        {o}[{i}, {j}] = {o}[{i}, {j}] / {t}",
        _rows_back(out, x, aval, axis),
    ]


lower(P.softmax_p, _softmax_emit)


def _perm(aval: Aval, axis: int) -> tuple[int, ...]:
    return (*(k for k in range(aval.ndim) if k != axis), axis)


def _row_maxima(out: str, x: str, aval: Aval, axis: int, out_aval: Aval) -> list[str]:
    """``x``'s rows along ``axis`` as the matrix ``{out}_rows``, its result ``{out}_all``
    (empty), and the head of a loop over the rows that finds each one's maximum
    ``{out}_top`` (a nan sticks; no row when the axis is empty)."""
    perm = _perm(aval, axis)
    m = " * ".join(f"{x}.shape[{k}]" for k in perm[:-1]) or "1"
    r, o, i, j, top = (f"{out}_{n}" for n in ("rows", "all", "i", "j", "top"))
    return [
        f"{r} = np.ascontiguousarray({transposed(x, perm)}).reshape(({m}, {x}.shape[{axis}]))",
        f"{o} = np.empty({r}.shape{dtype_arg(out_aval.dtype)})",
        f"for {i} in range({r}.shape[0] if {r}.shape[1] else 0):",
        f"    {top} = {r}[{i}, 0]",
        f"    for {j} in range(1, {r}.shape[1]):",
        f"        if {r}[{i}, {j}] > {top} or {r}[{i}, {j}] != {r}[{i}, {j}]:",
        f"            {top} = {r}[{i}, {j}]",
    ]


def _rows_back(out: str, x: str, aval: Aval, axis: int) -> str:
    """``{out}``: the matrix ``{out}_all`` of rows put back in ``x``'s shape."""
    perm, o = _perm(aval, axis), f"{out}_all"
    if perm == tuple(range(aval.ndim)):
        return f"{out} = {o}.reshape({x}.shape)"
    shape = "".join(f"{x}.shape[{k}], " for k in perm)
    back = tuple(perm.index(k) for k in range(aval.ndim))
    return f"{out} = np.ascontiguousarray({transposed(f'{o}.reshape(({shape}))', back)})"


def _nll_emit(out: str, args: list[str], avals: list[Aval], out_aval: Aval, *, axis: int,
              reduction: str) -> list[str]:
    """Per sample (the axis moved last): the value at its target class (the sum of the
    row's terms there, 0 elsewhere, in order), times its weight, negated; then their sum
    in order (over the total for a mean)."""
    (x, target, w, total), aval = args, avals[0]
    num = (lambda v: f"np.float32({v})") if out_aval.dtype == F32 else str
    perm = (*(k for k in range(aval.ndim) if k != axis), axis)
    m = " * ".join(f"{x}.shape[{k}]" for k in perm[:-1]) or "1"
    r, tg, ws, o, i, j, p, t = (f"{out}_{n}" for n in (
        "rows", "target", "w", "all", "i", "j", "p", "t"))
    lines = [
        f"{r} = np.ascontiguousarray({transposed(x, perm)}).reshape(({m}, {x}.shape[{axis}]))",
        f"{tg} = np.ascontiguousarray({target}).reshape({m})",
        f"{ws} = np.ascontiguousarray({w}).reshape({m})",
        f"{o} = np.empty({r}.shape[0]{dtype_arg(out_aval.dtype)})",
        f"for {i} in range({r}.shape[0]):",
        f"    {p} = {num('0.0')}",
        f"    for {j} in range({r}.shape[1]):",
        f"        if {tg}[{i}] == {j}:",
        f"            {p} += {r}[{i}, {j}]",
        f"    {o}[{i}] = {num('0.0')} - {p} * {ws}[{i}]",
    ]
    if reduction == "none":
        kept = "".join(f"{x}.shape[{k}], " for k in perm[:-1])
        return [*lines, f"{out} = {o}.reshape(({kept}))" if kept else f"{out} = {o}[0]"]
    lines += [f"{t} = {num('0.0')}", f"for {i} in range({o}.shape[0]):", f"    {t} += {o}[{i}]"]
    if reduction == "sum":
        return [*lines, f"{out} = {t}"]
    # (a float32 quotient computed in float64 and rounded once is float32's own quotient)
    return [*lines, f"{out} = np.float32({t} / {total})" if out_aval.dtype == F32
            else f"{out} = {t} / {total}"]


lower(P.nll_loss_p, _nll_emit)
