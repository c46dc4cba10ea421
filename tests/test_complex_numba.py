"""Complex values in Numba kernels, against JAX and the numpy interpreter.

The programs are tests/test_complex.py's (one home per fact), run with
``backend="numba"``: their gradients are JAX's and the interpreter's, the results have
the interpreter's dtypes (complex64 stays complex64), and the program is Numba kernels,
not the interpreter (its source says ``@njit``). To keep the compiles few, several
programs run as one function of all their arguments (the sum of their values), whose
gradient with respect to each program's argument is that program's gradient, as the
SymPy table's family kernels do (tests/cases.py).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from test_complex import FFTS, REAL_VALUED, A, Z, close, crand, jax, jnp, rand

import symgrad as sg

FULL = os.environ.get("SYMGRAD_FULL") == "1"
#: REAL_VALUED's programs in groups of one kernel each (the FFTs: pieces around them), all
#: of them with SYMGRAD_FULL=1 (about 130 s of compiling on a loaded machine), else
#: :data:`CI_GROUPS`
ALL_GROUPS = {
    "elementwise": ["abs2", "abs", "python-abs", "angle", "angle-deg", "real-imag", "attributes",
                    "conj", "exp-log", "sin-cos-tanh", "sqrt", "power",
                    "square-reciprocal-div", "neg-sub", "exp-i-theta", "real-in-complex-mid",
                    "where"],
    "reductions-indexing": ["mean", "sum-axis", "prod", "prod-with-zeros", "var-std", "norms",
                            "indexing", "reshape-transpose-concat"],
    "linalg": ["matmul", "dot", "matrix-arg", "least-squares", "eigvals"],
    "fft": ["fft-power", "rfft-power"],
}
#: a few programs of each group: every family of primitives in a kernel (a loss through
#: prod's zeros, where, angle's arctan2 of parts, the indexing moves, BLAS's complex
#: products), about 20 s of compiling; complex eig's kernel alone compiles in about 25 s:
#: with SYMGRAD_FULL=1 only
CI_GROUPS = {
    "elementwise": ["abs2", "conj", "exp-log", "sin-cos-tanh", "power",
                    "square-reciprocal-div", "where", "exp-i-theta", "angle"],
    "reductions-indexing": ["sum-axis", "prod-with-zeros", "indexing"],
    "linalg": ["least-squares", "dot"],
    "fft": ["fft-power"],
}
GROUPS = ALL_GROUPS if FULL else CI_GROUPS


def _group(n, names):
    fns = [REAL_VALUED[name][0](n) for name in names]
    return lambda *args: sum(f(a) for f, a in zip(fns, args))


def test_the_groups_hold_every_program():
    assert sorted(sum(ALL_GROUPS.values(), [])) == sorted(REAL_VALUED)
    assert all(set(names) <= set(ALL_GROUPS[g]) for g, names in CI_GROUPS.items())


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_grad_on_numba_is_jaxs_and_the_interpreters(group):
    names = GROUPS[group]
    args = [REAL_VALUED[name][1] for name in names]
    argnums = tuple(range(len(args)))
    g = sg.grad(_group(np, names), argnums=argnums, backend="numba")
    got = g(*args)
    assert "@njit" in g.source(*args) and "interpreter" not in g.source(*args)
    want = jax.jit(jax.grad(_group(jnp, names), argnums=argnums))(*args)
    interpreted = sg.grad(_group(np, names), argnums=argnums, backend="numpy")(*args)
    for name, a, b, c in zip(names, got, want, interpreted):
        assert a.dtype == np.asarray(b).dtype == c.dtype, name
        close(a, b)
        close(a, c, rtol=1e-13, atol=1e-13)
    # called again on other values: the same kernels, the new gradient
    moved = [a * 0.5 - 0.25 for a in args]
    for a, b in zip(g(*moved), jax.jit(jax.grad(_group(jnp, names), argnums=argnums))(*moved)):
        close(a, b)


def test_holomorphic_derivatives_on_numba():
    f = lambda n: lambda z: A @ (n.sin(z) * z ** 2 + n.exp(z) / (z + 3.0))  # noqa: E731
    got = sg.jacfwd(f(np), holomorphic=True, backend="numba")(Z)
    close(got, jax.jit(jax.jacfwd(f(jnp), holomorphic=True))(Z))
    close(got, sg.jacfwd(f(np), holomorphic=True, backend="numpy")(Z), rtol=1e-13, atol=1e-13)
    h = lambda n: lambda z: n.sin(z) * z ** 2 + n.exp(z) / (z + 3.0)  # noqa: E731
    z = 0.3 - 0.8j
    close(sg.grad(h(np), holomorphic=True, backend="numba")(z),
          jax.jit(jax.grad(h(jnp), holomorphic=True))(z))


def test_vjp_of_a_complex_valued_function_on_numba():
    make, arg = FFTS["non-holomorphic"]
    value, pullback = sg.vjp(make(np), arg, backend="numba")
    close(value, make(np)(arg), rtol=1e-14, atol=1e-14)
    ct = crand(*arg.shape)
    (got,) = pullback(ct)
    (want,) = jax.vjp(make(jnp), jnp.asarray(arg))[1](jnp.asarray(ct))
    assert got.dtype == want.dtype == np.complex128
    close(got, want)


def test_complex64_stays_complex64_on_numba():
    z = Z.astype(np.complex64)
    f = lambda n: lambda z: n.sum(n.abs(n.exp(z) * z) ** 2)  # noqa: E731
    got = sg.grad(f(np), backend="numba")(z)
    interpreted = sg.grad(f(np), backend="numpy")(z)
    assert got.dtype == interpreted.dtype == np.complex64
    close(got, jax.jit(jax.grad(f(jnp)))(jnp.asarray(z)), rtol=1e-5, atol=1e-5)
    close(got, interpreted, rtol=1e-5, atol=1e-5)
    # a complex constant of a complex64 graph (a 0-d complex argument of the kernel)
    h = lambda z: np.real(np.sum(np.log(z) * 1j + z * z * (2 - 1j)))  # noqa: E731
    got = sg.grad(h, backend="numba")(z)
    assert got.dtype == np.complex64
    close(got, sg.grad(h, backend="numpy")(z), rtol=1e-5, atol=1e-5)
    # complex64 results: an array, a sum (a scalar the kernel adds in complex128)
    values = sg.jit(lambda z: (z * z + 1j, np.sum(z * 2.0), np.fft.fft(z)), backend="numba")(z)
    for got, want in zip(values, (z * z + 1j, np.sum(z * 2.0), np.fft.fft(z))):
        assert np.asarray(got).dtype == np.complex64 == np.asarray(want).dtype
        close(got, want, rtol=1e-5, atol=1e-5)


def test_eigh_of_a_complex_upper_triangle_is_a_kernel():
    """eigh(a, UPLO="U") of a complex matrix calls LAPACK's zheevd on the upper triangle,
    as numpy does (symgrad.backend.lapack): numpy's eigenvalues, and gradients through
    the eigenvalues and the eigenvectors' moduli equal to the interpreter's."""
    m = crand(3, 3)
    f = lambda a: (np.sum(np.linalg.eigvalsh(a, UPLO="U") ** 3)  # noqa: E731
                   + np.sum(np.abs(np.linalg.eigh(a, UPLO="U")[1]) ** 3))
    g = sg.value_and_grad(f, backend="numba")
    assert "la.eigh_upper(" in g.source(m) and "interpreter" not in g.source(m)
    value, grad = g(m)
    close(value, f(m), rtol=1e-14, atol=1e-14)
    close(grad, sg.grad(f, backend="numpy")(m), rtol=1e-12, atol=1e-12)


def test_the_fft_runs_between_kernels():
    f = lambda n: lambda t: n.sum(n.abs(n.fft.fft(t * (1.0 - 0.5j))) ** 2 * t)  # noqa: E731
    g = sg.grad(f(np), backend="numba")
    x = rand(6)
    close(g(x), jax.jit(jax.grad(f(jnp)))(x))
    source = g.source(x)
    assert "@njit" in source and "fft (axes=(0,), fft_type='fft'" in source
    assert "runs in Python between the kernels" in source and "Numba has no FFT" in source
    assert "np.fft" not in source.replace("# fft", "")


def test_complex_functions_where_numbas_lose_digits_are_numpys():
    """Numba's complex log near |z| = 1 (1.6e-9 relative), expm1 at tiny |z| (exp(z) - 1),
    tanh at large real parts (nan) and arccosh are not numpy's: kernels call numpy's
    (symgrad.backend.npymath), so the values are numpy's to the bit."""
    z = np.array([1 + 1e-9 * (0.3 - 0.7j), 1e-17 + 1e-200j, 400 + 1j, -1e-9j + 0.999999999, 2j])
    fns = (np.log, np.log2, np.log10, np.expm1, np.tanh, np.arccosh)
    got = sg.jit(lambda z: tuple(f(z) * 2.0 for f in fns), backend="numba")(z)
    for f, value in zip(fns, got):
        np.testing.assert_array_equal(value, f(z) * 2.0, err_msg=f.__name__)


