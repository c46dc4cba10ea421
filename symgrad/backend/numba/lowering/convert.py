"""Numba lowering of :mod:`symgrad.prims.convert`."""

from __future__ import annotations

from typing import Any

from ....core.ir import Aval
from ....prims import convert as P
from .table import lower


def _convert_emit(out: str, args: list[str], avals: Any, out_aval: Aval, *,
                  dtype: str) -> list[str]:
    if out_aval.shape:
        return [f"{out} = {args[0]}.astype(np.{dtype})"]
    return [f"{out} = np.{dtype}({args[0]})"]


lower(P.convert_p, _convert_emit, cheap=True)
