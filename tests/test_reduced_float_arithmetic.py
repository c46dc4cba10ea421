"""float16 and bfloat16 ``+ - * /`` against real PyTorch 2.13 on the CPU, bit for bit, over
many random values: PyTorch's kernels take a Python number (or a 0-d tensor as the second
operand) of ``*`` and ``/`` in float32, unrounded, compute in float32 and round once; in
``+`` and ``-`` the number is rounded to the tensor's dtype first; ``s / x`` is
``x.reciprocal() * s``; ``add(b, alpha=)`` rounds alpha, then adds in float32 (see
:mod:`symgrad.eager.bf16`). Conversions from float64 and int64 to float16 round through
float32, as PyTorch's ``c10::Half(float)``."""

from __future__ import annotations

import numpy as np
import pytest

torch_real = pytest.importorskip("torch")
pytest.importorskip("ml_dtypes")

import symgrad  # noqa: E402

RNG = np.random.default_rng(27)
#: 2048 values (64 of PyTorch's AVX-512 vectors: no scalar tail, see bf16.add_scaled) over
#: many magnitudes, and a second operand
X = RNG.standard_normal(2048) * 10.0 ** RNG.integers(-3, 4, 2048)
Y = RNG.standard_normal(2048) * 3
NUMBERS = (0.1, 1 / 3, -3.7, 2.3e-3, 1e4 + 0.1, 2049, -7)

OPS = {
    "add": lambda L, x, y, s: x + s, "sub": lambda L, x, y, s: x - s,
    "mul": lambda L, x, y, s: x * s, "div": lambda L, x, y, s: x / s,
    "radd": lambda L, x, y, s: s + x, "rsub": lambda L, x, y, s: s - x,
    "rmul": lambda L, x, y, s: s * x, "rdiv": lambda L, x, y, s: s / x,
    "mul_": lambda L, x, y, s: x.mul_(s), "div_": lambda L, x, y, s: x.div_(s),
    "imul": lambda L, x, y, s: x.__imul__(s), "itruediv": lambda L, x, y, s: x.__itruediv__(s),
    "iadd": lambda L, x, y, s: x.__iadd__(s), "isub": lambda L, x, y, s: x.__isub__(s),
    "torch.mul": lambda L, x, y, s: L.mul(x, s), "Tensor.div": lambda L, x, y, s: x.div(s),
    # a 0-d tensor: in float32 as the second operand only (t * x rounds t first)
    "x*0d-f64": lambda L, x, y, s: x * L.tensor(s, dtype=L.float64),
    "x/0d-f32": lambda L, x, y, s: x / L.tensor(s, dtype=L.float32),
    "0d-f32*x": lambda L, x, y, s: L.tensor(s, dtype=L.float32) * x,
    "x*0d-int": lambda L, x, y, s: x * L.tensor(int(s * 10)),
    "div-trunc": lambda L, x, y, s: x.div(s, rounding_mode="trunc"),
    "div-floor": lambda L, x, y, s: x.div(s, rounding_mode="floor"),
    # tensor with tensor: both rounded already, float32 arithmetic then one rounding
    "x+y": lambda L, x, y, s: x + y * s, "x-y": lambda L, x, y, s: x - y,
    "x*y": lambda L, x, y, s: x * y, "x/y": lambda L, x, y, s: x / y,
    "x/y-trunc": lambda L, x, y, s: x.div(y, rounding_mode="trunc"),
    "add-alpha": lambda L, x, y, s: x.add(y, alpha=s),
    "sub_-alpha": lambda L, x, y, s: x.sub_(y, alpha=s),
    "x*=y": lambda L, x, y, s: x.__imul__(y), "x/=y": lambda L, x, y, s: x.__itruediv__(y),
}


def _bits(t):
    return np.asarray(t.detach().float().numpy()).view(np.int32)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", OPS)
def test_arithmetic_equals_pytorch_bit_for_bit(name, dtype):
    for s in NUMBERS:
        if name.endswith("alpha") and abs(s) > 1e3 and dtype == "float16":
            continue  # (PyTorch: alpha 10000.1 times values up to 1e4 overflows; not compared)
        outs = []
        for L in (symgrad, torch_real):
            x, y = (L.tensor(v).to(getattr(L, dtype)) for v in (X, Y))
            with np.errstate(all="ignore"):
                outs.append(OPS[name](L, x, y, s))
        got, want = outs
        assert str(got.dtype) == str(want.dtype)
        same = (_bits(got) == _bits(want)) | (np.isnan(_bits(got).view(np.float32))
                                                & np.isnan(_bits(want).view(np.float32)))
        assert same.all(), f"{name} {s}: {np.mean(~same):.3f} of the elements differ"


def test_float16_conversions_round_through_float32():
    # just above a float32 tie of float16's: one rounding gives the upper neighbour,
    # PyTorch's two (to float32, then float16) the even one
    tie = np.array([1 + 2.0 ** -11 + 2.0 ** -40, -(3 + 2.0 ** -9 + 2.0 ** -35), 0.1, 65520.0])
    ints = np.array([2049, 2 ** 24 + 1, 70001, -(2 ** 40) - 12345])
    for data in (tie, ints):
        with np.errstate(all="ignore"):
            got, want = ([L.tensor(data).half(), L.tensor(data, dtype=L.float16),
                          L.tensor(data).to(L.float16),
                          L.ones(4, dtype=L.float16) + L.tensor(data) * 0]
                         for L in (symgrad, torch_real))
        for g, w in zip(got, want):
            assert str(g.dtype) == str(w.dtype)
            assert (_bits(g) == _bits(w)).all(), (g, w)


