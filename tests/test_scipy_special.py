"""scipy.special on traced values (symgrad/numpy_api/scipy_special.py, the primitives of
symgrad/prims/special_functions.py, sg.scipy.special) against mpmath at 50 digits:
values, first and second derivatives; Numba runs (libm's lgamma in the kernel, scipy's
ufuncs between kernels); the errors for what symgrad does not differentiate."""

from __future__ import annotations

import re

import mpmath
import numpy as np
import pytest
import scipy.special as S

import symgrad as sg

mpmath.mp.dps = 50
X = np.array([-6.0, -2.5, -0.3, 0.0, 1e-8, 0.7, 3.0, 27.0])
P = np.array([1e-6, 0.05, 0.3, 0.5, 0.8, 0.999])

# name, scipy function, mpmath function, points
UNARY = [
    ("erf", S.erf, mpmath.erf, X),
    ("erfc", S.erfc, mpmath.erfc, X),
    ("expit", S.expit, lambda x: 1 / (1 + mpmath.exp(-x)), X),
    ("logit", S.logit, lambda p: mpmath.log(p / (1 - p)), P),
]


def _mp(fn, x, n=0):
    return float(mpmath.diff(fn, mpmath.mpf(float(x)), n))


@pytest.mark.parametrize("name,fn,exact,points", UNARY, ids=[u[0] for u in UNARY])
def test_values_and_two_derivatives_match_mpmath(name, fn, exact, points):
    value = sg.jit(fn, backend="numpy")(points)
    d1 = sg.vmap(sg.grad(fn, backend="numpy"))(points)
    d2 = sg.vmap(sg.grad(sg.grad(fn, backend="numpy"), backend="numpy"))(points)
    for k, x in enumerate(points):
        np.testing.assert_allclose(value[k], _mp(exact, x), rtol=4e-16, atol=1e-300)
        # (mpmath.diff leaves a noise near 1e-64 where a derivative is exactly 0: erf''(0))
        np.testing.assert_allclose(d1[k], _mp(exact, x, 1), rtol=1e-14, atol=1e-40)
        # expit'' = s(x) s(-x) (s(-x) - s(x)) cancels near 0 (sigmoid's VJP differentiated):
        # 1e-17 absolute there, 6e-9 relative at x = 1e-8
        np.testing.assert_allclose(d2[k], _mp(exact, x, 2), rtol=1e-13,
                                   atol=1e-16 if name == "expit" else 1e-40)


def test_xlog1py_matches_mpmath_and_is_zero_at_x_zero():
    """As xlogy: both partial derivatives 0 only where x == 0 and log1p(y) is infinite
    (y == -1: PyTorch's convention); elsewhere x log1p(y)'s own, log1p(y) in x at x == 0
    too (JAX's; it was 0 there, which dropped beta.logpdf's b-derivative at b == 1)."""
    x = np.array([0.0, 0.0, 0.0, 1.5, -2.0, 3.0])
    y = np.array([-1.0, 2.0, -0.5, 1e-10, 0.5, -0.9])
    gx, gy = sg.grad(lambda x, y: np.sum(S.xlog1py(x, y)), argnums=(0, 1),
                     backend="numpy")(x, y)
    np.testing.assert_allclose(sg.jit(S.xlog1py, backend="numpy")(x, y), S.xlog1py(x, y),
                               rtol=1e-15)
    for k in range(len(x)):
        if x[k] == 0.0 and y[k] == -1.0:
            assert gx[k] == 0.0 and gy[k] == 0.0
            continue
        xm, ym = mpmath.mpf(x[k]), mpmath.mpf(y[k])
        np.testing.assert_allclose(gx[k], float(mpmath.log1p(ym)), rtol=1e-14)
        np.testing.assert_allclose(gy[k], float(xm / (1 + ym)), rtol=1e-14)
    # scipy's values at the edges: 0 at x == 0 unless y is nan
    ex, ey = np.zeros(5), np.array([-1.0, -2.0, np.inf, np.nan, 3.0])
    np.testing.assert_array_equal(sg.jit(S.xlog1py, backend="numpy")(ex, ey),
                                  S.xlog1py(ex, ey))


