"""sg.scipy.stats (symgrad/numpy_api/scipy_stats.py) against scipy.stats itself: the
values, and the gradients in the data and in every parameter against central
differences of scipy's own functions; scipy.stats called on a traced value names
sg.scipy.stats's function. Interpreter only (compositions of tested primitives)."""

from __future__ import annotations

import re

import mpmath
import numpy as np
import pytest
import scipy.stats as st

import symgrad as sg

ss = sg.scipy.stats

# (name, sg function, scipy function, arguments): every argument is differentiated
CASES = [
    ("norm.logpdf", ss.norm.logpdf, st.norm.logpdf, ([-1.3, 0.2, 2.5], 0.3, 1.7)),
    ("norm.pdf", ss.norm.pdf, st.norm.pdf, ([-1.3, 0.2, 2.5], 0.3, 1.7)),
    ("norm.cdf", ss.norm.cdf, st.norm.cdf, ([-3.3, 0.2, 2.5], 0.3, 1.7)),
    ("norm.logcdf", ss.norm.logcdf, st.norm.logcdf, ([-30.0, -8.0, 0.2, 9.0], 0.3, 1.2)),
    ("norm.sf", ss.norm.sf, st.norm.sf, ([-3.3, 0.2, 2.5], 0.3, 1.7)),
    ("norm.logsf", ss.norm.logsf, st.norm.logsf, ([-9.0, 0.2, 30.0], 0.3, 1.2)),
    ("t.logpdf", ss.t.logpdf, st.t.logpdf, ([-4.0, 0.1, 2.2], 3.5, -0.2, 1.4)),
    ("t.pdf", ss.t.pdf, st.t.pdf, ([-4.0, 0.1, 2.2], 7.0)),
    ("gamma.logpdf", ss.gamma.logpdf, st.gamma.logpdf, ([0.3, 1.5, 6.0], 2.5, 0.1, 1.3)),
    ("gamma.pdf", ss.gamma.pdf, st.gamma.pdf, ([0.3, 1.5, 6.0], 0.7)),
    ("beta.logpdf", ss.beta.logpdf, st.beta.logpdf, ([0.05, 0.4, 0.93], 2.5, 0.8)),
    ("beta.pdf", ss.beta.pdf, st.beta.pdf, ([0.2, 1.1, 2.5], 1.5, 3.0, 0.1, 3.0)),
    # b == 1: (b - 1) log1p(-x)'s b-derivative at b - 1 == 0 (xlog1py's x-partial there)
    ("beta.logpdf-b1", ss.beta.logpdf, st.beta.logpdf, ([0.05, 0.4, 0.93], 2.0, 1.0)),
    ("poisson.logpmf", ss.poisson.logpmf, st.poisson.logpmf, ([0.0, 2.0, 7.0], 3.3)),
    ("poisson.pmf", ss.poisson.pmf, st.poisson.pmf, ([0.0, 2.0, 7.0], 0.4)),
    ("binom.logpmf", ss.binom.logpmf, st.binom.logpmf, ([0.0, 3.0, 10.0], 10.0, 0.35)),
    ("binom.pmf", ss.binom.pmf, st.binom.pmf, ([1.0, 4.0], 6.0, 0.6)),
]
DISCRETE_FIRST = ("poisson", "binom")  # the count and n are not differentiated


def _fd(fn, args, k, h=1e-6):
    args = [np.array(a, dtype=float) for a in args]
    x = args[k]
    grad = np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        step = h * max(1.0, abs(float(x[idx])))
        up, down = [a.copy() for a in args], [a.copy() for a in args]
        up[k][idx] += step
        down[k][idx] -= step
        grad[idx] = (np.sum(fn(*up)) - np.sum(fn(*down))) / (2 * step)
    return grad


