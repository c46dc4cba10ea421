"""PyTorch's rules, each run with real PyTorch and with symgrad and compared.

Scenarios written once as functions of the module (tests/torch_oracle.py runs
both and compares what they print): item assignment (plain, recorded on
results, refused on leaves that require grad), version counters and the
"modified by an inplace operation" error, dtype promotion and its errors,
``nn.Module`` bookkeeping (registration, ``state_dict``, ``load_state_dict``,
``train``/``eval``, printing), the losses and functions of
``nn.functional`` (a table of forms), optimizers' ``param_groups`` edits and
``state_dict`` round trips. Dropout and the initializers draw from numpy's
generator, not PyTorch's, so they are checked for their distributions instead.
"""

from __future__ import annotations

import copy
import functools
import math

import numpy as np
import pytest

import symgrad

torch_real = pytest.importorskip("torch")

from torch_oracle import (  # noqa: E402,F401 (a fixture)
    float64_default,
    run_both,
    show_error,
)
from torch_oracle import normal_data as _data  # noqa: E402

pytestmark = pytest.mark.filterwarnings("error::symgrad.autograd.KernelFallbackWarning")


def _error(show, fn, length=60):
    show_error(show, fn, length)


# ---------------------------------------------------------------------------
# item assignment


def item_assignment(torch, show, data):
    z = torch.zeros(3)
    z[0] = 5.0
    show(z, z._version, z.requires_grad)
    z[1:] = torch.tensor([1.0, 2.0])
    show(z, z._version)
    m = torch.tensor(data["m"])
    m[m > 0] = 0.0
    show(m)
    m[:, 1] = 7
    m[torch.tensor([2, 0])] = -1.0
    m[-1, ::2] = torch.tensor([3.0, 4.0])
    show(m, m._version)
    labels = torch.zeros(3, dtype=torch.int64)
    labels[1] = 2.7
    labels[2] = True
    show(labels)
    x = torch.tensor(data["x"], requires_grad=True)
    y = x * 2
    y[1] = 0.0
    show(y, y.is_leaf, y._version)
    show(y.grad_fn)
    y[:, 2] = x[:, 0] ** 2
    (y * torch.tensor(data["w"])).sum().backward()
    show(x.grad)
    z = torch.zeros(2, 3)
    z[0] = x[0] * 3
    show(z.requires_grad, z.is_leaf, z.grad_fn)
    z.sum().backward()
    show(x.grad)
    y = x.clone()
    y[y > 0] = 1.0
    y[0, 0] = x[1, 1] * x[1, 2]
    y.sum().backward()
    show(x.grad)

    def leaf_write():
        x[0, 0] = 1.0
    _error(show, leaf_write, 77)
    with torch.no_grad():
        x[0, 0] = 1.0
    show(x, x._version)


def test_item_assignment():
    run_both(item_assignment, _data(0, m=(3, 3), x=(2, 3), w=(2, 3)))


# ---------------------------------------------------------------------------
# version counters


def version_counters(torch, show, data):
    a = torch.tensor(data["x"])
    versions = [a._version]
    for op in (lambda: a.add_(1), lambda: a.mul_(2), lambda: a.sub_(a), lambda: a.zero_(),
               lambda: a.fill_(3), lambda: a.copy_(torch.ones(2, 3)), lambda: a.div_(2),
               lambda: a.clamp_(min=0), lambda: a.exp_()):
        op()
        versions.append(a._version)
    a += 1
    a -= 1
    a *= 2
    a /= 2
    versions.append(a._version)
    a.data.add_(1)  # .data has a version counter of its own
    versions.append(a._version)
    show(versions)
    x = torch.tensor(data["x"], requires_grad=True)
    needed = "one of the variables needed for gradient computation has been modified by an"

    def saved_output():
        y = x.exp()
        y.add_(1)
        y.sum().backward()

    def saved_input():
        y = x * 2
        z = y * y
        y.mul_(3)
        z.sum().backward()

    def sigmoid_twice():
        y = x.sigmoid()
        y.sigmoid_()
        y.sum().backward()

    for fn in (saved_output, saved_input, sigmoid_twice):
        _error(show, fn, len(needed))
    y = x * 2
    z = y * 3 + y  # nothing saves y: changing it is allowed
    y.add_(1)
    z.sum().backward()
    show(x.grad, y, y._version)
    x.grad = None
    y = x * 2
    y.clamp_(min=0.5)
    y.mul_(x)
    y.pow_(2)
    y.sum().backward()
    show(x.grad, y.grad_fn, y._version)


def test_version_counters():
    run_both(version_counters, _data(1, x=(2, 3)))


# ---------------------------------------------------------------------------
# dtypes


def dtypes(torch, show, data):
    i = torch.tensor([1, 2, 3])
    f = torch.tensor([0.5, 1.5, 2.5], dtype=torch.float32)
    b = torch.tensor([True, False, True])
    show(i.dtype, f.dtype, b.dtype, torch.get_default_dtype())
    show((i + f).dtype, (i * 2).dtype, (i / 2).dtype, (i + 2.5).dtype, (i > 1).dtype)
    show((f + torch.tensor(1.0)).dtype, (f * torch.tensor([1.0, 2.0, 3.0])).dtype)
    show((b + 1).dtype, b.sum().dtype, (i > 1).sum(), (f * i).dtype, (i * 1.0).dtype)
    show(i + f, i / 2, f.double(), i.float(), f.long(), b.long(), i.to(torch.float32))
    show(f.to(torch.float64).dtype, f.to(i).dtype, f.type(torch.DoubleTensor).type())
    show(torch.tensor([1.5, 2.5], dtype=torch.int64), torch.tensor([0, 1], dtype=torch.bool))
    show(torch.arange(4), torch.arange(4.0), torch.arange(0, 1, 0.5), torch.full((2,), 3))
    show(torch.zeros(2, dtype=torch.int64), torch.ones(2, dtype=torch.float32))
    show(isinstance(f, torch.FloatTensor), isinstance(i, torch.LongTensor),
         isinstance(f, torch.DoubleTensor))
    _error(show, lambda: torch.tensor([1, 2], requires_grad=True), 40)
    _error(show, lambda: i.requires_grad_(), 40)

    def widen():
        j = torch.tensor([1, 2])
        j += 1.5
    _error(show, widen, 11)
    w = torch.tensor(data["w"], dtype=torch.float32, requires_grad=True)
    (w * w).sum().backward()
    show(w.grad, w.grad.dtype)
    h = w.double() * 2
    h.sum().backward()
    show(w.grad, h.grad_fn)
    k = (w * torch.tensor([1, 2, 3])).sum()
    k.backward()
    show(k.dtype, w.grad)


def test_dtypes():
    run_both(dtypes, _data(2, w=(3,)))


