"""A second backward without ``retain_graph`` (symgrad/eager/torch_facts.py, saves_nothing):
PyTorch raises "Trying to backward through the graph a second time" only when it reaches
a node that saved a tensor (a Python scalar of ``x * 2`` included) and otherwise
accumulates again; the same ops, both ways, and the programs around them (a new node on a
freed one, hooks, retain_grad, autograd.grad, a changed input), against PyTorch 2.13."""

from __future__ import annotations

import numpy as np
import pytest

import symgrad as sg

torch = pytest.importorskip("torch")
from torch_oracle import float64_default, run_both  # noqa: E402,F401

_MASK = [[True, False], [False, True]]
OPS = {  # name -> the loss of x, a (2, 2) leaf
    # PyTorch's nodes that save no tensor: a second backward accumulates again
    "sum": lambda L, x: x.sum(), "add scalar": lambda L, x: (x + 1).sum(),
    "sub, rsub, neg": lambda L, x: (1 - (-x - x.detach())).sum(),
    "mean, mean dim": lambda L, x: x.mean(0).mean(), "add tensors": lambda L, x: (x + x).sum(),
    "views": lambda L, x: x.view(4).reshape(2, 2).t().permute(1, 0).flatten().sum(),
    "transpose, squeeze": lambda L, x: x.transpose(0, 1).unsqueeze(0).squeeze(0).sum(),
    "index, slice, narrow": lambda L, x: x[0].sum() + x[:, 1:].sum() + x.narrow(0, 0, 1).sum(),
    "expand, repeat": lambda L, x: x[:1].expand(3, 2).sum() + x.repeat(2, 1).sum(),
    "cat, stack": lambda L, x: L.cat([x, x]).sum() + L.stack([x, x]).sum(),
    "clone, float": lambda L, x: x.clone().float().sum(dim=1).sum(),
    "flip, roll, cumsum, tril": lambda L, x: x.flip(0).roll(1, 0).cumsum(0).tril().sum(),
    "unbind, split, chunk": lambda L, x: x.unbind(0)[0].sum() + x.split(1, 0)[1].sum()
    + x.chunk(2, 1)[0].sum(),
    "diagonal": lambda L, x: x.diagonal().sum(),
    # nodes that save a tensor (a scalar operand too): the second backward raises
    "mul scalar": lambda L, x: (x * 2).sum(), "div scalar": lambda L, x: x.sum() / 4,
    "mul tensor": lambda L, x: (x * L.ones(2, 2)).sum(), "exp": lambda L, x: x.exp().sum(),
    "relu, abs": lambda L, x: x.relu().sum() + x.abs().sum(), "pow": lambda L, x: (x ** 2).sum(),
    "matmul": lambda L, x: (x @ L.ones(2, 2)).sum(), "tanh": lambda L, x: x.tanh().sum(),
    "sum times sum": lambda L, x: x.sum() * x.sum(), "reciprocal": lambda L, x: (1 / x).sum(),
    "masked_fill": lambda L, x: x.masked_fill(L.tensor(_MASK), 0.0).sum(),
    "where": lambda L, x: L.where(L.tensor(_MASK), x, 0.0).sum(),
    "index_select, gather": lambda L, x: x.index_select(0, L.tensor([1, 0])).sum()
    + x.gather(0, L.tensor([[1, 0]])).sum(),
    "softmax, mse, max": lambda L, x: x.softmax(0).sum()
    + L.nn.functional.mse_loss(x, L.zeros(2, 2)) + x.max(),
    "clamp, norm": lambda L, x: x.clamp(-0.5, 0.5).sum() + x.norm(),
    "saving after not saving": lambda L, x: ((x + 1).t() * 3).sum(),
    "einsum, tensordot": lambda L, x: L.einsum("ij,jk->ik", x, L.ones(2, 2)).sum()
    + L.tensordot(x, L.ones(2, 2), 1).sum(),
    "embedding, take_along_dim": lambda L, x: L.nn.functional.embedding(
        L.tensor([0, 1, 1]), x).sum() + L.take_along_dim(x, L.tensor([[0], [1]]), 1).sum(),
    "cumprod, masked_select, dot": lambda L, x: x.cumprod(0).sum()
    + x.masked_select(L.tensor(_MASK)).sum() + L.dot(x[0], L.ones(2)),
    # (and composites of nodes that save nothing)
    "einsum sum, tile, movedim": lambda L, x: L.einsum("ij->j", x).sum() + x.tile(2).sum()
    + x.movedim(0, 1).sum(),
    "hstack, unflatten, fliplr": lambda L, x: L.hstack([x, x]).sum()
    + x.flatten().unflatten(0, (2, 2)).fliplr().sum(),
}


