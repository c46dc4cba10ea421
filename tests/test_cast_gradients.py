"""A cast's backward rounds the gradient as PyTorch's ``ToCopyBackward0`` does: the
gradient flowing from a float32 tensor into its float64 source (or from a float64 one
into its float32 source) is rounded to float32, also inside symgrad's float64 backward.
Compared bit for bit with real PyTorch 2.13 (the float16 rounding is not done yet: see
symgrad.eager.graph.ROUNDED)."""

from __future__ import annotations

import numpy as np
import pytest

torch_real = pytest.importorskip("torch")

import symgrad  # noqa: E402
from symgrad.core.config import config  # noqa: E402

_X = [0.123456789123, -3.3333333333331, 1e-3 + 1e-12]
_W = [0.987654321987, 1.1111111111113, 7.7777777777779]
_CASES = {
    "to": lambda t, x, w: x.to(t.float32).to(t.float64) * w,
    "float-double": lambda t, x, w: x.float().double() * w,
    "value-read": lambda t, x, w: x.float().double() ** 2 * w,
    "float32-ops": lambda t, x, w: (x.float() * 3.0).double() * w,
    "chained": lambda t, x, w: ((x.float().double() * w).float() * 1.5).double() * w,
    "type": lambda t, x, w: x.type(t.float32).type(t.float64) * w,
    "type-as": lambda t, x, w: x.type_as(t.ones(1, dtype=t.float32)).type_as(w) * w,
}


def _grad(t, f):
    x = t.tensor(_X, dtype=t.float64, requires_grad=True)
    f(t, x, t.tensor(_W, dtype=t.float64)).sum().backward()
    return x.grad.numpy()


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "interpreted"])
@pytest.mark.parametrize("name", list(_CASES))
def test_cast_gradient_is_rounded_as_torch(name, compiled):
    before = config.eager_compile
    config.update("eager_compile", compiled)
    try:
        got = _grad(symgrad, _CASES[name])
    finally:
        config.update("eager_compile", before)
    want = _grad(torch_real, _CASES[name])
    np.testing.assert_array_equal(got.view(np.int64), want.view(np.int64))


def _second(t):
    x = t.tensor(_X, dtype=t.float64, requires_grad=True)
    y = (x.float().double() ** 3 * t.tensor(_W, dtype=t.float64)).sum()
    g, = t.autograd.grad(y, x, create_graph=True)
    g.sum().backward()
    return np.stack([g.detach().numpy(), x.grad.numpy()])


def test_cast_gradient_is_rounded_in_double_backward():
    """With create_graph=True the gradient's graph casts as PyTorch's does."""
    got, want = _second(symgrad), _second(torch_real)
    np.testing.assert_array_equal(got.view(np.int64), want.view(np.int64))