def mixed_dtype_products_and_writes(torch, show, data):
    """float32 with float64 (or int64) in a matrix product, ``lerp`` or an index write:
    PyTorch's RuntimeError (numpy's rules promoted, or cast into ``self``); one dtype:
    the results, in place and not."""
    def a(*shape, dtype=torch.float32):
        return torch.tensor(data["x"].ravel()[:int(np.prod(shape))].reshape(shape), dtype=dtype)

    for other in (torch.float64, torch.int64, torch.float32):
        for fn in _mixed_calls(torch, a, functools.partial(a, dtype=other)):
            show_error(show, fn, 0, result=other is torch.float32)

    def ints(*shape):  # (-5..5: exact int64 products, which symgrad's float64 also gave)
        return torch.tensor((data["x"].ravel()[:int(np.prod(shape))] * 3).astype(np.int64)
                            .reshape(shape))
    for fn in _mixed_calls(torch, ints, ints)[:17]:  # the products, all of int64
        show_error(show, fn, 0, result=True)
    show(torch.kron(ints(3), ints(2)), torch.linalg.matrix_power(ints(2, 2), 3))
    # but lerp takes a 0-d weight of another dtype (refused before), its gradient in that one
    w = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)
    x = a(3).requires_grad_()
    y = torch.lerp(x, a(3) * -2, w)
    (y * a(3)).sum().backward()
    show(y, x.grad, w.grad, a(3).lerp_(a(3) * 4, torch.tensor(2)))


def _mixed_calls(torch, a, b):
    F = torch.nn.functional
    i, m = torch.tensor([0, 2]), torch.tensor([True, False, True])
    return (lambda: a(3, 4) @ b(4, 2), lambda: a(4) @ b(4), lambda: a(3, 4) @ b(4),
            lambda: a(4) @ b(4, 2), lambda: a(2, 3, 4) @ b(4, 2),
            lambda: b(3, 4) @ a(2, 4, 2), lambda: torch.mm(a(3, 4), b(4, 2)),
            lambda: torch.bmm(b(2, 3, 4), a(2, 4, 2)), lambda: torch.mv(a(3, 4), b(4)),
            lambda: torch.dot(b(4), a(4)), lambda: torch.matmul(a(3, 4), b(4, 2)),
            lambda: F.linear(a(2, 4), b(3, 4)), lambda: F.linear(a(2, 2, 4), b(3, 4)),
            lambda: F.linear(a(2, 4), a(3, 4), b(3)), lambda: torch.inner(a(4), b(4)),
            lambda: torch.addmm(b(3, 2), a(3, 4), a(4, 2)),
            lambda: torch.einsum("ij,jk->ik", a(3, 4), b(4, 2)),
            lambda: a(3).lerp_(b(3), 0.25), lambda: a(3).lerp(a(3), b(3)),
            lambda: torch.lerp(b(3), a(3), 0.75), lambda: a(3).index_add_(0, i, b(2)),
            lambda: b(3).index_add(0, i, a(2)), lambda: a(3).scatter_(0, i, b(2)),
            lambda: a(3).scatter(0, i, b(2)), lambda: a(3).scatter_add_(0, i, b(2)),
            lambda: b(3).scatter_add(0, i, a(2)),
            lambda: a(3).scatter_reduce(0, i, b(2), "amax"),
            lambda: a(3).index_copy_(0, i, b(2)), lambda: a(3).masked_scatter_(m, b(3)),
            lambda: a(3).index_put_((i,), b(2)), lambda: a(3).put_(i, b(2)))


def test_mixed_dtype_products_and_writes():
    run_both(mixed_dtype_products_and_writes, _data(4, x=(24,)), rtol=1e-5)  # (float32)
    with pytest.raises(RuntimeError, match="torch.float32 and torch.float64"):
        symgrad.ones(2, dtype=symgrad.float32) @ symgrad.ones(2, dtype=symgrad.float64)
    for lib in (torch_real, symgrad):  # products of two bool Tensors: PyTorch's error (they
        b = lib.ones(2, 2, dtype=lib.bool)  # counted in float64 here)
        for fn, args in ((lib.matmul, (b, b)), (lib.mm, (b, b)), (lib.mv, (b, b[0])),
                         (lib.dot, (b[0], b[0])), (lib.bmm, (b[None], b[None]))):
            with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
                fn(*args)


def reduction_arguments(torch, show, data):
    """A bool where a reduction takes its dim (``x.mean(True)`` reduced over dim 1), a
    keepdim or unbiased that is not a bool: PyTorch's TypeError; the forms it takes."""
    x = torch.tensor(data["x"])
    for name in ("sum", "mean", "prod", "amax", "amin", "argmax", "argmin", "logsumexp",
                 "all", "any", "max", "min", "median", "nanmedian", "mode", "nansum",
                 "nanmean", "std", "var", "norm", "cumsum", "softmax"):
        for args, kw in (((True,), {}), ((1, True), {}), ((), {"dim": True}), ((1, 1), {}),
                         ((1,), {"keepdim": 1}), ((True, True), {}), (((0, 1),), {}),
                         ((True,), {"keepdim": False}), ((), {"dim": False}),
                         (((True, 0),), {}), (([True],), {})):
            if name == "norm" and args and isinstance(args[0], (tuple, list)):
                continue  # (norm's first argument is p: not yet PyTorch's for a tuple)
            show_error(show, functools.partial(getattr(x, name), *args, **kw), 0, result=True)
    for fn in (lambda: x.std(1, True, True), lambda: x.var(0, 0), lambda: x.norm(2, True),
               lambda: x.kthvalue(2, True), lambda: x.kthvalue(2, 1, True),
               lambda: x.quantile(0.5, 1, 1), lambda: x.quantile(0.5, True),
               lambda: x.topk(True), lambda: x.topk(2, 1, 0), lambda: x.kthvalue(True),
               lambda: x.sort(0, 1), lambda: x.flatten(True), lambda: x.flip(True),
               lambda: x.flip((0, True)), lambda: x.flip((True,)), lambda: x.norm(dim=(True,)),
               lambda: x.sum(0, np.True_),
               lambda: x.topk(np.int64(2))[1].tolist(), lambda: x.flip([1]).tolist(),
               lambda: x.kthvalue(torch.tensor(2))[1].tolist(),
               lambda: x.flatten(np.int64(0)).tolist()):
        show_error(show, fn, 0, result=True)


def test_reduction_arguments():
    run_both(reduction_arguments, _data(3, x=(3, 4)))


# ---------------------------------------------------------------------------
# nn.Module bookkeeping


