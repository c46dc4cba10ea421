"""Complex numbers against JAX (the convention symgrad follows), SymPy and numpy.

JAX's ``grad`` of a real-valued ``f`` of a complex ``z = x + iy`` is
``df/dx - i df/dy``; with ``holomorphic=True``, ``f'(z)``; ``vjp`` and ``jvp`` are
transposes under ``Re(sum(a * b))`` (README, "Complex numbers"). Every check here
runs on the numpy interpreter (``backend="numpy"``; the Numba backend's complex
kernels are tests/test_complex_numba.py's) and compares with ``jax.grad``/``jax.vjp``/
``jax.jvp``/``jax.jacfwd``/``jax.jacrev`` in float64 at rtol 1e-12, with SymPy's
derivatives of ``f(x + iy)`` in ``x`` and ``y`` at 50 digits, or with numpy's values.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import symgrad as sg

jax = pytest.importorskip("jax", reason="JAX is the oracle of complex derivatives (test extra)")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

RTOL = ATOL = 1e-12
R = np.random.default_rng(28)


def rand(*shape):
    return R.standard_normal(shape)


def crand(*shape):
    return R.standard_normal(shape) + 1j * R.standard_normal(shape)


Z = crand(4)
A = crand(3, 4)
X = rand(4)


def close(got, want, rtol=RTOL, atol=ATOL):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------
# grad of real-valued functions of complex arguments, as jax.grad: each entry is
# a function of the numpy module (np or jax.numpy) and its argument


def _lstsq(n):  # a complex-parameter least squares: |A w - b|^2, w complex
    b = np.array([1.0 + 0.5j, -0.3j, 2.0])
    return lambda w: n.sum(n.abs(A @ w - b) ** 2)


REAL_VALUED = {
    "abs2": (lambda n: lambda z: n.sum(n.abs(z) ** 2), Z),
    "abs": (lambda n: lambda z: n.sum(n.abs(z) * n.arange(4.0)), Z),
    "python-abs": (lambda n: lambda z: n.sum(abs(z * z)), Z),
    "angle": (lambda n: lambda z: n.sum(n.angle(z) * n.arange(1.0, 5.0)), Z),
    "angle-deg": (lambda n: lambda z: n.sum(n.angle(z * 1j, deg=True) ** 2), Z),
    "real-imag": (lambda n: lambda z: n.sum(n.real(z) ** 3 + n.imag(z) * n.real(z)), Z),
    "attributes": (lambda n: lambda z: n.sum(z.real * z.imag ** 2), Z),
    "conj": (lambda n: lambda z: n.real(n.sum(n.conj(z) * z * (1 + 2j) + n.conjugate(z))), Z),
    "exp-log": (lambda n: lambda z: n.sum(n.real(n.exp(z) + n.log(z) * 1j)), Z),
    "sin-cos-tanh": (lambda n: lambda z: n.sum(n.imag(n.sin(z) * n.cos(z) + n.tanh(z))), Z),
    "sqrt": (lambda n: lambda z: n.sum(n.abs(n.sqrt(z)) + n.real(n.sqrt(z))), Z),
    "power": (lambda n: lambda z: n.sum(n.real(z ** 3 + z ** 0.5 + z ** -1.5)), Z),
    "square-reciprocal-div": (
        lambda n: lambda z: n.sum(n.imag(n.square(z) + n.reciprocal(z) - z / (z + 2.0))), Z),
    "neg-sub": (lambda n: lambda z: n.sum(n.abs(-z - (1 - 2j)) ** 3), Z),
    "mean": (lambda n: lambda z: n.real(n.mean(z * z)) + n.abs(n.mean(z)), Z),
    "sum-axis": (lambda n: lambda a: n.sum(n.abs(n.sum(a, axis=0)) ** 2), A),
    "prod": (lambda n: lambda a: n.sum(n.abs(n.prod(a, axis=1)) ** 2) + n.real(n.prod(a)), A),
    "prod-with-zeros": (lambda n: lambda z: n.real(n.prod(z * n.array([1.0, 0.0, 1.0, 0.0]))
                                                  * (1 + 1j) + n.prod(z[:3] * n.array(
                                                      [0.0, 1.0, 1.0])) ** 2), Z),
    "var-std": (lambda n: lambda a: n.var(a) + n.sum(n.std(a, axis=1)), A),
    "matmul": (lambda n: lambda z: n.sum(n.abs(A @ z) ** 2), Z),
    "norms": (lambda n: lambda a: n.linalg.norm(a) + n.sum(n.linalg.norm(a, axis=0) ** 3)
              + n.sum(n.linalg.norm(a, ord=1, axis=1)), A),
    "dot": (lambda n: lambda z: n.real(n.dot(z, z * 1j)), Z),
    "matrix-arg": (lambda n: lambda a: n.sum(n.abs(a @ a.T) ** 2), A),
    "indexing": (lambda n: lambda z: n.sum(n.real(z[1:3] * z[::-1][:2] + z[n.array([0, 0])])),
                 Z),
    "reshape-transpose-concat": (
        lambda n: lambda z: n.sum(n.abs(n.concatenate([z, z * 2]).reshape(2, 4).T @ n.ones(2))),
        Z),
    "where": (lambda n: lambda z: n.sum(n.abs(n.where(n.real(z) > 0, z * z, n.conj(z)))), Z),
    "fft-power": (lambda n: lambda z: n.sum(n.abs(n.fft.fft(z)) ** 2 * n.arange(4.0)), Z),
    "least-squares": (lambda n: _lstsq(n), Z),
    "exp-i-theta": (lambda n: lambda t: n.sum(n.real(n.exp(1j * t) * (1 + 2j))), X),
    "real-in-complex-mid": (lambda n: lambda t: n.sum(n.abs(t * (1.0 - 0.5j) + 3.0) ** 2), X),
    "rfft-power": (lambda n: lambda t: n.sum(n.abs(n.fft.rfft(t, n=6)) ** 2 * n.arange(4.0)), X),
    "eigvals": (lambda n: lambda a: n.sum(n.real(n.linalg.eigvals(
        a.astype(n.complex128)) ** 3)), np.array([[0.0, -2.0, 0.3], [1.5, 0.1, 0.0],
                                                  [0.2, 0.4, 1.0]])),
}


@pytest.mark.parametrize("name", sorted(REAL_VALUED))
def test_grad_is_jaxs(name):
    make, arg = REAL_VALUED[name]
    got = sg.grad(make(np), backend="numpy")(arg)
    want = jax.jit(jax.grad(make(jnp)))(jnp.asarray(arg))
    assert np.asarray(got).dtype == np.asarray(want).dtype
    close(got, want)


def test_power_of_a_real_base_to_a_complex_exponent():
    """x ** y with x < 0 real and y complex: numpy computes it in complex (log(-2) is not nan),
    and so does its gradient in both arguments."""
    x, y = np.array([-2.0, 0.5, 3.0]), np.array([0.3 + 1j, -1j, 2 + 0.5j])
    f = lambda n: lambda x, y: n.sum(n.abs(x ** y) ** 2)  # noqa: E731
    got = sg.grad(f(np), argnums=(0, 1), backend="numpy")(x, y)
    for a, b in zip(got, jax.jit(jax.grad(f(jnp), argnums=(0, 1)))(x, y)):
        close(a, b)


# ---------------------------------------------------------------------------
# holomorphic functions: grad, jacfwd and jacrev with holomorphic=True


def _holomorphic(n):
    return lambda z: n.sin(z) * z ** 2 + n.exp(z) / (z + 3.0)


def test_holomorphic_grad_is_the_complex_derivative():
    z = 0.3 - 0.8j
    got = sg.grad(_holomorphic(np), holomorphic=True, backend="numpy")(z)
    close(got, jax.jit(jax.grad(_holomorphic(jnp), holomorphic=True))(z))
    # f'(z) by its formula: the complex derivative itself
    close(got, np.cos(z) * z ** 2 + 2 * z * np.sin(z) + np.exp(z) * (z + 2.0) / (z + 3.0) ** 2)


@pytest.mark.parametrize("name", ["jacfwd", "jacrev"])
def test_holomorphic_jacobians_are_jaxs(name):
    ours, theirs = getattr(sg, name), getattr(jax, name)
    got = ours(lambda z: A @ _holomorphic(np)(z), holomorphic=True, backend="numpy")(Z)
    close(got, jax.jit(theirs(lambda z: A @ _holomorphic(jnp)(z), holomorphic=True))(Z))


def test_holomorphic_hessian_is_jaxs():
    """hessian(holomorphic=True): f''(z) of a holomorphic f, tuple argnums too; a real
    output is refused as JAX refuses it (a real function is not holomorphic)."""
    f = lambda n: lambda z: n.sum(n.sin(z) * z ** 2 + n.exp(A[:, :3] @ z) / (z + 3.0))  # noqa: E731
    z = Z[:3]
    close(sg.hessian(f(np), holomorphic=True, backend="numpy")(z),
          jax.hessian(f(jnp), holomorphic=True)(z))
    g = lambda n: lambda z, w: n.sum(z * z * w + n.exp(w) * z)  # noqa: E731
    got = sg.hessian(g(np), argnums=(0, 1), holomorphic=True, backend="numpy")(z, 2 * z)
    want = jax.hessian(g(jnp), argnums=(0, 1), holomorphic=True)(z, 2 * z)
    for got_row, want_row in zip(got, want):
        for a, b in zip(got_row, want_row):
            close(a, b)
    s = lambda z: np.sin(z) * z ** 3  # noqa: E731
    close(sg.hessian(s, holomorphic=True, backend="numpy")(0.3 + 0.2j),
          -np.sin(0.3 + 0.2j) * (0.3 + 0.2j) ** 3 + 6 * np.cos(0.3 + 0.2j) * (0.3 + 0.2j) ** 2
          + 6 * np.sin(0.3 + 0.2j) * (0.3 + 0.2j))
    real = lambda z: np.abs(z) ** 2  # noqa: E731
    for transform, fn in ((sg.jacfwd, real), (sg.jacrev, real),
                          (sg.hessian, lambda z: np.sum(real(z)))):
        with pytest.raises(TypeError, match="requires outputs with complex dtype"):
            transform(fn, holomorphic=True, backend="numpy")(z)


def test_jacobians_of_real_functions_of_complex_values():
    f = lambda n: lambda z: n.abs(n.sin(z)) ** 2  # noqa: E731
    close(sg.jacrev(f(np), backend="numpy")(Z), jax.jit(jax.jacrev(f(jnp)))(Z))
    g = lambda n: lambda t: n.abs(n.exp(1j * t) + 0.5 * t) ** 2  # noqa: E731
    close(sg.jacfwd(g(np), backend="numpy")(X), jax.jit(jax.jacfwd(g(jnp)))(X))
    h = lambda n: lambda t: n.sum(g(n)(t))  # noqa: E731
    close(sg.hessian(h(np), backend="numpy")(X), jax.jit(jax.hessian(h(jnp)))(X))


# ---------------------------------------------------------------------------
# vjp and jvp of complex-valued functions (no holomorphy needed), the fft family


def _nonholomorphic(n):
    return lambda z: n.exp(z) * n.conj(z) + n.abs(z) ** 2 + n.real(z) * 1j - n.imag(z)


FFTS = {
    "fft": (lambda n: lambda z: n.fft.fft(z), crand(6)),
    "fft-n-pad-ortho": (lambda n: lambda z: n.fft.fft(z, n=8, norm="ortho"), crand(6)),
    "fft-n-truncate-forward": (lambda n: lambda z: n.fft.fft(z, n=4, norm="forward"), crand(6)),
    "ifft": (lambda n: lambda z: n.fft.ifft(z), crand(5)),
    "ifft-axis0-ortho": (lambda n: lambda z: n.fft.ifft(z, axis=0, norm="ortho"), crand(5, 3)),
    "rfft-even": (lambda n: lambda x: n.fft.rfft(x), rand(6)),
    "rfft-odd-forward": (lambda n: lambda x: n.fft.rfft(x, norm="forward"), rand(7)),
    "rfft-n-axis0-ortho": (lambda n: lambda x: n.fft.rfft(x, n=6, axis=0, norm="ortho"),
                           rand(5, 2)),
    "irfft-even": (lambda n: lambda z: n.fft.irfft(z), crand(4)),
    "irfft-n-odd": (lambda n: lambda z: n.fft.irfft(z, n=7), crand(4)),
    "irfft-n-ortho": (lambda n: lambda z: n.fft.irfft(z, n=5, norm="ortho"), crand(4)),
    "irfft-forward": (lambda n: lambda z: n.fft.irfft(z, norm="forward"), crand(5)),
    "fft2": (lambda n: lambda z: n.fft.fft2(z), crand(3, 4)),
    "ifft2-s-ortho": (lambda n: lambda z: n.fft.ifft2(z, s=(4, 2), norm="ortho"), crand(3, 4)),
    "fftn-axes": (lambda n: lambda z: n.fft.fftn(z, axes=(0, 2)), crand(2, 3, 4)),
    "ifftn": (lambda n: lambda z: n.fft.ifftn(z), crand(2, 3, 2)),
    "rfftn": (lambda n: lambda x: n.fft.rfftn(x), rand(3, 4)),
    "irfftn-s": (lambda n: lambda z: n.fft.irfftn(z, s=(3, 5), axes=(0, 1)), crand(3, 3)),
    "fft-of-real": (lambda n: lambda x: n.fft.fft(x), rand(5)),
    "fftshift": (lambda n: lambda z: n.fft.ifftshift(n.fft.fftshift(n.fft.fft(z)) * 2.0),
                 crand(5)),
    "non-holomorphic": (_nonholomorphic, crand(3)),
}


def _like(y):
    shape = np.shape(y)
    return crand(*shape) if np.iscomplexobj(y) else rand(*shape)


@pytest.mark.parametrize("name", sorted(FFTS))
def test_vjp_and_jvp_are_jaxs(name):
    make, arg = FFTS[name]
    value, pullback = sg.vjp(make(np), arg, backend="numpy")
    want = make(np)(arg)  # numpy's own value
    close(value, want)
    assert value.dtype == want.dtype
    ct, tangent = _like(want), _like(arg)

    @jax.jit
    def oracle(a, ct, t):  # one XLA compile for JAX's vjp and jvp
        f = make(jnp)
        return jax.vjp(f, a)[1](ct)[0], jax.jvp(f, (a,), (t,))[1]

    expected, jt = oracle(jnp.asarray(arg), jnp.asarray(ct), jnp.asarray(tangent))
    (got,) = pullback(ct)
    assert got.dtype == expected.dtype
    close(got, expected)
    close(sg.jvp(make(np), (arg,), (tangent,), backend="numpy")[1], jt)


def test_vmap_of_fft_and_of_its_gradient():
    z = crand(2, 3)
    close(sg.vmap(lambda z: np.abs(np.fft.fft(z)) ** 2, backend="numpy")(z),
          np.abs(np.fft.fft(z, axis=-1)) ** 2)
    f = lambda n: lambda x: n.sum(n.abs(n.fft.rfft(x, n=6)) ** 2)  # noqa: E731
    x = rand(2, 5)
    close(sg.vmap(sg.grad(f(np), backend="numpy"), backend="numpy")(x),
          jax.jit(jax.vmap(jax.grad(f(jnp))))(x))


def test_complex64_stays_complex64():
    z = Z.astype(np.complex64)
    f = lambda n: lambda z: n.sum(n.abs(n.exp(z) * z) ** 2)  # noqa: E731
    got = sg.grad(f(np), backend="numpy")(z)
    want = jax.jit(jax.grad(f(jnp)))(jnp.asarray(z))
    assert got.dtype == np.complex64 == want.dtype
    close(got, want, rtol=1e-5, atol=1e-5)
    assert sg.jit(np.fft.fft, backend="numpy")(z).dtype == np.complex64 == np.fft.fft(z).dtype


def test_default_backend_runs_complex_graphs_as_kernels_and_ffts_between_them():
    """Numba kernels (tests/test_complex_numba.py has more), numpy's FFT between them."""
    f = lambda n: lambda z: n.sum(n.abs(n.fft.fft(z * n.exp(z))) ** 2)  # noqa: E731
    g, oracle = sg.grad(f(np)), jax.jit(jax.grad(f(jnp)))
    close(g(Z), oracle(Z))
    close(g(2 * Z), oracle(2 * Z))  # the fast path of a second call
    assert "@njit" in g.source(Z) and "Numba has no FFT" in g.source(Z)
    h = sg.grad(lambda w: np.abs(w * w + 1.0) ** 2)  # a Python complex argument
    close(h(1 + 2j), 4 * (1 + 2j) * np.conj((1 + 2j) ** 2 + 1))


