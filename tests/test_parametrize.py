"""``nn.utils.parametrize``, ``parametrizations.weight_norm``/``spectral_norm`` and the
legacy ``nn.utils.weight_norm`` against real PyTorch 2.13.

Each program runs with real PyTorch and with symgrad on the same data (weights, and
spectral norm's ``_u``/``_v`` buffers, copied in) and must print the same: names,
printed modules, values and gradients at each of three SGD steps (rtol 1e-9,
float64), eval-mode behaviour, assignments through ``right_inverse``, removal, and
the errors (:mod:`torch_oracle`).
"""

from __future__ import annotations

import copy
import warnings

import pytest

pytest.importorskip("torch")

from torch_oracle import (  # noqa: E402,F401 (a fixture)
    float64_default,
    run_both,
    show_error,
)
from torch_oracle import normal_data as _data  # noqa: E402


def _copy(torch, module, data, names):
    with torch.no_grad():
        for name in names:
            getattr(module, name).copy_(torch.tensor(data[name]))


def _train(torch, show, model, data, steps=3, **sgd):
    opt = torch.optim.SGD(model.parameters(), lr=0.1, **sgd)
    x, t = torch.tensor(data["x"]), torch.tensor(data["t"])
    for step in range(steps):
        opt.zero_grad()
        loss = ((model(x) - t) ** 2).mean()
        loss.backward()
        show("step", step, loss)
        for name, p in model.named_parameters():
            show(name, p, p.grad)
        opt.step()


def weight_norms(torch, show, data):
    nn = torch.nn
    P = nn.utils.parametrizations
    m = nn.Linear(3, 2)
    _copy(torch, m, data, ["weight", "bias"])
    P.weight_norm(m)
    show(m)
    show([n for n, _ in m.named_parameters()], list(m.state_dict()))
    show(type(m).__name__, m.weight, m.parametrizations.weight.original0)
    _train(torch, show, m, data, momentum=0.9)
    m.weight = torch.tensor(data["weight"]) * 2               # through right_inverse
    show(m.parametrizations.weight.original0, m.parametrizations.weight.original1, m.weight)
    _train(torch, show, m, data, steps=1)
    for dim in (None, 1, -1):
        w = nn.Linear(3, 2)
        _copy(torch, w, data, ["weight", "bias"])
        P.weight_norm(w, dim=dim)
        show(dim, w.parametrizations.weight.original0, w.weight)
        _train(torch, show, w, data, steps=2)
    twin = P.weight_norm(nn.Linear(3, 2))                    # state_dict round trip
    twin.load_state_dict(m.state_dict())
    show(twin.weight, twin.parametrizations.weight.original0)
    replica = copy.deepcopy(m)                                # a copy trains on its own
    _train(torch, show, replica, data, steps=1)
    show(m.weight, replica.weight, type(replica).__name__)
    removed = nn.utils.parametrize.remove_parametrizations(m, "weight")
    show(removed, type(removed).__name__, [n for n, _ in m.named_parameters()], m.weight,
         hasattr(m, "parametrizations"))


def test_weight_norm():
    run_both(weight_norms, _data(0, weight=(2, 3), bias=(2,), x=(4, 3), t=(4, 2)))


def conv_weight_norms(torch, show, data):
    # a 4-d weight: the norm over three dims (it raised: np.linalg.norm takes two axes);
    # a dim outside the weight's dims is PyTorch's IndexError (it took dim % ndim)
    nn = torch.nn
    x = torch.tensor(data["x"])
    for dim in (0, 1, 2, -2, None):
        for legacy in (False, True):
            c = nn.Conv2d(2, 3, 2)
            _copy(torch, c, data, ["weight", "bias"])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                (nn.utils.weight_norm if legacy else nn.utils.parametrizations.weight_norm)(
                    c, dim=dim)
            y = c(x)
            (y ** 2).sum().backward()
            show(dim, legacy, y, [(n, p.grad) for n, p in c.named_parameters()])
    show(torch.tensor(data["weight"]).norm(2, (1, 2, 3), keepdim=True),
         torch.linalg.vector_norm(torch.tensor(data["weight"]), 2, (0, 2, -1)))
    show_error(show, lambda: nn.utils.parametrizations.weight_norm(nn.Linear(3, 2), dim=2))
    show_error(show, lambda: nn.utils.weight_norm(nn.Linear(3, 2), dim=-3))


def test_weight_norm_of_a_convolution():
    run_both(conv_weight_norms, _data(3, weight=(3, 2, 2, 2), bias=(3,), x=(2, 2, 4, 4)))