def modules(torch, show, data):
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3, bias=False)
            self.scale = nn.Parameter(torch.ones(3))
            self.register_buffer("offset", torch.zeros(3))
            self.not_registered = torch.ones(2)

        def forward(self, x):
            return self.lin(x) * self.scale + self.offset

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.layers = nn.ModuleList([nn.Linear(3, 4), nn.Linear(4, 2)])
            self.head = nn.Sequential(nn.ReLU(), nn.Dropout(0.0), nn.Softmax(dim=1))
            self.shared = self.layers[0]

        def forward(self, x):
            x = self.block(x)
            for layer in self.layers:
                x = torch.tanh(layer(x))
            return self.head(x)

    net = Net()
    show(net)
    show([name for name, _ in net.named_parameters()])
    show([name for name, _ in net.named_modules()])
    show([name for name, _ in net.named_children()], len(list(net.modules())))
    show(list(net.state_dict().keys()), [name for name, _ in net.named_buffers()])
    show(len(list(net.parameters())), len(list(net.parameters(recurse=False))))
    state = {k: torch.tensor(data[k]) if k in data else v for k, v in net.state_dict().items()}
    result = net.load_state_dict(state)
    show(result)
    x = torch.tensor(data["input"])
    out = net(x)
    out[:, 0].sum().backward()
    show(out, out.grad_fn)
    show([p.grad for p in net.parameters()])
    net.zero_grad()
    show([p.grad for p in net.parameters()])
    net.eval()
    show(net.training, net.block.training, net.head[1].training)
    net.train()
    show(net.training, net.head[1].training, len(net.head), net.head[2])
    partial = {k: v for k, v in state.items() if not k.startswith("layers")}
    show(net.load_state_dict(partial, strict=False))
    _error(show, lambda: net.load_state_dict(partial), 40)
    bad = dict(state, **{"block.scale": torch.ones(4)})
    _error(show, lambda: net.load_state_dict(bad), 40)

    def assign_tensor():
        net.block.scale = torch.ones(3)
    _error(show, assign_tensor, 50)
    net.block.scale = None
    show([name for name, _ in net.named_parameters()])
    del net.block.lin
    show(net.block)


def test_modules():
    data = _data(3, input=(5, 3), **{"block.lin.weight": (3, 3), "block.scale": (3,),
                                     "layers.0.weight": (4, 3), "layers.0.bias": (4,),
                                     "layers.1.weight": (2, 4), "layers.1.bias": (2,)})
    run_both(modules, data)


# ---------------------------------------------------------------------------
# nn.functional: a table of losses and functions


def _probabilities(rng, shape):
    p = rng.uniform(0.1, 1.0, shape)
    return p / p.sum(axis=1, keepdims=True)


FUNCTIONAL = {
    "cross_entropy": lambda F, x, t, p: F.cross_entropy(x, t),
    "cross_entropy sum": lambda F, x, t, p: F.cross_entropy(x, t, reduction="sum"),
    "cross_entropy none": lambda F, x, t, p: F.cross_entropy(x, t, reduction="none"),
    "cross_entropy weight": lambda F, x, t, p: F.cross_entropy(
        x, t, weight=x.new_tensor([0.2, 1.0, 3.0, 0.5])),
    "cross_entropy weight smoothing": lambda F, x, t, p: F.cross_entropy(
        x, t.masked_fill(t == 1, -100), weight=x.new_tensor([0.2, 1.0, 3.0, 0.5]),
        label_smoothing=0.2),
    "cross_entropy ignore_index": lambda F, x, t, p: F.cross_entropy(
        x, t.masked_fill(t == 1, -100), ignore_index=-100),
    "cross_entropy ignore_index=2": lambda F, x, t, p: F.cross_entropy(
        x, t, ignore_index=2, reduction="none"),
    "cross_entropy label_smoothing": lambda F, x, t, p: F.cross_entropy(x, t,
                                                                        label_smoothing=0.1),
    "cross_entropy probabilities": lambda F, x, t, p: F.cross_entropy(x, p),
    "cross_entropy probabilities smoothing": lambda F, x, t, p: F.cross_entropy(
        x, p, label_smoothing=0.2, reduction="sum"),
    "cross_entropy 1-d": lambda F, x, t, p: F.cross_entropy(x[0], t[0]),
    "cross_entropy k-dim": lambda F, x, t, p: F.cross_entropy(x.view(2, 3, 4).transpose(1, 2),
                                                              t.view(2, 3) % 4),
    "nll_loss": lambda F, x, t, p: F.nll_loss(F.log_softmax(x, dim=1), t),
    "nll_loss none": lambda F, x, t, p: F.nll_loss(x.log_softmax(1), t, reduction="none"),
    "mse_loss": lambda F, x, t, p: F.mse_loss(x, p),
    "mse_loss sum": lambda F, x, t, p: F.mse_loss(x, p, reduction="sum"),
    "l1_loss": lambda F, x, t, p: F.l1_loss(x, p),
    "smooth_l1_loss": lambda F, x, t, p: F.smooth_l1_loss(x, p * 3, beta=0.5),
    "binary_cross_entropy": lambda F, x, t, p: F.binary_cross_entropy(x.sigmoid(), p),
    "binary_cross_entropy weight": lambda F, x, t, p: F.binary_cross_entropy(
        x.sigmoid(), p, weight=p.detach() * 2, reduction="sum"),
    "binary_cross_entropy_with_logits": lambda F, x, t, p: F.binary_cross_entropy_with_logits(
        x, p),
    "bce_with_logits pos_weight": lambda F, x, t, p: F.binary_cross_entropy_with_logits(
        x, p, pos_weight=p[0].detach() * 3, reduction="none"),
    "softmax": lambda F, x, t, p: F.softmax(x, dim=1),
    "softmax implicit dim": lambda F, x, t, p: F.softmax(x, dim=None),
    "log_softmax dim=0": lambda F, x, t, p: F.log_softmax(x, 0),
    "relu": lambda F, x, t, p: F.relu(x), "tanh": lambda F, x, t, p: F.tanh(x),
    "sigmoid": lambda F, x, t, p: F.sigmoid(x),
    "leaky_relu": lambda F, x, t, p: F.leaky_relu(x, 0.2), "elu": lambda F, x, t, p: F.elu(x),
    "softplus": lambda F, x, t, p: F.softplus(x * 8, beta=2.0, threshold=5.0),
    "hardtanh": lambda F, x, t, p: F.hardtanh(x), "relu6": lambda F, x, t, p: F.relu6(x * 9),
    "linear": lambda F, x, t, p: F.linear(x, p, p[:, 0]),
    "linear no bias": lambda F, x, t, p: F.linear(x, p[:3]),
    "dropout eval": lambda F, x, t, p: F.dropout(x, 0.5, training=False),
    "one_hot": lambda F, x, t, p: F.one_hot(t, 4),
}


def functional_case(torch, show, data, name):
    x = torch.tensor(data["x"], requires_grad=True)
    t = torch.tensor(data["t"])
    p = torch.tensor(data["p"], requires_grad=True)
    out = FUNCTIONAL[name](torch.nn.functional, x, t, p)
    show(out)
    if out.requires_grad:
        out.backward(torch.tensor(data["ct"][:out.numel()].reshape(tuple(out.shape))))
        show(x.grad, p.grad)


@pytest.mark.parametrize("name", sorted(FUNCTIONAL))
def test_functional_against_pytorch(name):
    rng = np.random.default_rng(4)
    data = {"x": rng.standard_normal((6, 4)) * 2, "t": rng.integers(0, 4, 6),
            "p": _probabilities(rng, (6, 4)), "ct": rng.uniform(-1, 1, 64)}
    run_both(functional_case, data, name=name)


