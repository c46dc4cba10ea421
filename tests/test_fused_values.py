"""Values PyTorch's CPU kernels round differently from their formulas, bit for bit.

``lerp`` and ``addcmul`` are one fused multiply-add in PyTorch's vectorized kernels
(symgrad/eager/fused_values.py): compared with PyTorch bit for bit over a few hundred
random values, out of place and in place, recorded or not, in float32 and float64
(and bfloat16/float16 through float32), and the exact ``fma`` they use with LLVM's
``llvm.fma`` (an oracle that does not depend on PyTorch's CPU capability: its
``DEFAULT`` one, a CPU without AVX2, rounds the formulas twice). ``max_pool``'s window
whose maximum is -0.0 gives -0.0, as PyTorch's.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from torch_oracle import float64_default  # noqa: E402,F401

import symgrad as sg  # noqa: E402
from symgrad.eager.bf16 import _fma_numpy, fma  # noqa: E402

FUSED_CPU = torch.backends.cpu.get_cpu_capability() != "DEFAULT"
needs_fused = pytest.mark.skipif(not FUSED_CPU, reason="PyTorch's DEFAULT CPU kernels round "
                                 "lerp and addcmul twice (checked against LLVM's fma here)")


def _llvm_fma(dtype):
    """``a + b * c`` by LLVM's ``llvm.fma`` over arrays (the loops the compiled path runs;
    the oracle of the numpy emulation)."""
    from symgrad.eager import fma_loops

    def run(a, b, c):
        out = np.empty_like(a)
        fma_loops.loop()(*(np.ascontiguousarray(v, dtype) for v in (a, b, c)), out)
        return out
    return run


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fma_is_llvms_fused_multiply_add(dtype):
    rng = np.random.default_rng(3)
    n = 5000
    a, b, c = (rng.standard_normal(n) * np.exp2(rng.integers(-40, 40, n)) for _ in range(3))
    a[:n // 3] = -(b[:n // 3] * c[:n // 3])  # near cancellation, the hard case
    a[:20], b[:20] = -0.0, -0.0  # signed zeros
    a, b, c = (v.astype(dtype) for v in (a, b, c))
    want = _llvm_fma(dtype)(a, b, c)
    # the numpy emulation (SYMGRAD_EAGER_COMPILE=0), and fma as called (a compiled loop)
    for got in (_fma_numpy(a, b, c), fma(a, b, c), fma(a[:7, None], b[:5], c[:5])):
        assert got.dtype == dtype
        k = got.shape[0]
        expected = want if got.ndim == 1 else _llvm_fma(dtype)(
            *(np.ascontiguousarray(np.broadcast_to(v, got.shape)).reshape(-1)
              for v in (a[:k, None], b[:5], c[:5]))).reshape(got.shape)
        np.testing.assert_array_equal(got.view(np.uint8), expected.view(np.uint8))
    assert (_fma_numpy(a, b, c) != a + b * c).sum() > n // 20  # (the roundings differ)
    # infinities and NaN (values: a NaN's sign bit is the CPU's)
    special = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1.5, 3e38], dtype)
    x, y, z = (v.reshape(-1) for v in np.meshgrid(special, special, special))
    np.testing.assert_array_equal(_fma_numpy(x, y, z), _llvm_fma(dtype)(x, y, z))


def _bits(t):
    a = t.detach().float().numpy() if "16" in str(t.dtype) else t.detach().numpy()
    return np.ascontiguousarray(a).view(np.uint8)


_OPS = {
    "lerp(0.3)": lambda L, s, e, a, b: L.lerp(s, e, 0.3),
    "lerp(0.7)": lambda L, s, e, a, b: s.lerp(e, 0.7),
    "lerp(tensor)": lambda L, s, e, a, b: L.lerp(s, e, b.abs() - 0.3),
    "lerp(broadcast)": lambda L, s, e, a, b: L.lerp(s, e[0], b[:, :1]),
    "lerp_": lambda L, s, e, a, b: (s * 1).lerp_(e, 0.6),
    "lerp_(tensor)": lambda L, s, e, a, b: (s * 1).lerp_(e, a.detach() * 0.5),
    "addcmul": lambda L, s, e, a, b: L.addcmul(s, a, b),
    "addcmul(value)": lambda L, s, e, a, b: s.addcmul(a, b[0], value=-1.7),
    "addcmul_": lambda L, s, e, a, b: (s * 1).addcmul_(a, b, value=0.3),
    "addcdiv": lambda L, s, e, a, b: L.addcdiv(s, a, b, value=2.5),
    "addcdiv_": lambda L, s, e, a, b: (s * 1).addcdiv_(a, b),
}


@needs_fused
@pytest.mark.parametrize("dtype, shape", [("float64", (6, 50)), ("float32", (6, 50)),
                                          ("bfloat16", (6, 50)), ("float16", (6, 50)),
                                          ("float64", (90, 50)), ("float32", (90, 50))])
def test_lerp_addcmul_addcdiv_equal_pytorch_bit_for_bit(dtype, shape):
    """(90 x 50: the compiled loop of :func:`fma`, where eager kernels are on)"""
    rng = np.random.default_rng(11)
    arrays = [rng.standard_normal(shape) for _ in range(4)]
    reduced = "16" in dtype
    for name, op in _OPS.items():
        for grad in (False,) if reduced else (False, True):
            got, want = (op(L, *(L.tensor(v).to(getattr(L, dtype)).requires_grad_(grad)
                                 for v in arrays)) for L in (sg, torch))
            assert str(got.dtype) == str(want.dtype), name
            different = (_bits(got) != _bits(want)).reshape(got.numel(), -1).any(1)
            assert not different.any(), f"{name} {dtype} grad={grad}: {different.sum()} " \
                                        f"of {got.numel()} elements differ"
            if grad:
                assert got.requires_grad and got.grad_fn is not None
                seed = np.random.default_rng(1).uniform(-1, 1, got.shape)
                ins = [[L.tensor(v).to(getattr(L, dtype)).requires_grad_() for v in arrays]
                       for L in (sg, torch)]
                outs = [op(L, *xs) for L, xs in zip((sg, torch), ins)]
                gs = [L.autograd.grad((o * L.tensor(seed).to(o.dtype)).sum(), xs,
                                      allow_unused=True)
                      for L, o, xs in zip((sg, torch), outs, ins)]
                for g, w in zip(*gs):
                    if w is not None:
                        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6,
                                                   err_msg=name)


_ALPHA_OPS = {
    "add(alpha)": lambda L, a, b: a.add(b, alpha=0.3),
    # (b's gradient: alpha times each row's, then summed, as PyTorch's; two rows, whose
    # sum has no order: symgrad's sums of more rows are not always PyTorch's)
    "sub(alpha)": lambda L, a, b: L.sub(a[:2], b[0], alpha=1.7),
    # (288 elements, a multiple of PyTorch's two AVX-512 vectors: its scalar loop over
    # the rest rounds alpha * number before adding, which symgrad does not do)
    "add(number, alpha)": lambda L, a, b: a.reshape(-1)[:288].add(1.3, alpha=0.7),
    "sub(int alpha)": lambda L, a, b: b.sub(a, alpha=3),
    # in place on a recorded tensor as Tensor.add/sub (it rounded alpha * b first, and
    # multiplied a broadcast b's summed gradient by alpha)
    "add_(alpha)": lambda L, a, b: (a * 1).add_(b, alpha=0.3),
    "sub_(alpha)": lambda L, a, b: (a[:2] * 1).sub_(b[0], alpha=1.7),
}


@needs_fused
@pytest.mark.parametrize("dtype, shape", [("float64", (6, 50)), ("float32", (6, 50)),
                                          ("float32", (90, 50))])
def test_add_sub_alpha_recorded_equal_pytorch_bit_for_bit(dtype, shape):
    """``add``/``sub`` with ``alpha`` round once (PyTorch's fma) where they are recorded
    too (they rounded ``alpha * b`` first), with PyTorch's gradients, bit for bit."""
    rng = np.random.default_rng(4)
    a, b, seed = (rng.standard_normal(shape).astype(dtype) for _ in range(3))
    for name, op in _ALPHA_OPS.items():
        got, want = [], []
        for L, out in ((sg, got), (torch, want)):
            x, y = L.tensor(a, requires_grad=True), L.tensor(b, requires_grad=True)
            r = op(L, x, y)
            (r * L.tensor(seed.reshape(-1)[:r.numel()].reshape(r.shape))).sum().backward()
            out += [r.detach().numpy(), x.grad.numpy(),
                    np.zeros(1) if y.grad is None else y.grad.numpy(),
                    type(r.grad_fn).__name__ if L is torch else r.grad_fn.name()]
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w, err_msg=name)