def spectral_norms(torch, show, data):
    nn = torch.nn
    m = nn.Linear(3, 4)
    _copy(torch, m, data, ["weight", "bias"])
    nn.utils.parametrizations.spectral_norm(m)
    sn = m.parametrizations.weight[0]
    with torch.no_grad():  # the random start is each library's own: copied in
        sn._u.copy_(torch.tensor(data["u"]))
        sn._v.copy_(torch.tensor(data["v"]))
    show(m, [n for n, _ in m.named_parameters()], list(m.state_dict()))
    _train(torch, show, m, data)
    show(sn._u, sn._v)
    m.eval()
    x = torch.tensor(data["x"])
    show(m(x), m(x), sn._u, sn._v)                          # eval: no iteration
    m.train()
    show(m.weight, sn._u)
    c = nn.Linear(3, 4)
    _copy(torch, c, data, ["bias"])
    nn.utils.parametrizations.spectral_norm(c, n_power_iterations=3, dim=1, eps=1e-6)
    sc = c.parametrizations.weight[0]
    _copy(torch, c.parametrizations.weight, data, ["original"])
    with torch.no_grad():
        sc._u.copy_(torch.tensor(data["v"]))
        sc._v.copy_(torch.tensor(data["u"]))
    _train(torch, show, c, data, steps=2)
    b = nn.Linear(3, 4)
    _copy(torch, b, data, ["bias"])
    nn.utils.parametrizations.spectral_norm(b, name="bias")  # one dimension: normalize
    show(b.bias)
    show_error(show, lambda: nn.utils.parametrizations.spectral_norm(nn.Linear(3, 4),
                                                                     n_power_iterations=0))
    show_error(show, lambda: nn.utils.parametrizations.spectral_norm(nn.Linear(3, 4),
                                                                     name="foo"))


def test_spectral_norm():
    run_both(spectral_norms, _data(1, weight=(4, 3), bias=(4,), x=(5, 3), t=(5, 4), u=(4,),
                                   v=(3,), original=(4, 3)))


