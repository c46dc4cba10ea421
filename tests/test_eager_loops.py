"""The compiled eager loops (symgrad/backend/numba/eager_loops.py): relu, a max pool's
first-maximum mask, where of an array and a number, and a sum over a few trailing
elements, each numpy's bit for bit (np.where, an element-by-element loop of PyTorch's
rule, slices added in order) in numpy's layout, from their second call on; ReLUs and
poolings through them against real PyTorch 2.13, called again after their inputs
changed; one compile per dtype and layout."""

from __future__ import annotations

import numpy as np
import pytest

import symgrad
from symgrad.backend.numba import eager_loops as L
from symgrad.eager import backward as B

from oracle import bits

torch_real = pytest.importorskip("torch")


@pytest.fixture
def loops(monkeypatch):
    """Every size through the loops (from a loop's second call); the backward stays on
    the interpreter (only the loops compile)."""
    monkeypatch.setattr(L, "MIN_SIZE", 0)
    monkeypatch.setattr(B, "COMPILE_AT_RUN", 10 ** 9)
    before = symgrad.config.eager_compile
    symgrad.config.update("eager_compile", True)
    yield
    symgrad.config.update("eager_compile", before)


def _specials(x: np.ndarray) -> np.ndarray:
    x.flat[::7], x.flat[3::11], x.flat[5::13], x.flat[2::17] = np.nan, -0.0, -np.inf, 0.0
    unsigned = np.uint32 if x.dtype == np.float32 else np.uint64
    x.view(unsigned).flat[4::19] = 0x7f800001 if x.dtype == np.float32 else 0x7ff0000000000001
    return x  # (the last: signalling NaNs, whose payload a conversion would change)


def _twice(f, *args):
    """``f``'s result from its second call (the first is numpy's: None)."""
    f(*args)
    return f(*args)


