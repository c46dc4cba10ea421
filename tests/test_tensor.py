"""Tensor operations, torch-style methods, printing and the compiled backward.

Every case of the primitive table (tests/cases.py) runs on Tensors and its gradient
is checked against SymPy; the torch-named methods against numpy and finite
differences; printing against PyTorch's rules (and PyTorch itself when installed).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import symgrad as torch
from symgrad.autograd import Variable
from symgrad.backend.numba import compile as kernels
from symgrad.core.errors import ShapeError
from symgrad.eager import backward as autograd

from cases import CASES, COMPLEX_CASES, Case
from oracle import assert_close, finite_differences, rng_for, sympy_gradient

pytestmark = pytest.mark.filterwarnings("error::symgrad.autograd.KernelFallbackWarning")


@functools.cache
def _problem(case: Case):
    args = case.args()
    out = np.asarray(case.fn(*args))
    ct = None if out.ndim == 0 else rng_for(case.name + "/ct").uniform(-1, 1, out.shape)
    return args, out, ct


#: cases that build a numpy array of traced values (np.array([x, 2 * x]), np.r_): symgrad
#: assembles those when tracing, but numpy would make a Tensor's values an array without
#: its graph, so Tensors that require grad refuse it, as PyTorch's do (torch.stack instead)
NUMPY_ARRAYS_OF_VALUES = {"array-of-scalars", "array-nested-fanout", "array-of-arrays-sum-dot",
                          "r_-c_"}


#: operators PyTorch gives no derivative (``x // y``, ``2.0 % x``): the value, then its error
NO_DERIVATIVE_IN_PYTORCH = {"floor_divide-operators", "remainder-mod-rmod"}

#: (by name: the table's budget gives the cases in CASES other backends than the originals)
COMPLEX_NAMES = {c.name for c in COMPLEX_CASES}


@pytest.mark.parametrize("case", CASES, ids=str)
def test_every_primitive_case_runs_on_tensors(case: Case):
    """Value as numpy computes it; gradients of sum(out * ct) as SymPy derives them."""
    args, want, ct = _problem(case)
    xs = [Variable(torch.tensor(a), requires_grad=True) for a in args]
    if case.name in NUMPY_ARRAYS_OF_VALUES:  # numpy assembles them: refused, as by PyTorch
        with pytest.raises(RuntimeError, match="requires grad"):
            case.fn(*xs)
        return
    if case.name in COMPLEX_NAMES:  # complex Tensors: the oracle's numbers, or a refusal
        try:  # naming the operation (symgrad.eager.complex_tensors)
            case.fn(*xs)
        except TypeError as e:
            assert "complex Tensors" in str(e) or "complex tensor" in str(e), str(e)
            return
    if "callback" in case.prims:  # sg.pure_callback: the Tensor API's is autograd.Function
        with pytest.raises(RuntimeError, match="symgrad.autograd.Function"):
            case.fn(*xs)
        return
    out = case.fn(*xs)
    assert isinstance(out, torch.Tensor)
    assert_close(out.detach().numpy(), want, what="value")
    if out.dtype != np.float64:
        assert not out.requires_grad and out.grad_fn is None
        return
    if case.name in NO_DERIVATIVE_IN_PYTORCH:
        with pytest.raises(RuntimeError, match=r"derivative for aten::\w+ is not implemented"):
            out.backward(None if ct is None else torch.tensor(ct))
        return
    out.backward(None if ct is None else torch.tensor(ct))
    if case.oracle == "fd":  # no SymPy form: central differences (truncation near 1e-9)
        grads = [finite_differences(case.fn, args, k, ct) for k in range(len(args))]
        tol = {"rtol": max(case.rtol, 1e-6), "atol": max(case.atol, 1e-7)}
    else:
        # (a case's own tolerance where it is wider: a float32 round trip's gradient is
        # rounded to float32 where the Tensor API keeps float32 values, as PyTorch does)
        grads = sympy_gradient(case.fn, args, ct)
        tol = {"rtol": max(case.rtol, 1e-10), "atol": max(case.atol, 1e-10)}
    for k, (x, g) in enumerate(zip(xs, grads)):
        got = np.zeros(x.shape) if x.grad is None else x.grad.numpy()  # unused: no grad
        assert_close(got, g, **tol, what=f"gradient of argument {k}")


def test_np_array_of_a_tensor_copies_and_np_asarray_shares_as_pytorchs():
    """np.array(t) holds the values as they were (numpy 2 passes copy=True and trusts
    __array__ to copy); np.asarray(t) and t.numpy() share t's memory; as PyTorch's."""
    real = pytest.importorskip("torch")
    seen = []
    for lib in (torch, real):
        t = lib.ones(3, dtype=lib.float64)
        copied, shared, typed = np.array(t), np.asarray(t), np.array(t, dtype=np.float32)
        t.zero_()
        seen.append((copied.tolist(), shared.tolist(), typed.tolist()))
    assert seen == [([1.0] * 3, [0.0] * 3, [1.0] * 3)] * 2


def test_numpy_positions_of_a_tensor_are_int64_and_gather_as_pytorchs():
    """np.argmax/argmin/argsort of a Tensor: int64 Tensors without a graph, as PyTorch's
    (numpy calls the Tensor's method there); indexing with them carries the gradient."""
    real = pytest.importorskip("torch")
    a = np.array([[1.0, 3.0, 2.0], [0.5, -1.0, 4.0]])
    w = np.array([1.0, 10.0, 100.0])
    for position in (np.argmax, np.argmin, np.argsort, lambda t: np.argsort(t, axis=0)):
        got, want = position(torch.tensor(a)), position(real.tensor(a))
        assert str(got.dtype) == str(want.dtype) == "torch.int64"
        assert not got.requires_grad and got.grad_fn is None
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    x, xt = torch.tensor(a[0], requires_grad=True), real.tensor(a[0], requires_grad=True)
    (x[np.argsort(x.detach())] * torch.tensor(w)).sum().backward()
    (xt[np.argsort(xt.detach())] * real.tensor(w)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())


R = np.random.default_rng(7)
A = R.uniform(0.5, 1.5, (2, 3))

METHODS = [  # (torch-style call on a Tensor, the same in numpy)
    (lambda x: x.pow(3), lambda a: a ** 3),
    (lambda x: torch.pow(x, 2), lambda a: a ** 2),
    (lambda x: x.exp(), np.exp), (lambda x: torch.exp(x), np.exp),
    (lambda x: x.log(), np.log), (lambda x: torch.log(x), np.log),
    (lambda x: x.sqrt(), np.sqrt), (lambda x: x.sin() + x.cos(), lambda a: np.sin(a) + np.cos(a)),
    (lambda x: torch.tanh(x), np.tanh), (lambda x: x.abs(), np.abs),
    (lambda x: x.sum(dim=1), lambda a: a.sum(axis=1)),
    (lambda x: x.sum(1, keepdim=True), lambda a: a.sum(axis=1, keepdims=True)),
    (lambda x: torch.sum(x, dim=0), lambda a: a.sum(axis=0)),
    (lambda x: x.mean(dim=(0, 1)), np.mean), (lambda x: torch.mean(x), np.mean),
    (lambda x: x.mean(0, keepdim=True), lambda a: a.mean(axis=0, keepdims=True)),
    (lambda x: x.prod(), np.prod), (lambda x: x.max(), np.max),
    (lambda x: x.amin(1), lambda a: a.min(1)),
    (lambda x: x.view(3, 2), lambda a: a.reshape(3, 2)),
    (lambda x: x.view(-1), lambda a: a.reshape(-1)),
    (lambda x: x.reshape((6, 1)), lambda a: a.reshape(6, 1)),
    (lambda x: x.t(), lambda a: a.T), (lambda x: x.T, lambda a: a.T),
    (lambda x: x.transpose(0, 1), lambda a: a.T), (lambda x: x.permute(1, 0), lambda a: a.T),
    (lambda x: x.unsqueeze(0), lambda a: a[None]), (lambda x: x.flatten(), np.ravel),
    (lambda x: x.view(1, 6).squeeze(), np.ravel),
    (lambda x: x.sum(0).expand(4, 3), lambda a: np.broadcast_to(a.sum(0), (4, 3))),
    (lambda x: x.add(1).mul(2).sub(x).div(3), lambda a: ((a + 1) * 2 - a) / 3),
    (lambda x: 2 ** x - 1 / x, lambda a: 2 ** a - 1 / a),
    (lambda x: torch.where(x > 1, x * x, -x), lambda a: np.where(a > 1, a * a, -a)),
    (lambda x: x.clone() * x.neg(), lambda a: -a * a),
    (lambda x: x * torch.ones(3), lambda a: a),
]


@pytest.mark.parametrize("k", range(len(METHODS)))
def test_torch_style_methods_match_numpy_and_finite_differences(k):
    method, numpy_fn = METHODS[k]
    x = Variable(torch.tensor(A), requires_grad=True)
    out = method(x)
    want = numpy_fn(A)
    assert_close(out.detach().numpy(), want, what="value")
    ct = np.random.default_rng(k).uniform(-1, 1, np.shape(want))
    out.backward(torch.tensor(ct))
    assert_close(x.grad.numpy(), finite_differences(numpy_fn, [A], 0, ct), rtol=1e-6, atol=1e-8)


def test_torch_functions_accept_arrays_and_traced_values_too():
    a = np.array([0.0, 1.0])
    assert np.array_equal(torch.exp(a), np.exp(a)) and torch.sum(a) == 1.0
    g = torch.grad(lambda v: torch.sum(torch.exp(v), dim=0))(a)
    assert_close(g, np.exp(a))


def test_shape_errors_name_the_operation():
    with pytest.raises(ShapeError):
        torch.ones(2, 3, requires_grad=True) + torch.ones(4)
    with pytest.raises(RuntimeError, match=r"\(view of a tensor of shape \[6\]\)"):
        torch.ones(6).view(4, 2)  # (PyTorch's RuntimeError: tests/test_torch_views.py)


def test_scalar_conversions_and_iteration():
    x = torch.Tensor([[1.0, 2.0]])
    assert float(x.sum()) == 3.0 and x.sum().item() == 3.0 and int(x.sum() - 1) == 2
    assert bool(torch.Tensor([1.0])) and x.size() == (1, 2) and x.size(1) == 2
    assert x.dim() == 2 and x.numel() == 2 and len(x) == 1
    with pytest.raises(RuntimeError, match="2 elements"):
        x.item()


# -- printing ----------------------------------------------------------------------------------

PRINTED = [
    (torch.ones(3, 3), "tensor([[1., 1., 1.],\n        [1., 1., 1.],\n        [1., 1., 1.]])"),
    (torch.Tensor([10, 20, 30, 40, 50]), "tensor([10., 20., 30., 40., 50.])"),
    (torch.Tensor([20, 40, 60, 80, 100]), "tensor([ 20.,  40.,  60.,  80., 100.])"),
    (torch.full((2, 2), 4.5), "tensor([[4.5000, 4.5000],\n        [4.5000, 4.5000]])"),
    (torch.tensor(99.5), "tensor(99.5000)"), (torch.tensor(9.0), "tensor(9.)"),
    (torch.Tensor([-1.5, 2.25]), "tensor([-1.5000,  2.2500])"),
    (torch.Tensor([1e-5, 1.0]), "tensor([1.0000e-05, 1.0000e+00])"),
    (torch.Tensor([1e10, 1.0]), "tensor([1.0000e+10, 1.0000e+00])"),
    (torch.Tensor([0.0, -0.0]), "tensor([0., -0.])"),
    (torch.Tensor([1.5, float("nan"), float("inf")]), "tensor([1.5000,    nan,    inf])"),
    (torch.Tensor([]), "tensor([])"),
    (torch.zeros(0, 2), "tensor([], size=(0, 2))"),
    (torch.arange(12.0).view(2, 2, 3),
     "tensor([[[ 0.,  1.,  2.],\n         [ 3.,  4.,  5.]],\n\n"
     "        [[ 6.,  7.,  8.],\n         [ 9., 10., 11.]]])"),
    (torch.arange(2000) / 4, "tensor([0.0000e+00, 2.5000e-01, 5.0000e-01,  ..., "
                             "4.9925e+02, 4.9950e+02,\n        4.9975e+02])"),
    (torch.arange(30.0), "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., "
                       "13.,\n        14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., "
                       "25., 26., 27.,\n        28., 29.])"),
]


@pytest.mark.parametrize("k", range(len(PRINTED)))
def test_printing_follows_pytorch(k):
    t, text = PRINTED[k]
    assert repr(t) == str(t) == text


def test_printing_suffixes():
    x = torch.ones(2, requires_grad=True)
    assert repr(x) == "tensor([1., 1.], requires_grad=True)"
    assert repr(x.sum()) == "tensor(2., grad_fn=<SumBackward0>)"
    assert repr(x.detach()) == "tensor([1., 1.])"
    wide = torch.ones(8, requires_grad=True) * 1.5  # a suffix that does not fit the line
    assert repr(wide) == ("tensor([1.5000, 1.5000, 1.5000, 1.5000, 1.5000, 1.5000, 1.5000, "
                          "1.5000],\n       grad_fn=<MulBackward0>)")
    wider = torch.ones(12, requires_grad=True) * 1.5
    assert repr(wider).endswith("\n        1.5000, 1.5000, 1.5000], grad_fn=<MulBackward0>)")


def test_printing_matches_pytorch_itself():
    real = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    arrays = [t.numpy() for t, _ in PRINTED] + [
        rng.standard_normal((4, 5)), rng.uniform(0, 1e-3, 7), rng.standard_normal(1200),
        rng.standard_normal((40, 40)), np.array([-3.0, 1e9]), np.array(-0.125),
        rng.integers(-1000, 1000, 25).astype(float), rng.standard_normal((2, 3, 4)) * 100]
    default = real.get_default_dtype()
    real.set_default_dtype(real.float64)  # float64 then prints no dtype, as in symgrad
    try:
        for a in arrays:
            assert repr(torch.tensor(a)) == repr(real.tensor(a))
            if a.ndim:  # the suffixes, wrapped where they do not fit
                tr = real.tensor(a, requires_grad=True)
                assert repr(torch.tensor(a, requires_grad=True)) == repr(tr)
                assert repr(torch.tensor(a, requires_grad=True) * 2) == repr(tr * 2)
    finally:
        real.set_default_dtype(default)


# -- execution ---------------------------------------------------------------------------------

@pytest.fixture(autouse=True)
def fresh_structure_cache(monkeypatch):
    """Each test starts with an empty structure cache and zero backward counts, so
    what it counts does not depend on which tests ran before it."""
    monkeypatch.setattr(autograd, "_CACHE", type(autograd._CACHE)())
    monkeypatch.setattr(autograd, "_STATS", dict.fromkeys(autograd._STATS, 0))


@pytest.mark.kernels
def test_a_changing_python_scalar_keeps_one_structure_that_compiles():
    """x * (0.5 + k): the scalar enters the kernel as an input, like tensor data."""
    x = Variable(torch.ones(3), requires_grad=True)
    for k in range(4):
        (x * (0.5 + k) - (1.25 + k)).sum().backward()
    assert_close(x.grad.numpy(), np.full(3, 0.5 + 1.5 + 2.5 + 3.5))
    stats = autograd.backward_stats()
    assert stats["structures"] == 1 and stats["interpreted"] == 1
    assert stats["compiled_runs"] == 3


@pytest.mark.kernels
def test_the_structure_cache_keeps_the_last_cache_limit_structures(monkeypatch):
    monkeypatch.setattr(autograd, "CACHE_LIMIT", 4)
    for n in range(1, 11):  # one structure per shape
        x = Variable(torch.ones(n), requires_grad=True)
        (x * 3.0).sum().backward()
        assert autograd.backward_stats()["structures"] == min(n, 4)
        assert x.grad.tolist() == [3.0] * n
    (Variable(torch.ones(10), requires_grad=True) * 3.0).sum().backward()  # still cached
    assert autograd.backward_stats()["structures"] == 4
    assert autograd.backward_stats()["compiled_runs"] == 1


@pytest.mark.kernels
def test_interpreted_and_compiled_backward_agree():
    rng = np.random.default_rng(11)
    xv, cv = rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, 4)
    grads = []
    for _ in range(3):  # interpreted, compiled, cached
        x = Variable(torch.tensor(xv), requires_grad=True)
        out = (np.sin(x * torch.tensor(cv)) / (1.0 + x * x)).sum(dim=1).mean()
        out.backward()
        grads.append(x.grad.numpy())
    want = sympy_gradient(lambda a, c: np.mean(np.sum(np.sin(a * c) / (1.0 + a * a), axis=1)),
                          [xv, cv])[0]
    for g in grads:
        assert_close(g, want, rtol=1e-12, atol=1e-12)


