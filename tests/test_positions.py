"""np.argmax, np.argmin, np.argsort (and the methods) on traced arrays, and gathering
with their int64 positions (np.take_along_axis, x[i]): positions against numpy's own
(ties, NaN, axis, keepdims, 0-d), gradients of the gathered values against JAX's.
Interpreter, plus one small Numba check."""

from __future__ import annotations

import numpy as np
import pytest

import symgrad as sg

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

TIES = np.array([[1.0, 3.0, 3.0, -2.0, -2.0],
                 [0.0, -0.0, 5.0, 5.0, 0.0],
                 [2.0, np.nan, 7.0, np.nan, 7.0],
                 [-np.inf, np.inf, np.inf, -np.inf, 1.0]])

POSITIONS = [
    ("argmax", lambda x: np.argmax(x)),
    ("argmax-axis1", lambda x: np.argmax(x, axis=1)),
    ("argmax-axis0-keepdims", lambda x: np.argmax(x, axis=0, keepdims=True)),
    ("argmax-none-keepdims", lambda x: np.argmax(x, keepdims=True)),
    ("argmin-axis-1", lambda x: np.argmin(x, axis=-1)),
    ("argmin-method", lambda x: x.argmin(0)),
    ("argmax-method", lambda x: x.argmax(axis=1, keepdims=True)),
    ("argsort", lambda x: np.argsort(x, kind="stable")),
    ("argsort-axis0", lambda x: np.argsort(x, axis=0, kind="stable")),
    ("argsort-none", lambda x: np.argsort(x, axis=None, kind="stable")),
    ("argsort-method", lambda x: x.argsort(kind="stable")),
    ("argmax-0d", lambda x: np.argmax(x[1, 2])),
    ("argsort-0d", lambda x: np.argsort(x[0, 1])),
]


@pytest.mark.parametrize("fn", [p[1] for p in POSITIONS], ids=[p[0] for p in POSITIONS])
@pytest.mark.parametrize("x", [TIES, TIES[:2]], ids=["nan-inf", "ties"])
def test_positions_are_numpys_int64(fn, x):
    got = sg.jit(fn, backend="interpreter")(x)
    want = fn(x)
    assert np.asarray(got).dtype == np.int64 and np.shape(got) == np.shape(want)
    np.testing.assert_array_equal(got, want)


def test_argsort_of_any_kind_is_the_stable_order():
    x = np.repeat([2.0, 1.0, 3.0], 12)  # numpy's quicksort may reorder ties past 16
    for kind in (None, "quicksort", "heapsort", "stable"):
        got = sg.jit(lambda x, k=kind: np.argsort(x, kind=k), backend="interpreter")(x)
        np.testing.assert_array_equal(got, np.argsort(x, kind="stable"))


def test_int64_arguments_and_errors():
    ints = np.array([4, 9, 9, -1])
    assert sg.jit(np.argmax, backend="interpreter")(ints) == 1
    with pytest.raises(ValueError, match="empty sequence"):
        sg.jit(np.argmax, backend="interpreter")(np.zeros((2, 0)))
    with pytest.raises(np.exceptions.AxisError):
        sg.jit(lambda x: np.argmin(x, axis=2), backend="interpreter")(TIES)
    with pytest.raises(sg.UnsupportedFunctionError, match="np.argsort"):
        sg.jit(lambda x: np.argpartition(x, 1), backend="interpreter")(TIES[0])


X = np.random.default_rng(4).normal(size=(3, 5))
W = np.random.default_rng(5).normal(size=(3, 5))

GATHERS = [  # (name, fn(np, x), both libraries' spelling)
    ("max-element", lambda np_, x: x.ravel()[np_.argmax(x)] ** 2 * W[0, 0]),
    ("row-of-argmin", lambda np_, x: np_.sin(x[np_.argmin(np_.sum(x, axis=1))]) * W[0]),
    ("sorted-by-argsort", lambda np_, x: np_.take_along_axis(x, np_.argsort(x, axis=-1), -1) * W),
    ("sorted-axis0", lambda np_, x: np_.take_along_axis(x ** 3, np_.argsort(x, axis=0), 0) * W),
    ("argmax-keepdims",
     lambda np_, x: np_.take_along_axis(x, np_.argmax(x, axis=1, keepdims=True), 1) * W[:, :1]),
    ("top2", lambda np_, x: np_.take_along_axis(x, np_.argsort(-x, axis=1)[:, :2], 1) ** 2),
    ("negative-constant",
     lambda np_, x: np_.take_along_axis(x, np_.array([[-1, 0]] * 3), 1) * x[0, :2]),
]


@pytest.mark.parametrize("fn", [g[1] for g in GATHERS], ids=[g[0] for g in GATHERS])
def test_gathered_values_and_gradients_match_jax(fn):
    got = sg.jit(lambda x: fn(np, x), backend="interpreter")(X)
    np.testing.assert_allclose(got, fn(np, X), rtol=1e-15)
    g = sg.grad(lambda x: np.sum(fn(np, x)), backend="interpreter")(X)
    want = jax.grad(lambda x: jnp.sum(fn(jnp, x)))(jnp.asarray(X))
    np.testing.assert_allclose(g, want, rtol=1e-13, atol=1e-15)