@pytest.mark.parametrize("name,mine,theirs,args", CASES, ids=[c[0] for c in CASES])
def test_values_and_gradients_match_scipy(name, mine, theirs, args):
    args = [np.array(a, dtype=float) for a in args]
    np.testing.assert_allclose(sg.jit(mine, backend="numpy")(*args), theirs(*args),
                               rtol=1e-13, atol=1e-300)
    wrt = tuple(k for k in range(len(args))
                if not (name.startswith(DISCRETE_FIRST) and k in (0, 1) and
                        not (name.startswith("poisson") and k == 1)))
    grads = sg.grad(lambda *a: np.sum(mine(*a)), argnums=wrt, backend="numpy")(*args)
    for k, g in zip(wrt, grads):
        np.testing.assert_allclose(g, _fd(theirs, args, k), rtol=2e-6, atol=1e-8,
                                   err_msg=f"{name}: d/d argument {k}")


def test_outside_the_support_is_scipys_minus_inf_with_zero_gradient():
    x = np.array([-0.5, 0.0, 0.5, 1.0, 1.5])
    np.testing.assert_array_equal(ss.beta.logpdf(x, 2.0, 3.0), st.beta.logpdf(x, 2.0, 3.0))
    np.testing.assert_array_equal(ss.gamma.logpdf(x, 2.0), st.gamma.logpdf(x, 2.0))
    k = np.array([-1.0, 2.5, 3.0, 11.0])
    np.testing.assert_allclose(ss.binom.logpmf(k, 10.0, 0.3), st.binom.logpmf(k, 10, 0.3),
                               rtol=1e-14)
    np.testing.assert_allclose(ss.poisson.pmf(k, 2.0), st.poisson.pmf(k, 2.0), rtol=1e-14)
    g = sg.grad(lambda p: np.sum(ss.binom.pmf(k, 10.0, p)), backend="numpy")(0.3)
    # (the pmf at k = 3 is at its maximum in p = 0.3: the differences' noise is 1e-10)
    np.testing.assert_allclose(g, _fd(lambda p: st.binom.pmf(k, 10, p), [0.3], 0), rtol=1e-6,
                               atol=1e-9)


@pytest.mark.parametrize("mine, theirs", [
    (lambda s, k: s.poisson.logpmf(k, -1.0), lambda k: st.poisson.logpmf(k, -1.0)),
    (lambda s, k: s.binom.logpmf(k, 2.5, 0.3), lambda k: st.binom.logpmf(k, 2.5, 0.3)),
    (lambda s, k: s.binom.logpmf(k, 3, 1.5), lambda k: st.binom.logpmf(k, 3, 1.5)),
    (lambda s, k: s.gamma.logpdf(k, -1.0), lambda k: st.gamma.logpdf(k, -1.0)),
    (lambda s, k: s.gamma.logpdf(k, 2.0, scale=-1.0), lambda k: st.gamma.logpdf(k, 2.0,
                                                                                scale=-1.0)),
    (lambda s, k: s.beta.logpdf(k / 4, 0.0, 2.0), lambda k: st.beta.logpdf(k / 4, 0.0, 2.0)),
    (lambda s, k: s.t.logpdf(k, -2.0), lambda k: st.t.logpdf(k, -2.0)),
    (lambda s, k: s.norm.logcdf(k, scale=-1.0), lambda k: st.norm.logcdf(k, scale=-1.0)),
], ids=["poisson-mu", "binom-n", "binom-p", "gamma-a", "gamma-scale", "beta-a", "t-df",
        "norm-scale"])
def test_parameters_outside_the_domain_give_scipys_nan(mine, theirs):
    k = np.array([0.0, 1.0, 2.0, 3.0])
    got = sg.jit(lambda k: mine(sg.scipy.stats, k), backend="numpy")(k)
    np.testing.assert_array_equal(got, theirs(k))


