"""scipy.special's Bessel functions of any order on traced values (``iv``, ``ive``, ``kv``,
``kve``, ``jv``, ``yv``; symgrad/prims/bessel.py): scipy's values on both backends, first
and second derivatives in ``x`` against mpmath at 30 digits (real and complex ``x``), and
the derivative in the order ``v`` refused. (The 50-digit SymPy table and the tail points
have them too: tests/cases_stable.py, tests/cases_tails.py.)"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest
import scipy.special as ss

import symgrad as sg

FUNCTIONS = {
    "iv": (ss.iv, mp.besseli),
    "ive": (ss.ive, lambda v, x: mp.exp(-abs(mp.re(x))) * mp.besseli(v, x)),
    "kv": (ss.kv, mp.besselk),
    "kve": (ss.kve, lambda v, x: mp.exp(x) * mp.besselk(v, x)),
    "jv": (ss.jv, mp.besselj),
    "yv": (ss.yv, mp.bessely),
}
#: (order, point): integer, half-integer, negative and large orders, small and large x,
#: negative x where the order is an integer (the functions are real there)
POINTS = [(0.0, 0.3), (1.0, 2.7), (1.5, 0.05), (-0.7, 1.9), (2.5, 11.0), (3.0, 6.5),
          (7.25, 4.0), (0.0, 30.0), (2.0, -1.3), (-1.0, -4.2)]
POSITIVE_ONLY = {"kv", "kve", "yv"}  # (complex, or nan, left of 0)


def _points(name):
    pts = [(v, x) for v, x in POINTS if x > 0 or name not in POSITIVE_ONLY]
    return tuple(np.array(a) for a in zip(*pts))


def _mp_derivatives(mf, v, x, n):
    with mp.workdps(30):
        return [complex(mp.diff(lambda t, vi=vi: mf(vi, t), mp.mpmathify(xi), n))
                for vi, xi in zip(v, x)]


def _close(got, want, rtol):
    got, want = np.asarray(got), np.asarray(want)
    assert np.all(np.abs(got - want) <= rtol * np.abs(want)), (got, want)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_values_are_scipys(backend):
    """All six in one function (on Numba, one graph cut around each host equation)."""
    v, x = np.array([0.0, 1.5, -0.7, 3.0]), np.array([0.3, 2.7, 9.0, 0.05])
    fns = tuple(fn for fn, _ in FUNCTIONS.values())

    def f(x):
        return tuple(fn(v, x) for fn in fns)
    got = sg.jit(f, backend=backend)(x)
    for g, w in zip(got, f(x)):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_first_and_second_derivatives_are_mpmaths(name):
    f, mf = FUNCTIONS[name]
    v, x = _points(name)
    d1 = sg.grad(lambda x: np.sum(f(v, x)), backend="numpy")(x)
    d2 = sg.grad(lambda x: np.sum(sg.grad(lambda y: np.sum(f(v, y)))(x)), backend="numpy")(x)
    # (scipy's own values are 1e-13 off for some orders: jv(-0.7, 1.9), yv(-0.7, 1.9); the
    # derivatives are differences of its values, ive's and kve's cancelling as |x| grows)
    _close(d1, np.real(_mp_derivatives(mf, v, x, 1)), 1e-12)
    _close(d2, np.real(_mp_derivatives(mf, v, x, 2)), 1e-11)


@pytest.mark.parametrize("name", ["iv", "kv", "kve", "jv", "yv"])
def test_complex_derivatives_are_mpmaths(name):
    """Holomorphic in x: scipy's complex loops, the same recurrences."""
    f, mf = FUNCTIONS[name]
    v = np.array([0.0, 1.5, -0.7, 2.0])
    z = np.array([0.5 + 1.2j, -2.0 + 0.7j, 3.1 - 2.2j, 1.0 + 6.0j])

    def g(z):
        return f(v, z)
    got = sg.jit(g, backend="numpy")(z)
    np.testing.assert_array_equal(got, g(z))
    d1 = np.diagonal(sg.jacrev(g, holomorphic=True, backend="numpy")(z))
    d2 = np.diagonal(sg.jacfwd(lambda z: np.diagonal(sg.jacrev(g, holomorphic=True)(z)),
                               holomorphic=True, backend="numpy")(z))
    _close(d1, _mp_derivatives(mf, v, z, 1), 1e-12)
    _close(d2, _mp_derivatives(mf, v, z, 2), 1e-11)


def test_ive_of_complex_values_is_refused():
    """``exp(-|Re z|) iv(z)`` is not holomorphic: refused, not a wrong derivative."""
    with pytest.raises(TypeError, match="ive"):
        sg.jit(lambda z: ss.ive(1.0, z), backend="numpy")(np.array([1.0 + 1.0j]))


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_derivative_in_the_order_is_refused(name):
    f, _ = FUNCTIONS[name]
    x = np.array([0.7, 2.0])
    with pytest.raises(NotImplementedError, match=f"{name}\\(v, x\\) with respect to its order"):
        sg.grad(lambda v: np.sum(f(v, x)), backend="numpy")(np.array([0.5, 1.0]))
    # a traced order the gradient does not flow through is fine, and so is a second call
    # with other values (the graph is the same, the numbers are new)
    h = sg.jit(sg.grad(lambda x, v: np.sum(f(v, x))), backend="numpy")
    for v in (np.array([0.5, 1.0]), np.array([2.0, -1.5])):
        want = [float(mp.diff(lambda t, vi=vi: FUNCTIONS[name][1](vi, t), xi))
                for vi, xi in zip(v, x)]
        np.testing.assert_allclose(h(x, v), want, rtol=1e-12)
