"""``torch.func`` (:mod:`symgrad.func`) against real PyTorch 2.13's ``torch.func``.

Each program runs with real PyTorch and with symgrad on the same data (weights
copied) and must print the same results: pytree structure, shapes, values (rtol
1e-9, float64) and ``requires_grad`` (transforms are functional: a result requires
grad only when it depends on a tensor the caller differentiates), and the same
errors (:mod:`torch_oracle`). Compositions: grad of grad, jacrev of jacrev against
hessian, vmap of grad (per-sample gradients of an MLP through functional_call),
model ensembling with stack_module_state, gradients of closures' parameters
flowing out through ``backward``, and modules changed between calls.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from torch_oracle import (  # noqa: E402,F401 (a fixture)
    float64_default,
    run_both,
    show_error,
)
from torch_oracle import normal_data as _data  # noqa: E402


def _show(show, tree, label=""):
    """A pytree of results: its structure, each leaf's shape, values, requires_grad."""
    if isinstance(tree, dict):
        for k in tree:
            _show(show, tree[k], f"{label}[{k!r}]")
    elif isinstance(tree, (tuple, list)):
        show(label, type(tree).__name__, len(tree))
        for i, t in enumerate(tree):
            _show(show, t, f"{label}[{i}]")
    elif hasattr(tree, "shape"):  # (+ 0.0: a -0.0 prints as 0.0, as PyTorch's does)
        show(label, tuple(tree.shape), tree.detach() + 0.0, tree.requires_grad)
    else:
        show(label, tree)


def _func(torch, names):
    return [getattr(torch.func, n) for n in names.split()]


def _error(show, fn, length=200):
    show_error(show, fn, length)


def transforms(torch, show, data):
    grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp = _func(
        torch, "grad grad_and_value hessian jacfwd jacrev jvp vjp")
    x, y = torch.tensor(data["x"]), torch.tensor(data["y"])
    m = torch.tensor(data["m"])

    def f(x, y):
        return (torch.tanh(x) * y).sum() + (x ** 3).sum() * y[0]

    def g(d):  # a dict input
        return (d["a"].exp() * d["b"]).sum() + d["a"].sin().sum() ** 2

    _show(show, grad(f)(x, y))
    _show(show, grad(f, argnums=1)(x, y))
    _show(show, grad(f, argnums=(0, 1))(x, y))
    _show(show, grad_and_value(f, argnums=(1, 0))(x, y))
    _show(show, grad(g)({"a": x, "b": y}))
    _show(show, grad(lambda x: (f(x, y), {"t": x.cos(), "n": x.sum()}), has_aux=True)(x))
    _show(show, grad_and_value(lambda x: (f(x, y), [x * 2]), has_aux=True)(x))
    _show(show, grad(lambda x: f(x, y), argnums=-1)(x))
    _show(show, grad(lambda a, b: (a @ m).sum(), argnums=1)(x, y))    # unused: zeros
    _show(show, grad(lambda x: grad(lambda z: f(z, y))(x).pow(2).sum())(x))  # grad of grad
    out, fn = vjp(lambda a, b: (a.sin() * b, a @ m), x, y)
    _show(show, out)
    _show(show, fn((y, torch.tensor(data["u"]))))
    _show(show, fn((x, torch.tensor(data["u"]) * 2)))               # called twice
    out, fn, aux = vjp(lambda a: (a.exp(), a.sum()), x, has_aux=True)
    _show(show, (out, fn(y), aux))
    _show(show, jvp(lambda a, b: (a.sin() * b, a @ m), (x, y), (y, x)))
    _show(show, jvp(lambda a: (a ** 2, {"s": a.sum()}), (x,), (y,), has_aux=True))
    _show(show, jvp(lambda a, b: a * 2, (x, y), (y, x), strict=True))
    _error(show, lambda: jvp(lambda a, b: (a * 2, b * 0 + m[0, 0]), (x, y), (y, x),
                             strict=True))
    lin = lambda a, b: (a.sin() * b, {"m": a @ m})  # noqa: E731
    if torch.__name__ == "symgrad":  # (PyTorch's linearize traces with FX: seconds; its
        out, jvp_fn = torch.func.linearize(lin, x, y)  # jvp is the oracle, and cheap)
        _show(show, (out, jvp_fn(y, x), jvp_fn(x, x * 3)))
    else:
        _show(show, (lin(x, y), jvp(lin, (x, y), (y, x))[1], jvp(lin, (x, y), (x, x * 3))[1]))
    h = lambda a, b: torch.sin(a)[:, None] * b[None, :] + (a @ m).sum()  # noqa: E731
    for jac in (jacrev, jacfwd):
        _show(show, jac(h)(x, y))
        _show(show, jac(h, argnums=(0, 1))(x, y))
        _show(show, jac(lambda a: (a.sin(), {"p": a.prod()}))(x))
        _show(show, jac(lambda a: (a * a, a.sum()), has_aux=True)(x))
        _show(show, jac(g)({"a": x, "b": y}))
    s = lambda a, b: (a.sin() * (a @ m).sum() * b).sum()  # noqa: E731
    _show(show, hessian(s)(x, y))
    _show(show, hessian(s, argnums=(0, 1))(x, y))
    _show(show, jacrev(jacrev(s))(x, y))
    _show(show, jacfwd(jacrev(s, argnums=1), argnums=0)(x, y))
    _show(show, jacrev(grad(s))(x, y))
    _show(show, hessian(g)({"a": x, "b": y}))
    # nesting without perturbation confusion: the inner transform's variable is its own
    _show(show, grad(lambda a: grad(lambda b: (a * b).sum())(y).sum())(x))
    _show(show, grad(lambda a: grad(lambda b: (a * b ** 2).sum())(a).sum())(x))
    _show(show, grad(lambda a: jvp(lambda b: b.sin() * a, (a,), (y,))[1].sum())(x))
    _, fn2 = vjp(lambda a, b: (a.sin() * b, a @ m), x, y)
    _show(show, grad(lambda c: fn2((c, c[:2]))[0].pow(2).sum())(y))  # vjp_fn in a grad
    _show(show, jacfwd(lambda a: vjp(lambda b: b.exp() * a, a)[1](y)[0])(x))


