"""A cast's backward rounds the gradient as PyTorch's ``ToCopyBackward0`` does: the
gradient flowing from a float32, float16 or bfloat16 tensor into its float64 source (or
from a float64 one into its narrower source) is rounded to the narrower dtype (float16
and bfloat16 through float32, as PyTorch's casts), also inside symgrad's float64
backward (symgrad.eager.cast_rounding). Compared bit for bit with real PyTorch 2.13,
interpreted and compiled, and with create_graph."""

from __future__ import annotations

import numpy as np
import pytest

torch_real = pytest.importorskip("torch")

import symgrad  # noqa: E402
from symgrad.core.config import config  # noqa: E402
from symgrad.eager.backward import COMPILE_AT_RUN, backward_stats  # noqa: E402

_X = [0.123456789123, -3.3333333333331, 1e-3 + 1e-12]
_W = [0.987654321987, 1.1111111111113, 7.7777777777779]
_CASES = {
    "to": lambda t, x, w: x.to(t.float32).to(t.float64) * w,
    "float-double": lambda t, x, w: x.float().double() * w,
    "value-read": lambda t, x, w: x.float().double() ** 2 * w,
    "float32-ops": lambda t, x, w: (x.float() * 3.0).double() * w,
    "chained": lambda t, x, w: ((x.float().double() * w).float() * 1.5).double() * w,
    "type": lambda t, x, w: x.type(t.float32).type(t.float64) * w,
    "type-as": lambda t, x, w: x.type_as(t.ones(1, dtype=t.float32)).type_as(w) * w,
    "half": lambda t, x, w: x.half().double() * w,
    "half-ops": lambda t, x, w: (x.half() * 3.0).double() * w + (x.half() ** 2).double() * w,
    "float-half-float": lambda t, x, w: x.float().half().float().double() * w,
    "half-to-float32": lambda t, x, w: (x.half().float() * w.float()).double(),
    "bfloat16": lambda t, x, w: x.bfloat16().double() * w + x.bfloat16().float().double(),
    "bfloat16-half": lambda t, x, w: x.bfloat16().half().double() * w,
    "half-used-twice": lambda t, x, w: x.half().double() * w + x.half().double() * 1e-4,
    "overflow-underflow": lambda t, x, w: x.half().double() * (w * 1e5)
    + x.half().double() * 1e-9,
}


def _grad(t, f):
    x = t.tensor(_X, dtype=t.float64, requires_grad=True)
    f(t, x, t.tensor(_W, dtype=t.float64)).sum().backward()
    return x.grad.numpy()


@pytest.mark.parametrize("name", list(_CASES))
def test_cast_gradient_is_rounded_as_torch(name):
    got, want = _grad(symgrad, _CASES[name]), _grad(torch_real, _CASES[name])
    np.testing.assert_array_equal(got.view(np.int64), want.view(np.int64))


@pytest.mark.kernels
def test_cast_gradients_are_rounded_in_compiled_kernels():
    """The same in a compiled kernel (the structure's second backward compiles it): the
    float16 and bfloat16 roundings run between kernels."""
    def loss(t, x, w):
        return _CASES["float-double"](t, x, w) + _CASES["half"](t, x, w)
    want = _grad(torch_real, loss)
    before = config.eager_compile
    config.update("eager_compile", True)
    try:
        runs = backward_stats()["compiled_runs"]
        got = [_grad(symgrad, loss) for _ in range(COMPILE_AT_RUN)]
        assert backward_stats()["compiled_runs"] == runs + 1
    finally:
        config.update("eager_compile", before)
    for g in got:
        np.testing.assert_array_equal(g.view(np.int64), want.view(np.int64))


def _narrow_leaves(t):
    """float16 and bfloat16 leaves: their gradients rounded (and accumulated) as
    PyTorch's, in their own dtypes."""
    grads = []
    for kind in (t.float16, t.bfloat16):
        x = t.tensor(_X, dtype=kind, requires_grad=True)
        (x.double() * t.tensor(_W, dtype=t.float64)).sum().backward()
        (x.float() ** 2 * t.tensor(_W, dtype=t.float32)).sum().backward()
        grads.append((str(x.grad.dtype), x.grad.float().numpy()))
    return grads