def test_values_match_numpy():
    f = lambda z: (np.abs(z), np.angle(z), np.conj(z), np.fft.irfft(z, n=7),  # noqa: E731
                   np.var(z), np.std(z), z.real, z.imag)
    for got, want in zip(sg.jit(f, backend="numpy")(Z), f(Z)):
        close(got, want, rtol=1e-15, atol=1e-15)


# ---------------------------------------------------------------------------
# SymPy: the gradient of f(x + iy) is df/dx - i df/dy, at 50 digits


SYMBOLIC = {
    "exp-conj": (lambda n: lambda z: n.real(n.exp(z) * n.conj(z)),
                 lambda sp, z: sp.re(sp.exp(z) * sp.conjugate(z))),
    "abs-sin": (lambda n: lambda z: n.abs(n.sin(z)), lambda sp, z: sp.Abs(sp.sin(z))),
    "angle-square": (lambda n: lambda z: n.angle(z * z + 1.0),
                     lambda sp, z: sp.arg(z * z + 1)),
    "imag-log-div": (lambda n: lambda z: n.imag(n.log(z) / (z + 2.0)),
                     lambda sp, z: sp.im(sp.log(z) / (z + 2))),
}


@pytest.mark.parametrize("name", sorted(SYMBOLIC))
def test_grad_matches_sympy_wirtinger(name):
    sp = pytest.importorskip("sympy")
    make, symbolic = SYMBOLIC[name]
    x, y = sp.symbols("x y", real=True)
    expr = symbolic(sp, x + sp.I * y)
    z0 = 0.7 - 0.4j
    at = {x: sp.Float(z0.real, 50), y: sp.Float(z0.imag, 50)}
    want = complex(sp.N(sp.diff(expr, x).subs(at), 50)) - 1j * complex(
        sp.N(sp.diff(expr, y).subs(at), 50))
    close(sg.grad(make(np), backend="numpy")(z0), want)


