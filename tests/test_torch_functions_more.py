"""The torch functions of symgrad/eager/{linalg_methods,linalg_names,shape_methods,
index_methods,stat_methods,shape_functions}.py beyond the op table (tests/optable_fn.py):
the refusals where PyTorch has no derivative, views through the new shape ops, and
results after an input changed in place; against PyTorch 2.13."""

from __future__ import annotations

import numpy as np
import pytest

import symgrad as sg

torch = pytest.importorskip("torch")


def test_no_derivative_is_refused_and_values_agree_without_grad():
    a = np.array([[3.0, 1.0, 3.0], [2.0, 1.0, 2.0]])
    x = sg.tensor(a, requires_grad=True)
    for call in (lambda: sg.tensor([0, 2, 2]).bincount(x[0]), lambda: x.lu()):
        # (lu of a square matrix has its gradient: tests/test_linalg_ex.py)
        with pytest.raises((RuntimeError, NotImplementedError), match="no derivative|non-square"):
            call()
    with sg.no_grad():
        got = x.unique(return_inverse=True, return_counts=True)
    want = torch.tensor(a).unique(return_inverse=True, return_counts=True)
    for g, w in zip(got, want):
        assert str(g.dtype) == str(w.dtype)
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    counts = sg.tensor([0, 2, 2]).bincount(x[0].detach())
    np.testing.assert_array_equal(counts.numpy(), [3.0, 0.0, 4.0])


@pytest.mark.parametrize("call", [
    lambda L, x: x.unique(), lambda L, x: L.unique(x * 2, sorted=False, return_counts=True)[0],
    lambda L, x: x.unique(dim=1, return_inverse=True)[0], lambda L, x: L.unique_consecutive(x),
    lambda L, x: x.float().unique_consecutive(dim=0, return_counts=True)[0]])
def test_unique_of_a_tensor_that_requires_grad_is_recorded_and_its_backward_raises(call):
    """PyTorch's unique computes on a tensor that requires grad, its values require grad
    (a node named for the op) and only a backward through them raises; not under
    no_grad nor of a detached tensor."""
    a = np.array([[3.0, 1.0, 3.0], [2.0, 1.0, 2.0]])
    seen = []
    for L in (torch, sg):
        x = L.tensor(a, requires_grad=True)
        u = call(L, x)
        with pytest.raises(RuntimeError) as error:
            (u * 2).sum().backward()
        with pytest.raises(RuntimeError, match="derivative for"):
            L.autograd.grad(u.sum() + x.sum(), x)
        with L.no_grad():
            plain = call(L, x)
        seen.append((u.detach().numpy(), str(u.dtype), u.requires_grad, type(u.grad_fn).__name__,
                     str(error.value), x.grad, plain.requires_grad,
                     call(L, x.detach()).requires_grad))
    np.testing.assert_array_equal(seen[1][0], seen[0][0])
    assert seen[1][1:] == seen[0][1:]


def test_views_of_the_new_shape_ops_see_in_place_changes_as_pytorch():
    """movedim, unflatten and the splits are views: a change of the result reaches the
    base, and a change of the base reaches the result."""
    calls = (lambda L, x: x.movedim(0, 1), lambda L, x: x.unflatten(1, (2, 2)),
             lambda L, x: x.tensor_split(2, 1)[1], lambda L, x: x.vsplit([1])[1],
             lambda L, x: x.split_with_sizes([1, 2], 0)[1], lambda L, x: x.fliplr(),
             lambda L, x: L.atleast_3d(x), lambda L, x: x.diag())
    for call in calls:
        got = []
        for L in (torch, sg):
            x = L.arange(12.0).reshape(3, 4)
            y = call(L, x)
            y.mul_(2)
            x.add_(1)
            got.append((x.numpy().copy(), y.numpy().copy()))
        for g, w in zip(got[1], got[0]):
            np.testing.assert_array_equal(g, w)


def test_results_follow_an_input_changed_in_place():
    """quantile, take_along_dim and baddbmm called again after the inputs changed: the
    new values and gradients, as PyTorch's."""
    rng = np.random.default_rng(0)
    a, b, c = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 2)), \
        rng.standard_normal((2, 3, 2))
    outs = []
    for L in (torch, sg):
        x, y, z = (L.tensor(v, requires_grad=True) for v in (a, b, c))
        rounds = []
        for _ in range(2):
            idx = x.detach().argsort(-1)
            total = (x.quantile(0.3, -1).sum() + x.take_along_dim(idx, -1)[..., :2].sum()
                     + (z.baddbmm(x, y, beta=0.5, alpha=2) ** 2).sum())
            grads = L.autograd.grad(total, (x, y, z))
            rounds.append([total.detach().numpy()] + [g.numpy() for g in grads])
            with L.no_grad():
                x.mul_(-1.5)
                y.add_(0.25)
        outs.append(rounds)
    for got, want in zip(sum(outs[1], []), sum(outs[0], [])):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_argument_errors_name_the_problem():
    x = sg.ones(2, 3)
    with pytest.raises(RuntimeError, match="repeats must have the same size"):
        x.repeat_interleave(sg.tensor([1, 2]), dim=1)
    with pytest.raises(RuntimeError, match="not divisible"):
        x.hsplit(2)
    with pytest.raises(RuntimeError, match="same dtype"):
        x.quantile(sg.tensor([0.5], dtype=sg.float32))
    with pytest.raises(RuntimeError, match="xy.*ij"):
        sg.meshgrid(x[0], x[1], indexing="ji")


def test_numpy_of_a_zero_dim_predicate_shares_its_memory():
    """``numpy()`` of a 0-d result held as a numpy scalar (``isnan``, a comparison) hands
    out a 0-d array sharing the tensor's memory, as PyTorch's: a write into it reaches
    the tensor and a backward that reads it as a mask (it raised a TypeError before)."""
    got, want = [], []
    for L, out in ((sg, got), (torch, want)):
        t = L.tensor(float("nan")).isnan()
        a = t.numpy()
        a[...] = False
        x = L.tensor(2.0, dtype=L.float64, requires_grad=True)
        c = L.tensor(3.0) > 2
        y = L.where(c, x * x, x).sum()
        c.numpy()[...] = False
        y.backward()
        out += [type(a), bool(t), float(x.grad)]
    assert got == want
