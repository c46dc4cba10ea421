"""numpy's semantics at the edges (issue 25, part 3), numpy itself the oracle.

Bools and integers in arithmetic (numpy's result dtype and values: ``bool + bool`` is
logical or), the logical and bitwise operators, nan in maximum/minimum/clip/fmax/fmin,
integer arrays and Python ints. Values are compared bit for bit with the numpy
function run on the same arrays; gradients with central differences of it. Most
run on the interpreter; one sample per class also on Numba.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import symgrad as sg

X = np.array([-1.25, 0.5, 1.5, 2.5, 3.5, -0.25])  # off every threshold below


def _central(f, x, h=1e-6):
    out = np.zeros_like(x)
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = h
        out.flat[k] = (f(x + e) - f(x - e)) / (2 * h)
    return out


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert np.array_equal(got, want, equal_nan=True), (got, want)


# masks combined with numpy's operators; each result multiplies x, so that a wrong
# dtype rule (bool + bool = 2) shows in the value and the gradient
MASKS = {
    "add": lambda x: np.sum(x * ((x > 0) + (x > 1))),
    "mul": lambda x: np.sum(x * (((x > 0) * (x > 1)) + ((x > 0) * (x > 1)))),
    "maximum": lambda x: np.sum(x * (np.maximum(x > 0, x > 1) + np.maximum(x > 0, x > 1))),
    "minimum": lambda x: np.sum(x * (np.minimum(x > 0, x < 3) + (x < 0))),
    "abs": lambda x: np.sum(x * (np.abs(x > 0) + np.abs(x > 1))),
    "floor": lambda x: np.sum(x * (np.floor(x > 0) + np.ceil(x > 1) + np.trunc(x > 2))),
    "or": lambda x: np.sum(x * ((x > 0) | (x > 1))),
    "and": lambda x: np.sum(x * ((x > 0) & (x < 3))),
    "xor": lambda x: np.sum(x * ((x > 0) ^ (x > 1))),
    "invert": lambda x: np.sum(x * ~(x > 0)),
    "or_const": lambda x: np.sum(x * ((x > 0) | np.array([True, False] * 3))),
    "logical": lambda x: np.sum(x * (np.logical_and(x, x > 1) + np.logical_or(x, x > 1)
                                     + np.logical_xor(x > 0, x) + np.logical_not(x - 2.0))),
    "bitwise_ufuncs": lambda x: np.sum(x * (np.bitwise_and(x > 0, x < 3)
                                            + np.bitwise_or(x > 2, x < 0)
                                            + np.bitwise_xor(x > 0, True) + np.invert(x > 1))),
    "divide": lambda x: np.sum(x * ((x > 0) / (x > -2))),
    # numpy's diff of bools is != of neighbours (a bool; the float difference gave -1)
    "diff": lambda x: np.sum(x[1:] * (np.diff(x > 0) + np.diff(x > 1, n=2, prepend=True))),
    # products of bools are or of ands, bools (the float products counted: 2 for True)
    "matmul": lambda x: np.sum(x[:4].reshape(2, 2) * (
        ((x > 0).reshape(2, 3) @ (x > 1).reshape(3, 2))
        + np.einsum("ij,jk->ik", (x > 2).reshape(2, 3), (x > 0).reshape(3, 2)))),
    "einsum_sum": lambda x: np.sum(x[:3] * np.einsum("ij->j", (x > 0).reshape(2, 3))),
    "correlate": lambda x: np.sum(x[1:] * np.correlate(x > 0, (x > 0)[1:3], "valid")),
    # a choice between bools is a bool (a float 1.0 + 1.0 counted 2 for True | True)
    "where": lambda x: np.sum(x * (np.where(x > 1, x > 0, x < 2) + np.where(x > 2, True, x > 0))),
}


@pytest.mark.parametrize("name", sorted(MASKS))
def test_bool_arithmetic_is_numpys(name):
    f = MASKS[name]
    with np.errstate(all="ignore"):
        want = f(X)
    _same(sg.jit(f, backend="numpy")(X), want)
    grad = sg.grad(f, backend="numpy")(X)
    np.testing.assert_allclose(grad, _central(f, X), atol=1e-6)


def test_bool_arithmetic_on_numba():
    f = MASKS["add"]
    _same(sg.jit(f)(X), f(X))
    g = lambda x: np.sum(x * (((x > 0) | (x > 1)) + ~(x > 2)))  # noqa: E731
    _same(sg.grad(g)(X), _central(g, X).round())


@pytest.mark.parametrize("expr", ["sub", "neg", "sign"])
def test_bool_operations_numpy_refuses_are_refused(expr):
    f = {"sub": lambda x: np.sum(x * ((x > 0) - (x > 1))),
         "neg": lambda x: np.sum(x * -(x > 0)),
         "sign": lambda x: np.sum(x * np.sign(x > 0))}[expr]
    with pytest.raises(TypeError) as numpy_error:
        f(X)
    with pytest.raises(TypeError) as ours:
        sg.jit(f, backend="numpy")(X)
    assert str(ours.value) == str(numpy_error.value) or "numpy" in str(ours.value)


def test_bitwise_operators_on_a_float_raise_as_numpy():
    f = lambda x: np.sum(x | (x > 0))  # noqa: E731
    with pytest.raises(TypeError):
        f(X)
    with pytest.raises(TypeError, match="bitwise"):
        sg.jit(f, backend="numpy")(X)


INTS = {
    "and": lambda x, n: x * (n & 6), "or": lambda x, n: x * (n | 1),
    "xor": lambda x, n: x * (n ^ 3), "invert": lambda x, n: x * ~n,
    "lshift": lambda x, n: x * (n << 2), "rshift": lambda x, n: x * (n >> 1),
    "lshift_out": lambda x, n: x * (n << 70), "rshift_out": lambda x, n: x * ((-n) >> 70),
    "rshift_neg_count": lambda x, n: x * (n >> -1),
    "floordiv_zero": lambda x, n: x * (n // (n - n) + n % (n - n)),
    "bool_and_int": lambda x, n: x * ((x > 0) & n),
}


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_bitwise_operators_on_integers(backend):
    # the oracle: numpy's int64 arithmetic (a Python int is traced as an int64)
    names = sorted(INTS) if backend == "numpy" else ["lshift_out", "rshift_out"]
    for name in names:
        f = INTS[name]
        for n in (13, -7, 0):
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = f(X, np.int64(n))
            got = sg.jit(f, backend=backend)(X, n)
            _same(got, want)
            k = np.broadcast_to(want / X, X.shape)  # f is x times an integer k: gradient k
            _same(sg.grad(f, backend=backend)(X, n, gradient=np.ones(X.shape)), k)


# ---------------------------------------------------------------------------
# nan in maximum, minimum, fmax, fmin and clip: every combination of nan, infinities
# and ordinary values in each operand (ties of zeros of opposite signs aside, where
# clip gives its gradient's operand: its docstring)

_VALUES = [np.nan, 1.0, 2.0, 3.0, -np.inf, np.inf]
_GRID = np.array(np.meshgrid(_VALUES, _VALUES, _VALUES)).reshape(3, -1)
NANS = {
    "maximum": lambda a, b, c: np.maximum(a, b), "minimum": lambda a, b, c: np.minimum(a, b),
    "fmax": lambda a, b, c: np.fmax(a, b), "fmin": lambda a, b, c: np.fmin(a, b),
    "clip": lambda a, b, c: np.clip(a, b, c), "clip_min": lambda a, b, c: np.clip(a, b, None),
    "clip_max": lambda a, b, c: np.clip(a, None, c),
    "clip_literal_nan": lambda a, b, c: np.clip(a, np.nan, 3.0),
    "max": lambda a, b, c: np.max(np.stack([a, b, c]), axis=0),
    "min": lambda a, b, c: np.min(np.stack([a, b, c]), axis=0),
}


@pytest.mark.parametrize("name", sorted(NANS))
def test_nan_propagation_is_numpys(name):
    f = NANS[name]
    _same(sg.jit(f, backend="numpy")(*_GRID), f(*_GRID))
    for k in range(0, _GRID.shape[1], 37):  # 0-d operands: the scalar code
        _same(sg.jit(f, backend="numpy")(*_GRID[:, k]), f(*_GRID[:, k]))


def test_nan_propagation_on_numba():
    for name in ("clip", "fmax"):
        _same(sg.jit(NANS[name])(*_GRID), NANS[name](*_GRID))
    assert np.isnan(sg.jit(lambda x: np.clip(x, np.nan, 3.0))(1.0))


# ---------------------------------------------------------------------------
# integer arrays and Python ints: numpy's int64 arithmetic, or an error

U = np.array([5, -3, 0, 7, 2 ** 40])
B = np.array([True, False, True, True, False])
INTEGER_EXPRESSIONS = {
    "sub": lambda u, b: u - 3, "neg": lambda u, b: -u, "floordiv": lambda u, b: u // 2,
    "mod": lambda u, b: u % 3, "floordiv0": lambda u, b: u // 0,
    "mod0": lambda u, b: u % (u - u), "maximum": lambda u, b: np.maximum(u, 2),
    "and": lambda u, b: u & 5, "gt": lambda u, b: u > 1, "bools": lambda u, b: b + b,
    "int_and_bool": lambda u, b: u + b, "div": lambda u, b: u / 2, "sum": lambda u, b: np.sum(u),
    "abs": lambda u, b: np.abs(u), "shift": lambda u, b: (u << 3) >> 1,
    "where": lambda u, b: np.where(b, u, -u), "invert_mask": lambda u, b: ~b,
    "xor": lambda u, b: u ^ b, "pow0": lambda u, b: u ** 0, "pow3": lambda u, b: (u % 1000) ** 3,
    "float_mix": lambda u, b: u * 0.5 + b,
    # reductions of integers and bools: int64 as numpy's (bools' extrema: bools)
    "sum_rows": lambda u, b: np.sum((u % 7)[:, None] * b + b, axis=1),
    "cumsum": lambda u, b: np.cumsum(u), "max": lambda u, b: np.max(u), "min": lambda u, b: u.min(),
    "mean": lambda u, b: np.mean(u), "sign": lambda u, b: np.sign(u), "trace": lambda u, b:
    np.trace((u % 7)[:, None] * b), "diff": lambda u, b: np.diff(u), "ptp": lambda u, b: np.ptp(u),
    "nansum": lambda u, b: np.nansum(u), "sum_float": lambda u, b: np.sum(u, dtype=np.float64),
    "bool_sum": lambda u, b: np.sum(b), "bool_prod": lambda u, b: np.prod(b),
    "bool_cumsum": lambda u, b: b.cumsum(), "bool_max": lambda u, b: np.max(b),
    "bool_min": lambda u, b: np.min(b),
    # a traced bool with an integer constant: numpy's int64 (the float64 path rounded
    # 2**53 + 1); a traced int64 with a uint64 one: numpy's float64 (not int64)
    "bool_times_int": lambda u, b: b * (2 ** 53 + 1) - b * 3 + np.maximum(b, 2),
    "int_and_uint64": lambda u, b: u * 2 ** 13 + np.uint64(1) - np.maximum(u, np.uint64(2)),
}


@pytest.mark.parametrize("name", sorted(INTEGER_EXPRESSIONS))
def test_int64_and_bool_arrays_compute_as_numpy(name):
    f = INTEGER_EXPRESSIONS[name]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = f(U, B)
    got = sg.jit(f, backend="numpy")(U, B)
    assert np.array_equal(got, want)
    assert np.asarray(got).dtype == want.dtype  # (int64 computed in float64: exact)


def test_int64_arrays_on_numba():
    for name in ("sub", "shift", "pow3", "bools", "sum_rows", "cumsum", "bool_max", "abs"):
        f = INTEGER_EXPRESSIONS[name]
        got, want = sg.jit(f)(U, B), f(U, B)
        _same(got, want)
        assert np.asarray(got).dtype == want.dtype, name


def test_integer_intermediates_keep_numpys_dtype_under_grad():
    def f(x, u, b):
        counts = np.sum(u * b[:, None] + u, axis=1)  # int64, as numpy's
        return np.sum(x * counts) + np.max(u), counts
    x, u, b = np.array([0.5, -1.5]), np.array([[1, 2], [3, -4]]), np.array([True, False])
    (value, counts), g = sg.value_and_grad(f, has_aux=True, backend="numpy")(x, u, b)
    want_value, want_counts = f(x, u, b)
    assert value == want_value and counts.dtype == want_counts.dtype == np.int64
    _same(counts, want_counts)
    _same(g, want_counts.astype(np.float64))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.uint32,
                                   np.uint64])
def test_other_integer_dtypes_are_refused_as_arguments(dtype):
    # numpy's uint8 1 - 3 is 254 (int64's is -2): refused, saying what to convert to
    u = np.array([1, 2], dtype=dtype)
    with pytest.raises(TypeError, match=f"argument u is a {np.dtype(dtype).name} array.*astype"):
        sg.jit(lambda x, u: x * (u - 3), backend="numpy")(np.ones(2), u)
    # a numpy number of that dtype too (it was taken as int64: np.int32(100000) ** 2 gave
    # 1e10 where numpy's wraps to 1410065408)
    with pytest.raises(TypeError, match=f"argument n is a {np.dtype(dtype).name} number"):
        sg.jit(lambda x, n: x * (n * n), backend="numpy")(np.ones(2), dtype(7))
    # a differentiated argument is a float (its gradient is one): numpy's float values
    x = np.array([1, 3], dtype=dtype)
    np.testing.assert_array_equal(sg.grad(lambda x: np.sum(x * x), backend="numpy")(x),
                                  2.0 * x.astype(float))


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_int64_arithmetic_that_would_wrap_raises(backend):
    # a Python int traced as int64: x * (n * n) at n = 5e9 wrapped to 6.55e18
    f = lambda x, n: x * (n * n)  # noqa: E731
    with pytest.raises(OverflowError, match="int64"):
        sg.jit(f, backend=backend)(np.ones(2), 5_000_000_000)
    _same(sg.jit(f, backend=backend)(np.ones(2), 3_000_000_000), f(np.ones(2), 3_000_000_000))
    if backend == "numpy":
        for g, arg in ((lambda x, u: x * (u + u), np.array([2 ** 62, 1])),
                       (lambda x, u: x * (u - (-u)), np.array([2 ** 62, 1])),
                       (lambda x, n: x * -n, -2 ** 63), (lambda x, u: x * u ** 4, U)):
            with pytest.raises(OverflowError):
                sg.jit(g, backend=backend)(np.ones(arg.shape if np.ndim(arg) else 2), arg)


def test_a_python_int_beyond_int64_meets_floats_as_numpy():
    n = 5_000_000_000
    f = lambda x: x * (n * n)  # noqa: E731  (n * n: a Python int, 2.5e19)
    _same(sg.jit(f, backend="numpy")(X), f(X))


def test_negative_integer_powers_raise_as_numpy():
    with pytest.raises(ValueError) as numpy_error:
        U ** -1
    with pytest.raises(ValueError) as ours:
        sg.jit(lambda u: u ** -1, backend="numpy")(U)
    assert str(ours.value) == str(numpy_error.value)


def test_tensor_masks_combine_as_pytorchs():
    # the Tensor API's oracle is PyTorch: bool + bool is logical or there too
    torch = pytest.importorskip("torch")
    values = [1.0, -2.0, 3.0, 0.5]
    results = []
    for lib in (sg, torch):
        a = lib.tensor(values, requires_grad=True)
        masks = [(a > 0) + (a > 1), (a > 0) * (a > 1), (a > 0) | (a < -1), (a > 0) & (a < 2),
                 (a > 0) ^ (a > 2), ~(a > 0), (a > 0) + 1]
        loss = sum((a * m).sum() for m in masks)
        loss.backward()
        results.append([np.asarray(m.tolist()) for m in masks] + [np.asarray(a.grad.tolist())])
    for ours, theirs in zip(*results):
        assert ours.dtype == theirs.dtype and np.array_equal(ours, theirs), (ours, theirs)


def test_a_traced_bool_meets_a_narrow_integer_constant_refused():
    # numpy's bool + int8 is int8, which wraps (True + 127 is -128): not computed in int64
    with pytest.raises(TypeError, match="int8, which wraps"):
        sg.jit(lambda b: b + np.int8(127), backend="numpy")(B)


@pytest.mark.parametrize("c", [np.int8(3), np.uint16(3), np.float16(0.1), np.True_])
def test_numpy_scalars_float32_holds_keep_float32(c):
    # numpy's float32 * int8(3) is float32 (1/3 * 3 is 1.0): symgrad's was float64
    x = np.array([1 / 3, 0.1, -2.7], np.float32)
    got, want = sg.jit(lambda x: x * c - c, backend="numpy")(x), x * c - c
    assert got.dtype == want.dtype == np.float32
    _same(got, want)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_float_floor_division_and_remainder_on_numba_are_numpys(dtype):
    # Numba's own np.floor_divide is floor(a / b): -8 // (1/3) gave -24 (numpy: -25), inf // 3
    # inf (nan); its np.remainder gave 0.0 where numpy's zero has the divisor's sign
    specials = [0.0, -0.0, 1.0, -8.0, 7.5, 1 / 3, -1.5, 0.1, 0.7, np.inf, -np.inf, np.nan, 5e-324]
    a, b = (np.array(v, dtype) for v in zip(*[(p, q) for p in specials for q in specials]))
    got = sg.jit(lambda a, b: (a // b, a % b))(a, b)
    with np.errstate(all="ignore"):
        want = (a // b, a % b)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        _same(g, w)
        assert np.array_equal(np.signbit(g[~np.isnan(w)]), np.signbit(w[~np.isnan(w)]))