def test_transforms():
    run_both(transforms, _data(0, x=(3,), y=(3,), m=(3, 2), u=(2,)))


def closures(torch, show, data):
    """Results require grad exactly when they depend on a tensor the caller
    differentiates; its gradient flows out through backward."""
    grad, jacrev, jvp, vjp = _func(torch, "grad jacrev jvp vjp")
    x = torch.tensor(data["x"])
    w = torch.tensor(data["w"], requires_grad=True)
    xr = torch.tensor(data["x"], requires_grad=True)

    def f(a):
        return (torch.tanh(a * w) ** 2).sum()

    g = grad(f)(x)
    _show(show, g)
    (g * torch.tensor(data["v"])).sum().backward()
    _show(show, w.grad)
    _show(show, grad(lambda a: (a ** 3).sum())(x))           # nothing outer: no graph
    gx = grad(lambda a: (a ** 3 * a.sin()).sum())(xr)        # the input requires grad
    _show(show, gx)
    gx.sum().backward()
    _show(show, xr.grad)
    _show(show, grad(lambda a: (a + w).sum())(x))            # constant gradient: no graph
    j = jacrev(lambda a: a * w.exp())(x)
    _show(show, j)
    _show(show, torch.autograd.grad(j.sum(), w))
    o, fn = vjp(lambda a: (a * w).sin(), x)
    _show(show, o)
    _show(show, fn(torch.tensor(data["v"])))
    p, t = jvp(lambda a: (a * w).sin(), (x,), (torch.tensor(data["v"]),))
    _show(show, (p, t))
    _show(show, torch.autograd.grad(t.sum(), w))


def test_closures_and_requires_grad():
    run_both(closures, _data(1, x=(4,), w=(4,), v=(4,)))


