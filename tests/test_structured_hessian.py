"""Products by one-hot matrices as gathers (symgrad.passes.structure), and gathers
pulled up to where their elements are made (symgrad.passes.gathers).

``sg.hessian`` batches its tangents against an identity basis; the products of
``inv``'s batched tangent with that basis were dense ``(d², d) @ (d, d)`` matrix
products. The oracles: the handwritten numpy Hessian of the log-det benchmark
(benchmarks/higher_order.py), second finite differences of the plain numpy
function, and numpy's own ``@`` on random one-hot matrices.
"""

import numpy as np
import pytest

import symgrad as sg
from symgrad.core.interpreter import interpret
from symgrad.core.ir import Aval, Graph, Var
from symgrad.core.tracing import Trace
from symgrad.passes.gathers import sink_gathers
from symgrad.passes.rewrites import optimize
from symgrad.passes.structure import one_hot_products
from symgrad.prims.linalg import matmul_p


def loglik(x, A, b):
    M = A + np.eye(x.shape[0]) * np.exp(x)
    _, logdet = np.linalg.slogdet(M)
    d = x - b
    return logdet + 0.5 * np.dot(d, A @ d)


def loglik_hessian_numpy(x, A, b):
    """d²/dxᵢdxⱼ logdet M = δᵢⱼ eᵢ (M⁻¹)ᵢᵢ - eᵢ eⱼ (M⁻¹)ᵢⱼ², e = exp(x); plus A."""
    e = np.exp(x)
    Minv = np.linalg.inv(A + np.diag(e))
    return np.diag(e * np.diag(Minv)) - np.outer(e, e) * Minv**2 + A


def _problem(d, seed=0):
    rng = np.random.default_rng(seed)
    B = rng.normal(size=(d, d))
    return 0.3 * rng.normal(size=d), B @ B.T / d + np.eye(d), rng.normal(size=d)


def test_the_log_det_hessian_has_no_basis_products_and_matches_the_formula():
    d = 12
    x, A, b = _problem(d)
    h = sg.hessian(loglik, backend="numpy")
    np.testing.assert_allclose(h(x, A, b), loglik_hessian_numpy(x, A, b), rtol=1e-12,
                               atol=1e-13)
    graph = h.graph(x, A, b)
    # every product by the basis became a gather: no matmul at all is left
    assert not [e for e in graph.eqns if e.prim is matmul_p]


def test_the_log_det_hessian_matches_second_finite_differences():
    d = 5
    x, A, b = _problem(d, seed=3)
    H = sg.hessian(loglik, backend="numpy")(x, A, b)
    eps = 1e-4
    fd = np.empty((d, d))
    for i in range(d):
        for j in range(d):
            ei, ej = np.eye(d)[i] * eps, np.eye(d)[j] * eps
            fd[i, j] = (loglik(x + ei + ej, A, b) - loglik(x + ei - ej, A, b)
                        - loglik(x - ei + ej, A, b) + loglik(x - ei - ej, A, b)) / (4 * eps**2)
    np.testing.assert_allclose(H, fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("side", ["left", "right"])
def test_products_by_one_hot_constants_equal_numpy(side):
    rng = np.random.default_rng(7)
    n, k, m = 9, 6, 5
    onehot = np.zeros((n, k))
    rows = rng.permutation(n)[:6]  # some rows empty, one row's element repeated below
    onehot[rows, rng.integers(0, k, size=6)] = 1.0
    if side == "right":  # one nonzero per column: (k, n) @ (n, k)ᵀ shapes
        onehot = onehot.T.copy()
    other = rng.standard_normal((k, m) if side == "left" else (m, k))
    c = Var(Aval(onehot.shape))
    y = Var(Aval(other.shape), "y")
    x = Var(Aval((n, k) if side == "left" else (k, n)), "x")
    t = Trace(consts=[(c, onehot)])
    prod = t.bind(matmul_p, [c, y] if side == "left" else [y, c], {})
    graph = t.to_graph([x, y], [prod], "f")
    graph = Graph(graph.inputs, graph.eqns, graph.outputs, ((c, onehot),), "f")
    rewritten = one_hot_products(graph)
    assert not [e for e in rewritten.eqns if e.prim is matmul_p]
    xs = rng.standard_normal(x.shape)
    (got,) = interpret(rewritten, xs, other)
    want = onehot @ other if side == "left" else other @ onehot
    np.testing.assert_array_equal(got, want)  # one product and exact zeros: bit for bit


# ---------------------------------------------------------------------------
# gathers pulled up (symgrad.passes.gathers): every element computed where it is read


def test_the_log_det_hessian_keeps_no_value_larger_than_d_squared():
    d = 16
    x, A, b = _problem(d, seed=5)
    h = sg.hessian(loglik, backend="numpy")
    np.testing.assert_allclose(h(x, A, b), loglik_hessian_numpy(x, A, b), rtol=1e-12,
                               atol=1e-13)
    graph = h.graph(x, A, b)
    # the basis's (d, d, d) and (d², d) tangents are gone: O(d²) values, inv's O(d³) once
    assert max(int(np.prod(e.out.shape)) for e in graph.eqns) <= d * d


def _traced(fn, shape):
    graph, _ = sg.numpy_api.trace(fn, [Aval(shape)], [None], ["x"])
    return optimize(graph)


def test_masked_sums_and_pulled_slices_give_the_same_bits():
    n = 6
    eye = np.eye(n)

    def fn(X):
        picked = np.sum(np.exp(X)[:, :, None] * eye[None], axis=1)  # X's elements, by a mask
        corner = np.tanh(X[:, :, None] * X[:, None, :] + 1.0)[::3, ::2, 1]  # 1/12 of it
        return picked[:, 1:] * 2.0 + np.sum(corner) + np.cumsum(X, axis=0)[:, :5] * eye[0, 0]

    before = _traced(fn, (n, n))
    after = sink_gathers(before)
    assert after is not before
    after = optimize(after)  # (as the pipeline does: the unread values go)
    # no (n, n, n) value is made any more
    assert max(int(np.prod(e.out.shape)) for e in after.eqns) < n ** 3
    X = np.random.default_rng(9).normal(size=(n, n))
    (want,), (got,) = interpret(before, X), interpret(after, X)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, fn(X), rtol=1e-15)  # and numpy's own result


def test_graphs_without_a_basis_or_mask_are_left_alone():
    graph = _traced(lambda x: np.exp(x)[::10] * 2.0, (100,))
    assert sink_gathers(graph) is graph