def test_traced_int64_indices_out_of_range_raise():
    f = lambda x, i: np.sum(np.take_along_axis(x, i, 0))  # noqa: E731
    x = np.arange(4.0)
    assert sg.grad(f, backend="interpreter")(x, np.array([-4, 3])) .tolist() == [1, 0, 0, 1]
    for i in ([4, 0], [-5, 0]):
        with pytest.raises(IndexError):
            sg.grad(f, backend="interpreter")(x, np.array(i))


def test_numba_kernel_matches_numpy_with_nan_and_ties():
    def f(x):
        return (x[np.argmax(x)] + np.take_along_axis(x, np.argsort(x), -1).sum(),
                np.argmin(x), np.argsort(x))
    x = np.array([2.0, 5.0, 5.0, np.nan, -1.0, -1.0, np.nan])
    for y in (x, x[~np.isnan(x)]):
        value, amin, order = sg.jit(f, backend="numba")(y)
        np.testing.assert_array_equal(amin, np.argmin(y))
        np.testing.assert_array_equal(order, np.argsort(y, kind="stable"))
        np.testing.assert_allclose(value, f(y)[0])
    g = sg.grad(lambda x: x[np.argmax(x)] ** 2, backend="numba")(x[:3])
    np.testing.assert_array_equal(g, [0.0, 10.0, 0.0])
    with pytest.raises(IndexError):
        sg.jit(lambda x, i: np.take_along_axis(x, i, 0), backend="numba")(x, np.array([7]))
    # the gradient alone (its kernel never runs the gather): the same IndexError, never a
    # write outside the array (the review's heap corruption)
    g = sg.grad(lambda x, i: np.sum(np.take_along_axis(x, i, 0) ** 2), backend="numba")
    np.testing.assert_array_equal(g(np.arange(4.0), np.array([3, 1])), [0.0, 2.0, 0.0, 6.0])
    for i in ([4, 0], [0, 11]):
        with pytest.raises(IndexError, match="out of bounds"):
            g(np.arange(4.0), np.array(i))


NANS = np.random.default_rng(6).normal(size=(4, 6))
NANS[0, [1, 4]] = NANS[2, 0] = np.nan
NANS[3] = np.nan
NAN_QUANTILES = [
    ("nanmedian", lambda np_, x: np_.nanmedian(x, axis=1)),
    ("nanmedian-odd-keepdims", lambda np_, x: np_.nanmedian(x[:3, :5], axis=-1, keepdims=True)),
    ("nanmedian-flat", lambda np_, x: np_.nanmedian(x[:3])),
    ("nanquantile-qs", lambda np_, x: np_.nanquantile(x, np_.array([0.0, 0.3, 0.75, 1.0]),
                                                      axis=1)),
    ("nanquantile-axis0", lambda np_, x: np_.nanquantile(x[:3], 0.4, axis=0)),
    ("nanpercentile-lower", lambda np_, x: np_.nanpercentile(x, 35, axis=1, method="lower")),
    ("nanpercentile-higher", lambda np_, x: np_.nanpercentile(x, 35, axis=1, method="higher")),
    # (at a position of exactly k + 0.5 numpy rounds to even and JAX down: symgrad is numpy's)
    ("nanquantile-nearest", lambda np_, x: np_.nanquantile(x, 0.4, axis=1, method="nearest")),
    ("nanquantile-midpoint", lambda np_, x: np_.nanquantile(x, 0.7, axis=1, method="midpoint")),
    # the functions without nan: a row holding a NaN gives nan (the review's f04)
    ("median", lambda np_, x: np_.median(x, axis=1)),
    ("median-flat", lambda np_, x: np_.median(x[1:3])),
    ("quantile-lower", lambda np_, x: np_.quantile(x, np_.array([0.0, 0.1]), axis=1,
                                                   method="lower")),
    ("percentile-linear", lambda np_, x: np_.percentile(x, 35, axis=1)),
]


@pytest.mark.filterwarnings("ignore:All-NaN slice")
@pytest.mark.parametrize("fn", [q[1] for q in NAN_QUANTILES], ids=[q[0] for q in NAN_QUANTILES])
def test_nan_quantiles_match_numpy_and_jax_gradients(fn):
    got = sg.jit(lambda x: fn(np, x), backend="interpreter")(NANS)
    want = fn(np, NANS)
    assert np.shape(got) == np.shape(want)
    np.testing.assert_array_equal(got, want)  # exactly numpy's, NaN for a row of NaNs
    w = np.random.default_rng(7).normal(size=np.shape(want))
    g = sg.grad(lambda x: np.nansum(fn(np, x) * w), backend="interpreter")(NANS)
    jg = jax.grad(lambda x: jnp.nansum(fn(jnp, x) * w))(jnp.asarray(NANS))
    np.testing.assert_allclose(g, jg, rtol=1e-13, atol=1e-15)