@pytest.mark.parametrize("x, mean, cov", [
    ([0.1, 0.7, 0.2], 0.5, 2.0),  # dimension 1 (mean's size): three points (review f13)
    ([0.1, 0.7], None, 1.0), (0.3, None, 2.0), ([[0.1], [0.7]], [0.5], [[2.0]]),
    ([0.1, 0.7], [0.0, 1.0], [1.0, 2.0]), ([[0.1, 0.7]], [0.0, 1.0], 1.5),
    ([[[0.1, 0.7], [1.0, 2.0]]], None, [[2.0, 0.3], [0.3, 1.0]]),
], ids=lambda v: str(np.shape(v)))
def test_multivariate_normal_infers_dimension_and_shape_as_scipy(x, mean, cov):
    x = np.asarray(x, dtype=float)
    got = sg.jit(lambda x: ss.multivariate_normal.logpdf(x, mean, cov), backend="numpy")(x)
    want = st.multivariate_normal.logpdf(x, mean, cov)
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-13)


def test_multivariate_normal_refuses_what_scipy_refuses():
    for mean, cov in ((None, [1.0, 2.0]), ([0.0, 1.0], np.eye(3))):
        with pytest.raises(ValueError):
            st.multivariate_normal.logpdf(np.zeros(2), mean, cov)
        with pytest.raises((ValueError, sg.ShapeError)):
            sg.jit(lambda x, m=mean, c=cov: ss.multivariate_normal.logpdf(x, m, c),
                   backend="numpy")(np.zeros(2))


