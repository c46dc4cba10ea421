"""Complex linear algebra and scipy.special beyond first order in complex128: gradients
of ``pinv(hermitian=True)``, complex64 gradients, and second derivatives of ``slogdet``,
``pinv``, ``lstsq``, ``sinc``, ``sliding_window_view`` and scipy.special's
``logsumexp``/``softmax``/``log_softmax``/``xlogy``/``erf``/``erfc`` of complex values.

Oracles: ``jax.grad``/``jax.hessian`` (JAX's convention is symgrad's), and central
finite differences of numpy's and scipy's own functions (complex ``erf``/``erfc``, which
JAX does not have). Everything runs on the numpy interpreter: the functions' Numba
kernels are tests/test_complex_order.py's.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as ss
from test_complex import close, jax, jnp
from test_complex_order import LINALG_GRADS, _lse, _softmax

import symgrad as sg

R = np.random.default_rng(2829)
S = sg.scipy.special


def _c(*shape):
    return R.standard_normal(shape) + 1j * R.standard_normal(shape)


W3 = _c(3, 3)


def _fd_grad(f, z, h=1e-6):
    """Central differences in JAX's convention: df/dx - i df/dy, elementwise."""
    out = np.zeros(z.shape, complex)
    for k in np.ndindex(z.shape):
        e = np.zeros(z.shape)
        e[k] = h
        dx = (f(z + e) - f(z - e)) / (2 * h)
        dy = (f(z + 1j * e) - f(z - 1j * e)) / (2 * h)
        out[k] = dx - 1j * dy
    return out


# ---------------------------------------------------------------------------
# pinv(hermitian=True): numpy reads the lower triangle (eigh's UPLO="L")


def _pinv_loss(n, p):
    return n.sum(n.abs(p * W3) ** 2) + n.sum(n.imag(p * (1 - 2j)))


def _from_lower(n, a):
    """The Hermitian matrix numpy's eigh sees in ``a``: its strict lower triangle, the
    conjugate above it, the real part of its diagonal."""
    low = n.tril(a, -1)
    return low + n.conj(low).T + n.diag(n.real(n.diagonal(a)))


@pytest.mark.parametrize("shift", [3.0, 0.0])  # well conditioned, and indefinite
def test_pinv_hermitian_gradient_is_jaxs_and_finite_differences(shift):
    b = _c(3, 3)
    a = b + np.conj(b).T + shift * np.eye(3)  # Hermitian

    def f(n, hermitian):
        return lambda a: _pinv_loss(n, n.linalg.pinv(a, hermitian=hermitian))

    got = sg.grad(f(np, True), backend="numpy")(a)
    # the same function of a: pinv of the Hermitian matrix of a's lower triangle
    want = jax.jit(jax.grad(lambda a: _pinv_loss(jnp, jnp.linalg.pinv(_from_lower(jnp, a)))))(a)
    close(got, want, rtol=1e-10, atol=1e-10)
    assert np.all(np.triu(got, 1) == 0)  # numpy never reads the strict upper triangle
    close(got, _fd_grad(f(np, True), a), rtol=1e-6, atol=1e-6)
    # through a Hermitian parametrization, hermitian=True and False are one function
    def g(n, hermitian):
        return lambda b: f(n, hermitian)(b + n.conj(b).T + shift * n.eye(3))
    close(sg.grad(g(np, True), backend="numpy")(b), jax.jit(jax.grad(g(jnp, False)))(b),
          rtol=1e-10, atol=1e-10)


# ---------------------------------------------------------------------------
# complex64: numpy's dtypes, float32 precision


def _erf_loss(fn):
    return lambda z: np.sum(np.abs(fn(z)) ** 2 + np.real(fn(z) * (1 - 1j)))


SPECIAL = {"erf": ss.erf, "erfc": ss.erfc}
#: LINALG_GRADS's losses with scipy's own functions in place of sg.scipy.special's
SCIPYS = {"logsumexp": _lse(np, ss.logsumexp), "softmax": _softmax(np, ss.softmax)}


def test_complex64_gradients_are_complex64_and_jaxs():
    """Every case in one function of all the arguments (one trace, one jax.grad): each
    gradient complex64 (float32 for a real argument), within float32's reach of JAX's
    complex128 one (erf's: finite differences of scipy's)."""
    names = sorted(LINALG_GRADS)
    fs = [LINALG_GRADS[n][0] for n in names] + [_erf_loss(SPECIAL[n]) for n in sorted(SPECIAL)]
    fjs = [LINALG_GRADS[n][1] for n in names]
    erf_args = [_c(2, 3) * 0.7 for _ in SPECIAL]
    args = [a for n in names for a in LINALG_GRADS[n][2]] + erf_args
    spans = np.cumsum([0] + [len(LINALG_GRADS[n][2]) for n in names] + [1] * len(SPECIAL))

    def group(fns):
        return lambda *a: sum(f(*a[i:j]) for f, i, j in zip(fns, spans[:-1], spans[1:]))

    narrow = [a.astype(np.complex64) if a.dtype == np.complex128 else a.astype(np.float32)
              for a in args]
    for name, f, i, j in zip(names, fs, spans[:-1], spans[1:]):  # numpy's dtypes
        value = sg.jit(f, backend="numpy")(*narrow[i:j])
        with np.errstate(all="ignore"):
            assert np.asarray(value).dtype == np.asarray(SCIPYS.get(name, f)(*narrow[i:j])).dtype
    k = len(args) - len(SPECIAL)
    want = [*jax.jit(jax.grad(group(fjs), argnums=tuple(range(k))))(*args[:k]),
            *(_fd_grad(_erf_loss(SPECIAL[n]), z) for n, z in zip(sorted(SPECIAL), erf_args))]
    got = sg.grad(group(fs), argnums=tuple(range(len(args))), backend="numpy")(*narrow)
    for g, w, a in zip(got, want, narrow):
        assert g.dtype == a.dtype
        close(g, w, rtol=2e-3, atol=2e-3)


