"""bfloat16 Tensors against real PyTorch 2.13 on the CPU, bit for bit: conversions
(ties, subnormals, nan, inf, overflow), elementwise operations, promotion, reductions,
matmul, a Linear layer, and the errors (see :mod:`symgrad.eager.bf16`)."""

from __future__ import annotations

import numpy as np
import pytest

torch_real = pytest.importorskip("torch")
pytest.importorskip("ml_dtypes")

from torch_oracle import float64_default  # noqa: E402,F401

import symgrad  # noqa: E402

RNG = np.random.default_rng(7)
#: float32 bit patterns around bfloat16's rounding: ties (low half 0x8000) to even and
#: odd, one bit either side, subnormals, the largest finite values, inf and nan
_HIGH = RNG.integers(0, 1 << 16, 64, dtype=np.uint32) << 16
_EDGES = np.concatenate([_HIGH | 0x8000, _HIGH | 0x7FFF, _HIGH | 0x8001, _HIGH | 0x18000,
                         np.array([0x00000001, 0x00008000, 0x00018000, 0x007FFFFF, 0x7F7FFFFF,
                                   0x7F7F8000, 0x7F7F7FFF, 0x7F800000, 0xFF800000, 0x7FC00000,
                                   0x80000000, 0x00400000], dtype=np.uint32)])
F32_EDGES = _EDGES.view(np.float32)
#: float64 values just off float32's ties: PyTorch rounds float64 to bfloat16 through
#: float32 (twice), which these tell from a single rounding
F64_EDGES = np.concatenate([((_HIGH | 0x8000).view(np.float32).astype(np.float64)
                             * (1 + s * 2.0 ** -40)) for s in (-1, 1)] + [[1e39, -1e39, 3e-41]])
INTS = np.array([0, 1, -7, 257, 16777217, (1 << 30) + (1 << 22) + 1, -(1 << 40) - 12345])


def _same(got, want):
    """Equal values and dtypes, nan where nan, compared as float32 (exact for bfloat16)."""
    assert str(got.dtype) == str(want.dtype), (got.dtype, want.dtype)
    assert tuple(got.shape) == tuple(want.shape)
    g = torch_real.from_numpy(np.array(got.detach().float().numpy()))
    w = want.detach().float()
    nan = torch_real.isnan(w)
    assert torch_real.equal(torch_real.isnan(g), nan), (g, w)
    assert torch_real.equal(g[~nan], w[~nan]), (g, w)


def _bf(lib, a):
    return lib.tensor(a).to(lib.bfloat16)


@pytest.mark.parametrize("source", ["float32", "float64", "int64"])
def test_conversions_round_as_pytorch(source):
    data = {"float32": F32_EDGES, "float64": F64_EDGES, "int64": INTS}[source]
    with np.errstate(all="ignore"):
        _same(_bf(symgrad, data), _bf(torch_real, data))
        _same(symgrad.tensor(data, dtype=symgrad.bfloat16),
              torch_real.tensor(data, dtype=torch_real.bfloat16))
        _same(symgrad.tensor(data).bfloat16(), torch_real.tensor(data).bfloat16())
        _same(symgrad.full((2,), float(data[1]), dtype=symgrad.bfloat16),
              torch_real.full((2,), float(data[1]), dtype=torch_real.bfloat16))


def test_conversions_out_of_bfloat16():
    vals = np.array([1.5, -2.75, 3.0e38, 7.0, 255.0, -0.0], dtype=np.float32)
    for name in ("float", "double", "half", "long", "int", "short", "bool"):
        if name in ("long", "int", "short"):  # (3e38 has no integer: C's undefined behavior)
            vals = vals[vals < 1e30]
        _same(getattr(_bf(symgrad, vals), name)(), getattr(_bf(torch_real, vals), name)())


X = RNG.standard_normal((3, 5)) * 3
Y = RNG.standard_normal((3, 5))
POS = np.abs(X) + 0.1

