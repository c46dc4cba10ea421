"""IR -> SymPy: a graph as SymPy expressions over one symbol per input element.

The bridge interprets a graph on numpy object arrays whose elements are SymPy
expressions. Each primitive's ``sympy`` facet is applied according to its
kind: elementwise facets elementwise (with numpy broadcasting), reduction
facets to the list of elements reduced, structural facets (numpy functions)
to the object array itself. Literals and constants become exact rationals, so
expressions mean exactly what the float64 program means.

It is the independent oracle of the test suite (SymPy differentiates the
*forward* graph; symgrad's VJP rules play no part) and the printer of
derivative formulas. Importing it imports SymPy; nothing else in the core does.

    >>> import numpy as np, symgrad as sg
    >>> from symgrad.sympy_bridge import gradient_expressions
    >>> graph = sg.jit(lambda x: np.sum(np.sin(x) * x)).graph(np.ones(2))
    >>> list(gradient_expressions(graph)[0])
    [x[0]*cos(x[0]) + sin(x[0]), x[1]*cos(x[1]) + sin(x[1])]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import sympy as sp

from .ir import BOOL, Atom, Graph, Literal, Primitive
from .pretty import Printer


def exact(value: float | bool) -> Any:
    """A float64 or bool as the SymPy number it denotes exactly."""
    if isinstance(value, (bool, np.bool_)):
        return sp.true if value else sp.false
    value = float(value)
    if math.isnan(value):
        return sp.nan
    if math.isinf(value):
        return sp.oo if value > 0 else -sp.oo
    return sp.Rational(value)


def element_symbols(name: str, shape: tuple[int, ...]) -> Any:
    """``x`` for a scalar, else an object array of real symbols ``x[i, j]``."""
    if not shape:
        return sp.Symbol(name, real=True)
    out = np.empty(shape, dtype=object)
    for idx in np.ndindex(*shape):
        out[idx] = sp.Symbol(f"{name}[{', '.join(map(str, idx))}]", real=True)
    return out


def input_symbols(graph: Graph) -> list[Any]:
    """Symbols for every input of ``graph``, named as the printer names them."""
    p = Printer(graph)
    return [element_symbols(p.name(v), v.shape) for v in graph.inputs]


def to_sympy(graph: Graph, inputs: Sequence[Any] | None = None) -> list[Any]:
    """The outputs of ``graph`` as SymPy expressions (object arrays for arrays)."""
    inputs = input_symbols(graph) if inputs is None else inputs
    env: dict[int, Any] = {id(v): x for v, x in zip(graph.inputs, inputs)}
    for v, value in graph.consts:
        env[id(v)] = _exact_array(value)

    def read(a: Atom) -> Any:
        return exact(a.value) if isinstance(a, Literal) else env[id(a)]

    for eqn in graph.eqns:
        env[id(eqn.out)] = _apply(eqn.prim, [read(a) for a in eqn.inputs], dict(eqn.params))
    return [read(a) for a in graph.outputs]


def _exact_array(value: np.ndarray) -> np.ndarray:
    out = np.empty(value.shape, dtype=object)
    for idx in np.ndindex(*value.shape):
        out[idx] = exact(value[idx].item())
    return out


def _apply(prim: Primitive, args: list[Any], params: dict[str, Any]) -> Any:
    if prim.kind == "elementwise":
        return np.frompyfunc(lambda *a: prim.sympy(sp, *a), len(args), 1)(*args)
    if prim.kind == "reduction":
        return _reduce(prim, np.asarray(args[0], dtype=object), params["axes"])
    if prim.kind == "structural":
        result = prim.sympy(sp, np.asarray(args[0], dtype=object), **params)
        return result[()] if np.ndim(result) == 0 else np.array(result)
    raise NotImplementedError(f"no SymPy translation for {prim.kind} primitive {prim.name}")


def _reduce(prim: Primitive, x: np.ndarray, axes: tuple[int, ...]) -> Any:
    if not axes:
        return x[()] if x.ndim == 0 else x
    kept = [i for i in range(x.ndim) if i not in axes]
    n = math.prod(x.shape[a] for a in axes)
    rows = np.transpose(x, kept + list(axes)).reshape([x.shape[i] for i in kept] + [n])
    out = np.empty(rows.shape[:-1], dtype=object)
    for idx in np.ndindex(*out.shape):
        out[idx] = prim.sympy(sp, list(rows[idx]))
    return out[()] if out.ndim == 0 else out


def gradient_expressions(graph: Graph, cotangent: Any = None,
                         wrt: Sequence[int] | None = None) -> list[Any]:
    """SymPy's gradient of ``sum(output * cotangent)`` for the first output of ``graph``.

    ``cotangent`` defaults to 1 (a scalar output); it may be numbers or symbols.
    Returns one expression (or object array) per input in ``wrt`` (default: all).
    """
    symbols = input_symbols(graph)
    y = np.asarray(to_sympy(graph, symbols)[0], dtype=object)
    ct = np.broadcast_to(np.asarray(1 if cotangent is None else cotangent, dtype=object), y.shape)
    ct = np.asarray(np.frompyfunc(lambda c: c if isinstance(c, sp.Basic) else exact(c), 1, 1)(ct),
                    dtype=object)
    total = sp.Add(*(yi * ci for yi, ci in zip(y.ravel(), ct.ravel())))
    result = []
    for k in (range(len(graph.inputs)) if wrt is None else wrt):
        s = symbols[k]
        if graph.inputs[k].dtype == BOOL:
            raise TypeError(f"input {k} is boolean and has no gradient")
        result.append(sp.diff(total, s) if not np.ndim(s)
                      else np.frompyfunc(lambda e: sp.diff(total, e), 1, 1)(s))
    return result


def evaluate(expressions: Any, graph: Graph, values: Sequence[Any], digits: int = 50) -> Any:
    """Evaluate expressions over ``graph``'s input symbols at float ``values``.

    Each input is substituted by a SymPy Float of ``digits + 10`` digits, which
    holds the float64 value exactly (53 bits need 16 digits), and the result is
    evaluated to ``digits`` significant digits, then rounded to float64 (an
    array for arrays). Floats rather than exact rationals: SymPy would search
    for exact roots of rational powers, which takes forever for 2**-52 steps.
    """
    subs: dict[Any, Any] = {}
    for s, v in zip(input_symbols(graph), values):
        for sym, val in zip(np.ravel(np.asarray(s, dtype=object)), np.ravel(np.asarray(v))):
            subs[sym] = sp.Float(float(val), digits + 10)

    def one(e: Any) -> float:
        if not isinstance(e, sp.Basic):  # a Python number, e.g. the 0 of a constant
            return float(e)
        derivatives = e.atoms(sp.Derivative)
        if derivatives:  # xreplace cannot put a number where a derivative's variable is
            e = e.xreplace({d: _numerically(d, subs, digits) for d in derivatives})
        value = sp.N(e.xreplace(subs), digits)
        return float(value) if value.is_extended_real else float("nan")  # nan, zoo, complex

    if np.ndim(expressions) == 0:
        return np.float64(one(expressions))
    return np.frompyfunc(one, 1, 1)(np.asarray(expressions, dtype=object)).astype(np.float64)


def _numerically(d: Any, subs: dict[Any, Any], digits: int) -> Any:
    """A derivative SymPy left unevaluated, at the point ``subs``, by mpmath's numerical
    differentiation at ``digits + 10`` digits. SymPy leaves ``sign(f(x))``
    unevaluated where it cannot tell that ``f(x)`` is real (``sign(acos(x))``)."""
    import mpmath

    others = {s: v for s, v in subs.items() if s not in d.variables}
    if len(d.variables) != 1:
        return sp.nan
    d = d.xreplace(others)
    if not isinstance(d, sp.Derivative):  # evaluated once the others are numbers
        return d
    if not d.expr.has(d.variables[0]):  # sign(0.5**y) is 1: a derivative of a constant
        return sp.Integer(0)
    with mpmath.workdps(digits + 10):
        return d.doit_numerically(subs[d.variables[0]])


__all__ = ["to_sympy", "gradient_expressions", "evaluate", "element_symbols", "input_symbols",
           "exact"]
