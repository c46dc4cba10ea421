"""Loops and branches without unrolling: ``sg.fori_loop``, ``sg.scan``, ``sg.while_loop``,
``sg.cond``.

Oracles: the same computation written as a plain Python loop (traced and unrolled:
to rounding), central finite differences (long trip counts), SymPy (short ones,
through the test table of tests/cases_control.py and below), the numpy
interpreter against the compiled kernel, and closed forms (Newton's square root).
Compile counts come from ``compile_stats()``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import symgrad as sg
from symgrad.backend.numba import compile as kernels
from symgrad.core.ir import INT, subgraphs

from oracle import assert_close, finite_differences, sympy_gradient

BACKENDS = ["numpy", "numba"]
H = 0.01


def euler_loop(x0, p, n):
    def step(i, x):
        return x + H * (-x ** 3 + np.sin(p * x))
    return np.sum(sg.fori_loop(0, n, step, x0) ** 2)


def euler_python(x0, p, n):
    x = x0
    for _ in range(n):
        x = x + H * (-x ** 3 + np.sin(p * x))
    return np.sum(x ** 2)


X0 = np.linspace(0.1, 0.8, 8)


def _loop_eqns(graph):
    return [e for e in graph.eqns if e.prim.subgraphs]


# ---------------------------------------------------------------------------
# each primitive against the unrolled Python loop


@pytest.mark.parametrize("backend", BACKENDS)
def test_fori_loop_gradient_is_the_unrolled_loops(backend):
    got = sg.grad(euler_loop, argnums=(0, 1), backend=backend)(X0, 1.3, 40)
    want = sg.grad(euler_python, argnums=(0, 1), static_argnums=2, backend="numpy")(X0, 1.3, 40)
    assert_close(got[0], want[0], rtol=1e-14, atol=0, what="x0")
    assert_close(got[1], want[1], rtol=1e-14, atol=0, what="p")


def rnn_scan(h0, W, U, xs):
    def cell(h, x):
        h = np.tanh(W @ h + U @ x)
        return h, np.sum(h * h)
    h, losses = sg.scan(cell, h0, xs)
    return np.sum(losses) + np.sum(h)


def rnn_python(h0, W, U, xs):
    h, total = h0, 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t])
        total = total + np.sum(h * h)
    return total + np.sum(h)


def _rnn_args(steps=6, n=4):
    rng = np.random.default_rng(0)
    return (rng.normal(size=n), rng.normal(size=(n, n)) / n, rng.normal(size=(n, 3)) / 3,
            rng.normal(size=(steps, 3)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_scan_gradient_is_the_unrolled_loops(backend):
    args = _rnn_args()
    got = sg.grad(rnn_scan, argnums=(0, 1, 2, 3), backend=backend)(*args)
    want = sg.grad(rnn_python, argnums=(0, 1, 2, 3), backend="numpy")(*args)
    for k, (a, b) in enumerate(zip(got, want)):
        assert_close(a, b, rtol=1e-12, atol=1e-14, what=f"argument {k}")


def test_reverse_scan_is_the_loop_from_the_end():
    xs = np.array([0.3, -0.2, 0.5, 0.1])

    def f(c, xs):
        c, ys = sg.scan(lambda c, x: (np.sin(c) + x, c * x), c, xs, reverse=True)
        return c + np.sum(ys * np.arange(1.0, 5.0))

    def python(c, xs):
        ys = [None] * 4
        for t in range(3, -1, -1):
            c, ys[t] = np.sin(c) + xs[t], c * xs[t]
        return c + np.sum(np.stack(ys) * np.arange(1.0, 5.0))

    assert_close(f(0.7, xs), python(0.7, xs))
    got = sg.grad(f, argnums=(0, 1), backend="numpy")(0.7, xs)
    want = sg.grad(python, argnums=(0, 1), backend="numpy")(0.7, xs)
    assert_close(got[0], want[0], rtol=1e-14, atol=0)
    assert_close(got[1], want[1], rtol=1e-14, atol=0)


def test_cond_gradient_is_the_branch_taken():
    f = lambda x, y: sg.cond(x > y, lambda a, b: a * np.exp(b), lambda a, b: b - a ** 3, x, y)
    g = sg.grad(f, argnums=(0, 1), backend="numpy")
    assert_close(g(2.0, 0.5), (np.exp(0.5), 2.0 * np.exp(0.5)))
    assert_close(g(0.5, 2.0), (-3 * 0.25, 1.0))
    # inside a loop, the branch taken changes from step to step
    h = lambda x: sg.fori_loop(0, 6, lambda i, v: sg.cond(v > 1.0, lambda u: u * 0.5,
                                                          lambda u: u * 3.0, v), x)

    def python(x):
        for _ in range(6):
            x = x * 0.5 if x > 1.0 else x * 3.0
        return x

    for x in (0.2, 0.9, 1.7):
        assert_close(sg.grad(h)(x), finite_differences(python, [x], 0), rtol=1e-8)
        assert_close(sg.jit(h)(x), python(x))


def test_where_and_cond_agree_where_both_apply():
    """sg.where computes both sides, elementwise; sg.cond runs one, on a scalar."""
    f = lambda x: sg.cond(x > 0.0, np.sqrt, lambda v: -v, x)
    g = lambda x: sg.where(x > 0.0, np.sqrt(np.abs(x)), -x)
    for x in (-2.0, 0.5, 3.0):
        assert_close(sg.grad(f)(x), sg.grad(g)(x))


# ---------------------------------------------------------------------------
# finite differences at long trip counts, SymPy at short ones


def test_long_fori_loop_against_finite_differences():
    g = sg.grad(euler_loop, argnums=(0, 1))
    x0, p, n = X0[:3], 1.3, 5000
    got = g(x0, p, n)
    f = lambda x0, p: euler_loop(x0, p, n)  # numpy (plain Python) outside a trace
    assert_close(got[0], finite_differences(f, [x0, p], 0), rtol=1e-6, atol=1e-9)
    assert_close(got[1], finite_differences(f, [x0, p], 1), rtol=1e-6, atol=1e-9)


def test_long_scan_against_finite_differences():
    args = _rnn_args(steps=3000, n=3)
    got = sg.grad(rnn_scan, argnums=(0, 1))(*args)
    for k in (0, 1):
        assert_close(got[k], finite_differences(rnn_scan, list(args), k), rtol=1e-6,
                     atol=1e-8, what=f"argument {k}")


def test_short_loop_against_sympy():
    f = lambda x, p: np.sum(sg.fori_loop(1, 4, lambda i, v: np.sin(p * v) * i + v, x))
    args = [np.array([0.3, -0.4]), 0.7]
    want = sympy_gradient(f, args)
    got = sg.grad(f, argnums=(0, 1))(*args)
    assert_close(got[0], want[0], rtol=1e-13, atol=1e-15)
    assert_close(got[1], want[1], rtol=1e-13, atol=1e-15)


# ---------------------------------------------------------------------------
# while_loop


def newton_sqrt(a):
    step = lambda x: 0.5 * (x + a / x)
    return sg.while_loop(lambda x: np.abs(step(x) - x) > 1e-13 * x, step, a)


@pytest.mark.parametrize("backend", BACKENDS)
def test_while_loop_newton_iteration(backend):
    """The derivative of the converged iteration is that of sqrt, within rounding."""
    g = sg.grad(newton_sqrt, backend=backend)
    for a in (0.25, 2.0, 9.0, 1e4):
        assert_close(sg.jit(newton_sqrt, backend=backend)(a), np.sqrt(a), rtol=1e-15)
        assert_close(g(a), 0.5 / np.sqrt(a), rtol=1e-10)


def doubling(x):
    """x doubled until it exceeds 10: the trip count depends on x."""
    return sg.while_loop(lambda v: v < 10.0, lambda v: v * 2.0 + 0.1 * np.sin(v), x)


def doubling_python(x):
    while x < 10.0:
        x = x * 2.0 + 0.1 * np.sin(x)
    return x


@pytest.mark.parametrize("backend", BACKENDS)
def test_while_loop_with_a_data_dependent_trip_count(backend):
    g = sg.grad(doubling, backend=backend)
    for x in (0.3, 1.1, 4.0, 12.0):  # 5, 4, 2 and 0 steps
        assert_close(sg.jit(doubling, backend=backend)(x), doubling_python(x))
        assert_close(g(x), finite_differences(doubling_python, [x], 0), rtol=1e-7)
    # the unrolled loop, with the trip count the data gives at x = 0.3
    steps = next(k for k in range(20) if _doubled(0.3, k) >= 10.0)
    assert steps == 5
    unrolled = lambda x: _doubled(x, steps)
    assert_close(g(0.3), sg.grad(unrolled, backend="numpy")(0.3), rtol=1e-14)


def _doubled(x, steps):
    for _ in range(steps):
        x = x * 2.0 + 0.1 * np.sin(x)
    return x


def test_while_loop_carrying_a_counter_and_arrays():
    def f(x):
        k, v = sg.while_loop(lambda s: (s[0] < 5) * (np.sum(s[1]) < 50.0) > 0.5,
                             lambda s: (s[0] + 1, s[1] * 1.5 + 1.0), (0, x))
        return np.sum(v) * k

    def python(x):
        k, v = 0, x
        while k < 5 and np.sum(v) < 50.0:
            k, v = k + 1, v * 1.5 + 1.0
        return np.sum(v) * k

    x = np.array([0.5, 1.0, 2.0])
    assert_close(sg.jit(f)(x), python(x))
    assert_close(sg.grad(f)(x), finite_differences(python, [x], 0), rtol=1e-7)


# ---------------------------------------------------------------------------
# zero trips, nesting, second derivatives, checkpoints


@pytest.mark.parametrize("backend", BACKENDS)
def test_zero_trip_loops_pass_the_carry_through(backend):
    x = np.array([0.5, -1.0])
    fori = lambda x, n: np.sum(sg.fori_loop(0, n, lambda i, v: np.sin(v), x) * x)
    assert_close(sg.grad(fori, backend=backend)(x, 0), 2 * x)
    assert_close(sg.grad(fori, backend=backend)(x, -3), 2 * x)  # upper < lower: no step
    scan = lambda x, xs: np.sum(sg.scan(lambda c, r: (c * r, c), x, xs)[0] ** 2)
    assert_close(sg.grad(scan, backend=backend)(x, np.ones((0, 2))), 2 * x)
    never = lambda x: np.sum(sg.while_loop(lambda v: np.sum(v) > 100.0, np.sin, x) ** 2)
    assert_close(sg.grad(never, backend=backend)(x), 2 * x)


def test_scan_inside_fori_loop():
    xs = np.array([0.2, -0.1, 0.4])

    def f(c, w):
        def outer(i, c):
            c, _ = sg.scan(lambda c, x: (np.tanh(w * c + x), None), c, xs)
            return c * 0.9
        return sg.fori_loop(0, 4, outer, c)

    def python(c, w):
        for _ in range(4):
            for x in xs:
                c = np.tanh(w * c + x)
            c = c * 0.9
        return c

    assert_close(sg.jit(f)(0.3, 1.2), python(0.3, 1.2))
    got = sg.grad(f, argnums=(0, 1))(0.3, 1.2)
    want = sg.grad(python, argnums=(0, 1), backend="numpy")(0.3, 1.2)
    assert_close(got, want, rtol=1e-13)


def test_loops_inside_grad_of_grad():
    f = lambda x: sg.fori_loop(0, 3, lambda i, v: v * np.sin(v), x)
    python = lambda x: (lambda a: (lambda b: b * np.sin(b))(a * np.sin(a)))(x * np.sin(x))
    for x in (0.4, 1.3):
        assert_close(sg.grad(sg.grad(f))(x), sg.grad(sg.grad(python))(x), rtol=1e-12)
    scan = lambda c, xs: sg.scan(lambda c, x: (np.sin(c * x), c), c, xs)[0]
    d2 = sg.grad(lambda c, xs: np.sum(sg.grad(scan, argnums=1)(c, xs)))  # d/dc sum(df/dxs)
    xs = np.array([0.5, 1.5, -0.7])

    def first(c):
        return np.sum(sg.grad(scan, argnums=1, backend="numpy")(c, xs))

    assert_close(d2(0.8, xs), finite_differences(first, [0.8], 0), rtol=1e-6)


@pytest.mark.parametrize("k", [2, 3, 7, 100])
def test_checkpointed_loops_give_the_same_gradient(k):
    plain = sg.grad(euler_loop, argnums=(0, 1), backend="numpy")(X0, 1.3, 20)

    def checked(x0, p, n):
        step = lambda i, x: x + H * (-x ** 3 + np.sin(p * x))
        return np.sum(sg.fori_loop(0, n, step, x0, checkpoint=k) ** 2)

    got = sg.grad(checked, argnums=(0, 1), backend="numpy")(X0, 1.3, 20)
    assert_close(got[0], plain[0], rtol=1e-14, atol=0)
    assert_close(got[1], plain[1], rtol=1e-14, atol=0)
    args = _rnn_args(steps=11)

    def rnn_checked(h0, W, U, xs):
        def cell(h, x):
            h = np.tanh(W @ h + U @ x)
            return h, np.sum(h * h)
        h, losses = sg.scan(cell, h0, xs, checkpoint=k, reverse=True)
        return np.sum(losses * np.arange(11.0)) + np.sum(h)

    def rnn_plain(h0, W, U, xs):
        def cell(h, x):
            h = np.tanh(W @ h + U @ x)
            return h, np.sum(h * h)
        h, losses = sg.scan(cell, h0, xs, reverse=True)
        return np.sum(losses * np.arange(11.0)) + np.sum(h)

    a = sg.grad(rnn_checked, argnums=(0, 1, 3), backend="numpy")(*args)
    b = sg.grad(rnn_plain, argnums=(0, 1, 3), backend="numpy")(*args)
    for x, y in zip(a, b):
        assert_close(x, y, rtol=1e-14, atol=0)
    w = sg.grad(lambda x: newton_sqrt_checked(x, k), backend="numpy")(2.0)
    assert_close(w, 0.5 / np.sqrt(2.0), rtol=1e-10)


def newton_sqrt_checked(a, k):
    step = lambda x: 0.5 * (x + a / x)
    return sg.while_loop(lambda x: np.abs(step(x) - x) > 1e-13 * x, step, a, checkpoint=k)


def test_checkpointed_loops_compile_and_agree_with_the_interpreter():
    def f(x0, p, n):
        step = lambda i, x: x + H * (-x ** 3 + np.sin(p * x))
        x = sg.fori_loop(0, n, step, x0, checkpoint=4)
        y = sg.while_loop(lambda v: np.sum(v) < 20.0, lambda v: v * 1.3 + 0.1, x,
                          checkpoint=3)
        return np.sum(x ** 2) + np.sum(np.sin(y))

    for n in (0, 5, 23):
        a = sg.grad(f, argnums=(0, 1))(X0, 1.3, n)
        b = sg.grad(f, argnums=(0, 1), backend="numpy")(X0, 1.3, n)
        assert_close(a[0], b[0], rtol=1e-14, atol=0)
        assert_close(a[1], b[1], rtol=1e-14, atol=0)


# ---------------------------------------------------------------------------
# traced trip counts and compile counts


def test_an_integer_argument_is_traced_as_an_integer():
    g = sg.grad(euler_loop)
    graph = g.graph(X0, 1.3, 10)
    n = graph.inputs[2]
    assert n.dtype == INT and n.shape == ()
    assert "n: i64[]" in str(graph)
    # a float argument is still a float, and is refused as a bound
    with pytest.raises(TypeError, match="bounds must be integers"):
        g(X0, 1.3, 10.0)


def test_a_new_trip_count_compiles_nothing():
    g = sg.grad(euler_loop, argnums=(0, 1))
    first = g(X0, 1.3, 100)
    before = kernels.compile_stats()["compiled"]
    long = g(X0, 1.3, 200_000)
    assert kernels.compile_stats()["compiled"] == before
    assert np.all(np.isfinite(long[0])) and not np.allclose(long[0], first[0])
    assert_close(g(X0, 1.3, 100)[0], first[0], rtol=0, atol=0)


CHILD = """
import json, numpy as np, symgrad as sg
from symgrad.backend.numba import compile
def f(x0, p, n):
    step = lambda i, x: x + 0.01 * (-x ** 3 + np.sin(p * x))
    return np.sum(sg.fori_loop(0, n, step, x0) ** 2)