def test_large_parameters_keep_their_digits_against_mpmath():
    """t.logpdf at df = 1e8, 1e15 and binom.logpmf at n = 1e15: differences of gammaln
    cancelled there (+1.9 for -1.16; 4.0 off); betaln does not (the review's f03). scipy's
    own binom.logpmf loses these digits (-4.44 for -1.90 at k = 1), so mpmath decides."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 50
    for df in (1e8, 1e15):
        d = mpmath.mpf(df)
        want = (mpmath.loggamma((d + 1) / 2) - mpmath.loggamma(d / 2)
                - mpmath.log(mpmath.sqrt(d * mpmath.pi)) - (d + 1) / 2 * mpmath.log1p(0.49 / d))
        got = sg.jit(lambda d: ss.t.logpdf(0.7, d), backend="numpy")(df)
        np.testing.assert_allclose(got, float(want), rtol=1e-14)
    n, p, ks = mpmath.mpf(10) ** 15, mpmath.mpf(3e-15), [0.0, 1.0, 3.0, 10.0]
    want = [float(mpmath.log(mpmath.binomial(n, k)) + k * mpmath.log(p)
                  + (n - k) * mpmath.log1p(-p)) for k in ks]
    got = sg.jit(lambda k: ss.binom.logpmf(k, 1e15, 3e-15), backend="numpy")(np.array(ks))
    np.testing.assert_allclose(got, want, rtol=1e-13)


def test_multivariate_normal_gradients_in_x_mean_and_cov():
    x = np.array([[0.2, -0.3, 1.0], [1.1, 0.5, -0.7]])
    mean = np.array([0.1, 0.0, 0.4])
    a = np.array([[1.0, 0.2, 0.0], [0.3, 1.5, 0.1], [-0.2, 0.4, 0.9]])
    cov = a @ a.T + 0.5 * np.eye(3)
    np.testing.assert_allclose(ss.multivariate_normal.logpdf(x, mean, cov),
                               st.multivariate_normal.logpdf(x, mean, cov), rtol=1e-13)
    np.testing.assert_allclose(ss.multivariate_normal.pdf(x[0], mean, 2.0),
                               st.multivariate_normal.pdf(x[0], mean, 2.0), rtol=1e-13)
    np.testing.assert_allclose(ss.multivariate_normal.logpdf(x, np.zeros(3), np.diag(cov)),
                               st.multivariate_normal.logpdf(x, np.zeros(3), np.diag(cov)),
                               rtol=1e-13)
    grads = sg.grad(lambda x, m, c: np.sum(ss.multivariate_normal.logpdf(x, m, c)),
                    argnums=(0, 1, 2), backend="numpy")(x, mean, cov)
    # scipy's logpdf reads a symmetric cov; the oracle symmetrizes each perturbation so
    # that both off-diagonal halves move together, and splits the gradient the same way
    def scipy_sym(x, m, c):
        return st.multivariate_normal.logpdf(x, m, (c + c.T) / 2)
    for k, g in enumerate(grads):
        want = _fd(scipy_sym, [x, mean, cov], k)
        if k == 2:
            g = (g + g.T) / 2
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)


def test_dirichlet_gradients_in_x_and_alpha():
    x = np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]).T  # components along the first axis
    alpha = np.array([1.5, 2.0, 3.0])
    np.testing.assert_allclose(ss.dirichlet.logpdf(x, alpha), st.dirichlet.logpdf(x, alpha),
                               rtol=1e-13)
    np.testing.assert_allclose(ss.dirichlet.pdf(x[:, 0], alpha), st.dirichlet.pdf(x[:, 0], alpha),
                               rtol=1e-13)
    ga = sg.grad(lambda a: np.sum(ss.dirichlet.logpdf(x, a)), backend="numpy")(alpha)
    np.testing.assert_allclose(ga, _fd(lambda a: st.dirichlet.logpdf(x, a), [alpha], 0),
                               rtol=1e-6)
    # in x: scipy checks that x sums to 1, so its differences cannot move one component;
    # the partial derivatives are (alpha - 1) / x
    gx = sg.grad(lambda x: np.sum(ss.dirichlet.logpdf(x, alpha)), backend="numpy")(x)
    np.testing.assert_allclose(gx, (alpha[:, None] - 1.0) / x, rtol=1e-14)


def test_log_ndtr_far_tail_matches_mpmath():
    z = np.array([-1e5, -300.0, -40.0, -20.5, -19.5, -5.0, 0.0, 5.5, 6.5, 40.0])
    with mpmath.workdps(50):
        exact = [float(mpmath.log(mpmath.ncdf(mpmath.mpf(v)))) for v in z]
    # (erfc(z/sqrt(2)) carries the rounding of z/sqrt(2) times z**2: 6.6e-15 at z = 6.5,
    # as scipy's own log_ndtr)
    np.testing.assert_allclose(sg.scipy.stats.norm.logcdf(z), exact, rtol=1e-14)
    g = sg.vmap(sg.grad(ss.norm.logcdf, backend="numpy"))(z)
    # d/dz log ndtr(z) = pdf(z)/cdf(z)
    with mpmath.workdps(50):
        want = [float(mpmath.npdf(mpmath.mpf(v)) / mpmath.ncdf(mpmath.mpf(v))) for v in z]
    np.testing.assert_allclose(g, want, rtol=1e-13)


@pytest.mark.parametrize("call,hint", [
    (lambda x: np.sum(st.norm.logpdf(x, 0.1, 2.0)), "Call sg.scipy.stats.norm.logpdf instead"),
    (lambda x: np.sum(st.gamma.logpdf(x, 2.0)), "Call sg.scipy.stats.gamma.logpdf instead"),
    (lambda x: np.sum(st.t.cdf(x, 3.0)), "scipy.stats.t.cdf that needed the value"),
    (lambda x: np.sum(st.cauchy.logpdf(x)), "symgrad has no version of it"),
])
def test_scipy_stats_on_a_traced_value_names_sg_scipy_stats(call, hint):
    with pytest.raises(sg.TracerConversionError, match=re.escape(hint)):
        sg.grad(call, backend="numpy")(np.array([0.5, 1.5]))


def test_refused_distribution_functions_say_why():
    with pytest.raises(sg.UnsupportedFunctionError, match="incomplete beta"):
        ss.t.cdf(0.3, 2.0)


def test_log_ndtr_in_float32_does_not_underflow():
    """float32's ndtr underflows from z = -13 on: the series takes over at -10 there (it
    gave -inf down to -20, where the float64 switch is)."""
    z = np.array([-9.9, -10.1, -13.0, -15.0, -18.0, -19.5, -25.0, -3.0, 2.0], np.float32)
    got = sg.jit(lambda v: sg.scipy.stats.norm.logcdf(v))(z)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, st.norm.logcdf(z.astype(np.float64)), rtol=1e-6)