def test_xlogy_gradient_at_x_zero_and_y_nan_is_nan():
    """xlogy(0, nan) is nan, and so are both partial derivatives (PyTorch's and JAX's);
    they were 0, the convention of x == 0 and y <= 0 (which nan failed, as xlog1py's does
    not). Where y <= 0 they stay 0."""
    x, y = np.array([0.0, 0.0, 0.0, 1.0]), np.array([np.nan, 0.0, -1.0, np.nan])
    gx, gy = sg.grad(lambda x, y: np.sum(S.xlogy(x, y)), argnums=(0, 1), backend="numpy")(x, y)
    np.testing.assert_array_equal(gx, [np.nan, 0.0, 0.0, np.nan])
    np.testing.assert_array_equal(gy, [np.nan, 0.0, 0.0, np.nan])


def test_numba_kernel_calls_libm_erf():
    f = sg.grad(lambda x: np.sum(S.erf(x) * S.erfc(x)))
    want = [2 / np.sqrt(np.pi) * np.exp(-v * v) * (float(mpmath.erfc(v)) - float(
        mpmath.erf(v))) for v in X]
    np.testing.assert_allclose(f(X), want, rtol=1e-14, atol=1e-300)
    assert "import math" in f.source(X) and "math.erf(" in f.source(X)


def test_unsupported_scipy_special_names_scipy_and_the_way_out():
    with pytest.raises(sg.UnsupportedFunctionError,
                       match=r"scipy\.special\.ellipk is not supported.*pure_callback"):
        sg.grad(lambda x: np.sum(S.ellipk(x)), backend="numpy")(P)


G = np.array([0.1, 0.5, 1.0 + 1e-9, 1.4616321449683622, 2.5, 7.0, 40.0])
B = np.array([-3.5, -0.2, 1e-6, 0.6, 2.0, 9.0])
# name, function of traced x, mpmath function, points
NEW = [
    ("gammaln", S.gammaln, lambda x: mpmath.log(abs(mpmath.gamma(x))), np.r_[G, -0.5, -2.7]),
    ("gamma", S.gamma, mpmath.gamma, np.r_[G[:-1], -0.5, -2.7]),
    ("psi", S.psi, mpmath.digamma, np.r_[G, -0.5]),
    ("polygamma1", lambda x: sg.scipy.special.polygamma(1, x), lambda x: mpmath.polygamma(1, x),
     G),
    ("polygamma3", lambda x: sg.scipy.special.polygamma(3, x), lambda x: mpmath.polygamma(3, x),
     G),
    ("erfinv", S.erfinv, mpmath.erfinv, np.array([-0.999, -0.5, 0.0, 1e-9, 0.3, 0.97])),
    ("i0", S.i0, lambda x: mpmath.besseli(0, x), B),
    ("i1", S.i1, lambda x: mpmath.besseli(1, x), np.r_[B, 0.0]),
    ("i0e", S.i0e, lambda x: mpmath.exp(-abs(x)) * mpmath.besseli(0, x), B),
    ("i1e", S.i1e, lambda x: mpmath.exp(-abs(x)) * mpmath.besseli(1, x), np.r_[B, 0.0]),
    ("zeta", lambda q: S.zeta(2.5, q), lambda q: mpmath.zeta(2.5, q), G),
    # spence' = log(x)/(1 - x), its series within 1/4 of 1 (the limit -1 at 1)
    ("spence", S.spence, lambda x: mpmath.polylog(2, 1 - x),
     np.array([1e-8, 0.3, 0.76, 0.9999, 1.0, 1.0 + 1e-9, 1.3, 10.0, 1e10])),
    # log_ndtr' = sqrt(2/pi)/erfcx(-x/sqrt(2)) left of 0 (never phi/Phi, both underflowing)
    ("log_ndtr", S.log_ndtr, lambda x: mpmath.log(mpmath.erfc(-x / mpmath.sqrt(2)) / 2),
     # (none above 2: scipy's log_ndtr(x) is up to 33 ulp off there, 4 at 3, 17 at 6, 33 at
     # 10; its derivative here is exact: tests/cases_tails.py)
     np.array([-1e4, -300.0, -40.0, -7.0, -1.0, 0.0, 0.5, 2.0])),
]


def _mp_at(fn, x, n):
    x = mpmath.mpf(float(x))
    if n and x == 0:  # (mpmath.diff of exp(-|x|) ... steps across the kink at 0)
        return float(mpmath.diff(fn, x, n, direction=1) + mpmath.diff(fn, x, n, direction=-1)) / 2
    return float(mpmath.diff(fn, x, n))


