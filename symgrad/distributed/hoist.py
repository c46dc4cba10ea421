"""Fewer passes: values computed from reductions pulled out of the row reductions that
read them.

A row reduction whose operand reads a post value ``p`` of level ``k`` must wait
for pass ``k``, so it runs in pass ``k + 1``. When ``p`` enters linearly, it
need not wait: a sum over the rows (or a product ``W.T @ v`` contracting
them) is linear, so

- ``R(a * p) -> R(a) * p`` and ``R(a / p) -> R(a) / p`` (``p`` constant along
  the reduced axes; for a matrix product, along the rows);
- ``R(a + p) -> R(a) + R(p)`` and ``R(a - p) -> R(a) - R(p)``, where ``R`` of a
  value broadcast over the rows is ``p`` times the count (a mean: ``p``), or
  for ``W.T @ p`` the sum of ``W`` over the rows times ``p``,

and the reductions of ``a`` (and ``W``) run in an earlier pass. Examples: the
gradient of ``log(sum(exp(X @ w)))`` is ``X.T @ (exp(z) / s)``, which becomes
``(X.T @ exp(z)) / s``: one pass instead of two; the gradient of a loss that
subtracts the mean over rows gets the mean's share as ``sum(X, 0) * g``
from the first pass instead of a third.

Each rewrite is applied only where it lowers a reduction's pass (a reduction of
an operand whose pass comes from ``p``), so graphs that need no hoisting keep
their equations. The first rule only reassociates products. The second splits
one sum into two, which can lose accuracy when they nearly cancel; it applies
only to the terms that the adjoint adds for a reduced value used again row
by row (such as the gradient through a mean over rows), not to the others.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from ..core.ir import Atom, Eqn, Graph, Literal, Primitive, Var, freeze_params
from ..passes.rewrites import dce
from ..prims import add_p, broadcast_to_p, div_p, matmul_p, mul_p, reshape_p, sub_p, sum_p
from .rows import Rows, classify, matmul_row


def hoist(graph: Graph, rows: Rows, data: Sequence[Var]) -> tuple[Graph, Rows]:
    """``graph`` with post values pulled out of row reductions where that saves a pass,
    and its row axes (extended to the new values)."""
    while True:
        stage, level = classify(graph, rows, data)
        defined_by = {id(e.out): e for e in graph.eqns}
        for i, e in enumerate(graph.eqns):
            new = _rewrite(e, rows, stage, level, defined_by)
            if new is not None:
                eqns, axes, sizes = new
                rows = Rows(rows.n, {**rows.axis, **axes}, {**rows.sizes, **sizes}, rows.odd)
                graph = dce(replace(graph, eqns=(*graph.eqns[:i], *eqns, *graph.eqns[i + 1:])))
                break
        else:
            return graph, rows


class _Builder:
    """New equations, in order, with the row axes of the values they make."""

    def __init__(self, origin: Eqn | None):
        self.eqns: list[Eqn] = []
        self.axes: dict[int, int] = {}
        self.sizes: dict[int, tuple] = {}
        self.origin = origin

    def bind(self, prim: Primitive, *inputs: Atom, out: Var | None = None, **params) -> Var:
        aval = prim.shape_rule(*(a.aval for a in inputs), **params)
        if out is None:
            out = Var(aval)
        assert out.aval == aval, (out.aval, aval)
        self.eqns.append(Eqn(prim, tuple(inputs), out, freeze_params(params), self.origin))
        return out

    def reshape(self, x: Atom, shape: tuple[int, ...]) -> Atom:
        return x if x.shape == shape else self.bind(reshape_p, x, shape=shape)

    def broadcast_rows(self, x: Var, like: Var, axis: int) -> Var:
        """``x`` (a row-wise value) broadcast to the shape of ``like``."""
        if x.shape == like.shape:
            return x
        out = self.bind(broadcast_to_p, x, shape=like.shape)
        self.axes[id(out)] = axis
        self.sizes[id(self.eqns[-1])] = (("shape", axis),)
        return out


def _rewrite(e: Eqn, rows: Rows, stage: dict[int, int], level: dict[int, int],
             defined_by: dict[int, Eqn]) -> tuple[list[Eqn], dict, dict] | None:
    """The equations replacing the row reduction ``e``, if one of the rules lowers it."""
    if id(e.out) in rows.axis:
        return None
    if e.prim.accumulate:  # a sum or a mean: linear
        (v,) = e.inputs
        if not isinstance(v, Var) or id(v) not in rows.axis:
            return None
        return _hoist(e, v, None, rows, stage, level, defined_by)
    if e.prim is matmul_p and matmul_row(e, rows) == "reduction":
        x, y = e.inputs
        assert isinstance(x, Var) and isinstance(y, Var)  # both have rows
        if len(x.shape) > 2 or len(y.shape) > 2:
            return None
        for v, w in ((y, x), (x, y)):
            if stage[id(v)] > stage[id(w)]:
                return _hoist(e, v, w, rows, stage, level, defined_by)
    return None


def _hoist(e: Eqn, v: Var, w: Var | None, rows: Rows, stage: dict[int, int],
           level: dict[int, int], defined_by: dict[int, Eqn]) -> tuple | None:
    """``e`` reduces ``v`` (with ``w``, the other operand of a matrix product): rewrite
    it if ``v`` is ``p``, ``a * p``, ``a / p``, ``a + p``, ``a - p`` or ``p - a`` for a
    post value ``p`` (maybe broadcast over the rows) that puts ``v`` in a later pass
    than ``a``."""
    def post(x: Atom) -> Atom | None:
        """``x`` as a value without rows: itself, or what was broadcast over the rows."""
        if isinstance(x, Literal) or id(x) not in rows.axis:
            return x
        d = defined_by.get(id(x))
        if d is not None and d.prim is broadcast_to_p:
            return post(d.inputs[0])
        return None

    def lifts(p: Atom) -> bool:
        return not isinstance(p, Literal) and level.get(id(p), 0) + 1 == stage[id(v)]

    axis = rows.axis[id(v)]
    reduced = e.params["axes"] if w is None else (axis,)
    b = _Builder(e.origin)
    p = post(v)
    if p is not None:  # v is a post value broadcast over the rows
        pa = _aligned(p, v)
        if not lifts(p) or any(pa[k] != 1 for k in reduced):
            return None
        _spread(b, e, p, pa, v, w, out=e.out)
        return b.eqns, b.axes, b.sizes
    d = defined_by.get(id(v))
    if d is None or d.prim not in (mul_p, div_p, add_p, sub_p):
        return None
    x, y = d.inputs
    px, py = post(x), post(y)
    if (px is None) == (py is None):
        return None
    a, p = (x, py) if px is None else (y, px)
    assert isinstance(a, Var) and p is not None
    if not lifts(p) or stage[id(a)] >= stage[id(v)] or d.prim is div_p and px is not None:
        return None  # p / a is not linear in a
    pa = _aligned(p, v)
    if any(pa[k] != 1 for k in reduced):
        return None  # p varies along a reduced axis: not a factor of the reduction
    part = _reduce(b, e, b.broadcast_rows(a, v, axis), w)
    if d.prim in (mul_p, div_p):
        b.bind(d.prim, part, _factor(b, p, pa, e, v, w), out=e.out)
    else:
        spread = _spread(b, e, p, pa, v, w)
        b.bind(d.prim, *((part, spread) if px is None else (spread, part)), out=e.out)
    return b.eqns, b.axes, b.sizes


def _aligned(p: Atom, v: Var) -> tuple[int, ...]:
    """``p``'s shape aligned with ``v``'s axes, as broadcasting aligns them."""
    return (1,) * (len(v.shape) - len(p.shape)) + tuple(p.shape)


def _reduce(b: _Builder, e: Eqn, a: Var, w: Var | None) -> Var:
    """``e``'s reduction of ``a`` in place of its row operand."""
    if w is None:
        return b.bind(e.prim, a, **e.params)
    return b.bind(matmul_p, *((w, a) if e.inputs[0] is w else (a, w)))