def test_float16_product_with_a_number_and_its_gradient():
    # the value in float32 (bit for bit); the gradient g * 0.1 as PyTorch's MulBackward0
    x = [L.tensor(X, dtype=L.float16, requires_grad=True) for L in (symgrad, torch_real)]
    g = RNG.standard_normal(2048)
    for L, t in zip((symgrad, torch_real), x):
        (t * 0.1).backward(L.tensor(g, dtype=L.float16))
    assert (_bits(x[0] * 0.1) == _bits(x[1] * 0.1)).all()
    assert (_bits(x[0].grad) == _bits(x[1].grad)).all()


def test_float16_cumsum_sigmoid_and_softmax_round_once_as_pytorchs():
    """float16 cumsum, sigmoid and softmax compute in float32 and round each result once,
    as PyTorch's CPU kernels: cumsum summed in float16 step by step (2837 of 3000 elements
    off, growing with the length), sigmoid and softmax rounded after each operation
    (about a third of the elements an ulp off)."""
    x = (np.random.default_rng(5).standard_normal((3, 1000)) * 3).astype(np.float16)
    outs = []
    for L in (symgrad, torch_real):
        t = L.tensor(x)
        outs.append([t.cumsum(1), L.cumsum(t, 0), t.sigmoid(), L.special.expit(t),
                     t.softmax(1), L.nn.functional.softmax(t, -1)])
    for got, want in zip(*outs):
        assert str(got.dtype) == str(want.dtype) == "torch.float16"
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.kernels
@pytest.mark.filterwarnings("error::symgrad.autograd.KernelFallbackWarning")
def test_float16_mean_backward_compiles():
    """The compiled backward of a float16 mean (its rounding to float16 is a Python
    callback between two kernels) compiles: the callback's 0-d result enters the next
    kernel as a scalar (a 0-d array there was a Numba TypingError at ``np.float32(a)``,
    and the backward fell back to the interpreter); PyTorch's gradient, bit for bit."""
    from symgrad.eager.backward import backward_stats

    a = (np.random.default_rng(3).standard_normal(19) * 30).astype(np.float16)
    grads = []
    before = backward_stats()["compiled_runs"]
    for L in (symgrad, torch_real):
        t = L.tensor(a, requires_grad=True)
        for _ in range(3):  # the second run of the structure compiles it
            m = t.mean()
            m.backward(L.ones_like(m))
        grads.append(t.grad.numpy())
    assert backward_stats()["compiled_runs"] - before == 2
    np.testing.assert_array_equal(grads[0], grads[1])


def test_float16_log_softmax_values_as_pytorchs():
    """float16 log_softmax: PyTorch's lastdim kernel stores the sum of exponentials and its
    log in float16 (all in float32 left 6% of the elements an ulp off); along another
    dimension all in float32, rounded once. Its gradient (the float32 formula's, rounded)
    is 1 to 2 float16 ulps off PyTorch's at times: compared to 1e-2."""
    x = (np.random.default_rng(6).standard_normal((40, 37)) * 4).astype(np.float16)
    w = np.random.default_rng(7).standard_normal((40, 37)).astype(np.float16)
    outs = []
    for L in (symgrad, torch_real):
        t = L.tensor(x, requires_grad=True)
        ys = [t.log_softmax(1), L.nn.functional.log_softmax(t, 0)]
        (ys[0] * L.tensor(w)).sum().backward()
        outs.append([*ys, t.grad])
    for got, want in zip(outs[0][:2], outs[1][:2]):
        assert str(got.dtype) == str(want.dtype) == "torch.float16"
        np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    np.testing.assert_allclose(outs[0][2].numpy(), outs[1][2].numpy(), atol=1e-2)


def test_float16_layer_norm_computes_in_float32_and_rounds_once():
    """As PyTorch's CPU kernel (op by op in float16, 76 of 148 values were an ulp off); its
    gradients (float32 formulas, rounded) are within 2 float16 ulps of PyTorch's."""
    rng = np.random.default_rng(8)
    x = (rng.standard_normal((4, 37)) * 4).astype(np.float16)
    w = rng.standard_normal((4, 37)).astype(np.float16)
    gamma = (1 + 0.1 * rng.standard_normal(37)).astype(np.float16)
    outs = []
    for L in (symgrad, torch_real):
        t, g = L.tensor(x, requires_grad=True), L.tensor(gamma, requires_grad=True)
        y = L.nn.functional.layer_norm(t, (37,), g, L.tensor(gamma * 0.5))
        (y * L.tensor(w)).sum().backward()
        outs.append([y.detach().numpy(), t.grad.numpy(), g.grad.numpy()])
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    for got, want in zip(outs[0][1:], outs[1][1:]):
        assert got.dtype == want.dtype == np.float16
        np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)