def loss_modules(torch, show, data):
    nn = torch.nn
    x = torch.tensor(data["x"], requires_grad=True)
    t = torch.tensor(data["t"])
    p = torch.tensor(data["p"])
    losses = [nn.CrossEntropyLoss(), nn.CrossEntropyLoss(reduction="none", label_smoothing=0.3),
              nn.NLLLoss(reduction="sum"), nn.MSELoss(), nn.L1Loss(reduction="sum"),
              nn.BCELoss(), nn.BCEWithLogitsLoss(pos_weight=torch.tensor([1.0, 2.0, 3.0, 4.0]))]
    inputs = [x, x, x.log_softmax(1), x, x, x.sigmoid(), x]
    targets = [t, t, t, p, p, p, p]
    for loss, inp, target in zip(losses, inputs, targets):
        value = loss(inp, target)
        show(loss, value, value.grad_fn)
        value.sum().backward()
        show(x.grad)


def test_loss_modules():
    rng = np.random.default_rng(5)
    run_both(loss_modules, {"x": rng.standard_normal((5, 4)), "t": rng.integers(0, 4, 5),
                            "p": _probabilities(rng, (5, 4))})


# ---------------------------------------------------------------------------
# optimizers: param_groups edits, state_dict round trips, printing


def optimizer_state(torch, show, data, name, options):
    w = torch.tensor(data["w"], requires_grad=True)
    b = torch.tensor(data["b"], requires_grad=True)
    make = getattr(torch.optim, name)
    opt = make([{"params": [w]}, {"params": [b], "lr": 0.01}], **options)
    show(opt)

    def step():
        opt.zero_grad()
        loss = ((w * torch.tensor(data["x"])).sum(1) + b).pow(2).mean()
        loss.backward()
        opt.step()
        return loss

    for _ in range(3):
        show(step())
    opt.param_groups[0]["lr"] *= 0.5
    show(step(), w, b)
    saved = copy.deepcopy(opt.state_dict())  # state_dict() shares the state's tensors
    show(saved["param_groups"], sorted(saved["state"]))
    w2 = torch.tensor(w.detach().numpy().copy(), requires_grad=True)
    b2 = torch.tensor(b.detach().numpy().copy(), requires_grad=True)
    opt2 = make([{"params": [w2]}, {"params": [b2], "lr": 0.01}], **options)
    opt2.load_state_dict(saved)
    for _ in range(2):
        step()
        opt2.zero_grad()
        loss = ((w2 * torch.tensor(data["x"])).sum(1) + b2).pow(2).mean()
        loss.backward()
        opt2.step()
    show(w, w2, b, b2)
    opt.zero_grad(set_to_none=False)
    show(w.grad, opt.step(closure=lambda: ((w * 2).sum() + b.sum()).detach()))


@pytest.mark.parametrize("name, options", [
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
    ("Adam", {"lr": 0.05, "amsgrad": True}),
    ("AdamW", {"lr": 0.05, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.02, "momentum": 0.5, "centered": True}),
], ids=str)
def test_optimizer_param_groups_and_state_dict(name, options):
    run_both(optimizer_state, _data(6, w=(3,), b=(1,), x=(4, 3)), name=name, options=options)


def test_optimizer_refusals_match_pytorch():
    for torch in (torch_real, symgrad):
        w = torch.ones(2, requires_grad=True)
        with pytest.raises(ValueError, match="Nesterov momentum requires"):
            torch.optim.SGD([w], lr=0.1, nesterov=True)
        with pytest.raises(ValueError, match="Invalid learning rate"):
            torch.optim.Adam([w], lr=-1.0)
        with pytest.raises(ValueError, match="empty parameter list"):
            torch.optim.SGD([], lr=0.1)
        with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
            torch.optim.SGD([w * 2], lr=0.1)


@pytest.mark.parametrize("name, key, value", [
    ("Adam", "amsgrad", True), ("AdamW", "amsgrad", True),
    ("RMSprop", "momentum", 0.9), ("RMSprop", "centered", True)])
def test_a_buffer_turned_on_mid_training_is_pytorchs_key_error(name, key, value):
    """PyTorch creates amsgrad's and RMSprop's buffers on a parameter's first step only:
    turning the option on later raises its KeyError, the parameter unchanged (symgrad
    made zeros and stepped on)."""
    seen = []
    for torch in (torch_real, symgrad):
        w = torch.tensor([1.0, -2.0], requires_grad=True)
        opt = getattr(torch.optim, name)([w], lr=0.1)
        (w * w).sum().backward()
        opt.step()
        opt.param_groups[0][key] = value
        with pytest.raises(KeyError) as error:
            opt.step()
        seen.append((str(error.value), w.detach().numpy().tolist()))
    assert seen[0] == seen[1]


# ---------------------------------------------------------------------------
# dropout and the initializers: distributions (numpy's generator, not PyTorch's)


def test_dropout_zeroes_a_fraction_p_and_scales_the_rest():
    symgrad.manual_seed(0)
    x = symgrad.ones(200, 100, requires_grad=True)
    drop = symgrad.nn.Dropout(0.3)
    out = drop(x)
    kept = out.detach().numpy() != 0
    assert abs(kept.mean() - 0.7) < 0.01  # 20000 draws: 4 standard deviations
    assert np.allclose(out.detach().numpy()[kept], 1 / 0.7)
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.where(kept, 1 / 0.7, 0.0))
    assert type(out.grad_fn).__name__ == "NativeDropoutBackward0"
    symgrad.manual_seed(0)
    again = drop(symgrad.ones(200, 100))
    np.testing.assert_array_equal(again.numpy() != 0, kept)  # seeded: the same mask
    generator = symgrad.Generator().manual_seed(5)
    a = symgrad.nn.functional.dropout(symgrad.ones(50), 0.5, generator=generator)
    b = symgrad.nn.functional.dropout(symgrad.ones(50), 0.5,
                                      generator=symgrad.Generator().manual_seed(5))
    assert a.equal(b)
    drop.eval()
    assert drop(x) is x and repr(drop) == "Dropout(p=0.3, inplace=False)"
    assert (symgrad.nn.Dropout(1.0)(symgrad.ones(3)) == 0).all()


def test_rrelu_in_training_draws_slopes_uniformly_and_reproducibly():
    """Training-mode rrelu: each negative element scaled by a slope uniform in [lower,
    upper] from the default generator (so its law is PyTorch's, checked on PyTorch's own
    samples too; the streams differ), positives kept, the gradient the slope."""
    lower, upper = 0.1, 0.4
    slopes = []
    for torch, seed in ((symgrad, 3), (torch_real, 3)):
        torch.manual_seed(seed)
        x = torch.full((20000,), -1.0, dtype=torch.float64, requires_grad=True)
        out = torch.nn.functional.rrelu(x, lower, upper, training=True)
        out.sum().backward()
        s = -out.detach().numpy()
        np.testing.assert_array_equal(x.grad.numpy(), s)
        assert _uniform_ks(s - (lower + upper) / 2, (upper - lower) / 2) < 0.015
        slopes.append(s)
    symgrad.manual_seed(3)
    again = symgrad.nn.RReLU(lower, upper)(-symgrad.ones(20000))
    np.testing.assert_array_equal(-again.numpy(), slopes[0])  # seeded: the same slopes
    x = symgrad.tensor([2.0, 0.0, -1.0])
    assert symgrad.nn.functional.rrelu(x, training=True)[:2].tolist() == [2.0, 0.0]