def _factor(b: _Builder, p: Atom, pa: tuple[int, ...], e: Eqn, v: Var,
            w: Var | None) -> Atom:
    """``p`` shaped to multiply ``e``'s output elementwise (its reduced axes dropped)."""
    if w is None:
        kept = tuple(d for k, d in enumerate(pa) if k not in e.params["axes"])
        return b.reshape(p, kept)
    if e.inputs[1] is v:  # w @ v: w's leading axes, then v's after the rows
        return b.reshape(p, (1,) * (len(w.shape) - 1) + pa[1:])
    return b.reshape(p, pa[:-1] + (1,) * (len(w.shape) - 1))  # v @ w


def _spread(b: _Builder, e: Eqn, p: Atom, pa: tuple[int, ...], v: Var,
            w: Var | None, out: Var | None = None) -> Var:
    """``e``'s reduction of ``p`` broadcast to ``v``'s shape, without making it (bound
    to ``out`` if given)."""
    factor = _factor(b, p, pa, e, v, w)
    if w is None:  # sum: p times the count of what it is broadcast over; mean: p
        count = 1.0 if e.prim.accumulate == "mean" else float(math.prod(v.shape[k]
                                                               for k in e.params["axes"]))
        x: Atom = factor
        y: Atom = Literal(count)
    else:  # w.T @ (p over the rows): (w summed over its rows) times p
        right = e.inputs[1] is v
        total = b.bind(sum_p, w, axes=(len(w.shape) - 1 if right else 0,))
        ones = (1,) * (len(v.shape) - 1)
        x, y = b.reshape(total, total.shape + ones if right else ones + total.shape), factor
    if np.broadcast_shapes(x.shape, y.shape) == e.out.shape:
        return b.bind(mul_p, x, y, out=out)
    return b.bind(broadcast_to_p, b.bind(mul_p, x, y), shape=e.out.shape, out=out)