def _pad(mode):
    return lambda L, x: L.nn.functional.pad(x[None, None], (1, 1, 1, 0), mode=mode).sum()


def _resize(d, **kw):  # x as a (1, 1, 4), (1, 1, 2, 2) or (1, 1, 1, 2, 2) batch
    shape = {1: (1, 1, 4), 2: (1, 1, 2, 2), 3: (1, 1, 1, 2, 2)}[d]
    return lambda L, x: L.nn.functional.interpolate(x.reshape(shape), **kw).sum()


def _pool(d, size):
    shape = {1: (1, 1, 4), 2: (1, 1, 2, 2), 3: (1, 1, 1, 2, 2)}[d]
    return lambda L, x: getattr(L.nn.functional, f"adaptive_avg_pool{d}d")(
        x.reshape(shape), size).sum()


#: composites here, one node in PyTorch: it runs the second backward where that node
#: saves nothing (F.pad's constant mode, interpolate but "area", the products of
#: constant factors), raises where it saves a tensor
COMPOSITES = {
    "pad constant, value, negative": lambda L, x: L.nn.functional.pad(x, (1, 1)).sum()
    + L.nn.functional.pad(x, (1, 2, 0, 1), value=3.0).sum()
    + L.nn.functional.pad(x, (-1, 1)).sum(),
    "pad reflect": _pad("reflect"), "pad replicate": _pad("replicate"),
    "pad circular": _pad("circular"),
    "trace": lambda L, x: x.trace(),
    "diag, diag_embed": lambda L, x: L.diag(x[0]).sum() + L.diag(x[1], -1).sum()
    + L.diag(x).sum() + L.diag_embed(x).sum() + L.diag_embed(x, 1, 0, 2).sum(),
    "rot90": lambda L, x: x.rot90().sum() + x.rot90(2).sum() + x.rot90(3, (1, 0)).sum()
    + x.rot90(0).sum(),
    "lerp scalar weight": lambda L, x: L.lerp(x, L.ones(2, 2), 0.3).sum()
    + L.lerp(L.ones(2, 2), x, 0.7).sum() + x.lerp(L.zeros(2, 2), -1.5).sum(),
    "lerp tensor weight": lambda L, x: L.lerp(x, L.ones(2, 2), L.full((2, 2), 0.3)).sum(),
    "interpolate 1-d": lambda L, x: _resize(1, scale_factor=2)(L, x)
    + _resize(1, size=3, mode="nearest-exact")(L, x)
    + _resize(1, size=7, mode="linear", align_corners=True)(L, x),
    "interpolate 2-d": lambda L, x: _resize(2, scale_factor=1.5)(L, x)
    + _resize(2, size=(3, 5), mode="bilinear")(L, x)
    + _resize(2, scale_factor=2, mode="bicubic")(L, x)
    + _resize(2, size=(1, 3), mode="nearest-exact")(L, x),
    "interpolate antialias": lambda L, x: _resize(2, size=(1, 1), mode="bilinear",
                                                   antialias=True)(L, x)
    + _resize(2, size=(1, 3), mode="bicubic", antialias=True)(L, x),
    "interpolate 3-d": lambda L, x: _resize(3, scale_factor=2, mode="trilinear")(L, x)
    + _resize(3, size=(2, 3, 1))(L, x),
    "interpolate area": _resize(2, size=(1, 3), mode="area"),
    "interpolate area to one element": lambda L, x: _resize(2, size=1, mode="area")(L, x)
    + _resize(1, size=1, mode="area")(L, x),
    "adaptive_avg_pool1d": _pool(1, 3), "adaptive_avg_pool2d": _pool(2, (1, 2)),
    "adaptive_avg_pool3d": _pool(3, (1, 1, 3)),
    "adaptive_avg_pool to one element": lambda L, x: _pool(1, 1)(L, x) + _pool(2, 1)(L, x)
    + _pool(3, (1, 1, 1))(L, x) + L.nn.functional.adaptive_avg_pool2d(x[None], 1).sum(),
    "unfold, fold": lambda L, x: L.nn.functional.unfold(x[None, None], 1).sum()
    + L.nn.functional.unfold(x[None, None], 2, padding=1, stride=2).sum()
    + L.nn.functional.fold(x.reshape(1, 4, 1), (2, 2), 2).sum(),
    "einsum diagonals": lambda L, x: L.einsum("ii->", x) + L.einsum("ii->i", x).sum()
    + L.einsum("ii", x) + L.einsum("...ii->...", x[None]).sum()
    + L.einsum("iij->j", x.repeat(2, 1).reshape(2, 2, 2)).sum(),
    "einsum diagonal then product": lambda L, x: L.einsum("ii,ij->j", x, L.ones(2, 2)).sum(),
    "addmm, baddbmm, addcmul of constants": lambda L, x: L.addmm(
        x, L.ones(2, 2), L.ones(2, 2)).sum()
    + L.addmm(x, L.ones(2, 3), L.ones(3, 2), beta=2.0, alpha=0.5).sum()
    + L.baddbmm(x[None], L.ones(1, 2, 2), L.ones(1, 2, 2), beta=0.5).sum()
    + L.addcmul(x, L.ones(2, 2), L.full((2, 2), 2.0), value=3.0).sum(),
    "addmv, addr, addbmm, linear of constants": lambda L, x: L.addmv(
        x[0], L.ones(2, 2), L.ones(2), alpha=2.0).sum()
    + L.addr(x, L.ones(2), L.ones(2), beta=3.0).sum()
    + L.addbmm(x, L.ones(3, 2, 2), L.ones(3, 2, 2)).sum()
    + L.nn.functional.linear(L.ones(3, 2), L.ones(2, 2), x[0]).sum(),
    "addmm of a matrix requiring grad": lambda L, x: L.addmm(L.ones(2, 2), x, L.ones(2, 2)).sum(),
    "baddbmm of a batch requiring grad": lambda L, x: L.baddbmm(
        L.ones(1, 2, 2), L.ones(1, 2, 2), x[None]).sum(),
    "addcmul of a factor requiring grad": lambda L, x: L.addcmul(L.ones(2, 2), L.ones(2, 2),
                                                                 x).sum(),
    "addcdiv": lambda L, x: L.addcdiv(x, L.ones(2, 2), L.full((2, 2), 2.0)).sum(),
    "linear of a weight requiring grad": lambda L, x: L.nn.functional.linear(
        L.ones(3, 2), x, L.ones(2)).sum(),
}
OPS.update(COMPOSITES)