out = sg.grad(f, argnums=(0, 1))(np.linspace(0.1, 0.8, 8), 1.3, 1000)
print(json.dumps({"out": out[0].tolist(), **compile.compile_stats()}))
"""


def test_a_fresh_process_with_a_warm_cache_compiles_nothing(tmp_path):
    env = {**os.environ, "SYMGRAD_CACHE_DIR": str(tmp_path)}
    env.pop("NUMBA_CACHE_DIR", None)
    runs = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    assert runs[0]["compiled"] >= 1
    assert runs[1]["compiled"] == 0 and runs[1]["loaded_from_disk"] >= 1
    assert runs[0]["out"] == runs[1]["out"]


# ---------------------------------------------------------------------------
# what is traced, printed and generated


def test_the_body_is_traced_once_and_the_graph_has_one_loop():
    calls = []

    def body(i, x):
        calls.append(i)
        return x * 1.01

    g = sg.grad(lambda x, n: sg.fori_loop(0, n, body, x), backend="numpy")
    assert_close(g(1.0, 50), 1.01 ** 50)
    assert len(calls) == 1
    # a linear body's adjoint reads no carry: no tape, no forward loop, only the way back
    assert [e.params["reverse"] for e in _loop_eqns(g.graph(1.0, 50))] == [True]
    h = sg.grad(lambda x, n: sg.fori_loop(0, n, lambda i, v: np.sin(v) + v, x))
    loops = _loop_eqns(h.graph(1.0, 50))
    assert [e.params["reverse"] for e in loops] == [False, True]  # forward once, then back
    assert loops[0].params["tape"] == 1


def test_graph_and_source_show_a_readable_loop():
    g = sg.grad(euler_loop)
    text = str(g.graph(X0, 1.3, 10))
    assert "loop(0, n, x0, p, body=step" in text
    assert "    step(i: i64[], x: f64[n0" not in text  # sizes are numbers in the IR
    assert "\n    step(i: i64[], x: f64[8], p_1: f64[]) {" in text
    source = g.source(X0, 1.3, 10)
    assert "for i in range(n):" in source
    assert "for i_1 in range(n - 1, -1, -1):" in source
    assert "# grad of:" in source.split("for i_1 in range")[1]  # the adjoint body's comments
    compile(source, "kernel", "exec")  # valid Python


def test_closures_and_arrays_read_by_the_body_are_operands():
    W = np.array([[0.5, -0.2], [0.1, 0.3]])

    def f(x, p):
        return np.sum(sg.fori_loop(0, 5, lambda i, v: np.tanh(W @ v * p), x))

    def python(x, p):
        for _ in range(5):
            x = np.tanh(W @ x * p)
        return np.sum(x)

    x = np.array([0.3, -0.6])
    got = sg.grad(f, argnums=(0, 1))(x, 1.1)
    want = sg.grad(python, argnums=(0, 1), backend="numpy")(x, 1.1)
    assert_close(got[0], want[0], rtol=1e-14)
    assert_close(got[1], want[1], rtol=1e-14)
    graph = sg.jit(f, backend="numpy").graph(x, 1.1)
    (loop,) = _loop_eqns(graph)
    assert not loop.params["body"].consts and len(loop.inputs) == 2 + 1 + 2  # bounds, x, W, p
    W[0, 0] = 5.0  # the captured array is read at call time
    assert_close(sg.jit(f)(x, 1.1), python(x, 1.1))


def test_pytree_carries_and_xs():
    def f(params, xs):
        def cell(c, x):
            return {"h": np.tanh(c["h"] * params["w"] + x["u"]), "n": c["n"] + 1}, c["h"]
        c, hs = sg.scan(cell, {"h": 0.5, "n": 0}, {"u": xs})
        return c["h"] * c["n"] + np.sum(hs)

    def python(params, xs):
        h, n, total = 0.5, 0, 0.0
        for x in xs:
            total, h, n = total + h, np.tanh(h * params["w"] + x), n + 1
        return h * n + total

    xs = np.array([0.1, 0.2, -0.3])
    assert_close(sg.jit(f)({"w": 1.5}, xs), python({"w": 1.5}, xs))
    got = sg.grad(f)({"w": 1.5}, xs)
    assert_close(got["w"], finite_differences(lambda w: python({"w": w}, xs), [1.5], 0),
                 rtol=1e-7)


def test_outside_a_trace_the_loops_are_plain_python():
    assert sg.fori_loop(0, 3, lambda i, v: v + i, 10) == 13
    c, ys = sg.scan(lambda c, x: (c + x, c * x), 1.0, np.array([1.0, 2.0]))
    assert c == 4.0 and np.array_equal(ys, [1.0, 4.0])
    assert sg.while_loop(lambda v: v < 5, lambda v: v + 2, 0) == 6
    assert sg.cond(True, lambda a: a + 1, lambda a: a - 1, 1) == 2
    x = sg.Tensor([1.0, 2.0]).requires_grad_()  # the Tensor API keeps running Python loops
    sg.fori_loop(0, 3, lambda i, v: v * v, x).sum().backward()
    assert_close(x.grad.numpy(), 8 * np.array([1.0, 2.0]) ** 7)


def test_errors_name_the_problem_and_the_fix():
    with pytest.raises(TypeError, match="keeps its shape and dtype"):
        sg.jit(lambda x: sg.fori_loop(0, 3, lambda i, v: np.stack([v, v]), x))(1.0)
    with pytest.raises(TypeError, match=r"start a float carry from a float such as 0\.0"):
        sg.jit(lambda x: sg.fori_loop(0, 3, lambda i, v: v + x, 0))(1.0)
    with pytest.raises(TypeError, match="structure"):
        sg.jit(lambda x: sg.fori_loop(0, 3, lambda i, v: (v, v), x))(1.0)
    with pytest.raises(TypeError, match="both must return the same shapes"):
        sg.jit(lambda x: sg.cond(x > 0, lambda v: v, lambda v: np.stack([v, v]), x))(1.0)
    with pytest.raises(sg.TracerBoolConversionError, match=r"sg\.cond.*sg\.while_loop"):
        sg.jit(lambda x: x if x > 0 else -x)(1.0)


def test_the_graph_held_by_a_loop_is_checked_and_closed():
    from symgrad.core.check import check

    graph = sg.grad(euler_loop).graph(X0, 1.3, 10)
    check(graph)
    for e in _loop_eqns(graph):
        for _, body in subgraphs(e):
            assert not body.consts
            check(body)
