"""numpy's order of complex values and the functions built on it, against numpy and JAX.

Comparisons, ``maximum``/``minimum``/``fmax``/``fmin``, ``clip``, ``sort``/``argsort``/
``argmax``/``argmin``, ``sign``, ``rint``/``round``, ``isnan``/``isinf``/``isfinite``,
``nan_to_num`` and ``x + iy`` of complex values: numpy's results bit for bit (a nan's
payload aside) on every pair of the special values -inf, -1, -0, 0, 1, inf and nan as
real and imaginary parts, on the interpreter and in one Numba program; gradients of
real-valued functions against ``jax.grad`` and ``jax.jvp`` (first order) and
``jax.hessian`` (second).
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from test_complex import close, crand, jax, jnp

import symgrad as sg

FULL = os.environ.get("SYMGRAD_FULL") == "1"
_V = [-np.inf, -1.0, -0.0, 0.0, 1.0, np.inf, np.nan]
#: the 49 complex numbers of two special parts, and every ordered pair of them
P = np.array([complex(a, b) for a in _V for b in _V])
X, Y = (a.ravel() for a in np.meshgrid(P, P))
M = np.array([[1 + 2j, 1 - 1j, complex(np.nan, 1), -3 + 0j, 1 + 2j],
              [0.5j, complex(2, np.nan), -0.0 + 0j, 0j, 4 - 4j],
              [2 + 1j, 2 + 1j, -1 + 5j, complex(-np.inf, 1), 1 + 0j]])


def _bits(a):
    a = np.ascontiguousarray(a)
    return a.view(a.real.dtype) if a.dtype.kind == "c" else a


def same_bits(got, want):
    """Equal dtype, shape and bits; any nan matches any nan (numpy's payloads vary)."""
    got, want = np.asarray(got), np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    g, w = _bits(got), _bits(want)
    nan = np.isnan(g) & np.isnan(w) if g.dtype.kind == "f" else np.zeros(g.shape, bool)
    same = (g == w) & (np.signbit(g) == np.signbit(w)) if g.dtype.kind == "f" else g == w
    assert np.all(same | nan), (got, want)


#: functions of the pairs (X, Y), with numpy's values as the oracle
VALUES = {
    "lt": lambda x, y: x < y, "le": lambda x, y: x <= y, "gt": lambda x, y: x > y,
    "ge": lambda x, y: x >= y, "eq": lambda x, y: x == y, "ne": lambda x, y: x != y,
    "maximum": np.maximum, "minimum": np.minimum, "fmax": np.fmax, "fmin": np.fmin,
    "maximum-real": lambda x, y: np.maximum(x, 0.5),
    "less-real": lambda x, y: np.less(np.real(y), x),
    "clip": lambda x, y: np.clip(x, -1 + 1j, 1 - 0.5j),
    "clip-zero-ties": lambda x, y: np.clip(x, 0j, 1 + 1j),  # numpy: -0j clips to 0j
    "clip-nan-bound": lambda x, y: np.clip(x, complex(0, np.nan), 1 + 1j),
    "clip-arrays": lambda x, y: np.clip(x, y, y[::-1]),
    "clip-one-bound": lambda x, y: np.clip(x, None, 0.5j),
    "clip-real-a": lambda x, y: np.clip(np.real(x), -0.5j, 1 + 1j),
    "sign": lambda x, y: np.sign(x), "rint": lambda x, y: np.rint(x),
    "round": lambda x, y: np.round(x * 1.37),
    "round-2": lambda x, y: np.round(x * 1.37, 2), "round--1": lambda x, y: np.round(x * 13.7, -1),
    "isnan": lambda x, y: np.isnan(x), "isinf": lambda x, y: np.isinf(x),
    "isfinite": lambda x, y: np.isfinite(x), "isnan-real": lambda x, y: np.isnan(np.imag(x)),
    "isinf-real": lambda x, y: np.isinf(np.real(y)),
    "isfinite-real": lambda x, y: np.isfinite(np.real(x)),
    "nan_to_num": lambda x, y: np.nan_to_num(x),
    "sort": lambda x, y: np.sort(x, kind="stable"),
    "argsort": lambda x, y: np.argsort(y, kind="stable"),
    "argmax": lambda x, y: np.argmax(x[:49]), "argmin": lambda x, y: np.argmin(x[:49]),
    "argmax-finite": lambda x, y: np.argmax(np.where(np.isfinite(x), x, 0.0)),
    "argmin-finite": lambda x, y: np.argmin(np.where(np.isfinite(y), y, 0.0)),
    # (infinite parts; ties of equal values, the sign of a zero part the first one's)
    "max-finite": lambda x, y: np.max(np.nan_to_num(x[:49]) * np.array([1, 1j])[:, None]),
    "max-infinite-parts": lambda x, y: np.max(np.where(np.isnan(x[:49]), 0.5, x[:49])),
    "min-infinite-parts": lambda x, y: np.min(np.where(np.isnan(x[:49]), 0.5, x[:49])),
    "max-rows": lambda x, y: np.max(y.reshape(49, 49)[::-1], axis=0),  # (the first nan)
    "min-rows": lambda x, y: np.min(x.reshape(49, 49), axis=1),
    "nanmax-pairs": lambda x, y: np.nanmax(np.stack([x[:49], x[48::-1], x[:49]], 1), axis=1),
    "nanmax-rows": lambda x, y: np.nanmax(y.reshape(49, 49), axis=1),  # (rows of one value)
    "nanmin-columns": lambda x, y: np.nanmin((x * 0.5 + y[::-1]).reshape(49, 49), axis=0),
}
#: functions of M, a 3x5 complex matrix with nans and ties, along each axis
ALONG = {
    "sort-0": lambda m: np.sort(m, axis=0, kind="stable"),
    "sort-1": lambda m: np.sort(m, kind="stable"),
    "argsort-0": lambda m: np.argsort(m, axis=0, kind="stable"),
    "argmax-1": lambda m: np.argmax(m, axis=1), "argmin-0": lambda m: np.argmin(m, axis=0),
    "argmax-keepdims": lambda m: np.argmax(m, axis=0, keepdims=True),
    "nanvar": lambda m: np.nanvar(m, axis=1), "nanstd": lambda m: np.nanstd(m),
    "full_like": lambda m: np.full_like(m, 2.0), "zeros_like": lambda m: np.zeros_like(m),
}


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


@pytest.mark.parametrize("name", sorted(VALUES))
def test_values_are_numpys_bits(name):
    fn = VALUES[name]
    same_bits(sg.jit(fn, backend="numpy")(X, Y), fn(X, Y))


@pytest.mark.parametrize("name", sorted(ALONG))
def test_values_along_axes_are_numpys(name):
    fn = ALONG[name]
    same_bits(sg.jit(fn, backend="numpy")(M), fn(M))


#: the functions of VALUES that run on Numba in CI (one program: each family of them,
#: about 15 s of compiling on a loaded machine); all of them with SYMGRAD_FULL=1
NUMBA = sorted(VALUES) if FULL else ["argmax", "clip-zero-ties", "fmin", "isinf", "lt", "maximum",
                                     "max-rows", "nan_to_num", "ne", "rint", "round-2", "sign",
                                     "sort"]


def test_numba_kernels_compute_numpys_bits():
    """Functions of VALUES in one program on Numba: kernels (complex sign runs between
    them, README "Complex numbers"), numpy's bits."""
    names = NUMBA
    fn = sg.jit(lambda x, y: tuple(VALUES[n](x, y) for n in names), backend="numba")
    for name, got in zip(names, fn(X, Y)):
        same_bits(got, VALUES[name](X, Y))
    assert "@njit" in fn.source(X, Y)


def test_complex64_order_and_rounding_are_numpys():
    x, y = X.astype(np.complex64), Y.astype(np.complex64)
    fn = lambda x, y: (np.maximum(x, y), x < y, np.rint(x * 1.37), np.sign(x),
                       np.sort(y, kind="stable"))
    for backend in ("numpy", "numba"):
        for got, want in zip(sg.jit(fn, backend=backend)(x, y), fn(x, y)):
            same_bits(got, want)


def test_what_numpy_refuses_of_complex_values_is_refused():
    z = crand(3)
    for fn, match in ((np.floor, "floor does not take complex"),
                      (lambda z: np.percentile(z, 50), "array of real numbers"),
                      (lambda z: np.interp(z, [0.0, 1.0], [0.0, 1.0]), "cannot cast")):
        with pytest.raises(TypeError):
            fn(z)  # numpy's own TypeError
        with pytest.raises(TypeError, match=match):
            sg.jit(fn, backend="numpy")(z)


# ---------------------------------------------------------------------------
# gradients: JAX's (a sign, a rounding and positions carry none; a maximum's tie
# shares the cotangent, as JAX's)

Z, W = crand(4), crand(4)
GRADS = {
    "maximum": lambda n: lambda z, w: n.sum(n.abs(n.maximum(z, w * (0.5 + 0.5j))) ** 2),
    "minimum": lambda n: lambda z, w: n.real(n.sum(n.minimum(z, w) * (1 + 2j))),
    "fmax": lambda n: lambda z, w: n.sum(n.imag(n.fmax(z, w) ** 2)),
    "compare-where": lambda n: lambda z, w: n.sum(n.abs(n.where(z < w, z, 2.0 * w)) ** 2),
    "clip": lambda n: lambda z, w: n.sum(n.abs(_clip(n, z, -0.5 + 0.1j, 0.6 - 0.2j)) ** 2),
    "sort": lambda n: lambda z, w: n.sum(n.abs(n.sort(z + w) * n.arange(1.0, 5.0)) ** 2),
    "sign": lambda n: lambda z, w: n.sum(n.real(n.sign(z) * z) + n.imag(n.sign(w) * z)),
    "rint-round": lambda n: lambda z, w: n.sum(n.imag(n.rint(z * 3) * z)
                                               + n.real(n.round(w * 3, 1) * w * z)),
    "nan_to_num": lambda n: lambda z, w: n.sum(n.real(n.nan_to_num(z * w) ** 2)),
    "max": lambda n: lambda z, w: n.abs(n.max(z * w)) ** 2,
    # (not an order: complex arctan, holomorphic, Numba's within 6e-16 relative of numpy's)
    "arctan": lambda n: lambda z, w: n.sum(n.imag(n.arctan(z * 0.7 + w))),
}


def _clip(n, z, lo, hi):
    # numpy's clip of complex values; JAX refuses it, whose maximum and minimum give the
    # same selection where no part ties
    return n.clip(z, lo, hi) if n is np else n.minimum(n.maximum(z, lo), hi)


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_are_jaxs(name):
    fn = GRADS[name]
    got = sg.grad(fn(np), argnums=(0, 1), backend="numpy")(Z, W)
    want = jax.grad(fn(jnp), argnums=(0, 1))(jnp.asarray(Z), jnp.asarray(W))
    for g, w in zip(got, want):
        close(g, w)
    tangents = (np.conj(W) * 0.3 + 1j, Z * 0.5)  # forward mode: JAX's jvp
    got = sg.jvp(fn(np), (Z, W), tangents, backend="numpy")
    want = jax.jvp(fn(jnp), (jnp.asarray(Z), jnp.asarray(W)), tuple(map(jnp.asarray, tangents)))
    for g, w in zip(got, want):
        close(g, w)


def test_a_tie_shares_the_gradient_as_jaxs():
    fn = GRADS["minimum"]
    got = sg.grad(fn(np), argnums=(0, 1), backend="numpy")(Z, Z.copy())
    want = jax.grad(fn(jnp), argnums=(0, 1))(jnp.asarray(Z), jnp.asarray(Z))
    for g, w in zip(got, want):
        close(g, w)
    close(got[0], np.full(4, 0.5 + 1j))


def test_gradients_on_numba_are_jaxs():
    """GRADS in one program on Numba (one kernel group), against JAX."""
    names = sorted(GRADS)
    fns = [GRADS[n](np) for n in names]
    got = sg.grad(lambda z, w: sum(f(z, w) for f in fns), argnums=(0, 1),
                  backend="numba")(Z, W)
    want = jax.grad(lambda z, w: sum(GRADS[n](jnp)(z, w) for n in names),
                    argnums=(0, 1))(jnp.asarray(Z), jnp.asarray(W))
    for g, w in zip(got, want):
        close(g, w)


def test_second_order_is_jaxs():
    """A Hessian in real inputs through complex maximum, sort, nan_to_num and max."""
    x = np.array([0.3, -1.2, 0.8])

    def f(n):
        def loss(x):
            z = x * (1 + 2j) + x[::-1] ** 2 * 1j
            m = n.maximum(z, x * (2 - 1j))
            return (n.sum(n.abs(n.sort(m) * n.arange(1.0, 4.0)) ** 2)
                    + n.sum(n.real(n.nan_to_num(z) ** 3)) + n.abs(n.max(z)) ** 3)
        return loss
    want = jax.hessian(f(jnp))(jnp.asarray(x))
    close(sg.hessian(f(np), backend="numpy")(x), want)
    if FULL:  # (about 30 s of compiling; Numba's first order is test_gradients_on_numba_are_jaxs)
        close(sg.hessian(f(np), backend="numba")(x), want)


# ---------------------------------------------------------------------------
# integer floor division of traced positions stays int64, as numpy's


def test_floor_division_of_positions_is_int64():
    a = np.array([1.0, 5.0, 2.0, 3.0, 7.0])

    def fn(a):
        i = np.argmax(a)
        return i // 2, i % 3, i // 0, 7 // (np.argmin(a) + 1), i // 2.0, a[i // 2]
    for backend in ("numpy", "numba"):
        for got, want in zip(sg.jit(fn, backend=backend)(a), fn(a)):
            assert np.asarray(got).dtype == np.asarray(want).dtype and got == want
    grad = sg.grad(lambda a: a[np.argmax(a) // 2] ** 2 + a[np.argmin(a) % 3], backend="numpy")
    close(grad(a), [1.0, 0.0, 4.0, 0.0, 0.0])