def errors(torch, show, data):
    grad, jacfwd, jacrev, jvp, vjp, vmap = _func(torch, "grad jacfwd jacrev jvp vjp vmap")
    x = torch.tensor(data["x"])
    _error(show, lambda: grad(lambda a: a * 2)(x))
    _error(show, lambda: grad(lambda a: 2.0)(x))
    _error(show, lambda: grad(lambda a: a.sum(), has_aux=True)(x))
    _error(show, lambda: grad(lambda a: a.sum(), argnums=1)(x))
    _error(show, lambda: grad(lambda a: a.sum(), argnums=())(x))
    _error(show, lambda: grad(lambda a: a.sum(), argnums=1.0)(x))
    _error(show, lambda: grad(lambda a: a)(3.0))
    _error(show, lambda: jvp(lambda a: a * 2, x, x))
    _error(show, lambda: jvp(lambda a: a * 2, (x,), (torch.ones(2),)))
    _error(show, lambda: jvp(lambda a: a.sum(), (x,), (x,), has_aux=True))
    _error(show, lambda: vjp(lambda a: a * 2, x)[1](torch.ones(2)))
    _error(show, lambda: vjp(lambda a: 2.0, x))
    _error(show, lambda: jacrev(lambda a: 2.0)(x))
    _error(show, lambda: grad(lambda a: (a.sum(), {"k": 1}), has_aux=True)(x))
    _error(show, lambda: grad(lambda a: (a.sum(), None), has_aux=True)(x))
    _error(show, lambda: vjp(lambda a: (a.sum(), 1), x, has_aux=True))
    _error(show, lambda: jacfwd(lambda a: (a.sum(), [x, 1]), has_aux=True)(x))
    t = torch.tensor(data["m"])
    _error(show, lambda: vmap(lambda a, b: a * b)(t, torch.ones(3, 3)))
    _error(show, lambda: vmap(lambda a: a * 2, in_dims=(None,))(t))
    _error(show, lambda: vmap(lambda a: 2.0)(t))
    _error(show, lambda: vmap(lambda a: torch.randn(3))(t))
    _error(show, lambda: vmap(lambda a: a, out_dims=None)(t))
    _error(show, lambda: vmap(lambda a: a, in_dims=2)(t))
    _error(show, lambda: vmap(lambda a: a, in_dims=(0, 0))(t))
    _error(show, lambda: vmap(lambda a: a, out_dims=(0, 0))(t))
    _error(show, lambda: vmap(lambda a: a, randomness="foo")(t))
    _error(show, lambda: vmap(lambda a: a.sum(), out_dims=1)(t))
    _error(show, lambda: vmap(lambda a: a)(torch.tensor(1.0)))
    _error(show, lambda: vmap(lambda a: a)(3.0))


def test_errors():
    run_both(errors, _data(2, x=(3,), m=(2, 3)))


def _copy_params(torch, module, values):
    with torch.no_grad():
        for name, p in module.named_parameters():
            if name in values:
                p.copy_(torch.tensor(values[name]))


def _mlp(torch, data):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(torch.tensor(data[name]))
    return model


_MLP = {"0.weight": (4, 3), "0.bias": (4,), "2.weight": (2, 4), "2.bias": (2,)}


def per_sample_gradients(torch, show, data):
    """The torch.func tutorial: per-sample gradients with vmap(grad(loss))."""
    functional_call, grad, hessian, jacrev, vmap = _func(
        torch, "functional_call grad hessian jacrev vmap")
    model = _mlp(torch, data)
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, target = torch.tensor(data["x"]), torch.tensor(data["t"])

    def loss(params, sample, t):
        out = functional_call(model, params, (sample[None],))
        return torch.nn.functional.mse_loss(out, t[None])

    per_sample = vmap(grad(loss), in_dims=(None, 0, 0))(params, x, target)
    _show(show, per_sample)
    _show(show, vmap(grad(loss, argnums=1), in_dims=(None, 0, 0))(params, x, target))
    # the mean of the per-sample gradients is the batch gradient of backward()
    model(x).sub(target).pow(2).mean(1).mean().backward()
    for name, p in model.named_parameters():
        show(name, p.grad, per_sample[name].mean(0))
    _show(show, [p for p in model.parameters()])              # unchanged by the calls
    # state change: the module's weights changed; given params still win, missing keys
    # take the module's new values
    with torch.no_grad():
        model[0].weight.mul_(2.0)
    _show(show, vmap(grad(loss), in_dims=(None, 0, 0))(params, x, target))
    partial = {"2.weight": params["2.weight"]}
    _show(show, vmap(grad(loss), in_dims=(None, 0, 0))(partial, x, target))
    _show(show, hessian(loss)(params, x[0], target[0]))
    _show(show, jacrev(jacrev(loss))(params, x[0], target[0]))
    small = {"2.bias": params["2.bias"]}
    with torch.no_grad():  # (the transforms ignore the caller's no_grad, but their
        _show(show, hessian(loss)(small, x[0], target[0]))  # results carry no graph)
        _show(show, vmap(grad(loss), in_dims=(None, 0, 0))(small, x, target))
        _show(show, vmap(hessian(loss), in_dims=(None, 0, 0))(small, x[:2], target[:2]))


