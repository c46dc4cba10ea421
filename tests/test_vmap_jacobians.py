"""vmap, Jacobians, Hessians and Hessian-vector products, against Python loops,
finite differences and handwritten formulas (issue 15)."""

from __future__ import annotations

import numpy as np
import pytest

import symgrad as sg

from cases import CASES, Case
from oracle import assert_close, finite_differences, rng_for

RNG = np.random.default_rng(7)


def _batchable_cases() -> list[Case]:
    seen, chosen = set(), []
    for case in CASES:
        if case.prims and case.prims[0] not in seen and case.fixed is None and case.shapes \
                and len(case.shapes[0]) >= 1:
            seen.add(case.prims[0])
            chosen.append(case)
    return chosen


BATCHABLE = _batchable_cases()


@pytest.mark.parametrize("case", BATCHABLE, ids=str)
def test_vmap_of_every_primitive_is_the_python_loop(case: Case):
    """Batch the first argument (4 examples); the others stay the same for every example."""
    args = case.args()
    rng = rng_for(case.name + "/vmap")
    if case.discrete or not case.domains:
        batch = rng.integers(-1, 3, (4, *np.shape(args[0]))).astype(float)
    else:
        batch = rng.uniform(*case.domains[0], (4, *np.shape(args[0])))
    in_axes = (0, *(None,) * (len(args) - 1))
    backend = "numba" if BATCHABLE.index(case) % 4 == 0 else "numpy"
    got = sg.vmap(case.fn, in_axes=in_axes, backend=backend)(batch, *args[1:])
    want = np.stack([np.asarray(case.fn(b, *args[1:])) for b in batch])
    assert_close(got, want, rtol=1e-13, atol=1e-14, what=f"{case} on {backend}")


@pytest.mark.parametrize("in_axes", [(None, None, 0), (0, None, 0), (None, 0, 0), (0, 0, None)])
def test_vmap_of_linear_with_a_bias_is_the_python_loop(in_axes):
    """``linear``'s third operand, the bias, batched or not, with the rows or the matrix
    batched or not (its batch rule: one equation, or a product per example plus each
    example's bias)."""
    from symgrad.prims.linalg import linear

    rng = np.random.default_rng(5)
    args = [rng.standard_normal(((4,) if a == 0 else ()) + s)
            for a, s in zip(in_axes, ((2, 3, 4), (5, 4), (5,)))]
    got = sg.vmap(linear, in_axes=in_axes)(*args)
    examples = [[a[i] if ax == 0 else a for a, ax in zip(args, in_axes)] for i in range(4)]
    want = np.stack([x @ w.T + b for x, w, b in examples])
    assert_close(got, want, rtol=1e-13, atol=1e-14, what=f"linear, in_axes={in_axes}")


def test_vmap_over_the_second_argument_and_other_axes():
    w = RNG.normal(size=(3, 5))
    x = RNG.normal(size=(3, 4))  # examples along axis 1
    got = sg.vmap(lambda w, x: np.tanh(x @ w), in_axes=(None, 1), out_axes=1)(w, x)
    want = np.stack([np.tanh(x[:, k] @ w) for k in range(4)], axis=1)
    assert_close(got, want, rtol=1e-14)
    neg = sg.vmap(lambda x: np.sum(x ** 2), in_axes=-1)(x)
    assert_close(neg, np.sum(x ** 2, axis=0), rtol=1e-14)


def test_vmap_of_matrix_products_in_every_arrangement():
    a = RNG.normal(size=(3, 4))
    batch_m = RNG.normal(size=(5, 3, 4))
    batch_v = RNG.normal(size=(5, 4))
    batch_k = RNG.normal(size=(5, 3))
    mat = RNG.normal(size=(4, 2))
    vec = RNG.normal(size=4)
    cases = [
        (lambda x, y: x @ y, (0, None), (batch_m, mat)),
        (lambda x, y: x @ y, (0, None), (batch_m, vec)),
        (lambda x, y: x @ y, (0, None), (batch_v, vec)),
        (lambda x, y: x @ y, (0, None), (batch_v, mat)),
        (lambda x, y: x @ y, (None, 0), (a, batch_v)),
        (lambda x, y: y @ x, (None, 0), (a, batch_k)),
        (lambda x, y: x @ y, (None, 0), (a, RNG.normal(size=(5, 4, 2)))),
        (lambda x, y: x @ y, (0, 0), (batch_m, batch_v)),
        (lambda x, y: x @ y, (0, 0), (batch_v, batch_v)),
        (lambda x, y: y @ x, (0, 0), (batch_m, batch_k)),
        (lambda x, y: x @ y, (None, 0), (vec, RNG.normal(size=(5, 4, 2)))),
        (lambda x, y: np.linalg.solve(x, y), (0, None), (RNG.normal(size=(5, 3, 3)), np.ones(3))),
        (lambda x, y: np.linalg.solve(x, y), (None, 0), (RNG.normal(size=(3, 3)), batch_k)),
        (lambda x, y: np.linalg.det(x) * y, (0, None), (RNG.normal(size=(5, 3, 3)), 2.0)),
    ]
    for f, axes, args in cases:
        got = sg.vmap(f, in_axes=axes, backend="numpy")(*args)
        n = next(np.shape(a)[0] for a, ax in zip(args, axes) if ax == 0)
        want = np.stack([f(*(a[k] if ax == 0 else a for a, ax in zip(args, axes)))
                         for k in range(n)])
        assert_close(got, want, rtol=1e-12, atol=1e-13, what=str(axes))