def test_float16_and_bfloat16_leaves_get_rounded_gradients():
    for (kind, got), (want_kind, want) in zip(_narrow_leaves(symgrad),
                                              _narrow_leaves(torch_real)):
        assert kind == want_kind
        np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))


def test_gradients_through_bfloat16_arithmetic_are_still_refused():
    """Casts alone are rounded as PyTorch's; a bfloat16 operation's backward (PyTorch's
    rounds each node's gradient) is still refused."""
    x = symgrad.tensor(_X, requires_grad=True)
    with pytest.raises(NotImplementedError, match="bfloat16"):
        (x.bfloat16() * 3.0).double().sum().backward()


def test_a_dtype_the_ir_lacks_is_an_error_not_a_zero_gradient():
    """A float16 value in a graph (the IR has no float16) was taken for an integer by
    the adjoint: the gradient through it was zeros, silently."""
    from symgrad.core.ir import Aval, Eqn, Graph, IRError, Var, freeze_params
    from symgrad.passes.adjoint import adjoint
    from symgrad.prims.convert import convert_p
    x, half, y = Var(Aval((2,))), Var(Aval((2,), "float16")), Var(Aval((2,)))
    graph = Graph((x,), (Eqn(convert_p, (x,), half, freeze_params({"dtype": "float16"})),
                         Eqn(convert_p, (half,), y, freeze_params({"dtype": "float64"}))),
                  (y,), (), "f")
    with pytest.raises(IRError, match="float16"):
        adjoint(graph, [0], True)


def _second(t):
    x = t.tensor(_X, dtype=t.float64, requires_grad=True)
    y = (x.float().double() ** 3 * t.tensor(_W, dtype=t.float64)).sum() \
        + (x.half().double() ** 3 * t.tensor(_W, dtype=t.float64)).sum() \
        + (x.bfloat16().float() ** 2).double().sum()
    g, = t.autograd.grad(y, x, create_graph=True)
    g.sum().backward()
    return np.stack([g.detach().numpy(), x.grad.numpy()])


def test_cast_gradient_is_rounded_in_double_backward():
    """With create_graph=True the gradient's graph casts as PyTorch's does."""
    got, want = _second(symgrad), _second(torch_real)
    np.testing.assert_array_equal(got.view(np.int64), want.view(np.int64))


def _hooked(t):
    """A hook and retain_grad on a float16 cast (the backward cut there), autograd.grad."""
    seen = []
    x = t.tensor(_X, dtype=t.float64, requires_grad=True)
    h = x.half()
    h.retain_grad()
    h.register_hook(lambda g: seen.append((str(g.dtype), g.double().numpy())) or g * 3)
    (h.double() * t.tensor(_W) + h.float().double() * 0.1).sum().backward()
    g, = t.autograd.grad((x.half().double() * t.tensor(_W)).sum(), x)
    return seen[0][0], np.stack([seen[0][1], h.grad.double().numpy(), x.grad.numpy(),
                                 g.numpy()])


def test_float16_cast_gradients_with_hooks_and_autograd_grad():
    (kind, got), (want_kind, want) = _hooked(symgrad), _hooked(torch_real)
    assert kind == want_kind == "torch.float16"
    np.testing.assert_array_equal(got.view(np.int64), want.view(np.int64))


def _inplace_mixed(t, op):
    """A float32 tensor changed in place by a float64 one that requires grad, then used
    non-linearly: later operations read the float32 values written."""
    rng = np.random.default_rng(3)
    x = t.tensor(np.abs(rng.standard_normal(6)).astype(np.float32) + 0.1)
    w = t.tensor(rng.standard_normal(6), requires_grad=True)
    c = t.tensor(rng.standard_normal(6).astype(np.float32))
    h = x * 1
    if op == "addcmul_":
        h.addcmul_(w, t.tensor(_W * 2, dtype=t.float64), value=0.3)
    else:
        getattr(h, op)(w)
    ((h * c) ** 2).sum().backward()
    return h.detach().numpy(), w.grad.numpy(), h.grad_fn.name(), h.grad_fn.next_functions


