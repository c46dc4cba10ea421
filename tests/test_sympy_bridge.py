"""The SymPy oracle itself: expressions SymPy cannot differentiate in closed form."""

from __future__ import annotations

import numpy as np

from symgrad.testing import check_grad

from oracle import sympy_gradient


def test_an_unevaluated_derivative_is_evaluated_numerically():
    # found by the random expressions: SymPy leaves d/dx sign(acos(x)) unevaluated
    # (it cannot tell that acos(x) is real), and substituting a number for x in
    # Derivative(..., x) raised "Can't calculate derivative wrt 0.54..."
    x = np.array([0.3, -0.5])
    (g,) = sympy_gradient(lambda x: np.sign(np.arccos(x)) * x, [x], np.ones(2))
    np.testing.assert_array_equal(g, [1.0, 1.0])
    assert check_grad(lambda x: np.sum(np.sign(np.arccos(x)) * x), x, backend="numpy").ok


def test_an_unevaluated_derivative_of_what_becomes_a_constant_is_zero():
    # found next: d/dy sign(x**y) stays unevaluated too; with x = 0.55 substituted
    # it is the derivative of sign(0.55**y) = 1, which doit_numerically refused
    f = lambda x, y: np.sign(x ** y) * y
    gx, gy = sympy_gradient(f, [0.5478467492858172, -0.9208531449445188])
    assert (gx, gy) == (0.0, 1.0)


def test_a_derivative_at_a_substituted_point_is_evaluated_there():
    # d/dx floor(10*x) comes back as Subs(Derivative(floor(u), u), u, 10*x): its
    # dummy u is no input, so the point 10*x is evaluated first, then the derivative
    x = np.array([0.31, -1.27])
    (g,) = sympy_gradient(lambda x: np.round(x, 1) * x, [x], np.ones(2))
    np.testing.assert_array_equal(g, np.round(x, 1))
