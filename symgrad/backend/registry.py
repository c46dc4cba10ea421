"""The backends a graph can run on, side by side, each with its lowering of every primitive.

A backend is registered here with the function that gives its lowering of a primitive
(a :class:`~symgrad.core.ir.Primitive` object, never a name) and the primitives it
hands to the interpreter between its own code, each with the reason.
``tests/test_registry.py`` asks every registered backend for a lowering of every
registered primitive, so a primitive added without one (or a backend added without
a lowering of some primitive) fails there, naming what is missing.

- ``"numba"``: the compiling backend (:mod:`.numba`): its lowering table
  (:mod:`.numba.lowering`), one module per family of :mod:`symgrad.prims`;
- ``"numpy"``: the reference interpreter (:mod:`symgrad.core.interpreter`): its lowering
  of a primitive is the primitive's ``impl``, so it runs every primitive there is.

    >>> from symgrad.prims import exp_p
    >>> BACKENDS["numpy"].lowering(exp_p) is exp_p.impl
    True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..core.ir import Primitive
from .numba.lowering import INTERPRETED, lowering


@dataclass(frozen=True)
class Backend:
    """One backend: its name (what ``backend=`` says), what it does, its lowering of a
    primitive (a KeyError where it has none) and the primitives it runs on the
    interpreter between its own code, with the reason."""

    name: str
    runs: str
    lowering: Callable[[Primitive], Any]
    interpreted: Mapping[Primitive, str]


def _interpreter_lowering(prim: Primitive) -> Callable[..., Any]:
    return prim.impl


BACKENDS: dict[str, Backend] = {
    "numba": Backend("numba", "fused, readable kernel source compiled by Numba", lowering,
                     INTERPRETED),
    "numpy": Backend("numpy", "the numpy reference interpreter, equation by equation",
                     _interpreter_lowering, {}),
}
#: the names ``backend=`` accepts
NAMES = tuple(BACKENDS)


def backend(name: str) -> Backend:
    """The backend called ``name``; a ValueError that lists the others if none is."""
    if name not in BACKENDS:
        raise ValueError(f"backend must be one of {NAMES}, not {name!r}")
    return BACKENDS[name]
