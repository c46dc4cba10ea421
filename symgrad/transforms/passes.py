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

One pass is the exception, and is kept apart: :func:`improve_accuracy` replaces
``log(1 + x)`` by ``log1p(x)`` and ``exp(x) - 1`` by ``expm1(x)``. These change
rounding, on purpose: they compute what the program means rather than what
float64 makes of it (``log(1 + 1e-17)`` is 0, ``log1p(1e-17)`` is 1e-17). They
agree on infinities and nans; a ``-0.0`` input now gives ``-0.0`` (``log1p(-0.0)``)
where the original gave ``0.0``. :data:`EXACT` is the pipeline without it,
the one whose results are bit-identical to the unoptimized graph's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any, Union

import numpy as np

from . import primitives as P
from .ir import Atom, Aval, Eqn, Graph, Literal, Primitive, Var, check, freeze_params

Rewrite = Union[Eqn, list[Eqn], Atom, None]  # noqa: UP007 (a runtime alias)


def _rewrite(graph: Graph, rule: Callable[[Eqn], Rewrite]) -> Graph:
    """Apply ``rule`` to each equation (operands already substituted).

    ``rule`` returns ``None`` to keep the equation, an :class:`Eqn` (or a list of
    them, the last binding the same output) to replace it, or an atom that
    replaces its output everywhere. Adjoint equations that cite a replaced
    equation as their origin cite its replacement (or, for an equation merged
    into another, the survivor), so that comments match the code.
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
        if new is None or isinstance(new, (Eqn, list)):
            added = [eqn] if new is None else [new] if isinstance(new, Eqn) else new
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


#: operations whose operands may be swapped without changing a single bit
COMMUTATIVE = frozenset({P.add_p, P.mul_p, P.eq_p, P.ne_p})


def cse(graph: Graph) -> Graph:
    """Common subexpression elimination: one equation per distinct computation."""
    order = {id(v): i for i, v in enumerate([*graph.inputs, *graph.const_vars,
                                              *(e.out for e in graph.eqns)])}
    seen: dict[tuple, Var] = {}

    def key(a: Atom) -> tuple:
        return (1, a.key) if isinstance(a, Literal) else (0, order[id(a)])

    def rule(eqn: Eqn) -> Rewrite:
        operands = [key(a) for a in eqn.inputs]
        if eqn.prim in COMMUTATIVE:
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
    shipping a constant array to it).
    """
    def rule(eqn: Eqn) -> Rewrite:
        if eqn.out.shape or not all(isinstance(a, Literal) for a in eqn.inputs):
            return None
        operands = [a.value for a in eqn.inputs if isinstance(a, Literal)]
        with np.errstate(all="ignore"):
            value = np.asarray(eqn.prim.impl(*operands, **eqn.params))
        return Literal(bool(value) if value.dtype == np.bool_ else float(value))

    return _rewrite(graph, rule)


# ---------------------------------------------------------------------------
# algebraic simplification: a table of exact rules, one comment each


def _lit(a: Atom, value: Any) -> bool:
    return isinstance(a, Literal) and a == Literal(value)


def _same_aval(eqn: Eqn, a: Atom) -> Atom | None:
    """``a`` may replace ``eqn``'s output only if nothing about it changes."""
    return a if a.aval == eqn.out.aval else None


def _as(eqn: Eqn, prim: Primitive, *inputs: Atom, **params: Any) -> Eqn:
    return replace(eqn, prim=prim, inputs=inputs, params=freeze_params(params))


def _resized(eqn: Eqn, a: Atom) -> Rewrite:
    """``a`` in place of ``eqn``'s output, broadcast to its shape if needed."""
    if a.aval == eqn.out.aval:
        return a
    return _as(eqn, P.broadcast_to_p, a, shape=eqn.out.shape)


def _producer(graph_eqns: dict[int, Eqn], a: Atom) -> Eqn | None:
    return graph_eqns.get(id(a)) if isinstance(a, Var) else None


