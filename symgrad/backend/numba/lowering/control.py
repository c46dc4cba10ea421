"""Numba lowering of :mod:`symgrad.prims.control`."""

from __future__ import annotations

from typing import Any

from ....core.ir import (
    Aval,
    Graph,
)
from ....prims import control as P
from .table import lower


def _cond_emit(out: str, args: list[str], avals: list[Aval], out_aval: Aval, *,
               true: Graph, false: Graph, scope: Any) -> list[str]:
    pred, *ops = args
    results = [scope.fresh("branch") for _ in true.outputs]
    lines = [f"# cond: {true.name} if {pred} else {false.name}"]
    branches = []
    for g in (true, false):
        r = scope.render(g)
        lines += [f"{name} = {op}" for k, (name, op) in enumerate(zip(r.inputs, ops))
                  if k in r.used and name != op]
        branches.append(r)
    for head, r in zip((f"if {pred}:", "else:"), branches):
        lines.append(head)
        body = r.lines + [f"{res} = {scope.owned(r, k)}" for k, res in enumerate(results)]
        lines += scope.indent(body or ["pass"])
    return lines + [f"{out} = {scope.tuple(results)}"]


lower(P.proj_p, lambda out, args, avals, out_aval, *, part: [f"{out} = {args[0]}[{part}]"])
lower(P.cond_p, _cond_emit)
