"""Sums over a fused loop's innermost axis through a scratch row (codegen's ``ROW_SUMS``).

A loop over two or more axes, or one that calls vectorized math, that adds every
element of its innermost axis into one place (``grad_u[i0] += ...`` in a broadcast
gradient, ``grad_p += ...`` in a loop body's adjoint) stores the row's terms in a
scratch row, then adds them after the row by ``vm.row_sum`` (8 lanes; issue 31). Below
8 elements that is the plain loop's order, so the result has the bits of the kernel
without scratch rows (``ROW_SUMS = False``); from 8 on it is another order, checked
against that kernel and the numpy interpreter to a few ulp, and ``row_sum`` itself
against a Python transcription of its order (bit for bit) and ``math.fsum``. The serial
and the parallel (chunked) paths, a loop body and the libm rerun are covered.
"""

from __future__ import annotations

import math
import re

import numba
import numpy as np
import pytest

import symgrad as sg
from symgrad.backend.numba import codegen


def broadcast(A, u, v):
    return np.mean(np.tanh(A * u[:, None] + v) ** 2)


def euler(x0, p, n):
    def step(i, x):
        return x + 0.01 * (-x ** 3 + np.sin(p * x))
    return np.sum(sg.fori_loop(0, n, step, x0) ** 2)


def _both(monkeypatch, make, *args):
    """(source, result) with scratch rows, then the result without (its own kernel)."""
    rowed = make()
    source, got = rowed.source(*args), rowed(*args)
    monkeypatch.setattr(codegen, "ROW_SUMS", False)
    plain = make()
    assert not re.search(r"\br\d+_0\b", plain.source(*args))
    result = plain(*args)
    monkeypatch.setattr(codegen, "ROW_SUMS", True)
    return source, got, result


def _same_bits(a, b):
    for x, y in zip(a, b):
        assert np.array_equal(np.asarray(x), np.asarray(y)), (x, y)


def _close(a, b, rtol=1e-13):
    for x, y in zip(a, b):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=1e-17)


def _lanes(r: list[float]) -> float:
    """row_sum's order, written from its docstring: lane l adds r[l], r[l + 8], ...; the
    lanes pairwise; then the tail in order."""
    m = len(r) - len(r) % 8
    lane = [0.0] * 8
    for j in range(0, m, 8):
        for k in range(8):
            lane[k] += r[j + k]
    a = lane
    total = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]))
    for v in r[m:]:
        total += v
    return total


def test_row_sum_adds_in_8_lanes_in_a_fixed_order():
    from symgrad.backend import vecmath

    row_sum = numba.njit(lambda r: vecmath.row_sum(r))
    rng = np.random.default_rng(11)
    for n in [0, 1, 7, 8, 9, 15, 16, 17, 300, 1001]:
        r = rng.standard_normal(n) * 10.0 ** rng.uniform(-5, 5, n)
        got = row_sum(r)
        assert got == _lanes(r.tolist()), n  # bit for bit, the order of its docstring
        exact = math.fsum(r.tolist())
        assert abs(got - exact) <= 2 * n * 2.0 ** -53 * np.sum(np.abs(r)), n
        if n < 8:
            assert got == sum(r.tolist(), 0.0)  # the plain loop's order
    row = np.ones(16)
    row[0], row[8] = 1e16, -1e16  # both in lane 0: they cancel before the 1s meet them
    assert row_sum(row) == 14.0 == math.fsum(row.tolist())


def _args(m, rng):
    return rng.standard_normal((5, m)), rng.uniform(0.5, 1.5, 5), rng.uniform(-1, 1, m)


@pytest.mark.parametrize("m", [2, 7, 300])
def test_a_broadcast_gradient_sums_its_rows_through_a_scratch_row(
        monkeypatch, m):
    A, u, v = _args(m, np.random.default_rng(m))
    source, got, plain = _both(monkeypatch, lambda: sg.grad(broadcast, argnums=(1, 2)), A, u, v)
    assert "r0_0 = np.empty(n1)" in source and "r0_0[i1] = " in source
    assert "grad_u[i0] += vm.row_sum(r0_0)" in source
    if m < 8:
        _same_bits(got, plain)
    else:
        _close(got, plain)
    want = sg.grad(broadcast, argnums=(1, 2), backend="numpy")(A, u, v)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-18)