def _first_max_oracle(w: np.ndarray) -> np.ndarray:
    """PyTorch's rule, element by element: a later element replaces the running
    maximum when it is greater or NaN."""
    rows = w.reshape(-1, w.shape[-1])
    out = np.zeros(rows.shape, dtype=bool)
    for r, row in enumerate(rows):
        best = 0
        for j in range(1, len(row)):
            if row[j] > row[best] or np.isnan(row[j]):
                best = j
        out[r, best] = True
    return out.reshape(w.shape)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_loops_are_numpys_bit_for_bit(loops, dtype):
    rng = np.random.default_rng(41)
    x = _specials((rng.standard_normal((3, 4, 6, 5)) * 1e3).astype(dtype))
    for a in (x, x.transpose(1, 0, 2, 3), np.asfortranarray(x), x[0, 0]):
        want = np.where(a < 0, 0, a)
        for _ in range(3):
            got = _twice(L.relu, a)
            assert got is not None and got.strides == want.strides and got.dtype == a.dtype
            np.testing.assert_array_equal(bits(got), bits(want))
        c = np.empty_like(a, dtype=bool)  # (a's layout)
        c[...] = rng.random(a.shape) < 0.4
        for y in (0.0, -0.0, 0.1, np.nan):
            got, want = _twice(L.select, c, a, y), np.where(c, a, y)
            assert got is not None and got.strides == want.strides and got.dtype == want.dtype
            np.testing.assert_array_equal(bits(got), bits(want))
    assert L.relu(x[:, ::2]) is None  # (not one dense block: numpy's)
    for k in (1, 2, 4, 9):
        w = rng.integers(-2, 3, (5, 7, k)).astype(dtype)  # (ties)
        w.flat[::5], w.flat[1::9] = np.nan, -0.0
        got = _twice(L.first_max, w)
        np.testing.assert_array_equal(got, _first_max_oracle(w))
        if k >= 2 and k <= 7:
            got, lead = _twice(L.row_sum, w, (2,)), w.shape[:2]
            want = np.zeros(lead, dtype)
            want[...] = w[..., 0] + w[..., 1]
            for j in range(2, k):
                want += w[..., j]
            assert got.shape == lead
            np.testing.assert_array_equal(bits(got), bits(want))
    w = rng.standard_normal((3, 4, 2, 2)).astype(dtype)
    np.testing.assert_array_equal(bits(L.row_sum(w, (2, 3))),
                                  bits(((w[..., 0, 0] + w[..., 0, 1]) + w[..., 1, 0])
                                       + w[..., 1, 1]))
    assert L.row_sum(rng.standard_normal((3, 8)).astype(dtype), (1,)) is None  # (pairwise)
    # one compile per dtype and layout: new sizes reuse it
    signatures = {name: len(k.function.overloads) for name, k in L._KERNELS.items()}
    for shape in ((2, 9, 4), (30, 4)):
        L.relu(np.ones(shape, dtype))
        L.first_max(np.ones(shape, dtype))
        L.row_sum(np.ones(shape, dtype), (len(shape) - 1,))
        L.select(np.ones(shape, bool), np.ones(shape, dtype), 0.0)
    assert {name: len(k.function.overloads) for name, k in L._KERNELS.items()} == signatures


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_norm_and_softmax_loops_are_numpys_bit_for_bit(loops, dtype):
    # rows added in numpy's pairwise order (in order below 8 elements, eight running sums
    # up to 128), so every step rounds as _layer_norm's numpy form; rows of wide scales,
    # constant rows (variance 0), rows of -0.0 and specials
    from symgrad.prims.layer_norm import _layer_norm

    rng = np.random.default_rng(43)
    for k in (1, 5, 8, 13, 16, 64, 100, 128):
        x = (rng.standard_normal((40, k)) * 10.0 ** rng.uniform(-4, 4, (40, 1))).astype(dtype)
        x[1], x[2], x[3] = 3.0, -0.0, 1e30
        _specials(x[4:9])
        w, b = rng.standard_normal(k).astype(dtype), rng.standard_normal(k).astype(dtype)
        for affine, weight, bias in (((w, b), True, True), ((w,), True, False),
                                     ((b,), False, True), ((), False, False)):
            for eps in (1e-5, 0.0):
                got = _twice(L.layer_norm, x, affine, eps, weight, bias)
                want = _layer_norm(x, *affine, ndim=1, eps=eps, weight=weight, bias=bias)
                assert got is not None and got.dtype == want.dtype
                # (a NaN of a row with two NaNs carries either's payload: LLVM may swap
                # the operands of an addition)
                nan = np.isnan(want)
                np.testing.assert_array_equal(np.isnan(got), nan)
                np.testing.assert_array_equal(bits(got[~nan]), bits(want[~nan]))
        # softmax's division by the row sums, in place
        e = np.abs(x)
        want = e / e.sum(-1, keepdims=True)
        assert _twice(L.normalize, e.copy())
        got = e.copy()
        assert L.normalize(got)
        nan = np.isnan(want)
        np.testing.assert_array_equal(np.isnan(got), nan)
        np.testing.assert_array_equal(bits(got[~nan]), bits(want[~nan]))
        assert k == 1 or not L.normalize(np.asfortranarray(e))  # (not C-ordered: numpy's)
        # softmax's first step, compared after its exp (a -0.0 less a maximum 0.0 or -0.0)
        from symgrad.prims.softmax import shifted_exp

        got, want = _twice(L.shift, x), shifted_exp(x, 1)
        assert got is not None
        np.exp(got, out=got)
        nan = np.isnan(want)
        np.testing.assert_array_equal(np.isnan(got), nan)
        np.testing.assert_array_equal(bits(got[~nan]), bits(want[~nan]))
    assert L.layer_norm(np.ones((4, 129), dtype), (), 1e-5, False, False) is None  # (numpy)
    assert L.layer_norm(np.ones((4, 8), dtype), (np.ones(8),), 1e-5, True, False) is None \
        or dtype == np.float64  # (a float64 weight of float32 rows: numpy promotes)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_middle_sums_and_means_are_numpys_bit_for_bit(loops, dtype):
    # numpy adds a middle axis's slices in order from 0 (-0.0 columns sum to 0.0); the
    # Tensor's sum(1) and mean(1) through the loop, as np.sum / np.mean and PyTorch's
    rng = np.random.default_rng(44)
    for shape, axis in (((3, 9, 5), 1), ((4, 16, 2), 1), ((7, 3, 2, 4), 1), ((6, 5), 0),
                        ((2, 129, 3), 1)):
        x = (rng.standard_normal(shape) * 10.0 ** rng.uniform(-6, 6, shape)).astype(dtype)
        x[0], x[-1] = -0.0, 1e30
        _specials(x[1:2])
        got, want = _twice(L.middle_sum, x, (axis,)), np.sum(x, axis)
        assert got is not None and got.shape == want.shape
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        ok = ~np.isnan(want)
        np.testing.assert_array_equal(bits(got[ok]), bits(want[ok]))
    assert L.middle_sum(x, (2,)) is None and L.middle_sum(x[:, :, :1], (1,)) is None
    x = rng.standard_normal((64, 16, 64)).astype(dtype)
    t, ref = symgrad.tensor(x, requires_grad=True), torch_real.tensor(x, requires_grad=True)
    for _ in range(2):
        for ours, theirs in ((t.mean(1), ref.mean(1)), (t.sum(1), ref.sum(1))):
            np.testing.assert_array_equal(bits(ours.detach().numpy()),
                                          bits(np.mean(x, 1) if theirs.grad_fn.name()
                                               .startswith("Mean") else np.sum(x, 1)))
            np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(),
                                       rtol=1e-5 if dtype == np.float32 else 1e-12)
            assert ours.grad_fn.name() == theirs.grad_fn.name()


