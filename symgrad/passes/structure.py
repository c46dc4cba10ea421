"""Structural zeros: matrix products with a one-hot operand as gathers.

``sg.hessian`` is ``jacfwd(jacrev(f))``: its tangents are the rows of an identity
matrix, a constant of the graph, and batching a matrix function against them
makes dense products whose one operand is mostly zeros that the graph itself
put there. At d = 100 the log-det Hessian's tangent of ``inv`` was two
``(d², d) @ (d, d)`` products, 10⁸ multiply-adds each, nearly all of them by a
zero of the identity basis.

:func:`one_hot_products` follows, for each value, which elements may be nonzero
(its *pattern*, a boolean array), starting from the graph's constants whose
elements are all 0 or 1 (a basis, a mask, ``np.eye``): elementwise products,
sign changes, reshapes, transposes, broadcasts, sums, gathers and products of
matrices carry a pattern; any other operation, or an operand without one,
gives none (every element may be nonzero). A ``matmul`` of two matrices whose
left operand has at most one nonzero per row becomes a gather of the right
operand's rows times those elements (and, when few rows have one, a scatter of
just those rows into zeros); symmetrically for a right operand with at most one
nonzero per column. The work becomes that of the result, not of the product.

What the rewrite drops are products with a structural zero, as JAX's symbolic
zeros do: where the other operand holds an inf or a NaN, the dense product
gives NaN (``0 * inf``) and the rewritten one 0. Every finite result is the same
(a sum of one product and exact zeros).

    >>> import numpy as np, symgrad as sg
    >>> f = lambda x: np.linalg.slogdet(np.eye(5) * np.exp(x) + 1.0)[1]
    >>> h = sg.hessian(f, backend="numpy")
    >>> [e.prim.name for e in h.graph(np.zeros(5)).eqns].count("matmul")
    0
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ..core.ir import Aval, Eqn, Graph, Literal, Var, freeze_params
from ..core.rewrite import Rewrite
from ..prims.convert import convert_p
from ..prims.elementwise import add_p, mul_p, neg_p, sub_p
from ..prims.indexing import gather_p, scatter_add_p
from ..prims.linalg import matmul_p
from ..prims.reductions import broadcast_to_p, reshape_p, sum_p, transpose_p

#: patterns are followed for values of at most this many elements
MAX_ELEMENTS = 1 << 22
#: a product is rewritten only if its inner axis is at least this long
MIN_INNER = 4


def _const_pattern(value: np.ndarray) -> np.ndarray | None:
    """A constant's pattern, if it is a 0/1 array (a basis, a mask) with zeros in it."""
    if value.size > MAX_ELEMENTS or value.dtype.kind != "f":
        return None
    nonzero = value != 0
    if nonzero.all() or not ((value == 0) | (value == 1)).all():
        return None
    return nonzero


def _operand(a: Any, patterns: dict[int, np.ndarray]) -> np.ndarray | None:
    if isinstance(a, Literal):  # a zero is a pattern; any other literal says nothing
        return np.asarray(False) if a.value == 0 else None
    return patterns.get(id(a))


def _dense(shape: tuple[int, ...]) -> np.ndarray:
    return np.ones(shape, dtype=bool)


