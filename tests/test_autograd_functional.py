"""``torch.autograd.functional`` on Tensors, against real PyTorch 2.13.

Each program calls ``torch.autograd.functional.*`` on the same data with real
PyTorch and with symgrad, and must print the same results (shapes, tuple nesting,
values) and the same errors (:mod:`torch_oracle`). Also: with ``create_graph``
the results are differentiated again into the caller's tensors; the dense
Hessian is compared with SymPy's.
"""

from __future__ import annotations

import numpy as np
import pytest

import symgrad

pytest.importorskip("torch")

from torch_oracle import (  # noqa: E402,F401 (a fixture)
    float64_default,
    run_both,
    show_error,
)
from torch_oracle import normal_data as _data  # noqa: E402

pytestmark = pytest.mark.filterwarnings("error::symgrad.autograd.KernelFallbackWarning")


def _error(show, fn, length=200):
    show_error(show, fn, length)


def _show(show, result):
    """A result's nesting (Tensor, tuple of, tuple of tuples of), shapes and values."""
    if isinstance(result, tuple):
        show("tuple", len(result))
        for r in result:
            _show(show, r)
    else:
        show(tuple(result.shape), result, result.requires_grad)


def _functions(torch):
    def scalar(x):
        return (torch.tanh(x) * x ** 2).sum() + torch.exp(x[..., 0]).sum()

    def vector(x):
        return torch.sin(x) * x.sum() + x ** 3

    def two_in(x, y):
        return (torch.log(1 + x ** 2) @ y).sum() + (x * x).sum() * y.sum()

    def two_in_out(x, y):
        return x @ y, torch.sigmoid(x).sum(1) * y[0]

    def matrix(x):
        return torch.softmax(x @ x.t(), dim=1)

    return scalar, vector, two_in, two_in_out, matrix


def jacobians(torch, show, data):
    F = torch.autograd.functional
    scalar, vector, two_in, two_in_out, matrix = _functions(torch)
    x = torch.tensor(data["x"])
    m = torch.tensor(data["m"])
    y = torch.tensor(data["y"])
    _show(show, F.jacobian(vector, x))
    _show(show, F.jacobian(scalar, m))
    _show(show, F.jacobian(matrix, m))                     # shape (3, 3, 3, 2)
    _show(show, F.jacobian(two_in, (m, y)))               # tuple input: tuple
    _show(show, F.jacobian(two_in_out, (m, y)))           # tuple of tuples
    _show(show, F.jacobian(lambda a: (a * 2, a.sum()), x))  # tuple output: tuple
    _show(show, F.jacobian(vector, x, vectorize=True))
    _show(show, F.jacobian(vector, x, vectorize=True, strategy="forward-mode"))
    _show(show, F.jacobian(lambda a, b: a * 2, (x, x)))   # unused input: zeros
    _error(show, lambda: F.jacobian(lambda a, b: a * 2, (x, x), strict=True))
    _error(show, lambda: F.jacobian(vector, x, strategy="forward-mode"))
    _error(show, lambda: F.jacobian(vector, [x]))
    _error(show, lambda: F.jacobian(lambda a: 3.0, x))


def test_jacobian():
    run_both(jacobians, _data(0, x=(4,), m=(3, 2), y=(2, 3)))


def hessians(torch, show, data):
    F = torch.autograd.functional
    scalar, vector, two_in, two_in_out, matrix = _functions(torch)
    x = torch.tensor(data["x"])
    m = torch.tensor(data["m"])
    y = torch.tensor(data["y"])
    _show(show, F.hessian(scalar, x))
    _show(show, F.hessian(scalar, m))                      # shape (3, 2, 3, 2)
    _show(show, F.hessian(two_in, (m, y)))                 # tuple of tuples
    _show(show, F.hessian(lambda a, b: (a ** 3).sum(), (x, x)))
    # (PyTorch 2.13 leaves this one attached to a graph: compared as values)
    _show(show, F.hessian(scalar, x, vectorize=True,
                          outer_jacobian_strategy="forward-mode").detach())
    _error(show, lambda: F.hessian(vector, x))


