"""Matrix decompositions: gradients against PyTorch's backward formulas, at degenerate
points, and what is refused.

PyTorch's formulas (``cholesky_backward``, ``linalg_eig_backward``,
``svd_backward``, ``linalg_qr_backward``, ``pinv_backward`` of its
``FunctionsManual.cpp``) are written out here in numpy, independently of
symgrad's VJP rules, and compared with symgrad's pullbacks at random points;
real PyTorch is compared too where it is installed (``pip install torch``, the
test extra). The degenerate points are the conventions of
``symgrad/prims/decompositions.py``: repeated eigenvalues and singular values,
rank deficiency, the triangle that is read. The test table (``cases_decompositions``)
checks the same primitives against finite differences and SymPy on both backends.
"""

from __future__ import annotations

import numpy as np
import pytest

import symgrad as sg

from oracle import assert_close, finite_differences, rng_for

RTOL = 1e-9
BACKEND = "numpy"  # the table runs every primitive on Numba too


def _vjp(fn, x, ct):
    _, pullback = sg.vjp(fn, x, backend=BACKEND)
    return pullback(ct)[0]


def _solve_right(b, a):
    """``b @ inv(a)``."""
    return np.linalg.solve(a.T, b.T).T


def lower(s):
    """The gradient with respect to a matrix of which numpy reads the lower triangle, from
    the symmetric gradient ``s``."""
    return np.tril(s + s.T, -1) + np.diag(np.diag(s))


# ---------------------------------------------------------------------------
# PyTorch's formulas (real matrices), as FunctionsManual.cpp writes them


def torch_cholesky_backward(gL, L):
    gA = np.tril(L.T @ gL)
    gA = 0.5 * (gA + np.tril(gA, -1).T)
    gA = np.linalg.solve(L.T, gA)     # linalg_solve_triangular(L^H, gA, upper, left)
    return _solve_right(gA, L)        # linalg_solve_triangular(L, gA, lower, right)


def torch_eigh_backward(gL, gV, L, V):
    VhgV = V.T @ gV
    VhgV = 0.5 * (VhgV - VhgV.T)      # project onto skew-symmetric matrices
    E = L[None, :] - L[:, None]
    np.fill_diagonal(E, 1.0)
    ret = VhgV / E
    np.fill_diagonal(ret, gL)
    return V @ ret @ V.T


def torch_eig_backward(gL, gV, L, V):
    VhgV = V.T @ gV
    VhgV = VhgV - V.T @ (V * np.diag(VhgV)[None, :])  # columns of norm 1
    E = L[None, :] - L[:, None]
    np.fill_diagonal(E, 1.0)
    ret = VhgV / E
    np.fill_diagonal(ret, gL)
    return np.linalg.solve(V.T, ret @ V.T)


def torch_svd_backward(gU, gS, gVh, U, S, Vh):
    m, n = U.shape[0], Vh.shape[1]
    k = S.shape[0]
    V, gV = Vh.T, gVh.T
    skew = lambda X: X - X.T  # noqa: E731
    S2 = S * S
    E = S2[None, :] - S2[:, None]
    np.fill_diagonal(E, 1.0)
    ret = (skew(U.T @ gU) * S[None, :] + S[:, None] * skew(V.T @ gV)) / E
    ret = ret + np.diag(gS)
    if m > k:
        gA = U @ ret
        gUSinv = gU / S[None, :]
        gA = gA + gUSinv - U @ (U.T @ gUSinv)
        return gA @ Vh
    if n > k:
        gA = ret @ Vh
        SinvgVh = gVh / S[:, None]
        gA = gA + SinvgVh - (SinvgVh @ V) @ Vh
        return U @ gA
    return U @ ret @ Vh


def torch_qr_backward(gQ, gR, Q, R, A):
    m, n = A.shape
    if m < n:  # A = [X | Y]: X = Q U, gY = Q gV, gQ gets Y gV^T
        gU, gV = gR[:, :m], gR[:, m:]
        gX = torch_qr_backward(gQ + A[:, m:] @ gV.T, gU, Q, R[:, :m], A[:, :m])
        return np.concatenate([gX, Q @ gV], axis=1)
    M = R @ gR.T - gQ.T @ Q
    copyltu = np.tril(M) + np.tril(M, -1).T
    return np.linalg.solve(R, (gQ + Q @ copyltu).T).T