def test_per_sample_gradients():
    run_both(per_sample_gradients, _data(3, x=(5, 3), t=(5, 2), **_MLP))


def ensembling(torch, show, data):
    """The torch.func tutorial: model ensembling with stack_module_state."""
    functional_call, grad, stack_module_state, vmap = _func(
        torch, "functional_call grad stack_module_state vmap")
    models = []
    for k in range(3):
        m = _mlp(torch, {n: data[n] * (k + 1) for n in _MLP})
        models.append(m)
    params, buffers = stack_module_state(models)
    _show(show, params)
    _show(show, buffers)
    x = torch.tensor(data["x"])

    def call(p, b, x):
        return functional_call(models[0], (p, b), (x,))

    _show(show, vmap(call, in_dims=(0, 0, None))(params, buffers, x))
    _show(show, vmap(call)(params, buffers, x[:3]))
    _show(show, vmap(grad(lambda p, b, x: call(p, b, x).sum()), in_dims=(0, 0, None))(
        params, buffers, x))
    out = vmap(call, in_dims=(0, 0, None))(params, buffers, x)
    out.pow(2).sum().backward()                                   # stacked leaves
    _show(show, params["0.weight"].grad)
    _error(show, lambda: stack_module_state([]))


def test_model_ensembling():
    run_both(ensembling, _data(4, x=(5, 3), **_MLP))


def functional_calls(torch, show, data):
    functional_call, = _func(torch, "functional_call")
    nn = torch.nn
    m = nn.Linear(3, 2)
    with torch.no_grad():
        m.weight.copy_(torch.tensor(data["w"]))
        m.bias.copy_(torch.tensor(data["b"]))
    x = torch.tensor(data["x"])
    w = torch.tensor(data["w2"], requires_grad=True)
    out = functional_call(m, {"weight": w}, x)
    _show(show, out)
    out.sum().backward()
    _show(show, (w.grad, m.weight.grad, m.weight, m.bias))
    _show(show, functional_call(m, ({"weight": w}, {"bias": w[0, :2]}), (x,)))
    _show(show, functional_call(m, [{"weight": w}, {"bias": w[0, :2]}], (x,), strict=True))
    _show(show, functional_call(m, {"weight": w, "bias": None}, (x,)))
    _show(show, functional_call(m, {"weight": w, "foo": w}, (x,)))
    show(hasattr(m, "foo"))
    _error(show, lambda: functional_call(m, ({"weight": w}, {"weight": w}), (x,)))
    _error(show, lambda: functional_call(m, {"weight": w, "foo": w}, (x,), strict=True))
    _error(show, lambda: functional_call(m, {"weight": w}, (x,), strict=True))
    _error(show, lambda: functional_call(m, {"weight": 3.0}, (x,)))
    _error(show, lambda: functional_call(m, {"weight": w}, (x,), {"foo": 1}))
    _show(show, (m.weight, m.bias))                                 # after the errors too

    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(2, 2, bias=False)
            self.b = nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    t = Tied()
    v = torch.tensor(data["v"])
    e = torch.tensor(data["e"])
    _show(show, functional_call(t, {"a.weight": e}, v))
    _show(show, functional_call(t, {"b.weight": e}, v))
    _show(show, functional_call(t, {"a.weight": e}, v, strict=True))
    _show(show, functional_call(t, {"a.weight": e, "b.weight": e}, v))
    with torch.no_grad():
        t.a.weight.copy_(torch.tensor(data["e2"]))
    _show(show, functional_call(t, {"a.weight": e}, v, tie_weights=False))
    _error(show, lambda: functional_call(t, {"a.weight": e, "b.weight": e * 2}, v))
    _error(show, lambda: functional_call(t, {"a.weight": e}, v, strict=True,
                                         tie_weights=False))
    bn = nn.BatchNorm1d(2)
    mean = torch.tensor(data["v"])
    _show(show, functional_call(bn, {"running_mean": mean}, torch.tensor(data["n"])))
    _show(show, (mean, bn.running_mean, bn.running_var))
    bn.eval()
    _show(show, functional_call(bn, {"running_mean": mean}, torch.tensor(data["n"])))
    net = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    _copy_params(torch, net, {"0.weight": data["e"], "0.bias": data["v"]})
    torch.func.replace_all_batch_norm_modules_(net)
    show([n for n, _ in net.named_buffers()], net[1].track_running_stats)
    batches = torch.tensor(data["n"]).reshape(2, 2, 2)  # vmap over batches of two
    _show(show, torch.func.vmap(net)(batches))


