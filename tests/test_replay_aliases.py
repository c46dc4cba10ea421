"""Writes between forward and backward through aliases and index tensors, against PyTorch.

Each program runs with real PyTorch and with symgrad (the backward on the numpy
interpreter); after each step the outcome (values, or that a RuntimeError was raised)
must agree. The cases are those the replay's guard (:mod:`symgrad.eager.replay`) and the
saved indices (:mod:`symgrad.eager.saved_indices`) must see:

- a result's memory handed out (``detach()``, ``.data``) but not written, then an
  unrelated in-place write: its float32 value is still the forward's and is read, not
  recomputed in float64 on the other side of a kink;
- the memory of a dead result written through a ``detach()`` alias: PyTorch's node
  saved it and its version counter is the alias's, so PyTorch raises;
- index tensors changed after the forward: in place (PyTorch's version error), through
  ``.data`` or ``numpy()`` (PyTorch uses the new indices; symgrad refuses).
Where symgrad refuses and PyTorch gives a number, the case is listed as refused.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

torch_real = pytest.importorskip("torch")

from test_replay_saved import _outcome  # noqa: E402 (a step's arrays, or the RuntimeError's type)

import symgrad  # noqa: E402
from symgrad.core.config import config  # noqa: E402


@pytest.fixture(autouse=True)
def interpreted(monkeypatch):
    monkeypatch.setattr(config, "eager_compile", False)


def _compare(ours, theirs, rtol, what, may_refuse=False):
    """Equal outcomes; with ``may_refuse``, symgrad may raise where PyTorch does not."""
    if may_refuse and ours is RuntimeError and theirs is not RuntimeError:
        return
    if theirs is RuntimeError or ours is RuntimeError:
        assert ours is theirs, what
        return
    for a, b in zip(ours, theirs, strict=True):
        assert (a is None) == (b is None), what
        if a is not None:  # (PyTorch rounds 1 - tanh^2 near 1 otherwise)
            atol = rtol * np.abs(b).max(initial=0)
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=what)


RTOL = {"float32": 2e-6, "float64": 1e-12}
# float32 values on which W*X rounds to exactly Y (in float64 W*X - Y is 9.5e-8 > 0)
_W, _X, _Y = np.float32(1.7199054), np.float32(1.8691334), np.float32(3.2147324)

#: what happens between the forward of p = W*X and the backward of a kink of p
HANDOUTS = {
    "nothing": lambda L, p, other: None,
    "detach": lambda L, p, other: p.detach(),
    "detach_other_write": lambda L, p, other: (p.detach(), other.mul_(2)),
    "data_other_write": lambda L, p, other: (p.data, other.add_(1)),
    "numpy_other_write": lambda L, p, other: (p.detach().numpy(), other.mul_(2)),
    "detach_written": lambda L, p, other: p.detach().mul_(2),
    "data_written": lambda L, p, other: p.data.mul_(2),
    "numpy_written": lambda L, p, other: p.detach().numpy().__imul__(2),
    "detach_zeroed": lambda L, p, other: p.detach().zero_(),
}
KINKS = {
    "maximum": lambda L, p, Y: L.maximum(p, Y),  # a tie in float32: half to each
    "relu": lambda L, p, Y: (p - Y).relu(),
    "exp": lambda L, p, Y: (p - Y).exp(),
}


def kink_program(L, dtype, handout, kink, dead):
    dt = getattr(L, dtype)
    W = L.tensor([_W, 2.0], dtype=dt, requires_grad=True)
    X, Y = L.tensor([_X, 1.0], dtype=dt), L.tensor([_Y, 0.5], dtype=dt)
    other = L.tensor([1.0, 2.0], dtype=dt)

    def step():
        p = W * X
        if dead:  # p's node lives on in the graph; the tensor itself is gone
            out = (KINKS[kink](L, p, Y) * 12.5).sum()
            held = HANDOUTS[handout](L, p, other)
            del p
        else:
            held = HANDOUTS[handout](L, p, other)
            out = (KINKS[kink](L, p, Y) * 12.5).sum()
        out.backward()
        del held
        grad = W.grad.clone()
        W.grad = None
        with L.no_grad():
            W.sub_(0.001 * grad)
        return [out, grad]
    return step


@pytest.mark.parametrize("dead", [False, True], ids=["alive", "dead"])
@pytest.mark.parametrize("kink", sorted(KINKS))
@pytest.mark.parametrize("handout", sorted(HANDOUTS))
def test_handed_out_value_at_a_kink(handout, kink, dead):
    """Two steps each (the second from the updated W), float32 and float64."""
    for dtype in ("float32", "float64"):
        theirs = kink_program(torch_real, dtype, handout, kink, dead)
        ours = kink_program(symgrad, dtype, handout, kink, dead)
        for k in range(2):
            a, b = _outcome(ours), _outcome(theirs)
            # (symgrad refuses a write through .data/numpy of a value a node saved;
            # PyTorch reads it as it is now)
            _compare(a, b, RTOL[dtype], f"{dtype} step {k}",
                     handout in ("data_written", "numpy_written"))


#: a dead intermediate h written through an alias, then used by ``use``
USES = {
    "mul": lambda L, h, w: h * w,
    "add": lambda L, h, w: h + w,
    "tanh": lambda L, h, w: h.tanh() * w,
    "relu": lambda L, h, w: (h - 2).relu() * w,
    "square": lambda L, h, w: h * h,
}
MAKES = {
    "exp": lambda x: x.exp(),  # PyTorch's node saves its output
    "sigmoid": lambda x: x.sigmoid(),
    "mul": lambda x: x * 3,  # saves nothing
}


def dead_program(L, dtype, make, use, write):
    dt = getattr(L, dtype)
    x = L.tensor([0.5, -1.0, 2.0], dtype=dt, requires_grad=True)
    w = L.tensor([1.5, 2.0, -0.5], dtype=dt, requires_grad=True)

    def step():
        h = MAKES[make](x)
        alias = h.detach()
        g = USES[use](L, h, w)
        del h
        if write == "mul":
            alias.mul_(2)
        elif write == "zero":
            alias.zero_()
        loss = g.sum()
        loss.backward()
        out = [loss, x.grad, w.grad]
        x.grad = w.grad = None
        return out
    return step


@pytest.mark.parametrize("write", ["mul", "none"])
@pytest.mark.parametrize("use", sorted(USES))
@pytest.mark.parametrize("make", sorted(MAKES))
def test_dead_intermediate_written_through_detach(make, use, write):
    """PyTorch raises where a node saved h (the alias shares h's version counter)."""
    for dtype in ("float32", "float64"):
        theirs = dead_program(torch_real, dtype, make, use, write)
        ours = dead_program(symgrad, dtype, make, use, write)
        for k in range(2):
            _compare(_outcome(ours), _outcome(theirs), RTOL[dtype], f"{dtype} step {k}")


INDEXED = {
    "gather": lambda L, x, w, i2, i1: x.gather(1, i2),
    "index_select": lambda L, x, w, i2, i1: x.index_select(1, i1),
    "getitem": lambda L, x, w, i2, i1: x[:, i1],
    "take": lambda L, x, w, i2, i1: x.take(i1),
    "scatter_add": lambda L, x, w, i2, i1: L.zeros_like(x).scatter_add(1, i2, w),
    "scatter": lambda L, x, w, i2, i1: L.zeros_like(x).scatter(1, i2[:, :1], w[:, :1]),
    "index_add": lambda L, x, w, i2, i1: x.index_add(1, i1, w),
    "embedding": lambda L, x, w, i2, i1: L.nn.functional.embedding(i1, x),
    "setitem": lambda L, x, w, i2, i1: _setitem(x, i1, w),
}


def _setitem(x, i1, w):
    y = x * 1
    y[:, i1] = w
    return y


def index_program(L, dtype, name, how):
    dt = getattr(L, dtype)
    x = L.tensor([[0.5, -1.0, 2.0], [1.0, 3.0, -2.0]], dtype=dt, requires_grad=True)
    w = L.tensor([[1.5, 2.0], [-0.5, 4.0]], dtype=dt, requires_grad=True)

    def step():
        i2, i1 = L.tensor([[0, 2], [1, 1]]), L.tensor([1, 0])
        y = INDEXED[name](L, x, w, i2, i1)
        for t in (i1, i2):
            if how == "inplace":
                t[0] = 0 if t.ndim == 1 else 1
            elif how == "data":
                t.data[0] = 0 if t.ndim == 1 else 1
            elif how == "numpy":
                t.numpy()[0] = 0 if t.ndim == 1 else 1
            elif how == "replaced":
                t.data = t.flip(0).clone()
        loss = (y * y).sum()
        loss.backward()
        out = [loss, x.grad, w.grad]
        x.grad = w.grad = None
        return out
    return step


@pytest.mark.parametrize("how", ["none", "inplace", "data", "numpy", "replaced"])
@pytest.mark.parametrize("name", sorted(INDEXED))
def test_indices_changed_before_backward(name, how):
    """In place: PyTorch's version error; through .data or numpy PyTorch uses the new
    indices, and symgrad, whose positions are the forward's, refuses (``.data = ...``
    of the tensor a sliced index was taken from leaves the slice's values: a number)."""
    for dtype in ("float32", "float64"):
        theirs = index_program(torch_real, dtype, name, how)
        ours = index_program(symgrad, dtype, name, how)
        for k in range(2):
            a, b = _outcome(ours), _outcome(theirs)
            _compare(a, b, RTOL[dtype], f"{dtype} step {k}",
                     may_refuse=how in ("data", "numpy", "replaced"))


def test_index_changed_message():
    x = symgrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    i = symgrad.tensor([2, 0])
    y = x.gather(0, i)
    i.data[0] = 1
    with pytest.raises(RuntimeError, match="indices of GatherBackward0.*new indices"):
        y.sum().backward()


def _retained_twice(L, W, X, Y):
    p = W * X
    alias = p.detach()  # noqa: F841 (handed out, never written)
    out = (L.maximum(p, Y) * 3).sum()
    del p
    out.backward(retain_graph=True)
    first = W.grad.clone()
    with L.no_grad():
        W.sub_(0.1)  # a leaf PyTorch's nodes did not save: the saved values are read
    out.backward()
    return [first, W.grad]


def _grad_shares_memory(L, W, X, Y):
    p = W * X
    other = L.zeros(2, dtype=W.dtype, requires_grad=True)
    other.grad = p.detach()  # a later backward into other.grad would write p's memory
    out = ((p - Y).abs() * 3 + p * p).sum()
    out.backward()
    return [W.grad, other.grad]


def _relu_of_dead_written(L, W, X, Y):
    h = W * X
    alias = h.detach()
    g = (h - Y).relu() * h  # MulBackward0 saved h: the write makes PyTorch raise
    del h
    alias.mul_(2)
    g.sum().backward()
    return [W.grad]


def _view_written_under_no_grad(L, W, X, Y):
    h = (W * X).exp()
    v = h[0:1]
    g = h.tanh()
    del h
    with L.no_grad():
        v.mul_(2)  # ExpBackward0 saved h, whose version the view shares
    g.sum().backward()
    return [W.grad]


VARIATIONS = {f.__name__[1:]: f for f in (
    _retained_twice, _grad_shares_memory, _relu_of_dead_written, _view_written_under_no_grad)}


@pytest.mark.parametrize("name", sorted(VARIATIONS))
def test_alias_variations(name):
    for dtype in ("float32", "float64"):
        outcomes = []
        for L in (symgrad, torch_real):
            dt = getattr(L, dtype)
            W = L.tensor([_W, 2.0], dtype=dt, requires_grad=True)
            X, Y = L.tensor([_X, 1.0], dtype=dt), L.tensor([_Y, 0.5], dtype=dt)
            outcomes.append(_outcome(functools.partial(VARIATIONS[name], L, W, X, Y)))
        _compare(*outcomes, RTOL[dtype], dtype)
