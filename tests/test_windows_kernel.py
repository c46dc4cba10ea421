"""The Numba kernels of ``windows`` / ``unwindows`` (im2col, col2im) and of a product of
a transposed reshape, as a convolution's gradient makes them (issue 27): float32 stays
float32, col2im reads a transposed or broadcast gradient where it is (no copy) and adds
each element's terms in the interpreter's order (the same bits), and a reshaped matrix
goes to BLAS transposed as it is. Each compiled kernel against the numpy interpreter."""

from __future__ import annotations

import numpy as np
import pytest

import symgrad as sg
from symgrad.prims.windows import unwindows, windows


def conv_gradient(g, pooled):
    """col2im of a convolution's input gradient as its matrix product leaves it
    ``(N*P, C*K)``, transposed to ``(N, C, *out, *kernel)``, plus a pooling's gradient
    (broadcast over its window) and a strided, dilated 1-d one without leading axes."""
    cols = g.reshape(2, 3, 3, 4, 2, 2).transpose(0, 3, 1, 2, 4, 5)
    pool = np.broadcast_to(pooled.reshape(2, 4, 2, 2, 1, 1), (2, 4, 2, 2, 2, 2))
    line = unwindows(g[0, :6].reshape(3, 2), (2,), (2,), (3,), (8,))
    return (unwindows(cols, (2, 2), (1, 1), (1, 1), (4, 4)),
            unwindows(pool, (2, 2), (2, 2), (1, 1), (4, 4)), line)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_col2im_kernel_has_the_interpreters_bits(dtype):
    rng = np.random.default_rng(27)
    g = rng.standard_normal((18, 16)).astype(dtype)
    pooled = rng.standard_normal((2, 4, 2, 2)).astype(dtype)
    compiled = sg.jit(conv_gradient)
    got = compiled(g, pooled)
    want = sg.jit(conv_gradient, backend="numpy")(g, pooled)
    for a, b in zip(got, want):
        assert a.dtype == b.dtype == dtype
        np.testing.assert_array_equal(a, b)
    # independent of both: numpy's adds, one window at a time
    cols = g.reshape(2, 3, 3, 4, 2, 2).transpose(0, 3, 1, 2, 4, 5)
    naive = np.zeros((2, 4, 4, 4), dtype)
    for i in range(3):
        for j in range(3):
            naive[:, :, i:i + 2, j:j + 2] += cols[:, :, i, j]
    np.testing.assert_allclose(got[0], naive, rtol=1e-5 if dtype == np.float32 else 1e-13)
    source = compiled.source(g, pooled)
    # neither the transposed gradient nor the broadcast one is copied
    assert "ascontiguousarray(b)" not in source and source.count("ascontiguousarray") == 3


def channel_windows_gradient(g):
    """col2im of a convolution's windows over its channels too ``(N, 1, *out, C,
    *kernel)`` (one leading axis: its rows added through views), from its matrix
    product's ``(N*P, C*K)``, strided and dilated, and with rows of two elements."""
    cols = g.reshape(2, 1, 2, 2, 2, 3, 3)
    return (unwindows(cols, (2, 3, 3), (1, 1, 2), (1, 2, 2), (2, 6, 7)),
            unwindows(g.reshape(2, 1, 9, 4, 2), (4, 2), (1, 1), (1, 3), (4, 12)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_col2im_of_a_convolutions_windows_by_rows_has_the_interpreters_bits(dtype):
    rng = np.random.default_rng(28)
    g = rng.standard_normal((8, 18)).astype(dtype)
    g.flat[::7], g.flat[3::11] = -0.0, 1e30  # (the order of the adds shows)
    compiled = sg.jit(channel_windows_gradient)
    got = compiled(g.T.copy().T)  # (as a product leaves it: transposed)
    want = sg.jit(channel_windows_gradient, backend="numpy")(g)
    for a, b in zip(got, want):
        assert a.dtype == b.dtype == dtype
        np.testing.assert_array_equal(a, b)
    source = compiled.source(g)
    assert source.count("_t[") == 1  # (the second's rows, of two elements, as before)


def windows_and_products(x, y):
    """im2col of a float32 image, and products of transposed reshapes (a convolution's
    weight gradient ``rows.T @ windows``) that BLAS reads as they are; windows of a
    boolean mask stay boolean."""
    rows = x.reshape(4, 16)
    return (windows(x, (3, 3), (1, 1), (1, 1)), rows.T @ y, y.T @ rows,
            windows(x > 0, (2, 2), (2, 2), (1, 1)))


def test_windows_and_transposed_reshapes_agree_with_the_interpreter():
    dtype = np.float32  # (float64 takes the same code path)
    rng = np.random.default_rng(31)
    x = rng.standard_normal((2, 2, 4, 4)).astype(dtype)
    y = rng.standard_normal((4, 5)).astype(dtype)
    compiled = sg.jit(windows_and_products)
    got = compiled(x, y)
    want = sg.jit(windows_and_products, backend="numpy")(x, y)
    tol = 1e-5
    for a, b in zip(got[:3], want):
        assert a.dtype == b.dtype == dtype
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    assert got[3].dtype == want[3].dtype == np.bool_
    np.testing.assert_array_equal(got[3], want[3])
    np.testing.assert_allclose(got[1], x.reshape(4, 16).T.astype(np.float64) @ y, rtol=tol)
    source = compiled.source(x, y)
    # a.T read as it lies: numpy's gemm of a transposed operand (symgrad.backend.blas), or
    # np.dot of the transposed view where numpy has no such library; never a copy of a.T
    from symgrad.backend.blas import AVAILABLE
    assert ("bl.sdot_tn(a, " if AVAILABLE else "np.dot(a.T, ") in source
    assert "a.T)" not in source.replace("np.dot(a.T,", "")
