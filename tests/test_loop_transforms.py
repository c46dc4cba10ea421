"""Loops and branches under ``vmap``, ``jacfwd``, ``jacrev``, ``hessian``, ``jvp``, ``hvp``.

Oracles: the same function with its loop written in Python (traced and unrolled,
so it never meets a loop primitive's batching rule), a Python loop over the
batch, central finite differences, SymPy's Hessian of the unrolled expression,
and closed forms (Newton's square root). Most cases run on the numpy backend to
stay fast; a sample runs on Numba (all of them with ``SYMGRAD_FULL=1``).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import sympy

import symgrad as sg
from symgrad.backend.numba import compile as kernels
from symgrad.passes.batching import NotBatchable

from oracle import assert_close, finite_differences, rng_for

FULL = os.environ.get("SYMGRAD_FULL") == "1"
#: the numba sample: one case per family, every case with SYMGRAD_FULL=1
SAMPLE = ["numpy", "numba"]
NUMPY = ["numpy", "numba"] if FULL else ["numpy"]
H = 0.05


def step(i, x, p):
    return x + H * (-x ** 3 + np.sin(p * x))


def euler_loop(x, p=1.3, n=12):
    return np.sum(sg.fori_loop(0, n, lambda i, v: step(i, v, p), x) ** 2)


def euler_python(x, p=1.3, n=12):
    for i in range(n):
        x = step(i, x, p)
    return np.sum(x ** 2)


def path_loop(x):  # a vector output: the state after the loop
    return sg.fori_loop(0, 7, lambda i, v: v + 0.1 * np.sin(v) * np.cos(i * 0.3), x)


def path_python(x):
    for i in range(7):
        x = x + 0.1 * np.sin(x) * np.cos(i * 0.3)
    return x


X0 = np.array([0.3, -0.5, 0.8])


# ---------------------------------------------------------------------------
# vmap against a Python loop over the batch


@pytest.mark.parametrize("backend", SAMPLE)
def test_vmap_of_fori_loop_is_the_python_loop_over_the_batch(backend):
    xs = rng_for("vmap-fori").uniform(-1, 1, (5, 3))
    got = sg.vmap(euler_loop, backend=backend)(xs)
    assert_close(got, [euler_python(x) for x in xs], rtol=1e-13)
    # the parameter batched and the state not: the carry becomes batched in the body
    ps = np.array([0.5, 1.0, 2.0])
    got = sg.vmap(euler_loop, in_axes=(None, 0), backend=backend)(X0, ps)
    assert_close(got, [euler_python(X0, p) for p in ps], rtol=1e-13)


@pytest.mark.parametrize("reverse", [False, True])
def test_vmap_of_scan_with_batched_and_unbatched_xs(reverse):
    rng = rng_for(f"vmap-scan-{reverse}")
    xs, c0 = rng.uniform(-1, 1, (4, 6, 2)), rng.uniform(-1, 1, (4, 2))

    def f(c, xs):
        return sg.scan(lambda c, x: (np.tanh(c + x), c * x), c, xs, reverse=reverse)

    def python(c, xs):
        ys = [None] * len(xs)
        for t in (reversed(range(len(xs))) if reverse else range(len(xs))):
            c, ys[t] = np.tanh(c + xs[t]), c * xs[t]
        return c, np.stack(ys)

    for axes, args in [((0, 0), lambda k: (c0[k], xs[k])), ((None, 0), lambda k: (c0[0], xs[k])),
                       ((0, None), lambda k: (c0[k], xs[0]))]:
        c, ys = sg.vmap(f, in_axes=axes, backend="numpy")(c0 if axes[0] == 0 else c0[0],
                                                          xs if axes[1] == 0 else xs[0])
        want = [python(*args(k)) for k in range(4)]
        assert_close(c, [w[0] for w in want], what=f"carry {axes}")
        assert_close(ys, [w[1] for w in want], what=f"ys {axes}")


def test_vmap_keeps_the_loop_a_loop_and_a_new_trip_count_compiles_nothing():
    g = sg.vmap(euler_loop, in_axes=(0, None, None))
    prims = [e.prim.name for e in g.graph(np.ones((2, 3)), 1.3, 50).eqns]
    assert prims.count("loop") == 1, prims  # not unrolled: one loop equation
    old = sg.config.tiered
    sg.config.update("tiered", False)
    try:
        xs = rng_for("vmap-count").uniform(-1, 1, (4, 3))
        g(xs, 1.3, 10)
        before = kernels.compile_stats()["compiled"]
        got = g(xs, 1.3, 37)
        assert kernels.compile_stats()["compiled"] == before
        h = sg.hessian(cheap_loop)
        stats = kernels.compile_stats()
        h(X0, 10)
        built = kernels.compile_stats()
        assert (built["compiled"] + built["loaded_from_disk"]
                == stats["compiled"] + stats["loaded_from_disk"] + 1)  # one kernel
        hess = h(X0, 23)
        assert kernels.compile_stats()["compiled"] == built["compiled"]
    finally:
        sg.config.update("tiered", old)
    assert_close(got, [euler_python(x, 1.3, 37) for x in xs], rtol=1e-13)
    want = sg.hessian(lambda x: cheap_python(x, 23), backend="numpy")(X0)
    assert_close(hess, want, rtol=1e-11)


def cheap_loop(x, n):
    return np.sum(sg.fori_loop(0, n, lambda i, v: v + 0.1 * np.sin(v), x) ** 2)


def cheap_python(x, n):
    for _ in range(n):
        x = x + 0.1 * np.sin(x)
    return np.sum(x ** 2)


# ---------------------------------------------------------------------------
# Jacobians, Hessians, forward mode


@pytest.mark.parametrize("backend", NUMPY)  # Numba: a 50 s compile, with SYMGRAD_FULL=1
def test_hessian_of_a_fori_loop_ode_integrator_is_the_unrolled_hessian(backend):
    got = sg.hessian(euler_loop, backend=backend)(X0)
    want = sg.hessian(euler_python, backend="numpy")(X0)
    assert_close(got, want, rtol=1e-11, atol=1e-13)
    assert_close(got, got.T, rtol=1e-12, atol=1e-14)
    grad = sg.grad(euler_python, backend="numpy")
    fd = np.stack([finite_differences(lambda x, k=k: grad(x)[k], [X0], 0) for k in range(3)])
    assert_close(got, fd, rtol=1e-6, atol=1e-7)


def test_hessian_of_a_short_loop_against_sympy():
    def body(i, v):
        return v * v * 0.5 + np.sin(v[::-1]) * (i + 1.0)

    def f(x):
        return np.sum(sg.fori_loop(0, 3, body, x) ** 3)

    s = sympy.symbols("x0 x1")
    v = list(s)
    for i in range(3):
        v = [v[k] ** 2 / 2 + sympy.sin(v[1 - k]) * (i + 1) for k in range(2)]
    expr = sum(e ** 3 for e in v)
    x = np.array([0.3, -0.2])
    subs = dict(zip(s, x))
    want = np.array(sympy.hessian(expr, s).evalf(30, subs=subs), dtype=float)
    assert_close(sg.hessian(f, backend="numpy")(x), want, rtol=1e-11)


@pytest.mark.parametrize("backend", NUMPY)
def test_jacobians_of_a_loop_agree_with_the_unrolled_loop(backend):
    x = rng_for("jac-loop").uniform(-1, 1, 4)
    want = sg.jacrev(path_python, backend="numpy")(x)
    assert_close(sg.jacfwd(path_loop, backend=backend)(x), want, rtol=1e-12)
    assert_close(sg.jacrev(path_loop, backend=backend)(x), want, rtol=1e-12)
    fd = np.stack([finite_differences(lambda x, k=k: path_python(x)[k], [x], 0)
                   for k in range(4)])
    assert_close(want, fd, rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("backend", NUMPY)
def test_jvp_and_hvp_through_a_loop(backend):
    rng = rng_for("jvp-loop")
    x, t = rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3)
    out, jt = sg.jvp(path_loop, (x,), (t,), backend=backend)
    assert_close(out, path_python(x), rtol=1e-13)
    assert_close(jt, sg.jacrev(path_python, backend="numpy")(x) @ t, rtol=1e-12)
    hv = sg.hvp(euler_loop, x, t, backend=backend)
    assert_close(hv, sg.hessian(euler_python, backend="numpy")(x) @ t, rtol=1e-11)


def test_jacobian_through_a_checkpointed_loop_and_while_loop():
    x = rng_for("jac-ckpt").uniform(-1, 1, 3)

    def ckpt(x):
        return sg.fori_loop(0, 7, lambda i, v: v + 0.1 * np.sin(v) * np.cos(i * 0.3), x,
                            checkpoint=3)

    want = sg.jacrev(path_python, backend="numpy")(x)
    assert_close(sg.jacrev(ckpt, backend="numpy")(x), want, rtol=1e-12)

    def count_to(x, n):
        return sg.while_loop(lambda c: c[1] < n, lambda c: (c[0] * 1.1 + np.sin(x), c[1] + 1),
                             (x, 0))[0]

    def count_python(x, n):
        c = x
        for _ in range(n):
            c = c * 1.1 + np.sin(x)
        return c

    assert_close(sg.jacrev(count_to, backend="numpy")(x, 5),
                 sg.jacrev(lambda x: count_python(x, 5), backend="numpy")(x), rtol=1e-12)


def test_second_order_through_checkpointed_loops_is_refused():
    # (second order through a while_loop that tapes every carry works:
    # tests/test_loop_nesting.py)
    def ckpt(x):
        return np.sum(sg.fori_loop(0, 5, lambda i, v: v * np.sin(v), x, checkpoint=2))

    def wl(x):
        return np.sum(sg.while_loop(lambda c: c[1] < 3,
                                    lambda c: (c[0] * np.sin(c[0]), c[1] + 1), (x, 0),
                                    checkpoint=2)[0])

    for f in (ckpt, wl):
        with pytest.raises(NotImplementedError, match="second derivatives through"):
            sg.hessian(f, backend="numpy")(X0)
        with pytest.raises(NotImplementedError, match="second derivatives through"):
            sg.hvp(f, X0, X0, backend="numpy")
    with pytest.raises(NotImplementedError, match="second derivatives through"):
        sg.jvp(ckpt, (X0,), (X0,), backend="numpy")


def test_forward_mode_through_a_while_loop():
    # jvp differentiates the pullback in its cotangent only: the taping while is not
    # differentiated again, so forward mode and jacfwd work through while_loop
    t = np.array([0.2, 0.1, -0.4])

    def wl(x):
        return sg.while_loop(lambda c: c[1] < 3, lambda c: (c[0] * np.sin(c[0]), c[1] + 1),
                             (x, 0))[0]

    def python(x):
        for _ in range(3):
            x = x * np.sin(x)
        return x

    out, jt = sg.jvp(wl, (X0,), (t,), backend="numpy")
    jac = sg.jacrev(python, backend="numpy")(X0)
    assert_close(out, python(X0), rtol=1e-14)
    assert_close(jt, jac @ t, rtol=1e-12)
    assert_close(sg.jacfwd(wl, backend="numpy")(X0), jac, rtol=1e-12)


# ---------------------------------------------------------------------------
# per-example gradients through a scan RNN


@pytest.mark.parametrize("backend", SAMPLE)
def test_per_example_gradients_through_a_scan_rnn(backend):
    rng = rng_for("rnn")
    W, U = rng.normal(size=(4, 4)) * 0.5, rng.normal(size=(3, 4)) * 0.5
    XS, Y = rng.normal(size=(5, 6, 3)), rng.normal(size=(5, 4))

    def loss(W, xs, y):
        h, hs = sg.scan(lambda h, x: (np.tanh(h @ W + x @ U), h), np.zeros(4), xs)
        return np.sum((h - y) ** 2) + 0.1 * np.sum(hs ** 2)

    def python(W, xs, y):
        h, total = np.zeros(4), 0.0
        for t in range(xs.shape[0]):
            total = total + 0.1 * np.sum(h ** 2)
            h = np.tanh(h @ W + xs[t] @ U)
        return np.sum((h - y) ** 2) + total

    got = sg.vmap(sg.grad(loss, backend=backend), in_axes=(None, 0, 0), backend=backend)(W, XS, Y)
    want = [sg.grad(python, backend="numpy")(W, XS[k], Y[k]) for k in range(5)]
    assert_close(got, want, rtol=1e-11, atol=1e-13)
    fd = finite_differences(python, [W, XS[2], Y[2]], 0)
    assert_close(got[2], fd, rtol=1e-6, atol=1e-8)


# ---------------------------------------------------------------------------
# cond


def branchy(x, p):
    return sg.cond(p > 0.0, lambda v: np.sin(v) * p, lambda v: v * v - p, x)


def branchy_python(x, p):
    return np.sin(x) * p if p > 0 else x * x - p


@pytest.mark.parametrize("backend", SAMPLE)
def test_cond_with_a_batched_predicate(backend):
    rng = rng_for("cond-batched")
    X, P = rng.uniform(-1, 1, (4, 3)), np.array([1.0, -1.0, 2.0, -0.5])
    got = sg.vmap(branchy, backend=backend)(X, P)
    assert_close(got, [branchy_python(X[k], P[k]) for k in range(4)], rtol=1e-14)
    g = sg.vmap(sg.grad(lambda x, p: np.sum(branchy(x, p)), argnums=(0, 1)), backend=backend)
    gx, gp = g(X, P)
    for k in range(4):
        for j, (got_j, want) in enumerate(((gx, 0), (gp, 1))):
            fd = finite_differences(lambda x, p: np.sum(branchy_python(x, p)), [X[k], P[k]], want)
            assert_close(got_j[k], fd, rtol=1e-7, atol=1e-8, what=f"example {k} arg {j}")


def test_cond_with_an_unbatched_predicate_batches_each_branch():
    X = rng_for("cond-unbatched").uniform(-1, 1, (4, 3))
    for p in (-1.0, 0.7):
        got = sg.vmap(branchy, in_axes=(0, None), backend="numpy")(X, p)
        assert_close(got, [branchy_python(x, p) for x in X], rtol=1e-14)
        graph = sg.vmap(branchy, in_axes=(0, None)).graph(X, p)
        assert [e.prim.name for e in graph.eqns].count("cond") == 1  # one branch runs
    # a branch result that depends on no batched value is broadcast to the batch
    f = sg.vmap(lambda x, p: sg.cond(p > 0.0, lambda v: v * 2.0, lambda v: np.zeros(3), x),
                in_axes=(0, None), backend="numpy")
    assert_close(f(X, -1.0), np.zeros((4, 3)))
    assert_close(f(X, 1.0), 2 * X)


def test_jacobian_and_hessian_of_a_function_with_cond():
    x = np.array([0.4, -0.3, 0.9])
    for p in (0.8, -0.8):
        def f(x, p=p):
            return np.sum(branchy(x, p) ** 2)

        def python(x, p=p):
            return np.sum(branchy_python(x, p) ** 2)

        assert_close(sg.hessian(f, backend="numpy")(x),
                     sg.hessian(python, backend="numpy")(x), rtol=1e-12)
        assert_close(sg.jacfwd(lambda x, p=p: branchy(x, p), backend="numpy")(x),
                     sg.jacrev(lambda x, p=p: branchy_python(x, p), backend="numpy")(x),
                     rtol=1e-12)


# ---------------------------------------------------------------------------
# while_loop


def newton_sqrt(a):
    return sg.while_loop(lambda c: np.abs(c[0] * c[0] - a) > 1e-12,
                         lambda c: (0.5 * (c[0] + a / c[0]), c[1] + 1), (a, 0))


@pytest.mark.parametrize("backend", SAMPLE)
def test_while_loop_with_a_batched_predicate_runs_each_example_to_its_end(backend):
    A = np.array([2.0, 9.0, 100.0, 1.0, 0.25])
    root, steps = sg.vmap(newton_sqrt, backend=backend)(A)
    assert_close(root, np.sqrt(A), rtol=1e-12)
    # each example stops at its own step count (finished examples keep their carry)
    want = [int(sg.jit(lambda a: newton_sqrt(a)[1], backend="numpy")(a)) for a in A]
    assert steps.tolist() == want and len(set(want)) > 2


def test_while_loop_with_an_unbatched_predicate_and_batched_carry():
    X = rng_for("while-unbatched").uniform(-1, 1, (4, 3))

    def f(x, n):
        return sg.while_loop(lambda c: c[1] < n, lambda c: (c[0] * 1.1 + x, c[1] + 1),
                             (np.zeros(3), 0))[0]

    want = [sum(1.1 ** k for k in range(5)) * x for x in X]
    assert_close(sg.vmap(f, in_axes=(0, None), backend="numpy")(X, 5), want, rtol=1e-13)


def test_gradients_of_a_batched_while_loop():
    A = np.array([2.0, 9.0, 100.0, 1.0])
    # grad of the vmap: the masked body is differentiated; at a = 1 no step runs (d/da a = 1)
    g = sg.grad(lambda A: np.sum(sg.vmap(lambda a: newton_sqrt(a)[0])(A)), backend="numpy")
    want = [float(sg.grad(lambda a: newton_sqrt(a)[0], backend="numpy")(a)) for a in A]
    assert_close(g(A), want, rtol=1e-12)
    assert_close(g(A)[:3], 0.5 / np.sqrt(A[:3]), rtol=1e-9)
    # vmap of the grad would need a backward trip count per example: a clear refusal
    with pytest.raises(NotBatchable, match="take sg.grad of the vmap"):
        sg.vmap(sg.grad(lambda a: newton_sqrt(a)[0]), backend="numpy")(A)
    # ... unless the predicate does not depend on the batch
    X = rng_for("while-vmap-grad").uniform(-1, 1, (3, 2))
    f = sg.grad(lambda x: np.sum(sg.while_loop(lambda c: c[1] < 4,
                                               lambda c: (np.sin(c[0]) + x, c[1] + 1),
                                               (x, 0))[0]))
    got = sg.vmap(f, backend="numpy")(X)
    for k in range(3):
        def python(x):
            c = x
            for _ in range(4):
                c = np.sin(c) + x
            return np.sum(c)
        assert_close(got[k], finite_differences(python, [X[k]], 0), rtol=1e-7, atol=1e-9)


# ---------------------------------------------------------------------------
# nesting


def nested(x):
    return sg.fori_loop(0, 3, lambda i, v: sg.scan(lambda c, r: (c * np.cos(r) + r, c),
                                                    v, x)[0], x)


def nested_python(x):
    v = x
    for _ in range(3):
        c = v
        for r in range(x.shape[0]):
            c = c * np.cos(x[r]) + x[r]
        v = c
    return v


def test_a_scan_inside_a_fori_loop_under_vmap_and_hessian():
    X = rng_for("nested").uniform(-1, 1, (4, 3))
    assert_close(sg.vmap(nested, backend="numpy")(X), [nested_python(x) for x in X],
                 rtol=1e-13)
    assert_close(sg.hessian(lambda x: np.sum(nested(x)), backend="numpy")(X[0]),
                 sg.hessian(lambda x: np.sum(nested_python(x)), backend="numpy")(X[0]),
                 rtol=1e-11, atol=1e-13)
    # vmap of vmap: the loop batched twice
    grid = rng_for("nested-2").uniform(-1, 1, (2, 3, 3))
    assert_close(sg.vmap(sg.vmap(nested), backend="numpy")(grid),
                 [[nested_python(x) for x in row] for row in grid], rtol=1e-13)
