"""Masks and index tensors that PyTorch's nodes save, changed between forward and backward,
against real PyTorch: through ``.data`` (no version counts it: PyTorch's backward reads the
new values), in place under ``no_grad`` (PyTorch raises "modified by an inplace
operation") and through numpy into the array given to ``from_numpy`` (as ``.data``).
symgrad gives PyTorch's gradient, or its error, or a RuntimeError saying the indices
were changed and what to do (:mod:`symgrad.eager.saved_indices`), never another number.
The backward runs on the numpy interpreter.
"""

from __future__ import annotations

import numpy as np
import pytest

torch_real = pytest.importorskip("torch")

import symgrad  # noqa: E402
from symgrad.core.config import config  # noqa: E402


@pytest.fixture(autouse=True)
def interpreted(monkeypatch):
    monkeypatch.setattr(config, "eager_compile", False)
    before = torch_real.get_default_dtype()
    torch_real.set_default_dtype(torch_real.float64)
    yield
    torch_real.set_default_dtype(before)


def _f(L):
    return L.nn.functional


def _setitem(L, x, D, k):
    y = x * x
    y[D] = x[k:k + 2] * 2
    return y


_M = ([True, False, False, True], [False, True, True, False])  # (a mask, its change)
_I = ([0, 0, 2], [2, 1, 1])  # (indices into 4 elements, their change)
_J = ([0, 2], [1, 3])  # (two distinct indices, their change)
#: name -> ((saved tensor, its new values), f(L, x, D): values of x whose gradient is compared)
SAVED = {
    "masked_fill": (_M, lambda L, x, D: (x * x).masked_fill(D, 0.5).exp()),
    "masked_fill tensor": (_M, lambda L, x, D: (x * x).masked_fill(D, x[0] * 3)),
    "masked_fill_": (_M, lambda L, x, D: (x * x).masked_fill_(D, 0.5)),
    "masked_scatter": (_M, lambda L, x, D: (x * x).masked_scatter(D, x * 5)),
    "masked_scatter_": (_M, lambda L, x, D: (x * x).masked_scatter_(D, x * 5)),
    "masked_select": (_M, lambda L, x, D: L.masked_select(x * x, D)),
    "x[mask]": (_M, lambda L, x, D: (x * x)[D]),
    "x[mask] =": (_M, lambda L, x, D: _setitem(L, x, D, 1)),
    "where": (_M, lambda L, x, D: L.where(D, x * x, x * 3).exp()),
    "where method": (_M, lambda L, x, D: (x * x).where(D, x * 3)),
    "index_put mask": (_M, lambda L, x, D: (x * x).index_put((D,), x[1:3] * 2)),
    "index_select": (_I, lambda L, x, D: L.index_select(x * x, 0, D)),
    "gather": (_I, lambda L, x, D: L.gather(x * x, 0, D)),
    "take": (_I, lambda L, x, D: (x * x).take(D)),
    "take_along_dim": (_I, lambda L, x, D: (x * x).take_along_dim(D, 0)),  # (PyTorch: copied)
    "take_along_dim flat": (_I, lambda L, x, D: L.take_along_dim(x * x, D)),  # (a view: saved)
    "x[idx]": (_I, lambda L, x, D: (x * x)[D]),
    "embedding": (_I, lambda L, x, D: _f(L).embedding(D, (x * x).reshape(4, 1))),
    "embedding_bag": (_I, lambda L, x, D: _f(L).embedding_bag(
        D, (x * x).reshape(4, 1), L.tensor([0, 1]), mode="sum")),
    "scatter": (_J, lambda L, x, D: (x * x).scatter(0, D, x[1:3] * 2)),
    "scatter_": (_J, lambda L, x, D: (x * x).scatter_(0, D, x[1:3] * 2)),
    "scatter_add": (_J, lambda L, x, D: (x * x).scatter_add(0, D, x[1:3] * 2)),
    "scatter_reduce": (_J, lambda L, x, D: (x * x).scatter_reduce(0, D, x[1:3] * 2, "amax")),
    "scatter_reduce_": (_J, lambda L, x, D: (x * x).scatter_reduce_(0, D, x[1:3] * 2, "sum")),
    "index_add": (_J, lambda L, x, D: (x * x).index_add(0, D, x[1:3] * 2)),
    "index_add_": (_J, lambda L, x, D: (x * x).index_add_(0, D, x[1:3] * 2)),
    "index_copy": (_J, lambda L, x, D: (x * x).index_copy(0, D, x[1:3] * 2)),
    "index_copy_": (_J, lambda L, x, D: (x * x).index_copy_(0, D, x[1:3] * 2)),
    "index_fill": (_J, lambda L, x, D: (x * x).index_fill(0, D, 0.5)),
    "index_fill_": (_J, lambda L, x, D: (x * x).index_fill_(0, D, 0.5)),
    "index_reduce": (_J, lambda L, x, D: (x * x).index_reduce(0, D, x[1:3] * 2, "prod")),
    "index_put": (_J, lambda L, x, D: (x * x).index_put((D,), x[1:3] * 2)),
    "index_put accumulate": (_J, lambda L, x, D: (x * x).index_put((D,), x[1:3] * 2, True)),
    "index_put_": (_J, lambda L, x, D: (x * x).index_put_((D,), x[1:3] * 2)),
    "put": (_J, lambda L, x, D: (x * x).put(D, x[1:3] * 2)),
    "put accumulate": (_J, lambda L, x, D: (x * x).put(D, x[1:3] * 2, accumulate=True)),
    "put_": (_J, lambda L, x, D: (x * x).put_(D, x[1:3] * 2)),
    "x[idx] =": (_J, lambda L, x, D: _setitem(L, x, D, 1)),
    "nll_loss": (([0, 1], [1, 0]), lambda L, x, D: _f(L).nll_loss((x * x).reshape(2, 2), D)),
    "cross_entropy": (([0, 1], [1, 1]), lambda L, x, D: _f(L).cross_entropy(
        (x * x).reshape(2, 2), D, reduction="none")),
    "multi_margin_loss": (([0, 1], [1, 0]), lambda L, x, D: _f(L).multi_margin_loss(
        x.reshape(2, 2), D, reduction="none")),
    "multilabel_margin_loss": (([[0, 2, -1, 0]], [[1, 3, -1, 0]]),
                               lambda L, x, D: _f(L).multilabel_margin_loss(
                                   x.reshape(1, 4), D, reduction="none")),
    "ctc_loss": (([[1, 2]], [[3, 1]]), lambda L, x, D: _f(L).ctc_loss(
        L.cat([x * x, x]).reshape(2, 1, 4).log_softmax(2), D, [2], [2], reduction="sum")),
    "max_unpool1d": (([[[0, 3]]], [[[1, 2]]]), lambda L, x, D: _f(L).max_unpool1d(
        (x[:2] * x[2:]).reshape(1, 1, 2), D, 2)),
}