def test_functional_call():
    run_both(functional_calls, _data(5, w=(2, 3), b=(2,), x=(4, 3), w2=(2, 3), v=(2,),
                                     e=(2, 2), e2=(2, 2), n=(4, 2)))


def vmaps(torch, show, data):
    grad, jacrev, vmap = _func(torch, "grad jacrev vmap")
    a, b = torch.tensor(data["a"]), torch.tensor(data["b"])
    c = torch.tensor(data["c"])
    _show(show, vmap(torch.dot)(a, b))
    _show(show, vmap(torch.mv, in_dims=(None, 0))(c, b))
    _show(show, vmap(lambda x, y: x * y, in_dims=(1, 0))(c, a[:, :2]))
    _show(show, vmap(lambda x: x * 2, in_dims=1, out_dims=1)(c))
    _show(show, vmap(lambda x: (x.sum(), {"d": x * 2}), out_dims=(0, {"d": 1}))(a))
    _show(show, vmap(lambda d, k: d["p"] * d["q"] + k, in_dims=({"p": 0, "q": None}, None))(
        {"p": a, "q": b[0]}, 3.0))
    _show(show, vmap(lambda x, s: x * s, in_dims=(0, None))(a, torch.tensor(2.0)))
    _show(show, vmap(vmap(torch.dot))(a[None].expand(2, 3, 3) * 1.0, b[None].expand(2, 3, 3)
                                       * 1.0))
    _show(show, vmap(lambda x: b[0] * 2, out_dims=None)(a))        # the same for each
    _show(show, vmap(lambda x: (x * 2, 7), out_dims=(0, None))(a))
    _show(show, vmap(grad(lambda x: (x.sin() * x).sum()))(a))
    _show(show, vmap(jacrev(lambda x: x.sin() * x.sum()))(a))
    _show(show, grad(lambda x: vmap(lambda r: (r ** 3).sum())(x).sum())(a))
    x = torch.tensor(data["a"], requires_grad=True)
    out = vmap(lambda r: (r * r.exp()).sum())(x)
    _show(show, out)
    out.sum().backward()
    _show(show, x.grad)
    t = torch.tensor(data["a"])
    _show(show, vmap(lambda r: r.mul_(2))(t))                     # in place on the input
    _show(show, t)
    for randomness in ("same", "different"):
        torch.manual_seed(0)
        r = vmap(lambda r: torch.rand(2) + r[:1] * 0, randomness=randomness)(a)
        show(randomness, tuple(r.shape), bool((r[0] == r[1]).all()))


def test_vmap():
    run_both(vmaps, _data(6, a=(3, 3), b=(3, 3), c=(2, 3)))


def test_functional_call_refuses_a_parametrized_name():
    import symgrad as sg
    m = sg.nn.utils.parametrizations.weight_norm(sg.nn.Linear(3, 2))
    with pytest.raises(NotImplementedError, match="parametrized tensor 'weight'"):
        sg.func.functional_call(m, {"weight": sg.ones(2, 3)}, sg.ones(3))
    assert m.parametrizations.weight.original1.shape == (2, 3)  # untouched


def test_vmap_refuses_what_its_loop_cannot_match():
    import symgrad as sg
    from symgrad.func import vmap
    y = sg.zeros(3)
    with pytest.raises(RuntimeError, match="in_dims None was changed in place"):
        vmap(lambda x, y: y.add_(x), in_dims=(0, None))(sg.ones(2, 3), y)
    with pytest.raises(NotImplementedError, match="empty batch"):
        vmap(lambda x: x)(sg.zeros(0, 3))
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda x: sg.nn.functional.dropout(x, 0.5))(sg.ones(2, 3))
    # 'same' gives every element the same draws; the generator then stands where one
    # element's draws leave it
    sg.manual_seed(3)
    r = vmap(lambda x: x + sg.randn(3), randomness="same")(sg.zeros(4, 3))
    after = sg.randn(2)
    sg.manual_seed(3)
    once = sg.randn(3)
    assert (r == once).all() and (sg.randn(2) == after).all()