def test_expressions_of_a_complex_input_use_complex_symbols():
    """The SymPy bridge's formulas: z is a complex symbol, so re(z) is not z."""
    pytest.importorskip("sympy")
    g = sg.grad(lambda z: np.real(np.exp(z)) + np.abs(z) ** 2, backend="numpy")
    (formula,) = np.ravel(g.expressions(0.5 + 1j))
    (z,) = formula.free_symbols
    assert not z.is_real
    at = 0.5 + 1j
    close(complex(formula.subs(z, at)), np.exp(at) + 2 * np.conj(at))


# ---------------------------------------------------------------------------
# refusals: a clear error, never a wrong number


def test_grad_of_a_complex_output_needs_holomorphic():
    with pytest.raises(TypeError, match="holomorphic=True"):
        sg.grad(lambda z: np.sum(z * z), backend="numpy")(Z)
    with pytest.raises(TypeError, match="requires outputs with complex dtype"):
        sg.grad(lambda z: np.sum(np.abs(z)), holomorphic=True, backend="numpy")(Z)
    with pytest.raises(TypeError, match="requires inputs with complex dtype"):
        sg.grad(lambda x: np.sum(x * x), holomorphic=True, backend="numpy")(X)
    with pytest.raises(TypeError, match="jacfwd requires real-valued inputs"):
        sg.jacfwd(lambda z: z * z, backend="numpy")(Z)
    with pytest.raises(TypeError, match="jacrev requires real-valued outputs"):
        sg.jacrev(lambda z: z * z, backend="numpy")(Z)


