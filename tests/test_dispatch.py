"""The fast path of a transformed function's call: the same answers as the checked path.

A call whose signature was seen before, with arguments the kernel takes as they
are, skips ``_prepare``; every other call goes through it. Each case below is
called three times (the checked call that fills the fast path, then two that may
take it) and every answer is compared with the numpy interpreter's, value and
type; the tests after that pin which calls take which path.
"""

from __future__ import annotations

import numpy as np
import pytest

import symgrad as sg
from symgrad.backend.numba import compile as kernels

X = np.array([[1.0, 2.0], [3.0, 4.0]])


def read_only(a: np.ndarray) -> np.ndarray:
    a = a.copy()
    a.flags.writeable = False
    return a


def unaligned(n: int) -> np.ndarray:
    buffer = np.zeros(8 * n + 1, np.uint8)
    a = buffer[1:].view(np.float64)
    a[:] = np.arange(1.0, n + 1)
    assert not a.flags.aligned
    return a


def big_endian(a: np.ndarray) -> np.ndarray:
    return a.astype(">f8")


#: (name, transformation, kwargs, function, args, gradient)
CASES = [
    ("seed", sg.grad, {}, lambda x: np.mean(3 * (x + 2) ** 2), (X,), None),
    ("scalar floats", sg.grad, {"argnums": (0, 1)}, lambda a, b: np.sin(a * b) + a / b,
     (0.3, 1.7), None),
    ("python int, promoted", sg.grad, {}, lambda x: x ** 3, (3,), None),
    ("numpy scalars", sg.grad, {"argnums": (0, 1)}, lambda a, b: a * b,
     (np.float64(2.0), np.float32(0.5)), None),
    ("bool differentiated", sg.grad, {}, lambda x: x * 3.0, (True,), None),
    ("0-d array", sg.grad, {}, lambda x: np.sin(x), (np.array(0.5),), None),
    ("int array", sg.grad, {}, lambda x: np.sum(x ** 2), (np.arange(3),), None),
    ("list", sg.grad, {}, lambda x: np.sum(x * x), ([1.0, 2.0],), None),
    ("non-contiguous", sg.grad, {}, lambda x: np.sum(np.sin(x)), (X.T,), None),
    ("read-only", sg.grad, {}, lambda x: np.sum(np.sin(x)), (read_only(X),), None),
    ("unaligned", sg.grad, {}, lambda x: np.sum(np.sin(x)), (unaligned(3),), None),
    ("big-endian", sg.grad, {}, lambda x: np.sum(np.sin(x)), (big_endian(X),), None),
    ("bool array, traced", sg.jit, {}, lambda x, m: sg.where(m, x, 0.0),
     (X, X > 2.0), None),
    ("static string", sg.grad, {}, lambda x, s: np.sum(x) * len(s), (X, "abc"), None),
    ("static int", sg.grad, {"static_argnums": (1,)}, lambda x, n: np.sum(x ** n), (X, 3), None),
    ("static float", sg.grad, {"static_argnums": (-1,)}, lambda x, s: np.sum(x / s),
     (X, -0.0), None),
    ("static tuple", sg.grad, {}, lambda x, t: np.sum(x) * t[0], (X, (2.0, 1)), None),
    ("static bool", sg.jit, {}, lambda x, flag: x * 2.0 if flag else x, (X, True), None),
    ("array constant", sg.grad, {}, lambda x: np.sum(x * np.array([[1.0, 2.0], [3.0, 5.0]])),
     (X,), None),
    ("gradient=", sg.grad, {}, lambda x: x * x, (X,), np.full((2, 2), 5.0)),
    ("scalar gradient=", sg.grad, {}, lambda x: np.sum(x * x), (X,), 2.0),
    ("size-1 gradient=", sg.grad, {}, lambda x: np.sum(x * x), (X,), np.array([2.0])),
    ("value_and_grad", sg.value_and_grad, {}, lambda x: np.sum(x ** 2), (X,), None),
    ("value_and_grad argnums", sg.value_and_grad, {"argnums": (0, 1)},
     lambda x, y: np.sum(x * y), (X, 2.0), None),
    ("jit scalar", sg.jit, {}, lambda x: x * 2.0, (1.5,), None),
    ("jit bool scalar", sg.jit, {}, lambda x: x > 1.0, (1.5,), None),
    ("jit tuple", sg.jit, {}, lambda x, y: (np.exp(x) * y, np.sum(x)), (X, 2.0), None),
    ("jit tuple of arrays", sg.jit, {}, lambda x: (x * 2.0, x + 1.0), (X,), None),
    ("argnums, arrays", sg.grad, {"argnums": (0, 2)}, lambda x, s, y: np.sum(x * s) + y @ y,
     (X, 2.0, np.ones(2)), None),
]


