"""The fast key tells apart every call that must not share a kernel (issue 31.6).

Each pair below has the same arguments but for one fact the fast key holds (a dtype,
a flag, a scalar's type, a cotangent's shape); after the first call fills the fast
path, the second must not be answered by the first one's entry. Interpreter backend
(no Numba compile); answers compared with numpy's analytic derivatives.
"""

from __future__ import annotations

import numpy as np

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
