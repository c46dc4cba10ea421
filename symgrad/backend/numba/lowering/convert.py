"""Numba lowering of :mod:`symgrad.prims.convert`: ``x.astype(np.<dtype>)`` (of a 0-d
value, ``np.<dtype>(x.item())``: Numba's ``np.float32`` refuses a 0-d array), and a
complex value to a real dtype is its real part (``np.real`` first: Numba refuses the
cast itself, numpy's casts drop the imaginary part with a warning)."""

from __future__ import annotations

from typing import Any

from ....core.ir import COMPLEXES, Aval
from ....prims import convert as P
from .table import lower


def _convert_emit(out: str, args: list[str], avals: Any, out_aval: Aval, *,
                  dtype: str) -> list[str]:
    (x,), (aval,) = args, avals
    if aval.dtype in COMPLEXES and dtype not in COMPLEXES:
        x = f"np.real({x})" if out_aval.shape else f"{x}.real"
    if out_aval.shape:
        return [f"{out} = {x}.astype(np.{dtype})"]
    return [f"{out} = np.{dtype}({x}.item())"]  # (a number, or a 0-d array: a callback's)


lower(P.convert_p, _convert_emit, cheap=True)
