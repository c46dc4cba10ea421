"""numpy's order of complex values and the functions built on it, against numpy and JAX.

Comparisons, ``maximum``/``minimum``/``fmax``/``fmin``, ``clip``, ``sort``/``argsort``/
``argmax``/``argmin``, ``sign``, ``rint``/``round``, ``isnan``/``isinf``/``isfinite``,
``nan_to_num`` and ``x + iy`` of complex values: numpy's results bit for bit (a nan's
payload aside) on every pair of the special values -inf, -1, -0, 0, 1, inf and nan as
real and imaginary parts, on the interpreter and in one Numba program; gradients of
real-valued functions against ``jax.grad`` and ``jax.jvp`` (first order) and
``jax.hessian`` (second). And, in a section of their own, what numpy and scipy compute of
complex values beyond the order (``slogdet``, ``pinv``, ``lstsq``, ``sinc``,
``sliding_window_view``, scipy.special's ``logsumexp``/``softmax``/``log_softmax``/
``xlogy``/``xlog1py``/``erf``/``erfc``), against numpy, scipy, JAX and mpmath.
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


# ---------------------------------------------------------------------------
# what numpy and scipy compute of complex values beyond the order: slogdet (the sign is
# the phase), pinv, lstsq, sinc, sliding_window_view, and scipy.special's logsumexp,
# softmax, log_softmax, xlogy, erf and erfc; values against numpy's and scipy's,
# gradients against JAX's (mpmath's erf where JAX has no complex one)

import scipy.special as ss  # noqa: E402

Rc = np.random.default_rng(2828)
SWV = np.lib.stride_tricks.sliding_window_view


def _c(*shape):
    return Rc.standard_normal(shape) + 1j * Rc.standard_normal(shape)


SQ, TALL, RHS, WP, ZS = _c(2, 3, 3), _c(4, 3), _c(4, 2), _c(4, 4), _c(3, 4)


def _slogdet(n):
    def loss(a):
        sign, lad = n.linalg.slogdet(a)
        return n.sum(n.real(sign * (1 - 2j))) + n.sum(lad ** 2)
    return loss


def _pinv(n):
    return lambda a: n.sum(n.abs(n.linalg.pinv(a) * WP[:a.shape[1], :a.shape[0]]) ** 2) + \
        n.sum(n.imag(n.linalg.pinv(a)))


def _lstsq(n):
    return lambda a, b: n.sum(n.abs(n.linalg.lstsq(a, b)[0] - 1j) ** 2)


def _lse(n, lse):  # the oracle's logsumexp: jax.scipy.special's
    return lambda z: n.sum(n.abs(lse(z, axis=1)) ** 2) + n.real(lse(z) * (2 + 1j))


def _softmax(n, sm):
    return lambda z: n.sum(n.real(sm(z, axis=0) * (1 + 2j)))


def _swv(n):
    w = np.cos(np.arange(6.0)).reshape(2, 3)
    if n is np:
        return lambda z: np.sum(np.abs(SWV(z, (2, 3)) * w) ** 2)
    # JAX has no sliding_window_view: the windows one slice at a time
    return lambda z: sum(jnp.sum(jnp.abs(z[i:i + 2, j:j + 3] * w) ** 2)
                         for i in range(z.shape[0] - 1) for j in range(z.shape[1] - 2))


def _xlogy(n, xlogy):
    return lambda x, y: n.sum(n.abs(xlogy(x, y)) ** 2 + n.real(xlogy(x, y) * (1 - 1j)))


LINALG_GRADS = {  # name: (loss of np, loss of jnp, arguments)
    "slogdet-stack": (_slogdet(np), _slogdet(jnp), (SQ,)),
    "pinv-tall": (_pinv(np), _pinv(jnp), (TALL,)),
    "pinv-wide": (_pinv(np), _pinv(jnp), (TALL.T.copy(),)),
    "pinv-square": (_pinv(np), _pinv(jnp), (SQ[0],)),
    "lstsq": (_lstsq(np), _lstsq(jnp), (TALL, RHS)),
    "lstsq-wide-vector": (_lstsq(np), _lstsq(jnp), (TALL.T.copy(), RHS[:3, 0].copy())),
    "lstsq-real-a": (_lstsq(np), _lstsq(jnp), (TALL.real.copy(), RHS)),
    "sinc": (lambda z: np.sum(np.abs(np.sinc(z)) ** 2 + np.real(np.sinc(z) * (1 - 2j))),
             lambda z: jnp.sum(jnp.abs(jnp.sinc(z)) ** 2 + jnp.real(jnp.sinc(z) * (1 - 2j))),
             (np.array([0.05 - 0.1j, 0.3 + 0.2j, 1.5 - 0.7j, -2 + 1j, 2.0 + 0j, 1j]),)),
    "sliding-window-view": (_swv(np), _swv(jnp), (ZS,)),
    "logsumexp": (_lse(np, sg.scipy.special.logsumexp),
                  _lse(jnp, jax.scipy.special.logsumexp), (ZS,)),
    "softmax": (_softmax(np, sg.scipy.special.softmax),
                _softmax(jnp, lambda z, axis: jnp.exp(z)
                         / jnp.sum(jnp.exp(z), axis, keepdims=True)), (ZS,)),
    "xlogy": (_xlogy(np, ss.xlogy), _xlogy(jnp, lambda x, y: x * jnp.log(y)),
              (np.array([0.0, 1 - 2j, 0.5j]), np.array([2 - 1j, -2 + 0j, 0.3 + 4j]))),
    "xlog1py": (_xlogy(np, ss.xlog1py), _xlogy(jnp, lambda x, y: x * jnp.log1p(y)),
                (np.array([0.0, 1 - 2j, 0.0]), np.array([-3 + 1j, -2 + 0j, 0.3 + 4j]))),
}


@pytest.mark.parametrize("name", sorted(LINALG_GRADS))
def test_linalg_and_special_gradients_are_jaxs(name):
    f, fj, args = LINALG_GRADS[name]
    argnums = tuple(range(len(args)))
    got = sg.grad(f, argnums=argnums, backend="numpy")(*args)
    for g, w in zip(got, jax.grad(fj, argnums=argnums)(*args)):
        assert g.dtype == np.asarray(w).dtype
        close(g, w, rtol=1e-10, atol=1e-10)


def test_linalg_and_special_values_are_numpys_and_scipys():
    def close15(got, want):
        close(got, want, rtol=1e-14, atol=1e-14)

    def run(fn, *args):
        return sg.jit(fn, backend="numpy")(*args)

    for got, want in zip(run(np.linalg.slogdet, SQ), np.linalg.slogdet(SQ)):
        assert got.dtype == want.dtype  # a complex sign, a real log|det|
        close15(got, want)
    for a in (TALL, TALL.T, SQ[0]):
        close15(run(np.linalg.pinv, a), np.linalg.pinv(a))
    herm = run(lambda a: np.linalg.pinv(a, hermitian=True), SQ[1])  # the lower triangle
    close15(herm, np.linalg.pinv(SQ[1], hermitian=True))
    for got, want in zip(run(np.linalg.lstsq, TALL, RHS), np.linalg.lstsq(TALL, RHS)):
        assert np.asarray(got).dtype == np.asarray(want).dtype or np.ndim(want) == 0
        close15(got, want)
    z = np.array([0, 1e-9 + 2e-9j, 0.3 + 0.2j, -2 + 3j, 2.0 + 0j])
    same_bits(run(np.sinc, z), np.sinc(z))
    for kw in ({"window_shape": 3, "axis": 1}, {"window_shape": (3, 2), "axis": (1, 0)},
               {"window_shape": (2, 2)}):
        same_bits(run(lambda z, kw=kw: SWV(z, **kw), ZS), SWV(ZS, **kw))
    tie = ZS.copy()
    tie[1, 2] = tie[1, 0].real + 5j  # two largest real parts: scipy shifts by the last
    special = np.array([[1 + 1j, complex(np.inf, 1), 2 - 3j], [np.nan, 1, 2]])
    S = sg.scipy.special
    with np.errstate(all="ignore"):
        for axis in (None, 0, 1):
            same_bits(run(lambda z, axis=axis: S.logsumexp(z, axis=axis), tie),
                      ss.logsumexp(tie, axis=axis))
            same_bits(run(lambda z, axis=axis: S.logsumexp(z, axis=axis), special),
                      ss.logsumexp(special, axis=axis))
            close15(run(lambda z, axis=axis: S.softmax(z, axis=axis), tie),
                    ss.softmax(tie, axis=axis))
            close15(run(lambda z, axis=axis: S.log_softmax(z, axis=axis), tie),
                    ss.log_softmax(tie, axis=axis))
        x, y = np.array([0.5, 0, 0, 2, -1.0]) + 0j, np.array([1 + 1j, 2j, 0, 0, -2])
        same_bits(run(ss.xlogy, x, y), ss.xlogy(x, y))
        same_bits(run(ss.xlogy, x.real, y), ss.xlogy(x.real, y))
        y1 = np.array([-1 + 0j, -3 + 1j, complex(np.inf, 1), 0.5j, np.nan])
        close15(run(ss.xlog1py, x, y1), ss.xlog1py(x, y1))  # (scipy's own complex log1p)
    same_bits(run(ss.erf, ZS), ss.erf(ZS))
    same_bits(run(ss.erfc, ZS), ss.erfc(ZS))


def test_holomorphic_derivatives_are_jaxs_and_mpmaths():
    """det = sign * exp(log|det|), lstsq in b, sinc, logsumexp, xlogy in y: jacfwd with
    holomorphic=True against JAX's; erf's against mpmath's 2/sqrt(pi) exp(-z^2)."""
    mpmath = pytest.importorskip("mpmath")
    cases = [
        (lambda n: lambda a: n.linalg.slogdet(a)[0] * n.exp(n.linalg.slogdet(a)[1]), SQ[0]),
        (lambda n: lambda b: n.linalg.lstsq(TALL, b)[0], RHS[:, 0].copy()),
        (lambda n: lambda z: n.sinc(z), np.array([0.3 + 0.2j, -2 + 1j])),
        (lambda n: lambda z: (sg.scipy.special.logsumexp if n is np
                              else jax.scipy.special.logsumexp)(z, axis=0), ZS),
        (lambda n: lambda y: (ss.xlogy if n is np else lambda x, y: x * jnp.log(y))(
            ZS[0], y), ZS[1]),
    ]
    for make, arg in cases:
        close(sg.jacfwd(make(np), holomorphic=True, backend="numpy")(arg),
              jax.jacfwd(make(jnp), holomorphic=True)(arg), rtol=1e-10, atol=1e-10)
    z = np.array([0.3 + 0.2j, -1.5 + 0.7j, 2 - 2j, 1e-3j])
    want = [complex(2 / mpmath.sqrt(mpmath.pi) * mpmath.exp(-mpmath.mpc(w) ** 2)) for w in z]
    close(np.diagonal(sg.jacfwd(ss.erf, holomorphic=True, backend="numpy")(z)), want)
    close(np.diagonal(sg.jacrev(ss.erfc, holomorphic=True, backend="numpy")(z)),
          -np.array(want))


