"""Tiered execution, compile logging and ``sg.compile_stats()``.

The rest of the suite compiles first (conftest.py sets ``SYMGRAD_TIERED=0``);
here tiering is switched on, with kernels that cannot be on disk yet (each test
builds a function whose kernel source is new to the private cache). Oracles:
the compiled kernel against the interpreter's first answers, and the counters.
"""

from __future__ import annotations

import logging
import re
import uuid

import numpy as np
import pytest

import symgrad as sg
from symgrad.backend.numba import worker
from symgrad.backend.numba.tiered import Tiered

from oracle import assert_close


@pytest.fixture
def tiered(monkeypatch):
    monkeypatch.setattr(sg.config, "tiered", True)
    monkeypatch.setattr(sg.config, "tiered_budget", 30.0)


def _fresh(scale: float):
    """A function whose kernel no earlier test compiled (a constant of its own)."""
    def f(x, n):
        return np.sum(sg.fori_loop(0, n, lambda i, v: np.sin(v) * scale + v, x) ** 2)
    return f


def test_first_calls_interpret_while_the_kernel_compiles(tiered):
    f = _fresh(0.25 + uuid.uuid4().int % 1000 / 1e6)
    g = sg.grad(f)
    x = np.array([0.1, 0.4, -0.3])
    before = sg.compile_stats()
    first = g(x, 20)
    spec = g._prepare((x, 20), None)[0]
    assert isinstance(spec.kernel, Tiered)
    assert sg.compile_stats()["interpreted_calls"] == before["interpreted_calls"] + 1
    assert spec.kernel.wait(timeout=600)  # the background compile finishes
    second = g(x, 20)
    after = sg.compile_stats()
    assert after["compiled"] >= before["compiled"] + 1
    assert after["interpreted_calls"] == before["interpreted_calls"] + 1  # not again
    assert_close(second, first, rtol=1e-14, atol=0)  # the tiers agree
    want = sg.grad(f, backend="numpy")(x, 20)
    assert_close(first, want, rtol=0, atol=0)  # the first answer is the interpreter's
    for _ in range(3):  # later calls: the kernel, through the fast path once it is warm
        assert_close(g(x, 20), second, rtol=0, atol=0)


def test_a_call_over_the_budget_waits_for_the_kernel(monkeypatch):
    monkeypatch.setattr(sg.config, "tiered", True)
    monkeypatch.setattr(sg.config, "tiered_budget", 0.0)  # any interpretation is too long
    f = _fresh(0.5 + uuid.uuid4().int % 1000 / 1e6)
    g = sg.grad(f)
    before = sg.compile_stats()["interpreted_calls"]
    got = g(np.array([0.2, 0.3]), 50)
    assert sg.compile_stats()["interpreted_calls"] == before
    assert_close(got, sg.grad(f, backend="numpy")(np.array([0.2, 0.3]), 50), rtol=1e-14)


def test_a_loop_over_the_budget_waits_for_the_worker_and_never_compiles_itself(monkeypatch):
    monkeypatch.setattr(sg.config, "tiered", True)
    monkeypatch.setattr(sg.config, "tiered_budget", 0.0)
    f = _fresh(0.5 + uuid.uuid4().int % 1000 / 1e6)
    before = sg.compile_stats()
    got = sg.grad(f)(np.array([0.2, 0.3]), 50)
    after = sg.compile_stats()
    assert after["compiled_in_workers"] == before["compiled_in_workers"] + 1
    assert after["compiled"] == before["compiled"] + 1  # that one: none on this thread
    assert_close(got, sg.grad(f, backend="numpy")(np.array([0.2, 0.3]), 50), rtol=1e-14)


def test_a_graph_without_loops_is_interpreted_whatever_the_budget(monkeypatch):
    monkeypatch.setattr(sg.config, "tiered", True)
    monkeypatch.setattr(sg.config, "tiered_budget", 0.0)
    k = 3 + uuid.uuid4().int % 100_000  # a literal exponent: a kernel source new to the cache
    g = sg.grad(lambda x: np.sum(np.tanh(x) ** k))
    x = np.array([0.2, 0.3, -0.1])
    before = sg.compile_stats()
    got = g(x)
    after = sg.compile_stats()
    assert after["interpreted_calls"] == before["interpreted_calls"] + 1
    assert after["compiled"] - after["compiled_in_workers"] \
        == before["compiled"] - before["compiled_in_workers"]  # none on this thread
    want = k * np.tanh(x) ** (k - 1) / np.cosh(x) ** 2
    assert_close(got, want, rtol=1e-14)
    assert worker.wait(timeout=600)  # its compile ends here, not in the next test's counts


def test_a_graph_calling_python_runs_it_once_per_call(monkeypatch):
    # tiers ran the user's Python again: the background thread runs a split graph's chain
    # once to compile it, and an interpretation over the budget was redone by the kernel
    # (a module's backward hook fired twice in a training step); such graphs compile first
    monkeypatch.setattr(sg.config, "tiered", True)
    monkeypatch.setattr(sg.config, "tiered_budget", 0.0)  # any loop is too long
    calls = []
    scale = 0.5 + uuid.uuid4().int % 1000 / 1e6

    def host(x):
        calls.append(1)
        return np.tanh(x)

    def f(x):
        y = sg.pure_callback(host, sg.ShapeDtypeStruct(x.shape, np.float64), x,
                             vjp=lambda ct, x: (ct * (1.0 - np.tanh(x) ** 2),))
        return np.sum(sg.fori_loop(0, 30, lambda i, v: np.sin(v) * scale + v, y) ** 2)

    x = np.array([0.2, 0.3])
    got = sg.grad(f)(x)
    assert len(calls) == 1
    assert_close(got, sg.grad(f, backend="numpy")(x), rtol=1e-14)
    monkeypatch.setattr(sg.config, "tiered_budget", 30.0)  # (the background chain too)
    g = sg.grad(lambda x: f(x) * 2.0)
    before = len(calls)
    g(x)
    assert worker.wait(timeout=600)
    assert len(calls) == before + 1


