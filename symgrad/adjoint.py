"""Reverse-mode adjoint of a graph, as a graph.

:func:`adjoint` appends to a forward graph the equations of its reverse sweep:
for each equation, last to first, the primitive's VJP rule turns the
cotangent of the output into cotangents of the inputs. Cotangents of a value
used several times (fan-out) are summed; cotangents of broadcast operands are
summed back to the operand's shape (:func:`symgrad.ops.unbroadcast`).

For outputs that are not scalars the graph gets a cotangent input ``ct`` of the
output's shape, so that what it returns is the gradient of ``sum(y * ct)``:
exactly PyTorch's ``y.backward(gradient)`` and SymPy's gradient of that sum.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import ops
from .ir import FLOAT, Graph, Var
from .trace import Trace, Tracer, recording


def active_vars(graph: Graph, wrt: Sequence[int]) -> set[int]:
    """ids of the float values that depend on the inputs ``wrt``."""
    active = {id(graph.inputs[i]) for i in wrt}
    for e in graph.eqns:
        if e.out.dtype == FLOAT and any(id(a) in active for a in e.inputs if isinstance(a, Var)):
            active.add(id(e.out))
    return active


def adjoint(graph: Graph, wrt: Sequence[int], seed_inputs: bool) -> Graph:
    """The forward+adjoint graph of ``graph`` with respect to ``graph.inputs[wrt]``.

    Inputs: ``graph``'s inputs, then (if ``seed_inputs``) one cotangent per output.
    Outputs: ``graph``'s outputs, then the cotangent of each input in ``wrt``.
    Without ``seed_inputs`` the graph must have one scalar output, seeded with 1.
    """
    if not seed_inputs and (len(graph.outputs) != 1 or graph.outputs[0].shape != ()):
        raise ValueError("grad can be implicitly created only for scalar outputs")
    trace = Trace(graph.eqns, graph.consts)
    seeds: list[Any]
    if seed_inputs:
        ct_vars = [Var(o.aval, "ct") for o in graph.outputs]
        seeds = [Tracer(v, trace) for v in ct_vars]
    else:
        ct_vars, seeds = [], [np.float64(1.0)]

    active = active_vars(graph, wrt)
    cts: dict[int, Any] = {}

    def accumulate(v: Var, ct: Any) -> None:
        ct = ops.unbroadcast(ct, v.shape)
        cts[id(v)] = ct if id(v) not in cts else ops.add(cts[id(v)], ct)

    def primal(a: Any) -> Any:
        # literals as numpy scalars: VJP rules computing on them (1/0 where the seed
        # meets a literal) follow IEEE arithmetic as the kernels do, never raise
        return Tracer(a, trace) if isinstance(a, Var) else np.asarray(a.value)[()]

    with recording(trace), np.errstate(all="ignore"):
        for out, seed in zip(graph.outputs, seeds):
            if isinstance(out, Var) and id(out) in active:
                accumulate(out, seed)
        for eqn in reversed(graph.eqns):
            g = cts.pop(id(eqn.out), None)
            if g is None:
                continue
            trace.origin = eqn
            in_cts = eqn.prim.vjp(g, Tracer(eqn.out, trace), *map(primal, eqn.inputs),
                                  **eqn.params)
            for a, ct in zip(eqn.inputs, in_cts, strict=True):
                if ct is not None and isinstance(a, Var) and id(a) in active:
                    accumulate(a, ct)
            trace.origin = None
        # an input the outputs do not depend on gets zeros
        grads = [cts.get(id(graph.inputs[i])) for i in wrt]
        grads = [ops.broadcast_to(0.0, graph.inputs[i].shape) if g is None else g
                 for g, i in zip(grads, wrt)]
        return trace.to_graph([*graph.inputs, *ct_vars], [*graph.outputs, *grads], graph.name)
