"""Sums written as Σ in per-element formulas (issue 29): :func:`fold_sums` rewrites a
sum over an input's axis into a SymPy ``Sum``; the result, written out again by
SymPy's ``doit``, must be the same expression, and the printed pattern must not grow
with the size."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

import symgrad as sg
from symgrad.cli.sums import fold_sums
from symgrad.cli.symbolic import folded
from symgrad.core.sympy_bridge import element_pattern, element_symbols, input_symbols

X = element_symbols("X", (2, 3))
A = element_symbols("A", (3, 3))
x = element_symbols("x", (3,))
w = element_symbols("w", (3,))

CASES = [
    x[0] / sp.sqrt(x[0]**2 + x[1]**2 + x[2]**2),
    sum((sum(X[i, k] * w[k] for k in range(3)))**2 for i in range(2)),
    sum(A[i, k]**2 for i in range(3) for k in range(3)) + x[1],
    sum(A[0, k] * x[k] for k in range(3)) * sp.exp(x[2]),
    sp.exp(x[1]) / (sp.exp(x[0]) + sp.exp(x[1]) + sp.exp(x[2])),
    x[0] + x[1],  # not every term of an axis: stays
    sp.log(sum(sp.exp(X[1, k]) for k in range(3))) - 2 * X[0, 1],
]


@pytest.mark.parametrize("expr", CASES, ids=range(len(CASES)))
def test_folded_is_the_same_sum(expr):
    symbols = {"X": X, "A": A, "x": x, "w": w}
    got = fold_sums(expr, symbols)
    indexed = {s: sp.IndexedBase(n, real=True)[idx] for n, a in symbols.items()
               for idx in np.ndindex(*a.shape) for s in [a[idx]]}
    assert sp.expand(got.doit() - expr.xreplace(indexed)) == 0
    if expr != x[0] + x[1]:
        assert got.has(sp.Sum)


@pytest.mark.parametrize("n", [3, 30])
def test_pattern_length_does_not_grow(n):
    """sqrt(sum(x*x)) per element, as the command prints it without a textbook form:
    the same pattern at n = 3 and n = 30, but for the upper bound."""
    fn = sg.grad(lambda x: np.sqrt(np.sum(x * x)), backend="numpy")
    graph = sg.jit(lambda x: np.sqrt(np.sum(x * x))).graph(np.ones(n))
    symbols = {"x": input_symbols(graph)[0]}
    (exprs,) = [fn.expressions(np.ones(n), seconds=0)]
    pattern = element_pattern(folded(exprs, symbols, seconds=60), symbols)
    assert sp.sstr(pattern) == f"x[i]/sqrt(Sum(x[j]**2, (j, 0, {n - 1})))"
    values = np.linspace(0.5, 1.5, n)
    want = values / np.sqrt(np.sum(values**2))
    i = sp.Symbol("i", integer=True)
    base = sp.IndexedBase("x", real=True)
    for k in (0, n - 1):
        value = pattern.xreplace({i: k}).doit().xreplace(
            {base[m]: sp.Float(v, 30) for m, v in enumerate(values)})
        assert abs(float(value) - want[k]) < 1e-14
