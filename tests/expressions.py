"""Random expressions over the registry, as data: specs, their functions, their inputs.

An expression is a nested list (JSON, so that the corpus in
``tests/corpus/expressions.json`` is plain data and nothing is ever eval'd)::

    ["arg", 0]                                   the function's argument 0
    ["const", 1.5]                               a float literal
    ["unary", "sin", e]                          an elementwise registry primitive
    ["binary", "mul", e1, e2]                    ... of two broadcasting operands
    ["reduce", "sum", axis, keepdims, e]         a reduction (axis: None or an int)
    ["where", "gt", c1, c2, e1, e2]              where(c1 > c2, e1, e2)

A *problem* adds the arguments' shapes, the ranges they are sampled from and a
seed, so that one problem is one function at one point (plus a cotangent for a
non-scalar output). The primitives are read from the registry with their
``numpy`` facet, so primitives added later join the random tests by themselves.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from symgrad import prims as P
from symgrad.core.ir import BOOL, FLOAT, Aval, Primitive

CORPUS = Path(__file__).parent / "corpus" / "expressions.json"
SHAPES: list[tuple[int, ...]] = [(), (3,), (2, 3), (2, 1), (1, 3)]  # any two broadcast
RANGES: list[tuple[float, float]] = [(-2.0, 2.0), (0.1, 2.0), (-0.9, 0.9)]


def _kind(prim: Primitive, nin: int, out_dtype: str) -> bool:
    """An elementwise primitive that numpy spells as a ufunc of ``nin`` float operands."""
    ufunc = prim.numpy
    if prim.kind != "elementwise" or not isinstance(ufunc, np.ufunc) or ufunc.nin != nin:
        return False
    try:
        return prim.shape_rule(*[Aval((2,), FLOAT)] * nin).dtype == out_dtype
    except Exception:  # a rule with parameters or other dtypes: not a plain ufunc
        return False


@cache
def vocabulary() -> dict[str, list[str]]:
    """The registry's primitives by role in an expression."""
    reg = P.REGISTRY
    reductions = []
    for name, prim in reg.items():
        fn = prim.numpy
        if prim.kind != "reduction" or not callable(fn):
            continue
        try:  # reductions spelled fn(x, axis=, keepdims=) like np.sum
            fn(np.ones((2, 3)), axis=1, keepdims=True)
        except Exception:
            continue
        reductions.append(name)
    return {
        "unary": sorted(n for n, p in reg.items() if _kind(p, 1, FLOAT)),
        "binary": sorted(n for n, p in reg.items() if _kind(p, 2, FLOAT)),
        "compare": sorted(n for n, p in reg.items() if _kind(p, 2, BOOL)),
        "reduce": sorted(reductions),
    }


def evaluate(expr: list, args: list[Any], seen: list | None = None) -> Any:
    """The value of ``expr``: numpy on arrays, or traced on tracers. ``seen``, if given,
    collects every intermediate value (to tell overflow from a wrong gradient)."""
    op = expr[0]
    if op == "arg":
        out = args[expr[1]]
    elif op == "const":
        out = float(expr[1])
    elif op == "unary":
        out = P.REGISTRY[expr[1]].numpy(evaluate(expr[2], args, seen))
    elif op == "binary":
        a, b = (evaluate(e, args, seen) for e in expr[2:4])
        out = P.REGISTRY[expr[1]].numpy(a, b)
    elif op == "reduce":
        _, name, axis, keepdims, e = expr
        out = P.REGISTRY[name].numpy(evaluate(e, args, seen), axis=axis, keepdims=keepdims)
    elif op == "where":
        _, name, c1, c2, e1, e2 = expr
        cond = P.REGISTRY[name].numpy(evaluate(c1, args, seen), evaluate(c2, args, seen))
        out = np.where(cond, evaluate(e1, args, seen), evaluate(e2, args, seen))
    else:
        raise ValueError(f"unknown expression node {op!r}")
    if seen is not None:
        seen.append(out)
    return out


def to_function(expr: list) -> Callable:
    def f(*args: Any) -> Any:
        return evaluate(expr, list(args))
    return f


def show(expr: list) -> str:
    """``expr`` in numpy notation, for messages."""
    op = expr[0]
    if op == "arg":
        return "xyz"[expr[1]]
    if op == "const":
        return repr(float(expr[1]))
    if op in ("unary", "binary"):
        return f"{expr[1]}({', '.join(show(e) for e in expr[2:])})"
    if op == "reduce":
        return f"{expr[1]}({show(expr[4])}, axis={expr[2]}, keepdims={expr[3]})"
    return f"where({expr[1]}({show(expr[2])}, {show(expr[3])}), {show(expr[4])}, {show(expr[5])})"