def test_loops_are_off_without_eager_compile_and_for_other_dtypes(loops, monkeypatch):
    def refuse(name, *args):
        raise AssertionError(f"the compiled loop {name} was called")

    monkeypatch.setattr(L, "_run", refuse)
    x = np.arange(-20.0, 20.0).reshape(10, 4)
    for a in (x.astype(np.int64), x.astype(np.float16), x.astype(np.complex128)):
        for _ in range(2):
            assert L.relu(a) is None and L.first_max(a) is None and L.row_sum(a, (1,)) is None
    symgrad.config.update("eager_compile", False)
    for _ in range(2):
        assert L.relu(x) is None and L.first_max(x) is None and L.row_sum(x, (1,)) is None
    t = symgrad.tensor(x, requires_grad=True)
    for _ in range(2):  # (the eager operations: numpy's)
        np.testing.assert_array_equal(symgrad.nn.functional.relu(t).detach().numpy(),
                                      np.maximum(x, 0))


def _relu_and_pools(lib, x, dtype):
    F = lib.nn.functional
    xt = lib.tensor(x.astype(dtype), requires_grad=True)
    h = F.relu(xt * 1.5 - 0.5)
    p, idx = F.max_pool2d(h, 2, return_indices=True)
    q = F.max_pool2d(xt.transpose(0, 1), 3, 2, padding=1)
    a = F.avg_pool2d(h, 2)
    total = sum((v * v.sin()).sum() for v in (h, p, q, a))
    total.backward()
    values = [v.detach().numpy().astype(np.float64) for v in (h, p, q, a, xt.grad)]
    return values + [idx.numpy()], [v.grad_fn.name() for v in (h, p, q, a)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_and_pools_through_the_loops_as_pytorch(loops, dtype):
    rng = np.random.default_rng(42)
    x = rng.standard_normal((2, 3, 8, 6))
    x[0, 0, :2, :2] = 1.0  # (ties: the first maximum, as PyTorch's)
    x[1, 1, 3, 3], x[1, 0, 4, 4], x[0, 2, 5, 1] = np.nan, -0.0, 0.0
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for _ in range(3):  # the second and third calls through the loops
        (got, names), (want, want_names) = (_relu_and_pools(lib, x, dtype)
                                            for lib in (symgrad, torch_real))
        assert names == want_names
        for g, v in zip(got, want):
            np.testing.assert_allclose(g, v, rtol=tol, atol=tol, equal_nan=True)
        x = x * 0.5 + 0.25  # changed inputs, the same shapes
    assert all(L._KERNELS.get(name) for name in ("relu", "first_max", "select", "row_sum"))