def _rules(defs: dict[int, Eqn]) -> tuple[dict[Primitive, Callable[[Eqn], Rewrite]],
                                          Callable[[Eqn], Rewrite]]:
    """The rules by primitive, and the one every elementwise primitive falls back to."""
    def add(e: Eqn) -> Rewrite:
        x, y = e.inputs
        if _lit(y, -0.0):
            return _same_aval(e, x)  # x + -0.0 -> x   (exact, also for x = -0.0)
        if _lit(x, -0.0):
            return _same_aval(e, y)  # -0.0 + y -> y
        return None

    def sub(e: Eqn) -> Rewrite:
        x, y = e.inputs
        return _same_aval(e, x) if _lit(y, 0.0) else None  # x - 0.0 -> x

    def mul(e: Eqn) -> Rewrite:
        x, y = e.inputs
        for a, b in ((x, y), (y, x)):
            if _lit(b, 1.0) and a.aval == e.out.aval:
                return a  # x * 1.0 -> x
        return None

    def div(e: Eqn) -> Rewrite:
        x, y = e.inputs
        return _same_aval(e, x) if _lit(y, 1.0) else None  # x / 1.0 -> x

    def pow(e: Eqn) -> Rewrite:
        x, y = e.inputs
        if x.aval != e.out.aval:
            return None
        if _lit(y, 1.0):
            return x  # x ** 1.0 -> x
        # numpy's power itself takes these three fast paths for a scalar exponent
        if _lit(y, 2.0):
            return _as(e, P.square_p, x)  # x ** 2.0 -> square(x)
        if _lit(y, 0.5):
            return _as(e, P.sqrt_p, x)  # x ** 0.5 -> sqrt(x)
        if _lit(y, -1.0):
            return _as(e, P.reciprocal_p, x)  # x ** -1.0 -> reciprocal(x)
        return None

    def neg(e: Eqn) -> Rewrite:
        inner = _producer(defs, e.inputs[0])
        if inner is not None and inner.prim is P.neg_p:
            return inner.inputs[0]  # -(-x) -> x
        return None

    def elementwise(e: Eqn) -> Rewrite:
        # op(broadcast_to(x, s), y) -> op(x, y): elementwise operations broadcast
        # by themselves; if all operands shrink, compute small, then broadcast
        sources = [p.inputs[0] if p is not None and p.prim is P.broadcast_to_p else a
                   for a, p in ((a, _producer(defs, a)) for a in e.inputs)]
        if all(a is b for a, b in zip(sources, e.inputs)):
            return None
        shape = P.broadcast_shapes(e.prim.name, *(a.aval for a in sources))
        if shape == e.out.shape:
            return replace(e, inputs=tuple(sources))
        small = Var(Aval(shape, e.out.dtype))
        return [replace(e, inputs=tuple(sources), out=small),
                _as(e, P.broadcast_to_p, small, shape=e.out.shape)]

    def where(e: Eqn) -> Rewrite:
        c, x, y = e.inputs
        if isinstance(c, Literal):
            return _resized(e, x if c.value else y)  # where(True, x, y) -> x
        if x == y:
            return _resized(e, x)  # where(c, x, x) -> x
        return None

    def gt(e: Eqn) -> Rewrite:
        # where(c, 1.0, 0.0) > 0.0 -> c   (the masks of symgrad.adjoint; any a > 0 will do)
        x, y = e.inputs
        inner = _producer(defs, x)
        if _lit(y, 0.0) and inner is not None and inner.prim is P.where_p:
            c, a, b = inner.inputs
            if (isinstance(a, Literal) and isinstance(b, Literal) and a.value > 0.0
                    and b.value == 0.0):
                return _same_aval(e, c)
        return None

    def reduction(e: Eqn) -> Rewrite:
        return e.inputs[0] if not e.params["axes"] else None  # sum(x, axes=()) -> x

    def reshape(e: Eqn) -> Rewrite:
        (x,) = e.inputs
        if x.shape == e.out.shape:
            return x  # reshape(x, x.shape) -> x
        inner = _producer(defs, x)
        if inner is not None and inner.prim is P.reshape_p:
            # reshape(reshape(x)) -> reshape(x)
            return _as(e, P.reshape_p, inner.inputs[0], **e.params)
        return None

    def broadcast_to(e: Eqn) -> Rewrite:
        (x,) = e.inputs
        if x.shape == e.out.shape:
            return x  # broadcast_to(x, x.shape) -> x
        inner = _producer(defs, x)
        if inner is not None and inner.prim is P.reshape_p and not inner.inputs[0].shape:
            return _as(e, P.broadcast_to_p, inner.inputs[0], **e.params)  # of a reshaped scalar
        return None

    def transpose(e: Eqn) -> Rewrite:
        inner = _producer(defs, e.inputs[0])
        if inner is None or inner.prim is not P.transpose_p:
            return None
        perm = tuple(inner.params["perm"][p] for p in e.params["perm"])
        if perm == tuple(range(len(perm))):
            return inner.inputs[0]  # transpose(transpose(x, p), inverse(p)) -> x
        return _as(e, P.transpose_p, inner.inputs[0], perm=perm)  # two transposes -> one

    def count(e: Eqn) -> Rewrite:
        # count(op(x, ...)) -> count(x) for elementwise op and x of the same shape: the
        # count needs only a shape, and op may then be dead (a mean's gradient needs
        # the mean's length, not its operand)
        inner = _producer(defs, e.inputs[0])
        if inner is None or inner.prim.kind != "elementwise":
            return None
        for a in inner.inputs:
            if isinstance(a, Var) and a.shape == e.inputs[0].shape:
                return _as(e, P.count_p, a, **e.params)
        return None

    rules: dict[Primitive, Callable[[Eqn], Rewrite]] = {
        P.add_p: add, P.sub_p: sub, P.mul_p: mul, P.div_p: div, P.pow_p: pow, P.neg_p: neg,
        P.where_p: where, P.gt_p: gt, P.reshape_p: reshape, P.broadcast_to_p: broadcast_to,
        P.transpose_p: transpose, P.count_p: count}
    rules.update({p: reduction for p in (P.sum_p, P.mean_p, P.prod_p, P.max_p, P.min_p)})
    return rules, elementwise