@dataclass(frozen=True)
class Problem:
    """One function at one point: JSON-serializable, replayable."""

    expr: list
    shapes: list[list[int]]
    ranges: list[list[float]]
    seed: int
    note: str = ""

    @property
    def fn(self) -> Callable:
        return to_function(self.expr)

    def args(self) -> list[Any]:
        rng = np.random.default_rng(self.seed)
        return [rng.uniform(lo, hi, tuple(s)) if s else float(rng.uniform(lo, hi))
                for s, (lo, hi) in zip(self.shapes, self.ranges)]

    def cotangent(self, out_shape: tuple[int, ...]) -> Any:
        """None for a scalar output, else a fixed random array of the output's shape."""
        if not out_shape:
            return None
        return np.random.default_rng(self.seed + 1).uniform(-1, 1, out_shape)

    def to_json(self) -> str:
        data = {"expr": self.expr, "shapes": self.shapes, "ranges": self.ranges,
                "seed": self.seed}
        return json.dumps({**data, "note": self.note} if self.note else data)

    def __str__(self) -> str:
        shapes = ", ".join(f"{'xyz'[i]}: {tuple(s)}" for i, s in enumerate(self.shapes))
        return f"{show(self.expr)} at {shapes}, seed {self.seed}"


def load_corpus() -> list[Problem]:
    return [Problem(**entry) for entry in json.loads(CORPUS.read_text())]


def singular_nodes(expr: list, args: list[Any]) -> list[str]:
    """The elementwise nodes of ``expr`` evaluated where one of their own partial
    derivatives is not finite (``pow`` at base 0 with an exponent below 1, ``sqrt``
    at 0, ...), found with SymPy from the primitives' ``sympy`` facets.

    Reverse mode multiplies such an infinite local derivative by the rest of the
    chain, so ``(x - x) ** 0.5`` has the gradient ``inf - inf = nan`` in symgrad
    (and in JAX and PyTorch), while SymPy, which simplifies ``x - x`` to 0 first,
    says 0. A disagreement there is the chain rule's, not a wrong VJP rule.
    """
    import sympy as sp

    found: list[str] = []

    def walk(e: list) -> None:
        if e[0] in ("unary", "binary"):
            operands = [evaluate(c, args) for c in e[2:]]
            symbols = sp.symbols(f"s0:{len(operands)}", real=True)
            formula = P.REGISTRY[e[1]].sympy(sp, *symbols)
            with np.errstate(all="ignore"):
                points = np.broadcast_arrays(*[np.asarray(v, dtype=float) for v in operands])
            partials = [sp.diff(formula, s) for s in symbols]
            for point in zip(*(np.ravel(p) for p in points)):
                at = {sym: sp.Float(float(v), 30) for sym, v in zip(symbols, point)}
                values = [sp.N(d.xreplace(at), 20) for d in partials]
                if not all(v.is_extended_real and v.is_finite for v in values):
                    found.append(f"{e[1]} at {tuple(map(float, point))}")
                    break
        for child in e[2:]:
            if isinstance(child, list):
                walk(child)

    walk(expr)
    return found


def tied_nodes(expr: list, args: list[Any]) -> list[str]:
    """The ``max``/``min`` reductions and ``maximum``/``minimum`` nodes of ``expr`` whose
    extremum is attained more than once (a tie). symgrad gives ``k`` tied extrema
    ``1/k`` each (symgrad.core.conventions); SymPy differentiates ``Max(a, b, c)``
    into Heaviside terms with ``Heaviside(0) = 1/2`` each, so three or more ties
    disagree by convention, not by a wrong rule."""
    found: list[str] = []

    def walk(e: list) -> None:
        if e[0] == "reduce" and e[1] in ("max", "min"):
            x = np.asarray(evaluate(e[4], args), dtype=float)
            axis = e[2] if x.ndim else None
            best = (np.max if e[1] == "max" else np.min)(x, axis=axis, keepdims=True)
            if np.any(np.sum(x == best, axis=axis) > 1):
                found.append(f"{e[1]} reduction")
        if e[0] == "binary" and e[1] in ("maximum", "minimum"):
            a, b = (np.asarray(evaluate(c, args), dtype=float) for c in e[2:4])
            if np.any(a == b):
                found.append(e[1])
        for child in e[2:]:
            if isinstance(child, list):
                walk(child)

    walk(expr)
    return found