@pytest.mark.parametrize("op", ["div_", "addcmul_"])
def test_an_inplace_change_by_a_wider_dtype_is_read_as_written(op):
    # the float64 result was the node's value (later operations read it unrounded: 5e-8
    # off PyTorch's gradient); it is now cast to float32 as one node with the op's name
    ours, theirs = _inplace_mixed(symgrad, op), _inplace_mixed(torch_real, op)
    assert ours[0].dtype == np.float32 and np.array_equal(ours[0], theirs[0])
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-14, atol=0)
    assert ours[2] == theirs[2] and len(ours[3]) == len(theirs[3])


@pytest.mark.parametrize("method", ["pow_", "clamp_", "masked_fill_"])
def test_an_inplace_method_records_a_tensor_argument_that_requires_grad(method):
    # x.pow_(w) with only w requiring grad was not recorded: w.grad missed its term
    def run(t):
        x = t.tensor([1.5, 2.0, 0.5], dtype=t.float64)
        w = t.tensor([0.5, 1.5, 2.5], dtype=t.float64, requires_grad=True)
        h = x * 1
        if method == "pow_":
            h.pow_(w)
        elif method == "clamp_":
            h.clamp_(min=w)
        else:
            h.masked_fill_(t.tensor([True, False, True]), w[1])
        (h.sum() + w.sum()).backward()
        return (h.detach().numpy(), w.grad.numpy(), h.grad_fn.name(),
                [f[0] is not None for f in h.grad_fn.next_functions])

    ours, theirs = run(symgrad), run(torch_real)
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-15)
    assert ours[2:] == theirs[2:]


def test_copysign_by_a_tensor_requiring_grad_records_a_zero_gradient_for_it():
    # x.copysign(w) with w requiring grad: PyTorch records the node and gives w a zero
    # gradient (an optimizer steps it: None would skip it); symgrad left it unrecorded
    def run(t):
        w = t.tensor([0.5, -1.5, 2.5], dtype=t.float64, requires_grad=True)
        h = t.tensor([1.5, 2.0, 0.5], dtype=t.float64) * 1
        h.copysign_(w)
        values, recorded = h.detach().numpy().copy(), (h.requires_grad, h.grad_fn.name())
        y = t.tensor([[1.0, -2.0, 0.0]], dtype=t.float64).copysign(w[:1])
        (h.sum() + y.sum()).backward()
        return values, recorded, w.grad.numpy(), y.detach().numpy()

    ours, theirs = run(symgrad), run(torch_real)
    np.testing.assert_array_equal(ours[0], [1.5, -2.0, 0.5])
    assert ours[1] == theirs[1] == (True, "CopysignBackward0")
    np.testing.assert_array_equal(ours[2], theirs[2])
    np.testing.assert_array_equal(ours[3], theirs[3])


def test_copysign_gradient_at_infinities_and_nans_is_pytorchs():
    # PyTorch's gradient in self is result / self (0 where self is 0): NaN where self is
    # ±inf or NaN, whatever the sign of other (symgrad gave ±1 there); 0 in other
    def run(t):
        found = []
        for kind in (t.float64, t.float32):
            x = t.tensor([0.0, -0.0, 1.5, -np.inf, np.inf, np.nan] * 2, dtype=kind,
                         requires_grad=True)
            w = t.tensor([-0.0] * 6 + [np.inf, -np.inf, np.nan, 2.0, -0.0, 0.0], dtype=kind,
                         requires_grad=True)
            y = x.copysign(w)
            (y.sum() + t.copysign(x, -1.5).sum()).backward()
            found += [y.detach().numpy(), t.signbit(y).numpy(), x.grad.numpy(), w.grad.numpy()]
        return found

    for ours, theirs in zip(run(symgrad), run(torch_real)):
        np.testing.assert_array_equal(ours, theirs)
