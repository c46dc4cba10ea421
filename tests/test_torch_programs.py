"""Tutorial programs run with ``import torch`` and with ``import symgrad as torch``.

Each program is written once, as a function of the module (``def program(torch,
show, data)``), and run twice in this process: with real PyTorch (the oracle,
its default dtype set to float64, symgrad's default) and with symgrad, from the
same data and initial weights (numpy arrays both runs turn into tensors; models
get them through ``load_state_dict``). ``show`` is the programs' ``print``: it
records the printed text and the values, and the two runs must print the same
text (object addresses as ``0x...``) and the same values and gradients to
``rtol=1e-9``. The programs: the two seed tutorials, the autograd part of
"Learning PyTorch with Examples" (``x.mm(w1).clamp(min=0).mm(w2)``, manual SGD
under ``no_grad``, also in its float32 form with ``FloatTensor``), the
60-minute blitz's autograd section and its network section (``nn.Linear``,
``F.relu``, ``MSELoss``, ``optim.SGD``; without the convolutions), and a
classifier with ``nn.Module``, ``CrossEntropyLoss`` and ``Adam``.
"""

from __future__ import annotations

import numpy as np
import pytest

torch_real = pytest.importorskip("torch")

from torch_oracle import RTOL, float64_default, run_both  # noqa: E402,F401 (a fixture)

pytestmark = pytest.mark.filterwarnings("error::symgrad.autograd.KernelFallbackWarning")


def _data(seed: int, **shapes: tuple[int, ...]) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {name: rng.standard_normal(shape) for name, shape in shapes.items()}


# ---------------------------------------------------------------------------
# the seeds


def seed_tutorial_0(torch, show, data):
    """Seed 0: a computed graph, its printed values and grad_fns, backward."""
    Variable = torch.autograd.Variable
    x = Variable(torch.tensor(data["x"]))
    y = Variable(torch.tensor(data["y"]))
    z = Variable(torch.tensor(data["z"]), requires_grad=True)
    a = x + y
    b = a + z
    show(a.requires_grad, b.requires_grad, x.grad_fn, b.grad_fn)
    x = torch.Tensor([[1., 2., 3.], [4., 5., 6.]])
    x = Variable(x, requires_grad=True)
    y = x + 2
    z = y * y * 3
    out = z.mean()
    show(x)
    show(y)
    show(z)
    show(out)
    show(x.grad_fn)
    show(y.grad_fn)
    show(z.grad_fn)
    show(out.grad_fn)
    out.backward()
    show(x.grad)
    x.grad.data.zero_()
    y = x + 2
    z = y * y * 3
    z.backward(torch.ones(2, 3))
    show(x.grad)


def seed_tutorial_1(torch, show, data):
    """Seed 1: Variable, scalar and vector backward, retain_graph, accumulation, zero_."""
    Variable = torch.autograd.Variable
    x = Variable(torch.ones(3, 3), requires_grad=True)
    y = x.sum()
    show(x)
    show(y)
    show(x.grad_fn)
    show(y.grad_fn)
    x = Variable(torch.ones(2, 2), requires_grad=True)
    y = x + 2
    z = y * y * 3
    out = z.mean()
    out.backward()
    show(x.grad)
    x = Variable(torch.Tensor([1, 2, 3, 4, 5]), requires_grad=True)
    y = x * x
    weights1 = torch.Tensor([5, 5, 5, 5, 5])
    y.backward(weights1, retain_graph=True)
    show(x.grad)
    y.backward(weights1, retain_graph=True)
    show(x.grad)
    x.grad.data.zero_()
    y.backward(weights1, retain_graph=True)
    show(x.grad)
    w = Variable(torch.tensor(data["w"]), requires_grad=True)
    loss = (torch.tanh(w) * w).sum()
    loss.backward()
    show(w.grad)


def test_seed_tutorial_0():
    run_both(seed_tutorial_0, _data(0, x=(2, 2), y=(2, 2), z=(2, 2)))


def test_seed_tutorial_1():
    run_both(seed_tutorial_1, _data(1, w=(4,)))


# ---------------------------------------------------------------------------
# Learning PyTorch with Examples: autograd


