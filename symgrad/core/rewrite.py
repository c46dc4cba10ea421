"""What rewrite rules are made of: the ``simplify`` and ``accuracy`` facets of
primitives and the passes of :mod:`symgrad.passes.rewrites` that apply them.

A rule looks at one equation (its operands already substituted) and returns a
:data:`Rewrite`: ``None`` to keep it, an :class:`~symgrad.core.ir.Eqn` (or a list
of them, the last binding the same output) to replace it, or an atom that
replaces its output everywhere (broadcast to the output's shape by the pass if
it is smaller). ``producer(atom)`` gives the equation that defines an operand.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, Union

from .ir import Atom, Eqn, Literal, Primitive, freeze_params

Rewrite = Union[Eqn, list[Eqn], Atom, None]  # noqa: UP007 (a runtime alias)
Producer = Callable[[Atom], Union[Eqn, None]]  # noqa: UP007


def lit(a: Atom, value: Any) -> bool:
    """``a`` is the literal ``value`` (bit for bit: -0.0 is not 0.0)."""
    return isinstance(a, Literal) and a == Literal(value)


def same_aval(eqn: Eqn, a: Atom) -> Atom | None:
    """``a`` may replace ``eqn``'s output only if nothing about it changes."""
    return a if a.aval == eqn.out.aval else None


def as_prim(eqn: Eqn, prim: Primitive, *inputs: Atom, **params: Any) -> Eqn:
    """``eqn`` computed by ``prim`` instead, binding the same output."""
    return replace(eqn, prim=prim, inputs=inputs, params=freeze_params(params))


def made_by(producer: Producer, a: Atom, prim: Primitive) -> Eqn | None:
    """The equation defining ``a`` if ``prim`` computes it."""
    e = producer(a)
    return e if e is not None and e.prim is prim else None
