import numpy as np, torch, symgrad as st
torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(0)
def cmp(name, a, b):
    a = [np.asarray(v.detach().numpy() if hasattr(v, "detach") else v, dtype=float) for v in a]
    b = [np.asarray(v.detach().numpy() if hasattr(v, "detach") else v, dtype=float) for v in b]
    ok = len(a) == len(b) and all(u.shape == v.shape and np.allclose(u, v, rtol=1e-8, atol=1e-10) for u, v in zip(a, b))
    print("OK " if ok else "BAD", name, "" if ok else [(u.ravel()[:4], v.ravel()[:4]) for u, v in zip(a, b)])
def bn(T, cls, shape, **kw):
    T.manual_seed(0)
    m = getattr(T.nn, cls)(shape[1], **kw)
    out = []
    for i in range(3):
        x = T.tensor(rng_data[i], requires_grad=True)
        y = m(x); (y ** 3).sum().backward(); out += [y, x.grad]
    m.eval()
    x = T.tensor(rng_data[3], requires_grad=True); y = m(x); (y ** 3).sum().backward(); out += [y, x.grad]
    if m.running_mean is not None: out += [m.running_mean, m.running_var]
    out += [m.num_batches_tracked] if getattr(m, "num_batches_tracked", None) is not None else []
    if getattr(m, "weight", None) is not None: out += [m.weight.grad, m.bias.grad]
    m.train()
    x = T.tensor(rng_data[0], requires_grad=True); y = m(x); out += [y]
    return out
for cls, shape in [("BatchNorm1d", (4, 3)), ("BatchNorm1d", (4, 3, 5)), ("BatchNorm2d", (2, 3, 2, 2)), ("InstanceNorm1d", (2, 3, 5)), ("InstanceNorm2d", (2, 3, 3, 2))]:
    rng_data = [rng.normal(size=shape) * 2 + 1 for _ in range(4)]
    for kw in [{}, {"momentum": None}, {"affine": False}, {"track_running_stats": False}, {"momentum": 0.3, "eps": 1e-3}, {"affine": True, "track_running_stats": True}]:
        if cls.startswith("Instance") and kw == {}: pass
        try:
            a = bn(torch, cls, shape, **kw)
        except Exception as e:
            print("torch refuses", cls, kw, e); continue
        try:
            b = bn(st, cls, shape, **kw)
        except Exception as e:
            print("EXC", cls, kw, type(e).__name__, e); continue
        cmp(f"{cls} {shape} {kw}", a, b)
# batchnorm with batch of 1 in train raises in torch for 1d (N=1, no spatial)
# Dropout eval
def drop(T):
    m = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.Dropout(0.5), T.nn.ReLU()); m.eval()
    with T.no_grad():
        m[0].weight.copy_(T.tensor(np.arange(12.).reshape(4, 3) / 10)); m[0].bias.fill_(0.1)
    x = T.tensor(np.ones((2, 3)), requires_grad=True); y = m(x); y.sum().backward(); return [y, x.grad, m.training, m[1].training]
cmp("dropout eval", drop(torch), drop(st))
# functional dropout training=False, F.batch_norm with training flag
def fbn(T):
    x = T.tensor(rng.normal(size=(4, 3)) if T is torch else _x, requires_grad=True)
    rm = T.zeros(3); rv = T.ones(3)
    y = T.nn.functional.batch_norm(x, rm, rv, training=True, momentum=0.2)
    y2 = T.nn.functional.batch_norm(x, rm, rv, training=False)
    (y.sum() + (y2 ** 2).sum()).backward()
    return [y, y2, rm, rv, x.grad]
_x = rng.normal(size=(4, 3))
rng2 = rng
import types
rng = types.SimpleNamespace(normal=lambda size: _x)
cmp("F.batch_norm", fbn(torch), fbn(st))
