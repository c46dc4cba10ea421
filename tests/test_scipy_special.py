"""scipy.special on traced values (symgrad/numpy_api/scipy_special.py) against mpmath at
50 digits: values, first and second derivatives; one Numba run; the error for the
functions symgrad does not differentiate."""

from __future__ import annotations

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
    x = np.array([0.0, 0.0, 1.5, -2.0, 3.0])
    y = np.array([-1.0, 2.0, 1e-10, 0.5, -0.9])
    gx, gy = sg.grad(lambda x, y: np.sum(S.xlog1py(x, y)), argnums=(0, 1),
                     backend="numpy")(x, y)
    np.testing.assert_allclose(sg.jit(S.xlog1py, backend="numpy")(x, y), S.xlog1py(x, y),
                               rtol=1e-15)
    for k in range(len(x)):
        if x[k] == 0.0:  # xlogy's convention: both partial derivatives 0 (PyTorch's too)
            assert gx[k] == 0.0 and gy[k] == 0.0
            continue
        xm, ym = mpmath.mpf(x[k]), mpmath.mpf(y[k])
        np.testing.assert_allclose(gx[k], float(mpmath.log1p(ym)), rtol=1e-14)
        np.testing.assert_allclose(gy[k], float(xm / (1 + ym)), rtol=1e-14)


def test_numba_kernel_calls_libm_erf():
    f = sg.grad(lambda x: np.sum(S.erf(x) * S.erfc(x)))
    want = [2 / np.sqrt(np.pi) * np.exp(-v * v) * (float(mpmath.erfc(v)) - float(
        mpmath.erf(v))) for v in X]
    np.testing.assert_allclose(f(X), want, rtol=1e-14, atol=1e-300)
    assert "import math" in f.source(X) and "math.erf(" in f.source(X)


def test_unsupported_scipy_special_names_scipy_and_the_way_out():
    with pytest.raises(sg.UnsupportedFunctionError,
                       match=r"scipy\.special\.gammaln is not supported.*pure_callback"):
        sg.grad(lambda x: np.sum(S.gammaln(x)), backend="numpy")(X)