def test_sinc_gradient_near_zero_is_the_series():
    """Below |pi z| = 0.5 the derivative is a series (JAX's quotient loses half the digits
    at |z| = 1e-9): against mpmath's derivative of sin(pi z)/(pi z)."""
    mpmath = pytest.importorskip("mpmath")
    z = np.array([1e-9 + 2e-9j, 0.01 - 0.1j, 0.1 + 0.1j])
    got = np.diagonal(sg.jacfwd(np.sinc, holomorphic=True, backend="numpy")(z))
    with mpmath.workdps(40):  # (mpmath's precision is global: other modules set theirs)
        want = [complex(mpmath.diff(lambda u: mpmath.sin(mpmath.pi * u) / (mpmath.pi * u),
                                    mpmath.mpc(w))) for w in z]
    close(got, want, rtol=1e-14, atol=0)


def test_linalg_and_special_in_one_numba_kernel_are_jaxs():
    """slogdet, pinv and the windows in one kernel (Numba's LAPACK calls take complex
    matrices); with SYMGRAD_FULL=1 lstsq, sinc and logsumexp in it too, and erf and xlogy
    of complex values, which run between kernels."""
    names = ["slogdet-stack", "pinv-tall", "sliding-window-view"]
    names += ["lstsq", "sinc", "logsumexp"] if FULL else []
    fs = [LINALG_GRADS[n][0] for n in names]
    fjs = [LINALG_GRADS[n][1] for n in names]
    args = [a for n in names for a in LINALG_GRADS[n][2]]
    spans = np.cumsum([0] + [len(LINALG_GRADS[n][2]) for n in names])

    def group(fns):
        return lambda *a: sum(f(*a[i:j]) for f, i, j in zip(fns, spans[:-1], spans[1:]))

    argnums = tuple(range(len(args)))
    g = sg.grad(group(fs), argnums=argnums, backend="numba")
    assert "@njit" in g.source(*args) and "interpreter" not in g.source(*args)
    for got, want in zip(g(*args), jax.grad(group(fjs), argnums=argnums)(*args)):
        close(got, want, rtol=1e-10, atol=1e-10)
    if not FULL:
        return
    h = sg.grad(lambda z: np.sum(np.abs(ss.erf(z) * ss.xlogy(z, z + 1.0)) ** 2),
                backend="numba")
    close(h(ZS), sg.grad(lambda z: np.sum(np.abs(ss.erf(z) * ss.xlogy(z, z + 1.0)) ** 2),
                         backend="numpy")(ZS), rtol=1e-13, atol=1e-13)
    assert "Faddeeva" in h.source(ZS)


