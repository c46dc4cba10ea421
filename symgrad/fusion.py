"""Loop fusion: which equations of a graph share one loop of the kernel.

A pure planning pass over an optimized graph; :mod:`symgrad.codegen` prints
the plan. Equations are visited in program order and one loop is open at a
time:

- an elementwise equation (or a ``broadcast_to``) whose output has the loop's
  shape and whose operands can be read inside the loop joins its body: it
  becomes one scalar statement per element;
- a ``sum`` or ``mean`` of such a value joins too, as an accumulator;
- an equation that does not depend on the loop moves before it (``pre``);
- one that depends on the loop's accumulated results either starts the next
  loop (if it is elementwise) or runs after the loop (``post``).

Inside a loop every value is a scalar. A body value becomes an array only if
something outside the loop reads it: an output, a non-elementwise equation, or
a later loop that would rather read it than recompute it. A later loop of the
same shape recomputes a value when its cone of cheap equations (down to values
that already exist) is small, so a forward intermediate such as ``x + 2`` that
the gradient needs again is computed twice and never stored. No temporary
array is made where a loop can carry a scalar; matmul and the other linalg
primitives stay whole-array calls (BLAS).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import primitives as P
from .ir import Eqn, Graph, Var

#: primitives cheap enough to compute twice rather than store and load
CHEAP = frozenset({
    P.add_p, P.sub_p, P.mul_p, P.div_p, P.neg_p, P.square_p, P.abs_p, P.sign_p, P.relu_p,
    P.maximum_p, P.minimum_p, P.where_p, P.reciprocal_p, P.broadcast_to_p,
    P.floor_p, P.ceil_p, P.trunc_p, P.rint_p,
    *(P.REGISTRY[c] for c in ("gt", "ge", "lt", "le", "eq", "ne")),
})
#: at most this many equations are recomputed for one value
RECOMPUTE_BUDGET = 8
#: reductions a loop accumulates
ACCUMULATED = frozenset({P.sum_p, P.mean_p})


@dataclass(eq=False)
class Loop:
    """One loop nest over ``shape``: ``pre`` equations, then the loop, then ``post``."""

    shape: tuple[int, ...]
    pre: list[Eqn] = field(default_factory=list)
    body: list[Eqn] = field(default_factory=list)  # in order; sums and means accumulate
    post: list[Eqn] = field(default_factory=list)
    recomputed: set[int] = field(default_factory=set)  # ids of body eqns from earlier loops
    scalars: set[int] = field(default_factory=set)     # ids of values the body computes
    results: set[int] = field(default_factory=set)     # ids of values known after the loop


@dataclass
class Plan:
    """The kernel body in order: standalone equations and loops."""

    items: list[Eqn | Loop]
    arrays: set[int]  # ids of body values that are stored as arrays


def _reads(eqn: Eqn) -> list[Var]:
    """The values ``eqn`` reads; ``count`` reads only a shape, which the kernel knows."""
    return [] if eqn.prim is P.count_p else [a for a in eqn.inputs if isinstance(a, Var)]


def fusible(eqn: Eqn) -> bool:
    """Elementwise work over a non-empty shape: the equations that start a loop."""
    return eqn.prim.kind == "elementwise" and bool(eqn.out.shape)


def plan(graph: Graph) -> Plan:
    """The loops and standalone equations of ``graph``'s kernel."""
    producer = {id(e.out): e for e in graph.eqns}
    home: dict[int, Loop] = {}   # body value -> the loop that first computes it
    arrays: set[int] = set()
    items: list[Eqn | Loop] = []
    loop: Loop | None = None

    def need_arrays(eqn: Eqn) -> None:
        """``eqn`` runs outside any loop body: the body values it reads must be arrays."""
        arrays.update(id(a) for a in _reads(eqn) if id(a) in home)

    def cone(v: Var, into: Loop) -> list[Eqn] | None:
        """The equations that recompute ``v`` in ``into``, or None if that is not cheap."""
        order: list[Eqn] = []
        seen: set[int] = set()

        def visit(u: Var) -> bool:
            if id(u) in into.scalars or id(u) in seen or id(u) in arrays or id(u) not in home:
                return True  # computed here already, or readable as it is
            e = producer[id(u)]
            if u.shape != into.shape or e.prim not in CHEAP or e.prim in ACCUMULATED:
                return False
            if not all(visit(a) for a in e.inputs if isinstance(a, Var)):
                return False
            seen.add(id(u))
            order.append(e)
            return len(order) <= RECOMPUTE_BUDGET

        return order if visit(v) else None

    def join(eqn: Eqn, into: Loop) -> bool:
        """Add ``eqn`` to the body of ``into`` if it fits; recompute what it needs."""
        if eqn.prim in ACCUMULATED:
            x = eqn.inputs[0]
            if not (isinstance(x, Var) and x.shape == into.shape and eqn.params["axes"]):
                return False
        elif not ((fusible(eqn) or eqn.prim is P.broadcast_to_p) and eqn.out.shape == into.shape):
            return False
        operands = [a for a in eqn.inputs if isinstance(a, Var)]
        if any(id(a) in into.results for a in operands):
            return False
        for a in operands:
            if id(a) in home and id(a) not in into.scalars:  # a body value of an earlier loop
                again = cone(a, into) if a.shape == into.shape else None
                if again is None:
                    arrays.add(id(a))
                else:
                    into.body += again
                    into.recomputed.update(id(e) for e in again)
                    into.scalars.update(id(e.out) for e in again)
        into.body.append(eqn)
        if eqn.prim in ACCUMULATED:
            into.results.add(id(eqn.out))
        else:
            into.scalars.add(id(eqn.out))
            home.setdefault(id(eqn.out), into)
        return True

    def depends(eqn: Eqn, on: Loop) -> bool:
        return any(id(a) in on.scalars or id(a) in on.results for a in _reads(eqn))

    for eqn in graph.eqns:
        if loop is not None and join(eqn, loop):
            continue
        if loop is not None and not depends(eqn, loop):
            loop.pre.append(eqn)
            need_arrays(eqn)
            continue
        if fusible(eqn):
            if loop is not None:
                items.append(loop)
            loop = Loop(eqn.out.shape)
            join(eqn, loop)
            continue
        if loop is not None:
            loop.post.append(eqn)
            loop.results.add(id(eqn.out))
        else:
            items.append(eqn)
        need_arrays(eqn)
    if loop is not None:
        items.append(loop)
    arrays.update(id(a) for a in graph.outputs if isinstance(a, Var) and id(a) in home)
    return Plan(items, arrays)
