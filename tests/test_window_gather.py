"""The eager ``windows`` as one compiled gather (symgrad/backend/numba/window_gather.py): numpy's
copy bit for bit (an independent slice-by-slice copy too), a fresh array per call, and
convolutions and poolings through it against real PyTorch 2.13, values, indices,
gradients and double backward, called again after their inputs changed."""

from __future__ import annotations

import numpy as np
import pytest

import symgrad
from symgrad.backend.numba import window_gather as G
from symgrad.eager import backward as B
from symgrad.prims.windows import _windows_impl

from oracle import bits as _bits
from oracle import naive_windows as _naive

torch_real = pytest.importorskip("torch")


@pytest.fixture
def gathered(monkeypatch):
    """Every size through the gather, from a geometry's second call; the backward stays
    on the interpreter (only the gather compiles)."""
    monkeypatch.setattr(G, "MIN_SIZE", 0)
    monkeypatch.setattr(B, "COMPILE_AT_RUN", 10 ** 9)
    before = symgrad.config.eager_compile
    symgrad.config.update("eager_compile", True)
    yield
    symgrad.config.update("eager_compile", before)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gather_is_numpys_copy_bit_for_bit(gathered, dtype):
    rng = np.random.default_rng(31)
    for shape, kernel, stride, dilation in [
            ((3, 2, 9, 8), (2, 2), (2, 2), (1, 1)), ((2, 3, 9, 7), (3, 3), (1, 2), (2, 1)),
            ((4, 30), (3,), (2,), (3,)), ((2, 9, 8, 7), (2, 2, 1), (1, 2, 3), (2, 1, 1)),
            ((12, 12), (5, 5), (1, 1), (1, 1))]:
        x = (rng.standard_normal(shape) * 1e3).astype(dtype)
        x.flat[::7], x.flat[3::11], x.flat[5::13] = np.nan, -0.0, -np.inf
        want = _naive(x, kernel, stride, dilation)
        np.testing.assert_array_equal(_bits(_windows_impl(x, kernel, stride, dilation)),
                                      _bits(want))
        results = [G.windows(x, kernel, stride, dilation) for _ in range(3)]
        for got in results:
            assert got.dtype == x.dtype and got.shape == want.shape and got.flags.c_contiguous
            np.testing.assert_array_equal(_bits(got), _bits(want))
        assert not np.shares_memory(results[1], results[2])  # a fresh array each call
        assert G._GEOMETRIES[(shape[-len(kernel):], kernel, stride, dilation)][2] >= 3
        assert (kernel, stride, dilation, False) in G._OWN  # (the third: its own loops)
    # planes read where they are: a convolution's result (batch and channel axes swapped
    # in memory), strided and Fortran-ordered arrays
    x = (rng.standard_normal((3, 4, 9, 8)) * 1e3).astype(dtype)
    x.flat[::7], x.flat[3::11] = np.nan, -0.0
    for a in (x.transpose(1, 0, 2, 3), x[:, ::2], x[..., ::2, :], x[..., 1:], np.asfortranarray(x),
              x[0, 0]):
        want = _naive(a, (2, 3), (2, 1), (1, 2))
        for _ in range(3):
            got = G.windows(a, (2, 3), (2, 1), (1, 2))
            assert got.flags.c_contiguous and got.shape == want.shape
            np.testing.assert_array_equal(_bits(got), _bits(want))
    assert G._KERNEL[0] not in (None, False)  # (the compiled copy ran)
    # one compile per dtype and layout: new sizes and geometries reuse it
    signatures = len(G._KERNEL[0].function.overloads)
    for shape, d in (((5, 3, 17, 11), 2), ((2, 40), 1)):
        for _ in range(2):
            G.windows(np.ones(shape, dtype), (3,) * d, (2,) * d, (1,) * d)
    assert len(G._KERNEL[0].function.overloads) == signatures