def test_jacfwd_with_negative_argnums_is_the_jacobian():
    # PyTorch 2.13's jacfwd with a negative argnum gives zeros (its own jacfwd with the
    # positive argnum, and jacrev with the negative one, give the Jacobian symgrad gives)
    import numpy as np
    import torch

    import symgrad as sg
    x = np.array([0.3, -1.2, 2.0])

    def f(a, b):
        return a * b.sum()

    tx, ty = torch.tensor(x), torch.tensor(x[::-1].copy())
    want = torch.func.jacfwd(f, argnums=(0, 1))(tx, ty)
    assert torch.equal(torch.func.jacrev(f, argnums=(-2, -1))(tx, ty)[1], want[1])
    sx, sy = sg.tensor(x), sg.tensor(x[::-1].copy())
    for argnums in ((-2, -1), (0, -1), -1):
        got = sg.func.jacfwd(f, argnums=argnums)(sx, sy)
        got = got if isinstance(argnums, tuple) else (None, got)
        np.testing.assert_array_equal(got[1].numpy(), want[1].numpy())
        if got[0] is not None:
            np.testing.assert_array_equal(got[0].numpy(), want[0].numpy())


def toplevel_vmap(torch, show, data):
    """``torch.vmap`` at the top level (``import symgrad as torch``): PyTorch's on
    Tensors, with gradients and double backward through it."""
    a, c = torch.tensor(data["a"]), torch.tensor(data["c"])
    _show(show, torch.vmap(torch.dot)(a, c))
    _show(show, torch.vmap(torch.mv, (None, 0))(a, c))             # in_dims positional
    _show(show, torch.vmap(lambda x: x * 2, 1, 1)(c))               # and out_dims
    _show(show, torch.vmap(lambda d: d["p"].sin() * d["q"], in_dims=({"p": 0, "q": None},))(
        {"p": a, "q": c[0]}))
    _show(show, torch.vmap(torch.vmap(lambda x, y: x * y.exp()))(a, c))
    _show(show, torch.vmap(torch.func.grad(lambda x: (x.sin() * x).sum()))(a))
    x = torch.tensor(data["a"], requires_grad=True)
    out = torch.vmap(lambda r: (r.exp() * r).sum() ** 2)(x)
    _show(show, out)
    g, = torch.autograd.grad(out.sum(), x, create_graph=True)
    _show(show, g)
    _show(show, torch.autograd.grad((g * c).sum(), x))             # double backward
    torch.manual_seed(0)
    r = torch.vmap(lambda r: torch.rand(2) + r[:1] * 0, randomness="same")(a)
    show(tuple(r.shape), bool((r[0] == r[1]).all()))
    _error(show, lambda: torch.vmap(lambda r: torch.rand(2))(a))
    _error(show, lambda: torch.vmap(torch.dot)(a, c[:2]))


def test_toplevel_vmap():
    run_both(toplevel_vmap, _data(7, a=(3, 3), c=(3, 3)))


