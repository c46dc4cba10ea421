"""What the code generator must know about :mod:`.vecmath` without importing it.

:mod:`.vecmath` imports Numba, and :mod:`.codegen` writes kernel source without
it (``sg.jit(f).source(x)``, the CLI's ``--show source``): the facts that decide
which text codegen writes live here, and :mod:`.vecmath` takes them from here;
so does the graph pattern that :func:`.vecmath.tanh_sech2` computes at once (tanh and
its VJP, :func:`tanh_pairs`).

    >>> sorted(POWI_EXPONENTS)
    [3, 4, 5, 6, 7, 8]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..core.ir import Atom, Eqn, Literal, Var

#: the integer exponents n for which a fused loop computes ``x ** n`` (``pow`` with a
#: literal exponent) as ``vecmath.powi(x, n)``: a double-double product chain of n - 1
#: steps, within 1 ulp. 2 is ``square``, 1, 0.5 and -1 have their own primitives (the
#: pow primitive's simplifications); the others call libm's ``pow``
POWI_EXPONENTS = frozenset(range(3, 9))

#: the vectorized functions that float32 loops call in float32 (``vecmath32.<name>32``):
#: written in float32 arithmetic, each within 1 ulp of float32 (docs/accuracy.md). The
#: others widen a float32 argument to float64 (``vecmath``) and round the result once
FLOAT32_FUNCTIONS = frozenset({"exp", "log", "sin", "cos", "tanh", "sigmoid", "softplus"})


@dataclass
class TanhPair:
    """tanh(c) and its derivative sech(c)**2 as tanh's VJP writes it, both in one loop:
    computed together by ``vm.tanh_sech2`` (one exponential instead of two, each result
    within 1 ulp). ``inner``: the derivative's own equations, skipped."""

    tanh: Eqn
    sech2: Eqn
    inner: list[Eqn]


def _is_lit(a: Atom, value: float) -> bool:
    return isinstance(a, Literal) and isinstance(a.value, float) and a.value == value


def _with_literal(e: Eqn | None, prim: str, value: float) -> Atom | None:
    """The other operand of ``e`` if it is ``prim(value, other)`` or ``prim(other, value)``
    (``value`` a float literal); else None."""
    if e is None or e.prim.name != prim or len(e.inputs) != 2:
        return None
    a, b = e.inputs
    return b if _is_lit(a, value) else a if _is_lit(b, value) else None


def _sech2_of(d: Eqn, producer: Mapping[int, Eqn]) -> tuple[Var, list[Eqn]] | None:
    """(c, the equations in between) if ``d`` is 4 e / (1 + e)**2 with e = exp(-2 |c|),
    |c| as ``where(c >= 0, c, -c)``: tanh's VJP (:mod:`symgrad.prims.elementwise`)
    exactly, operand for operand; None for anything else."""
    def made(a: Atom, prim: str) -> Eqn | None:
        e = producer.get(id(a)) if isinstance(a, Var) else None
        return e if e is not None and e.prim.name == prim else None

    if d.prim.name != "div" or not d.out.dtype == "float64":
        return None
    q, sq = (producer.get(id(a)) if isinstance(a, Var) else None for a in d.inputs)
    e = _with_literal(q, "mul", 4.0)
    r = made(d.inputs[1], "square")
    one_plus = producer.get(id(r.inputs[0])) if r is not None and isinstance(
        r.inputs[0], Var) else None
    if e is None or r is None or _with_literal(one_plus, "add", 1.0) is not e:
        return None
    ex = made(e, "exp")
    o = producer.get(id(ex.inputs[0])) if ex is not None and isinstance(
        ex.inputs[0], Var) else None
    mag = _with_literal(o, "mul", -2.0)
    w = made(mag, "where")
    if w is None:
        return None
    cond, c, negc = w.inputs
    ge, neg = made(cond, "ge"), made(negc, "neg")
    if (not isinstance(c, Var) or ge is None or neg is None or ge.inputs[0] is not c
            or not _is_lit(ge.inputs[1], 0.0) or neg.inputs[0] is not c or c.shape != d.out.shape):
        return None
    return c, [ge, neg, w, o, ex, q, one_plus, r]


def tanh_pairs(live: list[Eqn], producer: Mapping[int, Eqn], arrays: set[int]) -> list[TanhPair]:
    """The tanh/derivative pairs of a loop body whose derivative's inner values nobody
    else reads (not stored, not read by other equations)."""
    tanhs = {id(e.inputs[0]): e for e in live
             if e.prim.name == "tanh" and e.out.dtype == "float64"}
    if not tanhs:
        return []
    in_loop = {id(e) for e in live}
    readers: dict[int, int] = {}
    for e in live:
        for a in e.inputs:
            readers[id(a)] = readers.get(id(a), 0) + 1
    pairs = []
    for d in live:
        found = _sech2_of(d, producer) if tanhs else None
        if found is None or id(found[0]) not in tanhs:
            continue
        c, inner = found
        own = {id(e.out) for e in inner}
        uses = {id(e.out): 0 for e in inner}
        for e in [*inner, d]:
            for a in e.inputs:
                if id(a) in uses:
                    uses[id(a)] += 1
        if any(i in arrays or readers.get(i, 0) != uses[i] for i in own):
            continue  # an inner value is read elsewhere: leave the loop as it is
        if not all(id(e) in in_loop for e in inner):
            continue
        pairs.append(TanhPair(tanhs[id(c)], d, inner))
    return pairs
