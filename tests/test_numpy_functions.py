"""numpy's functions of issue 18 beyond the test table: every one named there traces, the
tails and special points of the new elementwise functions, and what is refused.

The table (``cases_numpy.py``, ``cases_decompositions.py``) checks values and gradients
against SymPy or finite differences on both backends; the conventions at special points
are rows of ``test_conventions.py``.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

import symgrad as sg

from oracle import assert_close, finite_differences

BACKEND = "numpy"

# away from kinks and jumps (0, 0.5, multiples of 0.7): finite differences apply
M = np.array([[2.2, 0.6, 0.1], [0.3, 1.5, -0.2], [-0.3, 0.4, 3.0]])
S = M @ M.T
V = np.array([0.3, -1.2, 0.7])

# the issue's two lists, each as a function of a traced matrix or vector
ISSUE_18 = {
    "zeros_like": lambda m: np.zeros_like(m) + m, "ones_like": lambda m: np.ones_like(m) * m,
    "full_like": lambda m: np.full_like(m, 2.0) * m, "log2": lambda m: np.log2(1.0 + m * m),
    "log10": lambda m: np.log10(1.0 + m * m), "exp2": np.exp2, "cbrt": np.cbrt,
    "arcsinh": np.arcsinh, "arccosh": lambda m: np.arccosh(2.0 + m * m),
    "arctanh": lambda m: np.arctanh(m / 4.0), "diag": np.diag, "diagonal": np.diagonal,
    "triu": np.triu, "tril": np.tril, "tensordot": lambda m: np.tensordot(m, m),
    "kron": lambda m: np.kron(m, m), "cumprod": np.cumprod, "sort": np.sort,
    "average": np.average, "ptp": np.ptp, "linalg.cholesky": lambda m: np.linalg.cholesky(S + m),
    "linalg.eigh": lambda m: np.linalg.eigh(S + m)[0], "linalg.qr": lambda m: np.linalg.qr(m)[1],
    "linalg.svd": lambda m: np.linalg.svd(m)[1], "linalg.lstsq": lambda m: np.linalg.lstsq(m, V)[0],
    "linalg.pinv": np.linalg.pinv,
    # the HIPS autograd list
    "array": lambda m: np.array([m[0, 0], m[1, 1]]),
    "einsum ...": lambda m: np.einsum("...i->...", m),
    "einsum sublists": lambda m: np.einsum(m, [0, 1], m, [1, 2]),
    "einsum 3 operands": lambda m: np.einsum("ij,jk,kl", m, m, m), "ndim": lambda m: m * np.ndim(m),
    "shape": lambda m: m * np.shape(m)[0], "r_": lambda m: np.r_[m[0], m[1]],
    "c_": lambda m: np.c_[m[0], m[1]], "remainder": lambda m: np.remainder(m, 0.7),
    "mod": lambda m: np.mod(m, 0.7), "//": lambda m: (m // 0.7) * m,
    "norm nuc": lambda m: np.linalg.norm(m, "nuc"), "norm ord 3": lambda m: np.linalg.norm(m[0], 3),
    "gradient": lambda m: np.gradient(m, axis=0), "deg2rad": np.deg2rad, "degrees": np.degrees,
    "rad2deg": np.rad2deg, "radians": np.radians, "hsplit": lambda m: np.hsplit(m, 3)[1],
    "vsplit": lambda m: np.vsplit(m, 3)[1], "dsplit": lambda m: np.dsplit(m[None], 3)[2],
    "linalg.eig": lambda m: np.linalg.eig(S + m)[0],
    "linspace": lambda m: np.linspace(m[0], m[1], 4),
    "nan_to_num": np.nan_to_num, "rot90": np.rot90, "sinc": np.sinc, "atleast_3d": np.atleast_3d,
    "cross": lambda m: np.cross(m[0], m[1]), "fabs": np.fabs, "fmax": lambda m: np.fmax(m, m.T),
    "fmin": lambda m: np.fmin(m, m.T), "logaddexp2": lambda m: np.logaddexp2(m, m.T),
    "partition": lambda m: np.partition(m, 1), "rollaxis": lambda m: np.rollaxis(m, 1),
    "select": lambda m: np.select([m > 0.5, m < 0.0], [m, m * m], 1.0),
}


@pytest.mark.parametrize("name", sorted(ISSUE_18))
def test_every_function_the_issue_names_is_differentiated(name):
    """Traced and differentiated (checked against finite differences here; the table
    checks each against SymPy or finite differences on both backends)."""
    fn = ISSUE_18[name]
    ct = np.cos(np.arange(np.size(fn(M)), dtype=float)).reshape(np.shape(fn(M)))
    got = sg.grad(fn, backend=BACKEND)(M, gradient=ct if np.ndim(fn(M)) else None)
    want = finite_differences(fn, [M], 0, ct if np.ndim(fn(M)) else None)
    assert_close(got, want, rtol=1e-6, atol=1e-7, what=name)


def _derivative(formula, x: float) -> float:
    """A derivative formula evaluated by mpmath at 50 digits."""
    mpmath.mp.dps = 50
    return float(formula(mpmath.mpf(x)))


@pytest.mark.parametrize("name, fn, derivative, xs", [
    ("arcsinh", np.arcsinh, lambda x: 1 / mpmath.sqrt(1 + x * x),
     [-1e200, -3.0, 1e-300, 2.5, 1e300]),
    ("arccosh", np.arccosh, lambda x: 1 / mpmath.sqrt(x * x - 1), [1.0 + 1e-12, 1.5, 1e200]),
    ("arctanh", np.arctanh, lambda x: 1 / (1 - x * x), [-1 + 1e-12, 1e-300, 0.999999]),
    ("cbrt", np.cbrt, lambda x: 1 / (3 * mpmath.cbrt(abs(x)) ** 2), [-1e300, -8.0, 1e-300, 27.0]),
    ("log2", np.log2, lambda x: 1 / (x * mpmath.log(2)), [1e-300, 1.0, 1e300]),
    ("exp2", np.exp2, lambda x: mpmath.power(2, x) * mpmath.log(2), [-1000.0, 0.5, 1000.0]),
    ("sinc", np.sinc, lambda x: mpmath.diff(lambda t: mpmath.sinc(mpmath.pi * t), x),
     [-3e-8, 1e-5, 0.1591, 0.2, 2.5]),
])
def test_tails_and_small_arguments_against_mpmath(name, fn, derivative, xs):
    """No overflow in the derivative formulas (1/hypot(1, x), sqrt(x - 1) sqrt(x + 1)), and
    sinc's series where its formula would cancel."""
    got = sg.grad(lambda x: np.sum(fn(x)), backend=BACKEND)(np.array(xs))
    want = [_derivative(derivative, x) for x in xs]
    assert_close(got, want, rtol=1e-13, atol=0.0, what=name)