def _propagate(e: Eqn, ins: list[np.ndarray | None]) -> np.ndarray | None:
    """``e``'s output pattern from its operands' (None: any element may be nonzero)."""
    prim, shape = e.prim, e.out.shape
    if int(np.prod(shape)) > MAX_ELEMENTS:
        return None
    if prim is scatter_add_p:  # zero in the rows nothing is added to
        p = ins[0] if ins[0] is not None else _dense(e.inputs[0].shape)
        out = np.zeros(shape, dtype=bool)
        moved, rows = np.moveaxis(out, e.params["axis"], 0), np.moveaxis(p, e.params["axis"], 0)
        for k, j in enumerate(e.params["indices"]):
            moved[j] |= rows[k]
        return out
    if all(p is None for p in ins):
        return None
    if prim is mul_p:  # zero where any factor is
        out = _dense(shape)
        for p in ins:
            if p is not None:
                out = out & np.broadcast_to(p, shape)
        return out
    if prim in (add_p, sub_p):  # zero where all terms are
        if any(p is None for p in ins):
            return None
        return np.broadcast_to(ins[0] | ins[1], shape) if len(ins) == 2 else None
    (p, *_) = ins
    if p is None:
        return None
    if prim in (neg_p, convert_p):
        return p
    if prim is reshape_p:
        return p.reshape(shape)
    if prim is transpose_p:
        return p.transpose(e.params["perm"])
    if prim is broadcast_to_p:
        return np.broadcast_to(p, shape)
    if prim is sum_p:
        return p.any(axis=tuple(e.params["axes"])).reshape(shape)
    if prim is gather_p:
        return np.take(p, np.asarray(e.params["indices"], dtype=int), axis=e.params["axis"])
    if prim is matmul_p and len(ins) == 2 and len(e.inputs[0].shape) == 2 == len(e.inputs[1].shape):
        x = ins[0] if ins[0] is not None else _dense(e.inputs[0].shape)
        y = ins[1] if ins[1] is not None else _dense(e.inputs[1].shape)
        return (x.astype(np.int64) @ y.astype(np.int64)) > 0
    return None


def _bind(e: Eqn, prim: Any, inputs: tuple, out: Var, **params: Any) -> Eqn:
    """An equation of the rewrite of ``e`` (it cites ``e``'s origin)."""
    return replace(e, prim=prim, inputs=inputs, out=out, params=freeze_params(params))


def _rows_product(e: Eqn, x: Var, y: Var, p: np.ndarray, out: Var,
                  ones: bool = False) -> list[Eqn]:
    """``out = x @ y`` for a matrix ``x`` with at most one nonzero per row (pattern
    ``p``): row r is ``x[r, c(r)] * y[c(r), :]``, zero for a row without one
    (``ones``: ``x``'s nonzeros are 1, a constant's, so the rows are ``y``'s)."""
    n, k = p.shape
    m = out.shape[1]
    rows = np.flatnonzero(p.any(axis=1))
    cols = p.argmax(axis=1)[rows]
    r = len(rows)
    if ones:
        taken = out if r == n else Var(Aval((r, m), out.dtype))
        if r == n == k and (cols == np.arange(k)).all():  # x is the identity (a reshape
            eqns = [_bind(e, reshape_p, (y,), taken, shape=taken.shape)]  # simplify drops)
        else:
            eqns = [_bind(e, gather_p, (y,), taken, indices=tuple(int(i) for i in cols),
                          axis=0)]
        if y.dtype != out.dtype:
            return [*_rows_product(e, x, y, p, out)]
        if r < n:
            eqns.append(_bind(e, scatter_add_p, (taken,), out,
                              indices=tuple(int(i) for i in rows), axis=0, size=n))
        return eqns
    flat, picked, values = Var(Aval((n * k,), x.dtype)), Var(Aval((r,), x.dtype)), \
        Var(Aval((r, 1), x.dtype))
    column = Var(Aval((r, m), y.dtype))
    taken = out if r == n else Var(Aval((r, m), out.dtype))
    eqns = [
        _bind(e, reshape_p, (x,), flat, shape=(n * k,)),
        _bind(e, gather_p, (flat,), picked, indices=tuple(int(i) for i in rows * k + cols),
              axis=0),
        _bind(e, reshape_p, (picked,), values, shape=(r, 1)),
        _bind(e, gather_p, (y,), column, indices=tuple(int(i) for i in cols), axis=0),
        _bind(e, mul_p, (values, column), taken),
    ]
    if r == k and (cols == np.arange(k)).all():  # all of y's rows in order: y itself
        eqns[3] = _bind(e, reshape_p, (y,), column, shape=column.shape)  # (simplify drops it)
    if r < n:  # the rows that have their element, into zeros
        eqns.append(_bind(e, scatter_add_p, (taken,), out,
                          indices=tuple(int(i) for i in rows), axis=0, size=n))
    return eqns


