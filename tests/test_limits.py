"""Limits that degrade instead of failing (issue 14, section 5): kernels of any rank,
no stray RuntimeWarnings where a result is defined, and closures that differ only in
the numbers they capture sharing one kernel."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import symgrad as sg
from symgrad.backend import program
from symgrad.backend.numba import compile as kernels
from symgrad.core import index_text

# ---------------------------------------------------------------------------
# 21 or more dimensions: Python allows 20 nested blocks, a loop per axis would be 21


def _ranked(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, shape)


RANKS = {
    21: (2, 3) + (1,) * 5 + (2,) + (1,) * 12 + (2,),
    32: (2, 2, 2) + (1,) * 29,
}
if os.environ.get("SYMGRAD_FULL") != "1":  # each rank is a slow Numba compile: 21 in CI
    del RANKS[32]


@pytest.mark.parametrize("ndim", sorted(RANKS))
def test_a_fused_loop_of_any_rank_compiles(ndim):
    shape = RANKS[ndim]
    x = _ranked(shape)
    g = sg.value_and_grad(lambda x: np.sum(np.sin(x) * x + x[::-1] ** 2))
    value, grad = g(x)
    flip = x[::-1]
    np.testing.assert_allclose(value, np.sum(np.sin(x) * x + flip ** 2), rtol=1e-13)
    np.testing.assert_allclose(grad, np.cos(x) * x + np.sin(x) + 2 * x, rtol=1e-13)
    source = g.source(x)
    assert f"for i{ndim} in range(" in source  # one counter over the leading axes


@pytest.mark.parametrize("ndim", sorted(RANKS))
def test_reductions_over_axes_of_any_rank_compile(ndim):
    shape = RANKS[ndim]
    x = _ranked(shape, 1)
    axis = (0, ndim - 1)
    f = sg.value_and_grad(lambda x: np.sum(np.max(x, axis=0) * np.sum(x * x, axis=axis,
                                                                        keepdims=True)))
    value, grad = f(x)
    want_value, want_grad = sg.value_and_grad(f.fun, backend="numpy")(x)
    np.testing.assert_allclose(value, want_value, rtol=1e-13)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-13)
    # the interpreter against finite differences, one element
    h = 1e-6
    idx = (1,) + (0,) * (ndim - 1)
    up, down = x.copy(), x.copy()
    up[idx] += h
    down[idx] -= h
    fd = (f.fun(up) - f.fun(down)) / (2 * h)
    assert grad[idx] == pytest.approx(fd, rel=1e-6, abs=1e-8)


@pytest.mark.skipif(os.environ.get("SYMGRAD_FULL") != "1",
                    reason="a 100 s Numba compile: with SYMGRAD_FULL=1 (rank 21 runs in CI)")
def test_a_stack_of_matrices_of_high_rank():
    a = _ranked((2,) + (1,) * 19 + (2, 2), 2) + 3 * np.eye(2)
    g = sg.grad(lambda a: np.sum(np.linalg.inv(a) @ a @ a))
    np.testing.assert_allclose(g(a), sg.grad(g.fun, backend="numpy")(a), rtol=1e-12)


def test_loop_nests_are_bounded():
    for n in range(1, 40):
        lines, depth = index_text.loop_nest([f"n{k}" for k in range(n)])
        assert depth <= index_text.MAX_NESTED + 1
        assert sum(line.lstrip().startswith("for ") for line in lines) == depth


def test_a_kernel_python_refuses_runs_on_the_interpreter(monkeypatch):
    """The safety net: were a kernel still too deep for Python, its graph would run on the
    interpreter, with one warning, never a SyntaxError."""
    monkeypatch.setattr(index_text, "MAX_NESTED", 64)  # as before: one loop per axis
    x = _ranked(RANKS[21], 3)
    f = sg.grad(lambda x: np.sum(np.tanh(x) * 3.5))
    with pytest.warns(program.KernelSourceWarning, match="nested blocks"):
        grad = f(x)
    np.testing.assert_allclose(grad, 3.5 / np.cosh(x) ** 2, rtol=1e-13)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per kernel
        sg.grad(lambda x: np.sum(np.tanh(x) * 3.5))(x)


# ---------------------------------------------------------------------------
# no RuntimeWarning where the result is defined (nan or inf, as numpy gives)


def _var_ddof(x):
    return np.var(x, ddof=3)


def _std_ddof(x):
    return np.std(x, ddof=5)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("fn", [_var_ddof, _std_ddof])
def test_var_and_std_with_ddof_beyond_n_warn_nothing(fn, backend):
    x = np.array([1.0, 2.0])
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = fn(x)  # numpy: inf, with "Degrees of freedom <= 0"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value, grad = sg.value_and_grad(fn, backend=backend)(x)
        assert sg.jit(fn, backend=backend)(x) == want == value
        assert np.all(np.isnan(grad))
        t = sg.tensor([1.0, 2.0], requires_grad=True)
        out = fn(t)
        out.backward()
        assert float(out) == want and np.all(np.isnan(np.asarray(t.grad)))


def test_expressions_and_finite_differences_warn_nothing():
    x = np.array([1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sg.grad(_var_ddof).expressions(x)
        assert np.all(np.isnan(sg.testing.finite_differences(_var_ddof, [x], 0)))
        # the sum is inf at both ends of every step: nan throughout, and no warning
        fd = sg.testing.finite_differences(lambda x: np.sum(x * x), [np.array([np.inf, 1.0])], 0)
        assert np.all(np.isnan(fd))
        fd = sg.testing.finite_differences(lambda x: x[:1] ** 2, [np.array([2.0, np.inf])], 0,
                                           elements=[0])
        assert fd[0] == pytest.approx(4.0)


@pytest.mark.parametrize("args", [
    ("x*x", "--at", "x=inf"),
    ("exp(x)", "--at", "x=inf"),
    ("sum(x*x)", "--shape", "x=2", "--at", "x=inf,1"),
    ("var(x, ddof=3)", "--shape", "x=2", "--at", "x=1,2"),
])
def test_check_at_inf_warns_nothing(args):
    done = subprocess.run([sys.executable, "-W", "error", "-m", "symgrad", "grad", *args,
                           "--check", "--format", "text"], capture_output=True, text=True,
                          timeout=600)
    assert "Warning" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert "check at the --at point" in done.stdout


# ---------------------------------------------------------------------------
# closures that differ only in captured numbers share one kernel


def _kernels_made(run) -> tuple[int, int]:
    before = kernels.compile_stats()
    run()
    after = kernels.compile_stats()
    return (after["kernels"] - before["kernels"],
            after["compiled"] + after["loaded_from_disk"]
            - before["compiled"] - before["loaded_from_disk"])


def test_twenty_closures_over_different_floats_compile_one_kernel():
    x = np.linspace(-1.0, 1.0, 7)
    scales = [0.3 + 0.17 * k for k in range(20)]

    def run():
        for c in scales:  # default arguments
            g = sg.grad(lambda x, c=c: np.sum(np.sin(x * c) * 1.2345 + c * x))
            np.testing.assert_allclose(g(x), 1.2345 * c * np.cos(c * x) + c, rtol=1e-14)

    assert _kernels_made(run) == (1, 1)


def test_closure_cells_and_globals_share_a_kernel_too():
    x = np.linspace(0.1, 1.0, 5)

    def make(c):
        return sg.value_and_grad(lambda x: np.sum(np.exp(x * c) / c - 0.777 * x))

    def run():
        for k in range(20):
            c = 0.5 + 0.1 * k
            value, g = make(c)(x)
            np.testing.assert_allclose(value, np.sum(np.exp(x * c) / c - 0.777 * x), rtol=1e-14)
            np.testing.assert_allclose(g, np.exp(c * x) - 0.777, rtol=1e-14)
        for k in range(5):
            global SCALE_FOR_TEST
            SCALE_FOR_TEST = 2.0 + k
            np.testing.assert_allclose(GLOBAL_GRAD(x), 3 * SCALE_FOR_TEST * x ** 2, rtol=1e-14)

    assert _kernels_made(run) == (2, 2)


SCALE_FOR_TEST = 2.0
GLOBAL_GRAD = sg.grad(lambda x: np.sum(SCALE_FOR_TEST * x ** 3 + 0.9191))


def test_a_captured_number_is_a_kernel_argument_not_a_literal():
    c = 0.123456789
    g = sg.grad(lambda x: np.sum(x * c))
    source = g.source(np.ones(3))
    assert "0.123456789" not in source
    assert "const" in str(g.graph(np.ones(3)))


def test_captured_numbers_inside_nested_transformations():
    x = np.linspace(0.1, 1.0, 4)
    outs = []

    def run():
        for c in (1.5, 2.5, 3.5):
            inner = sg.grad(lambda y: np.sum(y ** 3 * c))  # noqa: B023 -- called in this iteration
            outer = sg.grad(lambda x: np.sum(inner(x) * x * 0.5))  # noqa: B023 -- called in this iteration
            outs.append(outer(x))

    assert _kernels_made(run)[0] == 1
    for c, got in zip((1.5, 2.5, 3.5), outs):
        np.testing.assert_allclose(got, 4.5 * c * x ** 2, rtol=1e-13)  # d/dx 1.5 c x^3
