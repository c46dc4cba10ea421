"""Numbers computed from values read from outside enter the kernel as arguments.

A captured array used through an element or a reduction (``x * W[0]``,
``np.sum(x) * np.sum(W)``) gives numbers numpy computes while the function is
traced; they are 0-d consts of the graph, kernel arguments, not literals in
the kernel's source, so a new content of ``W`` retraces (the guards see it) and
reuses the kernel. The oracle is numpy's own arithmetic on the current ``W``
(the gradients here are linear in ``W``'s numbers), and the count of distinct
kernel sources (one source, one compile) or of Numba compiles.
"""

import gc
import os
import tracemalloc

import numpy as np

import symgrad as sg

#: SYMGRAD_FULL=1: the memory test over 1,000 closures (else 200; each costs ~20 ms here)
CLOSURES = 1000 if os.environ.get("SYMGRAD_FULL") == "1" else 200


def _keys(transformed) -> set[str]:
    """The kernel sources (content keys) a transformed function has specialized to."""
    return {spec.source.key for spec in transformed._cache.values()}


def test_new_contents_through_an_element_and_a_sum_share_one_kernel():
    rng = np.random.default_rng(0)
    W = rng.random(4)

    def f(x):
        return np.sum(x * W[0]) + np.sum(x) * np.sum(W) + np.sum(np.sin(x)) * W.max()

    g = sg.grad(f, backend="numpy")
    x = rng.random(4)
    keys = set()
    for step in range(10):
        if step % 2:
            W[:] = rng.random(4)  # in place
        else:
            W = rng.random(4)     # rebound
        want = W[0] + np.sum(W) + np.cos(x) * W.max()  # numpy on the current W
        np.testing.assert_allclose(g(x), want, rtol=1e-14)
        keys |= _keys(g)
    assert len(keys) == 1


def test_numbers_computed_from_literals_and_integers_keep_their_values():
    # np.log(2.0), an np.int64 and a numpy bool are computed once; the values are what
    # numpy gives, whichever way they enter the kernel
    W = np.array([3.0, -1.0])

    def f(x):
        scale = np.log(2.0) * np.argmax(W)   # np.float64 * np.int64
        flag = W[0] > 0                      # np.bool_
        return np.sum(np.where(flag, x ** np.float64(2.0), x) * scale + x ** W[0])

    x = np.array([0.5, 2.0])
    want = np.log(2.0) * 0 * 2 * x + 3.0 * x ** 2.0
    np.testing.assert_allclose(sg.grad(f, backend="numpy")(x), want, rtol=1e-14)
    W[:] = [-2.0, 4.0]
    want = np.log(2.0) * 1 + (-2.0) * x ** -3.0
    np.testing.assert_allclose(sg.grad(f, backend="numpy")(x), want, rtol=1e-14)


def test_a_captured_float_keeps_a_float32_computation_float32():
    c = 0.5  # a Python float is weak in numpy's promotion, as a literal is
    x = np.ones(3, np.float32)
    assert sg.jit(lambda x: x * c, backend="numpy")(x).dtype == (x * c).dtype == np.float32
    d = np.float64(0.5)  # a numpy float64 is not
    assert sg.jit(lambda x: x * d, backend="numpy")(x).dtype == (x * d).dtype == np.float64


def test_a_training_loop_over_weights_in_a_closure_compiles_once():
    rng = np.random.default_rng(1)
    X, y = rng.standard_normal((16, 3)), rng.standard_normal(16)
    params = {"W": rng.standard_normal(3), "scale": np.ones(1)}

    def loss(b):  # the weights come from the closure, through elements and reductions
        W = params["W"]
        return np.mean((X @ W + b[0] * params["scale"][0] - y) ** 2) + 0.1 * np.sum(W * W) * b[0]

    g = sg.grad(loss)
    b = np.array([0.3])
    before = sg.compile_stats()
    for _ in range(10):
        W = params["W"]
        want = 2 * np.mean(X @ W + b[0] - y) + 0.1 * np.sum(W * W)  # numpy on the current W
        np.testing.assert_allclose(g(b), [want], rtol=1e-12)
        params["W"] = W - 0.1 * rng.standard_normal(3)  # a training step's update
    after = sg.compile_stats()
    # (one kernel, compiled or, with a warm SYMGRAD_CACHE_DIR, loaded: not one per step)
    made = sum(after[k] - before[k] for k in ("compiled", "loaded_from_disk"))
    assert made == 1
    assert after["kernels"] - before["kernels"] == 1


def test_memory_stays_flat_over_many_closures_over_changed_arrays():
    rng = np.random.default_rng(2)
    x = rng.random(5)

    def make(W):
        def loss(x):
            return np.sum((x @ W) ** 2) + W[0, 0] * np.sum(x)
        return loss

    def steps(n: int) -> set[str]:
        keys = set()
        for _ in range(n):
            W = rng.random((5, 5))
            g = sg.grad(make(W), backend="numpy")
            np.testing.assert_allclose(g(x), 2 * W @ (x @ W) + W[0, 0], rtol=1e-13)
            keys |= _keys(g)
        return keys

    def objects() -> int:
        gc.collect()
        return len(gc.get_objects())

    window = CLOSURES // 20
    steps(window)  # warm up: caches fill to their bounds
    before = objects()
    keys = steps(CLOSURES - 2 * window)
    grown_objects = objects() - before
    tracemalloc.start()  # (slows each step tenfold: a window of the last steps)
    try:
        start = tracemalloc.get_traced_memory()[0]
        keys |= steps(window)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert len(keys) == 1  # one kernel for all: nothing compiled (or kept) per closure
    assert grown_objects < 200, f"{grown_objects} objects kept over {CLOSURES} closures"
    assert grown < 64 * 1024, f"{grown} bytes kept over the last {window} closures"


def test_a_long_chain_over_captured_constants_splits_into_few_kernels():
    # a loop over a captured array's elements: each element was a literal, so every piece
    # of the split graph had its own source (70 kernels for 1,000 steps); as arguments,
    # pieces of the same structure share one
    from symgrad.backend.program import build

    cs = 1.0 + 0.01 * np.random.default_rng(3).random(300)

    def f(x):
        for c in cs:
            x = np.sin(x) * c
        return np.sum(x)

    g = sg.grad(f, backend="numpy")
    x = np.array([0.1, 0.2])
    slope, y = np.ones(2), x.copy()
    for c in cs:  # the chain rule by hand
        slope, y = slope * np.cos(y) * c, np.sin(y) * c
    np.testing.assert_allclose(g(x), slope, rtol=1e-12)
    program = build(g.graph(x), "f", "chain", backend="numpy", max_eqns=100)  # (as 1,000 steps)
    assert len(program.pieces) >= 10
    assert len({s.key for s in program.sources}) <= 6