@pytest.mark.kernels
def test_the_lowered_graph_keeps_data_out_of_the_kernel():
    """Two runs with different data reuse one structure; no array is baked in."""
    stats0 = autograd.backward_stats()["structures"]
    for scale in (1.0, 3.0):
        x = Variable(torch.full((5,), scale), requires_grad=True)
        ((x * torch.full((5,), scale * 2)).exp() * 0.015625).sum().backward()
        assert_close(x.grad.numpy(), np.full(5, 2 * scale * np.exp(2 * scale**2) * 0.015625))
    assert autograd.backward_stats()["structures"] - stats0 == 1


def test_tensors_inside_a_traced_function_are_constants():
    c = torch.Tensor([1.0, 2.0])
    for fn in (lambda v: torch.sum(v * c), lambda v: torch.sum(c * v)):
        assert_close(torch.grad(fn)(np.array([3.0, 4.0])), [1.0, 2.0])


@pytest.mark.kernels
def test_a_kernel_that_fails_to_compile_falls_back_to_the_interpreter(monkeypatch):
    def broken(source):
        raise RuntimeError("no compiler today")
    monkeypatch.setattr(kernels, "load", broken)
    before = autograd.backward_stats()["interpreted"]
    with pytest.warns(autograd.KernelFallbackWarning, match="no compiler today") as caught:
        for _ in range(4):
            x = Variable(torch.Tensor([0.5, 2.0]), requires_grad=True)
            (torch.cosh(x) * 0.0078125).sum().backward()  # a structure no other test builds
            assert_close(x.grad.numpy(), np.sinh([0.5, 2.0]) * 0.0078125)
    assert len(caught) == 1  # said once, on the run that tried to compile
    assert autograd.backward_stats()["interpreted"] - before == 4
