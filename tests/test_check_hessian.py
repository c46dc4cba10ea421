"""check_grad(order=2): the Hessian against SymPy and finite differences of the gradient."""

import numpy as np
import pytest

from symgrad.testing import check_grad

from oracle import replaced_vjp


def f(x, y):
    return np.sum(np.sin(x) * y ** 2) + np.prod(x) + np.log1p(np.sum(x * x))


X = np.array([0.3, 0.7, -1.1])


def test_a_right_hessian_passes():
    report = check_grad(f, X, 1.5, order=2, backend="numpy")
    assert report.ok and [r.name for r in report.arguments] == ["x", "y"]
    assert np.shape(report.arguments[0].gradient) == (3, 3)


def test_a_wrong_second_derivative_fails_while_the_first_is_right():
    # sin's VJP is g*cos(x); a cos VJP with the wrong sign leaves every first
    # derivative of sin right and makes its second derivative wrong
    with replaced_vjp("cos", lambda g, ans, x: (g * np.sin(x),)):
        check_grad(lambda x: np.sum(np.sin(x)), X, backend="numpy")  # order 1: fine
        with pytest.raises(AssertionError, match="Hessian"):
            check_grad(lambda x: np.sum(np.sin(x)), X, order=2, backend="numpy")


def test_order_2_takes_no_gradient_and_other_orders_are_refused():
    with pytest.raises(ValueError, match="no gradient="):
        check_grad(lambda x: np.sin(x), X, gradient=np.ones(3), order=2)
    with pytest.raises(ValueError, match="order 1"):
        check_grad(f, X, 1.5, order=3)