@needs_fused
def test_add_alpha_of_a_numpy_scalar_equal_pytorch_bit_for_bit():
    """A numpy scalar operand is PyTorch's number: ``x.add(np.float32(0.7), alpha=0.3)`` of
    float64 ``x`` took ``0.3 * np.float32(0.7)`` in float32 (4e-8 off, not an ulp). (288
    elements: PyTorch's vector loop, as in _ALPHA_OPS.)"""
    values = np.random.default_rng(6).standard_normal(288)
    for dtype in ("float64", "float32"):
        for b in (np.float32(0.7), np.float64(0.7), np.float16(0.7), np.int64(3)):
            got, want = [], []
            for L, out in ((sg, got), (torch, want)):
                x = L.tensor(values, dtype=getattr(L, dtype))
                z = (x * 1).requires_grad_()
                out += [x.add(b, alpha=0.3), x.sub(b, alpha=3), z.clone().add_(b, alpha=0.3)]
            for g, w in zip(got, want):
                assert str(g.dtype) == str(w.dtype)
                np.testing.assert_array_equal(g.detach().numpy(), w.detach().numpy(),
                                              err_msg=f"{dtype} {b!r}")


@needs_fused
def test_lerp_addcmul_of_infinities_equal_pytorchs():
    s = [np.inf, -np.inf, np.nan, 1.0, -0.0, 0.0, 1e308, -1e308, 2.0, 0.1]
    e = [1.0, np.inf, 0.0, np.inf, -0.0, -0.0, -1e308, 1e308, 3.0, 0.2]
    for dtype in ("float64", "float32"):
        for grad in (False, True):
            for op in (lambda L, a, b: L.lerp(a, b, 0.3), lambda L, a, b: a.lerp(b, b * 0 + 0.6),
                       lambda L, a, b: L.addcmul(a, b, b, value=0.5),
                       lambda L, a, b: a.add(b, alpha=0.5)):  # (float32: NaN on main)
                got, want = (op(L, L.tensor(s, dtype=getattr(L, dtype), requires_grad=grad),
                                L.tensor(e, dtype=getattr(L, dtype), requires_grad=grad))
                             for L in (sg, torch))
                np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())