def test_remainder_of_a_negative_divisor_follows_numpy():
    x, y = np.array([7.5, -7.5, 7.5]), np.array([-2.0, -2.0, 2.0])
    value, (gx, gy) = sg.value_and_grad(lambda x, y: np.sum(x % y), argnums=(0, 1),
                                        backend=BACKEND)(x, y)
    assert value == np.sum(np.remainder(x, y))
    assert_close(gx, [1.0, 1.0, 1.0])
    assert_close(gy, -np.floor_divide(x, y))


def test_sg_array_builds_from_nested_lists():
    f = lambda x, y: np.sum(sg.array([[x, y], [x * y, 1.0]]) ** 2)  # noqa: E731
    got = sg.grad(f, argnums=(0, 1), backend=BACKEND)(2.0, 3.0)
    assert_close(got, (2 * 2 + 2 * 6 * 3, 2 * 3 + 2 * 6 * 2))
    with pytest.raises(sg.ShapeError, match="different shapes"):
        sg.grad(lambda x: np.sum(sg.array([x, x[:2]])), backend=BACKEND)(V)


@pytest.mark.parametrize("fn, match", [
    (lambda x: np.argpartition(x, 1), "np.argpartition.*np.argsort"),
    (lambda x: np.asarray(np.concatenate([x] * 40)), "120 elements.*np.stack"),
    (lambda x: np.partition(x, 5), "out of bounds"),
    (lambda x: np.sort(x, order="a"), "structured"),
])
def test_refusals_say_what_to_do(fn, match):
    with pytest.raises((sg.UnsupportedFunctionError, ValueError), match=match):
        sg.grad(lambda x: np.sum(fn(x)), backend=BACKEND)(V)


def test_average_with_weights_that_sum_to_zero():
    with pytest.raises(ZeroDivisionError):
        sg.grad(lambda x: np.average(x, weights=np.array([1.0, -1.0, 0.0])), backend=BACKEND)(V)
    # traced weights cannot be checked while tracing: the result is inf or nan, as x / 0
    value = sg.jit(lambda x, w: np.average(x, weights=w), backend=BACKEND)(V, np.zeros(3))
    assert not np.isfinite(value)


@pytest.mark.filterwarnings("ignore:Arrays of 2-dimensional vectors are deprecated")
@pytest.mark.parametrize("sa, sb", [((2, 2), (2,)), ((2, 2), (3,)), ((2, 3), (2,))])
def test_cross_of_two_vectors(sa, sb):
    """numpy's 2-vector forms (deprecated in numpy 2, still computed): the z component,
    or the cross product with a zero z."""
    rng = np.random.default_rng(len(sa) + 10 * sb[0])
    a, b = rng.uniform(-1, 1, sa), rng.uniform(-1, 1, sb)
    f = lambda a, b: np.cross(a, b)  # noqa: E731
    ct = rng.uniform(-1, 1, np.shape(f(a, b)))
    value, grads = sg.value_and_grad(f, argnums=(0, 1), backend=BACKEND)(a, b, gradient=ct)
    assert_close(value, f(a, b), rtol=1e-15)
    for k in (0, 1):
        assert_close(grads[k], finite_differences(f, [a, b], k, ct), rtol=1e-6, atol=1e-8)