@pytest.mark.parametrize("fn, prim", [
    (lambda z: np.sum(np.hypot(z, z).real), "hypot"),  # (numpy's hypot refuses them too)
    (lambda z: np.sum(np.floor(z).real), "floor"),  # (numpy has no complex floor either)
    (lambda z: np.sum(np.logaddexp(z, z).real), "logaddexp"),
])
def test_primitives_that_take_no_complex_operands_name_themselves(fn, prim):
    with pytest.raises(TypeError, match=f"{prim} does not take complex operands"):
        sg.grad(fn, backend="numpy")(Z)


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigvalsh_of_a_complex_matrix_against_central_differences(uplo):
    """numpy reads one triangle of a Hermitian matrix (JAX symmetrizes instead): the oracle
    is numpy's own eigvalsh, differentiated in the real and imaginary part of each entry
    (d/dx - i d/dy)."""
    n, c = 3, rand(3)
    m = crand(n, n)

    def f(a):
        w = np.linalg.eigvalsh(a, UPLO=uplo)
        return np.sum(w * c) + np.sum(w ** 3)

    close(sg.grad(f, backend="numpy")(m), central(f, m), rtol=1e-6, atol=1e-6)


def central(f, m, h=1e-6):
    """d/dx - i d/dy of numpy's own f at each entry of m, by central differences."""
    want = np.zeros_like(m)
    for idx in np.ndindex(*m.shape):
        e = np.zeros_like(m)
        e[idx] = h
        want[idx] = ((f(m + e) - f(m - e)) - 1j * (f(m + 1j * e) - f(m - 1j * e))) / (2 * h)
    return want


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_complex_eigh_eigenvectors_against_central_differences(uplo):
    """A loss of |V| does not depend on the eigenvectors' phases: numpy's eigh
    differentiated by central differences is the oracle (numpy reads one triangle)."""
    m, c = crand(4, 4), rand(4, 4)

    def f(a):
        w, v = np.linalg.eigh(a, UPLO=uplo)
        return np.sum(np.abs(v) ** 3 * c) + np.sum(w ** 2)

    close(sg.grad(f, backend="numpy")(m), central(f, m), rtol=1e-6, atol=1e-6)
    phases = sg.grad(lambda a: np.sum(np.real(np.linalg.eigh(a, UPLO=uplo).eigenvectors)),
                     backend="numpy")(m)
    assert np.isnan(phases).all()  # depends on the phases LAPACK picks: no gradient


