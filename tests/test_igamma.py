"""The regularized incomplete gamma functions (``torch.igamma``/``igammac``,
``scipy.special.gammainc``/``gammaincc`` on traced values): their gradient in ``a``
raises as PyTorch's; in ``x`` it equals mpmath's derivative. (Values and the gradient in
``x`` against PyTorch: the op table, tests/optable_select.py.)"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import scipy.special

torch_real = pytest.importorskip("torch")

import symgrad  # noqa: E402


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_gradient_in_a_raises_as_pytorchs(name):
    for L in (symgrad, torch_real):
        a = L.tensor([0.5, 2.0], requires_grad=True)
        out = getattr(L, name)(a, L.tensor([1.0, 3.0], requires_grad=True))
        with pytest.raises(NotImplementedError, match="derivative"):
            out.sum().backward()


@pytest.mark.parametrize("fn", ["gammainc", "gammaincc"])
def test_traced_gradient_in_x_equals_mpmaths_and_in_a_raises(fn):
    a, x = np.array([0.3, 2.5, 7.0]), np.array([0.2, 1.7, 9.0])
    f = getattr(scipy.special, fn)
    got = symgrad.grad(lambda x: f(a, x).sum(), backend="interpreter")(x)
    sign = 1 if fn == "gammainc" else -1
    want = [sign * float(mpmath.diff(lambda t, ai=ai: mpmath.gammainc(ai, 0, t, regularized=True),
                                     xi)) for ai, xi in zip(a, x)]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    with pytest.raises(NotImplementedError, match="first argument a"):
        symgrad.grad(lambda a: f(a, x).sum(), backend="interpreter")(a)