def _uniform_ks(values, bound):
    """Kolmogorov-Smirnov distance of ``values`` from uniform(-bound, bound)."""
    v = np.sort(values.ravel())
    cdf = (v + bound) / (2 * bound)
    n = v.size
    return max(np.max(np.arange(1, n + 1) / n - cdf), np.max(cdf - np.arange(n) / n))


def test_linear_starts_from_pytorchs_distribution():
    """Kaiming-uniform with a = sqrt(5): uniform in +-1/sqrt(fan_in), for weight and bias,
    as PyTorch's own Linear (whose samples are checked the same way)."""
    symgrad.manual_seed(1)
    torch_real.manual_seed(1)
    for torch in (symgrad, torch_real):
        layer = torch.nn.Linear(250, 400)
        bound = 1 / math.sqrt(250)
        for p in (layer.weight, layer.bias):
            values = p.detach().numpy()
            assert np.abs(values).max() <= bound
            assert _uniform_ks(values, bound) < 1.63 / math.sqrt(values.size) + 0.02, torch
    assert symgrad.nn.Linear(2, 3).weight.dtype == symgrad.float64
    assert symgrad.nn.Linear(2, 3, dtype=symgrad.float32).bias.dtype == symgrad.float32


@pytest.mark.parametrize("name, kwargs", [
    ("xavier_uniform_", {}), ("xavier_uniform_", {"gain": 2.0}), ("xavier_normal_", {}),
    ("kaiming_uniform_", {}), ("kaiming_uniform_", {"mode": "fan_out",
                                                    "nonlinearity": "relu"}),
    ("kaiming_normal_", {"a": 0.1}), ("normal_", {"std": 0.02}), ("uniform_", {"a": -2, "b": 1}),
    ("trunc_normal_", {"std": 1.0, "a": -1.0, "b": 1.5}), ("orthogonal_", {"gain": 1.5}),
])
def test_initializers_draw_from_pytorchs_distributions(name, kwargs):
    """Mean, standard deviation and range of 60000 draws against PyTorch's own draws."""
    stats = []
    for torch in (torch_real, symgrad):
        torch.manual_seed(2)
        t = torch.empty(200, 300)
        getattr(torch.nn.init, name)(t, **kwargs)
        v = t.detach().numpy()
        stats.append((v.mean(), v.std(), v.min(), v.max()))
    (m1, s1, lo1, hi1), (m2, s2, lo2, hi2) = stats
    assert abs(m1 - m2) < 5 * s1 / math.sqrt(60000) + 1e-12
    assert abs(s1 - s2) < 0.02 * s1
    if name == "orthogonal_":  # rows orthogonal, of length gain
        v = t.detach().numpy()
        np.testing.assert_allclose(v @ v.T, kwargs["gain"] ** 2 * np.eye(200), atol=1e-12)
    elif not name.endswith("normal_"):  # the range of a uniform distribution
        assert abs(lo1 - lo2) < 0.1 * s1 and abs(hi1 - hi2) < 0.1 * s1


def test_init_helpers_equal_pytorchs():
    for args in (("relu",), ("tanh",), ("leaky_relu", 0.2), ("sigmoid",), ("selu",)):
        assert symgrad.nn.init.calculate_gain(*args) == torch_real.nn.init.calculate_gain(*args)
    for shape in ((3, 5), (4, 2, 3, 3)):
        assert symgrad.nn.init._calculate_fan_in_and_fan_out(symgrad.empty(*shape)) == \
            torch_real.nn.init._calculate_fan_in_and_fan_out(torch_real.empty(*shape))
    w = symgrad.nn.init.eye_(symgrad.empty(2, 3))
    assert w.tolist() == torch_real.nn.init.eye_(torch_real.empty(2, 3)).tolist()
    assert symgrad.nn.init.constant_(symgrad.empty(2), 0.5).tolist() == [0.5, 0.5]


def test_alpha_scales_the_other_operand_in_the_result_dtype():
    """add/sub(alpha=) and add_/sub_ compute alpha * other in the promoted dtype, as PyTorch
    (int8 + 2 * uint8 is int16 arithmetic; 2 * uint8 wrapped in uint8 before; a float32
    other of a float64 tensor is scaled in float64)."""
    outs = []
    for L in (symgrad, torch_real):
        u = L.tensor([200, 3, 255, 0], dtype=L.uint8)
        i = L.tensor([-100, 7, -1, 127], dtype=L.int8)
        f, g = L.tensor([1.0, 2.0], dtype=L.float64), L.tensor([0.1, 0.3], dtype=L.float32)
        j, h = i.to(L.int16), f.clone()
        j.add_(u, alpha=2)
        h.sub_(g, alpha=0.1)
        outs.append([i.add(u, alpha=2), L.add(i, u, alpha=2), i.sub(u, alpha=2),
                     u.add(i, alpha=3), f.add(g, alpha=0.1), j, h])
    for got, want in zip(*outs):
        assert str(got.dtype) == str(want.dtype)
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_integer_reductions_in_a_narrower_dtype_wrap_as_pytorchs():
    """sum/prod/cumsum(dtype=uint8/int8/int16/int32) accumulate in that dtype, wrapping
    around, and return it (they returned the exact int64 number: 307 for 51)."""
    outs = []
    for L in (symgrad, torch_real):
        a = L.tensor([200, 100, 7], dtype=L.uint8)
        b = L.tensor([[100, 100, 7], [-128, 127, 3]], dtype=L.int8)
        outs.append([a.sum(dtype=L.uint8), a.sum(0, dtype=L.uint8), b.sum(dtype=L.int8),
                     b.sum(1, keepdim=True, dtype=L.int8), a.cumsum(0, dtype=L.uint8),
                     b.prod(dtype=L.int8), b.prod(1, dtype=L.int16), a.sum(dtype=L.int16),
                     L.sum(a, dtype=L.uint8), b.cumsum(1, dtype=L.int32), b.sum()])
    for got, want in zip(*outs):
        assert str(got.dtype) == str(want.dtype)
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_nan_in_threshold_sort_topk_and_sign_as_pytorchs():
    """A NaN stays NaN through F.threshold, ranks largest in sort(descending) and topk,
    and has sign 0 (they dropped it, skipped it, or gave nan)."""
    x = np.array([3.0, np.nan, 1.0, np.inf, -1.0, np.nan, 2.0])
    outs = []
    for L in (symgrad, torch_real):
        t = L.tensor(x)
        outs.append([L.nn.functional.threshold(t, 1.5, -1.0), t.sort(descending=True)[1],
                     t.sort()[1], t.topk(3)[1], t.topk(3, largest=False)[1], t.sign(),
                     L.sign(t), t.topk(2)[0]])
    for got, want in zip(*outs):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


