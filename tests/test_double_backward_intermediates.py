"""Double backward with respect to intermediate tensors, against real PyTorch 2.13.

A gradient taken with ``create_graph=True`` depends on the intermediate tensors of
the forward computation as PyTorch's does through its saved tensors: ``grad(g, h)``
for a gradient ``g`` and an intermediate ``h`` gives the value (or None with
``allow_unused``), in-place changes raise where PyTorch's do, and a backward through
a gradient whose forward graph was freed raises "Trying to backward through the
graph a second time". Each program runs with both libraries and must print the same
(:mod:`torch_oracle`). A 1000-step training loop with ``create_graph`` must neither
keep any step's graph alive (no reference cycle: checked with the collector off) nor
grow memory (``sys.getallocatedblocks``), and must end on PyTorch's parameters.
"""

from __future__ import annotations

import gc
import sys
import weakref

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


def _error(show, fn, length=60):
    show_error(show, fn, length, result=True)


# ---------------------------------------------------------------------------
# gradients of gradients with respect to intermediates


def intermediates(torch, show, data):
    grad = torch.autograd.grad
    x = torch.tensor(data["x"], requires_grad=True)
    h = x.sin()
    y = (h ** 3).sum()
    g, = grad(y, x, create_graph=True)
    show(g.detach())
    show(grad(g.sum(), h, retain_graph=True))               # 6 h cos(x)
    show(grad(g.sum(), [h, x], retain_graph=True))          # the partials, h held fixed
    show(grad((g * g).sum(), [x, h], retain_graph=True))
    # a gradient of a gradient wrt an intermediate, with a graph: a third derivative
    gh, = grad(g.sum(), h, create_graph=True)
    show(gh.detach(), gh.requires_grad)
    show(grad(gh.sum(), [x, h]))
    # through a chain: u is reached through z = exp(u), which the gradient uses
    u = x * 2
    z = u.exp()
    w = (z * x).sum()
    g2, = grad(w, x, create_graph=True)
    show(grad(g2.sum(), [u, z], retain_graph=True))
    show(grad(g2.sum(), [z, u, x]))
    # linear steps: the gradient uses b, which depends on a
    a = x * 3
    b = a + 1
    g3, = grad((b * b).sum(), x, create_graph=True)
    show(grad(g3.sum(), [a, b]))
    # the intermediate is the output of an MLP's hidden layer
    wt = torch.tensor(data["w"], requires_grad=True)
    xin = torch.tensor(data["xin"], requires_grad=True)
    hidden = torch.relu(xin @ wt)  # (tanh, sigmoid: refused, see the test below)
    out = (hidden * hidden.exp()).sum()
    gx, = grad(out, xin, create_graph=True)
    show(grad((gx ** 2).sum(), [hidden, wt]))


def test_gradient_of_a_gradient_wrt_intermediates():
    run_both(intermediates, _data(10, x=(4,), w=(3, 2), xin=(2, 3)))


def unused_intermediates(torch, show, data):
    grad = torch.autograd.grad
    x = torch.tensor(data["x"], requires_grad=True)
    k = x.cos()
    g, = grad((k * 2).sum(), x, create_graph=True)          # -2 sin(x): no use of k
    show(grad(g.sum(), k, allow_unused=True, retain_graph=True))
    show(grad(g.sum(), [k, x], allow_unused=True, materialize_grads=True,
              retain_graph=True))
    _error(show, lambda: grad(g.sum(), k, retain_graph=True), 200)
    _error(show, lambda: grad(g.sum(), [x, k]), 200)        # index 1
    # backward(create_graph=True) fills x.grad with a graph that uses h
    h = torch.exp(x)
    (h ** 2).sum().backward(create_graph=True)
    show(x.grad.detach())
    show(grad(x.grad.sum(), h, retain_graph=True))
    show(grad(x.grad.sum(), [h, k], allow_unused=True))


def test_unused_intermediates_and_allow_unused():
    run_both(unused_intermediates, _data(11, x=(3,)))


# ---------------------------------------------------------------------------
# in-place changes and freed graphs


