"""Passes over control flow (:mod:`symgrad.prims.loops`, :mod:`symgrad.prims.control`).

- :func:`merge_taped`: reverse mode runs a loop again with ``tape=k`` (it also
  stores carries for the backward loop); the forward loop with the same
  operands and body is then redundant, and the taping one takes its place, so
  the forward runs once.
- :func:`prune`: results of a loop that nobody reads, carries that nothing
  read needs (the sums of cotangents of constants that are not differentiated),
  tapes nobody reads, and operands the body does not read, are dropped (and
  the ``proj`` equations renumbered). Likewise unused operands and results of
  ``cond`` and unused constants of ``while``.

Both are exact, and :func:`symgrad.passes.rewrites.optimize` runs them with the
other passes; it also optimizes the bodies themselves.

    >>> import numpy as np, symgrad as sg
    >>> g = sg.grad(lambda x: sg.fori_loop(0, 4, lambda i, v: np.sin(v), x), backend="numpy")
    >>> [e.prim.name for e in g.graph(0.5).eqns if e.prim.subgraphs]  # forward once, then back
    ['loop', 'loop']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.ir import Atom, Eqn, Graph, Literal, Var, freeze_params, tuple_aval
from ..prims.control import cond_p, proj_p
from ..prims.loops import loop_p, stacked, tape_length, while_p


def _key(e: Eqn) -> tuple:
    atoms = tuple(("lit", a.key) if isinstance(a, Literal) else id(a) for a in e.inputs)
    params = tuple((k, id(v) if isinstance(v, Graph) else v) for k, v in e.params.items()
                   if k != "tape")
    return (e.prim.name, atoms, params)


def merge_taped(graph: Graph) -> Graph:
    """A loop that tapes stands for the same loop without a tape (see the module)."""
    taping = {}
    for e in graph.eqns:
        if e.prim.subgraphs and e.params.get("tape", 0) > 0:
            taping.setdefault(_key(e), e)
    if not taping:
        return graph
    subst: dict[int, Var] = {}
    placed: set[int] = set()
    cited: dict[int, Eqn] = {}  # id(forward loop) -> the taping loop now in its place
    eqns: list[Eqn] = []
    for e in graph.eqns:
        if id(e) in placed:
            continue  # moved up to where the forward loop was
        e = _substituted(e, subst)
        if e.origin is not None and id(e.origin) in cited:
            e = Eqn(e.prim, e.inputs, e.out, e.params, cited[id(e.origin)])
        if e.prim.subgraphs and e.params.get("tape", 0) == 0:
            t = taping.get(_key(e))
            if t is not None:
                if id(t) not in placed:  # in the forward, as the forward loop was
                    moved = Eqn(t.prim, t.inputs, t.out, t.params, e.origin)
                    eqns.append(moved)
                    placed.add(id(t))
                    cited[id(e)] = cited[id(t)] = moved
                subst[id(e.out)] = t.out
                continue
        eqns.append(e)
    if not subst:
        return graph
    return Graph(graph.inputs, tuple(eqns), tuple(subst.get(id(a), a) if isinstance(a, Var)
                                                   else a for a in graph.outputs),
                 graph.consts, graph.name)


def _substituted(e: Eqn, subst: dict[int, Var]) -> Eqn:
    if not subst or not any(isinstance(a, Var) and id(a) in subst for a in e.inputs):
        return e
    inputs = tuple(subst.get(id(a), a) if isinstance(a, Var) else a for a in e.inputs)
    return Eqn(e.prim, inputs, e.out, e.params, e.origin)


# ---------------------------------------------------------------------------
# pruning


def _reads(graph: Graph, outputs: list[int]) -> set[int]:
    """Indices of the inputs of ``graph`` that its outputs ``outputs`` depend on."""
    need = {id(graph.outputs[k]) for k in outputs if isinstance(graph.outputs[k], Var)}
    for e in reversed(graph.eqns):
        if id(e.out) in need:  # (an equation's operands are all it reads)
            need.update(id(a) for a in e.inputs if isinstance(a, Var))
    return {k for k, v in enumerate(graph.inputs) if id(v) in need}


def _dce(graph: Graph) -> Graph:
    live = {id(a) for a in graph.outputs if isinstance(a, Var)}
    kept = []
    for e in reversed(graph.eqns):
        if id(e.out) in live:
            kept.append(e)
            live.update(id(a) for a in e.inputs if isinstance(a, Var))
    return Graph(graph.inputs, tuple(reversed(kept)), graph.outputs, graph.consts, graph.name)


def _select(graph: Graph, inputs: list[int], outputs: list[int]) -> Graph:
    """``graph`` restricted to some outputs, then to some inputs (which must be all
    those the kept outputs read)."""
    g = _dce(Graph(graph.inputs, graph.eqns, tuple(graph.outputs[k] for k in outputs), (),
                   graph.name))
    return Graph(tuple(g.inputs[k] for k in inputs), g.eqns, g.outputs, (), g.name)


def _uses(graph: Graph) -> dict[int, set[int] | None]:
    """For each tuple value, the parts ``proj`` reads (None: read whole, keep all)."""
    uses: dict[int, set[int] | None] = {}
    for e in graph.eqns:
        for a in e.inputs:
            if isinstance(a, Var) and a.dtype == "tuple":
                if e.prim is proj_p and uses.get(id(a), set()) is not None:
                    uses.setdefault(id(a), set()).add(e.params["part"])
                else:
                    uses[id(a)] = None
    for a in graph.outputs:
        if isinstance(a, Var) and a.dtype == "tuple":
            uses[id(a)] = None
    return uses


def prune(graph: Graph) -> Graph:
    """Drop what control-flow equations compute or read in vain (see the module)."""
    uses = _uses(graph)
    renumber: dict[int, tuple[Var, dict[int, int]]] = {}
    eqns: list[Eqn] = []
    for e in graph.eqns:
        if e.prim is proj_p and id(e.inputs[0]) in renumber:
            out, index = renumber[id(e.inputs[0])]
            eqns.append(Eqn(proj_p, (out,), e.out,
                            freeze_params({"part": index[e.params["part"]]}), e.origin))
            continue
        used = uses.get(id(e.out), set())
        rule = _PRUNERS.get(e.prim.name)
        new = rule(e, used) if rule is not None and used is not None else None
        if new is None:
            eqns.append(e)
            continue
        eqn, index = new
        renumber[id(e.out)] = (eqn.out, index)
        eqns.append(eqn)
    if not renumber:
        return graph
    return Graph(graph.inputs, tuple(eqns), graph.outputs, graph.consts, graph.name)


def _rebuilt(e: Eqn, inputs: list[Atom], parts: list, **params: Any) -> Eqn:
    out = Var(tuple_aval(parts))
    return Eqn(e.prim, tuple(inputs), out, freeze_params({**e.params, **params}), e.origin)


def _prune_loop(e: Eqn, used: set[int]) -> tuple[Eqn, dict[int, int]] | None:
    p = e.params
    body, C, X, tape = p["body"], p["n_carry"], p["n_xs"], p["tape"]
    recompute = p["recompute"]
    n_rows = len(recompute.outputs) if recompute is not None else 0
    Y = len(body.outputs) - C
    ys = [y for y in range(Y) if C + y in used]
    tapes = tape and any(C + Y + j in used for j in range(C))
    live = {j for j in range(C) if j in used or (tapes and C + Y + j in used)}
    if tapes:
        live = set(range(C))
    while True:  # a carry read by what is kept must be kept
        needed = _reads(body, [*sorted(live), *(C + y for y in ys)])
        grown = live | {j for j in range(C) if 1 + j in needed}
        if grown == live:
            break
        live = grown
    carries = sorted(live)
    n_in = len(body.inputs)
    first_x = 1 + C + n_rows
    if recompute is None:  # operands the body does not read are dropped
        others = [k for k in range(first_x, n_in) if k in needed]
    else:
        others = list(range(1 + C, n_in))
    if (len(carries) == C and len(ys) == Y and bool(tapes) == bool(tape)
            and len(others) == n_in - 1 - C - (n_rows if recompute is None else 0)):
        return None
    inputs = [0, *(1 + j for j in carries),
              *(range(1 + C, first_x) if recompute is None else []), *others]
    new_body = _select(body, inputs, [*carries, *(C + y for y in ys)])
    ops = list(e.inputs)
    kept_ops = [ops[0], ops[1], *(ops[2 + j] for j in carries)]
    kept_ops += [ops[2 + k - 1 - n_rows] if k >= first_x else ops[2 + k - 1]
                 for k in others if recompute is None]
    if recompute is not None:
        kept_ops += ops[2 + C:]
    n_xs = X if recompute is not None else sum(1 for k in others if k < first_x + X)
    carry_avals = [body.inputs[1 + j].aval for j in carries]
    parts = [*carry_avals, *(stacked(p["size"], body.outputs[C + y].aval) for y in ys)]
    if tapes:
        parts += [stacked(tape_length(p["size"], tape), a) for a in carry_avals]
    eqn = _rebuilt(e, kept_ops, parts, body=new_body, n_carry=len(carries), n_xs=n_xs,
                   tape=tape if tapes else 0)
    index = {j: n for n, j in enumerate(carries)}
    index.update((C + y, len(carries) + n) for n, y in enumerate(ys))
    if tapes:
        index.update((C + Y + j, len(carries) + len(ys) + n) for n, j in enumerate(carries))
    return eqn, index


def _prune_cond(e: Eqn, used: set[int]) -> tuple[Eqn, dict[int, int]] | None:
    true, false = e.params["true"], e.params["false"]
    outs = sorted(used)
    n_in = len(true.inputs)
    reads = _reads(true, outs) | _reads(false, outs)
    keep = sorted(reads)
    if len(outs) == len(true.outputs) and len(keep) == n_in:
        return None
    ops = [e.inputs[0], *(e.inputs[1 + k] for k in keep)]
    parts = [true.outputs[k].aval for k in outs]
    eqn = _rebuilt(e, ops, parts, true=_select(true, keep, outs), false=_select(false, keep, outs))
    return eqn, {k: n for n, k in enumerate(outs)}


def _prune_while(e: Eqn, used: set[int]) -> tuple[Eqn, dict[int, int]] | None:
    p = e.params
    cond, body, C, n_cc, tape = p["cond"], p["body"], p["n_carry"], p["n_cconst"], p["tape"]
    tapes = tape and any(k >= C for k in used)
    c_keep = sorted(_reads(cond, [0]) - set(range(C)))
    b_keep = sorted(_reads(body, list(range(C))) - set(range(C)))
    if len(c_keep) == n_cc and len(b_keep) == len(body.inputs) - C and bool(tapes) == bool(tape):
        return None
    ops = [*e.inputs[:C], *(e.inputs[k] for k in c_keep),
           *(e.inputs[C + n_cc + k - C] for k in b_keep)]
    new_cond = _select(cond, [*range(C), *c_keep], [0])
    new_body = _select(body, [*range(C), *b_keep], list(range(C)))
    parts = list(e.out.aval.parts[:C]) + (list(e.out.aval.parts[C:]) if tapes else [])
    eqn = _rebuilt(e, ops, parts, cond=new_cond, body=new_body, n_cconst=len(c_keep),
                   tape=tape if tapes else 0)
    return eqn, {k: k for k in range(len(parts))}


_PRUNERS: dict[str, Callable[[Eqn, set[int]], tuple[Eqn, dict[int, int]] | None]] = {
    loop_p.name: _prune_loop, cond_p.name: _prune_cond, while_p.name: _prune_while}