def simplify(graph: Graph) -> Graph:
    """Apply the algebraic rules above once to every equation."""
    defs: dict[int, Eqn] = {}
    rules, elementwise = _rules(defs)

    def rule(eqn: Eqn) -> Rewrite:
        r = rules.get(eqn.prim)
        new = r(eqn) if r else None
        if new is None and eqn.prim.kind == "elementwise":
            new = elementwise(eqn)
        if new is None or isinstance(new, (Eqn, list)):
            for d in [eqn] if new is None else [new] if isinstance(new, Eqn) else new:
                defs[id(d.out)] = d
        return new

    return _rewrite(graph, rule)


# ---------------------------------------------------------------------------
# accuracy rewrites: not exact (see the module docstring), one comment each


def improve_accuracy(graph: Graph) -> Graph:
    """Rewrite cancelling forms into the functions that compute them accurately."""
    defs = {id(e.out): e for e in graph.eqns}

    def rule(e: Eqn) -> Rewrite:
        inner = _producer(defs, e.inputs[0])
        if e.prim is P.log_p and inner is not None and inner.prim is P.add_p:
            for one, x in (inner.inputs, reversed(inner.inputs)):
                if _lit(one, 1.0) and x.aval == e.out.aval:
                    return _as(e, P.log1p_p, x)  # log(1 + x) -> log1p(x)
        if (e.prim is P.sub_p and _lit(e.inputs[1], 1.0) and inner is not None
                and inner.prim is P.exp_p and inner.inputs[0].aval == e.out.aval):
            return _as(e, P.expm1_p, inner.inputs[0])  # exp(x) - 1 -> expm1(x)
        return None

    return _rewrite(graph, rule)


#: the exact passes: results bit-identical to the unoptimized graph's
EXACT = (fold_constants, simplify, cse, dce)
#: what symgrad runs: the exact passes and the accuracy rewrites
PIPELINE = (*EXACT, improve_accuracy)


def optimize(graph: Graph, passes: Iterable[Callable[[Graph], Graph]] = PIPELINE,
             checked: bool = False, max_rounds: int = 50) -> Graph:
    """Run ``passes`` in turn until none changes the graph (checking each if asked)."""
    passes = tuple(passes)
    for _ in range(max_rounds):
        before = graph
        for p in passes:
            graph = p(graph)
            if checked:
                check(graph)
        if graph is before:
            return graph
    return graph