def _columns_product(e: Eqn, x: Var, y: Var, p: np.ndarray, ones: bool = False) -> list[Eqn]:
    """``x @ y`` for a matrix ``y`` with at most one nonzero per column (pattern ``p``):
    ``(yᵀ @ xᵀ)ᵀ``, whose left operand has one per row."""
    yt, xt = Var(Aval(y.shape[::-1], y.dtype)), Var(Aval(x.shape[::-1], x.dtype))
    prod = Var(Aval(e.out.shape[::-1], e.out.dtype))
    return [_bind(e, transpose_p, (y,), yt, perm=(1, 0)),
            _bind(e, transpose_p, (x,), xt, perm=(1, 0)),
            *_rows_product(e, yt, xt, p.T, prod, ones),
            _bind(e, transpose_p, (prod,), e.out, perm=(1, 0))]


#: what moves elements only: a mask moved is a mask
_MOVES = (reshape_p, transpose_p, broadcast_to_p, gather_p, convert_p)


def _one_hot(p: np.ndarray | None) -> bool:
    return p is not None and p.ndim == 2 and p.shape[1] >= MIN_INNER \
        and bool((p.sum(axis=1) <= 1).all())


def patterns(graph: Graph) -> dict[int, np.ndarray]:
    """The pattern of each value of ``graph`` that has one (by ``id`` of the value),
    followed from its 0/1 constants without rewriting anything."""
    found: dict[int, np.ndarray] = {}
    for var, value in graph.consts:
        p = _const_pattern(np.asarray(value))
        if p is not None:
            found[id(var)] = p
    if not found:
        return found
    for e in graph.eqns:
        p = _propagate(e, [_operand(a, found) for a in e.inputs])
        if p is not None and not p.all():
            found[id(e.out)] = p
    return found


def one_hot_products(graph: Graph) -> Graph:
    """``graph`` with its matrix products by one-hot operands as gathers (see the
    module docstring); ``graph`` itself when there are none."""
    if not any(e.prim is matmul_p for e in graph.eqns):
        return graph  # (no product to rewrite: no pattern is worth following)
    patterns: dict[int, np.ndarray] = {}
    masks: dict[int, np.ndarray] = {}  # the 0/1 constants, and their moves: pattern == value
    for var, value in graph.consts:
        p = _const_pattern(np.asarray(value))
        if p is not None:
            patterns[id(var)] = masks[id(var)] = p
    if not patterns:
        return graph
    eqns: list[Eqn] = []
    changed = False
    for e in graph.eqns:
        ins = [_operand(a, patterns) for a in e.inputs]
        new: Rewrite = None
        if e.prim is matmul_p and len(e.inputs) == 2 and len(e.inputs[0].shape) == 2 \
                and len(e.inputs[1].shape) == 2 and isinstance(e.inputs[0], Var) \
                and isinstance(e.inputs[1], Var):
            if _one_hot(ins[0]):
                new = _rows_product(e, e.inputs[0], e.inputs[1], ins[0], e.out,
                                    id(e.inputs[0]) in masks)
            elif ins[1] is not None and _one_hot(ins[1].T):
                new = _columns_product(e, e.inputs[0], e.inputs[1], ins[1],
                                       id(e.inputs[1]) in masks)
        if new is None:
            eqns.append(e)
        else:
            changed = True
            eqns.extend(new)
            for d in new:
                p = _propagate(d, [_operand(a, patterns) for a in d.inputs])
                if p is not None and not p.all():
                    patterns[id(d.out)] = p
            continue
        p = _propagate(e, ins)
        if p is not None and not p.all():  # (all nonzero: nothing to follow)
            patterns[id(e.out)] = p
            if e.prim in _MOVES and isinstance(e.inputs[0], Var) and id(e.inputs[0]) in masks:
                masks[id(e.out)] = p
    if not changed:
        return graph
    return Graph(graph.inputs, tuple(eqns), graph.outputs, graph.consts, graph.name)
