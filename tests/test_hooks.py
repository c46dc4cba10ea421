"""``Tensor.register_hook`` (:mod:`symgrad.eager.hooks`) against real PyTorch, and the
special values of ``fmod``/``remainder`` (signed zeros, inf, integer division by 0).

The hook programs run several steps of the same structure with a hook added, then
removed, on a result, a leaf and the loss, so a kernel compiled without a hook must not
serve a step with one (the compiled case runs the backward kernels, the others the
interpreter)."""

from __future__ import annotations

import itertools

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
    def inplace_mod(x, divisor):  # (x %= d without a graph wrote numpy's zeros)
        x %= divisor
        return x
    for divisor, name, dtype in itertools.product((2.0, -2.0, np.inf, 0.0, -0.5),
                                                  ("fmod", "remainder", "%="),
                                                  ("float64", "float32")):
        got, want = ((inplace_mod if name == "%=" else getattr(L, name))(
            L.tensor(values, dtype=getattr(L, dtype)), divisor).numpy()
            for L in (symgrad, torch_real))
        np.testing.assert_array_equal(got, want, err_msg=f"{name} {divisor}")
        # zeros take the dividend's sign (numpy's remainder: the divisor's)
        finite = ~np.isnan(want)
        assert (np.signbit(got) == np.signbit(want))[finite].all(), (name, divisor, dtype)
    for L in (symgrad, torch_real):
        for fn in (L.fmod, L.remainder, L.floor_divide):
            with pytest.raises(RuntimeError, match="ZeroDivisionError"):
                fn(L.tensor([5, -5]), L.tensor([2, 0]))


def module_hook_program(L):
    """Forward pre-hooks and hooks of modules (prepend, with_kwargs, removal, a handle as
    a context manager, always_call) over three training steps."""
    rng = np.random.default_rng(7)
    m = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.Tanh(), L.nn.Linear(4, 2)).double()
    with L.no_grad():
        for p in m.parameters():
            p.copy_(L.tensor(rng.normal(size=tuple(p.shape))))
    x = L.tensor(rng.normal(size=(5, 3)), requires_grad=True)
    log = []
    m[0].register_forward_pre_hook(lambda mod, args: args[0] * 2)  # not a tuple: wrapped
    h2 = m[1].register_forward_hook(lambda mod, args, out: out + 1)
    m[1].register_forward_hook(lambda mod, args, out: log.append(out.sum().item()),
                               prepend=True)  # runs before h2: sees tanh's own output
    m.register_forward_pre_hook(lambda mod, args, kwargs: ((args[0] - 1,), kwargs),
                                with_kwargs=True)
    h5 = m[2].register_forward_hook(lambda mod, args, kwargs, out: out * args[0].sum(),
                                    with_kwargs=True)
    out = []
    for step in range(3):
        y = m(x)
        (y ** 2).sum().backward()
        out.append([y.detach().numpy().copy(), x.grad.numpy().copy(),
                    m[0].weight.grad.numpy().copy()])
        x.grad = None
        m.zero_grad()
        if step == 0:
            h2.remove()
        if step == 1:
            with h5:
                pass
    return out, log


def test_module_forward_hooks_equal_pytorch():
    mine, theirs = module_hook_program(symgrad), module_hook_program(torch_real)
    np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-13)
    for a, b in zip(mine[0], theirs[0]):
        for u, v in zip(a, b):
            np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-14)


def test_forward_hook_registered_during_the_call_runs_in_that_call():
    """PyTorch reads the module's forward hooks after forward: one that a pre-hook (or
    forward itself) registers already scales this call's output (it was left out)."""
    def program(L):
        m = L.nn.Linear(2, 1).double()
        with L.no_grad():
            m.weight.copy_(L.tensor([[1.0, 2.0]]))
            m.bias.fill_(0.5)
        m.register_forward_pre_hook(
            lambda mod, args: mod.register_forward_hook(lambda mo, a, out: out * 3) and None)
        x = L.tensor([[1.0, 1.0]], dtype=L.float64, requires_grad=True)
        y = m(x)
        y.sum().backward()
        return y.item(), x.grad.tolist()
    assert program(symgrad) == program(torch_real) == (10.5, [[3.0, 6.0]])


def test_always_call_forward_hooks_run_when_forward_raises():
    def program(L):
        class Broken(L.nn.Module):
            def forward(self, x):
                raise ValueError("broken forward")
        seen, m = [], Broken()
        m.register_forward_hook(lambda mod, args, out: seen.append(("plain", out)))
        m.register_forward_hook(lambda mod, args, out: seen.append(("always", out)),
                                always_call=True)
        with pytest.raises(ValueError, match="broken forward"):
            m(L.ones(2))
        return seen
    assert program(symgrad) == program(torch_real) == [("always", None)]