def _twice(L, op):
    """(after the first backward, after the second or the error's kind)."""
    x = L.tensor(np.array([[0.3, -1.2], [2.0, 0.7]]), requires_grad=True)
    loss = op(L, x)
    loss.backward()
    first = x.grad.numpy().copy()
    try:
        loss.backward()
    except RuntimeError as e:
        assert "backward through the graph a second time" in str(e)
        np.testing.assert_array_equal(x.grad.numpy(), first)  # nothing added
        return first, "raises"
    return first, x.grad.numpy().copy()


@pytest.mark.parametrize("name", list(OPS))
def test_second_backward_raises_or_accumulates_as_pytorch(name):
    (want_first, want), (got_first, got) = (_twice(L, OPS[name]) for L in (torch, sg))
    np.testing.assert_allclose(got_first, want_first, rtol=1e-12)
    if isinstance(want, str):
        assert got == want
    else:
        assert not isinstance(got, str), f"{name}: PyTorch runs the second backward"
        np.testing.assert_allclose(got, want, rtol=1e-12)


def twice_program(torch, show, data):
    def attempt(f):
        try:
            f()
            show("ran")
        except RuntimeError as e:
            show("second time" in str(e))
    x = torch.tensor(data["x"], requires_grad=True)
    y = x + 1
    y.sum().backward()
    attempt(lambda: (y * y).sum().backward())  # a new node on a node that saved nothing
    y = x.exp()
    (y + 1).sum().backward()
    attempt(lambda: y.sum().backward())        # through the freed exp
    show(x.grad)
    x.grad = None
    y = x.view(4)
    y.sum().backward()
    with torch.no_grad():
        x.add_(1)                              # not saved: no error
    attempt(lambda: (y * 2).sum().backward())
    s = x.sum()
    torch.autograd.grad(s, x)
    show(torch.autograd.grad(s, x))
    x.grad = None
    y = x - 1
    y.retain_grad()
    y.register_hook(lambda g: g * 3)
    s = y.t().sum()
    s.backward()
    attempt(s.backward)
    show(x.grad, y.grad)
    y = x.sum(1)
    s = (y * y).sum()
    s.backward()
    attempt(lambda: y.sum().backward())        # y's node saved nothing, the product did
    attempt(s.backward)
    y = x + 1
    g, = torch.autograd.grad((y * y).sum(), x, create_graph=True)
    g.sum().backward()
    attempt(lambda: g.sum().backward())
    show(x.grad)


