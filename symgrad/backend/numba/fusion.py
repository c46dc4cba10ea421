"""Loop fusion: which equations of a graph share one loop of the kernel.

A pure planning pass over an optimized graph; :mod:`symgrad.backend.numba.codegen`
prints the plan. Equations are visited in program order; one loop is the
current one, and independent elementwise work of another shape gets loops of
its own before it:

- an elementwise equation whose output has the loop's shape and whose operands
  the loop can read joins its body: one scalar statement per element;
- a ``sum`` or ``mean`` of such a value joins too, as an accumulator;
- an equation that does not depend on the loop moves before it (``pre``);
  elementwise ones there are fused into loops of their own;
- an elementwise equation that depends on the loop's results starts the next
  loop; any other runs after the loop (``post``).

Inside a loop every value is a scalar. Values the loop reads but does not
compute are read through where that is cheap (:func:`inline`): element moves
(primitives with an ``element`` facet: ``slice``, ``unslice``, ``concatenate``,
``broadcast_to``) become index arithmetic, and ``cheap`` elementwise values (of
earlier loops, or moved out of them) are computed again at the element the
reader needs, within :data:`RECOMPUTE_BUDGET` equations (moves of one operand are
free).
So a forward intermediate such as ``x + 2`` that the gradient needs again is
computed twice and never stored, and the adjoint of ``x[1:]`` is an ``if`` on
the index rather than an array of zeros. Everything else is read from an
array: :attr:`Plan.arrays` is every value something reads as an array (an
output, a standalone equation, a loop over values it would rather not compute
again), and only those arrays are made. Matrix products and the other linalg
primitives stay whole-array calls (BLAS). Every decision reads the flags of
the primitives (see :class:`symgrad.core.ir.Primitive`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...core.ir import Atom, Eqn, Graph, Var, eqn_vars, nbytes
from .lowering import lowering

#: at most this many equations (element moves of one operand not counted: they are index
#: arithmetic) are computed again for one operand; 20 lets Rosenbrock's Hessian-vector
#: product be one loop
RECOMPUTE_BUDGET = 20


def inline(eqn: Eqn) -> bool:
    """What a loop computes again where it reads it (never stored for that loop's sake):
    cheap elementwise work, and element moves (read through by index arithmetic); not a
    whole-array test (:func:`whole_array`)."""
    low = lowering(eqn.prim)
    return (low.cheap or low.moves_elements) and not whole_array(eqn)


def whole_array(eqn: Eqn) -> bool:
    """An elementwise equation whose test reads the whole array: ``to_float`` with
    ``total`` (the sum of magnitudes of integers a sum will add exactly, see
    symgrad.prims.overflow.check_exact), which an element of a loop cannot make."""
    return bool(eqn.params.get("total"))


@dataclass(eq=False)
class Loop:
    """One loop nest over ``shape``: ``pre`` equations, then the loop, then ``post``."""

    shape: tuple[int, ...]
    pre: list[Eqn | Loop] = field(default_factory=list)  # loops: independent work
    body: list[Eqn] = field(default_factory=list)  # in order; sums and means accumulate
    post: list[Eqn] = field(default_factory=list)
    scalars: set[int] = field(default_factory=set)  # ids of values the body computes
    results: set[int] = field(default_factory=set)  # ids of values known after the loop


@dataclass
class Plan:
    """The kernel body in order: standalone equations and loops."""

    items: list[Eqn | Loop]
    arrays: set[int]  # ids of values that must exist as arrays (others are read through)
    producer: dict[int, Eqn]


def fusible(eqn: Eqn) -> bool:
    """Elementwise work over a non-empty shape: the equations that start a loop."""
    return eqn.prim.kind == "elementwise" and bool(eqn.out.shape) and not whole_array(eqn)


def transposed(a: Atom, producer: dict[int, Eqn]) -> Var | None:
    """``c`` if ``a`` is ``transpose(c)`` of a C-contiguous matrix ``c``: then ``c.T`` is
    F-contiguous, which BLAS takes as it is (no copy). Kernel arguments are C-contiguous,
    and so is every array a kernel makes that is not a view, and a reshape's."""
    e = producer.get(id(a)) if isinstance(a, Var) else None
    if e is None or not lowering(e.prim).transposes or e.params["perm"] != (1, 0):
        return None
    c = e.inputs[0]
    made = producer.get(id(c))
    return c if isinstance(c, Var) and (made is None or not made.prim.view
                                        or lowering(made.prim).contiguous) else None


def reads(eqn: Eqn, producer: dict[int, Eqn]) -> list[Var]:
    """The arrays ``eqn`` reads. ``count`` reads only a shape, which the kernel knows; a
    matrix product reads the matrix of a transposed operand (see :func:`transposed`)."""
    if lowering(eqn.prim).shape_only:
        return []
    if lowering(eqn.prim).transposed_operands:
        return [transposed(a, producer) or a for a in eqn.inputs if isinstance(a, Var)]
    return [a for a in eqn.inputs if isinstance(a, Var)]


def plan(graph: Graph) -> Plan:
    """The loops and standalone equations of ``graph``'s kernel."""
    producer = {id(e.out): e for e in graph.eqns}
    arrays: set[int] = set()
    items: list[Eqn | Loop] = []
    loop: Loop | None = None

    def reach(v: Var, into: Loop, identity: bool, wanted: set[int], budget: list[int]) -> bool:
        """Can ``into`` read ``v`` (at its own element if ``identity``)? Adds to
        ``wanted`` what must be an array for that; computes cheap values again."""
        if not v.shape:
            return id(v) not in into.results
        if id(v) in into.results:
            return False
        if identity and id(v) in into.scalars:
            return True
        e = producer.get(id(v))
        if e is not None and inline(e) and id(v) not in arrays and budget[0] > 0:
            # an element move of one operand is index arithmetic: free; one of several
            # (concatenate) reads them all, and a chain of those doubles at each step
            budget[0] -= not lowering(e.prim).moves_elements or len(reads(e, producer)) > 1
            return all(reach(a, into, identity and a.shape == v.shape
                             and not lowering(e.prim).moves_elements, wanted, budget)
                       for a in reads(e, producer))
        if id(v) in into.scalars:  # this loop's value at another element: not stored yet
            return False
        wanted.add(id(v))
        return True

    def join(eqn: Eqn, into: Loop) -> bool:
        """Add ``eqn`` to the body of ``into`` if it fits there."""
        if eqn.prim.accumulate:
            x = eqn.inputs[0]
            if not (isinstance(x, Var) and x.shape == into.shape and eqn.params["axes"]):
                return False
        elif not (fusible(eqn) and eqn.out.shape == into.shape):
            return False
        wanted: set[int] = set()
        for a in reads(eqn, producer):
            mine: set[int] = set()
            if reach(a, into, a.shape == into.shape, mine, [RECOMPUTE_BUDGET]):
                wanted |= mine
            elif id(a) in into.scalars or id(a) in into.results:
                return False
            else:
                wanted.add(id(a))  # too much to compute again: read it
        arrays.update(wanted)
        into.body.append(eqn)
        (into.results if eqn.prim.accumulate else into.scalars).add(id(eqn.out))
        return True

    def depends(eqn: Eqn, on: Loop) -> bool:
        return any(id(a) in on.scalars or id(a) in on.results for a in reads(eqn, producer))

    for eqn in graph.eqns:
        if loop is not None and join(eqn, loop):
            continue
        if fusible(eqn) and loop is not None and not depends(eqn, loop):
            # elementwise work of another shape that does not need the loop: a loop of
            # its own before it (the last thing before it, so that order is kept)
            side = loop.pre[-1] if loop.pre else None
            if not (isinstance(side, Loop) and join(eqn, side)):
                side = Loop(eqn.out.shape)
                join(eqn, side)
                loop.pre.append(side)
            continue
        if fusible(eqn):  # elementwise work that needs the loop's results: the next loop
            if loop is not None:
                items.append(loop)
            loop = Loop(eqn.out.shape)
            join(eqn, loop)
            continue
        if loop is not None and not depends(eqn, loop):
            loop.pre.append(eqn)
        elif loop is not None:
            loop.post.append(eqn)
            loop.results.add(id(eqn.out))
        else:
            items.append(eqn)
        if not lowering(eqn.prim).moves_elements:  # movers: read through, or made on demand
            arrays.update(id(a) for a in reads(eqn, producer))
    arrays.update(id(a) for a in graph.outputs if isinstance(a, Var))
    for eqn in reversed(graph.eqns):  # a mover made as an array needs its operand as one
        if lowering(eqn.prim).moves_elements and id(eqn.out) in arrays:
            arrays.update(id(a) for a in reads(eqn, producer))
    if loop is not None:
        items.append(loop)
    return Plan(items, arrays, producer)


def kernel_bytes(graph: Graph) -> int:
    """About the most bytes a kernel of ``graph`` holds at once: its inputs and the
    arrays its plan makes (:attr:`Plan.arrays`); values a loop computes where it
    reads them take none. The numpy interpreter's counterpart is
    :func:`symgrad.core.interpreter.peak_bytes`."""
    made = plan(graph).arrays
    inputs = {id(v) for v in graph.inputs}
    return sum(nbytes(v.aval) for v in eqn_vars(graph) if id(v) in made or id(v) in inputs)