def test_vmap_of_pytrees_and_nested_vmap():
    params = {"w": RNG.normal(size=(4, 3)), "b": RNG.normal(size=3)}
    xs = RNG.normal(size=(6, 4))
    out = sg.vmap(lambda p, x: {"y": np.tanh(x @ p["w"] + p["b"]), "n": np.sum(x)},
                  in_axes=(None, 0))(params, xs)
    assert_close(out["y"], np.tanh(xs @ params["w"] + params["b"]), rtol=1e-14)
    assert_close(out["n"], xs.sum(axis=1), rtol=1e-14)
    grid = RNG.normal(size=(2, 3, 4))
    nested = sg.vmap(sg.vmap(lambda v: np.sum(np.sin(v))))(grid)
    assert_close(nested, np.sin(grid).sum(axis=-1), rtol=1e-14)


def test_per_example_gradients_of_logistic_regression():
    X = RNG.normal(size=(200, 5))
    y = (RNG.random(200) > 0.5).astype(float)
    w = RNG.normal(size=5)

    def loss(w, x, y):
        z = np.dot(x, w)
        return np.logaddexp(0.0, z) - y * z

    per_example = sg.vmap(sg.grad(loss), in_axes=(None, 0, 0))(w, X, y)
    p = 1 / (1 + np.exp(-X @ w))
    assert_close(per_example, X * (p - y)[:, None], rtol=1e-12, atol=1e-14)
    total = sg.grad(lambda w: np.mean(sg.vmap(loss, in_axes=(None, 0, 0))(w, X, y)))(w)
    assert_close(total, X.T @ (p - y) / len(y), rtol=1e-12, atol=1e-14)


def test_vmap_refuses_mismatched_batches():
    with pytest.raises(ValueError, match="different batch sizes"):
        sg.vmap(lambda a, b: a * b)(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="no argument is batched"):
        sg.vmap(lambda a: a, in_axes=None)(np.ones(3))
    with pytest.raises(ValueError, match="in_axes must be"):
        sg.vmap(lambda a: a, in_axes=(0, 0))(np.ones(3))


def test_vmap_sees_the_current_world():
    scale = np.array([1.0, 2.0])
    f = sg.vmap(lambda x: x * scale)
    x = np.ones((3, 2))
    assert_close(f(x), x * scale)
    scale[:] = [5.0, -1.0]
    assert_close(f(x), x * scale)


# ---------------------------------------------------------------------------
# Jacobians and Hessians


def vector_function(x):
    return np.concatenate([np.sin(x) * x[0], np.stack([np.sum(x ** 3), np.prod(x)])])


def fd_jacobian(f, x, h=1e-6):
    return np.stack([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)], axis=-1)


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_jacfwd_and_jacrev_against_finite_differences(backend):
    x = np.array([0.3, -1.2, 2.0, 0.7])
    rev = sg.jacrev(vector_function, backend=backend)(x)
    fwd = sg.jacfwd(vector_function, backend=backend)(x)
    assert rev.shape == fwd.shape == (6, 4)
    assert_close(rev, fd_jacobian(vector_function, x), rtol=1e-7, atol=1e-8)
    assert_close(fwd, rev, rtol=1e-13, atol=1e-14)
    assert sg.jacobian is sg.jacrev


def test_jacobians_of_matrices_pytrees_and_argnums():
    A = RNG.normal(size=(2, 3))
    b = RNG.normal(size=3)
    f = lambda A, b: np.tanh(A @ b)  # (2,)
    jA, jb = sg.jacrev(f, argnums=(0, 1))(A, b)
    assert jA.shape == (2, 2, 3) and jb.shape == (2, 3)
    t = np.tanh(A @ b)
    assert_close(jb, (1 - t ** 2)[:, None] * A, rtol=1e-13)
    want_A = np.zeros((2, 2, 3))
    for i in range(2):
        want_A[i, i] = (1 - t[i] ** 2) * b
    assert_close(jA, want_A, rtol=1e-13, atol=1e-15)
    jA2 = sg.jacfwd(f)(A, b)
    assert_close(jA2, want_A, rtol=1e-13, atol=1e-15)
    tree = sg.jacrev(lambda p: {"s": np.sum(p["a"] * p["b"]), "v": p["a"] * 2.0})(
        {"a": np.array([1.0, 2.0]), "b": np.array([3.0, 4.0])})
    assert_close(tree["s"]["a"], [3.0, 4.0])
    assert_close(tree["s"]["b"], [1.0, 2.0])
    assert_close(tree["v"]["a"], 2 * np.eye(2))
    assert_close(tree["v"]["b"], np.zeros((2, 2)))