def test_complex_eig_eigenvectors_against_central_differences():
    m, c = crand(2, 3, 3), rand(3, 3)

    def f(a):
        w, v = np.linalg.eig(a)
        return np.sum(np.abs(v) * c) + np.sum(np.real(w) * np.imag(w))

    close(sg.grad(f, backend="numpy")(m), central(f, m), rtol=1e-6, atol=1e-6)
    # order 2: the gradient's own gradient, against central differences of it
    w = crand(2, 3, 3)
    grad_f = sg.grad(f, backend="numpy")

    def inner(a):
        return np.sum(np.real(grad_f(a) * w))

    close(sg.grad(inner, backend="numpy")(m), central(inner, m), rtol=1e-5, atol=1e-5)


def _svd_losses(n):
    """Real functions of a complex SVD that do not depend on the singular vectors' phases
    (U D, D* Vh for a diagonal D of unit complex numbers): JAX's rule is exact there."""
    def parts(a):
        return n.linalg.svd(a, full_matrices=False)

    def vectors(a):
        u, s, vh = parts(a)
        return n.sum(n.abs(u) * n.arange(u.shape[-1])) + n.sum(s ** 3) + n.sum(n.abs(vh) ** 3)

    def joint(a):  # U and Vh together: each alone depends on the phases, the product not
        u, s, vh = parts(a)
        product = u * s[..., None, :] @ vh
        return n.sum(n.real(u @ vh) * n.arange(a.shape[-1])) + n.sum(n.abs(product))

    return {"vectors": vectors, "joint": joint,
            "norms": lambda a: n.sum(n.linalg.norm(a, ord="nuc", axis=(-2, -1))
                                     + n.linalg.norm(a, ord=2, axis=(-2, -1)) ** 2)}