_NAN_GRADIENTS = {  # (PyTorch's gradient at a NaN; hardtanh, relu6, hardshrink, softshrink:
    # its vectorized loop's, which 64 elements fill: its scalar tail passes the gradient)
    "clamp": lambda L, x, lo, hi: x.clamp(-1.0, 1.0),
    "clamp min": lambda L, x, lo, hi: x.clamp(min=-1.0),
    "clamp_max": lambda L, x, lo, hi: x.clamp_max(1.0),
    "clip": lambda L, x, lo, hi: L.clip(x, -1.0, 1.0),
    "clamp tensors": lambda L, x, lo, hi: x.clamp(lo, hi),
    "clamp_min tensor": lambda L, x, lo, hi: L.clamp_min(x, lo),
    "clamp_max tensor": lambda L, x, lo, hi: x.clamp(max=hi),
    "clamp_": lambda L, x, lo, hi: (x * 1.0).clamp_(-1.0, 1.0),
    "hardtanh": lambda L, x, lo, hi: L.nn.functional.hardtanh(x),
    "relu6": lambda L, x, lo, hi: L.nn.functional.relu6(x),
    "abs": lambda L, x, lo, hi: x.abs() + L.abs(x) + abs(x),
    "abs, NaN gradient": lambda L, x, lo, hi: x.abs().sqrt(),  # (g * sgn(nan): NaN)
    "hardshrink": lambda L, x, lo, hi: L.nn.functional.hardshrink(x),
    "softshrink": lambda L, x, lo, hi: L.nn.functional.softshrink(x),
    "hardsigmoid": lambda L, x, lo, hi: L.nn.functional.hardsigmoid(x),
    "max": lambda L, x, lo, hi: x.max(),
    "min": lambda L, x, lo, hi: L.min(x),
    "amax": lambda L, x, lo, hi: x.amax(),
    "amin dim": lambda L, x, lo, hi: x.reshape(8, 8).amin(1),
    "max dim": lambda L, x, lo, hi: x.reshape(8, 8).max(0)[0],
    "maximum": lambda L, x, lo, hi: L.maximum(x, lo),
    "minimum": lambda L, x, lo, hi: x.minimum(hi),
    "max other": lambda L, x, lo, hi: L.max(lo, x),
    "min broadcast": lambda L, x, lo, hi: L.min(x.reshape(8, 8), hi[:8]),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", list(_NAN_GRADIENTS))
def test_gradients_at_nan_as_pytorchs(name, dtype):
    """PyTorch's derivative of clamp (bounds too), abs, hardtanh... at a NaN is 0,
    max() shares the gradient among the NaNs, and maximum(a, b) gives it to both: symgrad
    passed it on, gave NaN (sign's, or max's ties) everywhere, or gave it to neither."""
    rng = np.random.default_rng(5)
    x, lo, hi = rng.uniform(-3, 3, 64), rng.uniform(-2, 0, 64), rng.uniform(0, 2, 64)
    x[[0, 9, 10, 40]] = np.nan
    x[[3, 4]] = 1.0
    lo[[10, 11, 12]] = np.nan
    hi[[30, 31]] = np.nan
    outs = []
    for L in (torch_real, symgrad):
        xt, lot, hit = (L.tensor(a, dtype=getattr(L, dtype), requires_grad=True)
                        for a in (x, lo, hi))
        y = _NAN_GRADIENTS[name](L, xt, lot, hit)
        y.backward(L.ones_like(y) * 2.0)
        outs.append([y.detach()] + [t.grad for t in (xt, lot, hit)])
    for got, want in zip(*outs):
        assert (got is None) == (want is None)
        if want is not None:
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_hardswish_at_and_below_minus_three_is_pytorchs_x_times_zero():
    """hardswish(x) is x * relu6(x + 3) / 6: -0.0 at and below -3 and NaN at -inf, as
    PyTorch's (symgrad gave 0.0 and 0); its gradient there stays 0."""
    x = np.array([-np.inf, -5.0, -3.0, -1.0, 0.0, 2.0, 4.0, np.inf])
    outs = []
    for L in (torch_real, symgrad):
        t = L.tensor(x, requires_grad=True)
        y = L.nn.functional.hardswish(t)
        y.backward(L.ones_like(y))
        outs.append((y.detach().numpy(), t.grad.numpy()))
    (want, want_g), (got, got_g) = outs
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got[1:]), np.signbit(want[1:]))
    np.testing.assert_allclose(got_g, want_g, rtol=1e-15)


@pytest.mark.parametrize("name, kw", [("elu", {}), ("elu", {"alpha": 0.5}), ("selu", {}),
                                      ("celu", {"alpha": 2.0})])
def test_elu_family_second_derivative_at_zero_is_pytorchs(name, kw):
    """At an input of exactly 0 the ELU family's first derivative is the negative side's
    and its second 0, as PyTorch's double backward (its mask is x < 0; symgrad's expm1
    gave alpha there); elsewhere both are expm1's."""
    x = np.array([0.0, -0.0, -1.0, 1.0, -3.0])
    outs = []
    for L in (torch_real, symgrad):
        t = L.tensor(x, requires_grad=True)
        y = getattr(L.nn.functional, name)(t, **kw)
        g, = L.autograd.grad(y.sum(), t, create_graph=True)
        gg, = L.autograd.grad((g * L.arange(5.0)).sum(), t)
        outs.append([y.detach().numpy(), g.detach().numpy(), gg.numpy()])
    for got, want in zip(outs[1], outs[0]):
        np.testing.assert_allclose(got, want, rtol=1e-14)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_a_python_bool_is_the_lowest_category_as_in_pytorch():
    """``int8 * True`` stays int8 (and ``+``, ``**``, ``//``, ``%``, ``&``, ``/``, the
    reflected forms, ``torch.mul``/``add``): a Python bool is below every tensor dtype; it
    was made 1.0 first and gave float64. ``x - True`` is refused, as by PyTorch."""
    exprs = ("a * True", "a + True", "True * a", "True + a", "a * False", "b * True",
             "m * True", "m + True", "z * True", "z + False", "a / True", "a ** True",
             "a // True", "a % True", "True // a", "a & True", "True / a", "u + True",
             "L.mul(a, True)", "L.add(a, True)", "d * True", "a == True",
             "m ** True", "m ** False", "m[0] ** True", "m ** 2", "m ** L.tensor(2)")
    for e in exprs:
        outs = []
        for L in (symgrad, torch_real):
            env = dict(L=L, a=L.tensor([1, 2], dtype=L.int8), u=L.tensor([200, 3], dtype=L.uint8),
                       b=L.tensor([1.0, 2.0], dtype=L.float32), d=L.tensor([0.5, 1.5]),
                       m=L.tensor([True, False]), z=L.tensor(3, dtype=L.int16))
            r = eval(e, {}, env)  # noqa: S307 -- the expressions above
            outs.append((str(r.dtype), r.tolist()))
        assert outs[0] == outs[1], e
    for e in ("a - True", "True - a", "d - False", "L.sub(a, True)"):
        for L in (symgrad, torch_real):
            env = dict(L=L, a=L.tensor([1, 2], dtype=L.int8), d=L.tensor([0.5, 1.5]))
            with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with a bool"):
                eval(e, {}, env)  # noqa: S307
    for e in ("m ** m", "m ** L.tensor(True)", "True ** m", "m[0] ** m"):  # bools' pow
        for L in (symgrad, torch_real):
            with pytest.raises(NotImplementedError, match="\"pow\" not implemented for 'Bool'"):
                eval(e, {}, dict(L=L, m=L.tensor([True, False])))  # noqa: S307


