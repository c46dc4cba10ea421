"""The replayed training step (:mod:`symgrad.eager.replay`) against real PyTorch.

Each program is written once, as a function of the module, and run step by step with
real PyTorch (float64) and with symgrad from the same weights; after every step the
loss, every parameter and every gradient must agree to rtol 1e-12. Each program
changes something between steps that the replay's guard must see (a shape, a dtype,
``requires_grad``, the op sequence, an in-place write inside the forward, ``no_grad``,
``retain_grad``, ``.data``, an ``autograd.Function``, the learning rate, a Python
scalar), so the backward either reads the forward's saved values or recomputes them,
and either way the numbers are PyTorch's. Most tests run the backward on the numpy
interpreter (``eager_compile`` off: the same lowered graphs, no Numba compile);
``test_replay_happens_compiled`` compiles one kernel and checks the counters, so that
the speed-up cannot silently disappear. Tensor hooks (``register_hook``) added and
removed between steps are in tests/test_hooks.py; writes through aliases and index
tensors between forward and backward in tests/test_replay_aliases.py; leaves, data
and copies changed between forward and backward in tests/test_replay_saved.py.
"""

from __future__ import annotations

import numpy as np
import pytest

torch_real = pytest.importorskip("torch")

import symgrad  # noqa: E402
from symgrad.core.config import config  # noqa: E402
from symgrad.eager.replay import replay_stats  # noqa: E402

RTOL = 1e-12


@pytest.fixture(autouse=True)
def interpreted(monkeypatch):
    monkeypatch.setattr(config, "eager_compile", False)
    before = torch_real.get_default_dtype()  # (restored: a later file's LayerNorm is float32)
    torch_real.set_default_dtype(torch_real.float64)
    yield
    torch_real.set_default_dtype(before)


def _close(a, b, what):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    np.testing.assert_allclose(a, b, rtol=RTOL, atol=1e-300, err_msg=what)


def run_both(program, steps, **kw):
    """Run ``program(torch, state)`` with both libraries; compare after every step."""
    reference = program(torch_real, None, **kw)
    ours = program(symgrad, reference["state"], **kw)
    for k in range(steps):
        a, b = reference["step"](k), ours["step"](k)
        assert a.keys() == b.keys()
        for name in a:
            if a[name] is None or b[name] is None:
                assert a[name] is None and b[name] is None, (k, name)
            else:
                _close(b[name], a[name], f"step {k}: {name}")


def _values(torch, model, loss):
    out = {"loss": loss.detach().numpy().copy()}
    for name, p in model.named_parameters():
        out[name] = p.detach().numpy().copy()
        out[name + ".grad"] = None if p.grad is None else p.grad.detach().numpy().copy()
    return out


def classifier(torch, state, change=None, opt="adam", grow=True, hidden=8):
    """A two-layer classifier; ``change(k, ctx)`` alters step k (see the tests)."""
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, hidden), nn.ReLU(), nn.Linear(hidden, 3)).double()
    if state is not None:
        model.load_state_dict({k: torch.tensor(v) for k, v in state.items()})
    rng = np.random.default_rng(1)
    rows = [5 + (grow and k == 3) for k in range(8)]  # step 3: another batch size
    xs = [torch.tensor(rng.standard_normal((n, 6))) for n in rows]
    ys = [torch.tensor(rng.integers(0, 3, n)) for n in rows]
    optimizer = (torch.optim.Adam(model.parameters(), lr=0.01) if opt == "adam" else
                 torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9))
    loss_fn = nn.CrossEntropyLoss()
    ctx = {"torch": torch, "model": model, "opt": optimizer}

    def step(k):
        optimizer.zero_grad()
        x, y = xs[k], ys[k]
        forward = ctx.get("forward") or model
        if change is not None:
            out = change(k, ctx, x)
            if out is not None:
                x, forward = out[0], out[1] or forward
        loss = loss_fn(forward(x), y)
        loss.backward()
        optimizer.step()
        return _values(torch, model, loss)

    return {"state": {k: v.detach().numpy() for k, v in model.state_dict().items()},
            "step": step}


def test_plain_steps_and_shape_change():
    """Same structure every step but step 3, whose batch has 6 rows (a new shape)."""
    before = replay_stats()
    run_both(classifier, 6)
    assert replay_stats()["replayed"] - before["replayed"] >= 6  # symgrad's 6 backwards


def test_op_sequence_changes_mid_training():
    def change(k, ctx, x):
        torch, model = ctx["torch"], ctx["model"]
        if k in (2, 4):  # tanh instead of relu, then back
            return x, lambda z: model[2](torch.tanh(model[0](z)))
        return None
    run_both(classifier, 6, change=change)