def legacy_weight_norm(torch, show, data):
    nn = torch.nn
    m = nn.Linear(3, 2)
    _copy(torch, m, data, ["weight", "bias"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nn.utils.weight_norm(m)
    show([str(w.message) for w in caught])
    show([n for n, _ in m.named_parameters()], m.weight_g, m.weight_v, m.weight)
    show(m.weight.requires_grad, m.weight.is_leaf)
    _train(torch, show, m, data)
    show_error(show, lambda: nn.utils.weight_norm(m))
    nn.utils.remove_weight_norm(m)
    show([n for n, _ in m.named_parameters()], type(m.weight).__name__, m.weight)
    show_error(show, lambda: nn.utils.remove_weight_norm(m))
    c = nn.Linear(3, 2)
    _copy(torch, c, data, ["weight", "bias"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nn.utils.weight_norm(c, dim=None)
    show(c.weight_g, c.weight)
    _train(torch, show, c, data, steps=2)


def test_legacy_weight_norm():
    run_both(legacy_weight_norm, _data(2, weight=(2, 3), bias=(2,), x=(4, 3), t=(4, 2)))



def legacy_spectral_norm(torch, show, data):
    """nn.utils.spectral_norm: weight_orig, weight_u, weight_v, the power iteration in
    training mode only, state_dict keys and round trip, removal, errors (u and v copied
    in: their random start is each library's own)."""
    nn = torch.nn
    m = nn.Linear(3, 4)
    _copy(torch, m, data, ["weight", "bias"])
    nn.utils.spectral_norm(m)
    show(m, [n for n, _ in m.named_parameters()], [n for n, _ in m.named_buffers()],
         list(m.state_dict()), m.weight_orig.shape, m.weight_u.shape, m.weight_v.shape)
    show(m.weight, m.weight.requires_grad)                  # before a forward: the original
    with torch.no_grad():
        m.weight_u.copy_(torch.tensor(data["u"]))
        m.weight_v.copy_(torch.tensor(data["v"]))
    _train(torch, show, m, data)
    show(m.weight, m.weight_u, m.weight_v)
    m.eval()
    x = torch.tensor(data["x"])
    show(m(x), m(x), m.weight_u, m.weight_v)                # eval: no iteration
    y = m(x).pow(2).sum()
    show(torch.autograd.grad(y, m.weight_orig))
    m.train()
    twin = nn.utils.spectral_norm(nn.Linear(3, 4))
    twin.load_state_dict(m.state_dict())
    show(twin(x), twin.weight_u, twin.weight_v)
    show_error(show, lambda: nn.utils.spectral_norm(m))
    nn.utils.remove_spectral_norm(m)
    show([n for n, _ in m.named_parameters()], list(m.state_dict()), type(m.weight).__name__,
         m.weight)
    show_error(show, lambda: nn.utils.remove_spectral_norm(m))
    c = nn.Conv1d(2, 3, 2)                                   # a 3-d weight, dim=1
    _copy(torch, c, {"weight": data["conv"], "bias": data["cb"]}, ["weight", "bias"])
    nn.utils.spectral_norm(c, n_power_iterations=3, eps=1e-6, dim=1)
    with torch.no_grad():
        c.weight_u.copy_(torch.tensor(data["v"])[:2])
        c.weight_v.copy_(torch.tensor(data["cv"]))
    show(c.weight_u.shape, c.weight_v.shape)
    _train(torch, show, c, {"x": data["cx"], "t": data["ct"]}, steps=2)
    show_error(show, lambda: nn.utils.spectral_norm(nn.Linear(3, 4), n_power_iterations=0))


def test_legacy_spectral_norm():
    run_both(legacy_spectral_norm, _data(6, weight=(4, 3), bias=(4,), x=(5, 3), t=(5, 4),
                                         u=(4,), v=(3,), conv=(3, 2, 2), cb=(3,), cv=(6,),
                                         cx=(2, 2, 4), ct=(2, 3, 3)))


def parametrizations(torch, show, data):
    nn = torch.nn
    P = nn.utils.parametrize

    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()

    class Scale(nn.Module):
        def forward(self, X):
            return X * 2.0

    class NoInverse(nn.Module):
        def forward(self, X):
            return X.tanh()

    m = nn.Linear(3, 3)
    _copy(torch, m, data, ["weight", "bias"])
    P.register_parametrization(m, "weight", Symmetric())
    show(m, P.is_parametrized(m), P.is_parametrized(m, "weight"), P.is_parametrized(m, "bias"))
    show(m.weight, m.parametrizations.weight.original)
    P.register_parametrization(m, "weight", Scale())        # a second one, applied after
    show(m.weight, len(m.parametrizations.weight))
    _train(torch, show, m, data)
    show_error(show, lambda: setattr(m, "weight", torch.eye(3)), 200)  # Scale: no inverse
    show_error(show, lambda: setattr(m, "weight", nn.Parameter(torch.eye(3))))
    with P.cached():
        show(m.weight is m.weight)
    show(m.weight is m.weight)
    P.register_parametrization(m, "bias", NoInverse())
    show(m.bias, [n for n, _ in m.named_parameters()])
    P.remove_parametrizations(m, "bias", leave_parametrized=False)
    show(m.bias, [n for n, _ in m.named_parameters()])
    P.remove_parametrizations(m, "weight")
    show(m, type(m).__name__, m.weight, [n for n, _ in m.named_parameters()])
    show_error(show, lambda: P.remove_parametrizations(m, "weight"))
    show_error(show, lambda: P.register_parametrization(nn.Linear(3, 4), "foo", Scale()))
    bn = nn.BatchNorm1d(3)
    P.register_parametrization(bn, "running_var", Scale())   # a buffer
    show([n for n, _ in bn.named_buffers()], bn.running_var)


def test_register_parametrization():
    run_both(parametrizations, _data(3, weight=(3, 3), bias=(3,), x=(4, 3), t=(4, 3)))


def with_torch_func(torch, show, data):
    """A parametrized module's originals through functional_call and grad."""
    nn = torch.nn
    grad, functional_call = torch.func.grad, torch.func.functional_call
    m = nn.Linear(3, 2)
    _copy(torch, m, data, ["weight", "bias"])
    nn.utils.parametrizations.weight_norm(m)
    params = {k: v.detach() for k, v in m.named_parameters()}
    x, t = torch.tensor(data["x"]), torch.tensor(data["t"])

    def loss(p):
        return ((functional_call(m, p, (x,)) - t) ** 2).mean()

    g = grad(loss)(params)
    for k in g:
        show(k, g[k], g[k].requires_grad)
    ((m(x) - t) ** 2).mean().backward()
    for k, p in m.named_parameters():
        show(k, p.grad)
    g0 = {"parametrizations.weight.original0": params["parametrizations.weight.original0"]}
    with torch.no_grad():  # second derivatives through the weight norm (PyTorch has no
        h = torch.func.jacrev(torch.func.jacrev(loss))(g0)  # forward mode for it)
    show(h["parametrizations.weight.original0"]["parametrizations.weight.original0"])


def test_parametrized_module_under_torch_func():
    run_both(with_torch_func, _data(4, weight=(2, 3), bias=(2,), x=(4, 3), t=(4, 2)))


def orthogonals(torch, show, data):
    """parametrizations.orthogonal: every map, square, tall and wide, with and without
    trivialization; the weight, its orthogonality, SGD steps, assignment, errors. The
    random columns that complete a rectangular weight's ``base`` are each library's own:
    an orthogonal ``base`` is copied in."""
    nn = torch.nn
    orthogonal = nn.utils.parametrizations.orthogonal

    def rotation(n):
        s = torch.tensor(data["s"])[:n, :n]
        return torch.linalg.matrix_exp(s - s.T)

    for out_f, in_f, key in ((3, 3, "w33"), (4, 2, "w42"), (2, 4, "w24")):
        for omap in (None, "matrix_exp", "cayley", "householder"):
            for trivial in (True, False):
                m = nn.Linear(in_f, out_f)
                _copy(torch, m, {"weight": data[key], "bias": data["b"][:out_f]},
                      ["weight", "bias"])
                orthogonal(m, orthogonal_map=omap, use_trivialization=trivial)
                p = m.parametrizations.weight
                if trivial and out_f != in_f:
                    with torch.no_grad():
                        p[0].base.copy_(rotation(max(out_f, in_f)))
                w = m.weight
                gram = w.T @ w if out_f >= in_f else w @ w.T
                show(key, omap, trivial, list(m.state_dict()), w,
                     bool(torch.allclose(gram, torch.eye(min(out_f, in_f)))))
                x, t = torch.tensor(data["x"])[:, :in_f], torch.tensor(data["t"])[:, :out_f]
                ((m(x) - t) ** 2).mean().backward()
                torch.optim.SGD(m.parameters(), lr=0.1).step()        # one step
                show(p.original.grad, m.weight)
    m = orthogonal(nn.Linear(3, 3))
    m.weight = rotation(3)                                   # orthogonal: base is it
    show(m.parametrizations.weight[0].base, m.parametrizations.weight.original, m.weight)
    m.weight = torch.tensor(data["w33"])                     # not: its QR's Q
    show(m.parametrizations.weight[0].base, m.weight)
    holder = nn.Module()                                     # a batch of matrices
    holder.weight = nn.Parameter(torch.tensor(data["batch"]))
    orthogonal(holder)
    show(holder.weight.detach())
    holder = nn.Module()
    holder.weight = nn.Parameter(torch.tensor(data["batch"])[:, :, :2])
    orthogonal(holder, "weight", "householder", use_trivialization=False)
    show(holder.weight.detach(), holder.parametrizations.weight.original.detach())
    show_error(show, lambda: orthogonal(nn.Linear(3, 3), name="bias"))
    show_error(show, lambda: orthogonal(nn.Linear(3, 3), orthogonal_map="qr"))
    e = orthogonal(nn.Linear(3, 3), orthogonal_map="cayley", use_trivialization=False)

    def assign():
        e.weight = rotation(3)
    show_error(show, assign)

    def wrong_shape():
        m.weight = torch.eye(2)
    show_error(show, wrong_shape)


def test_orthogonal():
    run_both(orthogonals, _data(5, w33=(3, 3), w42=(4, 2), w24=(2, 4), b=(4,), s=(4, 4),
                                x=(5, 4), t=(5, 4), batch=(2, 3, 3)))



def spectral_norm_of_a_parametrized_conv_transpose(torch, show, data):
    """A ConvTranspose whose bias is parametrized (its class is then
    ParametrizedConvTranspose2d) still normalizes along dim 1 by default, both versions."""
    nn = torch.nn

    class Double(nn.Module):
        def forward(self, t):
            return t * 2

    for legacy in (True, False):
        m = nn.ConvTranspose2d(2, 3, 2)
        _copy(torch, m, data, ["weight", "bias"])
        nn.utils.parametrize.register_parametrization(m, "bias", Double())
        if legacy:
            nn.utils.spectral_norm(m)
            u, v = m.weight_u, m.weight_v
        else:
            nn.utils.parametrizations.spectral_norm(m)
            u, v = m.parametrizations.weight[0]._u, m.parametrizations.weight[0]._v
        with torch.no_grad():
            u.copy_(torch.tensor(data["u"]))
            v.copy_(torch.tensor(data["v"]))
        show(type(m).__name__, m(torch.tensor(data["x"])))


def test_spectral_norm_of_a_parametrized_conv_transpose():
    run_both(spectral_norm_of_a_parametrized_conv_transpose,
             _data(7, weight=(2, 3, 2, 2), bias=(3,), u=(3,), v=(8,), x=(1, 2, 2, 2)))