ELEMENTWISE = {
    "add": lambda L, x, y: x + y, "sub": lambda L, x, y: x - y, "mul": lambda L, x, y: x * y,
    "div": lambda L, x, y: x / y, "add-0.1": lambda L, x, y: x + 0.1,
    "sub-0.3337": lambda L, x, y: x - 0.3337, "rsub": lambda L, x, y: 0.3337 - x,
    "mul-0.3337": lambda L, x, y: x * 0.3337, "rmul": lambda L, x, y: 0.3337 * x,
    "div-3.3": lambda L, x, y: x / 3.3, "rdiv": lambda L, x, y: 0.3337 / x,
    "mul-0d-float64": lambda L, x, y: x * L.tensor(0.3337),
    "pow-1.1": lambda L, x, y: x.abs() ** 1.1, "square": lambda L, x, y: x ** 2,
    "exp": lambda L, x, y: x.exp(), "log": lambda L, x, y: x.abs().log(),
    "sqrt": lambda L, x, y: x.abs().sqrt(), "tanh": lambda L, x, y: x.tanh(),
    "sigmoid": lambda L, x, y: x.sigmoid(), "relu": lambda L, x, y: x.relu(),
    "neg-abs": lambda L, x, y: -x.abs(), "maximum": lambda L, x, y: L.maximum(x, y),
    "where": lambda L, x, y: L.where(x > y, x, 0.3337), "clamp": lambda L, x, y: x.clamp(-1, 1),
    "index": lambda L, x, y: x[1:, L.tensor([4, 0, 2])], "transpose": lambda L, x, y: x.t(),
}


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_elementwise_equals_pytorch(name):
    got, want = (ELEMENTWISE[name](L, _bf(L, X), _bf(L, Y)) for L in (symgrad, torch_real))
    _same(got, want)


#: a float64 just above a float32 tie of bfloat16: PyTorch's fill rounds it through float32
TIE = 1.00390625 + 2.0 ** -40
IN_PLACE = {
    "mul_": lambda L, x, y: x.mul_(0.3337), "itruediv": lambda L, x, y: x.__itruediv__(3.3),
    "iadd": lambda L, x, y: x.__iadd__(0.3337), "isub": lambda L, x, y: x.__isub__(y),
    "add_-alpha": lambda L, x, y: x.add_(y[:, :1], alpha=0.3),
    "sub_-alpha": lambda L, x, y: x.sub_(y, alpha=0.3),
    "add-alpha": lambda L, x, y: x.add(y[:, :1], alpha=0.3),  # (out of place: as add_)
    "sub-alpha": lambda L, x, y: L.sub(x, y, alpha=-2.7), "clamp_": lambda L, x, y: x.clamp_(-1, 1),
    "fill_": lambda L, x, y: x.fill_(TIE), "setitem": lambda L, x, y: x.__setitem__(0, TIE) or x,
    "copy_": lambda L, x, y: x.copy_(y.double() + 2.0 ** -30),
    "masked_fill_": lambda L, x, y: x.masked_fill_(y > 0, TIE),
    "addcmul_": lambda L, x, y: x.addcmul_(y, y, value=0.3),
    "addcdiv_": lambda L, x, y: x.addcdiv_(y, y.abs() + 1, value=0.3),
    "lerp_": lambda L, x, y: x.lerp_(y, 0.3), "new_full": lambda L, x, y: x.new_full((2,), TIE),
}


@pytest.mark.parametrize("name", IN_PLACE)
def test_in_place_operations_round_as_pytorch(name):
    x = np.tile(X, (1, 32))  # (160 elements: 5 full vectors of PyTorch's, see add_scaled)
    y = np.tile(Y, (1, 32))
    got, want = (IN_PLACE[name](L, _bf(L, x), _bf(L, y)) for L in (symgrad, torch_real))
    _same(got, want)


PROMOTION = {
    "bf16+f16": lambda L: _bf(L, X) + L.tensor(Y, dtype=L.float16),
    "bf16+f32": lambda L: _bf(L, X) + L.tensor(Y, dtype=L.float32),
    "bf16*f64": lambda L: _bf(L, X) * L.tensor(Y),
    "bf16+int64": lambda L: _bf(L, X) + L.tensor(INTS[:5]),
    "int32*bf16": lambda L: L.tensor(INTS[:5], dtype=L.int32) * _bf(L, X),
    "bf16+bool": lambda L: _bf(L, X) + L.tensor([True, False, True, True, False]),
    "bf16+0d-f64": lambda L: _bf(L, X) + L.tensor(0.3337),
    "0d-bf16+f32": lambda L: _bf(L, 0.3337) + L.tensor(Y, dtype=L.float32),
    "0d-bf16+int64": lambda L: _bf(L, 0.3337) + L.tensor(INTS[:5]),
    "int64*0.5": lambda L: _bf(L, INTS) * 0.5,
}


@pytest.mark.parametrize("name", PROMOTION)
def test_promotion_equals_pytorch(name):
    _same(PROMOTION[name](symgrad), PROMOTION[name](torch_real))


