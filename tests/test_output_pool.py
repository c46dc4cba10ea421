"""The output pool (symgrad/backend/numba/pool.py; issue 31, item 4).

A kernel's float output of at least ``pool.MIN_BYTES`` (in a kernel traced at such a
size: smaller ones have no pool, and compile faster) comes from the pool, which
hands a buffer out again only when nothing but the pool holds it. Oracles: the numpy
interpreter (values), copies taken when each result was returned (a result the caller
keeps never changes), the buffers' addresses (a dropped result's buffer is reused).
"""

from __future__ import annotations

import threading
import warnings
import weakref

import numpy as np
import pytest

import symgrad as sg
from symgrad.backend.numba import pool

N = pool.MIN_BYTES // 8 + 5  # just over the threshold in float64


def seed(x):
    return np.mean(3 * (x + 2) ** 2)


def rosenbrock(x):
    return np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def _address(a):
    return a.__array_interface__["data"][0]


@pytest.fixture(autouse=True)
def empty_pool():
    pool.clear()
    yield
    pool.clear()


@pytest.mark.parametrize("f", [seed, rosenbrock])
def test_kept_results_never_change_and_dropped_ones_are_reused(f):
    rng = np.random.default_rng(1)
    g, oracle = sg.grad(f), sg.grad(f, backend="numpy")
    assert "pool_take(" in g.source(rng.random(N))
    xs = [rng.random(N) for _ in range(4)]
    kept = [g(x) for x in xs]  # each held: four buffers, none handed out twice
    copies = [k.copy() for k in kept]
    assert len({_address(k) for k in kept}) == 4
    view = kept[0][::3]  # a view holds its base: kept[0]'s buffer stays taken
    held = memoryview(kept[1])
    address = _address(kept[2])
    del kept[0], kept[0], kept[0]  # 0, 1 (views of them still held) and 2 dropped
    for x in xs:
        again = g(x)
        np.testing.assert_allclose(again, oracle(x), rtol=1e-13)
        del again
    assert np.array_equal(view, copies[0][::3]) and np.array_equal(np.asarray(held), copies[1])
    assert np.array_equal(kept[0], copies[3])
    reused = g(xs[2])  # the pool is full (4); the only free buffer is 2's
    assert _address(reused) == address
    assert pool.kept_bytes() == pool.PER_SHAPE * N * 8
    np.testing.assert_array_equal(reused, copies[2])


def test_a_loop_that_holds_its_last_result_reuses_two_buffers():
    x = np.random.default_rng(2).random(N)
    g = sg.grad(seed)
    addresses = set()
    r = None
    for _ in range(6):
        r = g(x)  # the last result is held while the next call runs
        addresses.add(_address(r))
    assert len(addresses) == 2
    np.testing.assert_allclose(r, sg.grad(seed, backend="numpy")(x), rtol=1e-13)


def test_a_result_passed_back_in_is_not_overwritten_by_its_own_call():
    def f(x):
        return np.sum(np.sin(x) * x)

    g = sg.grad(f)
    x = np.random.default_rng(3).random(N)
    first = g(x)
    copy = first.copy()
    del x
    second = g(first)  # first is the argument: its buffer is held
    np.testing.assert_array_equal(first, copy)
    np.testing.assert_allclose(second, sg.grad(f, backend="numpy")(copy), rtol=1e-13)


def test_a_result_held_only_by_a_weak_reference_dies_rather_than_changes():
    """weakref.ref counts nothing in getrefcount: a dropped result the pool kept alive
    was handed out again, and the weak reference (a WeakValueDictionary cache, the
    eager layer's nodes) saw the next call's numbers. Such a buffer leaves the pool."""
    g = sg.grad(seed)
    rng = np.random.default_rng(8)
    r = g(rng.random(N))
    ref = weakref.ref(r)
    copy = r.copy()
    del r
    for _ in range(3):
        g(rng.random(N))
    held = ref()
    assert held is None, np.array_equal(held, copy)  # dead, as an np.empty result is
    assert pool.kept_bytes() <= pool.PER_SHAPE * N * 8