def test_second_backward_programs_match_pytorch():
    run_both(twice_program, {"x": np.array([[0.3, -1.2], [2.0, 0.7]])})


def changed_program(torch, show, data):
    """Composites that save nothing, their leaf and constant operands changed in place
    between the two backwards (PyTorch's nodes read neither), a hook, and a new node on
    them after the first backward."""
    F = torch.nn.functional
    x = torch.tensor(data["x"], requires_grad=True)
    end, mat = torch.tensor(data["end"]), torch.tensor(data["mat"])
    losses = [torch.lerp(x, end, 0.25).sum(), torch.addmm(x, mat, mat, beta=2.0).sum(),
              torch.addcmul(x, mat, end, value=0.5).sum(), torch.diag_embed(x).sum(),
              F.interpolate(x[None, None], scale_factor=2, mode="bicubic").sum(),
              torch.einsum("ii->i", x).sum(), F.pad(x, (1, 0), value=2.0).sum()]
    for loss in losses:
        loss.backward()
        show(x.grad)
        with torch.no_grad():
            x.mul_(1.5)
            end.add_(1.0)
            mat.mul_(-2.0)
        loss.backward()
        show(x.grad)
        x.grad = None
    y = F.interpolate(x[None, None], size=(3, 3), mode="bilinear")
    y.register_hook(lambda g: g * 3)
    y.sum().backward()
    (y * y).sum().backward()  # a new node on the one that saved nothing
    show(x.grad)
    z = x.rot90()
    (z * z).sum().backward()
    try:
        z.sum().backward()     # rot90 saved nothing: runs
        (z * z).sum().backward()
    except RuntimeError as e:
        show("second time" in str(e))
    show(x.grad)


def test_second_backward_through_composites_after_changes_matches_pytorch():
    rng = np.random.default_rng(7)
    run_both(changed_program, {"x": rng.standard_normal((2, 2)),
                               "end": rng.standard_normal((2, 2)),
                               "mat": rng.standard_normal((2, 2))})


#: composites whose operands (``shown``) decide whether they save anything: their
#: ``grad_fn`` and its ``next_functions``, as PyTorch's
SHOWN = {
    "lerp": lambda L, x: L.lerp(x, L.ones(2, 2), 0.3),
    "lerp tensor weight": lambda L, x: L.lerp(x * 1, x, L.full((2, 2), 0.3)),
    "addmm": lambda L, x: L.addmm(x, L.ones(2, 2), x * 1, beta=2.0),
    "addmm of constants": lambda L, x: L.addmm(x, L.ones(2, 2), L.ones(2, 2)),
    "addcmul": lambda L, x: L.addcmul(x, L.ones(2, 2), x + 1),
    "addmv, addr": lambda L, x: L.addr(L.addmv(x[0], L.ones(2, 2), L.ones(2)), x[0], x[1]),
    "diag_embed, diag": lambda L, x: L.diag_embed(L.diag(x[0]) + 1, 1, 0, 2),
    "rot90, diagonal": lambda L, x: L.stack([x.rot90() + 1]).diagonal(0, 1, 2),
    "interpolate, adaptive_avg_pool": lambda L, x: L.nn.functional.adaptive_avg_pool2d(
        L.nn.functional.interpolate(x.reshape(1, 1, 2, 2), scale_factor=2, mode="bilinear"),
        1),
}


def _functions(fn, depth=2):
    if fn is None or not depth:
        return None
    return (fn.name().replace("torch::autograd::", ""),
            [_functions(f, depth - 1) for f, _ in fn.next_functions])


@pytest.mark.parametrize("name", list(SHOWN))
def test_composites_show_pytorchs_next_functions(name):
    want, got = (_functions(SHOWN[name](L, L.ones(2, 2, requires_grad=True)).grad_fn)
                 for L in (torch, sg))
    assert got == want


@pytest.mark.parametrize("equation, shapes", [("ii->i", [(2, 3)]), ("ij,jj->i", [(2, 3), (3, 2)]),
                                              ("i...i->...", [(3, 1, 2)])])
