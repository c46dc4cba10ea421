"""Graph -> Graph passes, each small and pure, run to a fixed point by :func:`optimize`.

Every pass returns its input graph itself when it changes nothing, which is
how :func:`optimize` detects the fixed point. Rewrites are exact: a pass never
changes a result's value, signed zeros included, and a NaN stays a NaN (IEEE
leaves the sign of a NaN result unspecified, so no rule relies on it). Hence
``x + 0.0 -> x`` is absent (wrong for ``x = -0.0``), ``x * 0.0 -> 0.0`` is absent
(wrong for inf and nan) and ``x * -1.0 -> -x`` is absent (it flips a NaN's sign
bit where multiplication keeps it). The reference is numpy on arrays: its
``np.power`` computes the exponents 2, 0.5 and -1 as square, sqrt and
reciprocal, and so do the rules below (``sqrt(-inf)`` is nan where C's
``pow(-inf, 0.5)`` is inf).

The rules themselves are declared with their primitives (the ``simplify`` and
``accuracy`` facets, see :class:`symgrad.core.ir.Primitive`); the passes here
apply them, and CSE reads the ``commutative`` flag.

One pass is the exception, and is kept apart: :func:`improve_accuracy` applies
the ``accuracy`` facets, which replace ``log(1 + x)`` by ``log1p(x)`` and
``exp(x) - 1`` by ``expm1(x)``. These change
rounding, on purpose: they compute what the program means rather than what
float64 makes of it (``log(1 + 1e-17)`` is 0, ``log1p(1e-17)`` is 1e-17). They
agree on infinities and nans; a ``-0.0`` input now gives ``-0.0`` (``log1p(-0.0)``)
where the original gave ``0.0``. :data:`EXACT` is the pipeline without it,
the one whose results are bit-identical to the unoptimized graph's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

import numpy as np

from ..core.check import check
from ..core.ir import (
    C64,
    C128,
    F32,
    FLOAT,
    INT,
    TUPLE,
    Atom,
    Aval,
    Eqn,
    Graph,
    Literal,
    Var,
    freeze_params,
    map_subgraphs,
)
from ..core.rewrite import Rewrite, as_prim
from ..prims.convert import convert_p
from ..prims.reductions import broadcast_to_p
from ..prims.registry import broadcast_shapes
from . import loops


def _rewrite(graph: Graph, rule: Callable[[Eqn], Rewrite]) -> Graph:
    """Apply ``rule`` to each equation (operands already substituted).

    ``rule`` returns a :data:`~symgrad.core.rewrite.Rewrite`: ``None`` to keep
    the equation, an :class:`Eqn` (or a list of them, the last binding the same
    output) to replace it, or an atom that replaces its output everywhere (a
    smaller atom is broadcast to the output's shape). Adjoint equations that
    cite a replaced equation as their origin cite its replacement (or, for an
    equation merged into another, the survivor), so that comments match the code.
    """
    subst: dict[int, Atom] = {}
    defs: dict[int, Eqn] = {}      # id(var) -> the new equation defining it
    moved: dict[int, Eqn] = {}     # id(old equation) -> the equation now standing for it
    eqns: list[Eqn] = []

    def sub(a: Atom) -> Atom:
        return subst.get(id(a), a) if isinstance(a, Var) else a

    for original in graph.eqns:
        eqn = original
        inputs = tuple(map(sub, eqn.inputs))
        if inputs != eqn.inputs:
            eqn = replace(eqn, inputs=inputs)
        if eqn.origin is not None and id(eqn.origin) in moved:
            eqn = replace(eqn, origin=moved[id(eqn.origin)])
        new = rule(eqn)
        if isinstance(new, (Var, Literal)) and not _fits(new, eqn.out.aval):
            new = _broadcast(eqn, new)
        if new is None or isinstance(new, (Eqn, list)):
            added = [eqn] if new is None else [new] if isinstance(new, Eqn) else new
            if added[-1] is not original:
                added = [*added[:-1], *_keep_dtype(added[-1])]
            eqns.extend(added)
            defs.update((id(e.out), e) for e in added)
            stand_in = added[-1]
        else:
            subst[id(eqn.out)] = new
            stand_in = defs.get(id(new), original)
        if stand_in is not original:
            moved[id(original)] = stand_in
    if not moved and not subst:
        return graph
    return replace(graph, eqns=tuple(eqns), outputs=tuple(map(sub, graph.outputs)))


def _keep_dtype(eqn: Eqn) -> list[Eqn]:
    """``eqn``, rewritten, as before it: an operand replaced by a weak one (a literal
    for a float64 value) may make an operation of a float32 operand float32, where its
    output was float64; then it computes in float32 and is converted (numpy's
    promotion saw the float64 operand)."""
    out = eqn.out
    if out.dtype not in (F32, FLOAT) or eqn.prim.kind == "control":
        return [eqn]
    dtype = eqn.prim.shape_rule(*(a.aval for a in eqn.inputs), **eqn.params).dtype
    if dtype == out.dtype or dtype not in (F32, FLOAT):
        return [eqn]
    narrow = Var(Aval(out.shape, dtype), out.hint)
    return [replace(eqn, out=narrow), as_prim(eqn, convert_p, narrow, dtype=out.dtype)]


def _fits(a: Atom, out: Aval) -> bool:
    """Whether ``a`` may stand for a value of ``out`` as it is: the same aval, or a
    float literal for a float32 scalar (a literal is weak: it computes as float32)."""
    return a.aval == out or (isinstance(a, Literal) and out == Aval((), F32)
                             and a.dtype == FLOAT)


def _broadcast(eqn: Eqn, a: Atom) -> Eqn | list[Eqn]:
    """``eqn`` as ``broadcast_to(a)``: ``a`` stands for its output, which is larger (a
    float literal for a float32 array: broadcast, then ``convert``)."""
    if isinstance(a, Literal) and eqn.out.dtype in (C128, C64) and a.dtype == FLOAT:
        a = Literal(complex(a.value))  # a real literal for a complex value (x ** 0.0 -> 1.0)
    if isinstance(a, Literal) and eqn.out.dtype in (F32, C64) and a.dtype in (FLOAT, C128):
        wide = Var(Aval(eqn.out.shape, a.dtype, weak=True))
        return [replace(eqn, prim=broadcast_to_p, inputs=(a,), out=wide,
                        params=freeze_params({"shape": eqn.out.shape})),
                as_prim(eqn, convert_p, wide, dtype=eqn.out.dtype)]
    if a.dtype != eqn.out.dtype:
        raise ValueError(f"a rewrite of {eqn.prim.name} gave a {a.aval} value for {eqn.out.aval}")
    return as_prim(eqn, broadcast_to_p, a, shape=eqn.out.shape)


# ---------------------------------------------------------------------------


def dce(graph: Graph) -> Graph:
    """Dead code elimination: drop equations and constants no output needs."""
    live = {id(a) for a in graph.outputs if isinstance(a, Var)}
    kept = []
    for eqn in reversed(graph.eqns):
        if id(eqn.out) in live:
            kept.append(eqn)
            live.update(id(a) for a in eqn.inputs if isinstance(a, Var))
    consts = tuple((v, c) for v, c in graph.consts if id(v) in live)
    if len(kept) == len(graph.eqns) and len(consts) == len(graph.consts):
        return graph
    return replace(graph, eqns=tuple(reversed(kept)), consts=consts)


def cse(graph: Graph) -> Graph:
    """Common subexpression elimination: one equation per distinct computation."""
    order = {id(v): i for i, v in enumerate([*graph.inputs, *graph.const_vars,
                                              *(e.out for e in graph.eqns)])}
    seen: dict[tuple, Var] = {}

    def key(a: Atom) -> tuple:
        return (1, a.key) if isinstance(a, Literal) else (0, order[id(a)])

    def rule(eqn: Eqn) -> Rewrite:
        operands = [key(a) for a in eqn.inputs]
        if eqn.prim.commutative:
            operands.sort()
        k = (eqn.prim.name, tuple(operands), tuple(eqn.params.items()))
        if k in seen:
            return seen[k]
        seen[k] = eqn.out
        return None

    return _rewrite(graph, rule)


def fold_constants(graph: Graph) -> Graph:
    """Evaluate scalar equations whose operands are all literals.

    Array-valued results are left to the kernel (``np.full`` is cheaper than
    shipping a constant array to it), and so is control flow, and a float32 scalar
    (a literal has no float32: ``convert(0.1, dtype='float32')`` stays).
    """
    def rule(eqn: Eqn) -> Rewrite:
        if (eqn.out.shape or eqn.out.dtype in (TUPLE, F32, C64) or eqn.prim.kind == "control"
                or not all(isinstance(a, Literal) for a in eqn.inputs)):
            return None
        operands = [a.value for a in eqn.inputs if isinstance(a, Literal)]
        with np.errstate(all="ignore"):
            value = np.asarray(eqn.prim.impl(*operands, **eqn.params))
        if value.dtype == np.bool_:
            return Literal(bool(value))
        return Literal(int(value) if eqn.out.dtype == INT else
                       complex(value) if eqn.out.dtype == C128 else float(value))

    return _rewrite(graph, rule)


# ---------------------------------------------------------------------------
# algebraic simplification: the exact rules of each primitive's simplify facet,
# and one rule for every elementwise primitive


def _producers(defs: dict[int, Eqn]) -> Callable[[Atom], Eqn | None]:
    return lambda a: defs.get(id(a)) if isinstance(a, Var) else None


def _unbroadcast_operands(e: Eqn, producer: Callable[[Atom], Eqn | None]) -> Rewrite:
    # op(broadcast_to(x, s), y) -> op(x, y): elementwise operations broadcast by
    # themselves; if all operands shrink, compute small, then broadcast
    sources = [p.inputs[0] if p is not None and p.prim is broadcast_to_p else a
               for a, p in ((a, producer(a)) for a in e.inputs)]
    if all(a is b for a, b in zip(sources, e.inputs)):
        return None
    shape = broadcast_shapes(e.prim.name, *(a.aval for a in sources))
    if shape == e.out.shape:
        return replace(e, inputs=tuple(sources))
    small = Var(Aval(shape, e.out.dtype))
    return [replace(e, inputs=tuple(sources), out=small),
            as_prim(e, broadcast_to_p, small, shape=e.out.shape)]


def simplify(graph: Graph) -> Graph:
    """Apply the algebraic rules once to every equation."""
    defs: dict[int, Eqn] = {}
    producer = _producers(defs)

    def rule(eqn: Eqn) -> Rewrite:
        new = eqn.prim.simplify(eqn, producer) if eqn.prim.simplify else None
        if new is None and eqn.prim.kind == "elementwise":
            new = _unbroadcast_operands(eqn, producer)
        if isinstance(new, (Var, Literal)) and not _fits(new, eqn.out.aval):
            new = _broadcast(eqn, new)
        if new is None or isinstance(new, (Eqn, list)):
            for d in [eqn] if new is None else [new] if isinstance(new, Eqn) else new:
                defs[id(d.out)] = d
        return new

    return _rewrite(graph, rule)


# ---------------------------------------------------------------------------
# accuracy rewrites: not exact (see the module docstring)


def improve_accuracy(graph: Graph) -> Graph:
    """Rewrite cancelling forms into the functions that compute them accurately."""
    producer = _producers({id(e.out): e for e in graph.eqns})

    def rule(e: Eqn) -> Rewrite:
        return e.prim.accuracy(e, producer) if e.prim.accuracy else None

    return _rewrite(graph, rule)


#: the exact passes: results bit-identical to the unoptimized graph's
EXACT = (loops.merge_taped, fold_constants, simplify, cse, dce, loops.prune)
#: what symgrad runs: the exact passes and the accuracy rewrites
PIPELINE = (*EXACT, improve_accuracy)


def optimize(graph: Graph, passes: Iterable[Callable[[Graph], Graph]] = PIPELINE,
             checked: bool = False, max_rounds: int = 50) -> Graph:
    """Run ``passes`` in turn until none changes the graph (checking each if asked).

    The graphs its equations hold (loop bodies, branches) are optimized by the same
    passes, each round, so that what a pass learns about a body (an unused result, a
    constant) reaches the enclosing graph and the other way round."""
    passes = tuple(passes)
    for _ in range(max_rounds):
        before = graph
        for p in passes:
            graph = p(graph)
            if checked:
                check(graph)
        graph = map_subgraphs(graph, lambda g: optimize(g, passes, checked, max_rounds))
        if graph is before:
            return graph
    return graph
