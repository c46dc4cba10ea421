"""int64 values float64 cannot carry (review finding 05): numpy computes ``%``, ``//``,
``abs``, ``np.sum``, ``np.max``, ``np.where``, ``np.clip``, ``np.sign`` ... of int64
arrays exactly in int64; symgrad computes them in float64, so each either gives numpy's
value exactly or refuses with a ValueError/TypeError naming the function (never a
rounded number). Oracle: numpy itself, on values above 2**53 and near 2**62."""

import numpy as np
import pytest

import symgrad as sg

BIG = np.array([2**53 + 1, 10**17 + 3, -(2**62) + 5])
SMALL = np.array([7, -3, 2**40 + 1])

FUNCTIONS = {
    "a % 10": lambda a: a % 10, "a // 3": lambda a: a // 3, "abs": np.abs,
    "np.sum": np.sum, "a.sum()": lambda a: a.sum(), "np.cumsum": np.cumsum,
    "a.cumsum()": lambda a: a.cumsum(), "np.max": np.max, "a.max()": lambda a: a.max(),
    "np.min": np.min, "where": lambda a: np.where(a > 0, a, 0),
    "clip": lambda a: np.clip(a, -5, 2**60), "sign": np.sign, "square": np.square,
    "maximum": lambda a: np.maximum(a, 3), "sort": np.sort, "diff": np.diff,
    "np.prod": np.prod, "np.dot": lambda a: np.dot(a, a), "a @ a": lambda a: a @ a,
    "concatenate": lambda a: np.concatenate([a, a]), "stack": lambda a: np.stack([a, a]),
    "take": lambda a: np.take(a, [0, 2]), "a.take()": lambda a: a.take([0, 2]),
    "floor": np.floor, "ptp": np.ptp, "a + 1": lambda a: a + 1, "-a": lambda a: -a,
}


def _numpy_value_or_refusal(f, a):
    """numpy's exact value, or None where symgrad refused (naming what to do)."""
    try:
        got = sg.jit(f, backend="numpy")(a)
    except (ValueError, TypeError, OverflowError) as e:  # (OverflowError: int64 wraps)
        assert "int64" in str(e) and "np.float64" in str(e), e
        return None
    return np.asarray(got)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_int64_result_is_exact_or_refused(name):
    f = FUNCTIONS[name]
    for a in (BIG, SMALL):
        got = _numpy_value_or_refusal(f, a)
        if got is None:
            assert a is BIG or name in ("np.prod", "np.dot", "a @ a", "square"), name
            continue
        want = np.asarray(f(a))
        # values compared as Python integers: a float64 rounding shows
        assert got.astype(object).tolist() == want.astype(object).tolist(), (name, got, want)


def test_refusal_names_the_function():
    with pytest.raises(ValueError, match=r"np\.remainder .*2\*\*53"):
        sg.jit(lambda a: a % 10, backend="numpy")(BIG)
    # a sum of values each below 2**53 whose total is not: every partial sum must be exact
    with pytest.raises(ValueError, match=r"np\.sum .*sum of their magnitudes"):
        sg.jit(np.sum, backend="numpy")(np.array([2**53 - 1, 2**53 - 1, -(2**53 - 1)]))
    with pytest.raises(TypeError, match=r"np\.dot of traced int64"):
        sg.jit(lambda a: np.dot(a, a), backend="numpy")(SMALL)


def test_float_results_still_round_as_numpy():
    # where numpy's own result is a float, numpy rounds too: no refusal
    for f in (np.mean, lambda a: a * 0.5, lambda a: a.astype(np.float64)):
        assert np.array_equal(sg.jit(f, backend="numpy")(BIG), f(BIG))


def test_numba_refuses_and_computes():
    f = sg.jit(lambda a: np.where(a > 0, a % 10, np.abs(a)).sum())
    assert f(SMALL) == (SMALL[SMALL > 0] % 10).sum() + np.abs(SMALL[SMALL <= 0]).sum()
    with pytest.raises(ValueError, match=r"np\.remainder"):
        f(BIG)
    assert "9007199254740992" in f.source(SMALL)  # the kernel's own test, not a tier's
    # a sum's test reads the whole array (not fused into the loop, element by element):
    # each value is below 2**53, partial sums are not, numpy's exact answer is 3
    total = sg.jit(np.sum)
    with pytest.raises(ValueError, match=r"np\.sum .*sum of their magnitudes"):
        total(np.array([2**52 + 1] * 3 + [-(2**52)] * 3))
    assert "np.sum(np.abs(" in total.source(SMALL)


_TENSOR_OPS = {  # int64 Tensor results PyTorch computes exactly (values above 2**53)
    "trace": lambda L, a: a.reshape(1, 3).trace(), "cumprod": lambda L, a: a.cumprod(0),
    "//": lambda L, a: a // 3, "%": lambda L, a: a % 7, "&": lambda L, a: a & (2**60 + 3),
    "^": lambda L, a: 2**62 ^ a, "<<": lambda L, a: a << 3, ">>": lambda L, a: a >> 2,
    "~": lambda L, a: ~a, "pad": lambda L, a: L.nn.functional.pad(a, (1, 2), value=2**60 + 1),
}


@pytest.mark.parametrize("name", _TENSOR_OPS)
def test_int64_tensor_ops_equal_pytorch_exactly(name):
    torch = pytest.importorskip("torch")
    got = _TENSOR_OPS[name](sg, sg.tensor(BIG))
    want = _TENSOR_OPS[name](torch, torch.tensor(BIG))
    assert got.dtype == sg.int64 and got.tolist() == want.tolist()


def test_an_integer_power_with_a_traced_exponent_is_refused_not_rounded():
    # u ** n with n an argument ran in float64: 3**35 came back 5.00315451e16, float64
    # (numpy: int64 50031545098999707); now a TypeError naming the fix
    with pytest.raises(TypeError, match="static_argnums"):
        sg.jit(lambda u, n: u ** n)(np.array([3, 2]), 35)
    with pytest.raises(TypeError, match="astype"):
        sg.jit(lambda u: u ** np.array([2, 3]))(np.array([3, 2]))
    got = sg.jit(lambda u, n: u ** n, static_argnums=(1,))(np.array([3, 2]), 35)
    np.testing.assert_array_equal(got, np.array([3, 2]) ** 35)
    assert got.dtype == np.int64
    mask = np.array([True, False])
    got = sg.jit(lambda b: np.power(b, 3))(mask)  # numpy's bool ** int is int64
    np.testing.assert_array_equal(got, np.power(mask, 3))
    assert got.dtype == np.power(mask, 3).dtype