def test_einsum_diagonal_of_unequal_sizes_raises_as_pytorch(equation, shapes):
    """A repeated subscript taken as a diagonal (einsum's rewrite above) checks its sizes
    (a diagonal of a (2, 3) operand would be the first two elements, silently)."""
    errors = []
    for L in (torch, sg):
        with pytest.raises(RuntimeError) as caught:
            L.einsum(equation, *[L.ones(*s) for s in shapes])
        errors.append(str(caught.value))
    assert errors[1] == errors[0]


@pytest.mark.parametrize("grads", [(True, False, True), (False, True, False), (False, False, True)])
def test_linear_of_rows_with_bias_frees_its_factors_as_pytorch(grads):
    """F.linear of (N, L, E) rows with a bias (one node, named ViewBackward0, whose name is
    of a node that saves nothing) saves a factor when the other requires grad, as
    PyTorch's addmm: a second backward raises there (it ran); with only the bias
    requiring grad nothing is saved, and it accumulates again."""
    rng = np.random.default_rng(2)
    arrays = rng.standard_normal((2, 3, 4)), rng.standard_normal((5, 4)), rng.standard_normal(5)
    outs = []
    for lib in (torch, sg):
        ts = [lib.tensor(a, requires_grad=g) for a, g in zip(arrays, grads)]
        y = lib.nn.functional.linear(*ts).sum()
        y.backward()
        try:
            y.backward()
            outs.append([t.grad.numpy() for t in ts if t.requires_grad])
        except RuntimeError as e:
            outs.append(str(e)[:50])  # ("Trying to backward through the graph a second tim")
    if isinstance(outs[0], str):
        assert outs[1] == outs[0]
    else:
        for got, want in zip(outs[1], outs[0], strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-13)


@pytest.mark.parametrize("shapes", [((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 5)),
                                    ((2, 3, 4), (2, 4, 5)), ((3, 4), (2, 4, 5)),
                                    ((1, 3, 4), (2, 4, 5)), ((2, 3, 4), (4, 5)), "linear",
                                    "linear bias", "linear vector bias", "unbind"])
def test_product_node_names_are_pytorchs_and_still_save_their_factors(shapes):
    """grad_fn names of ``@`` (PyTorch's matmul: dot, mv, squeeze of mm, the view or copy
    that ends a product of stacks), F.linear of 3-D rows and unbind's parts (its
    next_functions the input), each with one or both operands requiring grad; the
    renamed products still save their factors: a second backward raises as PyTorch's
    (symgrad named them all MmBackward0, linear's AddBackward0)."""
    rng = np.random.default_rng(3)
    sa, sb = {"linear": ((2, 3, 4), (5, 4)), "linear bias": ((2, 3, 4), (5, 4)),
              "linear vector bias": ((2, 3, 4), (4,)), "unbind": ((2, 3), (3,))}.get(shapes, shapes)
    a, b, bias = rng.standard_normal(sa), rng.standard_normal(sb), rng.standard_normal(sb[:-1])
    found = []
    for L in (torch, sg):
        for grads in ((True, True), (True, False), (False, True)):
            x, w = (L.tensor(v, requires_grad=g) for v, g in zip((a, b), grads))
            y = L.nn.functional.linear(x, w, L.tensor(bias) if "bias" in shapes
                                       else None) if "linear" in shapes else \
                (x if grads[0] else w).unbind(0)[1] if shapes == "unbind" else x @ w
            found.append([y.grad_fn.name(), [f and type(f).__name__ for f, _ in
                                             y.grad_fn.next_functions]
                          if shapes == "unbind" else None])
            y.sum().backward()
            try:
                y.sum().backward()
                found.append("accumulated")
            except RuntimeError as e:
                found.append(str(e)[:40])
    assert found[:6] == found[6:]


def test_a_freed_graph_of_composites_goes_without_the_cycle_collector():
    # a composite's inner nodes point to its last node (Node.composite), whose inputs
    # lead back to them: backward's free drops that link, so a freed graph goes with its
    # last reference, as PyTorch's, not at the cycle collector's next pass
    import gc
    import weakref

    F = sg.nn.functional
    x, w = sg.randn(2, 2, 6, 6, requires_grad=True), sg.randn(3, 2, 3, 3, requires_grad=True)
    y = F.gelu(F.conv2d(x, w, padding=1))
    loss = F.mse_loss(y, sg.zeros_like(y))
    inner = weakref.ref(y._node.inputs[0])
    assert inner().composite is y._node  # (an inner node of gelu's composite)
    gc.disable()
    try:
        loss.backward()
        del y, loss
        assert inner() is None
    finally:
        gc.enable()
    assert x.grad is not None and w.grad is not None