W = RNG.standard_normal((64, 48))
V = RNG.standard_normal((48, 16))
REDUCTIONS = {
    "sum": lambda L, w, v: w.sum(), "sum-dim": lambda L, w, v: w.sum(1),
    "mean": lambda L, w, v: w.mean(), "mean-dim": lambda L, w, v: w.mean(0, keepdim=True),
    "max": lambda L, w, v: w.max(), "amax-dim": lambda L, w, v: w.amax(1),
    "matmul": lambda L, w, v: w @ v, "mv": lambda L, w, v: w @ v[:, 0],
    "var": lambda L, w, v: w.var(1), "std": lambda L, w, v: w.std(),
    # PyTorch's fused kernels: float32 inside, one rounding (symgrad.eager.bf16.in_float32)
    "linear": lambda L, w, v: L.nn.functional.linear(v.t(), w[:7], w[8, :7]),
    "linear-no-bias": lambda L, w, v: L.nn.functional.linear(v.t(), w[:7]),
    "layer_norm": lambda L, w, v: L.nn.functional.layer_norm(w, (48,), v[:, 0] + 1, v[:, 1]),
    "silu": lambda L, w, v: L.nn.functional.silu(w), "rsqrt": lambda L, w, v: w.abs().rsqrt(),
    "hardswish": lambda L, w, v: L.nn.functional.hardswish(w * 3),
    "softmax-float32": lambda L, w, v: L.softmax(w, 0, dtype=L.float32).bfloat16(),
}


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reductions_and_matmul_accumulate_in_float32(name):
    got, want = (REDUCTIONS[name](L, _bf(L, W), _bf(L, V)) for L in (symgrad, torch_real))
    _same(got, want)


#: float32 inside, one rounding, as PyTorch's; its float32 exp and erf are not numpy's,
#: which moves a few results across a bfloat16 rounding boundary: one ulp apart there
CLOSE = {"softmax": lambda L, w: L.softmax(w, 1),
         "gelu": lambda L, w: L.nn.functional.gelu(w),
         "gelu-tanh": lambda L, w: L.nn.functional.gelu(w, approximate="tanh")}


@pytest.mark.parametrize("name", CLOSE)
def test_fused_functions_round_once_like_pytorch(name):
    got, want = (CLOSE[name](L, _bf(L, W)) for L in (symgrad, torch_real))
    assert got.dtype is symgrad.bfloat16 and want.dtype is torch_real.bfloat16
    g = torch_real.tensor(got.float().tolist())
    w = want.float()
    ulp = torch_real.finfo(torch_real.bfloat16).eps * w.abs()  # >= one ulp of w
    assert torch_real.all((g - w).abs() <= ulp)
    assert (g != w).sum() <= g.numel() // 50  # (1, 8 and 2 of 3072 differ)


def test_linear_layer_forward_and_sgd_steps_equal_pytorch():
    """A bfloat16 Linear layer (PyTorch's addmm: float32 accumulation, bias added in
    float32, one rounding), an MSE loss, and SGD with momentum and weight decay on
    bfloat16 parameters (gradients given: backward through bfloat16 is refused, below).
    Sizes are multiples of 32: PyTorch's ``add(b, alpha=)`` rounds ``alpha * b`` to
    bfloat16 first in the elements past its last full vector (see symgrad.eager.bf16)."""
    results = []
    for L in (symgrad, torch_real):
        layer = L.nn.Linear(48, 32)
        with L.no_grad():
            layer.weight.copy_(L.tensor(W[:32]))
            layer.bias.copy_(L.tensor(W[40, :32]))
        layer = layer.bfloat16()
        out = layer(_bf(L, W))
        loss = L.nn.functional.mse_loss(out, _bf(L, W[:, :32]))
        opt = L.optim.SGD(layer.parameters(), lr=0.1, momentum=0.9, weight_decay=0.01)
        for step in range(3):
            layer.weight.grad = _bf(L, W[32:] * (step + 1))
            layer.bias.grad = _bf(L, V[:32, 0] - step)
            opt.step()
        results.append((out, loss, layer.weight, layer.bias,
                        opt.state[layer.weight]["momentum_buffer"]))
        if L is symgrad:  # the other optimizers refuse bfloat16 parameters, saying why
            with pytest.raises(NotImplementedError, match="bfloat16"):
                symgrad.optim.Adam(layer.parameters()).step()
    for got, want in zip(*results):
        _same(got, want)


