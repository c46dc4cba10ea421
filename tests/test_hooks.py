"""``Tensor.register_hook`` (:mod:`symgrad.eager.hooks`) against real PyTorch, and the
special values of ``fmod``/``remainder`` (signed zeros, inf, integer division by 0).

The hook programs run several steps of the same structure with a hook added, then
removed, on a result, a leaf and the loss, so a kernel compiled without a hook must not
serve a step with one (the compiled case runs the backward kernels, the others the
interpreter)."""

from __future__ import annotations

import numpy as np
import pytest

torch_real = pytest.importorskip("torch")

import symgrad  # noqa: E402
from symgrad.core.config import config  # noqa: E402


def hook_program(L, variant):
    x = L.tensor([1.0, -2.0, 3.0], dtype=L.float64, requires_grad=True)
    w = L.tensor([0.5, 1.5, -1.0], dtype=L.float64, requires_grad=True)
    seen, out, handle = [], [], None
    for k in range(4):
        h = (x * w).tanh()
        if variant == "result" and k in (1, 2):  # added at step 1, removed at step 2
            handle = h.register_hook(lambda g: (seen.append(g.clone()), g * 3 + 1)[1])
            if k == 2:
                handle.remove()
        if variant == "leaf" and k == 1:  # on the leaf x from step 1, removed at step 3
            handle = x.register_hook(lambda g: (seen.append(g.clone()), g.clamp(max=0.1))[1])
        if variant == "leaf" and k == 3:
            handle.remove()
        if variant == "two" and k >= 1:  # two hooks in order, one returning None
            h.register_hook(lambda g: seen.append(g.clone()))
            h.register_hook(lambda g: g * -2)
        loss = (h * h).sum() + (h * x).sum()
        if variant == "loss" and k >= 1:
            loss.register_hook(lambda g: g * 2)
        loss.backward()
        out += [x.grad.numpy().copy(), w.grad.numpy().copy()]
        x.grad = w.grad = None
    return out + [s.numpy().copy() for s in seen]


@pytest.mark.parametrize(("variant", "compiled"), [
    ("result", False), ("leaf", False), ("two", False), ("loss", False), ("result", True)])
def test_hooks_equal_pytorch(monkeypatch, variant, compiled):
    monkeypatch.setattr(config, "eager_compile", compiled)
    theirs, ours = hook_program(torch_real, variant), hook_program(symgrad, variant)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_hook_errors():
    x = symgrad.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        x.register_hook(lambda g: g)
    x.requires_grad_()
    y = x * 2
    y.register_hook(lambda g: g)
    with pytest.raises(RuntimeError, match="hooks"):
        symgrad.autograd.grad(y.sum(), x)
    z = x * 3
    z.register_hook(lambda g: g)
    z.add_(1)  # the hook belongs to the old version
    with pytest.raises(RuntimeError, match="changed in place after the hook"):
        z.sum().backward()


def test_hook_reached_twice_is_refused():
    """A result changed through .data below a hooked result: the backward would reach the
    hook twice (once per cut), PyTorch once with the total; symgrad refuses."""
    x = symgrad.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    calls = []
    h.register_hook(lambda g: calls.append(g))
    c = h * 2
    c.data.mul_(1.0)  # (an uncounted write: c is read as it is now, a cut)
    with pytest.raises(RuntimeError, match="reached twice"):
        (c + h).sum().backward()


def test_hook_on_two_paths_is_called_once():
    for L in (symgrad, torch_real):
        x = L.tensor([1.0, 2.0], dtype=L.float64, requires_grad=True)
        h = x.exp()
        calls = []
        h.register_hook(lambda g, calls=calls: calls.append(g.clone()))
        x.register_hook(lambda g, calls=calls: calls.append(g.clone()))
        (h * h + h.sin() + x).sum().backward()
        if L is symgrad:
            ours = [c.numpy() for c in calls] + [x.grad.numpy()]
    theirs = [c.numpy() for c in calls] + [x.grad.numpy()]
    assert len(ours) == len(theirs) == 3
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_fmod_remainder_special_values():
    values = [0.0, -0.0, -4.0, 4.0, np.inf, -np.inf, 1e-20, -1e-20, 5.5, -7.25]
    for divisor in (2.0, -2.0, np.inf, 0.0, -0.5):
        for name in ("fmod", "remainder"):
            got, want = (getattr(L, name)(L.tensor(values, dtype=L.float64), divisor).numpy()
                         for L in (symgrad, torch_real))
            np.testing.assert_array_equal(got, want, err_msg=f"{name} {divisor}")
            if name == "fmod":  # (remainder's zeros take the divisor's sign, numpy's rule;
                # PyTorch's the dividend's: -0.0 % 2.0 is 0.0 here, -0.0 there)
                finite = ~np.isnan(want)
                assert (np.signbit(got) == np.signbit(want))[finite].all(), divisor
    for L in (symgrad, torch_real):
        for fn in (L.fmod, L.remainder, L.floor_divide):
            with pytest.raises(RuntimeError, match="ZeroDivisionError"):
                fn(L.tensor([5, -5]), L.tensor([2, 0]))
