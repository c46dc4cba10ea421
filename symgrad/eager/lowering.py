"""A recorded structure as an IR graph, and its optimized adjoint (:mod:`.backward`).

:func:`forward_graph` writes the nodes of a recorded structure as a
:class:`~symgrad.core.ir.Graph` (leaves, data and retained non-leaves as inputs, the
last node's value as output); :func:`lower_structure` differentiates it, reading the
forward's saved values where :mod:`.replay` says it may.
"""

from __future__ import annotations

from ..core.ir import C128, F32, FLOAT, Aval, Eqn, Graph, Var, freeze_params
from ..prims.elementwise import add_p
from ..transforms import pipeline
from . import cast_rounding, replay
from .graph import ROUNDED, Node


def forward_graph(nodes: list[Node], plan: list, leaves: list, retained: list[int],
                  f32: bool = False) -> tuple[Graph, list[Var]]:
    """The recorded structure as a graph. Inputs: leaves, data, one zero per retained
    non-leaf (added to it, so its gradient is theirs); output: the last node's value.
    Also each node's own variable (before that zero is added), in node order. Its
    floating values are float64, or float32 with ``f32`` (:func:`all_float32`)."""
    real = F32 if f32 else FLOAT
    inputs = [Var(Aval(t._value.shape, C128 if t._value.dtype.kind == "c" else real),
                  f"leaf{k}") for k, t in enumerate(leaves)]
    data_vars: dict[int, Var] = {}
    for _, refs in plan:
        for r in refs:
            if isinstance(r, tuple) and r[0] == "data" and r[1] not in data_vars:
                # float32 data enter converted; complex data stay complex (a real Var
                # would cast away their imaginary part)
                kind = r[3] if r[3] in ("bool", C128) else real
                data_vars[r[1]] = Var(Aval(r[2], kind), f"data{r[1]}")
    inputs += [data_vars[k] for k in sorted(data_vars)]
    deltas = {k: Var(Aval(nodes[k].aval.shape, C128 if nodes[k].aval.dtype == C128 else real),
                     f"retained{j}")
              for j, k in enumerate(retained)}
    outs: list[Var] = []
    own: list[Var] = []
    eqns: list[Eqn] = []
    for k, (n, (_, refs)) in enumerate(zip(nodes, plan)):
        atoms = [a if r is None else
                 outs[r[1]] if r[0] == "eqn" else
                 inputs[r[1]] if r[0] == "leaf" else data_vars[r[1]]
                 for a, r in zip(n.inputs, refs)]
        aval = n.aval if n.aval.dtype == real or n.aval.dtype not in (F32, FLOAT) else \
            Aval(n.aval.shape, real)  # (a tuple: an autograd.Function's results)
        v = Var(aval)
        eqns.append(Eqn(n.prim, tuple(atoms), v, freeze_params(n.params)))
        if n in ROUNDED and not f32:  # a cast: its value and gradient rounded there
            v = cast_rounding.emit(eqns, v, ROUNDED[n])
        own.append(v)
        if k in deltas:  # v + 0: the cotangent of this input is the cotangent of v
            v2 = Var(aval)
            eqns.append(Eqn(add_p, (v, deltas[k]), v2))
            v = v2
        outs.append(v)
    graph = Graph(tuple(inputs + list(deltas.values())), tuple(eqns), (outs[-1],), (),
                  "backward")
    return graph, own


def lower_structure(nodes: list[Node], plan: list, leaves: list, retained: list[int],
           seeded: bool, fed: tuple[int, ...] = (), f32: bool = False
           ) -> Graph | tuple[Graph, tuple[int, ...]]:
    """The optimized adjoint graph of a recorded structure (:func:`forward_graph`, and
    the cotangent input if ``seeded``, then the saved values of the nodes at ``fed``:
    :func:`.replay.lower`); outputs: the gradients of leaves and retained non-leaves."""
    graph, own = forward_graph(nodes, plan, leaves, retained, f32)
    first = len(graph.inputs) - len(retained)
    wrt = [*range(len(leaves)), *range(first, len(graph.inputs))]
    if fed:
        return replay.lower(graph, own, wrt, seeded, fed)
    return pipeline.derive(graph, wrt, seeded, keep_primal=False)
