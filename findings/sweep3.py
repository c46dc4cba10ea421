import numpy as np
from _h import compare, main
rng = np.random.default_rng(0)
X4 = rng.standard_normal((4, 3, 5, 2)) * 2 + 1
X2 = rng.standard_normal((6, 3))
def copyw(L, mod, src, dt):
    # set all params from numpy dict
    with L.no_grad():
        for n, p in mod.named_parameters():
            p.copy_(L.tensor(src[n], dtype=dt))
def bn(cls, X, **kw):
    def f(L, dt):
        m = getattr(L.nn, cls)(3, **kw).to(dt)
        if kw.get("affine", True):
            with L.no_grad():
                m.weight.copy_(L.tensor([1.5, -0.5, 2.0], dtype=dt)); m.bias.copy_(L.tensor([0.1, 0.2, -0.3], dtype=dt))
        outs = []
        x = L.tensor(X, dtype=dt, requires_grad=True)
        for step in range(3):
            y = m(x * (step + 1))
            outs.append(y)
        (y * y.sin()).sum().backward(); outs.append(x.grad)
        m.eval(); outs.append(m(x + 1))
        if m.running_mean is not None: outs += [m.running_mean, m.running_var, m.num_batches_tracked]
        m.train(); outs.append(m(x - 1))
        if kw.get("affine", True): outs += [m.weight.grad, m.bias.grad]
        return outs
    return f
def ln(L, dt):
    m = L.nn.LayerNorm([5, 2], eps=1e-3).to(dt)
    with L.no_grad():
        m.weight.copy_(L.tensor(rng_w, dtype=dt)); m.bias.mul_(0).add_(0.3)
    x = L.tensor(X4, dtype=dt, requires_grad=True)
    y = m(x); g, = L.autograd.grad((y ** 3).sum(), x, create_graph=True)
    (g * g).sum().backward()
    return [y, g, x.grad, m.weight.grad, m.bias.grad]
rng_w = rng.standard_normal((5, 2))
def gn(L, dt):
    m = L.nn.GroupNorm(3, 6, eps=1e-4).to(dt)
    with L.no_grad():
        m.weight.copy_(L.tensor(np.arange(6) * 0.3 - 1, dtype=dt))
    x = L.tensor(np.concatenate([X4, X4[:, ::-1] ** 2], 1), dtype=dt, requires_grad=True)
    y = m(x); g, = L.autograd.grad((y ** 3).sum(), x, create_graph=True)
    (g * g).sum().backward()
    return [y, g, x.grad, m.weight.grad, m.bias.grad]
def inorm(L, dt):
    x = L.tensor(X4, dtype=dt, requires_grad=True)
    rm = L.zeros(3, dtype=dt); rv = L.ones(3, dtype=dt)
    y = L.nn.functional.instance_norm(x, rm, rv, use_input_stats=True, momentum=0.3)
    (y ** 3).sum().backward()
    return [y, x.grad, rm, rv]
def bn_double(L, dt):
    m = L.nn.BatchNorm2d(3).to(dt)
    x = L.tensor(X4, dtype=dt, requires_grad=True)
    y = m(x); g, = L.autograd.grad((y ** 3).sum(), x, create_graph=True)
    (g * g).sum().backward()
    return [y, g, x.grad, m.weight.grad]
cases = []
for dt in ["float64", "float32"]:
    cases += [
        ("bn2d", bn("BatchNorm2d", X4), dt),
        ("bn2d mom None", bn("BatchNorm2d", X4, momentum=None), dt),
        ("bn2d no track", bn("BatchNorm2d", X4, track_running_stats=False), dt),
        ("bn2d no affine", bn("BatchNorm2d", X4, affine=False, momentum=0.7), dt),
        ("bn1d 2d", bn("BatchNorm1d", X2, eps=0.1), dt),
        ("bn1d 3d", bn("BatchNorm1d", X4[:, :, :, 0]), dt),
        ("ln", ln, dt), ("gn", gn, dt), ("inorm", inorm, dt), ("bn double", bn_double, dt),
    ]
main(cases)
