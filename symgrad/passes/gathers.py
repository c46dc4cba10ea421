"""Gathers pulled up to where their elements are made: a Hessian's basis never
materialised.

``sg.hessian`` batches the tangents of an identity basis. After
:func:`~symgrad.passes.structure.one_hot_products`, what stays of the basis are
*element moves and masked sums of big intermediates*: at d = 100 the log-det Hessian
built ``(d, d, d)`` and ``(d², d)`` arrays (the tangent of ``diag(exp(x))``, of
``inv``) only to read ``d`` or ``d²`` of their elements. Two exact rewrites make each
element computed only where it is read:

- a ``sum`` over axes along which its operand has at most one nonzero per fibre
  (the operand's *pattern*, followed from the graph's 0/1 constants by
  :func:`~symgrad.passes.structure.patterns`) is a gather of those elements;
- a gather (any single-operand element move that keeps at most 1/:data:`MIN_SHRINK` of
  the elements it reads: ``gather``, ``slice``, ...) of a value made by an elementwise
  primitive is that primitive on gathers of its operands; of a value made by an element move (or a
  ``scatter_add`` with distinct indices), one gather composed through it; of a
  constant, a smaller constant. Elsewhere the pulled gather stops, as one flat
  ``gather`` of the value (with a ``scatter_add`` into zeros for the elements the moves
  filled with zeros).

Both run only on graphs that hold a 0/1 constant (a basis, a mask): elsewhere a slice of
a big array stays a slice, which the backend's loops read through, rather than a gather
with an index per element.

An element is the same bits whichever way it is computed, except for what
:mod:`~symgrad.passes.structure` already drops: the sum of one element and
structural zeros is that element (``-0.0`` stays ``-0.0``; an ``inf`` times a zero of
the basis no longer makes a NaN).

    >>> import numpy as np, symgrad as sg
    >>> f = lambda x: np.linalg.slogdet(np.eye(20) * np.exp(x) + 1.0)[1]
    >>> g = sg.hessian(f, backend="numpy").graph(np.zeros(20))
    >>> bool(max(np.prod(e.out.shape) for e in g.eqns) <= 400)  # no (20, 20, 20) array left
    True

(At d = 5 the moves keep a fifth of what they read, more than the eighth below which
they are pulled, and the (5, 5, 5) values stay.)
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from ..core.ir import TUPLE, Aval, Eqn, Graph, Literal, Var, freeze_params
from ..prims.indexing import gather_p, scatter_add_p
from ..prims.reductions import reshape_p, sum_p
from .structure import MAX_ELEMENTS, patterns

#: a sum is a gather only if its fibres are at least this long
MIN_FIBRE = 4
#: an element move is pulled up only if it reads this many times the elements it keeps
MIN_SHRINK = 8


def _size(a: Any) -> int:
    return math.prod(a.shape)


def moved_from(e: Eqn) -> np.ndarray | None:
    """For an element move (``structural`` primitive), where each output element comes
    from: ``0`` for a zero it fills in, ``1 + k`` for the ``k``-th element of its
    operands (flattened one after the other; a literal operand has none). Found by
    running the primitive's numpy implementation on those codes, and again on their
    squares (a sum of codes can be a code, a sum of squares is not that code's square);
    ``None`` if a result is not such a code (the primitive computes after all) or it
    does not run on them."""
    codes, offset = [], 1
    for a in e.inputs:
        if isinstance(a, Literal) or a.aval.dtype == TUPLE:
            if not isinstance(a, Literal):
                return None
            codes.append(np.zeros(()))
            continue
        codes.append((offset + np.arange(_size(a), dtype=np.float64)).reshape(a.shape))
        offset += _size(a)
    if e.out.aval.dtype == TUPLE or _size(e.out) > MAX_ELEMENTS or offset > 1 << 26:
        return None
    try:
        out = np.asarray(e.prim.impl(*codes, **e.params), dtype=np.float64).ravel()
        squares = np.asarray(e.prim.impl(*[c * c for c in codes], **e.params),
                             dtype=np.float64).ravel()
    except Exception:  # noqa: BLE001 -- an implementation that does not take codes
        return None
    if out.size != _size(e.out) or not np.all((out == np.round(out)) & (out >= 0)
                                              & (out < offset)) \
            or not np.array_equal(squares, out * out):
        return None
    return out.astype(np.int64)


def _source_map(p: Eqn) -> np.ndarray | None:
    """For ``p`` an element move of one operand, or a ``scatter_add`` with distinct
    indices: the operand's flat index of each output element, ``-1`` for a zero."""
    operands = [a for a in p.inputs if not isinstance(a, Literal)]
    if len(operands) != 1 or p.inputs[0] is not operands[0]:
        return None
    if p.prim is scatter_add_p:
        if len(set(p.params["indices"])) != len(p.params["indices"]) \
                or p.params.get("neg_zero"):
            return None  # repeated indices add up, -0.0 elsewhere: not a move
    elif p.prim.kind != "structural":
        return None
    codes = p.prim.impl(*[(1 + np.arange(_size(operands[0]), dtype=np.float64))
                          .reshape(operands[0].shape)], **p.params) \
        if p.prim is scatter_add_p else None
    if codes is None:
        moved = moved_from(p)
        return None if moved is None else moved - 1
    codes = np.asarray(codes).ravel()
    return codes.astype(np.int64) - 1


class _Builder:
    """The new equations, and the gathers already made (each index set once per value)."""

    def __init__(self, graph: Graph):
        self.eqns: list[Eqn] = []
        self.consts: dict[int, np.ndarray] = {id(v): np.asarray(x) for v, x in graph.consts}
        self.new_consts: list[tuple[Var, np.ndarray]] = []
        self.producer: dict[int, Eqn] = {}
        self.taken: dict[tuple[int, bytes], Any] = {}

    def bind(self, like: Eqn, prim: Any, inputs: tuple, aval: Aval, **params: Any) -> Var:
        out = Var(aval)
        e = replace(like, prim=prim, inputs=inputs, out=out, params=freeze_params(params))
        self.eqns.append(e)
        self.producer[id(out)] = e
        return out

    def keep(self, e: Eqn) -> None:
        self.eqns.append(e)
        self.producer[id(e.out)] = e

    def take(self, like: Eqn, y: Any, idx: np.ndarray) -> Any:
        """A 1-D value: ``y``'s elements at the flat indices ``idx`` (``-1``: a zero)."""
        if isinstance(y, Literal):
            return y
        valid = idx >= 0
        if not valid.all():
            if not valid.any():
                return self.const(like, np.zeros(idx.size, y.aval.dtype))
            part = self.take(like, y, idx[valid])
            positions = tuple(int(i) for i in np.flatnonzero(valid))
            if isinstance(part, Literal):  # a scalar wherever it is read
                part = self.const(like, np.full(len(positions), part.value, y.aval.dtype))
            return self.bind(like, scatter_add_p, (part,), Aval((idx.size,), y.aval.dtype),
                             indices=positions, axis=0, size=idx.size)
        key = (id(y), idx.tobytes())
        hit = self.taken.get(key)
        if hit is None:
            hit = self.taken[key] = self._take(like, y, idx)
        return hit

    def const(self, like: Eqn, value: np.ndarray) -> Var:
        value = np.array(value)
        value.flags.writeable = False
        v = Var(Aval(value.shape, str(value.dtype)))
        self.consts[id(v)] = value
        self.new_consts.append((v, value))
        return v

    def _take(self, like: Eqn, y: Var, idx: np.ndarray) -> Any:
        if id(y) in self.consts:
            value = self.consts[id(y)].ravel()[idx]
            if value.size and value.dtype.kind == "f" and (value == value[0]).all() \
                    and y.aval.dtype == "float64":
                return Literal(float(value[0]))  # the same number everywhere: a literal
            return self.const(like, value)
        p = self.producer.get(id(y))
        if p is not None and idx.size < _size(y) and y.aval.dtype != TUPLE:
            if p.prim.kind == "elementwise":
                ins, wide = [], False
                for z in p.inputs:
                    if isinstance(z, Literal):
                        ins.append(z)
                        continue
                    spread = np.broadcast_to(np.arange(_size(z)).reshape(z.shape), y.shape)
                    at = spread.ravel()[idx]
                    if _size(z) == 1:  # one element, broadcast: it stays one
                        ins.append(self.take(like, z, at[:1]))
                    else:
                        ins.append(self.take(like, z, at))
                        wide = wide or not isinstance(ins[-1], Literal)
                if wide:
                    return self.bind(p, p.prim, tuple(ins), Aval((idx.size,), y.aval.dtype),
                                     **p.params)
            else:
                source = _source_map(p)
                if source is not None:
                    return self.take(like, p.inputs[0], source[idx])
        flat = y
        if len(y.shape) != 1:
            flat = self.bind(like, reshape_p, (y,), Aval((_size(y),), y.aval.dtype),
                             shape=(_size(y),))
        if idx.size == _size(y) and (idx == np.arange(idx.size)).all():
            return flat
        return self.bind(like, gather_p, (flat,), Aval((idx.size,), y.aval.dtype),
                         indices=tuple(int(i) for i in idx), axis=0)

    def finish(self, e: Eqn, y: Any, idx: np.ndarray) -> None:
        """``e.out`` as ``y``'s elements at ``idx`` (``-1``: a zero), in ``e.out``'s shape."""
        got = self.take(e, y, idx)
        if isinstance(got, Literal):
            got = self.const(e, np.full(idx.size, got.value, e.out.aval.dtype))
        self.keep(replace(e, prim=reshape_p, inputs=(got,),
                          params=freeze_params({"shape": e.out.shape})))


def _one_per_fibre(e: Eqn, pattern: np.ndarray | None) -> np.ndarray | None:
    """For a ``sum`` whose operand has at most one nonzero per fibre: the flat index of
    that element in the operand for each output element (``-1``: an empty fibre)."""
    if pattern is None or e.out.aval.dtype == TUPLE:
        return None
    (x,) = e.inputs
    axes = tuple(e.params["axes"])
    kept = [k for k in range(len(x.shape)) if k not in axes]
    fibre = math.prod(x.shape[k] for k in axes)
    if fibre < MIN_FIBRE or not kept and fibre < 2:
        return None
    perm = (*kept, *axes)
    p = np.broadcast_to(pattern, x.shape).transpose(perm).reshape(-1, fibre)
    if not (p.sum(axis=1) <= 1).all():
        return None
    flat = np.arange(_size(x)).reshape(x.shape).transpose(perm).reshape(-1, fibre)
    return np.where(p.any(axis=1), flat[np.arange(p.shape[0]), p.argmax(axis=1)], -1)


def sink_gathers(graph: Graph) -> Graph:
    """``graph`` with its one-element-per-fibre sums as gathers and its gathers pulled up
    (see the module docstring); ``graph`` itself when nothing changes."""
    if not any(e.prim.kind == "structural" or e.prim is sum_p for e in graph.eqns):
        return graph
    known = patterns(graph)
    if not known:  # no basis, no mask: what this pass is for is not there
        return graph
    b = _Builder(graph)
    changed = False
    for e in graph.eqns:
        (y, *rest) = e.inputs or (None,)
        if e.prim is sum_p and isinstance(y, Var):
            idx = _one_per_fibre(e, known.get(id(y)))
            if idx is not None:
                b.finish(e, y, idx)
                changed = True
                continue
        if e.prim.kind == "structural" and isinstance(y, Var) and not rest \
                and _size(e.out) * MIN_SHRINK <= _size(y) <= MAX_ELEMENTS \
                and _worth_pulling(b, y):
            source = _source_map(e)
            if source is not None:
                b.finish(e, y, source)
                changed = True
                continue
        b.keep(e)
    if not changed:
        return graph
    return Graph(graph.inputs, tuple(b.eqns), graph.outputs,
                 (*graph.consts, *b.new_consts), graph.name)


def _worth_pulling(b: _Builder, y: Var) -> bool:
    """Whether a gather of ``y`` has anywhere to go: ``y`` is made by an elementwise
    primitive, an element move or a scatter, or is a constant."""
    if id(y) in b.consts:
        return True
    p = b.producer.get(id(y))
    return p is not None and (p.prim.kind in ("elementwise", "structural")
                              or p.prim is scatter_add_p)
