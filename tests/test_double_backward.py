"""Double backward on Tensors: ``torch.autograd.grad`` and ``backward(create_graph=True)``.

Each program runs with real PyTorch 2.13 and with symgrad on the same data and must
print the same text and numbers (:mod:`torch_oracle`). Gradients with a graph are
shown as values and ``requires_grad`` (their ``grad_fn`` names differ: PyTorch's
are the backward formulas' own ops, symgrad's the replayed adjoint's). Third
derivatives are also checked against SymPy; the refusal of a primitive the eager
trace cannot replay is checked directly.
"""

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


def _error(show, fn, length=60):
    show_error(show, fn, length)


def _values(show, *ts):
    """Gradients as values, whether they carry a graph, and None as None."""
    show(*(("None" if t is None else t.detach()) for t in ts),
         *(t is not None and t.requires_grad for t in ts))


# ---------------------------------------------------------------------------
# gradient penalties and higher derivatives


def gradient_penalty(torch, show, data):
    x = torch.tensor(data["x"], requires_grad=True)
    w = torch.tensor(data["w"], requires_grad=True)
    y = (torch.tanh(x * w) * x).sum()
    g, = torch.autograd.grad(y, x, create_graph=True)
    _values(show, g)
    (g ** 2).sum().backward()
    show(x.grad, w.grad)
    # the penalty of a second-order gradient, again
    x.grad = None
    w.grad = None
    g1, = torch.autograd.grad((torch.sin(x) * w).sum(), x, create_graph=True)
    g2, = torch.autograd.grad(g1.sum(), x, create_graph=True)
    (g2 * g1).sum().backward()
    show(x.grad, w.grad)


def test_gradient_penalty():
    run_both(gradient_penalty, _data(0, x=(5,), w=(5,)))


def third_derivative(torch, show, data):
    x = torch.tensor(data["x"], requires_grad=True)
    for f in (lambda x: x ** 3 * torch.sin(x) + torch.exp(-x ** 2),
              lambda x: torch.log(1 + x ** 2) / (2 + torch.cos(x)),
              lambda x: torch.sigmoid(3 * x) * torch.tanh(x)):
        d = f(x).sum()
        for _ in range(3):
            d, = torch.autograd.grad(d.sum(), x, create_graph=True)
            _values(show, d)


def test_third_derivatives_match_pytorch():
    run_both(third_derivative, _data(1, x=(6,)))


def test_third_and_fourth_derivatives_match_sympy():
    sp = pytest.importorskip("sympy")
    s = sp.Symbol("s")
    expr = s ** 3 * sp.sin(s) + sp.exp(-s ** 2)
    xs = np.array([-1.3, -0.2, 0.4, 1.7])
    x = symgrad.tensor(xs, requires_grad=True)
    d = x ** 3 * symgrad.sin(x) + symgrad.exp(-x ** 2)
    for order in range(1, 5):
        d, = symgrad.autograd.grad(d.sum(), x, create_graph=True)
        want = [float(sp.diff(expr, s, order).evalf(30, subs={s: v})) for v in xs]
        np.testing.assert_allclose(d.detach().numpy(), want, rtol=1e-12, err_msg=str(order))


def backward_create_graph(torch, show, data):
    x = torch.tensor(data["x"], requires_grad=True)
    (x ** 3).sum().backward(create_graph=True)
    _values(show, x.grad)
    x.grad.sum().backward()          # d/dx sum(3 x^2) = 6 x, accumulated into 3 x^2
    _values(show, x.grad)
    # accumulation with create_graph into an existing .grad: out of place, with a graph
    x.grad = None
    (x * x).sum().backward()
    before = x.grad
    (torch.sin(x)).sum().backward(create_graph=True)
    _values(show, x.grad)
    show(before)                     # the old tensor is left as it was
    g, = torch.autograd.grad(x.grad.sum(), x)
    show(g)
    # create_graph for a linear function: a gradient without a graph
    x.grad = None
    (3 * x).sum().backward(create_graph=True)
    _values(show, x.grad)
    (x * x).sum().backward()         # first order into it: in place, still no graph
    _values(show, x.grad)
    # backward(inputs=...) fills only those
    a = torch.tensor(data["a"], requires_grad=True)
    x.grad = None
    (a * x ** 2).sum().backward(inputs=[a])
    show(a.grad, x.grad is None)
    (a * x ** 2).sum().backward(inputs=x, create_graph=True)
    _values(show, x.grad)
    _error(show, lambda: (a * x).sum().backward(inputs=[]))


def test_backward_create_graph_and_accumulation():
    run_both(backward_create_graph, _data(2, x=(4,), a=(4,)))


def matmul_double(torch, show, data):
    x = torch.tensor(data["x"], requires_grad=True)
    w = torch.tensor(data["w"], requires_grad=True)
    y = torch.tanh(x @ w).sum()
    gx, gw = torch.autograd.grad(y, [x, w], create_graph=True)
    ((gx ** 2).sum() + (gw * gw).sum()).backward()
    show(x.grad, w.grad)


def test_double_backward_through_matmul():
    run_both(matmul_double, _data(3, x=(3, 4), w=(4, 2)))


def softmax_losses(torch, show, data):
    F = torch.nn.functional
    x = torch.tensor(data["x"], requires_grad=True)
    target = torch.tensor([0, 2, 1])
    y = torch.tensor(data["y"])
    for loss in (lambda: (torch.softmax(x, dim=1) * y).sum(),
                 lambda: (F.log_softmax(x, dim=1) * y).sum(),
                 lambda: F.cross_entropy(x, target),
                 lambda: F.mse_loss(torch.tanh(x), y),
                 lambda: F.binary_cross_entropy_with_logits(x, torch.sigmoid(y)),
                 lambda: F.smooth_l1_loss(x * 2, y)):
        g, = torch.autograd.grad(loss(), x, create_graph=True)
        x.grad = None
        (g * g).sum().backward()
        show(x.grad)


