"""Adam and AdamW against real PyTorch 2.13 bit for bit (float64 and float32; amsgrad,
weight decay both ways, maximize, a first beta under and over 0.5), through the one-loop
update (symgrad/eager/fused_adam.py) and the numpy one.

PyTorch's ``Tensor.sqrt`` on CPU calls MKL's vector sqrt, which is not correctly rounded
(one ulp off in about 1% of float64 and 15% of float32 elements: see
``test_pytorch_sqrt_is_not_correctly_rounded``); every other step of its Adam is IEEE
arithmetic. So the oracle is PyTorch's own update (its default single-tensor one on CPU,
foreach=False; foreach gives the same bits) with ``Tensor.sqrt`` replaced by the
correctly rounded ``np.sqrt``, which symgrad computes."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import symgrad  # noqa: E402
from symgrad.core.config import config  # noqa: E402

CONFIGS = [  # (class, options)
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(betas=(0.3, 0.99), maximize=True)),  # lerp's weight 0.7: its other formula
    ("AdamW", dict(lr=0.01, betas=(0.6, 0.9), weight_decay=0.1, amsgrad=True, maximize=True)),
    # without amsgrad: the decoupled decay in the branchless loop, L2 in the general one
    ("AdamW", dict(lr=0.01, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, betas=(0.6, 0.9), weight_decay=0.1)),
    # the largest beta2: sqrt(1 - beta2) = 2**-26.5, the least c2 of _quotient's (fused_adam)
    ("Adam", dict(lr=0.01, betas=(0.9, 1 - 2.0 ** -53))),
]


def _steps(lib, name, options, p0, grads):
    w = lib.tensor(p0, requires_grad=True)
    opt = getattr(lib.optim, name)([w], **options)
    for g in grads:
        w.grad = lib.tensor(g)
        opt.step()
    return w.detach().numpy().copy(), opt.state_dict()["state"][0]


def _correctly_rounded_sqrt(self):
    return torch.from_numpy(np.sqrt(self.numpy()))


@pytest.mark.parametrize("compiled", [True, False], ids=["one-loop", "numpy"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name, options", CONFIGS, ids=[f"{n}-{i}" for i, (n, _) in
                                                        enumerate(CONFIGS)])
def test_adam_equals_pytorch_bit_for_bit(monkeypatch, name, options, dtype, compiled):
    rng = np.random.default_rng(11)
    p0 = rng.standard_normal(1003).astype(dtype)  # (not a multiple of a vector)
    grads = rng.standard_normal((6, 1003)).astype(dtype)
    monkeypatch.setattr(config, "eager_compile", compiled)
    got, state = _steps(symgrad, name, options, p0, grads)
    monkeypatch.setattr(torch.Tensor, "sqrt", _correctly_rounded_sqrt)
    want, ref = _steps(torch, name, options, p0, grads)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    for key in ("exp_avg", "exp_avg_sq", "max_exp_avg_sq"):
        if key in ref:
            np.testing.assert_array_equal(state[key].numpy(), ref[key].numpy(), err_msg=key)
    assert not np.array_equal(got, p0)


def test_pytorch_sqrt_is_not_correctly_rounded():
    """Why the test above replaces PyTorch's sqrt (if this fails, PyTorch's sqrt became
    correctly rounded: drop the replacement there); foreach=True gives the default's bits."""
    x = np.abs(np.random.default_rng(2).standard_normal(1000)) + 0.1
    assert (torch.tensor(x).sqrt().numpy() != np.sqrt(x)).any()
    p0, grads = x - 0.6, np.random.default_rng(3).standard_normal((3, 1000))
    single = _steps(torch, "Adam", dict(lr=0.01, foreach=False), p0, grads)[0]
    foreach = _steps(torch, "Adam", dict(lr=0.01, foreach=True), p0, grads)[0]
    np.testing.assert_array_equal(single, foreach)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fused_quotient_is_the_division(dtype):
    """The one-loop update's ``sqrt(v) / c2`` by multiplications (``fused_adam._quotient``)
    against IEEE division, for ``sqrt(v)`` over the dtype's whole range (and 0, -0, inf,
    NaN) and ``c2`` of several beta2's first steps and at the bounds of its use."""
    from numba import njit

    from symgrad.eager import fused_adam

    fused_adam._kernel()
    quotient = fused_adam._quotient

    @njit
    def quotients(s, c2, r2, out):
        for i in range(s.size):
            out[i] = quotient(s[i], c2, r2)

    rng = np.random.default_rng(4)
    top = 1023 if dtype is np.float64 else 127
    low = -1074 if dtype is np.float64 else -149
    v = (2.0 ** rng.uniform(low, top, 4000)).astype(dtype)
    s = np.sqrt(np.concatenate([v, rng.uniform(1, 4, 4000).astype(dtype),
                                np.array([0.0, -0.0, np.inf, np.nan], dtype)]))
    c2s = [np.sqrt(1 - b ** t) for b in (0.999, 0.99, 0.9) for t in (1, 2, 3, 7, 50, 999)]
    out = np.empty_like(s)
    for c2 in [dtype(c) for c in c2s + [1.0, 2.0 ** -30, 0.7071, 0.0316]]:
        quotients(s, c2, dtype(1) / c2, out)
        want = s / c2
        np.testing.assert_array_equal(out, want)
        assert np.array_equal(np.signbit(out), np.signbit(want))


