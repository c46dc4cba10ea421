"""Fused loops and size-generic kernels (issue 7): what the kernel allocates, how many
loops it runs, that a new length compiles nothing, and that every fused read-through
(slices, unslices, broadcasts, recomputed values) gives the interpreter's result."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symgrad as sg
from symgrad.backend.numba import compile as kernels

from oracle import assert_close, rng_for


def seed(x):
    return np.mean(3 * (x + 2) ** 2)


def rosenbrock(x):
    return np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def logistic(w, X, y):
    return np.mean(np.logaddexp(0.0, -y * (X @ w)))


def mlp(W1, b1, W2, b2, X, Y):
    h = np.tanh(X @ W1 + b1)
    return -np.mean(np.sum(Y * sg.log_softmax(h @ W2 + b2, axis=1), axis=1))


def spread(x, y):
    outer = np.tanh(x[:, None] * y[None, :]) ** 2
    return np.sum(np.sum(outer, axis=0) * y) + np.mean(x.reshape(-1, 1) - y) + np.var(x, ddof=1)


def shifts(x):
    return (np.sum(x[::-1] * x) + np.sum(np.roll(x, 2) * x) + np.sum(np.diff(x) ** 2)
            + np.sum(np.cumsum(x) * np.concatenate([x[1:], x[:1]])))


def strided(x):
    return np.sum(np.exp(x[::2, 1:]) * x[1::2, :-1]) + np.sum(x[::-1, ::3] ** 2)


def _args(name, n):
    rng = rng_for(f"fusion/{name}/{n}")
    return {
        "seed": lambda: (rng.uniform(-1, 1, n),),
        "rosenbrock": lambda: (rng.uniform(-1, 1, n),),
        "logistic": lambda: (rng.uniform(-1, 1, 5), rng.uniform(-1, 1, (n, 5)),
                             np.sign(rng.uniform(-1, 1, n))),
        "mlp": lambda: (rng.uniform(-1, 1, (4, 6)), rng.uniform(-1, 1, 6),
                        rng.uniform(-1, 1, (6, 3)), rng.uniform(-1, 1, 3),
                        rng.uniform(-1, 1, (n, 4)), np.eye(3)[rng.integers(0, 3, n)]),
        "spread": lambda: (rng.uniform(-1, 1, n), rng.uniform(-1, 1, n + 3)),
        "shifts": lambda: (rng.uniform(-1, 1, n),),
        "strided": lambda: (rng.uniform(-1, 1, (2 * n, n + 2)),),
    }[name]()


PROBLEMS = {"seed": (seed, 0), "rosenbrock": (rosenbrock, 0), "logistic": (logistic, 0),
            "mlp": (mlp, (0, 1, 2, 3)), "spread": (spread, (0, 1)), "shifts": (shifts, 0),
            "strided": (strided, 0)}


@pytest.mark.parametrize("name", sorted(set(PROBLEMS) - {"strided"}))
def test_one_kernel_source_for_every_length(name):
    fun, argnums = PROBLEMS[name]
    g = sg.grad(fun, argnums=argnums)
    keys = {g.source(*_args(name, n)).split()[3] for n in (7, 9, 13)}
    assert len(keys) == 1, f"{name}: the kernel source depends on the length"


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_fused_kernels_agree_with_the_interpreter(name):
    fun, argnums = PROBLEMS[name]
    compiled = sg.grad(fun, argnums=argnums)
    interpreted = sg.grad(fun, argnums=argnums, backend="numpy")
    for n in (5, 8):
        args = _args(name, n)
        got, want = compiled(*args), interpreted(*args)
        for a, b in zip(*((g,) if isinstance(argnums, int) else g for g in (got, want))):
            assert_close(a, b, rtol=1e-12, atol=1e-14)


def test_a_new_length_compiles_nothing():
    g = sg.grad(rosenbrock)
    g(np.linspace(-1, 1, 7))  # compiles (or loads) the kernel
    before = kernels.compile_stats()["compiled"]
    for n in (8, 20, 1001):
        x = np.linspace(-1, 1, n)
        assert_close(g(x), sg.grad(rosenbrock, backend="numpy")(x), rtol=1e-13)
    assert kernels.compile_stats()["compiled"] == before


def _allocations(source: str) -> int:
    return sum(source.count(f) for f in ("np.empty(", "np.zeros(", "np.full(", ".copy()"))


def test_the_seed_gradient_is_one_loop_that_allocates_only_its_result():
    source = sg.grad(seed).source(np.ones(4))
    assert source.count("for i0 in range(n0):") == 1
    assert _allocations(source) == 1 and "grad_x = np.empty((n0,))" in source


def test_rosenbrock_reads_its_slices_through_and_allocates_only_its_result():
    source = sg.grad(rosenbrock).source(np.ones(6))
    assert source.count("for i0 in range(") == 1
    assert _allocations(source) == 1
    assert "x[i0 + 1]" in source and "x[i0 - 1 + 1]" in source  # x[1:] read at i0 and i0-1


def rosenbrock_hvp(x, v):
    """H(x)·v of :func:`rosenbrock` by hand (H is tridiagonal)."""
    hv = np.zeros_like(x)
    a, b, va, vb = x[:-1], x[1:], v[:-1], v[1:]
    hv[:-1] = (1200 * a * a - 400 * b + 2) * va - 400 * a * vb
    hv[1:] += 200 * vb - 400 * a * va
    return hv


@pytest.mark.parametrize("how", ["reverse-over-reverse", "forward-over-reverse"])
def test_rosenbrock_hvp_is_one_loop_that_allocates_only_its_result(how):
    # the second derivative's values at the shifted index are computed again, not stored
    # (a literal exponent's VJP records no dead where, and element moves cost no budget)
    if how == "reverse-over-reverse":
        f = sg.grad(lambda x, v: np.sum(sg.grad(rosenbrock)(x) * v))
    else:
        f = sg.jit(lambda x, v: sg.jvp(sg.grad(rosenbrock), (x,), (v,))[1])
    x, v = np.linspace(-1.5, 2.0, 9), np.cos(np.arange(9.0))
    source = f.source(x, v)
    assert source.count("for i0 in range(") == 1 and _allocations(source) == 1, source
    assert "** " not in source and "+ 0.0" not in source, source
    assert_close(f(x, v), rosenbrock_hvp(x, v), rtol=1e-13)
    assert_close(sg.hvp(rosenbrock, x, v), rosenbrock_hvp(x, v), rtol=1e-13)


def test_value_and_grad_accumulates_the_value_in_the_same_loop():
    source = sg.value_and_grad(seed).source(np.ones(4))
    assert source.count("for i0 in range(n0):") == 1
    assert "+= " in source and "/= n0" in source


def test_a_value_used_after_its_loop_is_stored_once():
    # np.exp(x) is not cheap: the gradient reads it back rather than computing it again
    g = sg.grad(lambda x: np.sum(np.exp(x)) * np.sum(np.exp(x) * x))
    source = g.source(np.ones(3))
    assert source.count("vm.exp(") == 1
    x = np.linspace(-1, 1, 9)
    assert_close(g(x), sg.grad(g.fun, backend="numpy")(x), rtol=1e-13)


def test_a_choice_loads_its_operands_before_it_chooses():
    # LLVM selects between two scalars without a branch, but an element read inside the
    # choice stays a branch, which a random mask (ReLU's, max pooling's) mispredicts
    def choose(x, y, c):
        return np.where(c > 0.5, x, y) * 2.0

    rng = rng_for("fusion/choice")
    x, y, c = rng.standard_normal((6, 1)), rng.standard_normal((6, 5)), rng.uniform(0, 1, (6, 5))
    f = sg.jit(choose)
    source = f.source(x, y, c)
    assert "x_1 = x[i0, 0]" in source and "y_1 = y[i0, i1]" in source, source
    assert " = x_1 if a else y_1" in source, source
    assert_close(f(x, y, c), np.where(c > 0.5, x, y) * 2.0, rtol=0, atol=0)
    g = sg.grad(lambda x, y, c: np.sum(choose(x, y, c) * y), argnums=(0, 1))
    for got, want in zip(g(x, y, c), sg.grad(g.fun, argnums=(0, 1), backend="numpy")(x, y, c)):
        assert_close(got, want, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_transposed_first_operand_is_multiplied_by_numpys_gemm(dtype):
    # symgrad.backend.blas: a weight gradient g.T @ x calls numpy's own gemm (Numba's
    # np.dot calls scipy's OpenBLAS), so the kernel's product is numpy's, bit for bit;
    # a parameter named bl (the module's name in kernels) takes another name
    from symgrad.backend import blas

    def product(bl, b):
        return bl.T @ b

    f = sg.jit(product)
    rng = rng_for(f"fusion/gemm/{np.dtype(dtype).name}")
    a, b = (rng.standard_normal(s).astype(dtype) for s in ((41, 7), (41, 13)))
    source = f.source(a, b)
    assert (f"= bl.{'s' if dtype == np.float32 else 'd'}dot_tn(" in source) == \
        blas.AVAILABLE, source
    for x, y in ((a, b), (a[:0], b[:0]), (a[:, :0], b), (a, b[:, :0])):
        got = f(x, y)
        assert got.dtype == dtype and got.shape == (x.shape[1], y.shape[1])
        assert np.array_equal(got.view(np.uint8), np.dot(x.T, y).view(np.uint8))


def test_an_export_multiplies_a_widened_operand_by_numpys_dot(tmp_path):
    # export writes numpy's gemm (a symbol of this process) as np.dot, also where the
    # second operand is converted first (float32 to the float64 result): the module read
    # bl, which it does not define (NotImplementedError)
    def product(a, b):
        return a.T @ b

    rng = rng_for("fusion/gemm/widened")
    a, b = rng.standard_normal((9, 4)), rng.standard_normal((9, 5)).astype(np.float32)
    path = sg.export(sg.jit(product), (a, b), tmp_path / "product.py")
    assert "bl." not in path.read_text()
    spec = importlib.util.spec_from_file_location("exported_product", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert_close(module.product(a, b), np.dot(a.T, b.astype(np.float64)), rtol=1e-14)


def test_long_cheap_chains_stay_within_the_recompute_budget():
    def chain(x):
        y = x
        for k in range(40):
            y = y * 1.01 + 0.5 * k
        return np.sum(y ** 2) + np.sum(y[1:] * y[:-1])

    g = sg.grad(chain)
    x = np.linspace(-1, 1, 12)
    assert_close(g(x), sg.grad(chain, backend="numpy")(x), rtol=1e-12)
    assert g.source(x).count("\n") < 600  # the chain is not copied once per reader


def test_a_chain_of_rolls_stays_small():
    # np.roll is a concatenate of two slices: reading one through reads both, so a chain of
    # them doubles the code at each step unless each concatenate costs budget
    def rolls(x):
        y = np.sin(x)
        for i in range(12):
            y = np.roll(y, 1 + i % 5)
        return np.sum(y * x)

    g = sg.grad(rolls)
    x = np.linspace(-1, 1, 40)
    assert g.source(x).count("\n") < 1000
    assert_close(g(x), sg.grad(rolls, backend="numpy")(x), rtol=1e-13)


# a chain of element moves, each read through by index arithmetic in the fused loop
MOVES = {
    "slice": lambda x, a, b, c: x[a:b:c] if len(x[a:b:c]) else x,
    "flip": lambda x, a, b, c: x[::-1],
    "diff": lambda x, a, b, c: np.diff(x, prepend=0.5),
    "pad": lambda x, a, b, c: np.concatenate([x[:1], x, x[-1:]]),
    "roll": lambda x, a, b, c: np.roll(x, a),
    "square": lambda x, a, b, c: x * x + 0.25 * x,
    "shift": lambda x, a, b, c: x[1:] - x[:-1] if len(x) > 1 else x,
}


@settings(max_examples=12, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.sampled_from(sorted(MOVES)), st.integers(-4, 4),
                          st.integers(-4, 4), st.sampled_from([1, 2, -1, -2, 3])),
                min_size=1, max_size=5))
def test_chains_of_element_moves_agree_with_the_interpreter(chain):
    def f(x):
        y = x
        for name, a, b, c in chain:
            y = MOVES[name](y, a, b, c)
        return np.sum(y * np.arange(1.0, 1.0 + len(y)))

    x = np.linspace(-1.0, 1.0, 9)
    assert_close(sg.grad(f)(x), sg.grad(f, backend="numpy")(x), rtol=1e-13, atol=1e-14)


def test_names_a_kernel_calls_cannot_be_taken_by_arguments_or_the_function():
    # found by review: a parameter named range or float shadowed the kernel's loops and
    # counts; a function named np shadowed numpy in its own module
    def f(x, range, float):
        return np.mean(x * range) + np.sum(x[1:] * float[:-1])

    args = (np.linspace(-1, 1, 5), np.linspace(0, 1, 5), np.linspace(1, 2, 5))
    assert_close(sg.grad(f, argnums=(0, 1, 2))(*args)[0],
                 sg.grad(f, argnums=(0, 1, 2), backend="numpy")(*args)[0], rtol=1e-14)
    namespace = {"numpy": np}
    exec("def np(x):\n    return numpy.sum(numpy.exp(x) * x)", namespace)
    x = np.arange(3.0)
    assert_close(sg.grad(namespace["np"])(x), np.exp(x) * (1 + x), rtol=1e-14)


def test_independent_work_of_another_shape_is_fused_in_a_loop_of_its_own():
    def f(x, y):
        return np.sum(np.exp(x) * x) + np.sum(np.tanh(y) * y * 3.0 + y)

    source = sg.grad(f, argnums=(0, 1)).source(np.ones(5), np.ones(7))
    assert source.count("for i0 in range(") == 2 and _allocations(source) == 2
    x, y = np.linspace(-1, 1, 5), np.linspace(-2, 2, 7)
    for a, b in zip(sg.grad(f, argnums=(0, 1))(x, y),
                    sg.grad(f, argnums=(0, 1), backend="numpy")(x, y)):
        assert_close(a, b, rtol=1e-14)
