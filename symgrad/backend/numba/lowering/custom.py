"""Numba lowering of :mod:`symgrad.prims.custom`: a ``custom_vjp``/``custom_jvp`` call
renders the user's function inline; a ``pure_callback`` runs between kernels."""

from __future__ import annotations

from typing import Any

from ....core.ir import Aval, Graph
from ....prims import custom as P
from .table import interpreted, lower


def _call_emit(out: str, args: list[str], avals: list[Aval], out_aval: Aval, *, fun: Graph,
               scope: Any, **params: Any) -> list[str]:
    r = scope.render(fun)
    lines = [f"# {params['name']}: {params['rule']} {fun.name}"]
    lines += [f"{name} = {op}" for k, (name, op) in enumerate(zip(r.inputs, args))
              if k in r.used and name != op]
    lines += r.lines
    return lines + [f"{out} = {scope.tuple([scope.owned(r, k) for k in range(len(r.outputs))])}"]


def _callback_emit(out: str, args: list[str], in_avals: list[Aval], out_aval: Aval,
                   **params: Any) -> list[str]:  # (params hold the callback's own avals)
    raise NotImplementedError(
        f"pure_callback {params['name']} cannot run inside a compiled kernel (a loop or "
        "branch holding one runs on the interpreter between kernels, but this kernel "
        "cannot be cut): call it outside the compiled function")


lower(P.call_p, _call_emit)
interpreted(P.callback_p, "it runs the user's Python function (sg.pure_callback): the split "
            "cuts a compiled graph around it and calls its impl in between", _callback_emit)