def test_first_steps_of_two_threads_at_once_equal_pytorch(monkeypatch):
    """Two training loops in threads whose first Adam steps make the one-loop kernel at
    once (before: the second thread's jit of the first's jitted ``_quotient`` raised a
    TypeError); each thread's parameters are PyTorch's."""
    import threading
    import time

    from symgrad.eager import fma_loops, fused_adam

    def slow_intrinsic(made=fma_loops._intrinsic):  # (the other thread runs meanwhile)
        time.sleep(0.05)
        return made()

    monkeypatch.setattr(fma_loops, "_intrinsic", slow_intrinsic)
    monkeypatch.setattr(config, "eager_compile", True)
    quotient = getattr(fused_adam._quotient, "py_func", fused_adam._quotient)
    monkeypatch.setattr(fused_adam, "_quotient", quotient)
    monkeypatch.setattr(fused_adam, "_KERNEL", None)
    start, found = threading.Barrier(2), {}

    def train(lib, k):
        w = lib.tensor(np.linspace(-1, 1, 6) * (k + 1), requires_grad=True)
        opt = lib.optim.Adam([w], lr=0.1)
        for step in range(3):
            opt.zero_grad()
            (w * w).sum().backward()
            if lib is symgrad and not step:  # (the first steps at once)
                start.wait()
            opt.step()
        found[lib.__name__, k] = w.detach().numpy().copy()
    threads = [threading.Thread(target=train, args=(symgrad, k)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(2):
        train(torch, k)
        np.testing.assert_allclose(found["symgrad", k], found["torch", k], rtol=1e-15)


@pytest.mark.parametrize("compiled", [True, False], ids=["one-loop", "numpy"])
@pytest.mark.parametrize("lr_dtype", ["float64", "float32"])
def test_adamw_with_a_tensor_lr_changed_in_place_equals_pytorch(monkeypatch, lr_dtype,
                                                                 compiled):
    """A Tensor lr that a schedule changes in place between steps: each step's decoupled
    decay ``1 - lr * wd`` from the lr of that step (the one-loop update's per-group
    constants were cached by the Tensor's identity: the first step's decay ever after; the
    numpy update raised on the Tensor)."""
    monkeypatch.setattr(config, "eager_compile", compiled)
    rng = np.random.default_rng(8)
    p0, grads = rng.standard_normal(50), rng.standard_normal((4, 50))
    got = []
    for lib in (symgrad, torch):
        if lib is torch:
            monkeypatch.setattr(torch.Tensor, "sqrt", _correctly_rounded_sqrt)
        w = lib.tensor(p0, requires_grad=True)
        lr = lib.tensor(0.01, dtype=getattr(lib, lr_dtype))
        opt = lib.optim.AdamW([w], lr=lr, weight_decay=0.1)
        for g in grads:
            w.grad = lib.tensor(g)
            opt.step()
            lr.mul_(0.5)
        got.append(w.detach().numpy().copy())
    np.testing.assert_array_equal(got[0], got[1])
