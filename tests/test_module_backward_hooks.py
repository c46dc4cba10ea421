"""Module backward hooks (``register_full_backward_hook``,
``register_full_backward_pre_hook``; symgrad/nn/backward_hooks.py) against real PyTorch:
the same program on both, comparing what every hook saw, the gradients, and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch_real = pytest.importorskip("torch")

from torch_oracle import float64_default  # noqa: E402,F401

import symgrad  # noqa: E402


def _list(t):
    return None if t is None else np.round(np.asarray(t.detach().double().numpy()), 12).tolist()


def _log(log, tag):
    return lambda mod, *grads: log.append((tag, *[[_list(g) for g in gs] for gs in grads]))


def _linear(L, dtype="float64"):
    m = L.nn.Linear(2, 2).to(getattr(L, dtype))
    with L.no_grad():
        m.weight.copy_(L.tensor([[1.0, 2.0], [3.0, -4.0]]))
        m.bias.copy_(L.tensor([0.5, -0.5]))
    return m


def _replacing(L):
    """Hooks that log, replace grad_output (pre-hook) and grad_input, one prepended, one
    removed; backward() twice, then autograd.grad."""
    m, log = _linear(L), []
    m.register_full_backward_hook(_log(log, "a"))
    m.register_full_backward_pre_hook(_log(log, "pre"))
    m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 2,))
    first = m.register_full_backward_hook(lambda mod, gi, go: (gi[0] + 1,), prepend=True)
    m.register_full_backward_hook(_log(log, "b"))
    x = L.tensor([[1.0, -1.0], [0.5, 2.0]], requires_grad=True)
    y = m(x)
    log.append(type(y.grad_fn).__name__)
    (y * y).sum().backward()
    log.append(("x.grad", _list(x.grad), _list(m.weight.grad)))
    first.remove()
    (g,) = L.autograd.grad(m(x * 3).tanh().sum(), x)
    log.append(("grad", _list(g)))
    return log


def _two_inputs(L):
    """A module of two Tensors, a number and a Tensor that needs no grad, returning a
    tuple (and a number); the hook replaces one input's gradient. (An output the loss
    does not use: PyTorch's grad_output is None there, symgrad's zeros.)"""
    class Two(L.nn.Module):
        def forward(self, a, k, b, c):
            return a * b * k + c, (a - b).exp(), 7
    m, log = Two(), []
    m.register_full_backward_pre_hook(_log(log, "pre"))
    m.register_full_backward_hook(_log(log, "hook"))
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0], None, gi[2] * 10, None))
    a = L.tensor([1.0, 2.0], requires_grad=True)
    b = L.tensor([3.0, -1.0], requires_grad=True)
    c = L.tensor([0.25, 0.5])
    out, other, n = m(a, 2.0, b, c)
    (out.sum() + other[0]).backward()
    log.append(("grads", _list(a.grad), _list(b.grad), n))
    return log


def _no_input_grad(L):
    """Inputs that need no grad: the hooks run at the outputs, grad_input all None (a
    warning); a float32 module (the gradients' dtype)."""
    m, log = _linear(L, "float32"), []
    m.register_full_backward_hook(_log(log, "hook"))
    m.register_full_backward_hook(lambda mod, gi, go: log.append(str(go[0].dtype)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m(L.ones(1, 2, dtype=L.float32)).sum().backward()
    log.append([str(w.message)[:40] for w in caught])
    with L.no_grad():  # no backward, no hook
        m(L.ones(1, 2, dtype=L.float32))
    return log


def _nested(L):
    """Hooks on a Sequential and on its layers: the order they run in."""
    net = L.nn.Sequential(_linear(L), L.nn.Tanh(), _linear(L))
    log = []
    for name, mod in [("seq", net), ("l0", net[0]), ("tanh", net[1]), ("l2", net[2])]:
        mod.register_full_backward_hook(lambda mod, gi, go, n=name: log.append(
            (n, [_list(g) for g in gi])))
        mod.register_full_backward_pre_hook(lambda mod, go, n=name: log.append(("pre " + n,)))
    x = L.tensor([[0.3, -0.2]], requires_grad=True)
    net(x).sum().backward()
    log.append(_list(x.grad))
    return log


def _double_backward(L):
    m = _linear(L)
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 3,))
    x = L.tensor([[0.3, -0.2]], requires_grad=True)
    (g,) = L.autograd.grad(m(x).tanh().sum(), x, create_graph=True)
    (gg,) = L.autograd.grad((g * g).sum(), x)
    return [_list(g), _list(gg)]


PROGRAMS = {"replacing": _replacing, "two_inputs": _two_inputs,
            "no_input_grad": _no_input_grad, "nested": _nested,
            "double_backward": _double_backward}


@pytest.mark.parametrize("name", PROGRAMS)
def test_backward_hooks_equal_pytorch(name):
    assert PROGRAMS[name](symgrad) == PROGRAMS[name](torch_real)


@pytest.mark.parametrize("bad", ["pre", "hook", "no_input"])
def test_wrong_number_of_gradients_raises_as_pytorch(bad):
    messages = []
    for L in (symgrad, torch_real):
        m = _linear(L)
        x = L.ones(1, 2, requires_grad=bad != "no_input")
        if bad == "pre":
            m.register_full_backward_pre_hook(lambda mod, go: (go[0], go[0]))
        else:
            m.register_full_backward_hook(lambda mod, gi, go: (go[0], go[0]))
        with pytest.raises(RuntimeError) as e, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m(x).sum().backward()
        messages.append(str(e.value))
    assert messages[0] == messages[1]
