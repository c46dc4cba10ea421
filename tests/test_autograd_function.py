"""``symgrad.autograd.Function`` against real PyTorch: the same programs print the same
values, gradients, double-backward gradients and errors (tests/torch_oracle.py)."""

from __future__ import annotations

import numpy as np
import pytest

import symgrad

pytest.importorskip("torch")

from torch_oracle import (  # noqa: E402,F401 (a fixture)
    float64_default,
    run_both,
    show_error,
)
from torch_oracle import normal_data as _data  # noqa: E402

pytestmark = pytest.mark.filterwarnings(
    "error::symgrad.autograd.KernelFallbackWarning",
    "ignore:Using backward\\(\\) with create_graph=True:UserWarning")


def _functions(torch, show):
    class ScaledExp(torch.autograd.Function):
        """exp(x) * k with a backward written with Tensor ops (differentiable again); it
        saves an input and an output, keeps a number on ctx."""

        @staticmethod
        def forward(ctx, x, k):
            show("needs_input_grad", *ctx.needs_input_grad)
            y = x.exp() * k
            ctx.save_for_backward(x, y)
            ctx.k = k
            return y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * y * (1.0 + 0.25 * x.sin()), None  # a rule of the user's own

    class SplitOnce(torch.autograd.Function):
        """Two outputs (one not differentiable), a backward PyTorch may not differentiate."""

        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            idx = (a > 0).to(torch.float64)
            ctx.mark_non_differentiable(idx)
            return a * b, a + b.square(), idx

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, g1, g2, g3):
            a, b = ctx.saved_tensors
            return g1 * b + g2, g1 * a + 2.0 * g2 * b

    class WrongCount(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0

        @staticmethod
        def backward(ctx, g):
            return g, g

    return ScaledExp, SplitOnce, WrongCount


def function_program(torch, show, data):
    ScaledExp, SplitOnce, WrongCount = _functions(torch, show)
    x = torch.tensor(data["x"], requires_grad=True)
    y = ScaledExp.apply(x, 1.5)
    show(type(y.grad_fn).__name__, y.detach(), y.requires_grad)
    loss = (y * y).sum()
    g, = torch.autograd.grad(loss, x, create_graph=True)
    show(g.detach(), g.requires_grad)
    (g * x).sum().backward()          # double backward through the user's backward
    show(x.grad)
    # with no input requiring grad: a plain result
    z = ScaledExp.apply(x.detach(), 2.0)
    show(z.requires_grad, z)
    # several outputs, a non-differentiable one, once_differentiable
    a = torch.tensor(data["a"], requires_grad=True)
    b = torch.tensor(data["b"], requires_grad=True)
    p, q, idx = SplitOnce.apply(a, b)
    show(p.requires_grad, q.requires_grad, idx.requires_grad, idx)
    (p.sum() * 2.0 + (q * q).sum()).backward(retain_graph=True)
    show(a.grad, b.grad)
    ga, = torch.autograd.grad((p * q).sum(), a, create_graph=True)
    show(ga.detach())
    show_error(show, lambda: ga.sum().backward(), 80)
    # a backward returning the wrong number of gradients
    w = torch.tensor(data["x"], requires_grad=True)
    show_error(show, lambda: WrongCount.apply(w).sum().backward(), 80)


def test_function_matches_pytorch():
    run_both(function_program, _data(3, x=(4,), a=(3,), b=(3,)))


def training_steps(torch, show, data):
    """Repeated steps of one structure: symgrad compiles the backward (cut around the
    Function's callbacks) and keeps the numbers."""
    ScaledExp, _, _ = _functions(torch, lambda *a: None)
    w = torch.tensor(data["w"], requires_grad=True)
    for _ in range(3):
        w.grad = None
        loss = (ScaledExp.apply(w * 0.5, 1.0) * w).sum()
        loss.backward()
        show(loss.detach(), w.grad)
        with torch.no_grad():
            w -= 0.1 * w.grad


@pytest.mark.kernels
def test_repeated_steps_compile_and_match_pytorch():
    before = symgrad.autograd.backward_stats()["compiled_runs"]
    run_both(training_steps, _data(4, w=(5,)))
    # the second and third steps ran the compiled chain (kernels around the callbacks)
    assert symgrad.autograd.backward_stats()["compiled_runs"] >= before + 2


def test_function_outside_autograd_and_legacy_style():
    class Twice(symgrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0

        @staticmethod
        def backward(ctx, g):
            return g * 2.0
    with pytest.raises(RuntimeError, match="Legacy autograd function"):
        Twice()
    x = symgrad.tensor(np.array([1.0, 2.0]), requires_grad=True)
    with symgrad.no_grad():
        assert not Twice.apply(x).requires_grad


def _dirty_functions(torch):
    class AddOne(torch.autograd.Function):
        """PyTorch's documentation example of ctx.mark_dirty: forward changes its input in
        place and returns it."""

        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class MulBy(torch.autograd.Function):
        """x *= w in place, saving the changed x (its output) and w."""

        @staticmethod
        def forward(ctx, x, w):
            x.mul_(w)
            ctx.mark_dirty(x)
            ctx.save_for_backward(x, w)
            return x

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            return g * w, (g * x / w).sum()

    class NotReturned(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    return AddOne, MulBy, NotReturned


def dirty_program(torch, show, data):
    AddOne, MulBy, NotReturned = _dirty_functions(torch)
    x = torch.tensor(data["x"], requires_grad=True)
    a = x * 1.5
    r = AddOne.apply(a)  # the input itself, its version bumped, AddOneBackward its grad_fn
    show(r is a, a._version, type(a.grad_fn).__name__, a.detach())
    (r * r).sum().backward()
    show(x.grad)
    b = x * x  # saves x... and a product saving a: changed by the Function, it raises
    c = x * 2.0
    d = c * c
    AddOne.apply(c)
    show_error(show, lambda: d.sum().backward(), 80)
    show_error(show, lambda: b.sum().backward(), 10)
    w = torch.tensor(1.5, requires_grad=True)
    e = x * 1.0
    out = MulBy.apply(AddOne.apply(e), w)  # twice in place, saved output
    g, = torch.autograd.grad((out ** 3).sum(), [w], create_graph=True)
    show(out is e, e._version, g.detach())
    # a view of a non-leaf: the change reaches its base (CopySlices), gradients follow
    x.grad = None
    base = x * 1.0
    AddOne.apply(base[1:])
    show(base.detach(), type(base.grad_fn).__name__)
    (base * base).sum().backward()
    show(x.grad)
    # refusals: a leaf that requires grad, a dirty input not returned
    show_error(show, lambda: AddOne.apply(x), 80)
    show_error(show, lambda: NotReturned.apply(x * 1.0), 80)
    z = torch.zeros(2)
    show_error(show, lambda: NotReturned.apply(z), 80)
    show_error(show, lambda: AddOne.apply(x[1:]), 80)
    show(z._version, x._version)
    # without grad: only the change and the version
    y = torch.zeros(3)
    with torch.no_grad():
        AddOne.apply(x)
    show(x.detach(), x._version, AddOne.apply(y).requires_grad, y._version)


def test_mark_dirty_matches_pytorch():
    run_both(dirty_program, _data(5, x=(3,)))
