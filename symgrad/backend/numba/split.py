"""Large graphs as a chain of bounded kernels: Numba's compile time is superlinear
in a function's length, so a graph of thousands of equations compiles faster as
pieces of a few hundred.

:func:`split` is a pure pass: it cuts a graph's equations, in program order, into
consecutive pieces of at most ``max_eqns`` equations. Each piece is a valid
:class:`~symgrad.core.ir.Graph`: its inputs are the values it reads that were defined
before it (the graph's inputs, earlier pieces' outputs), in definition order; the
array constants it reads are its own ``consts``; its outputs are the values it
defines that a later piece or the graph's outputs need, in definition order. A cut
goes where the fewest values cross it, among the few equations before its nominal
place. A graph at or under the limit is returned whole, unchanged.

:func:`symgrad.backend.program.build` runs the pieces as a chain of kernels.
Kernel source names values canonically (inputs ``x``, ``x_1``, ..., the rest
``a``, ``b``, ...), so pieces of the same structure (the middle of an unrolled
loop) have the same source, hence one compiled kernel.

    >>> import numpy as np, symgrad as sg
    >>> from symgrad.backend.numba.split import split
    >>> def f(x):
    ...     for _ in range(10):
    ...         x = np.sin(x) * 0.5 + x
    ...     return np.sum(x)
    >>> graph = sg.grad(f, backend="numpy").graph(np.ones(3))
    >>> len(graph.eqns), [len(p.eqns) for p in split(graph, 40)]
    (66, [38, 28])
    >>> [len(p.outputs) for p in split(graph, 40)]  # the values the adjoint reads, the gradient
    [7, 1]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.ir import Graph, Var
from .fusion import Plan
from .lowering import between
from .lowering.table import IN_KERNELS

#: Graphs of more equations than this are split, unless their kernel is nearly
#: all fused loops. What Numba's compile time grows with is the arrays a kernel
#: makes (and the loops between them), more than its equations; an unrolled
#: recurrence fused into one loop compiles whole in seconds and runs several times
#: faster than as pieces (docs/benchmarks.md, "Compile time against graph size",
#: from benchmarks/compile_time.py).
SPLIT_ABOVE = 500
#: ... so a graph whose kernel makes at most this many arrays stays whole up to
#: :data:`ALWAYS_SPLIT_ABOVE` equations
FEW_ARRAYS = 64
ALWAYS_SPLIT_ABOVE = 4000
#: Equations per piece of a split graph: small pieces compile fast (their inputs and
#: outputs are arrays that fusion would not have made, so larger pieces cost more
#: than their length says), and pieces of the same structure share one kernel.
MAX_EQNS = 100


def slow_to_compile(graph: Graph, loops: Plan) -> bool:
    """Whether ``graph`` as one kernel would take Numba long to compile (see
    :data:`SPLIT_ABOVE`): many equations, and many arrays among them (``loops``
    is its fusion plan)."""
    n = len(graph.eqns)
    if n <= SPLIT_ABOVE:
        return False
    return n > ALWAYS_SPLIT_ABOVE or len(loops.arrays) > FEW_ARRAYS


def split(graph: Graph, max_eqns: int) -> list[Graph]:
    """``graph`` as consecutive pieces of at most ``max_eqns`` equations each."""
    if max_eqns < 1:
        raise ValueError(f"max_eqns must be at least 1, not {max_eqns}")
    return split_at(graph, cut_points(graph, max_eqns))


def hosted(e: Any, inside: bool = False) -> bool:
    """Whether equation ``e`` runs in Python between kernels: a ``host`` primitive (a Python
    callback) or one no kernel holds (:func:`~.lowering.table.between`: the FFT, complex
    erf), or a loop or branch whose body holds one (the loop then runs on the interpreter);
    ``inside`` a body, the FFT is kernel code (:data:`~.lowering.table.IN_KERNELS`)."""
    return (between(e) is not None and not (inside and e.prim in IN_KERNELS)) or any(
        isinstance(g, Graph) and any(hosted(x, True) for x in g.eqns)
        for v in e.params.values() for g in (v if isinstance(v, tuple) else (v,)))


def host_cuts(graph: Graph) -> list[int]:
    """Cuts that put each equation that runs Python (:func:`hosted`) in a piece of its
    own, which runs in Python between the kernels of the others."""
    cuts: set[int] = set()
    for k, e in enumerate(graph.eqns):
        if hosted(e):
            cuts.update((k, k + 1))
    return sorted(c for c in cuts if 0 < c < len(graph.eqns))


def split_at(graph: Graph, cuts: list[int]) -> list[Graph]:
    """``graph`` cut before each equation index of ``cuts`` (increasing)."""
    if not cuts:
        return [graph]
    bounds = list(zip([0, *cuts], [*cuts, len(graph.eqns)]))
    const_of = {id(v): (v, value) for v, value in graph.consts}
    order = {id(v): k for k, v in enumerate(graph.inputs)}
    order.update((id(e.out), len(order) + k) for k, e in enumerate(graph.eqns))
    last_piece = {}  # id(var) -> the last piece that reads it (len(bounds) for outputs)
    for p, (lo, hi) in enumerate(bounds):
        for e in graph.eqns[lo:hi]:
            for a in e.inputs:
                if isinstance(a, Var):
                    last_piece[id(a)] = p
    for a in graph.outputs:
        if isinstance(a, Var):
            last_piece[id(a)] = len(bounds)

    pieces = []
    for p, (lo, hi) in enumerate(bounds):
        eqns = graph.eqns[lo:hi]
        own = {id(e.out) for e in eqns}
        used: dict[int, Var] = {}
        for e in eqns:
            for a in e.inputs:
                if isinstance(a, Var) and id(a) not in own:
                    used[id(a)] = a
        inputs = sorted((v for v in used.values() if id(v) not in const_of),
                        key=lambda v: order[id(v)])
        consts = tuple(c for c in graph.consts if id(c[0]) in used)
        outputs = tuple(e.out for e in eqns if last_piece.get(id(e.out), -1) > p)
        pieces.append(Graph(tuple(inputs), eqns, outputs, consts, graph.name))
    return pieces


def cut_points(graph: Graph, max_eqns: int, window: int | None = None) -> list[int]:
    """Where :func:`split` cuts: equation indices that start a new piece.

    Each cut lies within ``window`` equations (a tenth of ``max_eqns`` by default)
    before the place that would fill the piece, at the fewest live values (values
    defined before it and read after it); ties go to the later place."""
    n = len(graph.eqns)
    if n <= max_eqns:
        return []
    window = max(1, max_eqns // 10) if window is None else window
    # live[c]: values crossing a cut before equation c (defined before c, read at or after c)
    defined_at = {id(e.out): i for i, e in enumerate(graph.eqns)}
    last_use: dict[int, int] = {}
    for i, e in enumerate(graph.eqns):
        for a in e.inputs:
            if isinstance(a, Var) and id(a) in defined_at:
                last_use[id(a)] = i
    for a in graph.outputs:
        if isinstance(a, Var) and id(a) in defined_at:
            last_use[id(a)] = n
    delta = [0] * (n + 2)
    for key, use in last_use.items():
        delta[defined_at[key] + 1] += 1
        delta[use + 1] -= 1
    live = list(np.cumsum(delta))
    cuts: list[int] = []
    start = 0
    while n - start > max_eqns:
        nominal = start + max_eqns
        best = min(range(max(start + 1, nominal - window), nominal + 1),
                   key=lambda c: (live[c], -c))
        cuts.append(best)
        start = best
    return cuts