def test_hessian():
    run_both(hessians, _data(1, x=(4,), m=(3, 2), y=(2, 3)))


def products(torch, show, data):
    F = torch.autograd.functional
    scalar, vector, two_in, two_in_out, matrix = _functions(torch)
    x, v = torch.tensor(data["x"]), torch.tensor(data["v"])
    m, y = torch.tensor(data["m"]), torch.tensor(data["y"])
    vm, vy = torch.tensor(data["vm"]), torch.tensor(data["vy"])
    for fn in (F.vjp, F.jvp):
        _show(show, fn(vector, x, v))
    _show(show, F.vjp(scalar, x))                          # v may be omitted: one element
    _show(show, F.vjp(two_in_out, (m, y), (torch.tensor(data["u"]), y[0] * 0 + 1)))
    _show(show, F.jvp(two_in_out, (m, y), (vm, vy)))
    for fn in (F.hvp, F.vhp):
        _show(show, fn(scalar, x, v))
        _show(show, fn(two_in, (m, y), (vm, vy)))
    _show(show, F.jvp(lambda a: a.sum(), torch.tensor([2.0])))   # v omitted: one element
    _error(show, lambda: F.vjp(vector, x))
    _error(show, lambda: F.jvp(vector, x))
    _error(show, lambda: F.jvp(vector, x, torch.ones(3)))
    _error(show, lambda: F.hvp(two_in, (m, y), (vm,)))
    _error(show, lambda: F.hvp(vector, x, v))
    _show(show, F.vjp(lambda a, b: a * 2, (x, x), v))
    _error(show, lambda: F.vjp(lambda a, b: a * 2, (x, x), v, strict=True))


def test_vjp_jvp_hvp_vhp():
    run_both(products, _data(2, x=(4,), v=(4,), m=(3, 2), y=(2, 3), vm=(3, 2), vy=(2, 3),
                             u=(3, 3)))


def create_graph(torch, show, data):
    """Results with a graph, differentiated again into the caller's tensors."""
    F = torch.autograd.functional
    scalar, vector, two_in, two_in_out, matrix = _functions(torch)
    x = torch.tensor(data["x"], requires_grad=True)
    v = torch.tensor(data["v"])
    h = F.hessian(scalar, x, create_graph=True)
    show(h.requires_grad)
    (h ** 2).sum().backward()
    show(x.grad)
    x.grad = None
    j = F.jacobian(vector, x, create_graph=True)
    (j * torch.eye(4)).sum().backward()
    show(x.grad)
    x.grad = None
    out, hv = F.hvp(scalar, x, v, create_graph=True)
    (hv * hv).sum().backward()
    show(out.requires_grad, x.grad)
    x.grad = None
    out, jv = F.jvp(vector, x, v, create_graph=True)
    jv.sum().backward()
    show(x.grad)
    x.grad = None
    out, g = F.vjp(scalar, x, create_graph=True)
    (g ** 2).sum().backward()
    show(x.grad)
    # without create_graph the results are detached, inputs untouched
    x.grad = None
    show(F.hessian(scalar, x).requires_grad, F.vjp(scalar, x)[0].requires_grad, x.grad)


def test_create_graph():
    run_both(create_graph, _data(3, x=(4,), v=(4,)))


def test_hessian_matches_sympy():
    sp = pytest.importorskip("sympy")
    s = sp.symbols("s0:3")
    expr = sum(sp.tanh(si) * si ** 2 for si in s) + sp.exp(s[0]) * s[1] * s[2]
    at = {si: v for si, v in zip(s, (0.3, -0.8, 1.2))}
    want = np.array(sp.hessian(expr, s).evalf(30, subs=at), dtype=float)
    got = symgrad.autograd.functional.hessian(
        lambda x: (symgrad.tanh(x) * x ** 2).sum() + symgrad.exp(x[0]) * x[1] * x[2],
        symgrad.tensor([0.3, -0.8, 1.2]))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(got.numpy(), got.numpy().T, rtol=1e-14)