@pytest.mark.parametrize("name,fn,exact,points", NEW, ids=[u[0] for u in NEW])
def test_special_functions_and_two_derivatives_match_mpmath(name, fn, exact, points):
    value = sg.jit(fn, backend="numpy")(points)
    d1 = sg.vmap(sg.grad(fn, backend="numpy"))(points)
    d2 = sg.vmap(sg.grad(sg.grad(fn, backend="numpy"), backend="numpy"))(points)
    if name not in ("polygamma1", "polygamma3", "gammaln", "gamma"):  # (libm's, not scipy's)
        np.testing.assert_array_equal(value, fn(points))  # scipy's values themselves
    for k, x in enumerate(points):
        # (scipy's own accuracy: up to 3 ulp for polygamma(3, .) and i0e here; 4 allowed)
        np.testing.assert_allclose(value[k], _mp_at(exact, x, 0), rtol=4 * 2.0 ** -52,
                                   atol=1e-300)
        # i0e', i1e' are differences of nearby values: their rounding is the cancellation's
        rtol = 2e-14 if name in ("i0e", "i1e") else 1e-14
        np.testing.assert_allclose(d1[k], _mp_at(exact, x, 1), rtol=rtol, atol=1e-15)
        if name in ("i0e", "i1e") and x == 0:
            continue  # the kink of exp(-|x|): sign(0) = 0 gives the mean of both sides' d1
        np.testing.assert_allclose(d2[k], _mp_at(exact, x, 2), rtol=1e-12, atol=1e-13)


def test_beta_and_betaln_gradients_in_both_arguments_match_mpmath():
    a = np.array([0.3, 1.5, 4.0, 20.0])
    b = np.array([2.0, 0.7, 4.0, 0.5])
    f = sg.grad(lambda a, b: np.sum(S.beta(a, b) * 0.5 + S.betaln(a, b)), argnums=(0, 1),
                backend="numpy")
    ga, gb = f(a, b)
    def h(u, v):
        return mpmath.beta(u, v) / 2 + mpmath.log(mpmath.beta(u, v))

    for k in range(len(a)):
        am, bm = mpmath.mpf(a[k]), mpmath.mpf(b[k])
        da, db = mpmath.diff(h, (am, bm), (1, 0)), mpmath.diff(h, (am, bm), (0, 1))
        np.testing.assert_allclose(ga[k], float(da), rtol=1e-13)
        np.testing.assert_allclose(gb[k], float(db), rtol=1e-13)


def test_numba_kernel_calls_libm_lgamma_and_cuts_around_scipy():
    # gammaln is libm's lgamma in the kernel (the interpreter calls libm too: the same
    # bits); its derivative digamma runs scipy's ufunc between two kernels
    x = np.array([0.3, 1.0 + 1e-9, 2.0 - 1e-9, 7.5, -2.5])
    f = sg.value_and_grad(lambda x: np.sum(S.gammaln(x) * np.sin(x)))
    value, g = f(x)
    want_g = [float(mpmath.digamma(v) * mpmath.sin(v) + mpmath.log(abs(mpmath.gamma(v)))
                    * mpmath.cos(v)) for v in map(mpmath.mpf, x)]
    np.testing.assert_allclose(g, want_g, rtol=1e-14)
    assert value == sg.value_and_grad(lambda x: np.sum(S.gammaln(x) * np.sin(x)),
                                      backend="numpy")(x)[0]
    source = f.source(x)
    assert "math.lgamma(" in source and "digamma : runs in Python between the kernels" in source


def test_gammaln_at_infinities_is_scipys_and_lgamma_pytorchs():
    # libm's lgamma(-inf) is inf (PyTorch's lgamma too), scipy's gammaln(-inf) is -inf
    x = np.array([-np.inf, np.inf, -2.0, 0.0, -0.0, np.nan, 1e-310])
    np.testing.assert_array_equal(sg.jit(S.gammaln, backend="numpy")(x), [
        -np.inf, np.inf, np.inf, np.inf, np.inf, np.nan, float(-mpmath.log(1e-310))])
    g = sg.grad(lambda x: np.sum(S.gammaln(x)), backend="numpy")(x[[0, 1, 2]])
    np.testing.assert_array_equal(g, S.digamma(x[[0, 1, 2]]))  # nan, inf, nan
    np.testing.assert_array_equal(sg.Tensor(x[:2]).lgamma().numpy(), [np.inf, np.inf])
    # sg.scipy.special's gammaln is scipy's too (it was the primitive's inf)
    np.testing.assert_array_equal(sg.jit(sg.scipy.special.gammaln, backend="numpy")(x[:2]),
                                  [-np.inf, np.inf])