def test_cholesky_qr_and_cumprod_kernels_are_jaxs():
    """The complex QR, and with SYMGRAD_FULL=1 cholesky (Hermitian) and cumprod in the same
    kernel (in CI cholesky's case of the SymPy table runs on Numba, cumprod's with
    SYMGRAD_FULL=1: cases_complex.py)."""
    w, wq, wr = crand(3, 3), crand(4, 3), crand(3, 3)

    def loss(n):
        def f(z, a, c):
            q, r = n.linalg.qr(a)
            if FULL:
                b = z.reshape(3, 3)
                low = n.linalg.cholesky(b @ n.conj(b).T + 3.0 * n.eye(3))
            qr_part = n.sum(n.real(q * wq)) + n.sum(n.imag(r * wr))
            if not FULL:
                return qr_part
            return (qr_part + n.sum(n.real(low * w) + n.imag(low) ** 2)
                    + n.sum(n.real(n.cumprod(c, axis=1) * w)))
        return f

    args = (crand(9), crand(4, 3), crand(3, 3))
    g = sg.grad(loss(np), argnums=(0, 1, 2), backend="numba")
    assert "njit" in g.source(*args)  # a kernel, not the interpreter
    want = jax.grad(loss(jnp), argnums=(0, 1, 2))(*args)
    for got, w_ in zip(g(*args), want):
        close(got, w_, rtol=1e-10, atol=1e-10)