def test_gradients_through_bfloat16_are_refused():
    """PyTorch rounds each backward node's gradient to bfloat16; symgrad's backward is one
    fused float64 computation: it refuses rather than differ (a RuntimeError). Casts
    alone are rounded as PyTorch's (tests/test_cast_gradients.py): a bfloat16 leaf cast
    to float32 gets PyTorch's gradient."""
    x = symgrad.tensor([1.5, 2.0], dtype=symgrad.bfloat16, requires_grad=True)
    f = symgrad.tensor([1.5, 2.0], dtype=symgrad.float32, requires_grad=True)
    s = symgrad.tensor(0.5, dtype=symgrad.float32, requires_grad=True)
    data = _bf(symgrad, [1.0, 3.0])
    for loss in ((x * x).sum(), (f.bfloat16() * 2).float().sum(),
                 (data * s).sum()):  # (a 0-d float32 times bfloat16 data is bfloat16)
        with pytest.raises(NotImplementedError, match="bfloat16") as caught:
            loss.backward()
        assert isinstance(caught.value, RuntimeError)
    with pytest.raises(NotImplementedError, match="bfloat16"):
        symgrad.autograd.grad((x * 2).sum(), [x])
    with symgrad.no_grad():  # inference is fine
        assert (x * x).dtype is symgrad.bfloat16
    assert x.grad is None
    y = (f * data.float()).sum()  # bfloat16 data made float32 first: float32 gradients
    y.backward()
    assert f.grad.dtype is symgrad.float32
    grads = []
    for lib in (symgrad, torch_real):
        b = lib.tensor([1.5, 2.0], dtype=lib.bfloat16, requires_grad=True)
        (b.float() * lib.tensor([1.0 / 3, 1e-3], dtype=lib.float32)).sum().backward()
        grads.append(b.grad)
    _same(*grads)


def test_printing_item_and_element_size():
    for data in ([1.0, 3.0, 100.0], [0.1, 2.5e-5, 7.0], 1.0 / 3):
        got, want = _bf(symgrad, data), _bf(torch_real, data)
        assert repr(got) == repr(want)
        assert repr(got * 0.1) == repr(want * 0.1)
    assert got.item() == want.item() and type(got.item()) is float
    assert got.element_size() == want.element_size() == 2
    assert got.tolist() == want.tolist()
    assert repr(symgrad.bfloat16) == repr(torch_real.bfloat16)
    assert symgrad.promote_types(symgrad.bfloat16, symgrad.float16) is symgrad.float32


def test_numpy_is_refused_as_by_pytorch():
    for lib in (symgrad, torch_real):
        with pytest.raises(TypeError, match="unsupported ScalarType BFloat16"):
            _bf(lib, [1.0]).numpy()


#: in-place writes through views of every kind symgrad has (PyTorch: all write the base)
VIEW_WRITES = {
    "index": lambda x, T: x[0].add_(10), "slice": lambda x, T: x[1:].zero_(),
    "t": lambda x, T: x.t()[1].mul_(3), "T": lambda x, T: x.T[0].add_(0.3),
    "mT": lambda x, T: x.mT[1].sub_(0.7), "view": lambda x, T: x.view(6).add_(0.1),
    "reshape": lambda x, T: x.reshape(6)[2:4].mul_(1.3),
    "narrow": lambda x, T: x.narrow(0, 1, 2).div_(3),
    "unsqueeze": lambda x, T: x.unsqueeze(0)[0, 1].mul_(1.7),
    "squeeze": lambda x, T: x[:1].squeeze(0).add_(0.1),
    "permute": lambda x, T: x.permute(1, 0)[0].div_(3),
    "swapaxes": lambda x, T: x.swapaxes(0, 1)[1].add_(1),
    "flatten_step": lambda x, T: x.flatten()[::2].add_(0.01),
    "view_as": lambda x, T: x.view_as(x)[2].clamp_(0, 5.5),
    "ellipsis_none": lambda x, T: x[None, ..., 1].neg_(),
    "unbind": lambda x, T: x.unbind(0)[1].add_(2),
    "split": lambda x, T: x.split(1, 0)[2].mul_(0.1),
    "chunk": lambda x, T: x.chunk(2, 1)[0].fill_(7.3),
    "setitem": lambda x, T: x[1:].__setitem__(0, 9.1),
    "copy_": lambda x, T: x[0].copy_(T.tensor([1.1, 2.2])),
    "add_alpha": lambda x, T: x[0].add_(x[1], alpha=0.3),
    "detach": lambda x, T: x.detach()[0].add_(1),
    "data": lambda x, T: x.data[:, 1].mul_(-2),
    "ifloordiv": lambda x, T: x[1].__ifloordiv__(0.3),
    "imod": lambda x, T: x.t()[0].__imod__(0.7), "ipow": lambda x, T: x[2].__ipow__(2),
}


