"""The rules of Tensor/Variable autograd (issue 4, item 2), one test (or table) per rule.

Gradient values are checked against SymPy (tests/oracle.py) or finite differences,
never against symgrad's own ``grad`` API.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import symgrad as torch
from symgrad.autograd import Variable

from oracle import assert_close, finite_differences, sympy_gradient

pytestmark = pytest.mark.filterwarnings("error::symgrad.autograd.KernelFallbackWarning")


def seed_graph(x):
    y = x + 2
    z = y * y * 3
    return z.mean()


# -- 1. classes and factories ---------------------------------------------------------------

def test_variable_is_a_leaf_tensor_sharing_its_data():
    a = torch.ones(2, 2)
    x = Variable(a, requires_grad=True)
    assert isinstance(x, torch.Tensor) and x.is_leaf and x.requires_grad
    assert torch.Variable is Variable and not Variable(a).requires_grad
    a.data.fill_(3.0)
    assert x.tolist() == [[3.0, 3.0], [3.0, 3.0]]


@pytest.mark.parametrize("make, values, dtype", [
    (lambda: torch.Tensor([[1, 2], [3, 4]]), [[1.0, 2.0], [3.0, 4.0]], torch.float64),
    (lambda: torch.Tensor(2, 3), np.zeros((2, 3)), torch.float64),
    (lambda: torch.tensor([1.5, 2]), [1.5, 2.0], torch.float64),
    (lambda: torch.tensor([1, 2]), [1, 2], torch.int64),  # PyTorch's inference
    (lambda: torch.ones(2, 3), np.ones((2, 3)), torch.float64),
    (lambda: torch.ones((2, 3)), np.ones((2, 3)), torch.float64),
    (lambda: torch.zeros(4), np.zeros(4), torch.float64),
    (lambda: torch.arange(5), [0, 1, 2, 3, 4], torch.int64),
    (lambda: torch.arange(1, 2, 0.5), [1.0, 1.5], torch.float64),
    (lambda: torch.from_numpy(np.eye(2)), np.eye(2), torch.float64),
    (lambda: torch.full((2,), 7), [7, 7], torch.int64),
    (lambda: torch.full((2,), 7.0), [7.0, 7.0], torch.float64),
])
def test_factories(make, values, dtype):
    t = make()
    assert t.dtype == dtype and t.is_leaf and not t.requires_grad
    assert t.numpy().dtype == dtype.numpy
    np.testing.assert_array_equal(t.numpy(), values)


def test_random_factories_have_the_shape_and_range_asked_for():
    torch.manual_seed(0)
    a = torch.randn(2, 3).numpy()
    torch.manual_seed(0)
    assert np.array_equal(torch.randn(2, 3).numpy(), a) and a.shape == (2, 3)
    u = torch.rand(1000).numpy()
    assert u.min() >= 0 and u.max() < 1 and 0.4 < u.mean() < 0.6
    assert torch.randn(3, requires_grad=True).requires_grad


def test_from_numpy_shares_memory_and_numpy_refuses_tensors_that_require_grad():
    a = np.zeros(3)
    t = torch.from_numpy(a)
    a[0] = 5.0
    assert t.numpy()[0] == 5.0
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"detach\(\)\.numpy\(\)"):
        x.numpy()
    assert np.array_equal(x.detach().numpy(), [1.0, 1.0])


# -- 2. attributes --------------------------------------------------------------------------

def test_data_is_a_tensor_without_history_sharing_the_values():
    x = Variable(torch.ones(3), requires_grad=True)
    y = x * 2
    d = y.data
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf
    d.zero_()
    assert y.tolist() == [0.0, 0.0, 0.0]
    x.data = torch.Tensor([1, 2, 3])
    assert x.tolist() == [1.0, 2.0, 3.0] and x.requires_grad


def test_grad_is_none_until_a_backward_reaches_the_leaf():
    x = Variable(torch.ones(2), requires_grad=True)
    w = Variable(torch.ones(2), requires_grad=True)
    out = (x * 3).sum()
    assert x.grad is None
    out.backward()
    assert w.grad is None and isinstance(x.grad, torch.Tensor)
    assert x.grad.tolist() == [3.0, 3.0] and not x.grad.requires_grad


def test_grad_data_zero_clears_the_gradient_in_place():
    x = Variable(torch.ones(2), requires_grad=True)
    (x * x).sum().backward()
    x.grad.data.zero_()
    assert x.grad.tolist() == [0.0, 0.0]
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


@pytest.mark.parametrize("fn, name", [
    (lambda x: x + 2, "AddBackward0"), (lambda x: 2 + x, "AddBackward0"),
    (lambda x: x * x, "MulBackward0"), (lambda x: x - 1, "SubBackward0"),
    (lambda x: x / 3, "DivBackward0"), (lambda x: x ** 2, "PowBackward0"),
    (lambda x: x.pow(3), "PowBackward0"), (lambda x: -x, "NegBackward0"),
    (lambda x: x.mean(), "MeanBackward0"), (lambda x: x.sum(), "SumBackward0"),
    (lambda x: x.exp(), "ExpBackward0"), (lambda x: torch.exp(x), "ExpBackward0"),
    (lambda x: np.log(x), "LogBackward0"), (lambda x: x.sin(), "SinBackward0"),
    (lambda x: x.tanh(), "TanhBackward0"), (lambda x: x.view(4), "ViewBackward0"),
    (lambda x: x.t(), "TBackward0"), (lambda x: x.abs(), "AbsBackward0"),
    # names torch 2.13 gives the methods below
    (lambda x: x.sum(0), "SumBackward1"), (lambda x: x.mean(1), "MeanBackward1"),
    (lambda x: x.sum(1, keepdim=True), "SumBackward1"), (lambda x: x.prod(0), "ProdBackward1"),
    (lambda x: x.transpose(0, 1), "TransposeBackward0"),
    (lambda x: x.permute(1, 0), "PermuteBackward0"),
    (lambda x: x.unsqueeze(0), "UnsqueezeBackward0"),
    (lambda x: x.unsqueeze(0).squeeze(), "SqueezeBackward0"),
    (lambda x: x.unsqueeze(0).squeeze(0), "SqueezeBackward1"),
    (lambda x: x[0], "SelectBackward0"), (lambda x: x[0:1], "SliceBackward0"),
    (lambda x: x.amax(1), "AmaxBackward0"), (lambda x: x.amin(), "AminBackward0"),
    (lambda x: 2 - x, "RsubBackward1"), (lambda x: 2 ** x, "PowBackward2"),
    (lambda x: x.clone(), "CloneBackward0"),
])
def test_grad_fn_names_and_repr(fn, name):
    x = Variable(torch.ones(2, 2), requires_grad=True)
    y = fn(x)
    assert type(y.grad_fn).__name__ == name and y.grad_fn.name() == name
    assert re.fullmatch(rf"<{name} object at 0x[0-9a-f]+>", repr(y.grad_fn))
    assert re.search(rf"grad_fn=<{name}>\)$", repr(y))
    assert x.grad_fn is None


# next_functions as torch 2.13 gives them: scalar operands of pow/rsub/clone hidden,
# the tensor first in 2 + x and 2 * x, a None for the scalar in x - 2
@pytest.mark.parametrize("fn, want", [
    (lambda x: x ** 2, ["AccumulateGrad"]), (lambda x: 2 - x, ["AccumulateGrad"]),
    (lambda x: 2 ** x, ["AccumulateGrad"]), (lambda x: x.clone(), ["AccumulateGrad"]),
    (lambda x: 2 + x, ["AccumulateGrad", None]), (lambda x: 2 * x, ["AccumulateGrad", None]),
    (lambda x: x - 2, ["AccumulateGrad", None]),
])
def test_next_functions_of_ops_with_a_python_scalar(fn, want):
    x = Variable(torch.ones(2), requires_grad=True)
    got = [None if f is None else f.name() for f, _ in fn(x).grad_fn.next_functions]
    assert got == want


def test_next_functions_lead_to_accumulate_grad_for_leaves():
    x = Variable(torch.ones(2), requires_grad=True)
    c = torch.ones(2)
    y = x * c + 2
    (mul, _), (none, _) = y.grad_fn.next_functions
    assert type(mul).__name__ == "MulBackward0" and none is None
    (acc, k), (nothing, _) = mul.next_functions
    assert type(acc).__name__ == "AccumulateGrad" and acc.variable is x and k == 0
    assert nothing is None  # c needs no gradient
    assert mul.next_functions[0][0] is (x * 1).grad_fn.next_functions[0][0]  # one per leaf
    assert re.fullmatch(r"<AccumulateGrad object at 0x[0-9a-f]+>", repr(acc))


# -- requires_grad ---------------------------------------------------------------------------

@pytest.mark.parametrize("flags", [(False, False), (True, False), (False, True), (True, True)])
def test_a_result_requires_grad_iff_an_input_does(flags):
    a, b = (Variable(torch.randn(3), requires_grad=f) for f in flags)
    for r in (a + b, a * b, torch.exp(a) - b, a @ b, a / (b * b + 1)):
        assert r.requires_grad == any(flags)
        assert (r.grad_fn is not None) == any(flags) and r.is_leaf != any(flags)


def test_requires_grad_can_be_set_on_leaves_only():
    x = torch.ones(2)
    x.requires_grad = True
    y = x + 1
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf"):
        y.requires_grad = False
    with pytest.raises(RuntimeError, match="leaf"):
        y.requires_grad_(False)
    assert y.requires_grad_() is y and y.requires_grad  # True on a result: allowed, as torch
    assert x.requires_grad_(False) is x and not x.requires_grad
    assert (x + 1).grad_fn is None


def test_comparisons_give_bool_tensors_without_grad():
    x = Variable(torch.Tensor([1, -2, 3]), requires_grad=True)
    m = x > 0
    assert m.dtype == np.bool_ and not m.requires_grad and m.grad_fn is None
    assert repr(m) == "tensor([ True, False,  True])"
    with pytest.raises(RuntimeError, match="floating point"):
        m.requires_grad = True


def test_detach_requires_grad_and_no_grad():
    x = Variable(torch.ones(2), requires_grad=True)
    d = x.detach()
    assert not d.requires_grad and d.is_leaf and (d * x).requires_grad
    with torch.no_grad():
        y = x * 2
        assert not torch.is_grad_enabled()
        with torch.enable_grad():
            assert (x * 2).requires_grad
    assert torch.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf

    @torch.no_grad()
    def step(t):
        return t * 3
    assert not step(x).requires_grad


def test_in_place_updates_of_leaves_need_no_grad():
    x = Variable(torch.ones(2), requires_grad=True)
    with pytest.raises(RuntimeError, match="in-place"):
        x -= 1
    with torch.no_grad():
        x -= 0.5
    assert x.is_leaf and x.requires_grad and x.tolist() == [0.5, 0.5]
    x.data.sub_(torch.Tensor([0.5, 0.0]))
    assert x.tolist() == [0.0, 0.5]


# expected gradients: torch 2.13, and d/dx of the written-out function
@pytest.mark.parametrize("change, want", [
    (lambda y, x: y.mul_(3), [6.0, 6.0, 6.0]),
    (lambda y, x: y.zero_(), [0.0, 0.0, 0.0]),
    (lambda y, x: y.fill_(7.0), [0.0, 0.0, 0.0]),
    (lambda y, x: y.add_(x, alpha=4.0), [6.0, 6.0, 6.0]),
    (lambda y, x: y.sub_(x * x), [0.0, 0.0, 0.0]),  # 2x - x^2 at x = 1
    (lambda y, x: y.div_(4.0), [0.5, 0.5, 0.5]),
    (lambda y, x: y.copy_(x * 5), [5.0, 5.0, 5.0]),
    (lambda y, x: y.__imul__(x), [4.0, 4.0, 4.0]),  # y *= x: 2x^2
])
def test_in_place_operations_on_results_are_recorded(change, want):
    x = Variable(torch.ones(3), requires_grad=True)
    y = x * 2
    assert change(y, x) is y
    y.sum().backward()
    assert x.grad.tolist() == want


@pytest.mark.parametrize("change, name", [  # the names torch 2.13 gives
    (lambda y: y.zero_(), "ZeroBackward0"), (lambda y: y.fill_(7.0), "FillBackward2"),
    (lambda y: y.copy_(y * 5), "CopyBackwards"), (lambda y: y.mul_(3), "MulBackward0"),
    (lambda y: y.add_(1.0), "AddBackward0"), (lambda y: y.div_(4.0), "DivBackward0"),
])
def test_in_place_operations_name_the_new_node(change, name):
    y = Variable(torch.ones(3), requires_grad=True) * 2
    assert change(y).grad_fn.name() == name


def test_in_place_copy_into_a_tensor_without_grad_makes_it_require_grad():
    x = Variable(torch.Tensor([1.0, 2.0]), requires_grad=True)
    c = torch.zeros(2)
    c.copy_(x * x)
    assert c.requires_grad and not c.is_leaf and c.tolist() == [1.0, 4.0]
    c.sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_in_place_operations_on_leaves_that_require_grad_raise():
    x = Variable(torch.ones(3), requires_grad=True)
    for change in (lambda: x.mul_(2), lambda: x.zero_(), lambda: x.add_(1.0),
                   lambda: x.copy_(torch.zeros(3))):
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being "
                                               "used in an in-place operation"):
            change()
    assert x.tolist() == [1.0, 1.0, 1.0]


def test_data_changed_in_place_after_use_raises_at_backward():
    x = Variable(torch.ones(3), requires_grad=True)
    c = torch.tensor([1.0, 2.0, 3.0])
    y = x * c
    c.mul_(10)
    with pytest.raises(RuntimeError, match="modified by an inplace operation(.|\n)*Hint"):
        y.sum().backward()


def test_a_leaf_changed_under_no_grad_before_backward_raises():
    x = Variable(torch.ones(3), requires_grad=True)
    y = x * x
    with torch.no_grad():
        x -= 1
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0"):
        y.sum().backward()


def test_changes_through_data_are_not_counted_as_in_torch():
    x = Variable(torch.ones(3), requires_grad=True)
    y = (x * 3).sum()
    x.data -= 1  # torch does not track .data writes; the gradient is still 3
    y.backward()
    assert x.grad.tolist() == [3.0, 3.0, 3.0]
    with torch.no_grad():
        x -= 0.1 * x.grad  # after backward: the usual step
    (x * 3).sum().backward()


def test_set_grad_enabled_works_as_a_function_and_as_a_context_manager():
    try:
        torch.set_grad_enabled(False)
        assert not torch.is_grad_enabled()
        assert not (Variable(torch.ones(1), requires_grad=True) * 2).requires_grad
    finally:
        torch.set_grad_enabled(True)
    assert torch.is_grad_enabled()
    with torch.set_grad_enabled(False):
        assert not torch.is_grad_enabled()
    assert torch.is_grad_enabled()


def test_no_grad_as_a_bare_decorator_and_one_instance_nested():
    @torch.no_grad
    def f():
        return torch.is_grad_enabled()
    assert f() is False and torch.is_grad_enabled()
    ctx = torch.no_grad()
    with ctx:
        with ctx:
            pass
        assert not torch.is_grad_enabled()
    assert torch.is_grad_enabled()


def test_assigning_a_grad_of_another_size_raises():
    x = Variable(torch.ones(3), requires_grad=True)
    with pytest.raises(RuntimeError, match="assigned grad has data of a different size"):
        x.grad = torch.zeros(2)
    x.grad = torch.ones(3)
    assert x.grad.tolist() == [1.0, 1.0, 1.0]


# -- backward ---------------------------------------------------------------------------------

def test_scalar_outputs_need_no_gradient():
    x = Variable(torch.Tensor([[1., 2.], [3., 4.]]), requires_grad=True)
    seed_graph(x).backward()
    assert_close(x.grad.numpy(), sympy_gradient(seed_graph, [x.detach().numpy()])[0])


def test_a_non_scalar_output_without_gradient_raises():
    x = Variable(torch.ones(5), requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar "
                                           "outputs"):
        (x * x).backward()
    assert x.grad is None


def test_a_one_element_output_needs_no_gradient_and_a_scalar_takes_tensor_of_one():
    x = Variable(torch.Tensor([3.0]), requires_grad=True)
    (x * x).backward()  # shape (1,): PyTorch allows it too
    assert x.grad.tolist() == [6.0]
    s = Variable(torch.Tensor([[1., 2.]]), requires_grad=True)
    (s * s).sum().backward(torch.Tensor([1.0]))  # the tutorial's torch.Tensor([1.0])
    assert s.grad.tolist() == [[2.0, 4.0]]


@pytest.mark.parametrize("shape", [(4,), (5, 1), (1, 5), (2, 5), ()])
def test_a_gradient_of_the_wrong_shape_raises(shape):
    x = Variable(torch.ones(5), requires_grad=True)
    with pytest.raises(RuntimeError, match=r"gradient has shape .* but the output has shape "
                                           r"\(5,\)"):
        (x * x).backward(torch.ones(*shape))
    assert x.grad is None


@pytest.mark.parametrize("fn, uses_w", [
    (lambda x, w: x * x, False),
    (lambda x, w: np.exp(x) * w + np.sin(x * w), True),
    (lambda x, w: (x - w) ** 2 / (1 + w * w), True),
    (lambda x, w: np.tanh(x).reshape(3, 2).T * 2, False),
    (lambda x, w: np.tanh(x).reshape(3, 2) * w.reshape(3, 2).sum(0), True),
], ids=["square", "exp_sin", "ratio", "reshape_T", "broadcast_sum"])
def test_backward_with_gradient_is_the_gradient_of_the_weighted_sum(fn, uses_w):
    rng = np.random.default_rng(4)
    xv, wv = rng.uniform(-1, 1, 6), rng.uniform(-1, 1, 6)
    x, w = Variable(torch.tensor(xv), requires_grad=True), Variable(torch.tensor(wv),
                                                                     requires_grad=True)
    out = fn(x, w)
    ct = rng.uniform(-1, 1, out.shape)
    out.backward(torch.tensor(ct))
    want = sympy_gradient(fn, [xv, wv], ct)
    assert_close(x.grad.numpy(), want[0], what="x")
    if uses_w:
        assert_close(w.grad.numpy(), want[1], what="w")
    else:  # a leaf the output does not depend on gets no gradient, as in PyTorch
        assert w.grad is None and not np.any(want[1])


def test_gradients_accumulate_across_backward_calls():
    x = Variable(torch.Tensor([1., 2., 3.]), requires_grad=True)
    w = torch.Tensor([5., 5., 5.])
    y = x * x
    y.backward(w, retain_graph=True)
    first = x.grad
    y.backward(w, retain_graph=True)
    assert x.grad is first and x.grad.tolist() == [20.0, 40.0, 60.0]
    (x.sum() * 2).backward()  # a different graph accumulates too
    assert x.grad.tolist() == [22.0, 42.0, 62.0]


def test_a_second_backward_through_a_freed_graph_raises():
    x = Variable(torch.ones(3), requires_grad=True)
    y = x * x
    out = y.sum()
    out.backward()
    with pytest.raises(RuntimeError, match=r"retain_graph=True"):
        out.backward()
    with pytest.raises(RuntimeError, match=r"retain_graph=True"):
        (y * 2).sum().backward()  # shares the freed y
    assert x.grad.tolist() == [2.0, 2.0, 2.0]  # unchanged by the failed calls


def test_retain_graph_keeps_the_graph():
    x = Variable(torch.ones(3), requires_grad=True)
    out = (x * x).sum()
    for _ in range(3):
        out.backward(retain_graph=True)
    out.backward()
    assert x.grad.tolist() == [8.0, 8.0, 8.0]


def test_grad_of_a_non_leaf_is_none_with_a_warning():
    x = Variable(torch.ones(2), requires_grad=True)
    y = x * 2
    y.sum().backward()
    with pytest.warns(UserWarning, match=r"not a leaf Tensor.*retain_grad\(\)"):
        assert y.grad is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.grad is not None  # leaves: no warning


def test_retain_grad_keeps_the_gradient_of_a_non_leaf():
    xv = np.array([0.5, -1.0, 2.0])
    x = Variable(torch.tensor(xv), requires_grad=True)
    y = x + 2
    z = y * y * 3
    y.retain_grad()
    z.retain_grad()
    assert y.retains_grad and not x.retains_grad
    out = z.mean()
    out.backward()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_close(y.grad.numpy(), 2 * (xv + 2))  # d mean(3 y^2)/dy = 6 y / 3
        assert_close(z.grad.numpy(), np.full(3, 1 / 3))
    assert_close(x.grad.numpy(), finite_differences(lambda v: np.mean(3 * (v + 2) ** 2),
                                                    [xv], 0), rtol=1e-7, atol=1e-9)


def test_backward_of_a_tensor_that_needs_no_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        (torch.ones(2) * 2).sum().backward()


def test_backward_on_a_leaf_accumulates_the_gradient_itself():
    x = Variable(torch.Tensor([2.0]), requires_grad=True)
    x.backward()
    x.backward(torch.Tensor([3.0]))
    assert x.grad.tolist() == [4.0]


def test_data_that_needs_no_grad_enters_as_input_not_constant():
    """Leaves and non-differentiated tensors are kernel inputs: changing their values
    between steps changes the gradient while the structure (and kernel) stays."""
    x = Variable(torch.ones(3), requires_grad=True)
    for scale in (1.0, 2.0, 5.0):
        c = torch.full((3,), scale)
        x.grad = None
        (x * c * x).sum().backward()
        assert x.grad.tolist() == [2 * scale] * 3


def test_z_backward_gradient_is_backward_of_the_sum_of_z_times_gradient():
    """Tutorial 1's update: z.backward(gradient) computes L = torch.sum(z * gradient)
    and backpropagates L; on its graph x.grad = 6 (x + 2) * gradient."""
    gradients = torch.Tensor([[1., 0.5, 2.], [0., 1., 3.]])
    grads = []
    for via_sum in (False, True):
        x = Variable(torch.Tensor([[1., 2., 3.], [4., 5., 6.]]), requires_grad=True)
        y = x + 2
        z = y * y * 3
        if via_sum:
            torch.sum(z * Variable(gradients)).backward()
        else:
            z.backward(gradient=gradients)
        grads.append(x.grad.numpy())
    want = 6 * (np.array([[1., 2., 3.], [4., 5., 6.]]) + 2) * gradients.numpy()
    assert_close(grads[0], want)
    assert_close(grads[1], want)


@pytest.mark.kernels
def test_a_float32_sum_of_a_matrix_product_compiles_its_backward(monkeypatch):
    """The sum's cotangent broadcast to a float32 matrix is float32 in the kernel (it was
    np.full of a float64 number: np.dot(float64, float32) failed to compile, and the
    backward ran on the interpreter with a KernelFallbackWarning, an error here); the
    gradients are the closed form's, sum over the rows of x and ones."""
    monkeypatch.setattr(torch.config, "tiered", False)  # (the compile here, not in a worker)
    x = np.arange(8.0, dtype=np.float32).reshape(2, 4) / 8
    m = torch.nn.Linear(4, 3).float()
    for _ in range(3):  # (the backward compiles at its second run)
        m.zero_grad()
        m(torch.tensor(x)).sum().backward()
        assert m.weight.grad.dtype == m.bias.grad.dtype == torch.float32
        np.testing.assert_allclose(m.weight.grad.numpy(), np.broadcast_to(x.sum(0), (3, 4)),
                                   rtol=1e-6)
        np.testing.assert_allclose(m.bias.grad.numpy(), np.full(3, 2.0), rtol=1e-6)


@pytest.mark.kernels
def test_a_float16_mean_compiles_its_backward(monkeypatch):
    """float16 ``mean`` (summed in float32: a callback rounds to float16) compiles its
    backward: the callback's 0-d cotangent reaches the kernel as a 0-d array, which Numba's
    ``np.float32(x)`` refused (a KernelFallbackWarning, an error here). The gradient is the
    closed form's, 1/n rounded to float16."""
    monkeypatch.setattr(torch.config, "tiered", False)  # (the compile here, not in a worker)
    x = torch.tensor(np.ones((3, 4)), dtype=torch.float16, requires_grad=True)
    for _ in range(3):  # (the backward compiles at its second run)
        x.grad = None
        x.mean().backward()
        assert x.grad.dtype == torch.float16
        np.testing.assert_array_equal(x.grad.numpy(), np.full((3, 4), 1 / 12, np.float16))