def test_deprecated_module_backward_hook_is_refused_with_the_alternative():
    # (register_full_backward_hook: tests/test_module_backward_hooks.py)
    with pytest.raises(NotImplementedError, match="register_full_backward_hook"):
        symgrad.nn.Linear(2, 1).register_backward_hook(lambda *a: None)


def post_hook_program(L):
    """Which backward calls a leaf's post-accumulate-grad hooks, with what ``.grad``."""
    calls = []
    x = L.tensor([1.0, 2.0], dtype=L.float64, requires_grad=True)
    z = L.tensor([3.0], dtype=L.float64, requires_grad=True)
    for name, t in (("x", x), ("z", z)):
        t.register_post_accumulate_grad_hook(
            lambda p, name=name: calls.append((name, p.grad.detach().numpy().copy())))
    (x * x + x * 3).sum().backward()  # x used twice: one call, with the total
    L.autograd.grad((x * z).sum(), x)  # accumulates nothing: no call
    (x.sum() * z).sum().backward(inputs=[z])  # z's only
    ((x * x).sum() * z).sum().backward(create_graph=True)  # (PyTorch warns: a cycle)
    x.grad, z.grad = x.grad.detach(), z.grad.detach()
    x.register_hook(lambda g: g * 10)  # runs before the accumulation
    (x * z.detach()).sum().backward()
    x.backward(L.ones(2, dtype=L.float64))  # a backward of the leaf itself
    handle = z.register_post_accumulate_grad_hook(lambda p: (p.grad.mul_(0.5), None)[1])
    (x.detach() * z).sum().backward()  # (its hooks in order: the second halves .grad)
    handle.remove()
    (x.detach() * z).sum().backward()
    return calls + [("grads", x.grad.numpy().copy()), ("grads", z.grad.numpy().copy())]


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_post_accumulate_grad_hook_calls_equal_pytorch():
    theirs, ours = post_hook_program(torch_real), post_hook_program(symgrad)
    assert [name for name, _ in ours] == [name for name, _ in theirs]
    for (_, a), (_, b) in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_post_accumulate_grad_hook_errors():
    for L in (torch_real, symgrad):
        x = L.tensor([1.0, 2.0], dtype=L.float64)
        with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that "
                                               "doesn't require gradient"):
            x.register_post_accumulate_grad_hook(lambda p: None)
        x.requires_grad_()
        with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be "
                                               "registered on non-leaf tensors"):
            (x * 2).register_post_accumulate_grad_hook(lambda p: None)
        handle = x.register_post_accumulate_grad_hook(lambda p: p.grad * 2)
        with pytest.raises(RuntimeError, match="post accumulate grad hooks should return None"):
            (x * x).sum().backward()
        handle.remove()
        x.register_post_accumulate_grad_hook(lambda p: (p.grad.zero_(), None))
        with pytest.raises(TypeError, match="expected Variable, but hook returned 'tuple'"):
            (x * x).sum().backward()


def optimizer_in_backward(L, variant):
    """PyTorch's tutorial idiom: each parameter's optimizer steps in its post-accumulate-grad
    hook (and zeroes its .grad); the hooks added at step 2 or removed at step 2 (an
    optimizer.step() after backward() then), over several steps of one structure."""
    rng = np.random.default_rng(3)
    model = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.Tanh(), L.nn.Linear(4, 1)).double()
    with L.no_grad():
        for p in model.parameters():
            p.copy_(L.tensor(rng.normal(size=tuple(p.shape))))
    X, Y = L.tensor(rng.normal(size=(5, 3))), L.tensor(rng.normal(size=(5, 1)))
    params = list(model.parameters())
    opt = {p: L.optim.Adam([p], lr=0.1) for p in params}
    seen = []

    def hook(p):
        seen.append(p.grad.numpy().copy())
        opt[p].step()
        opt[p].zero_grad()
    handles = [] if variant == "added" else [
        p.register_post_accumulate_grad_hook(hook) for p in params]
    out = []
    for k in range(5):
        if k == 2 and variant == "added":
            handles = [p.register_post_accumulate_grad_hook(hook) for p in params]
        if k == 2 and variant == "removed":
            for h in handles:
                h.remove()
        loss = ((model(X) - Y) ** 2).mean()
        loss.backward()
        if not handles or variant == "removed" and k >= 2:
            for p in params:
                opt[p].step()
                opt[p].zero_grad()
        out += [loss.detach().numpy().copy()] + [p.detach().numpy().copy() for p in params]
        out += [p.grad is None for p in params]
    return out + seen


@pytest.mark.parametrize(("variant", "compiled"), [
    ("always", False), ("added", False), ("removed", False), ("always", True)])
def test_optimizer_in_backward_equals_pytorch(monkeypatch, variant, compiled):
    monkeypatch.setattr(config, "eager_compile", compiled)
    theirs = optimizer_in_backward(torch_real, variant)
    ours = optimizer_in_backward(symgrad, variant)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-14)
