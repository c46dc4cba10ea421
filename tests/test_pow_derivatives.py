"""Derivatives of a power with a literal exponent at the edges of the float range.

Oracles: mpmath at 50 digits for the first and second derivative, real PyTorch for
the eager Tensor's double backward. ``x ** y`` with a literal ``y`` records only the
branch its VJP needs (``_literal_pow_vjp``); for |y| < 1 the derivative is
``y * x**(y-1)`` wherever that is finite, and ``(y * x**y) / x`` only where it
overflows (x = 5e-324, y = 1e-300).
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

import symgrad as sg

POINTS = [  # (x, y): subnormal x, where x**y is subnormal too or overflows y*x**(y-1)
    (5e-324, 0.99999), (1e-310, 0.99999), (5e-324, 0.5), (1e-310, 0.5), (1e-300, 0.75),
    (2.5, 0.5), (2.5, -0.5), (0.3, 1.5), (7.0, 3.0), (1e300, 0.5),
]


def _exact(x: float, y: float, order: int) -> float:
    with mpmath.workdps(50):
        x_, y_ = mpmath.mpf(x), mpmath.mpf(y)
        value = y_ * x_ ** (y_ - 1) if order == 1 else y_ * (y_ - 1) * x_ ** (y_ - 2)
        return float(value)  # inf where it is beyond the float range


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize(("x", "y"), POINTS)
def test_the_first_and_second_derivative_of_a_literal_power_match_mpmath(backend, x, y):
    def f(v):
        return np.sum(v ** y)

    first = sg.grad(f, backend=backend)(np.array([x]))[0]
    second = sg.grad(lambda v: np.sum(sg.grad(f)(v)), backend=backend)(np.array([x]))[0]
    for got, order in ((first, 1), (second, 2)):
        want = _exact(x, y, order)
        if np.isinf(want):
            assert got == want, (x, y, order, got)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-13, err_msg=f"x={x}, y={y}, {order}")


def test_a_first_derivative_that_overflows_its_power_form_is_right():
    # y*x**(y-1) overflows (x**(y-1) is inf) where the derivative is 2e23: (y*x**y)/x.
    # (Its second derivative is nan where the exact value is -inf: the reverse pass divides
    # the cotangent by x = 5e-324 before it multiplies by y = 1e-300, and overflows.)
    got = sg.grad(lambda v: np.sum(v ** 1e-300))(np.array([5e-324]))[0]
    np.testing.assert_allclose(got, _exact(5e-324, 1e-300, 1), rtol=1e-13)


def test_the_derivative_of_a_fractional_power_at_infinity_is_zero():
    # d/dx x**0.5 = 0.5 / sqrt(x) -> 0 (PyTorch too); the quotient form gave inf/inf = nan
    assert sg.grad(lambda v: np.sum(v ** 0.5))(np.array([np.inf]))[0] == 0.0


@pytest.mark.parametrize("spelling", ["pow", "**", "torch.pow"])
def test_double_backward_through_a_first_power_is_zero_as_in_pytorch(spelling):
    import torch as real

    results = []
    for torch in (sg, real):
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = (x.pow(1) if spelling == "pow" else x ** 1 if spelling == "**"
             else torch.pow(x, 1))
        g1, = torch.autograd.grad(y.sum(), x, create_graph=True)
        g2, = torch.autograd.grad(g1.sum(), x)
        results.append((g1.detach().numpy(), g2.numpy()))
    for got, want in zip(*results):
        np.testing.assert_array_equal(got, want)
