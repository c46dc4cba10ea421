"""Loop rerolling: a traced Python loop, repeated blocks of equations, as one ``loop``.

Tracing runs a Python ``for`` loop once per step, so the graph holds the same
block of equations again and again, and Numba's compile time grows with the
number of steps. :func:`reroll` finds the longest run of equal blocks whose
data flow chains from step to step and rewrites it into a ``loop`` equation
(a ``scan``, :mod:`symgrad.prims.loops`) whose body is one block:

- blocks are equal when their equations are, position by position: the same
  primitive, parameters, literals and avals, and each operand of the same kind
  in every block: a value of the same block (the same position), a value of
  the block before (a *carry*; in the first block, a value from before the
  run: its initial value), or the same value from before the run (a constant
  of the loop);
- the one parameter that may change from block to block is the index of a
  ``slice`` that reads one row (along one axis) of a value from before the run,
  moving by the same step each time: ``xs[t]`` in the loop. The rows become the
  loop's ``xs`` (one slice of the whole range, outside the loop);
- a value of a block read after the run is the loop's last carry, or a row of
  its stacked results (``ys``).

Blocks that differ (a first step that starts from a literal, a last step that
is shorter, shapes that change) stay unrolled around the loop. The rewrite is
exact: the loop computes the same operations in the same order.

    >>> import numpy as np, symgrad as sg
    >>> def f(x):
    ...     for _ in range(100):
    ...         x = np.sin(x) * 0.5 + x
    ...     return np.sum(x)
    >>> graph = sg.jit(f, backend="numpy").graph(np.ones(3))
    >>> [e.prim.name for e in graph.eqns]
    ['loop', 'proj', 'sum']
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..core.ir import INT, Atom, Aval, Eqn, Graph, Literal, Var, freeze_params, tuple_aval
from ..prims.control import proj_p
from ..prims.indexing import slice_p
from ..prims.loops import loop_p, stacked
from ..prims.reductions import reshape_p, transpose_p

#: a run shorter than this many steps, or of fewer equations, is left as it is
MIN_STEPS = 4
MIN_EQNS = 32
#: the periods tried: the most frequent distances between equal equations
CANDIDATES = 6
#: rotations of a block tried as its start
PHASES = 16


def reroll(graph: Graph, min_steps: int = MIN_STEPS, min_eqns: int = MIN_EQNS) -> Graph:
    """``graph`` with its longest runs of equal, chained blocks as loops (see the module)."""
    for _ in range(16):  # one run at a time, longest first
        found = _best_run(graph, min_steps, min_eqns)
        if found is None:
            return graph
        graph = _rewrite(graph, found)
    return graph


# ---------------------------------------------------------------------------
# finding runs


def _params_key(e: Eqn) -> tuple:
    """The parameters, with the place of a one-row slice left out (it may move)."""
    items = []
    for k, v in e.params.items():
        if e.prim is slice_p and k == "index":
            v = tuple((stop - start, step) for start, stop, step in v)
        items.append((k, v if not isinstance(v, Graph) else id(v)))
    return tuple(items)


def _signature(e: Eqn) -> tuple:
    operands = tuple(("lit", a.key) if isinstance(a, Literal) else a.aval for a in e.inputs)
    return (e.prim.name, _params_key(e), operands, e.out.aval)


@dataclass
class _Run:
    start: int
    period: int
    steps: int
    #: per block position and operand: ("local", r) / ("carry", r) / ("const", var) / ("lit",)
    kinds: list[list[tuple]] = field(default_factory=list)
    #: position of a moving slice -> (axis, step per block)
    rows: dict[int, tuple[int, int]] = field(default_factory=dict)
    #: carry position -> its initial value
    inits: dict[int, Atom] = field(default_factory=dict)


def _best_run(graph: Graph, min_steps: int, min_eqns: int) -> _Run | None:
    eqns = graph.eqns
    n = len(eqns)
    if n < min_eqns:
        return None
    sigs = [_signature(e) for e in eqns]
    # candidate periods: distances between consecutive equal equations, most frequent first
    last: dict[tuple, int] = {}
    gaps: Counter[int] = Counter()
    for j, s in enumerate(sigs):
        if s in last:
            gaps[j - last[s]] += 1
        last[s] = j
    best: _Run | None = None
    periods = [g for g, _ in gaps.most_common(CANDIDATES)]
    # a block of equal equations (a, b = b, a + b) shows only the distance 1: try multiples
    periods += [m * g for g in periods[:2] for m in (2, 3) if m * g not in periods]
    for period in periods:
        j = 0
        while j + period < n:
            if sigs[j] != sigs[j + period]:
                j += 1
                continue
            k = j
            while k + period < n and sigs[k] == sigs[k + period]:
                k += 1
            steps = (k - j) // period + 1
            run = (_checked(graph, sigs, j, period, steps, min_steps) if steps >= min_steps
                   else None)
            if run is not None and run.steps * period >= min_eqns and (
                    best is None or run.steps * run.period > best.steps * best.period):
                best = run
            j = k + 1
    return best


def _checked(graph: Graph, sigs: list, start: int, period: int, steps: int,
             min_steps: int) -> _Run | None:
    """The longest run of chained blocks among those starting in the first period from
    ``start`` (any rotation of a block is a block), or one block later (a first step
    that differs, as one that starts from a literal)."""
    where = {id(e.out): j for j, e in enumerate(graph.eqns)}
    best: _Run | None = None
    for phase in range(min(period, PHASES)):
        for s in (start + phase, start + phase + period):
            run = _prefix(graph, sigs, s, period, where)
            if run is not None and run.steps >= min_steps and (
                    best is None or run.steps > best.steps):
                best = run
        if best is not None and best.steps >= steps - 2:
            break
    return best


def _prefix(graph: Graph, all_sigs: list, s: int, period: int,
            where: dict[int, int]) -> _Run | None:
    """The blocks from ``s`` on whose data flow chains like the second block's (see the
    module), as a run; None if not even two do."""
    eqns = graph.eqns
    if s + 2 * period > len(eqns):
        return None
    template = eqns[s + period:s + 2 * period]
    run = _Run(s, period, 0)
    for e in template:
        kinds = [_kind(a, s + period, period, where, s) for a in e.inputs]
        if any(k is None for k in kinds):
            return None
        run.kinds.append(kinds)
    sigs = all_sigs[s + period:s + 2 * period]
    steps = 0
    while s + (steps + 1) * period <= len(eqns):
        if not _block_fits(eqns, run, all_sigs, sigs, steps, where):
            break
        steps += 1
    if steps < 2:
        return None
    run.steps = steps
    for p, e in enumerate(template):
        if e.prim is slice_p:
            rows = _moving(eqns, s, period, steps, p)
            if rows is False or (rows is not None and run.kinds[p][0][0] != "const"):
                return None
            if rows is not None:
                run.rows[p] = rows
    return run


def _block_fits(eqns: tuple, run: _Run, all_sigs: list, sigs: list, k: int,
                where: dict[int, int]) -> bool:
    """Whether block ``k`` of ``run`` has the template's equations and data flow (block 0:
    its carries read their initial values, from before the run)."""
    s, period = run.start, run.period
    block = s + k * period
    inits = dict(run.inits)
    if all_sigs[block:block + period] != sigs:
        return False
    for p in range(period):
        e = eqns[block + p]
        for kind, a in zip(run.kinds[p], e.inputs):
            got = _kind(a, block, period, where, s)
            if k == 0 and kind[0] == "carry":
                if got is None or got[0] != "const" or inits.setdefault(kind[1], a) is not a:
                    return False
            elif got != kind:
                return False
    if k == 0:
        run.inits = inits
    return True


def _kind(a: Atom, block: int, period: int, where: dict[int, int], s: int) -> tuple | None:
    if isinstance(a, Literal):
        return ("lit",)
    d = where.get(id(a), -1)
    if block <= d < block + period:
        return ("local", d - block)
    if block - period <= d < block and d >= s:
        return ("carry", d - (block - period))
    if d < s:
        return ("const", id(a))
    return None


def _moving(eqns: tuple, s: int, period: int, steps: int, p: int) -> tuple | None | bool:
    """For a slice at block position ``p``: None if its index is the same in every block,
    (axis, step) if it reads one row moving by ``step`` along ``axis``, False otherwise."""
    indices = [eqns[s + k * period + p].params["index"] for k in range(steps)]
    if all(ix == indices[0] for ix in indices):
        return None
    first, second = indices[0], indices[1]
    moving = [a for a, (u, v) in enumerate(zip(first, second)) if u != v]
    if len(moving) != 1:
        return False
    axis = moving[0]
    start, stop, step = first[axis]
    move = second[axis][0] - start
    if step != 1 or stop - start != 1 or move < 1:
        return False
    for k, ix in enumerate(indices):
        want = list(first)
        want[axis] = (start + k * move, start + k * move + 1, 1)
        if tuple(ix) != tuple(want):
            return False
    return axis, move


# ---------------------------------------------------------------------------
# rewriting


def _rewrite(graph: Graph, run: _Run) -> Graph:
    eqns = graph.eqns
    s, period, steps = run.start, run.period, run.steps
    end = s + steps * period
    template = eqns[s + period:s + 2 * period]
    carries = sorted({kind[1] for kinds in run.kinds for kind in kinds if kind[0] == "carry"})
    consts: dict[int, Var] = {}
    for kinds, e in zip(run.kinds, template):
        for kind, a in zip(kinds, e.inputs):
            if kind[0] == "const":
                consts.setdefault(kind[1], a)
    # values of the run read after it
    later = {id(a) for e in eqns[end:] for a in e.inputs if isinstance(a, Var)}
    later |= {id(a) for a in graph.outputs if isinstance(a, Var)}
    ys = sorted({p for k in range(steps) for p in range(period)
                 if id(eqns[s + k * period + p].out) in later
                 and not (k == steps - 1 and p in carries)})

    # the body: one block, reading its carries, its rows of xs and the constants
    index = Var(Aval((), INT), "i")
    carry_in = {r: Var(template[r].out.aval, template[r].out.hint or "carry") for r in carries}
    const_in = {key: Var(v.aval, v.hint) for key, v in consts.items()}
    row_in: dict[int, Var] = {}
    before: list[Eqn] = []  # the xs, sliced from their source outside the loop
    xs_ops: list[Var] = []
    for p, (axis, move) in sorted(run.rows.items()):
        e = eqns[s + p]
        source = e.inputs[0]
        ix = list(e.params["index"])
        start = ix[axis][0]
        ix[axis] = (start, start + (steps - 1) * move + 1, move)
        rows = Var(slice_p.shape_rule(source.aval, index=tuple(ix)))
        before.append(Eqn(slice_p, (source,), rows, freeze_params({"index": tuple(ix)})))
        if axis:
            perm = (axis, *(a for a in range(rows.aval.ndim) if a != axis))
            moved = Var(transpose_p.shape_rule(rows.aval, perm=perm))
            before.append(Eqn(transpose_p, (rows,), moved, freeze_params({"perm": perm})))
            rows = moved
        xs_ops.append(rows)
        row_in[p] = Var(Aval(rows.aval.shape[1:], rows.aval.dtype), "row")
    local: dict[int, Var] = {}
    body_eqns: list[Eqn] = []
    for p, (kinds, e) in enumerate(zip(run.kinds, template)):
        out = Var(e.out.aval, e.out.hint)
        if p in run.rows:  # the moving slice: the loop's row, shaped as the slice was
            body_eqns.append(Eqn(reshape_p, (row_in[p],), out,
                                 freeze_params({"shape": e.out.shape})))
        else:
            ins = [a if kind[0] == "lit" else local[kind[1]] if kind[0] == "local"
                   else carry_in[kind[1]] if kind[0] == "carry" else const_in[kind[1]]
                   for kind, a in zip(kinds, e.inputs)]
            body_eqns.append(Eqn(e.prim, tuple(ins), out, e.params))
        local[p] = out
    body = Graph((index, *carry_in.values(), *row_in.values(), *const_in.values()),
                 tuple(body_eqns), (*(local[r] for r in carries), *(local[p] for p in ys)), (),
                 "step")
    parts = [*(template[r].out.aval for r in carries),
             *(stacked(steps, template[p].out.aval) for p in ys)]
    t = Var(tuple_aval(parts))
    params: dict[str, Any] = dict(body=body, n_carry=len(carries), n_xs=len(xs_ops),
                                  reverse=False, tape=0, size=steps, recompute=None,
                                  checkpoint=0)
    loop = Eqn(loop_p, (Literal(0), Literal(steps), *(run.inits[r] for r in carries), *xs_ops,
                        *consts.values()), t, freeze_params(params))
    after: list[Eqn] = []
    subst: dict[int, Atom] = {}
    for n, r in enumerate(carries):
        v = Var(template[r].out.aval)
        after.append(_proj(t, n, v))
        subst[id(eqns[end - period + r].out)] = v
    for n, p in enumerate(ys):
        whole = Var(parts[len(carries) + n])
        after.append(_proj(t, len(carries) + n, whole))
        for k in range(steps):
            old = eqns[s + k * period + p].out
            if id(old) in later and id(old) not in subst:
                ix = ((k, k + 1, 1), *((0, d, 1) for d in old.shape))
                row = Var(Aval((1, *old.shape), old.dtype))
                value = Var(old.aval, old.hint)
                after += [Eqn(slice_p, (whole,), row, freeze_params({"index": ix})),
                          Eqn(reshape_p, (row,), value, freeze_params({"shape": old.shape}))]
                subst[id(old)] = value

    def sub(a: Atom) -> Atom:
        return subst.get(id(a), a) if isinstance(a, Var) else a

    rest = [e if not any(isinstance(a, Var) and id(a) in subst for a in e.inputs)
            else Eqn(e.prim, tuple(map(sub, e.inputs)), e.out, e.params, e.origin)
            for e in eqns[end:]]
    return Graph(graph.inputs, (*eqns[:s], *before, loop, *after, *rest),
                 tuple(map(sub, graph.outputs)), graph.consts, graph.name)


def _proj(t: Var, part: int, out: Var) -> Eqn:
    return Eqn(proj_p, (t,), out, freeze_params({"part": part}))
