"""The numpy reference interpreter: every backend is compared against it.

It holds only the values still to be read (each is dropped after its last
use, :func:`symgrad.core.ir.dead_after`); :func:`peak_bytes` estimates that
working set from the graph, before anything runs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .ir import Atom, Aval, Graph, IRError, Literal, dead_after


def interpret(graph: Graph, *args: Any) -> list[Any]:
    """Evaluate ``graph`` with each primitive's numpy implementation.

    Floating-point errors follow numpy's arithmetic silently (``inf``/``nan``),
    as the compiled kernels do with ``error_model="numpy"``.
    """
    if len(args) != len(graph.inputs):
        raise TypeError(f"{graph.name} takes {len(graph.inputs)} inputs, got {len(args)}")
    env: dict[int, Any] = {}
    for v, x in zip(graph.inputs, args):
        env[id(v)] = _as_value(x, v.aval)
    for v, value in graph.consts:
        env[id(v)] = value

    def read(a: Atom) -> Any:
        return a.value if isinstance(a, Literal) else env[id(a)]

    dead = dead_after(graph)
    with np.errstate(all="ignore"):
        for eqn, done in zip(graph.eqns, dead):
            out = eqn.prim.impl(*map(read, eqn.inputs), **eqn.params)
            env[id(eqn.out)] = _as_value(out, eqn.out.aval)
            for key in done:  # the working set is the live values, not every value made
                del env[key]
    return [_owned(read(a), a.aval) for a in graph.outputs]


def peak_bytes(graph: Graph) -> int:
    """The most bytes :func:`interpret` holds at once in the values of ``graph``:
    its inputs, then each equation's output (and as much again for the
    temporaries of a numpy implementation) while the values still read are alive,
    and at the end the copies of the outputs it returns. Constants are not counted
    (the graph holds them anyway).

        >>> import numpy as np, symgrad as sg
        >>> graph = sg.jit(lambda x: np.sum(np.sin(x) * 2.0)).graph(np.ones(1000))
        >>> peak_bytes(graph)  # x and sin(x) alive while 2 * sin(x) is made
        32000
    """
    def nbytes(a: Atom) -> int:
        return a.aval.size * np.dtype(a.aval.dtype).itemsize

    size = {id(e.out): nbytes(e.out) for e in graph.eqns}  # the caller holds the inputs
    live = sum(nbytes(v) for v in graph.inputs)
    peak = live
    for eqn, done in zip(graph.eqns, dead_after(graph)):
        out = nbytes(eqn.out)
        peak = max(peak, live + 2 * out)
        live += out - sum(size[k] for k in done if k in size)
    outs = sum(nbytes(a) for a in graph.outputs)
    return max(peak, live + outs)


def _as_value(x: Any, aval: Aval) -> Any:
    """0-d values are numpy scalars, the rest arrays of the declared dtype."""
    x = np.asarray(x, dtype=aval.dtype)
    if x.shape != aval.shape:
        raise IRError(f"value of shape {x.shape} where {aval} was declared")
    return x[()] if x.ndim == 0 else x


def _owned(x: Any, aval: Aval) -> Any:
    """A result the caller may keep and mutate: never a view of an input."""
    if aval.ndim == 0:
        return np.dtype(aval.dtype).type(x)
    return np.array(x, dtype=aval.dtype, copy=True)