# ---------------------------------------------------------------------------
# second order: Hessians in the real and imaginary parts


def _packed(make, shapes):
    """A loss of real parameters: the complex arguments of ``shapes`` from their real
    and imaginary parts (a real-valued function of reals, which jax.hessian takes)."""
    sizes = [int(np.prod(s)) for s in shapes]

    def loss(x):
        args, at = [], 0
        for s, k in zip(shapes, sizes):
            args.append((x[at:at + k] + 1j * x[at + k:at + 2 * k]).reshape(s))
            at += 2 * k
        return make(*args)
    return loss, 2 * sum(sizes)


def _second_order_cases(n):
    sc = S if n is np else jax.scipy.special
    sw = (lambda z: np.lib.stride_tricks.sliding_window_view(z, (2, 2))) if n is np else (
        lambda z: jnp.stack([z[i:i + 2, j:j + 2] for i in range(1) for j in range(2)]))
    w = np.cos(np.arange(6.0)).reshape(2, 3)
    return {
        "slogdet": (lambda a: n.real(n.linalg.slogdet(a)[0] * (1 - 2j))
                    + n.linalg.slogdet(a)[1] ** 2, [(2, 2)]),
        "pinv": (lambda a: n.sum(n.abs(n.linalg.pinv(a) * w) ** 2), [(3, 2)]),
        "lstsq": (lambda a, b: n.sum(n.abs(n.linalg.lstsq(a, b)[0] - 1j) ** 2),
                  [(3, 2), (3,)]),
        "sinc": (lambda z: n.sum(n.abs(n.sinc(z)) ** 2 + n.real(n.sinc(z) * (1 - 2j))), [(3,)]),
        "sliding-window-view": (lambda z: n.sum(n.abs(sw(z) * w[:2, :2]) ** 2), [(2, 3)]),
        "logsumexp": (lambda z: n.sum(n.abs(sc.logsumexp(z, axis=1)) ** 2), [(2, 3)]),
        "softmax": (lambda z: n.sum(n.real(sc.softmax(z, axis=0) * (1 + 2j))), [(2, 3)]),
        "log-softmax": (lambda z: n.sum(n.abs(sc.log_softmax(z, axis=1)) ** 2), [(2, 2)]),
        "xlogy": (lambda x, y: n.sum(n.abs(x * n.log(y) if n is not np else ss.xlogy(x, y))
                                     ** 2), [(2,), (2,)]),
    }


def test_second_order_is_jaxs():
    """Hessian-vector products (forward over reverse) of every case, in one function of
    all the real and imaginary parts, against JAX's; two directions."""
    cases, cases_j = _second_order_cases(np), _second_order_cases(jnp)
    names = sorted(cases)
    packed = [_packed(*cases[n]) for n in names]
    packed_j = [_packed(cases_j[n][0], cases[n][1]) for n in names]
    spans = np.cumsum([0] + [size for _, size in packed])

    def total(parts):
        return lambda x: sum(f(x[i:j]) for (f, _), i, j in zip(parts, spans[:-1], spans[1:]))

    x = R.standard_normal(spans[-1]) * 0.8 + 0.3
    grad = sg.grad(total(packed), backend="numpy")
    # (jitted: JAX's op-by-op dispatch of these costs 3x the compile)
    hvp_j = jax.jit(lambda x, v: jax.jvp(jax.grad(total(packed_j)), (x,), (v,))[1])
    for _ in range(2):
        v = R.standard_normal(spans[-1])
        got = sg.jvp(grad, (x,), (v,), backend="numpy")[1]
        close(got, hvp_j(x, v), rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_erf_second_order_is_the_finite_differences_of_its_gradient(name):
    loss, size = _packed(lambda z: np.sum(np.abs(SPECIAL[name](z)) ** 2
                                          + np.real(SPECIAL[name](z) * (1 - 1j))), [(3,)])
    x = R.standard_normal(size) * 0.7
    hess = sg.hessian(loss, backend="numpy")(x)
    grad = sg.grad(loss, backend="numpy")
    h = 1e-6
    fd = np.array([(grad(x + h * e) - grad(x - h * e)) / (2 * h) for e in np.eye(size)])
    close(hess, fd, rtol=1e-6, atol=1e-6)
    # and the gradient itself: the finite differences of scipy's own function
    fd1 = np.array([(loss(x + h * e) - loss(x - h * e)) / (2 * h) for e in np.eye(size)])
    close(grad(x), fd1, rtol=1e-6, atol=1e-6)