def test_ldexp_gradient_with_a_negative_integer_exponent_is_two_to_the_exponent():
    """d/dx ldexp(x, e) = 2**e, also for a negative integer e: PyTorch 2.13 gives 0 there
    (its 2**e in integers), so the oracle is the formula (and PyTorch's float exponent)."""
    x = symgrad.tensor([3.0, -1.5, 0.25], requires_grad=True)
    e = symgrad.tensor([-1, -3, 2])
    out = x.ldexp(e)
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2.0 ** e.numpy())
    np.testing.assert_array_equal(out.detach().numpy(), x.detach().numpy() * 2.0 ** e.numpy())
    t = torch_real.tensor([3.0, -1.5, 0.25], requires_grad=True)
    torch_real.ldexp(t, torch_real.tensor([-1.0, -3.0, 2.0])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


def test_half_sum_and_mean_accumulate_in_float32_as_pytorchs():
    """float16 ``sum`` and ``mean`` (all elements, a dim, dims, keepdim) are PyTorch's bits:
    summed in float32 and rounded once (in float16 about half of the means were off); the
    gradient of the mean too."""
    rng = np.random.default_rng(3)
    for _ in range(60):
        shape = tuple(rng.integers(1, 30, size=rng.integers(1, 4)))
        a = (rng.standard_normal(shape) * rng.choice([1.0, 30.0, 1000.0])).astype(np.float16)
        dims = [None, *range(len(shape)), *([(0, len(shape) - 1)] if len(shape) > 1 else [])]
        dim = dims[rng.integers(len(dims))]
        kw = {} if dim is None else {"dim": dim, "keepdim": bool(rng.integers(2))}
        outs = []
        for L in (torch_real, symgrad):
            t = L.tensor(a, requires_grad=True)
            mean = t.mean(**kw)
            mean.backward(L.ones_like(mean))
            outs.append([t.sum(**kw), mean, t.grad])
        for want, got in zip(*outs):
            assert got.dtype == symgrad.float16 and str(want.dtype) == "torch.float16"
            np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())


def test_half_sinc_addcmul_addcdiv_compute_in_float32_as_pytorchs():
    """float16 sinc, addcmul and addcdiv are computed in float32 and rounded once, as
    PyTorch's CPU kernels (rounded after each step, sinc(-1) was 3e-4, not -0, and a third
    of addcmul's results were an ulp off); logit stays in half steps, as PyTorch's."""
    rng = np.random.default_rng(0)
    a, b, c = rng.uniform(-4, 4, 2000), rng.uniform(0.02, 0.98, 2000), rng.uniform(1.1, 5, 2000)
    outs = []
    for L in (symgrad, torch_real):
        x, y, z = (L.tensor(v).half() for v in (a, b, c))
        outs.append([(x * 4).round().sinc(), x.sinc(), x.addcmul(y, z, value=0.3),
                     L.addcdiv(x, y, z, value=-2.1), y.logit()])
    for got, want in zip(*outs):
        assert str(got.dtype) == str(want.dtype) == "torch.float16"
        g, w = got.float().numpy(), want.float().numpy()
        assert (g != w).sum() <= 2  # (PyTorch's vectorized float32 may differ in one ulp)
        np.testing.assert_allclose(g, w, rtol=1e-3, atol=1e-7)


def test_as_tensor_keeps_a_tensors_graph_and_shares_a_numpy_arrays_memory():
    """as_tensor(t) is t itself (as_tensor(t, dtype=) a differentiable cast) and
    as_tensor(ndarray) shares its memory, as PyTorch's (it was tensor(): a detached copy,
    so as_tensor(x * 2) gave x no gradient)."""
    outs = []
    for L in (symgrad, torch_real):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y, z = L.as_tensor(x * 2), L.as_tensor(x * 3, dtype=L.float32)
        (y.sum() + z.sum()).backward()
        a, b = np.arange(3.0), np.arange(3, dtype=np.int32)
        c = np.arange(3, dtype=np.float32)
        ta, tb, tc = L.as_tensor(a), L.as_tensor(b), L.as_tensor(c, dtype=L.float64)
        a[0] = b[0] = c[0] = 5
        outs.append([x.grad, z, ta, tb, tc, L.tensor([L.as_tensor(x) is x])])
    for got, want in zip(*outs):
        assert str(got.dtype) == str(want.dtype)
        np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())


def test_inference_mode_records_no_graph_as_pytorch():
    """torch.inference_mode (block, call, bare decorator, mode=False) as PyTorch's grad mode
    (it was an AttributeError)."""
    def program(torch):
        out, x = [], torch.ones(2, requires_grad=True)
        with torch.inference_mode():
            out.append(((x * 2).requires_grad, torch.is_inference_mode_enabled()))
            with torch.inference_mode(False):
                out.append(((x * 2).requires_grad, torch.is_inference_mode_enabled()))
        with torch.no_grad(), torch.inference_mode(False):
            out.append(torch.is_grad_enabled())
        f = torch.inference_mode()(lambda: (x * 3).requires_grad)
        g = torch.inference_mode(lambda: torch.is_grad_enabled())
        out.append((f(), g(), torch.is_grad_enabled(), torch.is_inference_mode_enabled()))
        return out

    assert program(symgrad) == program(torch_real)