def test_the_worker_compiles_kernels_that_call_blas(tiered):
    # the worker once put symgrad's own directory first on its path, where the
    # ``symgrad.scipy`` subpackage shadowed scipy: every kernel with a matrix product
    # failed there ("scipy 0.16+ is required"), so no process ever compiled one
    k = 3 + uuid.uuid4().int % 100_000
    a = np.array([[0.5, -1.0], [2.0, 0.25], [1.0, 1.0]])
    g = sg.grad(lambda w: np.sum(np.tanh(a @ w) ** k))
    w = np.array([0.3, -0.2])
    before = sg.compile_stats()
    g(w)
    spec = g._prepare((w,), None)[0]
    assert spec.kernel.wait(timeout=600)  # done, not failed
    assert sg.compile_stats()["compiled_in_workers"] == before["compiled_in_workers"] + 1
    t = np.tanh(a @ w)
    assert_close(g(w), a.T @ (k * t ** (k - 1) * (1 - t * t)), rtol=1e-13)


def test_compile_first_when_tiering_is_off(monkeypatch):
    monkeypatch.setattr(sg.config, "tiered", False)
    f = _fresh(0.75 + uuid.uuid4().int % 1000 / 1e6)
    g = sg.grad(f)
    before = sg.compile_stats()
    g(np.array([0.2, 0.3]), 5)
    after = sg.compile_stats()
    assert after["interpreted_calls"] == before["interpreted_calls"]
    assert after["compiled"] == before["compiled"] + 1
    assert after["compile_seconds"] > before["compile_seconds"]
    assert not isinstance(g._prepare((np.array([0.2, 0.3]), 5), None)[0].kernel, Tiered)


def test_compiles_are_logged_with_their_size_and_time(monkeypatch, caplog):
    monkeypatch.setattr(sg.config, "tiered", False)
    monkeypatch.setattr(sg.config, "log_compiles", True)
    f = _fresh(1.25 + uuid.uuid4().int % 1000 / 1e6)
    with caplog.at_level(logging.WARNING, logger="symgrad"):
        sg.grad(f)(np.array([0.2, 0.3]), 5)
    start, end = [r.getMessage() for r in caplog.records if r.name == "symgrad"]
    assert start.startswith("symgrad: compiling k_") and start.endswith("...")
    message = end
    assert message.startswith("symgrad: compiled k_")
    assert "grad of f with respect to x" in message
    assert re.search(r"\): \d+ lines, [2-9] loops, in \d+\.\d\d s$", message), message


def test_config_names_its_settings():
    assert {"tiered", "tiered_budget", "log_compiles", "reroll"} <= set(vars(sg.config))
    with pytest.raises(AttributeError, match="no setting 'tierd'"):
        sg.config.update("tierd", True)


def test_deterministic_algorithms_give_the_kernels_bits_after_a_first_interpreted_call(
        tiered):
    # the tiers round differently (float32 steps against float64 in the fused loop, the
    # sums' order): which call finds the kernel ready, a matter of timing, changed a
    # program's bits from run to run; torch.use_deterministic_algorithms(True) stops
    # tiering, also for a kernel whose compile is in flight
    scale = 0.3 + uuid.uuid4().int % 10**9 / 1e12  # a literal of the kernel (a captured
    # float would be an argument of one kernel for every scale, on disk after a first run)
    f = eval(f"lambda x: np.sum(np.exp(x * {scale!r})) * np.sum(x)", {"np": np})
    x = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    g = sg.grad(f)
    first = g(x)  # interpreted: the kernel compiles in the worker
    kernel = g._prepare((x,), None)[0].kernel
    assert isinstance(kernel, Tiered) and not kernel.dispatcher()
    assert not sg.are_deterministic_algorithms_enabled()
    sg.use_deterministic_algorithms(True)
    assert sg.are_deterministic_algorithms_enabled() and not sg.config.tiered
    second = g(x)  # waits for the compile, then runs the kernel
    assert kernel.dispatcher() is not None
    bits = second.view(np.uint32)
    assert np.array_equal(first.view(np.uint32),
                          sg.grad(f, backend="interpreter")(x).view(np.uint32))
    # the kernel's bits: a fresh grad of f, untiered, runs the same kernel (not the
    # interpreter, whose bits differ in the last place: by 1-3% of the elements when only
    # float32 exp rounds differently, nearly all when a sum does, by the literal's value)
    assert np.array_equal(sg.grad(f)(x).view(np.uint32), bits)
    assert (bits != first.view(np.uint32)).sum() > 0
    assert_close(second, first, rtol=1e-6, atol=0)  # ... and only there
    for _ in range(2):  # the kernel's bits from now on
        assert np.array_equal(g(x).view(np.uint32), bits)
    sg.use_deterministic_algorithms(False)
    assert sg.config.tiered and not sg.are_deterministic_algorithms_enabled()
    with pytest.raises(TypeError, match="expects a bool"):
        sg.use_deterministic_algorithms(1)
