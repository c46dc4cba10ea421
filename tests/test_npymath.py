"""numpy's complex functions, FFT, cbrt and extrema in Numba kernels, to numpy's bits.

Oracles: numpy's own ufuncs and ``np.fft`` (the interpreter computes with them), bit for
bit where the kernel's value is the function's alone; the numpy interpreter and JAX
(``jax.grad``, ``jax.lax.fori_loop``) for gradients through loop bodies, where other
operations join (numpy's array complex multiply uses FMA, the kernel's does not: a few
ulps). Compiles are few: one kernel per dtype for the whole table of functions.
"""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

import symgrad as sg
from symgrad.backend.numba.lowering.table import NPYMATH

pytestmark = pytest.mark.skipif(not NPYMATH, reason="libm's complex functions are called "
                                "through the x86-64 C ABI only (numpy's own elsewhere)")

#: every complex function of the lowering's npymath table, as numpy and the kernel see it
FUNCTIONS = (np.log, np.log2, np.log10, np.log1p, np.exp, np.exp2, np.expm1, np.sqrt,
             np.sin, np.cos, np.tan, np.sinh, np.cosh, np.tanh, np.arcsin, np.arccos,
             np.arctan, np.arcsinh, np.arccosh, np.arctanh, np.sign)
#: parts on both sides of every branch cut (the real axis beyond +-1, the imaginary axis
#: beyond +-i, the negative real axis), the signed zeros, infinities, nan, extremes
_PARTS = (-3.0, -1.5, -1.0, -0.5, -0.0, 0.0, 1e-300, 1e-17, 0.5, 1.0, 1.5, 3.0, 400.0,
          -400.0, 1e300, np.inf, -np.inf, np.nan)


def _points() -> np.ndarray:
    grid = np.array([complex(x, y) for x in _PARTS for y in _PARTS])
    rng = np.random.default_rng(28)
    moduli = 10.0 ** rng.uniform(-300, 300, 40) * np.exp(1j * rng.uniform(-np.pi, np.pi, 40))
    near_one = np.exp(1j * rng.uniform(-np.pi, np.pi, 20)) * (1 + 1e-9 * rng.normal(size=20))
    return np.concatenate([grid, moduli, near_one])