def test_gather_is_off_without_eager_compile_for_other_dtypes_and_huge_planes(gathered,
                                                                           monkeypatch):
    def refuse():
        raise AssertionError("the compiled gather was called")

    monkeypatch.setattr(G, "_kernel", refuse)
    x = np.arange(2 * 3 * 10 * 10, dtype=np.float64).reshape(2, 3, 10, 10)
    for a in (x.astype(np.int64), x.astype(np.complex128), x.astype(np.float16)):
        for _ in range(3):
            np.testing.assert_array_equal(G.windows(a, (3, 3), (1, 1), (1, 1)),
                                          _naive(a, (3, 3), (1, 1), (1, 1)))
    monkeypatch.setattr(G, "MAX_TABLE", 10)  # (a plane's windows too large for a table)
    for _ in range(3):
        np.testing.assert_array_equal(G.windows(x, (1, 3), (2, 2), (1, 1)),
                                      _naive(x, (1, 3), (2, 2), (1, 1)))
    symgrad.config.update("eager_compile", False)
    for _ in range(3):
        np.testing.assert_array_equal(G.windows(x, (2, 3), (1, 2), (1, 1)),
                                      _naive(x, (2, 3), (1, 2), (1, 1)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_window_matrix_of_data_by_its_own_loops_as_pytorch(gathered, dtype):
    """A convolution of data (no gradient to its input: nn/convolution.py's
    _window_rows) from a geometry's third call fills its window matrix by the loops
    compiled for it: numpy's copy bit for bit, and values and gradients as PyTorch's
    when the weight changed in place between calls."""
    from symgrad.nn.convolution import _window_rows
    rng = np.random.default_rng(33)
    for d, kernel, options in ((2, (3, 2), dict(stride=(2, 1), padding=1, dilation=(1, 2))),
                               (1, (3,), dict(padding=2)), (3, (2, 1, 2), dict(stride=2))):
        x = rng.standard_normal((2, 2, 7, 6, 5)[:2 + d])
        w = rng.standard_normal((3, 2, *kernel))
        for bias in (True, False):
            convs = [getattr(lib.nn, f"Conv{d}d")(2, 3, kernel, bias=bias, **options)
                     for lib in (symgrad, torch_real)]
            for conv in convs:
                conv.float() if dtype == np.float32 else conv.double()
            results = []
            for conv, lib in zip(convs, (symgrad, torch_real)):
                with lib.no_grad():
                    conv.weight.copy_(lib.tensor(w))
                    if bias:
                        conv.bias.copy_(lib.tensor(w.ravel()[-3:]))
                found = []
                for _ in range(4):
                    y = conv(lib.tensor(x.astype(dtype)))
                    (y * y).sum().backward()
                    found.append([v.detach().numpy().astype(np.float64) for v in
                                  (y, conv.weight.grad) + ((conv.bias.grad,) if bias else ())])
                    with lib.no_grad():
                        conv.weight.mul_(0.5)  # (in place: the next call reads it)
                    conv.zero_grad()
                results.append(found)
            tol = 1e-5 if dtype == np.float32 else 1e-12
            for got, want in zip(*results):
                for g, v in zip(got, want):
                    np.testing.assert_allclose(g, v, rtol=tol, atol=tol * np.abs(v).max())
        geometry = tuple(tuple(np.broadcast_to(v, (d,)).tolist()) for v in (
            kernel, options.get("stride", 1), options.get("dilation", 1)))
        assert (*geometry, True) in G._OWN  # (the conv's third and fourth calls)
        # the window matrix itself, against numpy's copy (another geometry's)
        padded = np.pad(x, [(0, 0)] * 2 + [(1, 1)] * d).astype(dtype)
        padded.flat[::5], padded.flat[3::7] = np.nan, -0.0
        stride, dilation = (1,) * d, (2,) * d
        out = tuple(s - 2 * (k - 1) for s, k in zip(padded.shape[2:], kernel))
        symgrad.config.update("eager_compile", False)
        want = _window_rows(padded, kernel, stride, dilation, out, True)  # (numpy's copy)
        symgrad.config.update("eager_compile", True)
        for _ in range(G.OWN_CALLS):
            got = _window_rows(padded, kernel, stride, dilation, out, True)
        assert (kernel, stride, dilation, True) in G._OWN
        np.testing.assert_array_equal(_bits(got), _bits(want))


def _pools_and_convs(lib, x, w, dtype):
    """Values, indices and gradients (and a double backward's) of convolutions of a
    tensor needing grad (the windows primitive) and of poolings."""
    F = lib.nn.functional
    results = []
    xt = lib.tensor(x.astype(dtype), requires_grad=True)
    wt = lib.tensor(w.astype(dtype), requires_grad=True)
    h = xt * 1.5
    y1 = F.conv2d(h, wt, stride=(2, 1), padding=1, dilation=(1, 2))
    y2 = F.conv2d(h, wt[:, :1, :2], groups=2, padding="same")
    p, idx = F.max_pool2d(h, 3, 2, padding=1, ceil_mode=True, return_indices=True)
    a = F.avg_pool2d(h, 2, ceil_mode=True, count_include_pad=False)
    c1 = F.conv1d(h[:, :, 0], wt[:, :, 0], stride=2)
    c3 = F.conv3d(h.reshape(2, 2, 3, 3, 8), wt[:, :, None, :2, :2].expand(4, 2, 2, 2, 2))
    total = sum((v * v.sin()).sum() for v in (y1, y2, p, a, c1, c3))
    (gx, gw) = lib.autograd.grad(total, (xt, wt), create_graph=True)
    (gx * gx).sum().backward()
    for v in (y1, y2, p, a, c1, c3, gx, gw, xt.grad, wt.grad):
        results.append(v.detach().numpy().astype(np.float64))
    results.append(idx.numpy())
    names = [v.grad_fn.name() for v in (y1, y2, p, a, c1, c3)]
    return results, names


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_convolutions_and_pools_through_the_gather_as_pytorch(gathered, dtype):
    rng = np.random.default_rng(32)
    x, w = rng.standard_normal((2, 2, 9, 8)), rng.standard_normal((4, 2, 3, 3))
    x[0, 0, :2, :2] = 1.0  # (ties in max pooling: the first maximum, as PyTorch's)
    x[1, 1, 3, 3], x[1, 0, 4, 4] = np.nan, -0.0
    # float32: each number within float32's rounding of the largest of its tensor (the
    # double backward's sums cancel), against PyTorch's float32
    tol = 1e-4 if dtype == np.float32 else 1e-10
    for _ in range(3):  # the second and third calls through the compiled gather
        (got, names), (want, want_names) = (_pools_and_convs(lib, x, w, dtype)
                                            for lib in (symgrad, torch_real))
        assert names == want_names
        for g, v in zip(got, want):
            np.testing.assert_allclose(g, v, rtol=tol, atol=tol * np.nanmax(np.abs(v)),
                                       equal_nan=True)
        x = x * 0.5 + 0.25  # changed inputs, the same geometry
    assert G._KERNEL[0] not in (None, False) and max(g[2] for g in G._GEOMETRIES.values()) >= 3
