"""Sparse Jacobians and Hessians (symgrad.transforms.sparse_derivatives, passes.sparsity and
passes.colouring).

A wrong sparsity pattern would be a silent wrong number, so every sparse result is
compared with an independent one: the dense ``sg.hessian``/``sg.jacfwd`` (a different
computation: no pattern, no colouring, no compression), handwritten numpy formulas
(the Rosenbrock Hessian), and second finite differences of the plain numpy function.
Random functions mixing element moves, prefix sums, matrix products, ``where`` and
reductions check that the pattern read from the IR covers every nonzero. All on the
numpy interpreter (``backend="numpy"``): no Numba compile.
"""

import os

import numpy as np
import pytest
import scipy.sparse as sp

import symgrad as sg
from symgrad.passes import colouring, sparsity

BANDED = np.diag(np.full(7, 2.0)) + np.diag(np.full(6, -1.0), 1) + np.diag(np.full(6, 0.5), -1)
DENSE = np.random.default_rng(5).normal(size=(7, 7)) / 3


def chain(x):
    return np.sum((x[1:] - x[:-1] ** 2) ** 2)


def rosenbrock(x):
    return np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def rosenbrock_hessian(x):
    """The tridiagonal Rosenbrock Hessian, by hand (scipy.optimize.rosen_hess's formula)."""
    n = x.size
    H = np.zeros((n, n))
    a, b = x[:-1], x[1:]
    i = np.arange(n - 1)
    H[i, i] += 1200 * a * a - 400 * b + 2
    H[i + 1, i + 1] += 200
    H[i, i + 1] = H[i + 1, i] = -400 * a
    return H


HESSIAN_CASES = {
    "chain": chain,
    "neighbours": lambda x: np.sum(x[1:] * x[:-1]),
    "arrowhead": lambda x: x[0] * np.sum(x ** 2) + np.sum(np.sin(x)),
    "block-diagonal": lambda x: np.sum(np.reshape(x[:6], (3, 2)).prod(axis=1) ** 2)
    + np.sum(np.exp(x[6:])),
    "dense": lambda x: np.sum(x) ** 3 / 10,
    "strided": lambda x: np.sum(x[:6:2] * x[1::2] ** 2) + np.sum(np.tanh(x[::-1] * x)),
    "cumsum": lambda x: np.sum(np.cumsum(x[2:]) ** 2),
    "banded matmul": lambda x: np.sum(np.tanh(BANDED @ x)),
    "dense matmul": lambda x: np.sum(np.sin(DENSE @ x) * x),
    "where": lambda x: np.sum(np.where(x > 0, x ** 3, np.cos(x)) * x[::-1]),
    "concatenate": lambda x: np.sum(np.concatenate([x[3:], x[:3]]) * np.exp(x / 3)),
}


@pytest.mark.parametrize("name", sorted(HESSIAN_CASES))
def test_sparse_hessian_equals_the_dense_one(name):
    f = HESSIAN_CASES[name]
    x = np.random.default_rng(1).uniform(-1, 1, 7)
    h = sg.hessian(f, sparse=True, backend="numpy")
    H = h(x)
    assert isinstance(H, sp.csr_matrix) and H.shape == (7, 7)
    dense = sg.hessian(f, backend="numpy")(x)
    np.testing.assert_allclose(H.toarray(), dense, rtol=1e-12, atol=1e-12)
    pattern = h.pattern(x).toarray()
    assert not (np.abs(dense) > 0)[~pattern].any()  # the pattern covers every nonzero
    assert h.colours(x).max() + 1 <= 7


def test_tridiagonal_hessians_take_three_colours_and_match_the_formula():
    x = np.random.default_rng(2).uniform(-1.5, 1.5, 9)
    h = sg.hessian(rosenbrock, sparse=True, backend="numpy")
    np.testing.assert_allclose(h(x).toarray(), rosenbrock_hessian(x), rtol=1e-13)
    assert h.colours(x).max() + 1 == 3
    pair = sg.hessian(HESSIAN_CASES["neighbours"], sparse=True, backend="numpy")
    assert pair.colours(x).max() + 1 <= 3


