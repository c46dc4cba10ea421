"""vmap, jacrev, jacfwd and hessian through the batching rules of sorting, ``cumprod``
and the matrix decompositions (issue 15).

The oracles: a Python loop over the batch (each example on its own, through the
unbatched graph that the case table checks against SymPy and finite
differences), and central differences for Jacobians and Hessians. Every form of
the test table's cases runs here, not only the first per primitive as in
test_vmap_jacobians.py; the numpy backend except for a sample on Numba (a kernel
calling LAPACK takes seconds to compile).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import symgrad as sg

from cases import DECOMPOSITION_CASES, NUMPY_CASES
from oracle import assert_close, rng_for

PRIMS = {"argsort", "take_along", "scatter_along", "cumprod",
         "cholesky", "eigh", "eig", "qr", "svd", "pinv", "lstsq"}
CASES = [c for c in DECOMPOSITION_CASES + NUMPY_CASES if PRIMS & set(c.prims)]
N = 3  # examples per batch
FULL = os.environ.get("SYMGRAD_FULL") == "1"


def _batch(case, k: int) -> np.ndarray:
    """``N`` examples of argument ``k``: around a fixed point by scaling it (which keeps
    eig's eigenvalues real and cumprod's zeros), else drawn from the case's domain."""
    arg = np.asarray(case.args()[k], dtype=float)
    if case.fixed is not None:
        return np.stack([arg * (1.0 + 0.1 * j) for j in range(N)])
    rng = rng_for(f"{case.name}/vmap{k}")
    return rng.uniform(*case.domains[k], (N, *arg.shape))


def _loop(fn, args, axes):
    outs = [fn(*(a[j] if ax == 0 else a for a, ax in zip(args, axes))) for j in range(N)]
    return np.stack([np.asarray(o, dtype=float) for o in outs])


@pytest.mark.parametrize("case", CASES, ids=str)
def test_vmap_of_every_form_is_the_python_loop(case):
    """Each argument batched in turn (the others shared), then all of them."""
    args = case.args()
    for batched in [*range(len(args)), None] if len(args) > 1 else [0]:
        axes = [0 if batched in (k, None) else None for k in range(len(args))]
        vals = [_batch(case, k) if ax == 0 else a for k, (a, ax) in enumerate(zip(args, axes))]
        got = sg.vmap(case.fn, in_axes=tuple(axes), backend="numpy")(*vals)
        assert_close(got, _loop(case.fn, vals, axes), rtol=1e-12, atol=1e-13,
                     what=f"{case} in_axes={axes}")


@pytest.mark.parametrize("case", CASES, ids=str)
def test_per_example_gradients_are_the_loop_of_gradients(case):
    """vmap(grad): the VJP rules run on stacks (the batched adjoint graph)."""
    args = case.args()
    w = rng_for(case.name + "/ct").normal(size=np.shape(case.fn(*args)))

    def loss(*a):
        return np.sum(case.fn(*a) * w)

    xs = _batch(case, 0)
    axes = (0, *(None,) * (len(args) - 1))
    got = sg.vmap(sg.grad(loss), in_axes=axes, backend="numpy")(xs, *args[1:])
    want = np.stack([sg.grad(loss, backend="numpy")(x, *args[1:]) for x in xs])
    assert_close(got, want, rtol=1e-10, atol=1e-12, what=str(case))


def fd_jacobian(f, x, h=1e-6):
    cols = [(np.asarray(f(x + h * e)) - np.asarray(f(x - h * e))) / (2 * h)
            for e in np.eye(x.size).reshape(x.size, *x.shape)]
    return np.moveaxis(np.stack(cols), 0, -1).reshape(np.shape(f(x)) + x.shape)


# functions of one matrix; each smooth where it is evaluated (distinct eigen- and
# singular values, full rank, positive definite)
A = np.array([[1.2, -0.4, 0.3], [0.5, 0.9, -0.7], [-0.2, 0.6, 1.5], [0.8, 0.1, -0.3]])
SPD = A.T @ A + np.eye(3)
NONSYMMETRIC = np.array([[2.0, 0.5, -0.3], [0.2, 4.0, 0.6], [-0.4, 0.1, 7.0]])
MATRIX_FUNCTIONS = {
    "cholesky": (lambda a: np.linalg.cholesky(a @ a.T + np.eye(3)), SPD),
    "eigh": (lambda a: np.linalg.eigh(a)[1] ** 2 * np.linalg.eigvalsh(a), SPD),
    "eig": (lambda a: np.linalg.eig(a)[1] ** 2 + np.linalg.eigvals(a), NONSYMMETRIC),
    "qr": (lambda a: np.linalg.qr(a)[0] ** 2 + np.linalg.qr(a)[1].sum(), A),
    "svd": (lambda a: np.linalg.svd(a, full_matrices=False)[2] ** 2
            * np.linalg.svdvals(a)[:, None], A),
    "pinv": (lambda a: np.linalg.pinv(a), A),
    "lstsq": (lambda a: np.linalg.lstsq(a, np.arange(1.0, 5.0))[0]
              + np.linalg.lstsq(a[:3] * 2.0, np.eye(3))[0].sum(axis=1), A),
    "sort": (lambda a: np.sort(a, axis=0) * np.arange(1.0, 4.0) + np.sort(a) ** 2, A),
    "cumprod": (lambda a: np.cumprod(a, axis=0) + np.cumprod(a[1]), A),
}