def test_double_backward_softmax_and_losses():
    run_both(softmax_losses, _data(4, x=(3, 3), y=(3, 3)))


def wgan_gp(torch, show, data):
    """A WGAN-GP critic step: the penalty ((|grad_x D(x_hat)| - 1)^2) on an MLP."""
    nn = torch.nn
    critic = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1))
    with torch.no_grad():
        for p, name in zip(critic.parameters(), ("w1", "b1", "w2", "b2")):
            p.copy_(torch.tensor(data[name]))
    real, fake = torch.tensor(data["real"]), torch.tensor(data["fake"])
    alpha = torch.tensor(data["alpha"]).abs() / 3
    x_hat = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    out = critic(x_hat)
    g, = torch.autograd.grad(out, x_hat, grad_outputs=torch.ones_like(out),
                             create_graph=True)
    penalty = ((g.norm(2, dim=1) - 1) ** 2).mean()
    loss = critic(fake).mean() - critic(real).mean() + 10 * penalty
    loss.backward()
    show(penalty)
    show(*(p.grad for p in critic.parameters()))


def test_wgan_gp_penalty_on_an_mlp():
    data = _data(5, w1=(5, 3), b1=(5,), w2=(1, 5), b2=(1,), real=(4, 3), fake=(4, 3),
                 alpha=(4, 1))
    run_both(wgan_gp, data)


# ---------------------------------------------------------------------------
# torch.autograd.grad's conventions


def grad_conventions(torch, show, data):
    x = torch.tensor(data["x"], requires_grad=True)
    u = torch.tensor(data["u"], requires_grad=True)
    grad = torch.autograd.grad
    r = grad((x * x).sum(), x)
    show(type(r).__name__, len(r), r[0], x.grad is None)       # a tuple; .grad untouched
    show(grad((x * x).sum(), (x,)))
    show(grad(x.sum(), x), grad(torch.tensor(2.0, requires_grad=True) * 3,
                                torch.tensor(1.0, requires_grad=True), allow_unused=True))
    # non-scalar outputs, grad_outputs, several outputs (None for a scalar one)
    v = torch.tensor(data["v"])
    show(grad(x * x, x, grad_outputs=v))
    show(grad([x * x, (x * u).sum()], [x, u], grad_outputs=[v, None]))
    # non-leaf inputs
    h = x * 3
    out = (h ** 2 * u).sum()
    gh, gx = grad(out, [h, x], retain_graph=True)
    show(gh, gx)
    gh, = grad(out, h, create_graph=True)
    _values(show, gh)
    show(grad(gh.sum(), [x, u]))
    # allow_unused
    y = (x * 2).sum()
    _error(show, lambda: grad(y, [x, u], retain_graph=True), 200)
    show(grad(y, [x, u], allow_unused=True, retain_graph=True))
    show(grad(y, [u, x], allow_unused=True, materialize_grads=True))
    # errors, as PyTorch words them
    _error(show, lambda: grad(x * x, x), 200)
    _error(show, lambda: grad(x * x, x, grad_outputs=torch.ones(3)), 200)
    _error(show, lambda: grad((x * 2).sum(), torch.ones(2)), 200)
    _error(show, lambda: grad(torch.ones(2).sum(), x), 200)
    # a grad_output that requires grad: the gradient is differentiable in it
    w = torch.tensor(data["v"], requires_grad=True)
    gx, = grad(torch.sin(x), x, grad_outputs=w, create_graph=True)
    show(grad((gx * gx).sum(), [w, x]))


def test_grad_conventions():
    run_both(grad_conventions, _data(6, x=(4,), u=(4,), v=(4,)))


def retain_graph(torch, show, data):
    x = torch.tensor(data["x"], requires_grad=True)
    grad = torch.autograd.grad
    y = (torch.exp(x) * x).sum()
    grad(y, x)                                     # frees the graph
    _error(show, lambda: y.backward(), 50)
    _error(show, lambda: grad(y, x), 50)
    y = (torch.exp(x) * x).sum()
    grad(y, x, retain_graph=True)
    show(grad(y, x))                               # kept once, freed now
    _error(show, lambda: grad(y, x), 50)
    y = (torch.exp(x) * x).sum()
    g, = grad(y, x, create_graph=True)             # retain_graph defaults to create_graph
    y.backward(retain_graph=True)                  # PyTorch's g shares y's nodes
    show(x.grad)
    g.sum().backward()
    show(x.grad)
    y = (torch.exp(x) * x).sum()
    y.backward(create_graph=True)                  # retains too
    y.backward()
    _values(show, x.grad)


def test_retain_graph():
    run_both(retain_graph, _data(7, x=(3,)))


# ---------------------------------------------------------------------------
# what the eager trace cannot replay


def test_a_primitive_the_eager_trace_cannot_apply_is_named():
    from symgrad.core.ir import Aval
    from symgrad.eager.double import replay
    from symgrad.numpy_api import trace
    from symgrad.transforms import pipeline

    def f(x):
        return np.sum(symgrad.fori_loop(0, 3, lambda i, c: np.sin(c) * c, x))

    graph, _ = trace(f, [Aval((3,))], [None], ["x"])
    full = pipeline.differentiate(graph, [0], keep_primal=False)
    x = symgrad.tensor([0.1, 0.2, 0.3], requires_grad=True)
    with pytest.raises(NotImplementedError, match="create_graph=True.*primitive 'loop'"):
        replay(full, [x], {}, x)
