"""Batching: a graph on one example becomes a graph on a batch (``vmap``).

:func:`batch` replays a graph's equations with some inputs carrying an extra
leading axis of length ``size``, the batch axis. An equation none of whose
operands has it is recorded as it is, once for the whole batch; one that has
it is rewritten by its primitive's batching rule, so that the batch axis of
its result is again the leading one:

- an elementwise primitive (by its kind): each batched operand gets length-1
  axes after the batch axis up to the result's rank, so numpy broadcasting
  lines the batch axes up and leaves the other axes as they were;
- a reduction over ``axes`` (by its kind): the axes move up by one;
- any other primitive: its ``batch`` facet, declared with it in
  :mod:`symgrad.prims` and written against :class:`Batcher`. Control flow
  (:mod:`symgrad.prims.control_batching`) batches the graphs it holds with
  :meth:`Batcher.graph` and returns its tuple *unpacked*: a Python tuple of
  atoms, with a tuple of flags, one per part, which ``proj``'s facet reads.

A primitive with no rule is refused by name (:class:`NotBatchable`), never
guessed. The result is IR like any other graph: the passes, fusion, codegen,
the adjoint and SymPy apply to it, so ``vmap(grad(f))``, ``grad(vmap(f))`` and
Jacobians built from them compile to one kernel.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.ir import Atom, Aval, Graph, Primitive, Var
from ..core.tracing import Trace
from ..prims.control import proj_p
from ..prims.reductions import broadcast_to_p, reshape_p, transpose_p


class NotBatchable(NotImplementedError):
    """A primitive without a batching rule met a batched operand."""


class Batcher:
    """What a ``batch`` facet records with: ``bind`` and a few reshapes, on atoms."""

    def __init__(self, trace: Trace, size: int):
        self.trace, self.size = trace, size

    def bind(self, prim: Primitive, args: Sequence[Atom], **params: Any) -> Var:
        return self.trace.bind(prim, list(args), params)

    @staticmethod
    def shape(a: Atom) -> tuple[int, ...]:
        return a.aval.shape

    def reshape(self, a: Atom, shape: tuple[int, ...]) -> Atom:
        if self.shape(a) == tuple(shape):
            return a
        return self.bind(reshape_p, [a], shape=tuple(shape))

    def broadcast_to(self, a: Atom, shape: tuple[int, ...]) -> Atom:
        if self.shape(a) == tuple(shape):
            return a
        return self.bind(broadcast_to_p, [a], shape=tuple(shape))

    def transpose(self, a: Atom, perm: tuple[int, ...]) -> Atom:
        if tuple(perm) == tuple(range(len(perm))):
            return a
        return self.bind(transpose_p, [a], perm=tuple(perm))

    def graph(self, graph: Graph, batched: Sequence[bool]) -> tuple[Graph, list[bool]]:
        """A graph held by an equation (a loop's body, a branch), batched: :func:`batch`
        with this batch size, for the ``batch`` facets of control-flow primitives."""
        return batch(graph, batched, self.size)

    def parts(self, t: Atom, n: int) -> list[Var]:
        """The ``n`` parts of a tuple value (a control-flow equation's results)."""
        return [self.bind(proj_p, [t], part=k) for k in range(n)]

    @staticmethod
    def refuse(message: str) -> NotBatchable:
        """The error a ``batch`` facet raises for a case it does not batch."""
        return NotBatchable(message)

    def with_batch(self, a: Atom) -> Atom:
        """An unbatched operand with the batch axis, by broadcasting."""
        return self.broadcast_to(a, (self.size, *self.shape(a)))

    def aligned(self, a: Atom, batched: bool, rank: int) -> Atom:
        """A batched operand with length-1 axes after the batch axis, so that it has
        ``rank`` axes besides the batch axis (numpy broadcasting then lines it up)."""
        if not batched:
            return a
        shape = self.shape(a)[1:]
        return self.reshape(a, (self.size, *(1,) * (rank - len(shape)), *shape))


def batch(graph: Graph, batched: Sequence[bool], size: int) -> tuple[Graph, list[bool]]:
    """``graph`` on a batch: the inputs marked in ``batched`` have a leading batch axis
    of length ``size`` (their avals gain it). Returns the graph and, per output, whether
    it has the batch axis (an output that depends on no batched input has not)."""
    inputs = [Var(Aval((size, *v.shape), v.dtype), v.hint) if b else v
              for v, b in zip(graph.inputs, batched, strict=True)]
    trace = Trace(consts=graph.consts)
    b = Batcher(trace, size)
    env: dict[int, tuple[Atom, bool]] = {id(v): (new, flag)
                                         for v, new, flag in zip(graph.inputs, inputs, batched)}
    for var, _ in graph.consts:
        env[id(var)] = (var, False)

    def read(a: Atom) -> tuple[Atom, bool]:
        return env[id(a)] if isinstance(a, Var) else (a, False)

    for e in graph.eqns:
        args, flags = zip(*map(read, e.inputs)) if e.inputs else ((), ())
        if not any(flags):
            env[id(e.out)] = (trace.bind(e.prim, list(args), dict(e.params)), False)
        else:
            env[id(e.out)] = rule(e.prim)(b, list(args), list(flags), **e.params)
    outputs, flags = zip(*map(read, graph.outputs))
    return (Graph(tuple(inputs), tuple(trace.eqns), tuple(outputs), trace.consts, graph.name),
            list(flags))


def rule(prim: Primitive) -> Any:
    """The batching rule of ``prim``: its ``batch`` facet, or its kind's."""
    if prim.batch is not None:
        return prim.batch
    if prim.kind == "elementwise":
        return lambda b, args, flags, **params: _elementwise(prim, b, args, flags, params)
    if prim.kind == "reduction":
        return lambda b, args, flags, **params: _reduction(prim, b, args, flags, params)
    raise NotBatchable(f"vmap: the primitive {prim.name} has no batching rule yet; compute "
                       "the batch with a Python loop (or ask for the rule)")


def _elementwise(prim: Primitive, b: Batcher, args: list[Atom], flags: list[bool],
                 params: dict) -> tuple[Atom, bool]:
    rank = max(len(b.shape(a)) - f for a, f in zip(args, flags))
    aligned = [b.aligned(a, f, rank) for a, f in zip(args, flags)]
    return b.bind(prim, aligned, **params), True


def _reduction(prim: Primitive, b: Batcher, args: list[Atom], flags: list[bool],
               params: dict) -> tuple[Atom, bool]:
    (x,) = args
    return b.bind(prim, [x], **{**params, "axes": tuple(a + 1 for a in params["axes"])}), True


__all__ = ["Batcher", "NotBatchable", "batch", "rule"]
