"""Sparsity patterns of Jacobians, read from the IR: which input elements each output
element may depend on.

Every value of the graph carries its *dependencies* on the differentiated input ``x``
(``n`` elements, flattened): a boolean sparse matrix with one row per element of the
value (CSR, ``size × n``), or ``None`` for a value that does not depend on ``x`` at all
(constants, the other arguments). The pattern of the Jacobian of an output is its
dependency matrix; the pattern of a Hessian is that of the Jacobian of the gradient
graph (:func:`hessian_pattern`).

The rules follow the primitive's declared kind, so that a wrong pattern (a silent wrong
number once the pattern drives a compressed Jacobian) can only come from a wrong
declaration, never from a missing rule:

- ``elementwise``: each output element depends on its (broadcast) operands' elements;
- ``structural`` (moves elements, computes nothing): the primitive's own numpy
  implementation is run on *codes* (:func:`~symgrad.passes.gathers.moved_from`),
  so each output element names the one element it was moved from, or none; a result
  that is not such a code makes it fall back as below;
- ``reduction`` over ``axes``: an output element depends on its whole fibre;
- ``matmul`` (1-D and 2-D operands), ``scatter_add`` and ``cumsum``: their own rules;
- anything else (``inv``, ``solve``, control flow, tuples, ...): **every output element
  depends on everything any operand depends on** (the union). Conservative: the
  pattern may be denser than the true one, never sparser.

A value whose matrix would hold more than :data:`MAX_NONZEROS` entries is kept as that
union (one row, shared by every element: :class:`Deps` ``uniform``), so that a dense
intermediate costs ``n``, not ``size × n``.

    >>> import numpy as np, symgrad as sg
    >>> g = sg.jit(lambda x: x[1:] * x[:-1], backend="numpy").graph(np.ones(4))
    >>> jacobian_pattern(g, 0).toarray().astype(int)
    array([[1, 1, 0, 0],
           [0, 1, 1, 0],
           [0, 0, 1, 1]])
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..core.ir import TUPLE, Graph, Literal
from ..prims.indexing import cumsum_p, scatter_add_p
from ..prims.linalg import matmul_p
from .gathers import moved_from

#: a dependency matrix larger than this is kept as the union of its rows
MAX_NONZEROS = 20_000_000


@dataclass(frozen=True)
class Deps:
    """A value's dependencies on ``x``: ``rows`` (one row per element, CSR ``size × n``)
    or, when ``uniform`` is set instead, that one row (``1 × n``) for every element."""

    rows: sp.csr_matrix | None = None
    uniform: sp.csr_matrix | None = None

    def union(self) -> sp.csr_matrix:
        """Everything any element depends on (``1 × n``)."""
        if self.uniform is not None:
            return self.uniform
        return _bool(sp.csr_matrix(self.rows.sum(axis=0) > 0))


def _bool(m: Any) -> sp.csr_matrix:
    m = sp.csr_matrix(m, dtype=bool)
    m.eliminate_zeros()
    m.sum_duplicates()
    return m


def _size(aval: Any) -> int:
    return math.prod(aval.shape)


def _sum_rows(parts: list[sp.csr_matrix]) -> sp.csr_matrix:
    total = parts[0].astype(np.int32)
    for p in parts[1:]:
        total = total + p.astype(np.int32)
    return _bool(total)


def _select(d: Deps, index: np.ndarray) -> Deps:
    """The rows ``index`` of ``d`` (a broadcast, a move), or the union if too many."""
    if d.uniform is not None:
        return d
    counts = np.diff(d.rows.indptr)
    if int(counts[index].sum()) > MAX_NONZEROS:
        return Deps(uniform=d.union())
    return Deps(rows=d.rows[index])


def _rows(d: Deps, size: int) -> sp.csr_matrix | None:
    """``d`` as one row per element (a uniform one repeated), if that is small enough."""
    if d.uniform is None:
        return d.rows
    if size * d.uniform.nnz > MAX_NONZEROS:
        return None
    return sp.csr_matrix(np.ones((size, 1), dtype=np.int32)) @ d.uniform.astype(np.int32)


def _combine(parts: list[Deps], size: int) -> Deps:
    """The element-by-element union of ``parts`` (all of ``size`` elements)."""
    if any(p.uniform is not None for p in parts):
        if all(p.uniform is not None for p in parts):
            return Deps(uniform=_sum_rows([p.union() for p in parts]))
        rows = [_rows(p, size) for p in parts]
        if any(r is None for r in rows):
            return Deps(uniform=_sum_rows([p.union() for p in parts]))
        return Deps(rows=_sum_rows(rows))
    if len(parts) == 1:
        return parts[0]
    return Deps(rows=_sum_rows([p.rows for p in parts]))


def _fallback(ins: list[Deps | None]) -> Deps:
    """Every output element depends on everything the operands depend on."""
    known = [d.union() for d in ins if d is not None]
    return Deps(uniform=_sum_rows(known))


def _through(P: sp.csr_matrix, d: Deps) -> Deps:
    """``P @ d``: output element ``i`` depends on the operand elements ``P[i]`` marks."""
    if d.uniform is not None:
        return d
    if int(np.diff(d.rows.indptr).max(initial=0)) * P.nnz > MAX_NONZEROS:
        return Deps(uniform=d.union())  # (a bound on the product's entries)
    return Deps(rows=_bool(P.astype(np.int32) @ d.rows.astype(np.int32)))


def _map(out_index: np.ndarray, in_index: np.ndarray, shape: tuple[int, int]) -> sp.csr_matrix:
    """The 0/1 matrix with ones at ``(out_index[k], in_index[k])``."""
    ones = np.ones(out_index.size, dtype=np.int8)
    return sp.csr_matrix((ones, (out_index.ravel(), in_index.ravel())), shape=shape)


def _elementwise(e: Any, ins: list[Deps | None]) -> Deps:
    shape = e.out.shape
    parts = []
    for a, d in zip(e.inputs, ins):
        if d is None:
            continue
        if a.shape == shape:
            parts.append(d)
        else:
            index = np.broadcast_to(np.arange(_size(a.aval)).reshape(a.shape), shape).ravel()
            parts.append(_select(d, index))
    return _combine(parts, _size(e.out.aval))


def _structural(e: Any, ins: list[Deps | None]) -> Deps:
    """Run the primitive on codes: output element = 1 + (the operand element it holds)."""
    if any(d is not None and d.uniform is not None for d in ins):
        rows = [None if d is None else _rows(d, _size(a.aval)) for a, d in zip(e.inputs, ins)]
        if any(r is None for r, d in zip(rows, ins) if d is not None):
            return _fallback(ins)
        ins = [None if r is None else Deps(rows=r) for r in rows]
    moved = moved_from(e)
    if moved is None:
        return _fallback(ins)  # not a pure move after all: stay conservative
    n = ins_n(ins)
    stacked = [sp.csr_matrix((1, n), dtype=bool)]
    for a, d in zip(e.inputs, ins):
        if not isinstance(a, Literal):  # (a literal operand has no elements, no code)
            stacked.append(d.rows if d is not None else
                           sp.csr_matrix((_size(a.aval), n), dtype=bool))
    return _select(Deps(rows=sp.vstack(stacked, format="csr")), moved)


def ins_n(ins: list[Deps | None]) -> int:
    """``n``, the number of elements of ``x`` (from any operand that depends on it)."""
    for d in ins:
        if d is not None:
            return (d.uniform if d.uniform is not None else d.rows).shape[1]
    raise AssertionError("no operand depends on x")


def _reduction(e: Any, ins: list[Deps | None]) -> Deps:
    (a,), (d,) = e.inputs, ins
    if set(e.params) != {"axes"}:
        return _fallback(ins)
    axes = e.params["axes"]
    kept = tuple(1 if k in axes else s for k, s in enumerate(a.shape))
    out_size = _size(e.out.aval)
    out_index = np.broadcast_to(np.arange(out_size).reshape(kept), a.shape)
    return _through(_map(out_index, np.arange(_size(a.aval)), (out_size, _size(a.aval))), d)


def _matmul(e: Any, ins: list[Deps | None]) -> Deps:
    a, b = e.inputs
    if not (1 <= len(a.shape) <= 2 and 1 <= len(b.shape) <= 2):
        return _fallback(ins)
    n_rows = a.shape[0] if len(a.shape) == 2 else 1
    k = a.shape[-1]
    m = b.shape[1] if len(b.shape) == 2 else 1
    if n_rows * m * k > MAX_NONZEROS:
        return _fallback(ins)
    i, j, kk = np.meshgrid(np.arange(n_rows), np.arange(m), np.arange(k), indexing="ij")
    out_index = (i * m + j).ravel()  # out[i, j] (row-major; a 1-D side has one of them)
    parts = []
    if ins[0] is not None:
        parts.append(_through(_map(out_index, (i * k + kk).ravel(), (n_rows * m, n_rows * k)),
                              ins[0]))
    if ins[1] is not None:
        parts.append(_through(_map(out_index, (kk * m + j).ravel(), (n_rows * m, k * m)),
                              ins[1]))
    return _combine(parts, n_rows * m)


def _scatter_add(e: Any, ins: list[Deps | None]) -> Deps:
    (a,), (d,) = e.inputs, ins
    axis, indices = e.params["axis"], np.asarray(e.params["indices"], dtype=np.int64)
    src = np.moveaxis(np.arange(_size(a.aval)).reshape(a.shape), axis, 0)
    dst = np.moveaxis(np.arange(_size(e.out.aval)).reshape(e.out.shape), axis, 0)[indices]
    return _through(_map(dst, src, (_size(e.out.aval), _size(a.aval))), d)


def _cumsum(e: Any, ins: list[Deps | None]) -> Deps:
    (a,), (d,) = e.inputs, ins
    axis, size = e.params["axis"], _size(a.aval)
    length = a.shape[axis]
    if size * (length + 1) // 2 > MAX_NONZEROS:
        return _fallback(ins)
    moved = np.moveaxis(np.arange(size).reshape(a.shape), axis, -1).reshape(-1, length)
    hi, lo = np.tril_indices(length)  # out[..., hi] sums in[..., lo] for every lo <= hi
    return _through(_map(moved[:, hi], moved[:, lo], (size, size)), d)


_ARRAY_RULES = {matmul_p: _matmul, scatter_add_p: _scatter_add, cumsum_p: _cumsum}


def _rule(e: Any, ins: list[Deps | None]) -> Deps:
    if e.out.aval.dtype == TUPLE or any(
            not isinstance(a, Literal) and a.aval.dtype == TUPLE for a in e.inputs):
        return _fallback(ins)
    kind = e.prim.kind
    if kind == "elementwise":
        return _elementwise(e, ins)
    if kind == "structural":
        return _structural(e, ins)
    if kind == "reduction":
        return _reduction(e, ins)
    rule = _ARRAY_RULES.get(e.prim)
    return rule(e, ins) if rule is not None else _fallback(ins)


def dependencies(graph: Graph, wrt: int) -> list[Deps | None]:
    """The dependencies of each output of ``graph`` on its input ``wrt``."""
    x = graph.inputs[wrt]
    n = _size(x.aval)
    deps: dict[int, Deps] = {id(x): Deps(rows=sp.identity(n, dtype=bool, format="csr"))}
    for e in graph.eqns:
        ins = [None if isinstance(a, Literal) else deps.get(id(a)) for a in e.inputs]
        if any(d is not None for d in ins):
            deps[id(e.out)] = _rule(e, ins)
    return [None if isinstance(a, Literal) else deps.get(id(a)) for a in graph.outputs]


def jacobian_pattern(graph: Graph, wrt: int, output: int = 0) -> sp.csr_matrix:
    """The pattern (boolean CSR, ``out.size × x.size``) of the Jacobian of ``graph``'s
    output ``output`` with respect to its input ``wrt``: a superset of its nonzeros."""
    out = graph.outputs[output]
    m, n = _size(out.aval), _size(graph.inputs[wrt].aval)
    d = dependencies(graph, wrt)[output]
    if d is None:
        return sp.csr_matrix((m, n), dtype=bool)
    if d.uniform is not None:
        if m * d.uniform.nnz > MAX_NONZEROS:
            raise ValueError(
                f"the Jacobian's sparsity pattern is dense ({m} x {n} with {d.uniform.nnz} "
                "columns in every row): too large for a sparse matrix; compute it with "
                "sparse=False, or in pieces")
        return _bool(sp.csr_matrix(np.ones((m, 1), dtype=bool)) @ d.uniform)
    return d.rows


def hessian_pattern(gradient_graph: Graph, wrt: int) -> sp.csr_matrix:
    """The pattern of a Hessian, from the graph of the gradient (output 0) with respect
    to input ``wrt``: the Jacobian pattern of the gradient, made symmetric (the Hessian
    is; the union keeps it a superset)."""
    p = jacobian_pattern(gradient_graph, wrt)
    return _bool(p.astype(np.int32) + p.T.astype(np.int32))