def test_hessian_matches_second_finite_differences():
    x = np.random.default_rng(3).uniform(-1, 1, 6)
    H = sg.hessian(chain, sparse=True, backend="numpy")(x).toarray()
    eps, n = 1e-4, x.size
    fd = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            ei, ej = np.eye(n)[i] * eps, np.eye(n)[j] * eps
            fd[i, j] = (chain(x + ei + ej) - chain(x + ei - ej) - chain(x - ei + ej)
                        + chain(x - ei - ej)) / (4 * eps**2)
    np.testing.assert_allclose(H, fd, rtol=1e-5, atol=1e-6)


def test_a_large_tridiagonal_hessian_keeps_three_colours_and_3n_minus_2_entries():
    n = 10_000
    rng = np.random.default_rng(4)
    x, v = rng.uniform(-1.5, 1.5, n), rng.normal(size=n)
    h = sg.hessian(rosenbrock, sparse=True, backend="numpy")
    H = h(x)
    assert h.colours(x).max() + 1 == 3  # 3 Hessian-vector products, whatever n
    assert H.nnz == 3 * n - 2
    hv = np.zeros(n)  # H v by hand: the tridiagonal formula, never a dense n x n
    a, b = x[:-1], x[1:]
    hv[:-1] = (1200 * a * a - 400 * b + 2) * v[:-1] - 400 * a * v[1:]
    hv[1:] += 200 * v[1:] - 400 * a * v[:-1]
    np.testing.assert_allclose(H @ v, hv, rtol=1e-12, atol=1e-9)


JACOBIAN_CASES = {
    "differences": lambda x: x[1:] - x[:-1] ** 2,
    "cumsum": lambda x: np.cumsum(x) * x,
    "where": lambda x: np.where(x > 0, np.exp(x), x[::-1] ** 2),
    "matmul": lambda x: BANDED[:5, :5] @ np.sin(x[:5]) + x[2:] ** 2,
    "arrow": lambda x: np.concatenate([x[:1] * np.sum(x), np.tanh(x[1:])]),
}


@pytest.mark.parametrize("mode", ["jacfwd", "jacrev"])
@pytest.mark.parametrize("name", sorted(JACOBIAN_CASES))
def test_sparse_jacobians_equal_the_dense_one(name, mode):
    f = JACOBIAN_CASES[name]
    x = np.random.default_rng(6).uniform(-1, 1, 7)
    J = getattr(sg, mode)(f, sparse=True, backend="numpy")(x)
    assert isinstance(J, sp.csr_matrix)
    np.testing.assert_allclose(J.toarray(), sg.jacfwd(f, backend="numpy")(x), rtol=1e-12,
                               atol=1e-13)


def test_sparse_jacobian_matches_finite_differences_and_counts_colours():
    f = JACOBIAN_CASES["differences"]
    x = np.random.default_rng(7).uniform(-1, 1, 8)
    jac = sg.jacfwd(f, sparse=True, backend="numpy")
    eps = 1e-6
    fd = np.stack([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(8)], axis=1)
    np.testing.assert_allclose(jac(x).toarray(), fd, rtol=1e-7, atol=1e-8)
    assert jac.colours(x).max() + 1 == 2  # bidiagonal: 2 columns per product
    assert sg.jacrev(f, sparse=True, backend="numpy").colours(x).max() + 1 == 2  # rows too


def test_other_arguments_stay_fixed():
    def f(a, x, scale):
        return scale * np.sum(a[:-1] * x[1:] * x[:-1])
    a, x = np.arange(1.0, 8.0), np.random.default_rng(8).normal(size=7)
    H = sg.hessian(f, argnums=1, sparse=True, backend="numpy")(a, x, 2.0)
    dense = sg.hessian(f, argnums=1, backend="numpy")(a, x, 2.0)
    np.testing.assert_allclose(H.toarray(), dense, rtol=1e-13)


def test_refusals_say_what_to_do():
    x2 = np.ones((3, 3))
    with pytest.raises(ValueError, match="1-D array argument"):
        sg.hessian(lambda x: np.sum(x ** 3), sparse=True, backend="numpy")(x2)
    with pytest.raises(ValueError, match="scalar outputs"):  # (the gradient says so)
        sg.hessian(lambda x: x ** 3, sparse=True, backend="numpy")(np.ones(3))
    with pytest.raises(ValueError, match="1-D array output"):
        sg.jacfwd(lambda x: np.outer(x, x), sparse=True, backend="numpy")(np.ones(3))
    with pytest.raises(ValueError, match="argnums"):
        sg.hessian(lambda x, y: np.sum(x * y), argnums=(0, 1), sparse=True)
    with pytest.raises(ValueError, match="has_aux"):
        sg.jacrev(lambda x: (x, x), has_aux=True, sparse=True)


