"""Numba lowering of :mod:`symgrad.prims.bitwise`."""

from __future__ import annotations

from typing import Any

from ....core.ir import Aval
from ....prims import bitwise as P
from .table import lower

_OPERATORS = {"and": "&", "or": "|", "xor": "^", "left_shift": "<<", "right_shift": ">>"}


def _emit(out: str, args: list[str], avals: Any, out_aval: Aval, *, op: str) -> list[str]:
    if op == "invert":
        return [f"{out} = ~{args[0]}"]
    x, n = args
    if op not in ("left_shift", "right_shift"):
        return [f"{out} = {x} {_OPERATORS[op]} {n}"]
    # numpy shifts every bit out for a count outside 0..63 (C's shift is undefined there)
    inside = f"({n} >= 0) & ({n} < 64)"
    shifted = f"{x} {_OPERATORS[op]} {n}"
    spilled = "0" if op == "left_shift" else f"-({x} < 0)"
    if not out_aval.shape:
        return [f"{out} = ({shifted}) if {inside} else {spilled}"]
    return [f"{out} = np.where({inside}, {shifted}, {spilled})"]


lower(P.bitwise_p, _emit, cheap=True)