def test_lerp_double_backward_equals_pytorchs():
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal((3, 4)) for _ in range(3)]
    results = []
    for L in (sg, torch):
        s, e, w = (L.tensor(v, requires_grad=True) for v in arrays)
        out = L.lerp(s, e, w) * L.addcmul(s, e, w, value=0.5)
        firsts = L.autograd.grad(out.sum(), (s, e, w), create_graph=True)
        seconds = L.autograd.grad(sum((g * g).sum() for g in firsts), (s, e, w))
        results.append([g.detach().numpy() for g in (*firsts, *seconds)])
    for g, w in zip(*results):
        np.testing.assert_allclose(g, w, rtol=1e-12)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_max_pool_keeps_the_sign_of_a_zero_maximum(d):
    rng = np.random.default_rng(d)
    a = rng.choice(np.array([-0.0, 0.0, -1.0, -2.0]), size=(2, 3) + (6,) * d)
    for dtype in ("float64", "float32"):
        for kw in (dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                   dict(kernel_size=2, ceil_mode=True, stride=3)):
            got, want = (getattr(L.nn.functional, f"max_pool{d}d")(
                L.tensor(a.astype(dtype)).requires_grad_(), **kw) for L in (sg, torch))
            np.testing.assert_array_equal(_bits(got), _bits(want), err_msg=str(kw))
            assert np.signbit(want.detach().numpy()).any()  # (the case is there)
    x = sg.tensor([[[-0.0, 0.0, -0.0, -1.0]]], requires_grad=True)
    y = sg.nn.MaxPool1d(2)(x)
    assert np.signbit(y.detach().numpy()).tolist() == [[[True, True]]]
    y.sum().backward()
    assert x.grad.tolist() == [[[1.0, 0.0, 1.0, 0.0]]]  # the first maximum, as PyTorch's


def test_constant_pad_keeps_negative_zeros():
    a = np.array([[-0.0, 1.0], [0.0, -0.0]])
    for dtype in ("float64", "float32"):
        got, want = (L.nn.functional.pad(L.tensor(a.astype(dtype)), (1, 2, 0, 1), value=-0.0)
                     for L in (sg, torch))
        np.testing.assert_array_equal(_bits(got), _bits(want))