# ---------------------------------------------------------------------------
# random functions: the pattern read from the IR must cover every nonzero

_UNARY = [np.sin, np.cos, np.tanh, np.arctan, lambda a: np.exp(0.3 * a), lambda a: a * a]


def _random_vector(rng, x, depth):
    """A random vector function of ``x`` (length 7) mixing element moves, prefix sums,
    products of constant matrices, ``where`` and reductions."""
    if depth == 0:
        return x
    a = _random_vector(rng, x, depth - 1)
    op = rng.integers(9)
    if op == 0:
        return _UNARY[rng.integers(len(_UNARY))](a)
    if op == 1:
        return a * _random_vector(rng, x, depth - 1)
    if op == 2:
        return a - _random_vector(rng, x, depth - 1)
    if op == 3:
        k = int(rng.integers(1, 6))
        return np.concatenate([a[k:], a[:k]])  # a rotation
    if op == 4:
        return np.cumsum(a) / 7
    if op == 5:
        return (BANDED if rng.integers(2) else DENSE) @ a
    if op == 6:
        return np.where(a > 0, a, _random_vector(rng, x, depth - 1) * a)
    if op == 7:
        return a[::-1] * a
    return np.sum(a[::3]) * np.tanh(_random_vector(rng, x, depth - 1))


@pytest.mark.parametrize("seed", range(30 if os.environ.get("SYMGRAD_FULL") else 6))
def test_random_functions_sparse_equals_dense(seed):
    def f(x):
        return np.sum(np.sin(_random_vector(np.random.default_rng(seed), x, 3)))

    x = np.random.default_rng(100 + seed).uniform(-1, 1, 7)
    dense = sg.hessian(f, backend="numpy")(x)
    h = sg.hessian(f, sparse=True, backend="numpy")
    np.testing.assert_allclose(h(x).toarray(), dense, rtol=1e-10, atol=1e-12)
    g = lambda x: _random_vector(np.random.default_rng(seed), x, 3)  # noqa: E731
    J = sg.jacrev(g, sparse=True, backend="numpy")(x)
    np.testing.assert_allclose(J.toarray(), sg.jacfwd(g, backend="numpy")(x), rtol=1e-10,
                               atol=1e-12)


def test_primitives_without_a_rule_depend_on_everything():
    # inv has no sparsity rule: its outputs depend on all that its operand does
    graph = sg.jit(lambda x: np.linalg.inv(np.eye(3) * x[:3]).ravel() + x[3:] ** 2,
                   backend="numpy").graph(np.ones(12))
    p = sparsity.jacobian_pattern(graph, 0).toarray()
    assert p[:, :3].all()  # every entry of the inverse depends on the whole diagonal
    assert np.array_equal(p[:, 3:], np.eye(9, dtype=bool))


def test_colouring_is_checked():
    tri = sp.diags([1.0, 1.0, 1.0], [-1, 0, 1], shape=(5, 5), format="csr")
    colouring.check_colouring(tri, colouring.column_colouring(tri))
    with pytest.raises(AssertionError, match="two columns of one row"):
        colouring.check_colouring(tri, np.array([0, 1, 1, 0, 1]))


def test_a_linear_function_has_an_empty_hessian_pattern():
    h = sg.hessian(lambda x: np.sum(x * 2.0) + x[0], sparse=True, backend="numpy")
    H = h(np.ones(5))
    assert H.shape == (5, 5) and H.nnz == 0 and not H.toarray().any()


def test_the_compiled_products_agree_with_the_formula():
    # one Numba kernel: the three Hessian-vector products, batched
    x = np.random.default_rng(10).uniform(-1.5, 1.5, 50)
    H = sg.hessian(rosenbrock, sparse=True)(x)
    np.testing.assert_allclose(H.toarray(), rosenbrock_hessian(x), rtol=1e-13, atol=1e-10)
