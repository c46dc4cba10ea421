import numpy as np
from _h import main
rng = np.random.default_rng(0)
X = rng.standard_normal((2, 2, 6, 5)); W = rng.standard_normal((4, 2, 3, 2)); Bb = rng.standard_normal(4)
def convmod(mode, **kw):
    def f(L, dt):
        m = L.nn.Conv2d(2, 4, (3, 2), padding_mode=mode, **kw).to(dt)
        with L.no_grad(): m.weight.copy_(L.tensor(W, dtype=dt)); m.bias.copy_(L.tensor(Bb, dtype=dt))
        x = L.tensor(X, dtype=dt, requires_grad=True); y = m(x); (y * y.sin()).sum().backward()
        return [y, x.grad, m.weight.grad, m.bias.grad]
    return f
def convT_outsize(L, dt):
    m = L.nn.ConvTranspose2d(2, 4, (3, 2), stride=(3, 2), padding=1).to(dt)
    with L.no_grad(): m.weight.copy_(L.tensor(W.transpose(1, 0, 2, 3), dtype=dt)); m.bias.copy_(L.tensor(Bb, dtype=dt))
    x = L.tensor(X, dtype=dt, requires_grad=True); y = m(x, output_size=[17, 10]); (y * y.sin()).sum().backward()
    return [y, x.grad, m.weight.grad]
def unpool_default(L, dt):
    x = L.tensor(X, dtype=dt, requires_grad=True)
    y, i = L.nn.functional.max_pool2d(x, (2, 3), stride=(2, 2), return_indices=True)
    z = L.nn.MaxUnpool2d((2, 3), stride=(2, 2))(y, i); (z * z.sin()).sum().backward(); return [z, x.grad]
def pool_ceil_edge(L, dt):
    x = L.tensor(X[:, :, :5, :5], dtype=dt, requires_grad=True)
    a = L.nn.functional.max_pool2d(x, 2, stride=2, padding=1, ceil_mode=True)
    b = L.nn.functional.avg_pool2d(x, 2, stride=2, padding=1, ceil_mode=True)
    c = L.nn.functional.avg_pool2d(x, 3, stride=3, padding=1, ceil_mode=True, count_include_pad=True)
    (a.sum() + (b * b).sum() + c.sin().sum()).backward(); return [a, b, c, x.grad]
def fold_mod(L, dt):
    x = L.tensor(rng.standard_normal((2, 12, 6)), dtype=dt, requires_grad=True)
    y = L.nn.Fold((4, 5), (2, 3), stride=(2, 1), padding=(1, 0))(x) if False else L.nn.Fold((5, 4), (2, 2), stride=(2, 2), padding=(1, 1))(x)
    (y * y.sin()).sum().backward(); return [y, x.grad]
def interp_ds(L, dt):
    x = L.tensor(X, dtype=dt, requires_grad=True)
    a = L.nn.functional.interpolate(x, scale_factor=0.5, mode="bilinear", antialias=False)
    b = L.nn.functional.interpolate(x, size=(3, 3), mode="nearest")
    (a.sum() + b.sin().sum()).backward(); return [a, b, x.grad]
def layer_reuse_double(L, dt):
    m = L.nn.Linear(5, 5).to(dt)
    with L.no_grad(): m.weight.copy_(L.tensor(rng_lw, dtype=dt)); m.bias.fill_(0.1)
    ln = L.nn.LayerNorm(5).to(dt)
    x = L.tensor(X[0, 0], dtype=dt, requires_grad=True)
    y = ln(m(ln(m(x)).tanh()))
    g, = L.autograd.grad(y.pow(3).sum(), x, create_graph=True)
    g.pow(2).sum().backward(); return [y, g, x.grad, m.weight.grad, ln.weight.grad]
rng_lw = rng.standard_normal((5, 5))
def gn_double(L, dt):
    x = L.tensor(X, dtype=dt, requires_grad=True)
    y = L.nn.functional.group_norm(x, 1, eps=1e-3)
    y = L.nn.functional.batch_norm(y, None, None, training=True)
    g, = L.autograd.grad((y ** 3).sum(), x, create_graph=True); g.pow(2).sum().backward(); return [y, g, x.grad]
def pad_mods(L, dt):
    x = L.tensor(X, dtype=dt, requires_grad=True)
    a = L.nn.ReflectionPad2d((1, 2, 3, 0))(x); b = L.nn.ReplicationPad2d(2)(x); c = L.nn.CircularPad2d((1, 1, 2, 0))(x); d = L.nn.ZeroPad2d((1, -1, 0, 2))(x); e = L.nn.ConstantPad2d(1, 3.5)(x)
    (a.sin().sum() + (b * b).sum() + c.cos().sum() + d.sum() * 2 + e.exp().sum()).backward(); return [a, b, c, d, e, x.grad]
cases = []
for dt in ["float64", "float32"]:
    cases += [(f"conv {m}", convmod(m, padding=(1, 2), stride=(2, 1)), dt) for m in ["zeros", "reflect", "replicate", "circular"]]
    cases += [("conv same circ", convmod("circular", padding="same", dilation=(2, 1)), dt),
              ("convT outsize", convT_outsize, dt), ("unpool default", unpool_default, dt), ("pool ceil edge", pool_ceil_edge, dt),
              ("fold mod", fold_mod, dt), ("interp ds", interp_ds, dt), ("reuse double", layer_reuse_double, dt), ("gn bn double", gn_double, dt), ("pad mods", pad_mods, dt)]
main(cases)