def test_jacobian_with_aux():
    jac, aux = sg.jacrev(lambda x: (np.sin(x), {"m": np.mean(x)}), has_aux=True)(
        np.array([0.1, 0.2]))
    assert_close(jac, np.diag(np.cos([0.1, 0.2])), rtol=1e-14, atol=1e-16)
    assert_close(aux["m"], 0.15)


def loglik(x):
    n = x.size
    cov = np.eye(n) + 0.1 * np.outer(x, x)
    return -0.5 * np.linalg.slogdet(cov)[1] - 0.5 * x @ np.linalg.solve(cov, x) + np.sum(
        np.sin(x))


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_hessian_against_finite_differences_of_the_gradient(backend):
    x = RNG.normal(size=6)
    H = sg.hessian(loglik, backend=backend)(x)
    assert H.shape == (6, 6)
    g = sg.grad(loglik, backend="numpy")
    assert_close(H, fd_jacobian(g, x, 1e-5), rtol=1e-6, atol=1e-7)
    assert_close(H, H.T, rtol=1e-12, atol=1e-13)  # symmetric to rounding
    assert_close(sg.jacrev(sg.grad(loglik), backend=backend)(x), H, rtol=1e-11, atol=1e-12)


def test_hvp_is_the_hessian_times_v():
    x = RNG.normal(size=6)
    v = RNG.normal(size=6)
    H = sg.hessian(loglik, backend="numpy")(x)
    assert_close(sg.hvp(loglik, x, v), H @ v, rtol=1e-11, atol=1e-12)
    rosen = lambda x: np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    z = RNG.normal(size=50)
    w = RNG.normal(size=50)
    assert_close(sg.hvp(rosen, z, w), fd_jacobian(sg.grad(rosen, backend="numpy"), z, 1e-6) @ w,
                 rtol=1e-5, atol=1e-5)


def test_hvp_in_jaxs_tuple_convention_is_a_clear_error():
    """JAX's ``jvp(grad(f), (x,), (v,))`` convention given to ``sg.hvp`` (which passes x
    whole: a tuple is one pytree argument): a TypeError naming ``sg.hvp(f, x, v)``, not
    numpy's raw error about a tuple; the form it names equals JAX's."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    rosen = lambda x: (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()
    z, w = RNG.normal(size=5), RNG.normal(size=5)
    with pytest.raises(TypeError, match=r"JAX's convention.*call sg\.hvp\(f, x, v\)"):
        sg.hvp(rosen, (z,), (w,), backend="numpy")
    assert_close(sg.hvp(rosen, z, w, backend="numpy"),
                 jax.jvp(jax.grad(rosen), (z,), (w,))[1], rtol=1e-13)
    pair = lambda t: np.sum(t[0] ** 2 * t[1])  # a fun of one tuple: its pytree gradient
    got = sg.hvp(pair, (z, w), (w, z), backend="numpy")
    want = jax.jvp(jax.grad(lambda a, b: (a ** 2 * b).sum(), (0, 1)), (z, w), (w, z))[1]
    for a, b in zip(got, want):
        assert_close(a, b, rtol=1e-13)


def test_jvp_and_linearize():
    x = np.array([0.3, -1.2])
    t = np.array([1.0, 0.5])
    y, jt = sg.jvp(vector_function, (x,), (t,))
    assert_close(y, vector_function(x), rtol=1e-15)
    assert_close(jt, fd_jacobian(vector_function, x) @ t, rtol=1e-7, atol=1e-8)
    y2, f_jvp = sg.linearize(vector_function, x)
    x[:] = 0.0  # the linearization point was copied
    assert_close(y2, y, rtol=1e-15)
    assert_close(f_jvp(t), jt, rtol=1e-14)
    with pytest.raises(ValueError, match="one tangent per primal"):
        sg.jvp(np.sin, (x,), ())


def test_second_derivatives_through_every_transformation_agree():
    f = lambda x: np.sum(np.exp(np.sin(x)) * x)
    x = np.array([0.2, -0.4, 1.1])
    H = sg.hessian(f)(x)
    v = np.array([1.0, -1.0, 0.5])
    assert_close(sg.hvp(f, x, v), H @ v, rtol=1e-12)
    assert_close(sg.jvp(sg.grad(f), (x,), (v,))[1], H @ v, rtol=1e-12)
    assert_close(sg.grad(lambda x: np.sum(sg.grad(f)(x) * v))(x), H @ v, rtol=1e-12)
    assert_close(sg.vmap(lambda e: sg.hvp(f, x, e))(np.eye(3)), H, rtol=1e-12)
    assert_close(finite_differences(lambda y: sg.grad(f, backend="numpy")(y), [x], 0, v), H @ v,
                 rtol=1e-6)
