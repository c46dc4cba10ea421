"""Loop rerolling: a traced Python loop compiles as one loop.

Oracle: the same function traced with rerolling off (``sg.config.reroll =
False``), whose graph is the unrolled loop; the numpy interpreter against the
kernel; the assertions on the IR say which blocks became a loop.
"""

from __future__ import annotations

import numpy as np
import pytest

import symgrad as sg
from symgrad.core.ir import subgraphs
from symgrad.passes.reroll import reroll

from oracle import assert_close


@pytest.fixture
def unrolled():
    """Trace with rerolling off inside the block."""
    class Off:
        def __enter__(self):
            sg.config.reroll = False

        def __exit__(self, *exc):
            sg.config.reroll = True
    return Off()


def _loops(graph):
    return [e for e in graph.eqns if e.prim.name == "loop"]


def decay(x, p):
    for _ in range(200):
        x = x + 0.01 * (np.sin(p * x) - x ** 3)
    return np.sum(x * x)


def test_a_200_step_python_loop_is_one_loop(unrolled):
    x, p = np.linspace(-1, 1, 5), 1.7
    graph = sg.jit(decay, backend="numpy").graph(x, p)
    assert [e.prim.name for e in graph.eqns] == ["loop", "proj", "mul", "sum"]
    (loop,) = _loops(graph)
    assert loop.params["size"] == 200 and len(loop.params["body"].eqns) == 6  # one step
    got = sg.grad(decay, argnums=(0, 1), backend="numpy")(x, p)
    with unrolled:
        flat = sg.grad(decay, argnums=(0, 1), backend="numpy")
        assert not _loops(flat.graph(x, p))
        want = flat(x, p)
    assert_close(got[0], want[0], rtol=0, atol=0)
    assert_close(got[1], want[1], rtol=0, atol=0)


def rnn(h0, W, U, b, xs):
    h, loss = h0, 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t] + b)
        loss = loss + np.sum(h ** 2)
    return loss


def _rnn_args(steps=30):
    rng = np.random.default_rng(1)
    return (rng.normal(size=4), rng.normal(size=(4, 4)) / 4, rng.normal(size=(4, 3)),
            rng.normal(size=4), rng.normal(size=(steps, 3)))


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_an_rnn_reads_its_inputs_as_rows_of_xs(backend, unrolled):
    args = _rnn_args()
    g = sg.grad(rnn, argnums=(0, 1, 2, 3, 4), backend=backend)
    (loop,) = _loops(sg.jit(rnn, backend="numpy").graph(*args))
    assert loop.params["n_xs"] == 1 and loop.params["size"] == 29  # the first step differs
    got = g(*args)
    with unrolled:
        want = sg.grad(rnn, argnums=(0, 1, 2, 3, 4), backend="numpy")(*args)
    for k, (a, b) in enumerate(zip(got, want)):
        assert_close(a, b, rtol=1e-13, atol=1e-15, what=f"argument {k}")


def test_values_read_after_the_loop_are_its_stacked_results(unrolled):
    def f(x):
        outs = []
        for _ in range(12):
            x = np.cos(x) * 0.9 + 0.1
            outs.append(x * x)
        return np.sum(np.stack(outs) * np.arange(12.0)[:, None]) + np.sum(outs[3])

    x = np.array([0.2, 0.5])
    graph = sg.jit(f, backend="numpy").graph(x)
    (loop,) = _loops(graph)
    assert len(loop.out.aval.parts) == 2 and loop.params["size"] == 12  # x, and x * x stacked
    got = sg.grad(f, backend="numpy")(x)
    with unrolled:
        want = sg.grad(f, backend="numpy")(x)
    assert_close(got, want, rtol=1e-15, atol=0)
    assert_close(sg.jit(f)(x), f(x), rtol=1e-15)


def test_unequal_blocks_stay_unrolled(unrolled):
    def last_differs(x):
        for t in range(30):
            x = np.sin(x) * 0.5 + x if t < 29 else np.exp(x)
        return np.sum(x)

    def shapes_change(x):
        for _ in range(10):
            x = np.concatenate([x, np.sin(x[-1:])])
        return np.sum(x)

    x = np.array([0.3, 0.7])
    g = sg.jit(last_differs, backend="numpy").graph(x)
    (loop,) = _loops(g)
    assert loop.params["size"] == 29 and "exp" in [e.prim.name for e in g.eqns]
    assert not _loops(sg.jit(shapes_change, backend="numpy").graph(x))
    for f in (last_differs, shapes_change):
        got = sg.grad(f, backend="numpy")(x)
        with unrolled:
            want = sg.grad(f, backend="numpy")(x)
        assert_close(got, want, rtol=1e-15, atol=0)


def test_blocks_of_several_equal_equations():
    def fib(a, b):
        for _ in range(40):
            a, b = b, a + 0.5 * b
        return b

    graph = sg.jit(fib, backend="numpy").graph(1.0, 1.0)
    assert len(_loops(graph)) == 1
    got = sg.grad(fib, argnums=(0, 1), backend="numpy")(0.3, 0.2)
    a, b, = 0.3, 0.2
    da, db = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    for _ in range(40):
        (a, da), (b, db) = (b, db), (a + 0.5 * b, da + 0.5 * db)
    assert_close(got, db, rtol=1e-14)


def test_two_python_loops_are_two_loops():
    def f(x):
        for _ in range(20):
            x = np.sin(x) * 1.1
        y = x
        for _ in range(30):
            y = y * y * 0.5 + 0.2
        return np.sum(y)

    graph = sg.jit(f, backend="numpy").graph(np.ones(2))
    assert [e.params["size"] for e in _loops(graph)] in ([20, 30], [19, 30], [20, 29], [19, 29])


def test_reroll_is_a_pure_pass_that_the_checker_accepts():
    from symgrad.core.check import check
    from symgrad.core.ir import Aval
    from symgrad.numpy_api import trace

    graph, _ = trace(rnn, [Aval((4,)), Aval((4, 4)), Aval((4, 3)), Aval((4,)), Aval((30, 3))],
                     [None] * 5, ["h0", "W", "U", "b", "xs"])
    before = str(graph)
    new = reroll(graph)
    assert str(graph) == before and new is not graph
    check(new)
    (loop,) = _loops(new)
    for _, body in subgraphs(loop):
        check(body)
    assert reroll(new) is new  # nothing left to reroll