_SVD_SHAPES = [(4, 2), (2, 4), (3, 3), (2, 3, 4)]
_SVD_LOSSES = ["vectors", "joint", "norms"]
# every loss on every shape with SYMGRAD_FULL=1; in CI each shape once and each loss at
# least once (each pair costs JAX a compile of its svd gradient: about 5 s)
_SVD_PAIRS = ([(shape, loss) for shape in _SVD_SHAPES for loss in _SVD_LOSSES]
              if os.environ.get("SYMGRAD_FULL") == "1" else
              [((4, 2), "vectors"), ((2, 4), "joint"), ((3, 3), "norms"), ((2, 3, 4), "joint")])


@pytest.mark.parametrize("shape, loss", _SVD_PAIRS)
def test_complex_svd_grad_is_jaxs(shape, loss):
    a = crand(*shape)
    close(sg.grad(_svd_losses(np)[loss], backend="numpy")(a),
          jax.grad(_svd_losses(jnp)[loss])(a), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("shape, loss", [((2, 4), "vectors"), ((4, 3), "joint")])
def test_complex_svd_second_order_is_jaxs(shape, loss):
    """The gradient's own gradient: its phases cancel only between U and Vh."""
    a, w = crand(*shape), crand(*shape)
    f, fj = _svd_losses(np)[loss], _svd_losses(jnp)[loss]
    second = sg.grad(lambda a: np.sum(np.real(sg.grad(f, backend="numpy")(a) * w)),
                     backend="numpy")(a)
    close(second, jax.grad(lambda a: jnp.sum(jnp.real(jax.grad(fj)(a) * w)))(a),
          rtol=1e-7, atol=1e-7)


def test_complex_svd_forward_mode_is_jaxs():
    a, t = crand(4, 3), crand(4, 3)

    def f(n):
        return lambda a: n.linalg.svd(a, compute_uv=False) ** 2

    close(sg.jvp(f(np), (a,), (t,), backend="numpy")[1], jax.jvp(f(jnp), (a,), (t,))[1],
          rtol=1e-10, atol=1e-10)


def test_complex_svd_loss_that_depends_on_the_phases_has_no_gradient():
    """sum(real(U)) changes with the phases LAPACK happens to pick: nan (PyTorch raises),
    not JAX's number, which finite differences of numpy's svd do not give."""
    g = sg.grad(lambda a: np.sum(np.real(np.linalg.svd(a, full_matrices=False)[0])),
                backend="numpy")(crand(3, 3))
    assert np.isnan(g).all()


def _hermitian_cholesky(n):
    w = crand(3, 3)

    def loss(z):  # numpy reads the lower triangle of a Hermitian matrix, JAX symmetrizes
        b = z.reshape(3, 3)
        low = n.linalg.cholesky(b @ n.conj(b).T + 3.0 * n.eye(3))
        return n.sum(n.real(low * w) + n.imag(low) ** 2)
    return loss


def _qr_both(n, shape):
    wq, wr = crand(shape[0], min(shape)), crand(min(shape), shape[1])

    def loss(a):  # both factors, and |R|'s first row (R's diagonal is real: LAPACK's)
        q, r = n.linalg.qr(a)
        return n.sum(n.real(q * wq)) + n.sum(n.imag(r * wr)) + n.sum(n.abs(r[0]) ** 2)
    return loss


def _cumprod_with_zeros(n, axis):
    w = crand(12)

    def loss(z):
        return n.sum(n.real(n.cumprod(z, axis=axis).reshape(-1) * w))
    return loss


_CHOL_QR_CUMPROD = {
    "cholesky": (lambda n: _hermitian_cholesky(n), (9,)),
    "qr-tall": (lambda n: _qr_both(n, (4, 3)), (4, 3)),
    "qr-square": (lambda n: _qr_both(n, (3, 3)), (3, 3)),
    "qr-wide": (lambda n: _qr_both(n, (3, 5)), (3, 5)),
    "cumprod-axis0": (lambda n: _cumprod_with_zeros(n, 0), (3, 4)),
    "cumprod-flat": (lambda n: _cumprod_with_zeros(n, None), (3, 4)),
}


@pytest.mark.parametrize("name", sorted(_CHOL_QR_CUMPROD))
def test_complex_cholesky_qr_and_cumprod_are_jaxs(name):
    """PyTorch's cholesky and QR rules with conjugate transposes, conjugated into JAX's
    convention; cumprod's rule is holomorphic (zeros included)."""
    make, shape = _CHOL_QR_CUMPROD[name]
    R2 = np.random.default_rng(len(name))
    z = R2.standard_normal(shape) + 1j * R2.standard_normal(shape)
    if name.startswith("cumprod"):
        z.reshape(-1)[[1, 6, 7]] = 0.0  # zeros: the rule past the first and second zero
    state = R.bit_generator.state  # the same weights for both sides
    f = make(np)
    R.bit_generator.state = state
    fj = make(jnp)
    close(sg.grad(f, backend="numpy")(z), jax.grad(fj)(z), rtol=1e-10, atol=1e-10)


def test_complex_qr_second_order_and_cholesky_forward_mode_are_jaxs():
    a, w = crand(4, 3), crand(4, 3)
    state = R.bit_generator.state
    f = _qr_both(np, (4, 3))
    R.bit_generator.state = state
    fj = _qr_both(jnp, (4, 3))
    second = sg.grad(lambda a: np.sum(np.real(sg.grad(f, backend="numpy")(a) * w)),
                     backend="numpy")(a)
    close(second, jax.grad(lambda a: jnp.sum(jnp.real(jax.grad(fj)(a) * w)))(a),
          rtol=1e-8, atol=1e-8)
    b, t = crand(3, 3), crand(3, 3)

    def chol(n):
        return lambda b: n.linalg.cholesky(b @ n.conj(b).T + 3.0 * n.eye(3))

    close(sg.jvp(chol(np), (b,), (t,), backend="numpy")[1], jax.jvp(chol(jnp), (b,), (t,))[1],
          rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("mode", ["valid", "full"])
def test_correlate_of_complex_values_conjugates_v(mode):
    """numpy's sum_n a[n + k] conj(v[n]), also with the longer array second (the review's
    f06: v was not conjugated); the gradient is JAX's."""
    a, v, w = crand(5), crand(2), crand(6)
    for x, y in ((a, v), (v, a)):
        close(sg.jit(lambda x, y: np.correlate(x, y, mode), backend="numpy")(x, y),
              np.correlate(x, y, mode))
        wk = w[:len(np.correlate(x, y, mode))]

        def f(n_, x, y, wk=wk):
            return n_.sum(n_.real(n_.correlate(x, y, mode) * wk))
        got = sg.grad(lambda x, y, f=f: f(np, x, y), argnums=(0, 1), backend="numpy")(x, y)
        want = jax.grad(lambda x, y, f=f: f(jnp, x, y), argnums=(0, 1))(x, y)
        close(got[0], want[0])
        close(got[1], want[1])


def test_complex_max_and_min_are_jaxs():
    """numpy and JAX order complex values by real part, then imaginary part (ties in the
    real part here, none in the whole value); the gradient goes to the element chosen."""
    a = np.array([[1 + 2j, 1 + 3j, 0.5 + 9j, -2 - 1j], [2 - 1j, 2 - 4j, -3 + 0j, 2 + 0.5j]])

    def f(n):
        return lambda a: (n.sum(n.abs(n.max(a, axis=1)) ** 2) + n.real(n.min(a) * (1 + 2j))
                          + n.sum(n.imag(n.max(a, axis=0, keepdims=True))))

    close(sg.jit(lambda a: np.max(a, axis=1), backend="numpy")(a), np.max(a, axis=1))
    close(sg.jit(np.min, backend="numpy")(a), np.min(a))
    close(sg.grad(f(np), backend="numpy")(a), jax.grad(f(jnp))(a))


def test_real_if_close_of_a_complex_value_is_refused():
    with pytest.raises(sg.UnsupportedFunctionError, match="real_if_close"):
        sg.jit(np.real_if_close, backend="numpy")(Z)


def test_eig_refusals():
    a = np.array([[0.0, -2.0], [1.5, 0.1]])  # complex eigenvalues
    with pytest.raises(ValueError, match="astype"):
        sg.jit(np.linalg.eigvals, backend="numpy")(a)
    close(sg.jit(lambda a: np.linalg.eigvals(a.astype(np.complex128)), backend="numpy")(a),
          np.linalg.eigvals(a))
    # a loss that depends on the eigenvectors' phases has no gradient
    assert np.isnan(sg.grad(lambda a: np.real(np.sum(np.linalg.eig(
        a.astype(complex)).eigenvectors)), backend="numpy")(a)).all()


def test_tensors_refuse_complex_operations_they_do_not_support():
    """Complex Tensors (tests/test_complex_tensors.py) refuse what they do not support,
    naming it: never the real part."""
    with pytest.raises(TypeError, match="fft does not take complex Tensors"):
        np.fft.rfft(sg.tensor([1.0, 2.0, 3.0], requires_grad=True))
    with pytest.raises(TypeError, match="sin does not take complex Tensors"):
        np.sin(sg.tensor([1.0, 2.0], requires_grad=True) * 1j)


def test_a_one_element_cotangent_of_a_complex_scalar_output_keeps_its_imaginary_part():
    """A cotangent of shape (1,) for a 0-d complex output was made a float32 (the imaginary
    part dropped, with a ComplexWarning): the pullback must take it as the 0-d one."""
    value, pullback = sg.vjp(lambda z: np.sum(z * z), Z, backend="numpy")
    (want,) = pullback(1 + 1j)
    (got,) = pullback(np.array([1 + 1j]))
    close(got, want, rtol=0, atol=0)
    close(want, 2 * Z * (1 + 1j))