def learning_pytorch_autograd(torch, show, data, dtype_name="float64", steps=60):
    """The tutorial's tensors-and-autograd two-layer network (sizes reduced)."""
    dtype = getattr(torch, dtype_name)
    device = torch.device("cpu")
    x = torch.tensor(data["x"], device=device, dtype=dtype)
    y = torch.tensor(data["y"], device=device, dtype=dtype)
    w1 = torch.tensor(data["w1"], device=device, dtype=dtype, requires_grad=True)
    w2 = torch.tensor(data["w2"], device=device, dtype=dtype, requires_grad=True)
    learning_rate = 1e-3
    for t in range(steps):
        y_pred = x.mm(w1).clamp(min=0).mm(w2)
        loss = (y_pred - y).pow(2).sum()
        if t % 20 == 19:
            show(t, loss.item())
        loss.backward()
        if t == 0:
            show(w1.grad)
            show(w2.grad)
        with torch.no_grad():
            w1 -= learning_rate * w1.grad
            w2 -= learning_rate * w2.grad
            w1.grad.zero_()
            w2.grad.zero_()
    show(w1)
    show(w2)


def learning_pytorch_old_style(torch, show, data):
    """The tutorial's older form: ``dtype = torch.FloatTensor``, ``.type(dtype)``, float32."""
    dtype = torch.FloatTensor
    x = torch.tensor(data["x"]).type(dtype)
    y = torch.tensor(data["y"]).type(dtype)
    w1 = torch.tensor(data["w1"]).type(dtype).requires_grad_()
    w2 = torch.tensor(data["w2"]).type(dtype).requires_grad_()
    for _ in range(20):
        h = x.mm(w1)
        h_relu = h.clamp(min=0)
        y_pred = h_relu.mm(w2)
        loss = (y_pred - y).pow(2).sum()
        loss.backward()
        with torch.no_grad():
            w1 -= 1e-3 * w1.grad
            w2 -= 1e-3 * w2.grad
            w1.grad.zero_()
            w2.grad.zero_()
    show(loss.item(), w1.type(), w1.grad.dtype)
    show(w1)
    show(w2)


LEARNING_DATA = dict(x=(16, 30), y=(16, 4), w1=(30, 12), w2=(12, 4))


def test_learning_pytorch_with_examples_autograd():
    run_both(learning_pytorch_autograd, _data(2, **LEARNING_DATA))


def test_learning_pytorch_with_examples_in_float32():
    """float32 throughout: forward in float32, gradients float32 (symgrad's backward runs
    in float32 too: close to PyTorch's to float32 rounding, not bit for bit)."""
    run_both(learning_pytorch_autograd, _data(2, **LEARNING_DATA), rtol=2e-4,
             dtype_name="float32", steps=20)
    run_both(learning_pytorch_old_style, _data(3, **LEARNING_DATA), rtol=2e-4)


# ---------------------------------------------------------------------------
# the 60-minute blitz


def blitz_autograd(torch, show, data):
    """The blitz's autograd section (random tensors replaced by the shared data)."""
    x = torch.ones(2, 2, requires_grad=True)
    show(x)
    y = x + 2
    show(y)
    show(y.grad_fn)
    z = y * y * 3
    out = z.mean()
    show(z, out)
    a = torch.tensor(data["a"])
    a = ((a * 3) / (a - 1))
    show(a.requires_grad)
    a.requires_grad_(True)
    show(a.requires_grad)
    b = (a * a).sum()
    show(b.grad_fn)
    out.backward()
    show(x.grad)
    x = torch.tensor(data["x"], requires_grad=True)
    y = x * 2
    while y.data.norm() < 1000:
        y = y * 2
    show(y)
    v = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float64)
    y.backward(v)
    show(x.grad)
    show(x.requires_grad)
    show((x ** 2).requires_grad)
    with torch.no_grad():
        show((x ** 2).requires_grad)
    show(x.requires_grad)
    y = x.detach()
    show(y.requires_grad)
    show(x.eq(y).all())


def test_blitz_autograd():
    run_both(blitz_autograd, _data(4, a=(2, 2), x=(3,)))