def inplace_changes(torch, show, data):
    grad = torch.autograd.grad
    x = torch.tensor(data["x"], requires_grad=True)
    # changed without recording after the gradient was built: its graph saved h
    h = x.sin()
    g, = grad((h ** 3).sum(), x, create_graph=True)
    with torch.no_grad():
        h.mul_(2)
    _error(show, lambda: grad(g.sum(), x, retain_graph=True))
    _error(show, lambda: grad(g.sum(), h, retain_graph=True))
    # changed with recording: h is now another node's output, g's graph is not its
    h = x.sin()
    g, = grad((h ** 3).sum(), x, create_graph=True)
    h.mul_(2)
    _error(show, lambda: grad(g.sum(), x, retain_graph=True))
    _error(show, lambda: grad(g.sum(), h, retain_graph=True), 200)
    show(grad(g.sum(), h, retain_graph=True, allow_unused=True))
    # changed before the gradient is taken
    h = x.sin() * 1
    y = (h ** 3).sum()
    h.add_(1)
    _error(show, lambda: grad(y, x, create_graph=True))
    # a recorded change before the forward continues is part of the graph
    h = x.sin()
    h.mul_(3)
    g, = grad((h ** 3).sum(), x, create_graph=True)
    show(g.detach())
    show(grad(g.sum(), [h, x]))
    # a tensor changed after the gradient but not used by it
    h = x.sin()
    q = h * 2
    g, = grad((q * x).sum(), x, create_graph=True)          # 2 h + 2 x cos(x): uses h
    with torch.no_grad():
        q.zero_()                                           # q itself is not saved
    show(grad(g.sum(), [h, x]))


def test_inplace_changes_raise_as_in_pytorch():
    run_both(inplace_changes, _data(12, x=(3,)))


def freed_graphs(torch, show, data):
    grad = torch.autograd.grad
    x = torch.tensor(data["x"], requires_grad=True)
    h = x.sin()
    y = (h ** 3).sum()
    g, = grad(y, x, create_graph=True)
    y.backward()                                            # frees y's graph
    _error(show, lambda: g.sum().backward(), 50)
    _error(show, lambda: grad(g.sum(), h), 50)
    # the same when no intermediate is held: the gradient's graph saved sin(x)
    y = (x.sin() ** 3).sum()
    g, = grad(y, x, create_graph=True)
    y.backward()
    _error(show, lambda: g.sum().backward(), 50)
    # retain_graph=False while create_graph: the gradient's graph is freed at once
    y = (torch.exp(x) * x).sum()
    g, = grad(y, x, create_graph=True, retain_graph=False)
    _error(show, lambda: g.sum().backward(), 50)
    # a gradient whose graph needs no node of y's (only the leaf) stays usable
    x.grad = None
    y = (x ** 3).sum()
    g, = grad(y, x, create_graph=True)
    y.backward()
    _error(show, lambda: g.sum().backward(), 50)
    show(x.grad)
    # the gradient's backward frees the forward nodes it passes through, as PyTorch's
    h = x.sin()
    y = (h * h).sum()
    g, = grad(y, x, create_graph=True)
    g.sum().backward()
    _error(show, lambda: y.backward(), 50)


def test_freed_graphs_raise_as_in_pytorch():
    run_both(freed_graphs, _data(13, x=(3,)))


def changed_through_a_view(torch, show, data):
    """A view shares its base's version counter (issue 25: it did not, and the gradient
    was that of the recorded values), so the change makes the backward raise."""
    x = torch.tensor(data["x"], requires_grad=True)
    h = x.sin()
    y = (h ** 3).sum()
    with torch.no_grad():
        h[1:].mul_(5)
    show(h._version)
    _error(show, lambda: torch.autograd.grad(y, x, create_graph=True))


def test_an_intermediate_changed_through_a_view_raises_as_in_pytorch():
    run_both(changed_through_a_view, _data(14, x=(3,)))


# ---------------------------------------------------------------------------
# memory over a training loop with create_graph

STEPS = 1000