@pytest.mark.parametrize("name", MATRIX_FUNCTIONS)
def test_jacfwd_and_jacrev_agree_with_finite_differences(name):
    f, x = MATRIX_FUNCTIONS[name]
    rev = sg.jacrev(f, backend="numpy")(x)
    fwd = sg.jacfwd(f, backend="numpy")(x)
    fd = fd_jacobian(f, x)
    assert rev.shape == fwd.shape == fd.shape
    assert_close(rev, fwd, rtol=1e-10, atol=1e-12, what=f"{name}: jacrev vs jacfwd")
    assert_close(rev, fd, rtol=1e-6, atol=1e-7, what=f"{name}: jacrev vs differences")


@pytest.mark.parametrize("name", MATRIX_FUNCTIONS)
def test_hessian_is_the_jacobian_of_the_gradient(name):
    """hessian = jacfwd(jacrev): the tangents batch the primitives of the VJP rules;
    the oracle is central differences of the gradient."""
    f, x = MATRIX_FUNCTIONS[name]
    w = rng_for(name + "/hessian").normal(size=np.shape(f(x)))

    def loss(a):
        return np.sum(np.sin(f(a)) * w)

    h = sg.hessian(loss, backend="numpy")(x)
    g = sg.grad(loss, backend="numpy")
    assert h.shape == x.shape * 2
    assert_close(h, fd_jacobian(g, x, h=1e-5), rtol=1e-5, atol=1e-6, what=name)


def test_lstsq_batched_in_a_in_b_or_both_and_nested():
    rng = rng_for("lstsq-batches")
    a, stack_a = rng.normal(size=(4, 3)), rng.normal(size=(N, 4, 3))
    vec, stack_vec = rng.normal(size=4), rng.normal(size=(N, 4))
    mat, stack_mat = rng.normal(size=(4, 2)), rng.normal(size=(N, 4, 2))

    def solve(a, b):
        return np.linalg.lstsq(a, b)[0]

    for args, axes in [((stack_a, vec), (0, None)), ((stack_a, mat), (0, None)),
                       ((a, stack_vec), (None, 0)), ((a, stack_mat), (None, 0)),
                       ((stack_a, stack_vec), (0, 0)), ((stack_a, stack_mat), (0, 0))]:
        got = sg.vmap(solve, in_axes=axes, backend="numpy")(*args)
        assert_close(got, _loop(solve, args, axes), rtol=1e-12, atol=1e-13, what=str(axes))
    # a vmap of a vmap: the inner one makes a stack of a, which the outer one batches or not
    grid_b = rng.normal(size=(2, N, 4))
    inner = sg.vmap(solve, in_axes=(0, 0))
    got = sg.vmap(inner, in_axes=(None, 0), backend="numpy")(stack_a, grid_b)
    want = np.stack([[solve(stack_a[j], grid_b[i, j]) for j in range(N)] for i in range(2)])
    assert_close(got, want, rtol=1e-12, atol=1e-13, what="nested")


def test_numpy_lstsq_refuses_a_stack_as_numpy_does():
    with pytest.raises(ValueError, match="sg.vmap"):
        sg.jit(lambda a, b: np.linalg.lstsq(a, b)[0], backend="numpy")(
            np.ones((2, 3, 3)), np.ones((2, 3, 1)))


def test_vmap_over_stacks_on_numba_is_the_python_loop():
    """The Numba kernel of a batched graph: lstsq's new loop over a stack of matrices,
    the batched sort and cumprod (the decompositions' loops run in the sample of
    test_vmap_jacobians.py). Per-example gradients on Numba (a kernel with LAPACK
    calls compiles for minutes) run with SYMGRAD_FULL=1."""
    rng = rng_for("numba-stacks")
    a = rng.normal(size=(N, 4, 3))
    b = rng.normal(size=(N, 4))

    def f(a, b):
        return np.linalg.lstsq(a, b)[0] + np.sort(a, axis=0)[1] * np.cumprod(a[1])

    got = sg.vmap(f, backend="numba")(a, b)
    assert_close(got, _loop(f, (a, b), (0, 0)), rtol=1e-12, atol=1e-13)
    if not FULL:
        return
    grads = sg.vmap(sg.grad(lambda a, b: np.sum(f(a, b) ** 2)), backend="numba")(a, b)
    fd = np.stack([fd_jacobian(lambda x, y=y: np.sum(f(x, y) ** 2), x) for x, y in zip(a, b)])
    assert_close(grads, fd, rtol=1e-6, atol=1e-7, what="per-example gradients")