def test_a_loop_body_adjoint_sums_through_a_scratch_row_made_once(monkeypatch):
    x0 = np.linspace(0.1, 0.8, 30)
    source, got, plain = _both(monkeypatch, lambda: sg.grad(euler, argnums=(0, 1)), x0, 1.3, 50)
    made = re.search(r"r\d+_0 = np.empty\(n0\)", source)
    assert made and made.start() < source.index("for i in range(n)")  # once, not per step
    assert "vm.row_sum(" in source
    _close(got, plain)
    want = sg.grad(euler, argnums=(0, 1), backend="numpy")(x0, 1.3, 50)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)


def test_parallel_chunks_and_the_libm_rerun_keep_the_bits(monkeypatch):
    monkeypatch.setenv("SYMGRAD_PARALLEL_MIN", "256")
    rng = np.random.default_rng(5)
    A, u, v = rng.standard_normal((40, 30)), rng.uniform(0.5, 1.5, 40), rng.uniform(-1, 1, 30)
    far = A.copy()
    far[3, 4] = 3e7  # sin beyond its vectorized range: the whole loop runs again with libm

    def f(A, u, v):
        return np.sum(np.sin(A * u[:, None] + v) ** 2)

    for data in (A, far):
        source, got, plain = _both(
            monkeypatch, lambda: sg.value_and_grad(f, argnums=(1, 2)), data, u, v)
        assert "prange(" in source and re.search(r"for ic\d+ in prange", source)
        assert re.search(r"r\d+_0 = np.empty\(n1\)", source)  # one per chunk, in the prange
        assert got[0] == pytest.approx(plain[0], rel=1e-14)
        _close(got[1], plain[1])
        want = sg.value_and_grad(f, argnums=(1, 2), backend="numpy")(data, u, v)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
        for a, b in zip(got[1], want[1]):
            np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-12)


def square(A, u, v):
    return np.mean((A * u[:, None] + v) ** 2)


@pytest.mark.parametrize("m", [5, 300])
def test_a_broadcast_gradient_without_vectorized_math_sums_through_a_scratch_row(
        monkeypatch, m):
    """No vecmath call in the loop (issue 31, round 3): the row sum was one chain of
    dependent additions; now the scratch row, the same bits at 1 and 2 threads, on the
    parallel chunks (and their serial twin) and on the serial kernel."""
    rng = np.random.default_rng(m + 1)  # 60 rows: at least 256 elements, chunked below
    A, u, v = rng.standard_normal((60, m)), rng.uniform(0.5, 1.5, 60), rng.uniform(-1, 1, m)
    source, got, plain = _both(monkeypatch, lambda: sg.grad(square, argnums=(1, 2)), A, u, v)
    assert "grad_u[i0] += vm.row_sum(r0_0)" in source and "from symgrad.backend import " \
        "vecmath as vm" in source
    if m < 8:
        _same_bits(got, plain)
    else:
        _close(got, plain)
    want = sg.grad(square, argnums=(1, 2), backend="numpy")(A, u, v)
    _close(got, want, rtol=1e-12)
    monkeypatch.setenv("SYMGRAD_PARALLEL_MIN", "256")
    g = sg.grad(square, argnums=(1, 2))
    assert "prange(" in g.source(A, u, v) and "vm.row_sum(" in g.source(A, u, v)
    runs = []
    for k in (1, min(2, sg.max_threads())):  # 1: the serial twin
        sg.set_num_threads(k)
        runs.append(g(A, u, v))
    sg.set_num_threads(None)
    _same_bits(runs[0], runs[1])
    _same_bits(runs[0], got)  # the chunks change no row's order


def test_one_axis_sums_without_vectorized_math_are_left_as_they_were():
    source = sg.grad(lambda x: np.sum(x * x)).source(np.ones(30))
    assert not re.search(r"\br\d+_0\b", source)


def test_complex_sums_over_rows_add_where_their_terms_are_made():
    """The scratch rows are float64: a complex term stored there did not compile (a
    TypingError for ``sum(exp(u * v) * A, axis=1)`` with a complex A, before this)."""
    rng = np.random.default_rng(3)
    A = rng.standard_normal((4, 9)) + 1j * rng.standard_normal((4, 9))
    u, v = np.linspace(0.5, 1, 4), np.linspace(-1, 1, 9)

    def f(A, u, v):
        return np.sum(np.exp(u[:, None] * v) * A, axis=1), np.sum(A * u[:, None] + v, axis=1)

    j = sg.jit(f)
    assert "vm.exp(" in j.source(A, u, v) and "vm.row_sum(" not in j.source(A, u, v)
    for got, want in zip(j(A, u, v), f(A, u, v)):
        np.testing.assert_allclose(got, want, rtol=1e-14)