def _train(torch, data, watch=None):
    """A gradient-penalty loop; ``watch(step, objects)`` sees each step's graph."""
    grad = torch.autograd.grad
    w = torch.tensor(data["w"], requires_grad=True)
    for step in range(STEPS):
        x = torch.tensor(data["x"] * (1 + 0.1 * np.sin(step)), requires_grad=True)
        h = torch.tanh(x @ w)
        out = (h * h).sum()
        g, = grad(out, x, create_graph=True)
        loss = (g ** 2).sum() + out
        loss.backward()
        with torch.no_grad():
            w -= 0.002 * w.grad
        w.grad = None
        if watch is not None:
            watch(step, (h, g, loss, loss.grad_fn, g.grad_fn, h.grad_fn))
    return w.detach().numpy().copy()


def _fill_the_tuple_free_lists():
    """CPython 3.11 keeps up to 2000 freed tuples of each length 1 to 20 for reuse, as
    allocated blocks: run alone, this loop's lists fill slowly (one more 2-tuple freed at
    a peak now and then), which looks like a leak; earlier tests filled them when the
    whole suite runs. Fill them all before measuring. The 20-item list is put on but
    never taken from (python/cpython#121439, fixed in 3.12 and 3.13): one a step here,
    as a step's backward key holds the 20 nodes of its graph."""
    kept = [tuple(range(k, k + n)) for n in range(1, 21) for k in range(2000)]
    del kept


def test_a_create_graph_loop_keeps_no_graph_alive_and_matches_pytorch():
    import torch

    data = _data(14, w=(3, 4), x=(2, 3))
    refs: list[weakref.ref] = []
    sizes: dict[int, int] = {}

    def watch(step, objects):
        assert all(r() is None for r in refs), (
            f"step {step}: the previous step's graph is still alive (a reference cycle)")
        refs[:] = [weakref.ref(o) for o in objects]
        if step == STEPS // 10:
            _fill_the_tuple_free_lists()
        if step in (STEPS // 10, STEPS - 1):
            sizes[step] = sys.getallocatedblocks()

    # compile the loop's kernels first, with the collector on: Numba's compiler leaves
    # cyclic garbage whose frames (exceptions caught while typing) hold the calling
    # step's tensors until a collection; what is checked below is symgrad's own graphs
    _train(symgrad, data)
    enabled = gc.isenabled()
    gc.disable()  # without the collector only reference counts free: a cycle would stay
    try:
        got = _train(symgrad, data, watch)
    finally:
        if enabled:
            gc.enable()
    growth = sizes[STEPS - 1] - sizes[STEPS // 10]  # the caches are full by then
    # a leak of one block a step would be 900 (about 100 are the allocator's noise)
    assert growth < 450, f"{growth} more memory blocks allocated after {STEPS} steps"
    want = _train(torch, data)
    np.testing.assert_allclose(got, want, rtol=1e-9)


@pytest.mark.parametrize("activation", ["tanh", "expm1", "sigmoid"])
def test_an_intermediate_through_tanh_or_expm1_is_refused_not_answered(activation):
    """symgrad's tanh' and expm1' read their input (accurate in the tails), PyTorch's
    backward their saved output (sigmoid' reads both): the partial derivatives with
    respect to an intermediate would differ, so symgrad refuses them; the total
    derivative (wrt leaves) is PyTorch's."""
    import torch as real

    def program(lib):
        x = lib.tensor([0.3, -0.5, 1.2], dtype=lib.float64, requires_grad=True)
        u = x * 2
        h = getattr(lib, activation)(u)
        g, = lib.autograd.grad((h * h.exp()).sum(), x, create_graph=True)
        return x, u, h, g

    x, u, h, g = program(symgrad)
    with pytest.raises(NotImplementedError, match=f"the output of {activation}"):
        symgrad.autograd.grad((g ** 2).sum(), h, retain_graph=True)
    got = symgrad.autograd.grad((g ** 2).sum(), [x, u])  # its input and the leaf: as PyTorch
    rx, ru, _, rg = program(real)
    want = real.autograd.grad((rg ** 2).sum(), [rx, ru])
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-12)
