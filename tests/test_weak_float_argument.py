"""A Python float ARGUMENT is weak in dtype promotion (review finding 07), as numpy 2
(NEP 50) and jax.jit take it: ``x32 * a`` stays float32 and rounds as numpy's float32
product (``1e300`` overflows to inf). Oracle: numpy itself on the same operands."""

import numpy as np
import pytest

import symgrad as sg

X32 = np.array([1.0, 2.0, 3.0], np.float32)


@pytest.mark.parametrize("a", [0.1, 1e300, -2.5e-40])
def test_float_argument_keeps_float32(a):
    f = sg.jit(lambda x, a: x * a, backend="numpy")
    with np.errstate(over="ignore", under="ignore"):
        want = X32 * a
    got = f(X32, a)
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_array_equal(got, want)


def test_numpy_float64_argument_stays_strong():
    # a numpy float64 scalar is not weak (numpy: float32 array * float64 scalar is float64)
    got = sg.jit(lambda x, a: x * a, backend="numpy")(X32, np.float64(0.1))
    want = X32 * np.float64(0.1)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_gradients_with_a_weak_argument():
    f = lambda x, a: (x * a).sum()  # noqa: E731
    gx = sg.grad(f, argnums=0, backend="numpy")(X32, 0.1)
    ga = sg.grad(f, argnums=1, backend="numpy")(X32, 0.1)
    assert gx.dtype == np.float32 and np.array_equal(gx, np.full(3, np.float32(0.1)))
    assert float(ga) == float(X32.astype(np.float64).sum())


@pytest.mark.parametrize("first", ["weak", "strong"])
def test_a_float_and_a_float64_argument_of_one_function_in_turn(first):
    # one cache entry held both (weak is no part of an aval's equality): the second kind
    # reused the first's trace, float32 for np.float64(0.1) or float64 for 0.1
    f = sg.jit(lambda x, a: x * a, backend="numpy")
    kinds = [0.1, np.float64(0.1), np.array(0.1)]
    for a in (kinds if first == "weak" else kinds[::-1]) * 2:
        got, want = f(X32, a), X32 * a
        assert got.dtype == want.dtype, (type(a), got.dtype)
        np.testing.assert_array_equal(got, want)


def test_complex_argument_is_weak_too():
    # numpy 2: float32 array * Python complex is complex64, the complex rounded to
    # complex64 first (a numpy complex128 is strong); it was complex128, as np.complex128's
    # (on the interpreter: Numba's complex64 product is not numpy's, a cancellation apart)
    c64 = (X32 + 1j * X32[::-1]).astype(np.complex64)
    f = sg.jit(lambda x, c: x * c - c, backend="numpy")
    for x, c in ((X32, 0.1 + 0.3j), (c64, 0.1 + 0.3j), (X32, np.complex128(0.1 + 0.3j)),
                 (c64, 1e-3 - 7.7j)):
        got, want = f(x, c), x * c - c
        assert got.dtype == want.dtype, (x.dtype, type(c), got.dtype)
        np.testing.assert_array_equal(got, want)


def test_int_argument_is_weak_too():
    # numpy 2: float32 array * Python int is float32 (the int rounded to float32 first: 2**30
    # + 1 is 2**30), np.int64's float64; it was float64 for both
    f = sg.jit(lambda x, n: (x * n, np.where(x > 1.5, n, x), x ** n, x - n), backend="numpy")
    for n in (3, 2 ** 30 + 1, np.int64(3), -7):
        for got, want in zip(f(X32, n), (X32 * n, np.where(X32 > 1.5, n, X32), X32 ** n, X32 - n)):
            assert got.dtype == want.dtype, (type(n), got.dtype)
            np.testing.assert_array_equal(got, want)


def test_fori_loop_index_is_weak_as_ranges_int():
    # the body's i is a Python int of range(lower, upper) (as the eager loop gives it):
    # weak, so a float32 carry plus i stays float32 (it was an int64, so v * 1.5 + i was
    # float64 and the float32 carry refused). Oracle: the Python loop on numpy's values
    def f(x, n):
        return sg.fori_loop(0, n, lambda i, v: v * 1.5 + i, x)

    want = X32
    for i in range(4):
        want = want * 1.5 + i
    for got in (sg.jit(f, backend="numpy")(X32, 4), sg.jit(f)(X32, 4)):
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, want)
    grad = sg.grad(lambda x, n: np.sum(f(x, n)), backend="numpy")(X32, 4)
    assert grad.dtype == np.float32
    np.testing.assert_array_equal(grad, np.full(3, np.float32(1.5) ** 4))