def torch_pinv_backward(grad, pinvA, A):
    m, n = A.shape
    pinvAh, gradh = pinvA.T, grad.T
    if m <= n:
        K = gradh @ pinvA
        KpinvAh = K @ pinvAh
        return (-(pinvA @ K).T + KpinvAh - (A @ pinvA) @ KpinvAh
                + (pinvAh @ pinvA) @ (gradh - K @ A))
    K = pinvA @ gradh
    pinvAhK = pinvAh @ K
    return (-(K @ pinvA).T + (gradh - A @ K) @ pinvA @ pinvAh + pinvAhK
            - pinvAhK @ pinvA @ A)


# ---------------------------------------------------------------------------
# symgrad against the formulas at random points


def _psd(rng, n):
    a = rng.standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


def test_cholesky_matches_pytorch():
    rng = rng_for("cholesky")
    A, gL = _psd(rng, 4), np.tril(rng.standard_normal((4, 4)))
    got = _vjp(np.linalg.cholesky, A, gL)
    want = lower(torch_cholesky_backward(gL, np.linalg.cholesky(A)))
    assert_close(got, want, rtol=RTOL, what="cholesky")
    assert np.all(np.triu(got, 1) == 0.0)  # the upper triangle is never read


def test_cholesky_along_symmetric_matrices_is_pytorchs_symmetric_gradient():
    rng = rng_for("cholesky-sym")
    X, W = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    f = lambda x: np.sum(np.linalg.cholesky(x @ x.T + 3.0 * np.eye(3)) * W)  # noqa: E731
    got = sg.grad(f, backend=BACKEND)(X)
    A = X @ X.T + 3.0 * np.eye(3)
    S = torch_cholesky_backward(np.tril(W), np.linalg.cholesky(A))  # dL/dA, symmetric
    assert_close(got, (S + S.T) @ X, rtol=RTOL, what="chain through A = X X^T")
    assert_close(got, finite_differences(f, [X], 0), rtol=1e-6, atol=1e-8, what="fd")


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_matches_pytorch(uplo):
    rng = rng_for("eigh" + uplo)
    A = rng.standard_normal((4, 4))
    gw, gV = rng.standard_normal(4), rng.standard_normal((4, 4))
    _, pullback = sg.vjp(lambda a: np.linalg.eigh(a, uplo), A, backend=BACKEND)
    (got,) = pullback((gw, gV))
    # numpy's eigh(A, uplo) itself: for "U" not eigh(A.T), whose eigenvectors' signs differ
    w, V = np.linalg.eigh(A, uplo)
    assert_close(sg.jit(lambda a: np.linalg.eigh(a, uplo)[1], backend=BACKEND)(A), V,
                 rtol=1e-15, atol=1e-15, what="eigenvectors")
    S = torch_eigh_backward(gw, gV, w, V)
    want = lower(S) if uplo == "L" else lower(S.T).T
    assert_close(got, want, rtol=RTOL, what="eigh")


def test_eig_matches_pytorch():
    rng = rng_for("eig")
    A = np.diag([1.0, 2.5, 4.0, 6.0]) + 0.3 * rng.standard_normal((4, 4))
    gw, gV = rng.standard_normal(4), rng.standard_normal((4, 4))
    w, V = np.linalg.eig(A)
    assert not np.iscomplexobj(w)
    _, pullback = sg.vjp(lambda a: np.linalg.eig(a), A, backend=BACKEND)
    (got,) = pullback((gw, gV))
    assert_close(got, torch_eig_backward(gw, gV, w, V), rtol=RTOL, what="eig")


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 3, 2)])
def test_svd_matches_pytorch(shape):
    rng = rng_for(f"svd{shape}")
    A = rng.standard_normal(shape)
    U, S, Vh = np.linalg.svd(A, full_matrices=False)
    gU, gS, gVh = (rng.standard_normal(x.shape) for x in (U, S, Vh))
    _, pullback = sg.vjp(lambda a: np.linalg.svd(a, full_matrices=False), A, backend=BACKEND)
    (got,) = pullback((gU, gS, gVh))
    if A.ndim == 2:
        want = torch_svd_backward(gU, gS, gVh, U, S, Vh)
    else:
        want = np.stack([torch_svd_backward(*(x[i] for x in (gU, gS, gVh, U, S, Vh)))
                         for i in range(shape[0])])
    assert_close(got, want, rtol=RTOL, what=f"svd {shape}")


