"""``linalg.inv_ex`` / ``cholesky_ex`` on singular and non positive-definite matrices
against real PyTorch 2.13: ``info`` per matrix (batched), the other matrices' values and
gradients (and double backward), NaN where a matrix failed (PyTorch's values there are
LAPACK's leftovers, see symgrad/eager/linalg_ex.py; its gradient there is NaN for
inv_ex, numbers made of those leftovers for cholesky_ex; NaN here), and
``check_errors=True`` / ``linalg.inv`` / ``linalg.cholesky`` raising PyTorch's error."""

from __future__ import annotations

import numpy as np
import pytest

torch_real = pytest.importorskip("torch")

import symgrad  # noqa: E402

RNG = np.random.default_rng(5)


def _batch():
    """Four 4 x 4 matrices: invertible, a zero column (pivot 3), a repeated row, zero."""
    a = RNG.standard_normal((4, 4, 4))
    a[1][:, 2] = 0.0
    a[2][3] = a[2][0]
    a[3] = 0.0
    return a


def _spd_batch():
    """Four 4 x 4 symmetric matrices: positive-definite, then leading minors 3, 1, 4
    failing."""
    b = RNG.standard_normal((4, 4, 4))
    b = b @ b.transpose(0, 2, 1) + 4 * np.eye(4)
    b[1, 2, 2] = -1.0
    b[2, 0, 0] = 0.0
    b[3, 3, 3] = -50.0
    return b


CASES = {
    "inv_ex": (lambda L, a: L.linalg.inv_ex(a), _batch, "inverse"),
    "cholesky_ex": (lambda L, a: L.linalg.cholesky_ex(a), _spd_batch, "L"),
    "cholesky_ex(upper)": (lambda L, a: L.linalg.cholesky_ex(a, upper=True), _spd_batch, "L"),
}


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_info_values_and_gradients_equal_pytorch(name, dtype):
    fn, make, field = CASES[name]
    data = make().astype(dtype)
    g = RNG.standard_normal(data.shape)
    out = {}
    for L in (symgrad, torch_real):
        a = L.tensor(data, requires_grad=True)
        r = fn(L, a)
        value = getattr(r, field)
        (grad,) = L.autograd.grad((value * L.tensor(g, dtype=value.dtype)).sum(), a)
        out[L] = (value.detach().numpy(), r.info.numpy(), grad.numpy(), str(r.info.dtype))
    (v, info, grad, idt), (tv, tinfo, tgrad, tidt) = out[symgrad], out[torch_real]
    assert idt == tidt == "torch.int32"
    np.testing.assert_array_equal(info, tinfo)
    ok = tinfo == 0
    assert not ok.all() and ok.any()
    tol = 1e-12 if dtype == "float64" else 2e-5
    np.testing.assert_allclose(v[ok], tv[ok], rtol=tol, atol=tol)
    np.testing.assert_allclose(grad[ok], tgrad[ok], rtol=tol * 10, atol=tol * 10)
    assert np.isnan(v[~ok]).all() and np.isnan(grad[~ok]).all()
    if name == "inv_ex":  # PyTorch's gradient of a failed inverse is NaN too (of a failed
        assert np.isnan(tgrad[~ok]).all()  # factor: numbers from LAPACK's partial factor)


def test_double_backward_of_the_invertible_matrices():
    data, g, v = _batch(), RNG.standard_normal((4, 4, 4)), RNG.standard_normal((4, 4, 4))
    seconds = []
    for L in (symgrad, torch_real):
        a = L.tensor(data, requires_grad=True)
        (first,) = L.autograd.grad((L.linalg.inv_ex(a).inverse * L.tensor(g)).sum(), a,
                                   create_graph=True)
        (second,) = L.autograd.grad((first * L.tensor(v)).sum(), a)
        seconds.append(second.numpy())
    np.testing.assert_allclose(seconds[0][0], seconds[1][0], rtol=1e-10)
    assert np.isnan(seconds[0][1:]).all()


def test_unbatched_and_all_good():
    a = RNG.standard_normal((3, 3))
    for L in (symgrad, torch_real):
        r = L.linalg.inv_ex(L.tensor(a))
        assert r.info.shape == () and int(r.info) == 0
    s = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert [int(L.linalg.inv_ex(L.tensor(s)).info) for L in (symgrad, torch_real)] == [2, 2]
    assert [int(L.linalg.cholesky_ex(L.tensor(s)).info) for L in (symgrad, torch_real)] == [2, 2]


ERRORS = {
    "inv_ex": lambda L, a, b: L.linalg.inv_ex(a, check_errors=True),
    "inv": lambda L, a, b: L.linalg.inv(a),
    "inv(one)": lambda L, a, b: L.linalg.inv(a[1]),
    "cholesky_ex": lambda L, a, b: L.linalg.cholesky_ex(b, check_errors=True),
    "cholesky": lambda L, a, b: L.linalg.cholesky(b),
    "cholesky(one)": lambda L, a, b: L.linalg.cholesky(b[3]),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_equal_pytorchs(name):
    a, b = _batch(), _spd_batch()
    messages = []
    for L in (symgrad, torch_real):
        with pytest.raises(RuntimeError) as e:
            ERRORS[name](L, L.tensor(a), L.tensor(b))
        assert isinstance(e.value, L.linalg.LinAlgError)
        messages.append(str(e.value))
    assert messages[0] == messages[1]


def _lu_loss(L, a, g):
    P, lower, upper = L.linalg.lu(a)
    LU, _ = L.linalg.lu_factor(a)
    return (lower * L.tensor(g[0])).sum() + (upper * L.tensor(g[1])).sum() + (
        LU * L.tensor(g[2])).sum()


def test_lu_gradient_equals_finite_differences_and_pytorch():
    a, g = RNG.standard_normal((2, 4, 4)), RNG.standard_normal((3, 2, 4, 4))
    x = symgrad.tensor(a, requires_grad=True)
    (got,) = symgrad.autograd.grad(_lu_loss(symgrad, x, g), x)
    t = torch_real.tensor(a, requires_grad=True)
    (want,) = torch_real.autograd.grad(_lu_loss(torch_real, t, g), t)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)
    h, fd = 1e-6, np.empty_like(a)
    for index in np.ndindex(a.shape):  # (central differences: the pivots stay put)
        e = np.zeros_like(a)
        e[index] = h
        f = [float(_lu_loss(symgrad, symgrad.tensor(a + s * e), g)) for s in (1, -1)]
        fd[index] = (f[0] - f[1]) / (2 * h)
    np.testing.assert_allclose(got.numpy(), fd, rtol=1e-6, atol=1e-7)


def test_lu_refusals_and_errors():
    x = symgrad.tensor(RNG.standard_normal((3, 3)), requires_grad=True)
    with pytest.raises(NotImplementedError, match="create_graph"):  # (PyTorch has it)
        symgrad.autograd.grad(symgrad.linalg.lu(x).U.sum() + (x ** 3).sum(), x,
                              create_graph=True)
    with pytest.raises(NotImplementedError, match="non-square"):
        symgrad.linalg.lu(symgrad.ones(2, 3, requires_grad=True))
    messages = []
    for L in (symgrad, torch_real):
        for call in (lambda L: L.linalg.lu_factor(L.zeros(3, 3)),
                     lambda L: L.linalg.lu_factor_ex(L.zeros(2, 3, 3), check_errors=True)):
            with pytest.raises(RuntimeError) as e:
                call(L)
            messages.append(str(e.value))
        assert int(L.linalg.lu_factor_ex(L.tensor([[1.0, 2.0], [2.0, 4.0]])).info) == 2
    assert messages[:2] == messages[2:]