def test_a_result_reshaped_in_place_and_dropped_is_not_handed_out_so():
    """``r.shape = ...`` / ``r.strides = ...`` change the pool's own array object: the next
    call's gradient came back (500, 400) for a (400, 500) input, its rows in the wrong
    places. Such a buffer leaves the pool."""
    def f(x):
        return np.sum(np.sin(x) * x)

    g, oracle = sg.grad(f), sg.grad(f, backend="numpy")
    rng = np.random.default_rng(9)
    x = rng.random((400, 500))  # 1.6 MB
    for change in ("shape", "strides", "writeable"):
        r = g(x)
        if change == "shape":
            r.shape = (500, 400)
        elif change == "strides":
            with warnings.catch_warnings():  # (numpy deprecates setting strides)
                warnings.simplefilter("ignore", DeprecationWarning)
                r.strides = (8, 3200)
        else:
            r.flags.writeable = False
        del r
        x2 = rng.random((400, 500))
        got = g(x2)
        assert got.shape == (400, 500) and got.flags.c_contiguous
        np.testing.assert_allclose(got, oracle(x2), rtol=1e-13)


def test_small_outputs_and_other_dtypes():
    g = sg.grad(seed)
    small = np.random.default_rng(4).random(100)
    np.testing.assert_allclose(g(small), 6 / 100 * (small + 2), rtol=1e-14)
    assert pool.kept_bytes() == 0 and "pool_take(" not in g.source(small)  # np.empty
    n32 = pool.MIN_BYTES // 4 + 3
    x32 = np.random.default_rng(5).random(n32).astype(np.float32)
    np.testing.assert_allclose(g(x32[:N]), sg.grad(seed, backend="numpy")(x32[:N]), rtol=1e-6)
    assert pool.kept_bytes() == 0  # N float32: under MIN_BYTES
    got = g(x32)
    assert got.dtype == np.float32 and pool.kept_bytes() == n32 * 4
    want = sg.grad(seed, backend="numpy")(x32)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    kept = got.copy()
    g(x32 * 2)
    np.testing.assert_array_equal(got, kept)


def test_threads_never_share_a_buffer():
    g = sg.grad(rosenbrock)
    oracle = sg.grad(rosenbrock, backend="numpy")
    rng = np.random.default_rng(6)
    xs = [rng.random(N) for _ in range(4)]
    wants = [oracle(x) for x in xs]
    g(xs[0])  # compiled before the threads start
    results: list = [[] for _ in xs]
    errors = []

    def work(k):
        try:
            for _ in range(5):
                results[k].append(g(xs[k]))  # every result kept
        except Exception as e:  # noqa: BLE001 -- reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    held = [r for rs in results for r in rs]
    assert len({_address(r) for r in held}) == len(held)  # no buffer handed out twice
    for k, rs in enumerate(results):
        for r in rs:
            np.testing.assert_allclose(r, wants[k], rtol=1e-13)


@pytest.mark.skipif(sg.max_threads() < 2, reason="needs 2 threads to compare with 1")
def test_a_parallel_kernel_takes_from_the_pool_with_the_same_bits(monkeypatch):
    monkeypatch.setenv("SYMGRAD_PARALLEL_MIN", "256")
    g = sg.grad(rosenbrock)
    x = np.random.default_rng(7).random(N)
    assert "prange(" in g.source(x) and "pool_take(" in g.source(x)
    runs = []
    for k in (1, 2):
        sg.set_num_threads(k)
        runs.append(g(x))
    sg.set_num_threads(None)
    assert np.array_equal(runs[0], runs[1]) and _address(runs[0]) != _address(runs[1])


def test_an_exported_kernel_does_not_use_the_pool(tmp_path):
    from symgrad.backend.numba import codegen

    x = np.ones(N)
    assert "pool_take(" in sg.grad(seed).source(x)
    codegen.OUTPUT_POOL = False
    try:
        assert "pool_take(" not in sg.grad(seed).source(x)
    finally:
        codegen.OUTPUT_POOL = True
    path = sg.export(sg.grad(seed), (x,), tmp_path / "exported.py", target="numba")
    text = path.read_text()
    assert "pool" not in text and "objmode" not in text and "np.empty(" in text