def test_toplevel_vmap_is_decided_by_the_arguments():
    """sg.vmap: PyTorch's on Tensors, JAX's (one kernel, arrays) on numpy arrays; a
    mixed call or keywords of the other side raise instead of guessing."""
    import numpy as np

    import symgrad as sg
    a = np.arange(6.0).reshape(2, 3)
    f = sg.vmap(lambda x, w: np.sin(x) @ w, (0, None), backend="numpy")
    got = f(a, np.ones(3))
    assert type(got) is np.ndarray
    np.testing.assert_allclose(got, np.sin(a).sum(1), rtol=1e-14)
    t = sg.vmap(lambda x, w: x.sin() @ w, (0, None))(sg.tensor(a), sg.ones(3))
    assert isinstance(t, sg.Tensor)
    np.testing.assert_allclose(t.numpy(), np.sin(a).sum(1), rtol=1e-14)
    class Scaled:  # one vmap, both sides; as a method: bound, self is argument 0
        k = 3.0
        scaled = sg.vmap(lambda self, x: x.sum() * self.k, (None, 0), backend="numpy")
    got = Scaled().scaled(a)
    assert type(got) is np.ndarray
    np.testing.assert_allclose(got, a.sum(1) * 3, rtol=1e-14)
    t = Scaled().scaled(sg.tensor(a))
    assert isinstance(t, sg.Tensor)
    np.testing.assert_allclose(t.numpy(), a.sum(1) * 3, rtol=1e-14)
    assert Scaled().scaled.graph(a) is not None                     # the numpy side's API
    t = sg.vmap(lambda x, s: x * s, (0, None))(sg.tensor(a), np.float64(2.0))  # a number
    assert isinstance(t, sg.Tensor) and t.tolist() == (a * 2).tolist()
    with pytest.raises(TypeError, match="mix Tensors and numpy arrays"):
        sg.vmap(lambda x, y: x * y)(sg.tensor(a), a)
    with pytest.raises(TypeError, match="mix Tensors and numpy arrays"):
        sg.vmap(lambda d: d["x"] * d["y"])({"x": sg.tensor(a), "y": a})
    with pytest.raises(TypeError, match="JAX's"):
        sg.vmap(lambda x: x, in_dims=0, backend="numpy")
    with pytest.raises(TypeError, match="made it torch.vmap"):
        sg.vmap(lambda x: x, in_dims=0)(a)
    with pytest.raises(TypeError, match="made it JAX's numpy vmap"):
        sg.vmap(lambda x: x, in_axes=0)(sg.tensor(a))
    with pytest.raises(TypeError, match="JAX's"):
        sg.vmap(lambda x: x, 0, 0, "numpy", chunk_size=2)


def functionalizes(torch, show, data):
    """functionalize: the same results, the inputs' mutations applied, and PyTorch's
    rules for which results alias an input (written through afterwards to show it)."""
    functionalize, = _func(torch, "functionalize")
    a = torch.tensor(data["a"])

    def f(x, y):
        y.add_(1)
        z = x.view(-1)
        z.mul_(2)
        return x.sum() + y.sum(), z

    for remove in ("mutations", "mutations_and_views"):
        x, y = a.clone(), a[0].clone()
        _show(show, functionalize(f, remove=remove)(x, y))
        _show(show, (x, y))
        for g in (lambda t: t.view(-1), lambda t: t[1:], lambda t: t.add_(1),
                  lambda t: t.add_(1)[1:], lambda t: (t * 2)[1:], lambda t: (t[0], t.T)):
            x = a.clone()
            out = functionalize(g, remove=remove)(x)
            for o in out if isinstance(out, tuple) else (out,):
                o.mul_(10)                                # an alias writes x
            _show(show, (out, x))
        x = a.clone()
        show(functionalize(lambda t: t, remove=remove)(x) is x)
        show(*functionalize(lambda t: (t.sum().item(), 3), remove=remove)(x))
    w = torch.tensor(data["a"][0], requires_grad=True)
    u = w * 1
    o = functionalize(lambda t: t.mul_(3).sum())(u)
    _show(show, (o, u))
    (u.sin().sum() + o).backward()                        # through the mutation
    _show(show, w.grad)
    x = torch.tensor(data["a"], requires_grad=True)
    out = functionalize(lambda t: (t.clone().mul_(t).exp()).sum())(x)
    g, = torch.autograd.grad(out, x, create_graph=True)
    _show(show, (out, g, torch.autograd.grad(g.sum(), x)))  # double backward
    _show(show, functionalize(lambda t, k=1: t * k)(a, k=3))
    _show(show, torch.func.vmap(functionalize(lambda t: t.clone().mul_(t)))(a))
    _error(show, lambda: functionalize(lambda t: t.add_(1))(w), 74)  # a leaf in place
    _error(show, lambda: functionalize(f, remove="views"))


def test_functionalize():
    run_both(functionalizes, _data(8, a=(2, 3)))


def test_functionalize_refuses_inputs_that_share_memory():
    import symgrad as sg
    x = sg.zeros(4)
    with pytest.raises(NotImplementedError, match="inputs 0 and 1 .* share memory"):
        sg.func.functionalize(lambda a, b: a.add_(1) + b[0])(x, x[:2])
    assert (x == 0).all()                                 # refused before running
    out = sg.func.functionalize(lambda a, b: a.add_(1) + b[0])(x[:2], x[2:])  # disjoint
    assert out.tolist() == [1.0, 1.0] and x.tolist() == [1.0, 1.0, 0.0, 0.0]