def same(got, want) -> None:
    assert type(got) is type(want), f"{type(got).__name__} != {type(want).__name__}"
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
    else:
        assert np.shape(got) == np.shape(want)
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_allclose(got, want, rtol=1e-13)


@pytest.mark.parametrize(("transform", "kwargs", "fun", "args", "gradient"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_every_call_agrees_with_the_interpreter(transform, kwargs, fun, args, gradient):
    want = transform(fun, backend="numpy", **kwargs)(*args, gradient=gradient)
    f = transform(fun, **kwargs)
    for _ in range(3):
        same(f(*args, gradient=gradient), want)


def checked_calls(f, monkeypatch) -> list:
    """Record the calls that take the checked path from now on."""
    calls = []
    prepare = f._prepare

    def counting(args, gradient, kwargs):
        calls.append(args)
        return prepare(args, gradient, kwargs)

    monkeypatch.setattr(f, "_prepare", counting)
    return calls


def test_a_repeated_signature_skips_the_checks(monkeypatch):
    f = sg.grad(lambda x, y: np.sum(x * y))
    calls = checked_calls(f, monkeypatch)
    f(X, 2.0)
    f(X * 3, 5.0)  # new values, same signature
    f(np.zeros((2, 2)), 1)  # an int: the fast key holds its value
    f(np.zeros((2, 2)), 1)
    assert len(calls) == 2
    f(np.ones(3), 2.0)  # a new shape
    f(np.ones(3), 4.0)
    assert len(calls) == 3
    assert np.array_equal(f(np.arange(3.0), 4.0), np.full(3, 4.0))


# (a float32 array is no copy: it has a float32 kernel of its own, tests/test_float32.py)
@pytest.mark.parametrize("arg", [X.T, read_only(X), big_endian(X), X.tolist()],
                         ids=["non-contiguous", "read-only", "big-endian", "list"])
def test_arguments_that_need_a_copy_always_take_the_checked_path(arg, monkeypatch):
    f = sg.grad(lambda x: np.sum(np.sin(x)))
    f(X)  # the ready array of the same shape is on the fast path
    compiled = kernels.compile_stats()["compiled"]
    calls = checked_calls(f, monkeypatch)
    for _ in range(2):
        np.testing.assert_allclose(f(arg), np.cos(np.asarray(arg, dtype=np.float64)))
    assert len(calls) == 2
    assert kernels.compile_stats()["compiled"] == compiled, "no new Numba signature"


def test_static_values_select_their_specialization_on_the_fast_path():
    f = sg.grad(lambda x, n, s: np.sum(x ** n) * len(s), static_argnums=(1,))
    for _ in range(2):
        assert np.array_equal(f(X, 2, "ab"), 4 * X)
        assert np.array_equal(f(X, 3, "ab"), 6 * X ** 2)
        assert np.array_equal(f(X, 2, "abc"), 6 * X)
        assert np.array_equal(f(X, True, "abc"), np.full((2, 2), 3.0)), "True is not 1"
    assert len(f._cache) == 4


def test_errors_are_the_checked_paths_on_every_call():
    f = sg.grad(lambda x, opts: np.sum(x) * len(opts))
    f(X, ("a",))
    for _ in range(2):
        with pytest.raises(TypeError, match="static.*hashable"):
            f(X, ["a", "b"])
        with pytest.raises(ValueError, match="out of range"):
            sg.grad(lambda x: x, argnums=2)(X)
        with pytest.raises(TypeError, match="complex"):
            f(X.astype(complex), ("a",))
    g = sg.grad(lambda x: x * x)
    g(X, gradient=np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"gradient has shape \(3,\)"):
        g(X, gradient=np.ones(3))
    with pytest.raises(ValueError, match="scalar outputs"):
        g(X)


def test_the_fast_path_calls_the_compiled_overload_itself():
    f = sg.grad(lambda x: np.sum(np.cos(x)))
    f(X)
    (run,) = f._fast.values()
    dispatcher = kernels.load(f._prepare((X,), None)[0].source).function
    (overload,) = dispatcher.overloads.values()
    assert run.fast.kernel is overload.entry_point


def test_the_fast_cache_is_bounded():
    f = sg.jit(lambda x, n: x * 2.0, static_argnums=(1,), backend="numpy")
    for n in range(300):
        f(1.0, n)
    assert len(f._fast) <= 256