def test_requires_grad_flips():
    def change(k, ctx, x):
        first = ctx["model"][0]
        first.weight.requires_grad_(k not in (2, 3))
        first.bias.requires_grad_(k != 4)
        return None
    run_both(classifier, 6, change=change)


def test_learning_rate_and_captured_scalar_change():
    def change(k, ctx, x):
        ctx["opt"].param_groups[0]["lr"] = 0.01 * (k + 1)
        model, scale = ctx["model"], 1.0 + 0.5 * k  # a Python number in the graph
        return x, lambda z: model(z) * scale
    run_both(classifier, 5, change=change)
    run_both(classifier, 4, change=change, opt="sgd")


def test_no_grad_regions():
    def change(k, ctx, x):
        torch, model = ctx["torch"], ctx["model"]
        with torch.no_grad():
            shift = model(x).mean() * 0.1  # computed without a graph, then used as data
            if k == 2:
                model[0].bias.add_(0.01)  # an update under no_grad: versions move
        return x, lambda z: model(z) - shift
    run_both(classifier, 5, change=change)


def test_inplace_write_inside_forward():
    """``relu_`` on the first layer's output (a result whose node saves nothing in
    PyTorch): the nodes made before the write recompute, those after it replay."""
    def change(k, ctx, x):
        torch, model = ctx["torch"], ctx["model"]

        def forward(z):
            h = model[0](z)
            if k % 2:
                h.relu_()
                return model[2](h * 1.0)
            return model[2](torch.relu(h))
        return x, forward
    run_both(classifier, 5, change=change)


def test_retain_grad_and_data_writes():
    def program(torch, state):
        rng = np.random.default_rng(2)
        w = torch.tensor(rng.standard_normal(4), requires_grad=True)
        x = torch.tensor(rng.standard_normal(4))

        def step(k):
            y = x * w
            if k == 1:
                y.retain_grad()
            if k == 2:
                y.data.mul_(2)  # values changed behind the node's back: read as they are
            z = (y * y).exp().sum()
            z.backward()
            out = {"loss": z.detach().numpy().copy(), "w.grad": w.grad.numpy().copy(),
                   "y.grad": None if k != 1 else y.grad.numpy().copy()}
            with torch.no_grad():
                w.sub_(0.01 * w.grad)
            w.grad = None
            return out
        return {"state": None, "step": step}
    run_both(program, 4)


def test_inplace_on_a_saved_tensor_raises_as_pytorch():
    for torch in (torch_real, symgrad):
        x = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
        for k in range(3):  # two clean steps, then an in-place change of exp's output
            y = (x * 2).exp()
            if k == 2:
                y.add_(1)
            loss = (y * 3).sum()
            if k < 2:
                loss.backward()
                continue
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                loss.backward()


