"""scipy.special's functions of complex values, where scipy has a complex loop: ``gamma``,
``psi``, ``ndtr``, ``loggamma``, ``rgamma``, ``erfi``, ``erfcx``, ``dawsn``, ``exp1``,
``expi`` (``erf`` and ``erfc`` are tests/test_complex_order.py's), and the complex
``polygamma`` their derivatives need (scipy's is real only).

Oracles: scipy's own values (bit for bit, both backends, complex128 and complex64);
mpmath at 30 digits for the first and second holomorphic derivatives (``mpmath.diff`` of
mpmath's function: no formula of symgrad's in it) and for ``polygamma``; central finite
differences of scipy's functions for the gradients of real-valued functions (JAX's
convention: ``df/dx - i df/dy``) on both backends. The SymPy table (50 digits, first and
second order) has a case of each in tests/cases_complex.py, the real ones in
tests/cases_stable.py and tests/cases_tails.py.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as ss

import symgrad as sg
from symgrad.prims.complex_polygamma import complex_polygamma

mpmath = pytest.importorskip("mpmath")
mp = mpmath


def _ndtr(w):
    return mp.erfc(-w / mp.sqrt(2)) / 2


#: name: (scipy's ufunc, mpmath's function)
FUNCTIONS = {
    "gamma": (ss.gamma, mp.gamma),
    "psi": (ss.psi, mp.digamma),
    "ndtr": (ss.ndtr, _ndtr),
    "loggamma": (ss.loggamma, mp.loggamma),
    "rgamma": (ss.rgamma, mp.rgamma),
    "erfi": (ss.erfi, mp.erfi),
    "erfcx": (ss.erfcx, lambda w: mp.exp(w * w) * mp.erfc(w)),
    "dawsn": (ss.dawsn, lambda w: mp.sqrt(mp.pi) / 2 * mp.exp(-w * w) * mp.erfi(w)),
    "exp1": (ss.exp1, mp.e1),
    "expi": (ss.expi, mp.ei),
}
#: points of every function, and each one's own: near the poles of gamma and psi (and the
#: zeros of rgamma), both sides of loggamma's branch cut (its derivative psi is the same),
#: large imaginary parts, psi's reflection left of 1/2
Z = np.array([1.5 + 0.5j, -0.3 + 1.2j, -2.7 - 0.4j, 3.0 - 2.0j, 0.2 - 3.0j])
NEAR = {
    "gamma": [-3.0 + 1e-6j, 2.0 + 30.0j, -10.5 + 0.25j],
    "psi": [-3.0 + 1e-6j, -20.5 + 5.0j, 1e-8 + 1e-8j, 4.0 + 25.0j],
    "loggamma": [-2.5 + 1e-9j, -2.5 - 1e-9j, 40.0 - 1.0j, 1e-3 + 0j],
    "rgamma": [-2.0 + 1e-7j, 1e-9 - 1e-9j, 0.0 + 0.0j],
    "ndtr": [-6.0 + 0.5j, 5.0 - 1.0j],
    "erfi": [4.0 + 0.5j],
    "erfcx": [8.0 + 1.0j, -2.0 + 3.0j],
    "dawsn": [8.0 - 1.0j, 0.1 + 4.0j],
    "exp1": [-2.0 + 1e-9j, -2.0 - 1e-9j, 30.0 + 5.0j],  # (both sides of its cut)
    "expi": [2.0 + 1e-9j, -3.0 - 1e-9j, 700.0 + 1.0j],
}


def _points(name):
    return np.concatenate([Z, NEAR.get(name, [])])


def _close(got, want, rtol):
    got, want = np.asarray(got), np.asarray(want, dtype=complex)
    assert np.all(np.abs(got - want) <= rtol * np.abs(want) + 1e-300), (got, want)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_values_are_scipys(name, backend):
    f, _ = FUNCTIONS[name]
    z = _points(name)
    for arg in (z, z.astype(np.complex64)):
        got, want = sg.jit(f, backend=backend)(arg), f(arg)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_first_and_second_derivatives_are_mpmaths(name):
    f, mf = FUNCTIONS[name]
    z = _points(name)
    d1 = np.diagonal(sg.jacrev(f, holomorphic=True, backend="numpy")(z))
    d1f = np.diagonal(sg.jacfwd(f, holomorphic=True, backend="numpy")(z))
    d2 = np.diagonal(sg.jacfwd(lambda x: np.diagonal(sg.jacrev(f, holomorphic=True,
                                                               backend="numpy")(x)),
                               holomorphic=True, backend="numpy")(z))
    with mp.workdps(30):
        want1 = [complex(mp.diff(mf, mp.mpc(w), 1)) for w in z]
        want2 = [complex(mp.diff(mf, mp.mpc(w), 2)) for w in z]
    # erfcx' = 2z erfcx - 2/sqrt(pi) and dawsn' = 1 - 2z dawsn of complex z cancel as |z|**2
    # (the real axis past 7 has a series: tests/cases_tails.py)
    rtol = 1e-11 if name in ("erfcx", "dawsn") else 1e-12
    _close(d1, want1, rtol)
    _close(d1f, want1, rtol)
    _close(d2, want2, 30 * rtol)


def test_complex_polygamma_is_mpmaths():
    rng = np.random.default_rng(28)
    z = np.concatenate([rng.uniform(-30, 30, 12) + 1j * rng.uniform(-30, 30, 12),
                        [0.5 + 0j, 1.0 + 0j, -0.5 + 1e-8j, -7.9999 + 1e-3j, 1e-10 + 1e-10j,
                         -2000.75 + 0.1j, 3.0 + 1e5j, -3.3 + 200.0j, 0.49 + 0.1j, -21.9 - 3.6j]])
    for n in (1, 2, 3, 5):
        got = complex_polygamma(n, z)
        with mp.workdps(30):
            want = [complex(mp.polygamma(n, mp.mpc(w))) for w in z]
        _close(got, want, 1e-13)
    assert complex_polygamma(1, np.complex64(2 + 1j)).dtype == np.complex64
    # the poles, as scipy's complex psi: nan
    poles = np.array([0j, -1 + 0j, -7 + 0j])
    assert np.all(np.isnan(ss.psi(poles))) and np.all(np.isnan(complex_polygamma(2, poles)))


def _loss(z):
    return (np.sum(np.abs(ss.gamma(z)) ** 2) + np.sum(np.real(ss.psi(z) * (1 - 2j)))
            + np.sum(np.imag(ss.ndtr(z))) + np.sum(np.abs(ss.loggamma(z + 2.0)))
            + np.sum(np.real(ss.rgamma(z) * ss.erfi(z)))
            + np.sum(np.imag(ss.erfcx(z) + ss.dawsn(z) * 1j))
            + np.sum(np.real(ss.exp1(z) * (2 - 1j) + ss.expi(z))))


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_gradient_of_a_real_function_is_the_finite_differences(backend):
    """``sg.grad`` of a real-valued function of complex z is ``dL/dx - i dL/dy`` (JAX's
    convention), against central differences of scipy's functions in each part; on Numba
    the host primitives and complex gamma run between kernels."""
    z = np.array([0.7 + 0.4j, -1.3 - 0.6j, 2.1 + 1.1j])
    g = sg.grad(_loss, backend=backend)
    got = g(z)
    h = 1e-6
    want = np.empty_like(z)
    for k in range(z.size):
        e = np.zeros_like(z)
        e[k] = h
        dx = (_loss(z + e) - _loss(z - e)) / (2 * h)
        dy = (_loss(z + 1j * e) - _loss(z - 1j * e)) / (2 * h)
        want[k] = dx - 1j * dy
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-7)
    assert np.array_equal(g(z), got)  # (called twice: the same numbers)
    if backend == "numba":
        source = g.source(z)
        assert "@njit" in source and "runs in Python between the kernels" in source
        # new inputs: the compiled program again, the same as the interpreter's
        z2 = z[::-1] * (1 - 0.5j)
        np.testing.assert_allclose(g(z2), sg.grad(_loss, backend="numpy")(z2), rtol=1e-13)


def test_at_the_poles_and_zeros():
    """rgamma' and rgamma'' at its zeros 0, -1, -2, ... (digamma's poles: the reflection
    there) are (-1)**n n! and -2 (-1)**n n! digamma(n + 1), real and complex; at the poles
    of gamma and psi, nan (scipy's psi there is nan)."""
    for dtype in (np.float64, np.complex128):
        zeros = np.array([0.0, -1.0, -2.0, -3.0, 1e-320], dtype=dtype)
        n = np.array([0, 1, 2, 3, 0])
        fact = np.array([1.0, 1.0, 2.0, 6.0, 1.0])
        kw = {"holomorphic": dtype == np.complex128, "backend": "numpy"}
        d1 = sg.vmap(sg.grad(ss.rgamma, **kw))(zeros)
        d2 = sg.vmap(sg.grad(sg.grad(ss.rgamma, **kw), **kw))(zeros)
        # (scipy's complex gamma(3) is 2 (1 - 1.7e-15): exp(loggamma))
        np.testing.assert_allclose(np.real(d1), (-1.0) ** n * fact, rtol=1e-14)
        np.testing.assert_allclose(np.real(d2), -2 * (-1.0) ** n * fact * ss.psi(n + 1.0),
                                   rtol=1e-14)
    assert np.isnan(sg.jacfwd(ss.psi, holomorphic=True, backend="numpy")(-2.0 + 0j))
    assert np.isnan(sg.jit(ss.psi, backend="numpy")(-2.0 + 0j))


def test_inside_a_loop_body_the_interpreter_runs_it():
    """Complex gamma in a fori_loop's body on Numba: the graph runs on the interpreter
    (a body cannot leave its kernel for scipy), with scipy's values."""
    def body(i, c):
        return ss.gamma(c) * 0.5 + 0.1

    z = np.array([1.5 + 0.5j, -0.3 + 1.2j])
    want = z
    for i in range(3):
        want = body(i, want)
    got = sg.jit(lambda z: sg.fori_loop(0, 3, body, z), backend="numba")(z)
    np.testing.assert_allclose(got, want, rtol=1e-15)


def test_what_scipy_refuses_of_complex_values_is_refused():
    z = np.array([1.0 + 1j])
    with pytest.raises(TypeError, match="gammaln does not take complex operands"):
        sg.jit(ss.gammaln, backend="numpy")(z)  # (scipy's gammaln has no complex loop)
    with pytest.raises(TypeError, match="polygamma.* of complex x: scipy's refuses it"):
        sg.jit(lambda z: sg.scipy.special.polygamma(1, z), backend="numpy")(z)
    with pytest.raises(TypeError):
        ss.polygamma(1, z)
    for f in (ss.i0, ss.erfinv, ss.gammaln):  # (no complex loop in scipy either)
        with pytest.raises(TypeError):
            f(z)
        with pytest.raises(TypeError, match="does not take complex operands"):
            sg.jit(f, backend="numpy")(z)


def test_the_numpy_export_refuses_complex_math_functions(tmp_path):
    """The numpy target writes real erf and gamma as ``math.erf``/``math.gamma`` per
    element, which complex values would reach only as a TypeError when the module runs:
    refused when it is written, saying why."""
    z = np.array([1.0 + 1j, 2.0 - 0.5j])
    for f in (ss.gamma, ss.erf):
        with pytest.raises(NotImplementedError, match="computes with scipy.special"):
            sg.export(sg.jit(f, backend="numpy"), (z,), tmp_path / "f.py", target="numpy")


def test_gamma_and_loggamma_derivatives_are_jaxs():
    """JAX has complex gamma, loggamma and erfcx (not psi, ndtr, expi, ...; it cannot
    reverse them: loops inside): gamma's and loggamma's holomorphic Jacobians against
    jax.jacfwd (erfcx's costs another second of JAX compiling: mpmath's above)."""
    from test_complex import jax

    z = np.array([1.5 + 0.5j, -0.3 + 1.2j, 2.2 - 0.7j])
    for name in ("gamma", "loggamma"):
        want = jax.jacfwd(getattr(jax.scipy.special, name), holomorphic=True)(z)
        for jac in (sg.jacfwd, sg.jacrev):
            np.testing.assert_allclose(
                jac(getattr(ss, name), holomorphic=True, backend="numpy")(z), want,
                rtol=1e-12, atol=1e-15)
