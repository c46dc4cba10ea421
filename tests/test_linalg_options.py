"""Every option of np.linalg's functions follows numpy's function, or is refused (issue 25).

For each option (UPLO, full_matrices, compute_uv, hermitian, mode, upper, rcond/rtol,
ord, axis, keepdims): the values against numpy's function called with that option,
and the gradient of a weighted sum of all the results against central differences
of numpy's own function with the option (so a function that reads one triangle only,
as eigh and cholesky do, is differentiated as such). Options symgrad does not follow
must raise a clear error. The interpreter runs the table; Numba a sample (eigh "U",
whose kernel calls LAPACK itself: symgrad/backend/lapack.py).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import symgrad as sg
from symgrad.core.errors import UnsupportedFunctionError

FULL = os.environ.get("SYMGRAD_FULL") == "1"
RNG = np.random.default_rng(3)
A = RNG.normal(size=(3, 3))
T = RNG.normal(size=(4, 3))
B = RNG.normal(size=(3, 2))
S = A @ A.T + 3 * np.eye(3)
STACK = RNG.normal(size=(2, 3, 3))


def _weights(shape):
    return np.cos(np.arange(int(np.prod(shape))) + 1.0).reshape(shape)


def _loss(fn):
    def loss(x):
        out = fn(x)
        return sum(np.sum(o * _weights(np.shape(o))) for o in (out if isinstance(out, tuple)
                                                               else (out,)))
    return loss


def _central(f, x, h=1e-6):
    g = np.zeros_like(x)
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = h
        g.flat[k] = (f(x + e) - f(x - e)) / (2 * h)
    return g


OPTIONS = {
    "eigh-L": (lambda x: tuple(np.linalg.eigh(x, "L")), A),
    "eigh-U": (lambda x: tuple(np.linalg.eigh(x, "U")), A),
    "eigh-u-lowercase": (lambda x: tuple(np.linalg.eigh(x, "u")), A),
    "eigh-U-stack": (lambda x: tuple(np.linalg.eigh(x, UPLO="U")), STACK),
    "eigvalsh-U": (lambda x: np.linalg.eigvalsh(x, "U"), A),
    "eigvalsh-L": (lambda x: np.linalg.eigvalsh(x, UPLO="L"), A),
    "svd-full_matrices-square": (lambda x: tuple(np.linalg.svd(x)), A),
    "svd-full_matrices=False": (lambda x: tuple(np.linalg.svd(x, full_matrices=False)), T),
    "svd-compute_uv=False": (lambda x: np.linalg.svd(x, compute_uv=False), T),
    "svd-compute_uv=False-hermitian": (
        lambda x: np.linalg.svd(x, compute_uv=False, hermitian=True), S),
    "svdvals": (lambda x: np.linalg.svdvals(x), T),
    "qr-reduced": (lambda x: tuple(np.linalg.qr(x)), T),
    "qr-r": (lambda x: np.linalg.qr(x, mode="r"), T),
    "qr-complete-wide": (lambda x: tuple(np.linalg.qr(x, mode="complete")), T.T.copy()),
    "cholesky": (lambda x: np.linalg.cholesky(x), S),
    "cholesky-upper": (lambda x: np.linalg.cholesky(x, upper=True), S),
    "det": (lambda x: np.linalg.det(x), A),
    "det-stack": (lambda x: np.linalg.det(x), STACK),
    "slogdet": (lambda x: tuple(np.linalg.slogdet(x)), A),
    "inv": (lambda x: np.linalg.inv(x), A),
    "solve-matrix": (lambda x: np.linalg.solve(x, B), A),
    "solve-vector": (lambda x: np.linalg.solve(x, B[:, 0]), A),
    "pinv": (lambda x: np.linalg.pinv(x), T),
    "pinv-rcond-small": (lambda x: np.linalg.pinv(x, rcond=1e-10), T),
    "pinv-rtol=None": (lambda x: np.linalg.pinv(x, rtol=None), T),
    "pinv-hermitian": (lambda x: np.linalg.pinv(x, hermitian=True), S),
    "lstsq": (lambda x: tuple(np.linalg.lstsq(x, _weights((4, 2)), rcond=None)[:2]), T),
    "eig": (lambda x: tuple(np.linalg.eig(x)), S),
    "eigvals": (lambda x: np.linalg.eigvals(x), S),
}
NORMS = {f"norm-ord={o}-axis={a}-keepdims={k}": (
    (lambda o, a, k: lambda x: np.linalg.norm(x, o, a, k))(o, a, k), A)  # noqa: B023
    for o in (None, "fro", "nuc", np.inf, -np.inf, 0, 1, -1, 2, -2, 3, 0.5)
    for a in (None, 0, 1, (0, 1), (1, 0), -1) for k in (False, True)}
NORMS["norm-3d-axis=(2,0)"] = (lambda x: np.linalg.norm(x, 2, (2, 0)), STACK)


def _valid(fn, x):
    try:
        fn(x)
    except (ValueError, np.linalg.LinAlgError):
        return False
    return True


NORM_CASES = sorted(k for k, (fn, x) in NORMS.items() if _valid(fn, x))
TABLE = {**OPTIONS, **NORMS}


@pytest.mark.parametrize("name", sorted(OPTIONS) + (NORM_CASES if FULL else NORM_CASES[::5]))
def test_option_follows_numpys_function(name):
    fn, x = TABLE[name]
    want = fn(x)
    got = sg.jit(fn, backend="numpy")(x)
    want, got = (w if isinstance(w, tuple) else (w,) for w in (want, got))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    loss = _loss(fn)
    ref = _central(loss, x)
    np.testing.assert_allclose(sg.grad(loss, backend="numpy")(x), ref,
                               atol=1e-6 * max(1.0, np.abs(ref).max()))


def test_every_valid_norm_follows_numpy_without_raising():
    # all 144 orders x axes x keepdims (those numpy accepts), values only: cheap
    for name in NORM_CASES:
        fn, x = NORMS[name]
        np.testing.assert_allclose(sg.jit(fn, backend="numpy")(x), fn(x), rtol=1e-12,
                                   err_msg=name)


def test_eigh_upper_on_numba_is_numpys_bit_for_bit():
    # LAPACK reduces the upper triangle otherwise than the lower one: the eigenvectors of
    # eigh(x, "U") are not eigh(x.T)'s (the gradient was 3.5 off against numpy's function)
    fn = OPTIONS["eigh-U-stack"][0]
    w, v = sg.jit(fn)(STACK)
    want_w, want_v = np.linalg.eigh(STACK, "U")
    np.testing.assert_array_equal(v, want_v)
    np.testing.assert_array_equal(w, want_w)
    loss = _loss(OPTIONS["eigh-U"][0])
    np.testing.assert_allclose(sg.grad(loss)(A), _central(loss, A), atol=1e-6)


REFUSED = {
    "svd-hermitian-vectors": lambda x: np.linalg.svd(x, hermitian=True),
    "svd-full_matrices-tall": lambda x: np.linalg.svd(np.concatenate([x, x]), ),
    "qr-complete-tall": lambda x: np.linalg.qr(np.concatenate([x, x]), mode="complete"),
    "qr-raw": lambda x: np.linalg.qr(x, mode="raw"),
    "pinv-rcond-large": lambda x: np.linalg.pinv(x, rcond=0.5),
    "pinv-rtol-large": lambda x: np.linalg.pinv(x, rtol=0.3),
    "matrix_rank": lambda x: np.linalg.matrix_rank(x) * x,
    "cond": lambda x: np.linalg.cond(x),
}  # (np.linalg.matrix_power is supported now: tests/test_numpy_reach.py)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_options_not_followed_are_refused(name):
    with pytest.raises(UnsupportedFunctionError):
        sg.jit(REFUSED[name], backend="numpy")(S)