def test_autograd_function_and_detach():
    def program(torch, state):
        class Cube(torch.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a ** 3

            @staticmethod
            def backward(ctx, g):
                (a,) = ctx.saved_tensors
                return 3 * a ** 2 * g

        rng = np.random.default_rng(3)
        w = torch.tensor(rng.standard_normal(3), requires_grad=True)

        def step(k):
            h = w.sin()
            if k >= 2:
                h = Cube.apply(h) + h.detach() * h
            loss = (h * h).sum()
            loss.backward()
            out = {"loss": loss.detach().numpy().copy(), "w.grad": w.grad.numpy().copy()}
            with torch.no_grad():
                w.sub_(0.05 * w.grad)
            w.grad = None
            return out
        return {"state": None, "step": step}
    run_both(program, 4)


def test_dtype_change():
    """A float32 step between float64 ones: another structure (a float32 backward, as
    PyTorch's); its float32 values are fed too."""
    for torch in (torch_real, symgrad):
        rng = np.random.default_rng(4)
        w64 = torch.tensor(rng.standard_normal(5), requires_grad=True)
        grads = []
        for k in range(4):
            w = w64 if k != 2 else w64.detach().float().requires_grad_()
            before = replay_stats()
            ((w * 3).tanh() * w).sum().backward()
            grads.append(w.grad.numpy().astype(np.float64).copy())
            w.grad = None
            if torch is symgrad:
                moved = {k2: replay_stats()[k2] - before[k2] for k2 in before}
                assert moved["replayed"] == 1, (k, moved)
        if torch is torch_real:
            expected = grads
    for k, (a, b) in enumerate(zip(grads, expected)):
        np.testing.assert_allclose(a, b, rtol=RTOL if k != 2 else 1e-6)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_fused_adam_equals_pytorch(monkeypatch, dtype):
    """Adam and AdamW with weight decay, as one Numba loop (``eager_compile`` on), and
    bit for bit the numpy update it replaces."""
    monkeypatch.setattr(config, "eager_compile", True)
    rng = np.random.default_rng(5)
    w0, gs = rng.standard_normal((7, 9)), rng.standard_normal((4, 7, 9))
    results = {}
    for name, torch, fused in (("torch", torch_real, None), ("fused", symgrad, True),
                               ("numpy", symgrad, False)):
        for opt_cls, kw in ((torch.optim.Adam, dict(lr=0.01, weight_decay=0.1)),
                            (torch.optim.AdamW, dict(lr=0.01, betas=(0.3, 0.99)))):
            w = torch.tensor(w0.astype(dtype), requires_grad=True)
            opt = opt_cls([w], **kw)
            if fused is not None:
                monkeypatch.setattr(config, "eager_compile", fused)
            for g in gs:
                w.grad = torch.tensor(g.astype(dtype))
                opt.step()
            results[name, opt_cls.__name__] = w.detach().numpy().copy()
    for opt in ("Adam", "AdamW"):
        assert np.array_equal(results["fused", opt], results["numpy", opt])
        np.testing.assert_allclose(results["fused", opt], results["torch", opt],
                                   rtol=RTOL if dtype == "float64" else 1e-5)


def seed_loop(torch, state):
    """The seeds' train loop (benchmarks/train_loop.py): the same graph every step."""
    x = torch.tensor(np.random.default_rng(6).standard_normal(7), requires_grad=True)

    def step(k):
        y = x + 2
        z = y * y * 3 + y.exp() * 0.25  # exp: a value the reverse sweep reads
        out = z.mean()
        out.backward()
        values = {"loss": out.detach().numpy().copy(), "x.grad": x.grad.numpy().copy()}
        x.data -= 0.1 * x.grad.data
        x.grad.data.zero_()
        return values
    return {"state": None, "step": step}


def test_replay_happens_compiled(monkeypatch):
    """The compiled backward of a repeated step reads the saved forward values (one
    kernel for the structure, every step replayed) and equals PyTorch."""
    monkeypatch.setattr(config, "eager_compile", True)
    from symgrad.eager.backward import backward_stats

    before, kernels = replay_stats(), backward_stats()["compiled_runs"]
    run_both(seed_loop, 4)
    after = replay_stats()
    assert after["replayed"] - before["replayed"] == 4
    assert after["fed_values"] - before["fed_values"] == 4  # exp's value, every step
    assert after["recomputed"] == before["recomputed"]
    assert backward_stats()["compiled_runs"] - kernels == 3  # steps 2-4 on the kernel


def _two_losses(L, compiled):
    """Two losses of one float32 mean, one backward each: the first frees the mean's
    kept value (its node saves nothing, as PyTorch's), so the second's kernel recomputes
    it (a float32 sum over axes in the kernel, an operand of ``np.dot``)."""
    rng = np.random.default_rng(0)
    x, w1, w2 = (L.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True)
                 for s in ((8, 5, 6), (6, 3), (6, 3)))
    for _ in range(3):
        h = x.mean(1)
        (h @ w1).tanh().sum().backward()
        (h @ w2).sum().backward()
    return [t.grad.numpy() for t in (x, w1, w2)]


@pytest.mark.filterwarnings("error::symgrad.autograd.KernelFallbackWarning")
def test_float32_mean_recomputed_in_a_compiled_kernel(monkeypatch):
    """The kernel that recomputes a float32 mean compiles (its float64 sum given to
    ``np.dot`` with a float32 matrix was a Numba TypingError, and the backward fell back
    to the interpreter) and equals the interpreter and PyTorch (float32 roundings)."""
    import collections

    from symgrad.eager import backward

    interpreted = _two_losses(symgrad, False)
    monkeypatch.setattr(config, "eager_compile", True)
    monkeypatch.setattr(backward, "_CACHE", collections.OrderedDict())  # (compile anew)
    before, recomputed = backward.backward_stats(), replay_stats()["recomputed"]
    compiled = _two_losses(symgrad, True)
    after = backward.backward_stats()
    assert replay_stats()["recomputed"] - recomputed == 3  # the second loss's, each step
    assert after["compiled_runs"] - before["compiled_runs"] == 4  # steps 2-3, both losses
    assert after["interpreted"] - before["interpreted"] == 2  # step 1
    for got, same, want in zip(compiled, interpreted, _two_losses(torch_real, False)):
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, same, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