def test_what_scipy_refuses_of_complex_values_is_refused():
    with pytest.raises(TypeError, match="sigmoid does not take complex operands"):
        sg.grad(lambda z: np.sum(np.real(ss.expit(z))), backend="numpy")(ZS)  # (as scipy's)
    with pytest.raises(TypeError, match="logsumexp of complex values with b="):
        sg.jit(lambda z: sg.scipy.special.logsumexp(z, b=2.0), backend="numpy")(ZS)
    with pytest.raises(ValueError, match="repeats an axis"):
        sg.jit(lambda z: SWV(z, (2, 2), axis=(0, 0)), backend="numpy")(ZS)


def test_pinv_and_slogdet_forward_mode_are_jaxs():
    """pinv is not holomorphic (its rule has conjugates): jvp against jax.jvp."""
    t = _c(4, 3)
    for make in (lambda n: lambda a: (n.linalg.pinv(a),),
                 lambda n: lambda a: tuple(n.linalg.slogdet(a[:3]))):  # (sign, log|det|)
        got = sg.jvp(make(np), (TALL,), (t,), backend="numpy")[1]
        want = jax.jvp(make(jnp), (TALL,), (t,))[1]
        assert len(got) == len(want)
        for g, w in zip(got, want):
            close(g, w, rtol=1e-10, atol=1e-10)
