import numpy as np
from _h import main
rng = np.random.default_rng(0)
A = np.array([-7, -3, 5, 127, -128, 100, 9, -1]); Bv = np.array([2, -2, 3, 1, -1, 3, -4, 5])
def intops(dt):
    def f(L, _):
        d = getattr(L, dt)
        a = L.tensor(A, dtype=d) if dt != "uint8" else L.tensor(np.abs(A) % 256, dtype=d)
        b = L.tensor(Bv, dtype=d) if dt != "uint8" else L.tensor(np.abs(Bv), dtype=d)
        out = [a + a, a * b, a - b * 3, a // b, a % b, a * 3, a + 200, -a, a.sum(), a.cumsum(0), a.prod(), a.abs(), a << 1 if hasattr(a, "__lshift__") else a, a.max(), a.float() / 3,
               a * 1.5, a / b, (a * 2.0).dtype == L.float32, a.sum().dtype == L.int64, (a + 1.0).dtype == L.float32, L.tensor(5, dtype=d) * 60]
        return [o if not isinstance(o, bool) else np.array(o) for o in out]
    return f
def clip(norm_type, err=False, inf=False):
    def f(L, dt):
        p1 = L.tensor(rng_p1, dtype=dt, requires_grad=True); p2 = L.tensor(rng_p2, dtype=dt, requires_grad=True)
        ((p1 ** 3).sum() + (p2 * p1[:2]).sum() * (float("inf") if inf else 1.0)).backward()
        n = L.nn.utils.clip_grad_norm_([p1, p2], 0.5, norm_type=norm_type, error_if_nonfinite=err)
        return [n, p1.grad, p2.grad]
    return f
rng_p1 = rng.standard_normal(4); rng_p2 = rng.standard_normal(2)
def clipval(L, dt):
    p1 = L.tensor(rng_p1, dtype=dt, requires_grad=True); (p1 ** 3).sum().backward()
    L.nn.utils.clip_grad_value_([p1], 0.7); return [p1.grad]
def emb(**kw):
    def f(L, dt):
        e = L.nn.Embedding(6, 3, **kw).to(dt)
        with L.no_grad(): e.weight.copy_(L.tensor(rng_e, dtype=dt))
        idx = L.tensor([[0, 2, 2], [5, 1, 2]])
        y = e(idx); (y * y.sin()).sum().backward(); return [y, e.weight.grad, e.weight]
    return f
rng_e = rng.standard_normal((6, 3)) * 2
def pooltie(L, dt):
    x = L.tensor(np.array([[[1., 1, 2, 2, 0], [1, 1, 2, 2, 0], [3, 3, 3, 3, 3]]]), dtype=dt, requires_grad=True)
    y, i = L.nn.functional.max_pool2d(x[None], 2, stride=1, return_indices=True)
    z, j = L.nn.functional.adaptive_max_pool2d(x[None], (2, 2), return_indices=True)
    (y.sum() + z.sum()).backward(); return [y, i, z, j, x.grad]
def dbl_conv(L, dt):
    x = L.tensor(rng_x, dtype=dt, requires_grad=True); w = L.tensor(rng_w, dtype=dt, requires_grad=True)
    y = L.nn.functional.conv2d(x, w, stride=2, padding=1)
    y = L.nn.functional.max_pool2d(y.tanh(), 2, ceil_mode=True)
    y = L.nn.functional.avg_pool2d(L.nn.functional.interpolate(y, scale_factor=2, mode="bilinear"), 2, padding=1)
    g = L.autograd.grad((y ** 2).sum(), [x, w], create_graph=True)
    (g[0].pow(2).sum() + g[1].sin().sum()).backward()
    return [y, g[0], g[1], x.grad, w.grad]
rng_x = rng.standard_normal((1, 2, 7, 7)); rng_w = rng.standard_normal((3, 2, 3, 3))
def dbl_convT(L, dt):
    x = L.tensor(rng_x, dtype=dt, requires_grad=True); w = L.tensor(rng_w.transpose(1, 0, 2, 3).copy(), dtype=dt, requires_grad=True)
    y = L.nn.functional.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1)
    y = L.nn.functional.pad(y.sin(), (1, 2, 2, 1), mode="reflect")
    g = L.autograd.grad((y ** 3).sum(), [x, w], create_graph=True)
    (g[0].pow(2).sum() + g[1].sin().sum()).backward()
    return [y, g[0], g[1], x.grad, w.grad]
def shared(L, dt):
    lin = L.nn.Linear(3, 3).to(dt)
    with L.no_grad(): lin.weight.copy_(L.tensor(rng_e[:3], dtype=dt)); lin.bias.fill_(0.1)
    m = L.nn.Sequential(lin, L.nn.Tanh(), lin)
    x = L.tensor(rng_e[3:], dtype=dt)
    opt = L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    for _ in range(3):
        opt.zero_grad(); m(x).pow(2).sum().backward(); opt.step()
        with L.no_grad(): lin.weight.mul_(0.9); lin.bias.add_(lin.weight[0])
    return [lin.weight, lin.bias, len(list(m.parameters()))]
cases = [(f"int {d}", intops(d), "float64") for d in ["int8", "uint8", "int16", "int32", "int64"]]
for dt in ["float64", "float32"]:
    cases += [("clip 2", clip(2.0), dt), ("clip inf", clip(float("inf")), dt), ("clip 1", clip(1), dt), ("clip nonfinite", clip(2.0, inf=True), dt),
              ("clip nonfinite err", clip(2.0, err=True, inf=True), dt), ("clipval", clipval, dt), ("clip 0.5", clip(0.5), dt),
              ("emb pad", emb(padding_idx=2), dt), ("emb pad neg", emb(padding_idx=-1), dt), ("emb maxnorm", emb(max_norm=1.0), dt),
              ("pooltie", pooltie, dt), ("dbl conv", dbl_conv, dt), ("dbl convT", dbl_convT, dt), ("shared", shared, dt)]
main(cases)