def test_views_share_memory_with_their_base():
    for name, write in VIEW_WRITES.items():
        got, want = ({"x": T.tensor([[1.0, 2.5], [3.0, 4.0], [5.0, 6.0]], dtype=T.bfloat16)}
                     for T in (symgrad, torch_real))
        for lib, d in ((symgrad, got), (torch_real, want)):
            x = d["x"]
            d["v"], d["w"] = x[:2], x.t()  # read after the writes below
            write(x, lib)
            x.mul_(1.1)
        for k in ("x", "v", "w"):
            try:
                _same(got[k], want[k])
            except AssertionError as e:
                raise AssertionError(f"{name}: {k}") from e


def test_parameter_views_after_module_to_bfloat16():
    result = []
    for T in (symgrad, torch_real):
        m = T.nn.Sequential(T.nn.Linear(3, 2))
        with T.no_grad():
            m[0].weight.copy_(T.tensor([[1., 2, 3], [4, 5, 6]]) / 7)
            m[0].bias.copy_(T.tensor([0.3, -0.2]))
            m.to(T.bfloat16)
            m[0].weight[0].mul_(2)
            m[0].weight.t()[1].add_(0.1)
            m[0].bias[1:].zero_()
        result.append([m[0].weight, m[0].bias])
    for g, w in zip(*result):
        _same(g, w)


def test_add_alpha_sizes_past_pytorchs_vectors():
    """PyTorch's ``add(b, alpha=)`` at any size: its vectorized loop (every element when
    the size is a multiple of 32) rounds once, as symgrad's; its scalar loop over the
    last ``numel % 32`` elements (on AVX-512) rounds ``alpha * b`` to bfloat16 first, a
    documented difference (:func:`symgrad.eager.bf16.add_scaled`)."""
    def r(v):
        return np.asarray(v, np.float32).astype(symgrad.bfloat16.numpy).astype(np.float32)
    for n in (3, 31, 33, 100, 4096, 4100):
        a, b = r(RNG.standard_normal(n) * 3), r(RNG.standard_normal(n) * 100)
        for alpha, add in ((0.3, lambda x, y: x.add(y, alpha=0.3)),
                           (-2.7, lambda x, y: x.sub_(y, alpha=2.7))):
            got, want = (add(_bf(L, a), _bf(L, b)) for L in (symgrad, torch_real))
            body = n - n % 32
            _same(got[:body], want[:body])
            if torch_real.backends.cpu.get_cpu_capability() == "AVX512":
                scalar_loop = r(a[body:] + r(r(alpha) * b[body:]))
                assert (want[body:].float().numpy() == scalar_loop).all()


FLOOR = {
    "a//b": lambda L, a, b: a // b, "a%b": lambda L, a, b: a % b,
    "div-floor": lambda L, a, b: a.div(b, rounding_mode="floor"),
    "ifloordiv": lambda L, a, b: a.clone().__ifloordiv__(b),
    "a//7": lambda L, a, b: a // 7, "a//0.3": lambda L, a, b: a // 0.3,
    "a//0d": lambda L, a, b: a // L.tensor(-2.7, dtype=a.dtype),
    "a//0d-f64": lambda L, a, b: a // L.tensor(-2.7),
    "a//1-element": lambda L, a, b: a // b[:1], "0.3//b": lambda L, a, b: 0.3 // b,
    "a%0.3": lambda L, a, b: a % 0.3,
}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_floor_division_rounds_as_pytorch(dtype):
    """PyTorch's bfloat16 (and float16) ``//`` rounds each step of its fmod-based formula
    (``548 // b`` with a tensor ``b`` of 7s is 77), but by one number (``548 // 7``: 78)
    or one element computes in float32 and rounds once
    (:func:`symgrad.eager.bf16._floor_divide`)."""
    a = np.concatenate([RNG.standard_normal(600) * 600, [1000, 548, 0, -0.0, np.inf, np.nan]])
    b = np.concatenate([RNG.standard_normal(600) * 3, [7, 7, 3, 0, 2, 1]])
    for name, f in FLOOR.items():
        if dtype == "float16" and name in ("ifloordiv", "a//0d-f64"):
            continue  # KNOWN DIFFERENCES, not fixed: float16 //= (unrecorded, numpy's
            # one rounding) and a 0-d float64 divisor (cast to float16, PyTorch: float32)
        got, want = (f(L, L.tensor(a).to(getattr(L, dtype)), L.tensor(b).to(getattr(L, dtype)))
                     for L in (symgrad, torch_real))
        try:
            _same(got, want)
        except AssertionError as e:
            raise AssertionError(name) from e
