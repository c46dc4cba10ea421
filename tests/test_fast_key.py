"""The fast key tells apart every call that must not share a kernel (issue 31.6).

Each pair below has the same arguments but for one fact the fast key holds (a dtype,
a flag, a scalar's type, a cotangent's shape); after the first call fills the fast
path, the second must not be answered by the first one's entry. Interpreter backend
(no Numba compile); answers compared with numpy's analytic derivatives.
"""

from __future__ import annotations

import numpy as np
import pytest

import symgrad as sg
from symgrad.transforms.calls import _fast_key

X = np.array([0.5, 1.5, -2.0])


def test_each_fact_of_an_array_changes_the_key():
    base = _fast_key((X,))
    read_only = X.copy()
    read_only.flags.writeable = False
    assert _fast_key((X.astype(np.float32),)) != base
    assert _fast_key((X.astype(">f8"),)) != base
    assert _fast_key((read_only,)) != base
    assert _fast_key((np.repeat(X, 2)[::2],)) != base  # a strided view, same shape
    assert _fast_key((X.reshape(1, 3),)) != base
    assert _fast_key((0.5,)) != _fast_key((np.float32(0.5),)) != _fast_key((np.float64(0.5),))
    assert _fast_key((1,)) != _fast_key((2,))  # an int's value is part of the key


def test_a_changed_fact_never_reuses_the_entry_of_another():
    f = sg.grad(lambda x, s: np.sum(np.sin(x)) * s, backend="numpy")
    for _ in range(2):  # the second round runs on the fast path where it can
        np.testing.assert_allclose(f(X, 2.0), 2.0 * np.cos(X), rtol=1e-15)
        x32 = X.astype(np.float32)
        r32 = f(x32, 2.0)
        assert r32.dtype == np.float32
        np.testing.assert_allclose(r32, 2.0 * np.cos(x32.astype(np.float64)), rtol=1e-6)
        view = np.repeat(X, 2)[::2]
        np.testing.assert_allclose(f(view, 3.0), 3.0 * np.cos(X), rtol=1e-15)
        np.testing.assert_allclose(f(X[:2], np.float32(0.25)), 0.25 * np.cos(X[:2]), rtol=1e-15)


def test_a_cotangent_of_another_dtype_or_shape_is_not_a_hit():
    f = sg.grad(lambda x: np.sin(x), backend="numpy")
    for _ in range(2):
        np.testing.assert_allclose(f(X, gradient=np.ones(3)), np.cos(X), rtol=1e-15)
        np.testing.assert_allclose(f(X, gradient=np.full(3, 2.0)), 2 * np.cos(X), rtol=1e-15)
        half = np.full(3, 0.5, np.float32)  # another dtype: cast on the checked path
        np.testing.assert_allclose(f(X, gradient=half), 0.5 * np.cos(X), rtol=1e-15)
        np.testing.assert_allclose(f(X[:2], gradient=np.ones(2)), np.cos(X[:2]), rtol=1e-15)


def test_the_key_of_one_to_four_arrays_is_the_general_one():
    """One to four plain arrays get their key in one expression, not by the loop over the
    arguments: the same tuple (each argument's facts in turn), and each array's facts
    still count (a changed dtype, flag or shape in any position)."""
    read_only = X.copy()
    read_only.flags.writeable = False
    others = [X.astype(np.float32), X.astype(">f8"), read_only, np.repeat(X, 2)[::2],
              X.reshape(1, 3), X[:2]]

    def facts(args):
        return sum(((x.shape, x.dtype, x.flags.num) for x in args), ())

    for n in range(1, 6):  # (5: the loop)
        args = (X,) * n
        assert _fast_key(args) == facts(args)
        for k in range(n):
            for other in others:
                changed = args[:k] + (other,) + args[k + 1:]
                assert _fast_key(changed) == facts(changed) != _fast_key(args)
    assert _fast_key((X, 0.5)) == (*facts((X,)), float)  # not all arrays: the loop
    for n in range(1, 6):  # one to four Python floats in one expression too
        floats = (0.5,) * n
        assert _fast_key(floats) == (float,) * n
        for k in range(n):
            for other in (np.float64(0.5), np.float32(0.5), 1, True, X):
                changed = floats[:k] + (other,) + floats[k + 1:]
                assert _fast_key(changed) != _fast_key(floats)
    assert _fast_key((X, np.float64(0.5))) != _fast_key((X, 0.5))
    sub = X.view(type("Sub", (np.ndarray,), {}))  # a subclass: never keyed as an ndarray
    with pytest.raises(TypeError):  # (keyed by value: unhashable, the checked path)
        hash(_fast_key((sub,)))


def test_four_arrays_on_the_fast_path_follow_a_changed_fact():
    f = sg.grad(lambda a, b, c, d: np.sum(a * b + np.sin(c) * d), argnums=(0, 2),
                backend="numpy")
    y = X + 1.0
    for _ in range(2):  # the second round runs on the fast path where it can
        ga, gc = f(X, y, X, y)
        np.testing.assert_allclose(ga, y, rtol=1e-15)
        np.testing.assert_allclose(gc, np.cos(X) * y, rtol=1e-15)
        c32 = X.astype(np.float32)
        ga, gc = f(X, y, c32, y)
        assert gc.dtype == np.float32 and ga.dtype == np.float64
        np.testing.assert_allclose(gc, np.cos(c32.astype(np.float64)) * y, rtol=1e-6)
        view = np.repeat(y, 2)[::2]
        ga, gc = f(X, y, X, view)
        np.testing.assert_allclose(gc, np.cos(X) * y, rtol=1e-15)
        ga, gc = f(X[:2], y[:2], X[:2], y[:2])
        np.testing.assert_allclose(ga, y[:2], rtol=1e-15)
    assert _fast_key((X, y, X, y)) in f._fast  # the fast path was taken
