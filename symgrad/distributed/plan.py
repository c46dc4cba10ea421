"""The row split: a graph over data chunked by rows, cut into passes over the chunks.

This module is pure IR (it imports no Dask). :func:`make_plan` takes the
graph of a transformed function (forward and adjoint: the adjoint is IR, so
it splits like the forward) and

- finds the row axes and refuses what mixes rows (:mod:`.rows`);
- pulls values computed from reductions out of the row reductions that read
  them, when that saves passes (:mod:`.hoist`);
- cuts it into passes. A value computed from reductions over rows and then
  used row by row (a loss subtracting the mean over rows; the cotangent
  ``1 / s`` of ``log(s)``, broadcast back over the rows by the adjoint) needs
  those reductions first. Pass ``k`` computes, per chunk, the partial results
  of the row reductions of level ``k`` (and the graph's row-wise outputs of
  stage ``k``); after it the driver combines them (sums, products, maxima,
  minima over the chunks; a mean is a sum divided by the count on the
  driver) and computes the post values of level ``k``. A gradient whose
  cotangents need no reduced value (a sum or mean of per-row losses) takes
  one pass, value and gradient together.

Chunk graphs are typed for all ``n`` rows; :func:`.rows.for_rows` retypes one
for a chunk of ``r`` rows, and the kernel generated from it names the row
count from the chunk's shape, so chunks of every length run one kernel.

    >>> import numpy as np, symgrad as sg
    >>> def plan(loss):  # the gradient's plan, from traces at 100 and 107 rows
    ...     t = sg.grad(loss, backend="numpy")
    ...     w = np.zeros(3)
    ...     return make_plan(t.graph(w, np.ones((100, 3))), t.graph(w, np.ones((107, 3))),
    ...                      data=(1,), n=100, n_probe=107)
    >>> [p.combine for p in plan(lambda w, X: np.log(np.mean(np.exp(X @ w)))).passes]
    [('sum', 'sum')]
    >>> def centered(w, X):  # pass 1: the mean (and X's column sums); pass 2: the rest
    ...     return np.mean((X @ w - np.mean(X @ w)) ** 2)
    >>> [p.combine for p in plan(centered).passes]
    [('sum', 'sum'), ('sum', 'sum')]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..core.check import check
from ..core.ir import Eqn, Graph, Literal, Var
from ..prims import count_p, div_p, sum_p
from .hoist import hoist
from .rows import Rows, RowSplitError, align, classify, combine

__all__ = ["Pass", "Plan", "RowSplitError", "make_plan"]


@dataclass(frozen=True)
class Pass:
    """One pass over the chunks, and the driver's work after it.

    ``graph`` (typed for all rows; see :func:`for_rows`) takes a chunk of each
    data input it reads (the first ``n_data`` inputs), then values from the
    driver; it returns one partial result per row reduction (combined across
    chunks by ``combine``: ``"sum"``, ``"prod"``, ``"max"`` or ``"min"``, into
    the driver value ``totals``), then the row-wise outputs ``rows``. ``after``
    runs on the driver: from the totals and earlier values, the values of this
    level that later passes or the outputs read.
    """

    number: int
    graph: Graph
    n_data: int
    combine: tuple[str, ...]
    totals: tuple[Var, ...]
    rows: tuple[Var, ...]
    after: Graph


@dataclass(frozen=True)
class Plan:
    """How to run a graph over data chunked by rows: ``before`` (on the driver, from the
    parameters and the counts), then each of ``passes``; the graph's outputs are then
    values of the driver, row-wise outputs of a pass, or data inputs."""

    graph: Graph
    rows: Rows
    data: tuple[Var, ...]
    params: tuple[Var, ...]
    counts: tuple[tuple[Var, float], ...]
    before: Graph
    passes: tuple[Pass, ...]
    stage: dict[int, int]


def make_plan(graph: Graph, probe: Graph, data: Sequence[int], n: int,
              n_probe: int) -> Plan:
    """The passes that compute ``graph`` (traced at ``n`` rows) over chunks of the rows
    of its inputs ``data`` (positions in ``graph.inputs``); ``probe`` is the same
    function traced at ``n_probe`` rows (see :func:`align`)."""
    rows = align(graph, probe, n, n_probe)
    data_vars = tuple(graph.inputs[i] for i in data)
    for v in data_vars:
        if rows.axis.get(id(v)) != 0:
            raise RowSplitError(f"Dask argument {v.hint or v} must have its rows on axis 0")
    graph, rows = hoist(graph, rows, data_vars)
    stage, level = classify(graph, rows, data_vars)
    is_data = {id(v) for v in data_vars}
    params = tuple(v for v in graph.inputs if id(v) not in is_data)
    counts = tuple((e.out, float(math.prod(e.inputs[0].shape[a] for a in e.params["axes"])))
                   for e in graph.eqns if e.prim is count_p)
    const_ids = {id(v) for v, _ in graph.consts}
    defined_by = {id(e.out): e for e in graph.eqns}

    reductions: dict[int, list[Eqn]] = {}
    post_eqns: dict[int, list[Eqn]] = {}
    for e in graph.eqns:
        if e.prim is count_p or id(e.out) in rows.axis:
            continue
        row_ins = [a for a in e.inputs if isinstance(a, Var) and id(a) in rows.axis]
        (reductions if row_ins else post_eqns).setdefault(level[id(e.out)], []).append(e)
    row_outputs: dict[int, list[Var]] = {}
    for a in graph.outputs:
        if isinstance(a, Var) and id(a) in defined_by and id(a) in rows.axis:
            if a not in row_outputs.setdefault(stage[id(a)], []):
                row_outputs[stage[id(a)]].append(a)
    n_passes = max([*reductions, *row_outputs, 0])

    passes = []
    for k in range(1, n_passes + 1):
        chunk, totals, kinds, after = _pass(graph, rows, reductions.get(k, []),
                                            row_outputs.get(k, []), defined_by,
                                            data_vars, const_ids)
        passes.append((k, chunk, kinds, totals, tuple(row_outputs.get(k, [])),
                       [*after, *post_eqns.get(k, [])]))
    before_eqns = post_eqns.get(0, [])

    # what each driver step must hand on: values read by the chunks, the outputs, or
    # another step (a step reads only what earlier ones made)
    outside: set[int] = {id(a) for a in graph.outputs if isinstance(a, Var)}
    for _, chunk, *_ in passes:
        outside |= {id(v) for v in chunk.inputs}
    step_eqns = [before_eqns, *(after for *_, after in passes)]
    reads = [{id(a) for e in eqns for a in e.inputs if isinstance(a, Var)}
             for eqns in step_eqns]

    def read_by_others(k: int) -> set[int]:
        return outside.union(*(r for j, r in enumerate(reads) if j != k))

    consts = graph.consts
    before = _step(graph, before_eqns, [*params, *(v for v, _ in counts)], read_by_others(0),
                   consts, "before the passes", totals=False)
    done = []
    for k, chunk, kinds, totals, row_vars, after in passes:
        step = _step(graph, after, list(totals), read_by_others(k), consts, f"after pass {k}")
        done.append(Pass(k, chunk, sum(1 for v in chunk.inputs if id(v) in is_data),
                         kinds, totals, row_vars, step))
    for g in (before, *(part for p in done for part in (p.graph, p.after))):
        check(g)  # each piece is a graph of its own: defined before use, typed
    return Plan(graph, rows, data_vars, params, counts, before, tuple(done), stage)


def _pass(graph: Graph, rows: Rows, reductions: list[Eqn], row_outputs: list[Var],
          defined_by: dict[int, Eqn], data: tuple[Var, ...],
          const_ids: set[int]) -> tuple[Graph, tuple[Var, ...], tuple[str, ...], list[Eqn]]:
    """One pass's chunk graph (partials, then row outputs), the totals of the partials,
    how they combine, and the driver equations that finish them (a mean's division)."""
    partials, totals, kinds, finish = [], [], [], []
    for e in reductions:
        if e.prim.accumulate == "mean":  # chunks sum; the driver divides the total by the count
            total = Var(e.out.aval, e.out.hint)
            axes = e.params["axes"]
            count = float(math.prod(e.inputs[0].shape[a] for a in axes))
            partials.append(Eqn(sum_p, e.inputs, total, e.params, e.origin))
            finish.append(Eqn(div_p, (total, Literal(count)), e.out, origin=e.origin))
        else:
            partials.append(e)
            total = e.out
        totals.append(total)
        kind = combine(e.prim)
        assert kind is not None, e.prim  # classify let only these reductions through
        kinds.append(kind)
    needed: set[int] = set()
    stack = [a for e in partials for a in e.inputs] + list(row_outputs)
    while stack:
        a = stack.pop()
        if isinstance(a, Var) and id(a) in rows.axis and id(a) in defined_by \
                and id(a) not in needed:
            needed.add(id(a))
            stack.extend(defined_by[id(a)].inputs)
    eqns = [e for e in graph.eqns if id(e.out) in needed]
    own = {id(e.out) for e in eqns}
    is_data = {id(v) for v in data}
    inputs: dict[int, Var] = {}
    for e in [*eqns, *partials]:
        for a in e.inputs:
            if isinstance(a, Var) and id(a) not in own and id(a) not in const_ids:
                inputs.setdefault(id(a), a)
    used = [v for v in data if id(v) in inputs] + [v for v in inputs.values()
                                                   if id(v) not in is_data]
    reads = {id(a) for e in [*eqns, *partials] for a in e.inputs}
    consts = tuple(c for c in graph.consts if id(c[0]) in reads)
    chunk = Graph(tuple(used), (*eqns, *partials), (*(e.out for e in partials), *row_outputs),
                  consts, graph.name)
    return chunk, tuple(totals), tuple(kinds), finish


def _step(graph: Graph, eqns: list[Eqn], given: list[Var], read: set[int],
          consts: tuple, title: str, totals: bool = True) -> Graph:
    """A driver step: ``eqns`` (in an order that defines before use) as a graph of the
    values they read (``given`` first) and of those they define that someone else
    reads, after the ``given`` ones that are read later if they are ``totals``."""
    own = {id(e.out) for e in eqns}
    const_ids = {id(v) for v, _ in consts}
    inputs: dict[int, Var] = {id(v): v for v in given}
    for e in eqns:
        for a in e.inputs:
            if isinstance(a, Var) and id(a) not in own and id(a) not in const_ids:
                inputs.setdefault(id(a), a)
    handed = [v for v in given if id(v) in read] if totals else []  # totals read later
    outputs = [*handed, *(e.out for e in eqns if id(e.out) in read)]
    reads = {id(a) for e in eqns for a in e.inputs}
    return Graph(tuple(inputs.values()), tuple(eqns), tuple(outputs),
                 tuple(c for c in consts if id(c[0]) in reads), f"{graph.name} {title}")