def _same_bits(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Where two complex arrays agree to the bit in both parts (any nan equals any nan)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype
    ints = np.int64 if want.dtype == np.complex128 else np.int32
    ok = np.ones(want.shape, bool)
    for part in (np.real, np.imag):
        g, w = part(got), part(want)
        ok &= (g.view(ints) == w.view(ints)) | (np.isnan(g) & np.isnan(w))
    return ok


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_functions_in_a_kernel_are_numpys_to_the_bit(dtype):
    with np.errstate(over="ignore"):  # (1e300 is inf in complex64)
        z = _points().astype(dtype)
    exponents = np.resize(np.array([2, 3, -1, -7, 0.5, 99, 100, 1.5 - 0.5j, 0], dtype), z.size)
    divisors = z[::-1]  # (zeros of either sign: numpy's 1/(-0-0j) is inf+nanj)
    g = sg.jit(lambda z, w, d: (*(f(z) for f in FUNCTIONS), z ** w, z / d), backend="numba")
    assert "nm.clog(" in g.source(z, exponents, divisors)
    assert "interpreter" not in g.source(z, exponents, divisors)
    got = g(z, exponents, divisors)
    with np.errstate(all="ignore"):
        want = (*(f(z) for f in FUNCTIONS), z ** exponents, z / divisors)
    for name, a, b in zip([f.__name__ for f in FUNCTIONS] + ["power", "divide"], got, want):
        bad = ~_same_bits(a, b)
        assert not bad.any(), f"{name}({z[bad][:3]}): {a[bad][:3]}, numpy's {b[bad][:3]}"


def _loop_loss(n):
    """A real loss of a complex vector through a loop body holding numpy's complex log,
    expm1, tanh, arccosh and an FFT, then a branch with an inverse FFT (each once ran the
    whole graph on the interpreter)."""
    def body(i, v):
        w = n.log(v) * 0.25 + n.expm1(v * 0.1) + n.tanh(v) * 0.5 + n.arccosh(v) * 0.125
        return n.fft.fft(w) * 0.2 + v
    def branch(v):  # (a cond's branches hold them too)
        return sg.cond(n.real(v[0]) > 0, lambda u: n.fft.ifft(n.arcsinh(u)) + n.log10(u),
                       lambda u: n.sign(u) * 2.0, v)
    return lambda z: n.sum(n.abs(branch(sg.fori_loop(0, 2, body, z))) ** 2)


def test_complex_functions_and_fft_inside_a_loop_body_are_one_kernel():
    from test_complex import jax, jnp

    z = np.array([1.0 + 2.0j, -3.0 - 1e-3j, 0.5 - 0.2j, -0.7 + 0.3j])
    f = _loop_loss(np)
    g = sg.value_and_grad(f, backend="numba")
    source = g.source(z)
    assert "@njit" in source and "interpreter" not in source
    assert "nm.fft_complex128(" in source and "nm.cacosh(" in source
    interpreted = sg.value_and_grad(f, backend="numpy")
    for args in (z, -z * 0.5 + 0.25j):  # twice, the inputs changed (the other branch)
        (value, grad), (v_i, g_i) = g(args), interpreted(args)
        np.testing.assert_allclose(value, v_i, rtol=1e-14)
        np.testing.assert_allclose(grad, g_i, rtol=1e-13, atol=1e-13)
    # finite differences in JAX's convention (d/dx - i d/dy); jax.grad itself is not the
    # oracle here: its complex arccosh derivative has the wrong sign where Re z < 0
    # (jax 0.10.2: 0.351+1.114j at -0.7+0.3j, where the derivative is -0.351-1.114j)
    h, eye = 1e-6, np.eye(len(z))
    fd = [(f(z + h * e) - f(z - h * e) - 1j * (f(z + 1j * h * e) - f(z - 1j * h * e))) / (2 * h)
          for e in eye]
    np.testing.assert_allclose(g(z)[1], fd, rtol=1e-7, atol=1e-7)
    fj = jax.grad(lambda z: jnp.real(jnp.arccosh(z)))
    assert abs(complex(fj(-0.7 + 0.3j)) - (0.35129638593 + 1.11444039025j)) < 1e-9  # (JAX's)


def test_rfft_and_irfft_in_a_scan_body_are_numpys_bits():
    """A real (float32 and float64) carry through rfft and irfft in a scan body: the
    kernel's object-mode transforms are numpy's, the sums numpy's: the same bits."""
    def f(x):
        def body(c, t):
            c = np.fft.irfft(np.fft.rfft(c) * 0.5, n=c.shape[0]) + t
            return c, np.sum(c)
        return sg.scan(body, x, np.stack([x, -x]))

    for dtype in (np.float64, np.float32):
        x = np.linspace(-1.0, 2.0, 6).astype(dtype)
        g = sg.jit(f, backend="numba")
        assert "nm.fft_" in g.source(x) and "interpreter" not in g.source(x)
        got, want = g(x), sg.jit(f, backend="numpy")(x)
        for a, b in zip(got, want):
            assert a.dtype == b.dtype == dtype
            np.testing.assert_array_equal(a, b)


def test_a_loop_with_complex_log_and_fft_exports_to_numba(tmp_path):
    """Once refused (an FFT and a complex log, which ran between kernels): one kernel."""
    z = np.array([1.0 + 2.0j, -3.0 - 1e-9j, 0.5 - 0.2j, -0.7 + 0.0j])
    body = lambda i, v: np.fft.fft(np.log(v)) * 0.25 + v  # noqa: E731
    g = sg.jit(lambda z: sg.fori_loop(0, 2, body, z), backend="numba")
    path = sg.export(g, (z,), tmp_path / "loop_fft.py", target="numba")
    text = path.read_text()
    assert "import symgrad" not in text and "numba.objmode(" in text
    spec = importlib.util.spec_from_file_location("loop_fft", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["loop_fft"] = module  # (as an import does: object mode finds its globals so)
    try:
        spec.loader.exec_module(module)
        np.testing.assert_array_equal(module.fn(z), g(z))  # the same kernel
    finally:
        sys.modules.pop("loop_fft", None)


_REALS = np.array([27.0, -27.0, 8.0, 64.0, 1e-320, -1e-320, 5e-324, 1e308, -1e-300, 0.0, -0.0,
                   np.inf, -np.inf, np.nan, 3.0, 0.001, 1e6 + 1.0])


def test_cbrt_in_a_kernel_is_numpys_to_the_bit():
    """Numba's np.cbrt is libm's cbrt or x ** (1/3), not numpy's, which is its own SIMD
    loop where the CPU has AVX-512 (libm's cbrt(27.0) is 3.0000000000000004, numpy's
    3.0): the kernel calls numpy's loop, on one element (npymath.NUMPY_CBRT)."""
    rng = np.random.default_rng(3)
    x = np.concatenate([_REALS, rng.normal(size=200) * 10.0 ** rng.uniform(-310, 308, 200)])
    for dtype, ints in ((np.float64, np.int64), (np.float32, np.int32)):
        with np.errstate(all="ignore"):
            xs = x.astype(dtype)
        g = sg.jit(np.cbrt, backend="numba")
        got, want = g(xs), np.cbrt(xs)
        assert got.dtype == want.dtype == dtype and "nm.cbrt(" in g.source(xs)
        same = (got.view(ints) == want.view(ints)) | (np.isnan(got) & np.isnan(want))
        assert same.all(), (xs[~same][:5], got[~same][:5], want[~same][:5])
    assert sg.jit(np.cbrt, backend="numba")(np.array([27.0]))[0] == np.cbrt(27.0)


def test_a_kernels_source_names_the_cbrt_it_calls(monkeypatch):
    """The source is the disk cache's key: a kernel cached by a process that registered
    numpy's loop (a symbol of that process), loaded by one that had not, called a null
    address (a segfault); the other way, libm's cbrt where numpy's was meant."""
    from symgrad.backend import npymath

    x = np.array([27.0, -8.0, 0.1, 1e-310])
    assert ("nm.cbrt(" in sg.jit(np.cbrt, backend="numba").source(x)) == npymath.NUMPY_CBRT
    monkeypatch.setattr(npymath, "NUMPY_CBRT", False)
    g = sg.jit(np.cbrt, backend="numba")
    assert "nm.libm_cbrt(" in g.source(x) and "nm.cbrt(" not in g.source(x)
    np.testing.assert_allclose(g(x), np.cbrt(x), rtol=1e-15)  # glibc's: a few ulps


def test_extrema_give_numpys_signed_zeros_and_nans():
    """numpy's minimum/maximum take the second operand on a tie (minimum(0.0, -0.0) is -0.0,
    Numba's 0.0), and nan from either; its max/min reductions let the later of tied zeros
    win (whole arrays of up to 8 elements, where numpy's SIMD lanes do not reorder them,
    and along axes)."""
    a = np.array([0.0, -0.0, 0.0, -0.0, np.nan, 1.0, 0.0, -np.inf, 2.0])
    b = np.array([-0.0, 0.0, 0.0, -0.0, 0.0, np.nan, 1.0, -np.inf, np.nan])
    m = np.array([[0.0, -0.0, 0.0, -0.0], [-0.0, 0.0, -0.0, 0.0], [0.0, np.nan, -0.0, 1.0]])

    def f(a, b, m):
        return (np.minimum(a, b), np.maximum(a, b), np.fmin(a, b), np.fmax(a, b),
                np.max(m, axis=0), np.min(m, axis=1), np.max(m[0]), np.min(m[1]),
                np.max(m[1, :2]), np.min(m[0, 1:]), np.max(m), np.min(m[:2, :2]))

    got = sg.jit(f, backend="numba")(a, b, m)
    with np.errstate(all="ignore"):
        want = f(a, b, m)
    for k, (x, w) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(x, w, err_msg=str(k))
        np.testing.assert_array_equal(np.signbit(x), np.signbit(w), err_msg=str(k))
