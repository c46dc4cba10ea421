"""The fast path under state changes: every call gives what a fresh interpreter call gives.

The fast path (``symgrad.transforms.calls._runner``) calls the compiled Numba overload
directly, keyed by cheap facts of the arguments, and checks the guards of what
the function reads from outside. These tests change what a warm signature
depends on between calls -- a closure array mutated in place, a global rebound,
a new shape, a new dtype, a bool for a float, a 0-d array for a float, a list,
an array that is not C-contiguous, aligned or writable, several threads at once
-- and compare each answer (value and type) with a fresh ``backend="numpy"``
transformation called on the same state (the independent oracle: a new trace,
run by numpy). They also pin the compile counts and that the fast key fixes the
Numba type of each argument, which is what makes calling the overload sound.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symgrad as sg
from symgrad.backend.numba import compile as kernels
from symgrad.transforms.calls import _fast_key

SCALE = 2.0
TABLE = np.array([1.0, 2.0, 3.0])


def same(got, want) -> None:
    """Equal value, type, shape and dtype (recursively through tuples)."""
    assert type(got) is type(want), f"{type(got).__name__} != {type(want).__name__}"
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
        return
    assert np.shape(got) == np.shape(want)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    # a float32 kernel computes in float64 inside a fused loop and rounds once when it
    # stores; the numpy interpreter rounds every float32 operation: a few float32 ulps
    rtol = 1e-5 if np.asarray(want).dtype == np.float32 else 1e-13
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0)


def oracle(transform, fun, *args, **kwargs):
    """A fresh numpy-backend transformation, called now (it traces the current state)."""
    return transform(fun, backend="numpy", **kwargs)(*args)


def loaded() -> int:
    stats = kernels.compile_stats()
    return stats["compiled"] + stats["loaded_from_disk"]


def fast_runs(f) -> int:
    return len(f._fast)


def test_a_closure_array_mutated_in_place_is_seen_on_the_next_call():
    table = np.array([1.0, 2.0, 3.0])

    def loss(x):
        return np.sum(table * x * x)

    f = sg.grad(loss)
    x = np.array([0.5, -1.0, 2.0])
    for _ in range(2):
        same(f(x), oracle(sg.grad, loss, x))
    assert fast_runs(f) == 1
    before = loaded()
    table[1] = -7.0  # in place: same object, same shape, new value
    for _ in range(2):
        same(f(x), oracle(sg.grad, loss, x))
    np.testing.assert_array_equal(f(x), 2 * table * x)
    table[:] = [0.0, -0.0, 1e-300]  # -0.0 against 0.0, a subnormal product
    same(f(x), oracle(sg.grad, loss, x))
    assert loaded() == before, "a new value of a captured array reuses the kernel"


def test_a_rebound_global_float_and_array_are_seen_on_the_next_call():
    global SCALE, TABLE

    def loss(a, x):
        return np.sin(a) * SCALE + np.sum(TABLE * x)

    f = sg.grad(loss, argnums=(0, 1))
    x = np.array([1.0, 2.0, 3.0])
    old = SCALE, TABLE
    try:
        for scale, table in [(2.0, TABLE), (3.5, TABLE), (3.5, np.array([4.0, 5.0, 6.0])),
                             (-0.0, np.zeros(3)), (2.0, old[1])]:
            SCALE, TABLE = scale, table
            for _ in range(2):
                same(f(0.25, x), oracle(sg.grad, loss, 0.25, x, argnums=(0, 1)))
    finally:
        SCALE, TABLE = old


def test_a_guard_that_fails_on_the_fast_path_of_a_seeded_call():
    weights = np.array([1.0, 2.0])

    def fun(x):
        return x * weights

    f = sg.grad(fun)
    x, ct = np.array([3.0, 4.0]), np.array([1.0, -1.0])
    for _ in range(2):
        same(f(x, gradient=ct), sg.grad(fun, backend="numpy")(x, gradient=ct))
    weights *= 10
    same(f(x, gradient=ct), sg.grad(fun, backend="numpy")(x, gradient=ct))


def test_new_shapes_and_dtypes_of_a_warm_signature():
    def loss(x):
        return np.sum(np.sin(x) * x)

    f = sg.grad(loss)
    j = sg.jit(lambda x: x * 2)
    for x in [np.linspace(0, 1, 4), np.linspace(0, 1, 5), np.ones((2, 3)), np.linspace(0, 1, 4),
              np.arange(4), np.arange(4.0, dtype=np.float32), np.array([True, False]),
              np.linspace(0, 1, 4)]:
        for _ in range(2):
            same(f(x), oracle(sg.grad, loss, x))
            same(j(x), oracle(sg.jit, lambda x: x * 2, x))


@pytest.mark.parametrize("args", [
    (True, 1.0, True, np.bool_(False), 0.0),
    (0.5, np.array(0.5), 0.5, np.array(0.25)),
    (np.float64(0.5), 0.5, np.float32(0.25), 2),
], ids=["bool-vs-float", "0d-vs-float", "numpy-scalars-and-int"])
def test_scalars_of_different_kinds_in_turn(args):
    def fun(a):
        return np.sin(a) * 3.0

    for transform in (sg.grad, sg.value_and_grad, sg.jit):
        f = transform(fun)
        for a in (*args, *args):
            same(f(a), oracle(transform, fun, a))


def test_a_list_argument_after_an_array_and_back():
    def loss(x):
        return np.sum(x * x)

    f = sg.grad(loss)
    for x in [np.array([1.0, 2.0]), [1.0, 2.0], np.array([3.0, 4.0]), [5.0, 6.0]]:
        same(f(x), oracle(sg.grad, loss, x))


def test_several_scalar_outputs_are_numpy_scalars_in_order():
    def fun(a, b, c, d):
        return np.sin(a) * b + np.exp(c) * d

    for kwargs in ({"argnums": (0, 1, 2, 3)}, {"argnums": (3, 1)}, {"argnums": (2,)}):
        for transform in (sg.grad, sg.value_and_grad):
            f = transform(fun, **kwargs)
            for _ in range(3):
                same(f(0.1, 0.2, 0.3, 0.4), oracle(transform, fun, 0.1, 0.2, 0.3, 0.4, **kwargs))
    j = sg.jit(lambda a, b: (a > b, a * b, np.sin(a)))
    for _ in range(3):
        same(j(0.5, 0.25), oracle(sg.jit, lambda a, b: (a > b, a * b, np.sin(a)), 0.5, 0.25))


def _unaligned(n: int) -> np.ndarray:
    a = np.zeros(8 * n + 1, np.uint8)[1:].view(np.float64)
    a[:] = np.arange(1.0, n + 1)
    return a


def test_arrays_that_are_not_ready_never_reach_the_overload():
    """Same shape and dtype as a warm array, but not C-contiguous, aligned or writable:
    the key differs (the checked path copies them), no new Numba signature appears."""
    def loss(x):
        return np.sum(np.sin(x) * x)

    f = sg.grad(loss)
    f(np.ones(3))
    f(np.ones((3, 3)))
    before = loaded()
    readonly = np.linspace(0, 1, 3)
    readonly.flags.writeable = False
    fortran = np.asfortranarray(np.arange(9.0).reshape(3, 3))
    for x in [np.arange(6.0)[::2], readonly, _unaligned(3), fortran, fortran.T[::-1],
              np.arange(3.0).astype(">f8")]:
        for _ in range(2):
            same(f(x), oracle(sg.grad, loss, x))
    assert loaded() == before


def test_a_view_and_an_array_that_owns_its_data_of_one_shape():
    """Their flags differ (OWNDATA): two fast entries, the same answers."""
    def loss(x):
        return np.sum(np.sin(x) * x)

    f = sg.grad(loss)
    base = np.linspace(-1, 1, 8)
    for x in [np.linspace(0, 1, 4), base[:4], np.linspace(1, 2, 4), base[4:], base[::2].copy()]:
        for _ in range(2):
            same(f(x), oracle(sg.grad, loss, x))
    assert len(f._fast) == 2


def test_threads_calling_one_function_concurrently():
    table = np.array([1.0, -2.0, 0.5])

    def loss(x, s):
        return np.sum(table * np.sin(x) * s)

    f = sg.grad(loss, argnums=(0, 1))
    shapes = [np.linspace(0, 1, 3), np.linspace(-1, 1, 3) * 2, np.full(3, 0.25)]
    wants = [oracle(sg.grad, loss, x, 1.5, argnums=(0, 1)) for x in shapes]
    for x in shapes:
        f(x, 1.5)  # warm
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def work(k: int) -> None:
        try:
            start.wait()
            for i in range(300):
                j = (i + k) % 3
                same(f(shapes[j], 1.5), wants[j])
        except BaseException as e:  # noqa: BLE001 -- reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_compile_counts_of_warm_calls():
    def loss(x, y):
        return np.sum(np.tanh(x) * y)

    f = sg.grad(loss, argnums=(0, 1))
    x, y = np.linspace(-1, 1, 6), np.linspace(0, 2, 6)
    f(x, y)
    before, calls = loaded(), kernels.compile_stats()["compiled_calls"]
    for k in range(50):
        same(f(x * k, y), oracle(sg.grad, loss, x * k, y, argnums=(0, 1))) if k % 10 == 0 \
            else f(x * k, y)
    assert loaded() == before
    assert kernels.compile_stats()["compiled_calls"] == calls, "warm calls skip the Kernel"


# -- the fast key fixes the Numba type ----------------------------------------------

def _array(dtype: str, shape: tuple, order: str, step: int, readonly: bool,
           unaligned: bool) -> np.ndarray:
    size = int(np.prod(shape)) * step
    base = np.arange(size).astype(dtype)
    if unaligned:
        raw = np.zeros(base.nbytes + 1, np.uint8)[1:]
        base = raw.view(dtype)
    a = base[::step].reshape(shape, order=order) if size else base.reshape(shape)
    if readonly:
        a.flags.writeable = False
    return a


layouts = st.tuples(st.sampled_from("CF"), st.sampled_from([1, 2]), st.booleans(), st.booleans())
scalars = st.one_of(st.floats(), st.booleans(), st.integers(-2**70, 2**70),
                    st.sampled_from([np.float64(1.5), np.float32(2), np.int64(3), np.int32(4),
                                     np.bool_(True), np.uint8(7)]))


def _numba_type(x):
    from numba import typeof

    try:
        return typeof(x)
    except Exception as e:  # noqa: BLE001 -- untyped by Numba: compared as such
        return type(e)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["f8", "f4", "i8", "?", ">f8"]),
       st.lists(st.integers(0, 3), max_size=3).map(tuple), layouts, layouts)
def test_equal_fast_keys_mean_equal_numba_types_of_arrays(dtype, shape, one, other):
    """Two arrays of one dtype and shape, laid out in memory two ways (order, stride,
    writable, aligned): when their fast keys are equal, so are their Numba types, so
    the overload compiled for one takes the other as it is (the fast path's soundness)."""
    a, b = _array(dtype, shape, *one), _array(dtype, shape, *other)
    if _fast_key((a,)) == _fast_key((b,)):
        assert _numba_type(a) == _numba_type(b), (a.flags, b.flags)


@settings(max_examples=200, deadline=None)
@given(scalars, scalars)
def test_equal_fast_keys_mean_equal_numba_types_of_numbers(a, b):
    if _fast_key((a,)) == _fast_key((b,)):
        assert _numba_type(a) == _numba_type(b), (a, b)


def test_kernels_that_are_not_plain_dispatchers_keep_their_own_call(monkeypatch):
    """A parallel kernel runs under a lock and the interpreter is no Numba dispatcher:
    the fast path calls them as they are (not a bare overload), and still agrees."""
    monkeypatch.setenv("SYMGRAD_PARALLEL_MIN", "256")
    monkeypatch.setattr(sg.config, "tiered", False)

    def loss(x):
        return np.sum(np.sin(x) * np.exp(-x * x))

    x = np.linspace(-2.5, 3, 1001)
    want = oracle(sg.grad, loss, x)
    f = sg.grad(loss)
    assert "prange(" in f.source(x)
    for _ in range(3):
        same(f(x), want)
    (run,) = f._fast.values()
    assert type(run.fast.kernel.__wrapped__).__module__.startswith("numba"), \
        "the serialized parallel kernel, not its bare entry point"
    f = sg.grad(loss, backend="numpy")
    for _ in range(3):
        same(f(x), want)