@pytest.mark.parametrize("shape", [(5, 3), (3, 3), (3, 5)])
def test_qr_matches_pytorch(shape):
    rng = rng_for(f"qr{shape}")
    A = rng.standard_normal(shape)
    Q, R = np.linalg.qr(A)
    gQ, gR = rng.standard_normal(Q.shape), rng.standard_normal(R.shape)
    _, pullback = sg.vjp(lambda a: np.linalg.qr(a), A, backend=BACKEND)
    (got,) = pullback((gQ, gR))
    assert_close(got, torch_qr_backward(gQ, gR, Q, R, A), rtol=RTOL, what=f"qr {shape}")


@pytest.mark.parametrize("shape", [(5, 3), (3, 5)])
def test_pinv_matches_pytorch(shape):
    rng = rng_for(f"pinv{shape}")
    A, g = rng.standard_normal(shape), rng.standard_normal(shape[::-1])
    got = _vjp(np.linalg.pinv, A, g)
    assert_close(got, torch_pinv_backward(g, np.linalg.pinv(A), A), rtol=RTOL, what="pinv")


def test_lstsq_is_the_pseudo_inverse_times_b():
    rng = rng_for("lstsq")
    A, b, g = rng.standard_normal((5, 3)), rng.standard_normal(5), rng.standard_normal(3)
    _, pullback = sg.vjp(lambda a, b: np.linalg.lstsq(a, b)[0], A, b, backend=BACKEND)
    ga, gb = pullback(g)
    P = np.linalg.pinv(A)
    assert_close(ga, torch_pinv_backward(np.outer(g, b), P, A), rtol=RTOL, what="lstsq a")
    assert_close(gb, P.T @ g, rtol=RTOL, what="lstsq b")


def test_lstsq_returns_numpys_four_results():
    rng = rng_for("lstsq-4")
    A, b = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    got = sg.jit(lambda a, b: tuple(np.linalg.lstsq(a, b)), backend=BACKEND)(A, b)
    want = np.linalg.lstsq(A, b)
    for g, w in zip(got, want):
        assert_close(g, w, rtol=1e-12, atol=1e-12, what="lstsq results")


# ---------------------------------------------------------------------------
# real PyTorch, where installed


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def _squares(m, *parts):
    """A loss invariant to the signs of singular and eigenvectors (which LAPACK builds
    may choose differently): weighted sums of squares (``m`` is numpy or torch)."""
    return sum((p ** 2 * m.asarray(w)).sum() for p, w in parts)


def test_decompositions_match_real_pytorch(torch):
    rng = rng_for("real-torch")
    A, S = rng.standard_normal((4, 3)), _psd(rng, 3)
    W = [rng.standard_normal(s) for s in [(4, 3), (3,), (3, 3), (3, 4)]]
    losses = {  # name: (input, the loss with m = numpy or torch)
        "svd": (A, lambda a, m: _squares(m, *zip(m.linalg.svd(a, full_matrices=False), W))),
        "qr": (A, lambda a, m: _squares(m, *zip(m.linalg.qr(a), (W[0], W[2])))),
        "pinv": (A, lambda a, m: (m.linalg.pinv(a) * m.asarray(W[3])).sum()),
        "svdvals": (A, lambda a, m: _squares(m, (m.linalg.svd(a, full_matrices=False)[1],
                                                  W[1]))),
        "eigh": (S, lambda a, m: _squares(m, *zip(m.linalg.eigh(a), W[1:3]))),
        "cholesky": (S, lambda a, m: (m.linalg.cholesky(a) * m.asarray(W[2])).sum()),
    }
    for name, (x, loss) in losses.items():
        got = sg.grad(lambda a, loss=loss: loss(a, np), backend=BACKEND)(x)
        t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
        (want,) = torch.autograd.grad(loss(t, torch), t)
        want = want.numpy()
        if name in ("eigh", "cholesky"):  # numpy reads the lower triangle; torch's is symmetric
            want = lower(want)
        assert_close(got, want, rtol=RTOL, atol=1e-12, what=f"{name} vs PyTorch")


# ---------------------------------------------------------------------------
# degenerate points (rows of symgrad.core.conventions)


def test_repeated_eigenvalues_keep_the_values_gradient_and_make_the_vectors_nan():
    A = np.diag([1.0, 1.0, 2.0])  # a repeated eigenvalue
    # a symmetric function of the tied values is differentiable: gradient V diag(c) V^T
    g = sg.grad(lambda a: np.sum(np.linalg.eigvalsh(a) * np.array([1.0, 1.0, 3.0])),
                backend=BACKEND)(A)
    assert_close(g, np.diag([1.0, 1.0, 3.0]), rtol=1e-15, what="values at a tie")
    # through the eigenvectors the gradient is not determined: nan where the pair couples
    g = sg.grad(lambda a: np.sum(np.linalg.eigh(a)[1] ** 3), backend=BACKEND)(A)
    assert np.isnan(g[1, 0])


