"""A leaf's first gradient is the backward's own array, not a copy, when nothing else holds
it (:func:`symgrad.eager.owned.sole`, as PyTorch's AccumulateGrad steals it): never
when the gradient is a kernel input (data, the cotangent passed in), a constant, or
memory another gradient shares. Each program writes into ``.grad`` in place afterwards
and must leave every other tensor as PyTorch does; three rounds each, so the backward
runs interpreted, then compiled (with the eager compile on), then on the kernel.
"""

from __future__ import annotations

import numpy as np
import pytest

torch_real = pytest.importorskip("torch")

import symgrad  # noqa: E402
from symgrad.core.config import config  # noqa: E402
from symgrad.eager.owned import sole  # noqa: E402


def _data_gradient(T):
    x = T.tensor([1.0, 2.0, 3.0], dtype=T.float64, requires_grad=True)
    c = T.tensor([4.0, 5.0, 6.0], dtype=T.float64)
    (x * c).sum().backward()  # x.grad is c's values
    x.grad.add_(1.0)
    return [x.grad, c]


def _shared_gradient(T):
    a = T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True)
    b = T.tensor([3.0, 4.0], dtype=T.float64, requires_grad=True)
    (a + b).sum().backward()  # one cotangent for both
    a.grad.add_(10.0)
    return [a.grad, b.grad]


def _retained(T):
    x = T.tensor([1.0, -2.0, 3.0], dtype=T.float64, requires_grad=True)
    y = x * 2.0
    y.retain_grad()
    c = T.tensor([7.0, 8.0, 9.0], dtype=T.float64)
    (y * c).sum().backward()
    y.grad.sub_(1.0)
    x.grad.mul_(-1.0)
    return [x.grad, y.grad, c]


def _constant_gradient(T):
    """The gradient of a sum is ones: written into, then a second backward's must be ones
    again (a constant handed out as ``.grad`` would keep the write)."""
    x = T.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=T.float64, requires_grad=True)
    out = []
    for _ in range(2):
        x.grad = None
        x.sum().backward()
        out.append(x.grad.clone())
        x.grad.add_(5.0)
    return out


def _accumulated(T):
    """A stolen first gradient, then a second backward adds into it in place."""
    x = T.tensor([1.0, 2.0, 3.0], dtype=T.float64, requires_grad=True)
    (x * x).sum().backward()
    first = x.grad
    (3.0 * x).sum().backward()
    return [first, x.grad, x]


def _retained_twice(T):
    """A retained non-leaf's second gradient is added out of place (PyTorch's retain_grad
    hook: ``grad = grad + new``): its first ``.grad``, and the array read from it, keep
    their values (symgrad added into them in place)."""
    x = T.tensor([1.0, 2.0, 3.0], dtype=T.float64, requires_grad=True)
    y = x * 2.0
    y.retain_grad()
    loss = (y * y).sum()
    loss.backward(retain_graph=True)
    first, read = y.grad, y.grad.numpy()
    loss.backward()
    return [first, T.from_numpy(read), y.grad, x.grad]


PROGRAMS = [_data_gradient, _shared_gradient, _retained, _constant_gradient,
            _accumulated, _retained_twice]


#: the programs also run compiled (a Numba compile each: the others' kernels add nothing)
COMPILED = [_data_gradient, _shared_gradient, _constant_gradient]


@pytest.mark.parametrize("program, compiled",
                         [(p, False) for p in PROGRAMS] + [(p, True) for p in COMPILED],
                         ids=lambda p: p.__name__[1:] if callable(p) else
                         ("compiled" if p else "interpreted"))
def test_gradient_written_in_place_changes_nothing_else(program, compiled, monkeypatch):
    monkeypatch.setattr(config, "eager_compile", compiled)
    theirs = [t.detach().numpy() for t in program(torch_real)]
    for _ in range(3 if compiled else 1):
        ours = [np.asarray(t.detach().numpy()) for t in program(symgrad)]
        for a, b in zip(ours, theirs, strict=True):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("compiled", [False, True], ids=["interpreted", "compiled"])
def test_cotangent_passed_through(compiled, monkeypatch):
    """``x.grad`` is the cotangent's values, a copy: writing it leaves the cotangent as it
    was (PyTorch's AccumulateGrad steals the cotangent here, so its ``.grad`` aliases
    it; symgrad's never aliases a tensor of the caller's)."""
    monkeypatch.setattr(config, "eager_compile", compiled)
    for _ in range(3 if compiled else 1):
        x = symgrad.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=symgrad.float64,
                           requires_grad=True)
        g = symgrad.tensor([0.5, -1.0, 2.0, 3.0], dtype=symgrad.float64)
        x.reshape(4).backward(g)
        x.grad.mul_(3.0)
        np.testing.assert_array_equal(x.grad.numpy(), [[1.5, -3.0], [6.0, 9.0]])
        np.testing.assert_array_equal(g.numpy(), [0.5, -1.0, 2.0, 3.0])


def test_sole_owner():
    """The test itself: fresh arrays only, not one held elsewhere, a view of memory held
    elsewhere, nor a non-contiguous or read-only one."""
    held = np.ones(3)
    base = np.ones(6)
    grads = [np.ones(3), held, base[:3], np.ones(6)[:3], np.ones((3, 2)).T,
             np.broadcast_to(np.ones(1), (3,))]
    assert [sole(grads, k) for k in range(len(grads))] == [
        True, False, False, True, False, False]


def test_sole_owner_of_numba_outputs():
    """Numba's arrays: a fresh one is owned; one that is (a view of) an input, or that
    shares memory with another output, is not."""
    numba = pytest.importorskip("numba")

    @numba.njit
    def kernel(x):
        a = x * 2.0
        return a, a.reshape(3), x, x[1:], x + 1.0

    grads = list(kernel(np.arange(3.0)))
    assert [sole(grads, k) for k in range(len(grads))] == [
        False, False, False, False, True]