def _program(L, name, how):
    (old, new), f = SAVED[name]
    x = L.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    raw = np.array(old)
    D = L.from_numpy(raw) if how == "from_numpy" else L.tensor(raw)
    y = f(L, x, D)
    out = (y * L.arange(1.0, y.numel() + 1).reshape(y.shape)).sum()
    if how == "data":
        D.data.copy_(L.tensor(new))
    elif how == "no_grad":
        with L.no_grad():
            D.copy_(L.tensor(new))
    else:
        raw[...] = new
    try:
        out.backward()
    except RuntimeError as e:
        return e
    return x.grad.numpy().copy()


@pytest.mark.filterwarnings("ignore:index_reduce")
@pytest.mark.parametrize("name", sorted(SAVED))
def test_saved_mask_or_indices_changed_before_backward(name):
    for how in ("data", "no_grad", "from_numpy"):
        theirs, ours = _program(torch_real, name, how), _program(symgrad, name, how)
        if isinstance(theirs, RuntimeError):
            assert "modified by an inplace operation" in str(theirs), how
            assert isinstance(ours, RuntimeError) and str(ours).startswith(
                "one of the variables needed for gradient computation has been modified "
                "by an inplace operation"), (how, ours)
        elif isinstance(ours, RuntimeError):  # (a refusal: names the tensor and the fix)
            assert any(why in str(ours) for why in (
                "were changed after the forward", "cannot read what PyTorch's would")), how
            assert "after backward()" in str(ours), how
        else:
            np.testing.assert_allclose(ours, theirs, rtol=1e-12, err_msg=how)


def masked_loop(L):
    """A training loop whose mask (given by ``from_numpy``) changes through ``.data`` or
    numpy between forward and backward at some steps: PyTorch's MaskedFillBackward0
    reads the new mask; symgrad's compiled kernel (from the third step) reads it too."""
    W = L.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    raw = np.array([True, False, False, True])
    M = L.from_numpy(raw)
    out = []
    for k in range(6):
        loss = ((W * W).masked_fill(M, 0.5).exp() * L.arange(1.0, 5.0)).sum()
        if k % 2:
            M.data[k % 4] = not bool(M[k % 4])
        if k % 3 == 2:
            raw[(k + 1) % 4] = not raw[(k + 1) % 4]
        loss.backward()
        out.append(W.grad.numpy().copy())
        W.grad = None
        with L.no_grad():
            W.mul_(0.9)
    return out


def test_masked_fill_mask_changed_in_a_compiled_loop(monkeypatch):
    monkeypatch.setattr(config, "eager_compile", True)
    for ours, theirs in zip(masked_loop(symgrad), masked_loop(torch_real), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_masked_fill_refuses_a_mask_that_is_not_bool():
    for L in (torch_real, symgrad):  # (symgrad took a uint8 mask as truth values)
        for fill in (lambda x, m: x.masked_fill(m, 0.0), lambda x, m: x.masked_fill_(m, 0.0)):
            with pytest.raises(RuntimeError, match="masked_fill_? only supports boolean masks"):
                fill(L.ones(2), L.tensor([1, 0], dtype=L.uint8))