def test_repeated_singular_values():
    A = np.diag([2.0, 2.0, 1.0])
    g = sg.grad(lambda a: np.sum(np.linalg.svd(a, compute_uv=False)), backend=BACKEND)(A)
    U, _, Vh = np.linalg.svd(A)
    assert_close(g, U @ Vh, rtol=1e-15, what="the nuclear norm's gradient U V^T")
    g = sg.grad(lambda a: np.sum(np.linalg.svd(a)[0] ** 3), backend=BACKEND)(A)
    assert np.isnan(g).any()


def test_a_zero_singular_value_of_a_tall_matrix_makes_the_vectors_gradient_nan():
    A = np.array([[1.0, 0.0], [2.0, 0.0], [3.0, 0.0]])  # singular values sqrt(14) and 0
    assert np.linalg.svd(A, compute_uv=False)[1] == 0.0
    g = sg.grad(lambda a: np.sum(np.linalg.svd(a, full_matrices=False)[0] ** 3),
                backend=BACKEND)(A)
    assert np.isnan(g).all()
    g = sg.grad(lambda a: np.linalg.svd(a, compute_uv=False)[0], backend=BACKEND)(A)
    assert np.isfinite(g).all()


def test_pinv_and_lstsq_differentiate_at_constant_rank():
    """At a rank-deficient a = b @ c, perturbing the factors keeps the rank: there the
    pseudo-inverse is smooth and the gradient is the restricted map's (finite differences
    through the factors agree); perturbing a itself would jump."""
    rng = rng_for("constant-rank")
    B, C, W = rng.standard_normal((4, 2)), rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    y = rng.standard_normal(4)
    f = lambda b, c: np.sum(np.linalg.pinv(b @ c) * W)  # noqa: E731
    got = sg.grad(f, argnums=(0, 1), backend=BACKEND)(B, C)
    for k in (0, 1):
        assert_close(got[k], finite_differences(f, [B, C], k), rtol=1e-6, atol=1e-8,
                     what=f"pinv factor {k}")
    f = lambda b, c: np.sum(np.linalg.lstsq(b @ c, y)[0] ** 2)  # noqa: E731
    got = sg.grad(f, argnums=(0, 1), backend=BACKEND)(B, C)
    for k in (0, 1):
        assert_close(got[k], finite_differences(f, [B, C], k), rtol=1e-6, atol=1e-8,
                     what=f"lstsq factor {k}")


def test_lstsq_residuals_are_nan_where_numpy_gives_none():
    a = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])  # rank 1: numpy returns []
    residuals, rank = sg.jit(lambda a: np.linalg.lstsq(a, np.ones(3))[1:3], backend=BACKEND)(a)
    assert np.linalg.lstsq(a, np.ones(3))[1].size == 0 and np.isnan(residuals).all()
    assert rank == np.linalg.lstsq(a, np.ones(3))[2] == 1


# ---------------------------------------------------------------------------
# what has no gradient is refused, saying what to do


@pytest.mark.parametrize("fn, match", [
    (lambda a: np.linalg.qr(a, mode="complete")[0], "mode='reduced'"),
    (lambda a: np.linalg.qr(a, mode="raw")[0], "mode='reduced'"),
    (lambda a: np.linalg.svd(a)[0], "full_matrices=False"),
    (lambda a: np.linalg.svd(a, full_matrices=False, hermitian=True)[0], "hermitian=False"),
    (lambda a: np.linalg.pinv(a, rcond=np.ones(1)), "one number"),
])
def test_refusals_say_what_to_do(fn, match):
    with pytest.raises(sg.UnsupportedFunctionError, match=match):
        sg.grad(lambda a: np.sum(fn(a)), backend=BACKEND)(np.ones((3, 2)))


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_eig_with_complex_eigenvalues_is_refused_when_it_runs(backend):
    g = sg.grad(lambda a: np.sum(np.linalg.eigvals(a)), backend=backend)
    assert_close(g(np.diag([1.0, 2.0])), np.eye(2), rtol=1e-15, what="real eigenvalues")
    with pytest.raises(ValueError, match="complex eigenvalues.*np.linalg.eigh"):
        g(np.array([[0.0, -1.0], [1.0, 0.0]]))  # a rotation: eigenvalues +-i
