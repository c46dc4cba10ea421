"""The expression language's linear algebra, indexing and suggestions (issue 29):
parsed against the allowlist into data, evaluated with numpy, compared with numpy."""

from __future__ import annotations

import numpy as np
import pytest

from symgrad.cli.expr import ExpressionError, parse

RNG = np.random.default_rng(29)
A = RNG.uniform(-1, 1, (3, 3)) + 2 * np.eye(3)
X, x, b = RNG.uniform(-1, 1, (4, 3)), RNG.uniform(-1, 1, 3), RNG.uniform(-1, 1, 3)

CASES = [  # text, variables, numpy's value
    ("X@x", {"X": X, "x": x}, X @ x),
    ("dot(x, b)", {"x": x, "b": b}, np.dot(x, b)),
    ("det(A)", {"A": A}, np.linalg.det(A)),
    ("inv(A)", {"A": A}, np.linalg.inv(A)),
    ("solve(A, b)", {"A": A, "b": b}, np.linalg.solve(A, b)),
    ("trace(A@A.T)", {"A": A}, np.trace(A @ A.T)),
    ("norm(x)", {"x": x}, np.linalg.norm(x)),
    ("logdet(A)", {"A": A}, np.log(abs(np.linalg.det(A)))),
    ("transpose(X)@X", {"X": X}, X.T @ X),
    ("x[0]", {"x": x}, x[0]),
    ("x[1:]", {"x": x}, x[1:]),
    ("x[-1] * x[::2]", {"x": x}, x[-1] * x[::2]),
    ("X[0, 1:3]", {"X": X}, X[0, 1:3]),
    ("X.T[1]", {"X": X}, X.T[1]),
]


@pytest.mark.parametrize("text, env, want", CASES, ids=[c[0] for c in CASES])
def test_linear_algebra_and_indexing(text, env, want):
    e = parse(text)
    assert set(e.variables) == set(env)
    got = e.function()(*(env[n] for n in e.variables))
    np.testing.assert_allclose(got, want, rtol=1e-13)


@pytest.mark.parametrize("text, hint", [
    ("x^2", "write ** instead, e.g. x**2"),
    ("ln(x)", "did you mean log?"),
    ("sigmod(x)", "did you mean sigmoid"),
    ("tanhh(x)", "did you mean tanh"),
    ("x.real", "only .T"),
    ("x[y]", "an index is a literal integer or slice"),
    ("x[0.5]", "an index is a literal integer or slice"),
    ("x[::0]", "step cannot be zero"),
])
def test_errors_suggest_the_fix(text, hint):
    with pytest.raises(ExpressionError, match=None) as info:
        parse(text)
    assert hint in str(info.value)
