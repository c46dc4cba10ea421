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
    "softmax": lambda L, w, v: L.softmax(w, 1),
}


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reductions_and_matmul_accumulate_in_float32(name):
    got, want = (REDUCTIONS[name](L, _bf(L, W), _bf(L, V)) for L in (symgrad, torch_real))
    _same(got, want)


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
