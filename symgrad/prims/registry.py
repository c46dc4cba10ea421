"""The primitive registry, and the rules primitives of every family share.

:func:`register` is the one way a primitive comes into being: it checks that
every facet is there and every fact is of the right type, so that a
primitive missing one fails at import, and it files the primitive under its
name. ``tests/test_registry.py`` walks :data:`REGISTRY` and checks the facts
against each other (a linear primitive's VJP reads no primal value, a
structural one computes nothing, ...). The shared rules below (operand dtypes,
broadcasting) and :func:`unary`/:func:`binary`, which
declare an elementwise primitive of a numpy ufunc, are what families build on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.errors import ShapeError
from ..core.ir import BOOL, DYN, FLOAT, INEXACT, INT, Aval, Primitive, float_of
from .overflow import CheckedUfunc

REGISTRY: dict[str, Primitive] = {}
#: what every primitive has
FACETS = ("shape_rule", "impl", "vjp", "sympy")
#: what some primitives have: functions, or None
OPTIONAL_FACETS = ("simplify", "accuracy", "batch", "linearized")
#: the facts, with their types
FLAGS = {"scipy": str, "view": bool, "linear": bool, "commutative": bool, "accumulate": str,
         "integer": bool, "subgraphs": tuple, "host": bool,
         "complex": bool}
KINDS = ("elementwise", "reduction", "structural", "array", "control")
ACCUMULATIONS = ("", "sum", "mean")


def register(**declaration: Any) -> Primitive:
    """Add a primitive to the registry; fail at import if a facet or fact is wrong."""
    prim = Primitive(**declaration)
    missing = [f for f in FACETS if not callable(getattr(prim, f))]
    if missing:
        raise TypeError(f"primitive {prim.name} lacks facets {missing}")
    wrong = [f for f in OPTIONAL_FACETS if getattr(prim, f) is not None
             and not callable(getattr(prim, f))]
    wrong += [f for f, t in FLAGS.items() if type(getattr(prim, f)) is not t]
    if prim.kind not in KINDS or prim.accumulate not in ACCUMULATIONS:
        wrong.append("kind" if prim.kind not in KINDS else "accumulate")
    if prim.subgraphs and prim.kind != "control":
        wrong.append("subgraphs")  # a primitive holding graphs is control flow
    if wrong:
        raise TypeError(f"primitive {prim.name} declares {wrong} wrongly")
    if prim.name in REGISTRY:
        raise ValueError(f"primitive {prim.name} is declared twice")
    REGISTRY[prim.name] = prim
    return prim


#: (size of the registry when it was made, numpy function -> primitive)
_BY_NUMPY: tuple[int, dict[Any, Primitive]] = (0, {})


def of_numpy(fn: Any) -> Primitive | None:
    """The primitive whose ``numpy`` facet is ``fn`` (a ufunc, np.linalg.inv, ...), if any.

    Indexed again whenever the registry has grown, so a primitive registered
    late is found too. A new index replaces the old one whole (never cleared, then
    filled), so a thread looking up meanwhile finds one or the other."""
    global _BY_NUMPY
    size, index = _BY_NUMPY
    if size != len(REGISTRY):
        index = {p.numpy: p for p in list(REGISTRY.values()) if p.numpy is not None}
        _BY_NUMPY = (len(REGISTRY), index)
    return index.get(fn)


def of_scipy() -> dict[str, Primitive]:
    """``scipy.special`` name -> the primitive that declares it (its ``scipy`` fact): the
    one home of which scipy.special ufuncs are primitives."""
    return {p.scipy: p for p in list(REGISTRY.values()) if p.scipy}


# ---------------------------------------------------------------------------
# shared rules


def require(prim: str, avals: tuple[Aval, ...], dtype: str) -> None:
    """Operands of ``dtype``; ``FLOAT`` stands for any float dtype (float64 or float32,
    the result's is :func:`symgrad.core.ir.float_of` them), and complex ones too: only a
    primitive declared ``complex=True`` gets this far with one (``Trace.bind``)."""
    for a in avals:
        if a.dtype != dtype and not (dtype == FLOAT and a.dtype in INEXACT):
            raise TypeError(f"{prim} takes {'float' if dtype == FLOAT else dtype} operands, "
                            f"got {a}")


def broadcast_shapes(prim: str, *avals: Aval) -> tuple[int, ...]:
    try:
        if any(DYN in a.shape for a in avals):
            return _broadcast_dyn([a.shape for a in avals])
        return tuple(np.broadcast_shapes(*(a.shape for a in avals)))
    except ValueError:
        shapes = " and ".join(str(a) for a in avals)
        raise ShapeError(f"{prim}: operands of shapes {shapes} cannot be broadcast together "
                         "(numpy broadcasting rules)") from None


def _broadcast_dyn(shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    """numpy's broadcasting where a size known only at run time (DYN) matches itself
    (and 1), never a known size. Only a loop's tapes and their cotangents have one, and
    the elementwise ops on them come from transforms (the adjoint summing two
    cotangents of one tape, vmap of that sum): operands of the same run-time size.
    No user value has a DYN size."""
    rank = max(len(s) for s in shapes)
    out = []
    for k in range(rank):
        sizes = {s[len(s) - rank + k] for s in shapes if len(s) - rank + k >= 0} - {1}
        if len(sizes) > 1:
            raise ValueError("shapes do not broadcast")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


# ---------------------------------------------------------------------------
# elementwise primitives of numpy ufuncs (symgrad.prims.elementwise, .special)


def elementwise_rule(name: str, in_dtype: str = FLOAT, out_dtype: str = FLOAT,
                     integer: bool = False) -> Callable:
    """numpy broadcasting over ``in_dtype`` operands; with ``integer``, all-int64 operands
    too (an int64 result, unless ``out_dtype`` is bool)."""
    def rule(*avals: Aval) -> Aval:
        if integer and all(a.dtype == INT for a in avals):
            return Aval(broadcast_shapes(name, *avals), BOOL if out_dtype == BOOL else INT)
        require(name, avals, in_dtype)
        dtype = float_of(*avals) if out_dtype == FLOAT else out_dtype
        return Aval(broadcast_shapes(name, *avals), dtype)
    return rule


def unary(name: str, ufunc: np.ufunc, vjp: Callable, sympy: Callable,
          **facts: Any) -> Primitive:
    """An elementwise float64 function of a numpy ufunc (which backends lower by default
    to that ufunc)."""
    return register(name=name, kind="elementwise", shape_rule=elementwise_rule(name),
                    impl=ufunc, vjp=vjp, sympy=sympy, numpy=ufunc, **facts)


def binary(name: str, ufunc: np.ufunc, vjp: Callable, sympy: Callable,
           out_dtype: str = FLOAT, **facts: Any) -> Primitive:
    """An elementwise float64 operation of two broadcasting operands (also of two int64
    operands if ``integer=True``)."""
    impl: Any = ufunc
    if facts.get("integer") and ufunc in (np.add, np.subtract, np.multiply):
        impl = CheckedUfunc(ufunc)  # no int64 wrap (backends check theirs too)
    return register(name=name, kind="elementwise",
                    shape_rule=elementwise_rule(name, FLOAT, out_dtype,
                                                facts.get("integer", False)),
                    impl=impl, vjp=vjp, sympy=sympy, numpy=ufunc, **facts)