def test_a_0d_integer_tensor_wraps_into_the_dtype_it_is_compared_in_and_divides():
    """uint8 < tensor(-3) compares in uint8 (253), as PyTorch (all False before: the
    exact int64 comparison), clamp too; u8 //= tensor(-3) and %= compute in uint8 (numpy's
    int64 gave 255); x //= a bool tensor with a False is PyTorch's ZeroDivisionError (it
    silently gave 0)."""
    outs = []
    for L in (symgrad, torch_real):
        u = L.tensor([3, 250, 2], dtype=L.uint8)
        i = L.tensor([3, -7, 100], dtype=L.int8)
        q, r = u.clone(), u.clone()
        q //= L.tensor(-3)
        r %= L.tensor(-3)
        outs.append([u < L.tensor(-3), u > L.tensor(300), i < L.tensor(200),
                     i == L.tensor(-253), u.clamp(min=L.tensor(-1)), q, r])
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            j = L.tensor([3, -7, 2])
            j //= L.tensor([True, False, True])
    for got, want in zip(*outs):
        assert str(got.dtype) == str(want.dtype)
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_add_with_alpha_is_pytorchs_fused_multiply_add():
    """``a.add(b, alpha=)``, ``sub``, ``add_``/``sub_`` (unrecorded) and SGD's update round
    ``a + alpha * b`` once, as PyTorch's CPU kernel (an FMA): two roundings differed in the
    last bit in ~18% of elements, float32 and float64. The oracle for the emulation is
    exact rational arithmetic; for the operations, PyTorch's bits."""
    from fractions import Fraction

    from symgrad.eager.bf16 import fma
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal(300) * 10.0 ** rng.integers(-6, 6, 300) for _ in range(2))
    exact = [float(Fraction(x) + Fraction(0.3) * Fraction(y)) for x, y in zip(a, b)]
    np.testing.assert_array_equal(fma(a, 0.3, b), exact)
    for dtype in ("float32", "float64"):
        x, y = a.astype(dtype), b.astype(dtype)
        outs = []
        for L in (symgrad, torch_real):
            s, t = L.tensor(x), L.tensor(y)
            u = s.clone()
            u.add_(t, alpha=0.3)
            u.sub_(t, alpha=-1.7)
            p = L.tensor(x, requires_grad=True)
            opt = L.optim.SGD([p], lr=0.037, momentum=0.9, weight_decay=0.01, nesterov=True)
            for _ in range(3):
                p.grad = t.clone()
                opt.step()
            outs.append([s.add(t, alpha=0.3), L.sub(s, t, alpha=0.7), u, p.detach()])
        for got, want in zip(*outs):
            assert str(got.dtype) == str(want.dtype)
            np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_add_with_alpha_of_a_number_or_0d_tensor_is_pytorchs_fused_multiply_add():
    """A Python number or a 0-d float tensor as ``other`` is taken in the tensor's dtype and
    ``a + alpha * other`` rounded once, as PyTorch's kernel (it was ``alpha * other`` in
    float64, rounded, then added: an ulp off PyTorch in about half the float32 elements).
    320 elements: a multiple of PyTorch's vector loop, whose scalar tail rounds twice."""
    x = np.random.default_rng(4).standard_normal(320)
    for dtype in ("float32", "float64"):
        outs = []
        for L in (symgrad, torch_real):
            s = L.tensor(x.astype(dtype))
            u = s.clone()
            u.add_(1.7, alpha=3)
            u.sub_(L.tensor(0.3, dtype=L.float64), alpha=1 / 3)
            outs.append([s.add(1.7, alpha=0.1), L.sub(s, 3, alpha=1 / 3), u,
                         L.add(s, L.tensor(1.7, dtype=L.float32), alpha=-2.7),
                         s.sub(L.tensor(-0.3, dtype=L.float64), alpha=3)])
        for got, want in zip(*outs):
            assert str(got.dtype) == str(want.dtype)
            np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_div_with_rounding_mode_of_narrow_integers_computes_in_their_dtype():
    """div(rounding_mode=) of uint8/int8 by a Python int out of range or a 0-d int64 tensor
    takes the divisor in the tensor's dtype, as PyTorch's // does (uint8 by 300 is by 44,
    by -3 is by 253); it divided by the exact value and wrapped the quotient (uint8 by -3
    gave 216 where PyTorch gives 0; int8 by 300 gave 0 for 100, PyTorch 2)."""
    outs = []
    for L in (symgrad, torch_real):
        u = L.tensor([100, 7, 200, 255], dtype=L.uint8)
        i = L.tensor([100, -7, -128, 127], dtype=L.int8)
        v = u.clone()
        v.div_(-3, rounding_mode="floor")
        outs.append([u.div(300, rounding_mode="floor"), u.div(-3, rounding_mode="trunc"),
                     L.div(i, 300, rounding_mode="trunc"),
                     i.div(L.tensor(-129), rounding_mode="floor"),
                     u.div(L.tensor(-3), rounding_mode="floor"), v])
    for got, want in zip(*outs):
        assert str(got.dtype) == str(want.dtype)
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_alpha_of_bool_and_integer_results_as_pytorchs_alpha_check():
    """A bool result computes ``a or (alpha and b)`` (it was int64 ``a + 2 * b``: 2 where
    PyTorch says True); a float alpha of an integer result and a bool alpha of another
    raise PyTorch's errors (they gave float values)."""
    outs = []
    for L in (symgrad, torch_real):
        a, b = L.tensor([True, False, False]), L.tensor([True, True, False])
        c = a.clone()
        c.add_(b, alpha=2)
        outs.append([a.add(b, alpha=2), L.add(a, True, alpha=-1), a.add(b, alpha=0),
                     a.add(L.tensor([[True], [False]]), alpha=False), c])
        i = L.tensor([1, 2, 3])
        for bad in ("i.add(i, alpha=2.5)", "i.sub(1, alpha=0.5)", "i.clone().add_(i, alpha=2.0)",
                    "i.add(i, alpha=True)", "i.double().sub_(i, alpha=True)"):
            with pytest.raises(RuntimeError, match="alpha"):
                eval(bad, {"i": i})
    for got, want in zip(*outs):
        assert str(got.dtype) == str(want.dtype)
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_a_choice_between_bool_tensors_is_bool():
    def run(t):
        c, a, b = t.tensor([True, False, True]), t.tensor([True, True, False]), t.tensor(
            [False, True, True])
        return [(str(r.dtype), r.tolist()) for r in (t.where(c, a, b), a.where(c, b),
                                                    t.where(c, a, b) + t.where(c, b, a))]
    assert run(symgrad) == run(torch_real)


def test_floor_divide_and_a_number_remainder_a_tensor_have_no_derivative_as_pytorch():
    """PyTorch has no derivative for floor_divide, nor for ``number % w`` (its
    Scalar_Tensor overload; ``tensor % w`` has one): the result requires grad, its node is
    ``NotImplemented`` and a backward through it raises (symgrad gave zeros, and
    ``-floor(3 / w)``)."""
    got = []
    for L in (symgrad, torch_real):
        w = L.tensor([1.5, -2.0, 4.0], dtype=L.float64, requires_grad=True)
        found = []
        for f in (lambda L, w: 3.0 % w, lambda L, w: 3 % w, lambda L, w: L.remainder(3.0, w),
                  lambda L, w: w // 2.0, lambda L, w: 3.0 // w, lambda L, w: w.floor_divide(w),
                  lambda L, w: L.tensor(3.0, dtype=L.float64) % w, lambda L, w: w % 2.0):
            y = f(L, w)
            found += [y.tolist(), y.requires_grad, type(y.grad_fn).__name__
                      if type(y.grad_fn).__name__ == "NotImplemented" else None]
            w.grad = None
            try:
                y.sum().backward()
                found.append(w.grad.tolist())
            except RuntimeError as e:
                found.append(str(e)[:45])
        got.append(found)
    assert got[0] == got[1]


def test_a_numpy_scalar_on_the_left_of_an_operator_is_a_number_as_in_pytorch():
    """``np.float64(3.0) % w`` reaches a Tensor as ``np.remainder``; PyTorch takes the
    scalar for a Python number: no derivative in ``w`` (symgrad differentiated it), an
    integer tensor's dtype (``np.int64(3) % int32`` was float64), ``RsubBackward1``."""
    got = []
    for L in (symgrad, torch_real):
        found = []
        for s in (np.float64(3.0), np.float32(3.0), np.int64(3)):
            for op in ("%", "//", "-", "/", "**"):
                w = L.tensor([1.5, -2.0], dtype=L.float64, requires_grad=True)
                y = eval(f"s {op} w")
                found += [y.tolist(), type(y.grad_fn).__name__]
                try:
                    y.sum().backward()
                    found.append(w.grad.tolist())
                except RuntimeError as e:
                    found.append(str(e)[:45])
            k = L.tensor([2, 5], dtype=L.int32)
            found += [(str(r.dtype), r.tolist()) for r in (s % k, s // k, s * k)]
        got.append(found)
    assert got[0] == got[1]
