"""The numpy implementations that take a faster path for some shapes give numpy's own
result there, bit for bit (the interpreter is the reference every backend is compared
with): ``sum`` over short trailing axes, ``windows`` of small kernels, ``where`` (and
``relu``) as bit masks."""

from __future__ import annotations

import numpy as np
import pytest

from symgrad.prims import windows as W
from symgrad.prims.elementwise import _relu
from symgrad.prims.reductions import _sum
from symgrad.prims.selection import select

from oracle import bits as _bits
from oracle import naive_windows as _naive_windows


def _awkward(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 10.0 ** rng.uniform(-4, 4, shape)).astype(dtype)
    x.flat[::97], x.flat[5::101], x.flat[7::103] = np.nan, np.inf, -0.0
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, axes", [
    ((64, 6, 7, 4), (3,)), ((16, 5, 5, 2, 2), (3, 4)), ((3000, 7), (1,)), ((600, 3, 2), (1, 2)),
    ((1000, 8), (1,)), ((10, 4), (1,)), ((2000, 2, 3), (2,)), ((500, 2, 3), (0, 1))])
def test_sum_over_short_trailing_axes_is_numpys_bit_for_bit(shape, axes, dtype):
    a = _awkward(shape, dtype)
    for x in (a, np.asfortranarray(a), a[::-1], np.swapaxes(a, 0, 1)):
        got, want = _sum(x, axes), np.sum(x, axis=axes)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(_bits(got), _bits(want))  # -0.0 and nan too


@pytest.mark.parametrize("shape, kernel, stride, dilation", [
    ((2, 3, 8, 8), (2, 2), (2, 2), (1, 1)), ((2, 3, 9, 7), (3, 3), (1, 2), (1, 1)),
    ((2, 11, 9), (2, 3), (2, 1), (2, 1)), ((3, 30), (3,), (2,), (3,)),
    ((2, 9, 8, 7), (2, 2, 1), (1, 2, 3), (2, 1, 1)), ((2, 12, 12), (5, 5), (1, 1), (1, 1))])
def test_windows_of_small_and_large_kernels_are_the_same_copies(shape, kernel, stride, dilation,
                                                                monkeypatch):
    x = _awkward(shape, np.float32)
    want = _naive_windows(x, kernel, stride, dilation)
    for small in (0, 100):  # the strided view's copy, one copy per kernel offset
        monkeypatch.setattr(W, "SMALL_KERNEL", small)
        got = W._windows_impl(x, kernel, stride, dilation)
        assert got.flags.c_contiguous and got.dtype == x.dtype
        np.testing.assert_array_equal(_bits(got), _bits(want))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_where_as_bit_masks_is_numpys_bit_for_bit(dtype):
    x, y = _awkward((64, 3, 40), dtype, 1), _awkward((64, 3, 40), dtype, 2)
    rng = np.random.default_rng(3)
    c, narrow = rng.random((64, 3, 40)) > 0.5, rng.random((64, 3, 1)) > 0.5
    cases = [(c, x, 0.0), (c, 0.0, x), (c, x, y), (c, x, -0.0), (c, x, 1.5), (c, 0.1, x),
             (narrow, x, y), (narrow, 0.0, x), (c, x[:, :1], y), (c, x[:, :1], 0.0),
             (c, 0.0, 1.0), (c[:2], x[:2], y[:2]),  # two floats, too small: numpy's where
             (c, x.astype(np.float64), y.astype(np.float32))]  # two dtypes: numpy's where
    for args in cases:
        got, want = select(*args), np.where(*args)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(_bits(got), _bits(want))
    np.testing.assert_array_equal(_bits(_relu(x)), _bits(np.where(x < 0.0, 0.0, x)))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_negative_zeros_by_bits_are_the_signed_zeros(dtype):
    # max_pool's test for a -0.0 maximum (nn/pool_choice.py): the bit pattern of -0.0,
    # against values equal to 0 with their sign bit set; None where there is none
    from symgrad.nn.pool_choice import negative_zeros

    a = _awkward((64, 6, 7, 4), dtype)
    a.flat[11::37], a.flat[3::13] = 0.0, -0.0
    for x in (a, a[:, ::2], a.astype(a.dtype.newbyteorder())):
        want = (x == 0) & np.signbit(x)
        assert want.any()
        np.testing.assert_array_equal(negative_zeros(x), want)
    assert negative_zeros(np.abs(a)) is None and negative_zeros(np.zeros(5, dtype)) is None