def blitz_network(torch, show, data):
    """The blitz's "Neural Networks" section with the convolutions left out."""
    nn = torch.nn
    F = torch.nn.functional
    optim = torch.optim

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(16, 12)
            self.fc2 = nn.Linear(12, 8)
            self.fc3 = nn.Linear(8, 4)

        def forward(self, x):
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            x = self.fc3(x)
            return x

    net = Net()
    net.load_state_dict({k: torch.tensor(data[k]) for k in net.state_dict()})
    show(net)
    params = list(net.parameters())
    show(len(params))
    show(params[0].size())
    input = torch.tensor(data["input"])
    out = net(input)
    show(out)
    net.zero_grad()
    out.backward(torch.tensor(data["out_grad"]))
    show([p.grad for p in net.parameters()])
    output = net(input)
    target = torch.tensor(data["target"])
    target = target.view(1, -1)
    criterion = nn.MSELoss()
    loss = criterion(output, target)
    show(loss)
    show(loss.grad_fn)
    show(loss.grad_fn.next_functions[0][0])
    show(loss.grad_fn.next_functions[0][0].next_functions[0][0])
    net.zero_grad()
    show("conv1.bias.grad before backward")
    show(net.fc1.bias.grad)
    loss.backward()
    show("conv1.bias.grad after backward")
    show(net.fc1.bias.grad)
    learning_rate = 0.01
    for f in net.parameters():
        f.data.sub_(f.grad.data * learning_rate)
    optimizer = optim.SGD(net.parameters(), lr=0.01)
    for _ in range(3):
        optimizer.zero_grad()
        output = net(input)
        loss = criterion(output, target)
        loss.backward()
        optimizer.step()
        show(loss)
    show({k: v for k, v in net.state_dict().items()}.keys())
    show([p for p in net.parameters()])


def _blitz_data() -> dict[str, np.ndarray]:
    shapes = dict(input=(1, 16), out_grad=(1, 4), target=(4,))
    for k, (i, o) in enumerate([(16, 12), (12, 8), (8, 4)], 1):
        shapes[f"fc{k}.weight"], shapes[f"fc{k}.bias"] = (o, i), (o,)
    return _data(5, **shapes)


def test_blitz_neural_networks():
    run_both(blitz_network, _blitz_data())


# ---------------------------------------------------------------------------
# a classifier: nn.Module + CrossEntropyLoss + Adam


def classifier(torch, show, data, optimizer="Adam", options=None):
    nn = torch.nn

    class Classifier(nn.Module):
        def __init__(self, n_in, n_hidden, n_classes):
            super().__init__()
            self.hidden = nn.Linear(n_in, n_hidden)
            self.act = nn.Tanh()
            self.out = nn.Linear(n_hidden, n_classes)

        def forward(self, x):
            return self.out(self.act(self.hidden(x)))

    torch.manual_seed(0)
    model = Classifier(4, 10, 3)
    model.load_state_dict({k: torch.tensor(data[k]) for k in model.state_dict()})
    show(model)
    show([name for name, _ in model.named_parameters()])
    X = torch.tensor(data["X"])
    y = torch.tensor(data["labels"].astype(np.int64))
    loss_fn = nn.CrossEntropyLoss()
    opt = getattr(torch.optim, optimizer)(model.parameters(), **(options or {"lr": 0.05}))
    for epoch in range(25):
        opt.zero_grad()
        logits = model(X)
        loss = loss_fn(logits, y)
        loss.backward()
        if epoch % 8 == 0:
            show(epoch, loss.item())
            show([p.grad for p in model.parameters()])
        opt.step()
    show(loss.grad_fn)
    model.eval()
    with torch.no_grad():
        logits = model(X)
        predicted = logits.argmax(dim=1)
        values, indices = logits.max(dim=1)
    show(predicted)
    show(indices.equal(predicted), values)
    show((predicted == y).float().mean())
    show(opt.state_dict()["param_groups"])
    show(sorted(opt.state_dict()["state"].get(0, {})))


def _classifier_data() -> dict[str, np.ndarray]:
    data = _data(6, X=(30, 4), **{"hidden.weight": (10, 4), "hidden.bias": (10,),
                                  "out.weight": (3, 10), "out.bias": (3,)})
    data["labels"] = (np.argmax(data["X"][:, :3] + 0.3 * data["X"][:, 3:], axis=1))
    return data


def test_classifier_with_cross_entropy_and_adam():
    run_both(classifier, _classifier_data())


@pytest.mark.parametrize("optimizer, options", [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 1e-3}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "dampening": 0.3}),
    ("Adam", {"lr": 0.02, "betas": (0.8, 0.99), "weight_decay": 1e-2}),
    ("Adam", {"lr": 0.02, "amsgrad": True}),
    ("AdamW", {"lr": 0.02}),
    ("AdamW", {"lr": 0.02, "weight_decay": 0.1, "amsgrad": True}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True, "weight_decay": 1e-3}),
], ids=str)
def test_optimizers_follow_pytorch_update_rules(optimizer, options):
    run_both(classifier, _classifier_data(), optimizer=optimizer, options=options)
