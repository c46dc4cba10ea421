"""Nested transformations through loops and branches: ``jacfwd∘jacfwd``,
``jacrev∘jacfwd``, ``jacfwd∘jacrev``, ``jacrev∘jacrev``, ``hessian``, ``grad∘grad``,
``vmap∘jacfwd`` and ``jvp∘jvp`` on ``while_loop``, ``fori_loop`` with a traced trip
count, ``scan`` and ``cond`` (issue 15's review: ``jacfwd(jacfwd(f))`` through a
``while_loop`` raised an internal ShapeError about ``f64[?]`` tapes).

Oracles: the same composition of the function with its loop written in Python
(traced and unrolled, so no loop primitive is met), central differences of the
unrolled gradient, and the closed form of Newton's square root (a trip count that
depends on the input). The numpy backend; one Numba sample per loop kind (all of
them with ``SYMGRAD_FULL=1``).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import symgrad as sg
from symgrad.passes.batching import NotBatchable

from oracle import assert_close, finite_differences

FULL = os.environ.get("SYMGRAD_FULL") == "1"
X0 = np.array([0.3, -0.5, 0.8])
N = 3


def step(v):
    return v * np.sin(v) + 0.2 * v


def python(x):  # the unrolled oracle of every loop below
    for _ in range(N):
        x = step(x)
    return x


def while_version(x):
    return sg.while_loop(lambda c: c[1] < N, lambda c: (step(c[0]), c[1] + 1), (x, 0))[0]


def fori_version(x, n):  # n is traced: the trip count is known when the kernel runs
    return sg.fori_loop(0, n, lambda i, v: step(v), x)


def scan_version(x):
    return sg.scan(lambda c, r: (step(c), r), x, np.arange(float(N)))[0]


def cond_version(x):
    return sg.cond(np.sum(x) > -10.0, python, lambda v: v * v, x)


LOOPS = {"while": (while_version, ()), "fori_traced": (fori_version, (N,)),
         "scan": (scan_version, ()), "cond": (cond_version, ())}


def _compose(name, f, backend):
    first, second = name.split("∘")
    one = {"jacfwd": sg.jacfwd, "jacrev": sg.jacrev}
    return one[first](one[second](f), backend=backend)


NESTINGS = ["jacfwd∘jacfwd", "jacrev∘jacfwd", "jacfwd∘jacrev", "jacrev∘jacrev"]


def _cases():
    for loop in LOOPS:
        for nest in NESTINGS:
            yield pytest.param(loop, nest, "numpy", id=f"{loop}-{nest}-numpy")
        if FULL or nest == "jacfwd∘jacfwd" and loop in ("while", "fori_traced"):
            yield pytest.param(loop, nest, "numba", id=f"{loop}-{nest}-numba")


@pytest.mark.parametrize("loop, nest, backend", list(_cases()))
def test_second_jacobians_through_loops_are_the_unrolled_ones(loop, nest, backend):
    f, extra = LOOPS[loop]
    got = _compose(nest, lambda x: f(x, *extra), backend)(X0)
    want = sg.jacrev(sg.jacrev(python), backend="numpy")(X0)
    assert got.shape == (3, 3, 3)
    assert_close(got, want, rtol=1e-11, atol=1e-13)


def test_the_unrolled_second_jacobian_is_finite_differences_of_the_first():
    jac = sg.jacrev(python, backend="numpy")
    want = sg.jacrev(sg.jacrev(python), backend="numpy")(X0)
    for j in range(3):
        for k in range(3):
            fd = finite_differences(lambda x, j=j, k=k: jac(x)[j, k], [X0], 0)
            assert_close(want[j, k], fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("loop", list(LOOPS))
def test_hessian_grad_grad_vmap_jacfwd_and_jvp_jvp_through_loops(loop):
    f, extra = LOOPS[loop]

    def scalar(x, fn=f):
        return np.sum(fn(x, *extra) ** 2)

    def scalar_python(x):
        return np.sum(python(x) ** 2)

    hess = sg.hessian(scalar_python, backend="numpy")(X0)
    assert_close(sg.hessian(scalar, backend="numpy")(X0), hess, rtol=1e-11, atol=1e-13)
    # grad of a gradient penalty: d/dx sum(grad(f)(x)**2) = 2 H grad
    g = sg.grad(scalar_python, backend="numpy")(X0)
    got = sg.grad(lambda x: np.sum(sg.grad(scalar)(x) ** 2), backend="numpy")(X0)
    assert_close(got, 2 * hess @ g, rtol=1e-11, atol=1e-13)
    # vmap of jacfwd: per-example Jacobians
    X = np.stack([X0, -0.5 * X0, X0[::-1]])
    want = [sg.jacrev(python, backend="numpy")(x) for x in X]
    assert_close(sg.vmap(sg.jacfwd(lambda x: f(x, *extra)), backend="numpy")(X), want,
                 rtol=1e-12, atol=1e-14)
    # jvp of jvp: t' H t
    t = np.array([0.2, -0.1, 0.4])
    _, tht = sg.jvp(lambda x: sg.jvp(scalar, (x,), (t,))[1], (X0,), (t,), backend="numpy")
    assert_close(tht, t @ hess @ t, rtol=1e-11)


def newton_sqrt(a):  # its trip count depends on a
    return sg.while_loop(lambda c: np.abs(c[0] * c[0] - a) > 1e-12,
                         lambda c: (0.5 * (c[0] + a / c[0]), c[1] + 1), (a, 0))[0]


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_second_derivative_of_newtons_square_root(backend):
    for a in (2.0, 9.0, 0.3):
        assert_close(sg.grad(sg.grad(newton_sqrt), backend=backend)(a), -0.25 * a ** -1.5,
                     rtol=1e-9)
    a = np.array([2.0, 9.0])
    got = sg.jacfwd(sg.jacfwd(lambda a: sg.vmap(newton_sqrt)(a)), backend=backend)(a)
    want = np.zeros((2, 2, 2))
    want[[0, 1], [0, 1], [0, 1]] = -0.25 * a ** -1.5
    assert_close(got, want, rtol=1e-9, atol=1e-14)


# ---------------------------------------------------------------------------
# a trip count per example under vmap (issue 15 review: the message pointed at the
# integer argument instead of saying this)


def counted(x, n):
    return sg.fori_loop(0, n, lambda i, v: step(v), x)


def counted_in_while(x, n):  # the rewrite the refusal suggests
    return sg.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, step(c[1])), (0, x))[1]


def python_n(x, n):
    for _ in range(int(n)):
        x = step(x)
    return x


def test_a_trip_count_per_example_under_vmap_is_refused_with_the_fix():
    ns = np.array([1, 3, 5])
    for n in (ns, ns * 1.0):
        with pytest.raises(NotImplementedError, match=r"fori_loop at .*test_loop_nesting.*"
                           r"batched argument 1: a trip count that differs from example to "
                           r"example is not supported.*sg\.while_loop"):
            sg.vmap(counted, backend="numpy")(X0, n)
    # through grad, the bound is the gradient's own argument: the loop's message says it
    with pytest.raises(TypeError, match=r"upper is a traced f64\[\] value.*trip count per "
                       r"example under sg\.vmap is not supported.*sg\.while_loop"):
        sg.vmap(sg.grad(lambda x, n: np.sum(counted(x, n))), backend="numpy")(X0, ns)
    # one count for the batch works
    got = sg.vmap(counted, in_axes=(0, None), backend="numpy")(X0, 4)
    assert_close(got, [python_n(x, 4) for x in X0], rtol=1e-14)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_the_suggested_while_loop_runs_each_example_to_its_own_count(backend):
    ns = np.array([0, 3, 5])
    got = sg.vmap(counted_in_while, backend=backend)(X0, ns)
    assert_close(got, [python_n(x, n) for x, n in zip(X0, ns)], rtol=1e-14)
    # grad of the vmap: each example's derivative at its own count (0 steps: 1)
    g = sg.grad(lambda X, ns: np.sum(sg.vmap(counted_in_while)(X, ns)), backend=backend)
    want = [sg.grad(lambda x, n=n: python_n(x, n), backend="numpy")(x) for x, n in zip(X0, ns)]
    assert_close(g(X0, ns), want, rtol=1e-13)
    assert want[0] == 1.0


def test_what_still_refuses_to_nest_says_so():
    def ckpt_while(x):
        return sg.while_loop(lambda c: c[1] < N, lambda c: (step(c[0]), c[1] + 1), (x, 0),
                             checkpoint=2)[0]

    def ckpt_fori(x, n):
        return sg.fori_loop(0, n, lambda i, v: step(v), x, checkpoint=2)

    for f, extra in ((ckpt_while, ()), (ckpt_fori, (N,))):
        with pytest.raises(NotImplementedError, match="checkpoint="):
            sg.jacfwd(sg.jacfwd(lambda x, f=f, extra=extra: f(x, *extra)), backend="numpy")(X0)
    # per-example derivatives of a loop whose trip count depends on the example: the
    # backward loop would need a trip count per example
    with pytest.raises(NotBatchable, match="take sg.grad of the vmap"):
        sg.vmap(sg.jacfwd(newton_sqrt), backend="numpy")(np.array([2.0, 9.0]))