def test_sg_scipy_special_has_scipy_signatures():
    x = np.array([[0.5, -1.0, 2.0], [3.0, 0.1, -0.4]])
    b = np.array([1.0, 0.0, 2.5])
    special = sg.scipy.special
    for args in [dict(), dict(axis=0), dict(axis=1, keepdims=True), dict(b=b, axis=1),
                 dict(b=-b, return_sign=True)]:
        got = sg.jit(lambda x, a=args: special.logsumexp(x, **a), backend="numpy")(x)
        want = S.logsumexp(x, **args)
        np.testing.assert_allclose(got, want, rtol=1e-15)
    np.testing.assert_allclose(special.softmax(x), S.softmax(x), rtol=1e-15)
    np.testing.assert_allclose(special.log_softmax(x, axis=0), S.log_softmax(x, axis=0),
                               rtol=1e-15)
    # the gradient in b, also where b == 0: exp(a - logsumexp)
    gb = sg.grad(lambda b: special.logsumexp(x[0], b=b), backend="numpy")(b)
    np.testing.assert_allclose(gb, np.exp(x[0] - S.logsumexp(x[0], b=b)), rtol=1e-15)
    np.testing.assert_allclose(special.polygamma(2, x[1] + 1.0), S.polygamma(2, x[1] + 1.0),
                               rtol=1e-15)
    # the largest entry with weight 0 (scipy shifts by the largest of nonzero weight): its
    # size must not matter, inf included; JAX's gradient in a is then (0, 1)
    w = np.array([0.0, 1.0, 1.0])
    for big in (1000.0, 745.0, np.inf):
        a = np.array([[big, 1.0, 2.0], [1.0, 2.0, 3.0]])
        got = sg.jit(lambda a: special.logsumexp(a, b=w, axis=1), backend="numpy")(a)
        np.testing.assert_allclose(got, S.logsumexp(a, b=w, axis=1), rtol=1e-15)
    ga = sg.grad(lambda a: special.logsumexp(a, b=np.array([0.0, 1.0])), backend="numpy")(
        np.array([1000.0, 1.0]))
    np.testing.assert_array_equal(ga, [0.0, 1.0])


@pytest.mark.parametrize("call,name", [
    (lambda x: S.logsumexp(x), "sg.scipy.special.logsumexp"),
    (lambda x: S.softmax(x)[0], "sg.scipy.special.softmax"),
    (lambda x: np.sum(S.polygamma(1, x)), "sg.scipy.special.polygamma"),
])
def test_scipy_python_functions_on_traced_values_name_sg_scipy(call, name):
    with pytest.raises(sg.TracerConversionError, match=re.escape(f"Call {name} instead")):
        sg.grad(call, backend="numpy")(np.array([0.5, 1.5]))


def test_zeta_refuses_a_traced_exponent_and_riemann():
    with pytest.raises(sg.UnsupportedFunctionError, match="in q only"):
        sg.grad(lambda s: np.sum(S.zeta(s, 2.0)), backend="numpy")(np.array([2.5]))
    with pytest.raises(sg.UnsupportedFunctionError, match="Riemann"):
        sg.grad(lambda s: sg.scipy.special.zeta(s), backend="numpy")(2.5)


def test_tensors_take_scipy_special_with_double_backward():
    # the eager layer computes a host primitive as any other (its impl); create_graph
    # differentiates digamma into polygamma(1, .)
    x = sg.tensor([0.5, 1.5, 3.0], requires_grad=True)
    (g,) = sg.autograd.grad(S.gammaln(x).sum(), x, create_graph=True)
    (h,) = sg.autograd.grad(g.sum(), x)
    for k, v in enumerate([0.5, 1.5, 3.0]):
        assert float(g.detach().numpy()[k]) == pytest.approx(float(mpmath.digamma(v)), rel=1e-14)
        assert float(h.numpy()[k]) == pytest.approx(float(mpmath.polygamma(1, v)), rel=1e-14)
