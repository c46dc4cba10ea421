import numpy as np
from _h import main
rng = np.random.default_rng(0)
A = np.array([-7, -3, 5, 127, -128, 100, 9, -1]); Bv = np.array([2, -2, 3, 1, -1, 3, -4, 5])
def intops(dt):
    def f(L, _):
        d = getattr(L, dt)
        a = L.tensor(A if dt != "uint8" else np.abs(A) % 256, dtype=d)
        b = L.tensor(Bv if dt != "uint8" else np.abs(Bv), dtype=d)
        c = L.tensor(100, dtype=d)
        return [a + a, a * b, a - b * 3, a // b, a % b, a * 3, -a, a.sum(), a.cumsum(0), a.abs(), a.max(), a + c, a * c, a.pow(2), a // -3, a % -3, a.sum(dtype=d), a.prod(), a.min(0)[0]]
    return f
import torch
torch.manual_seed(0)
TL = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True, norm_first=False).double()
SRC = {n: p.detach().numpy().copy() for n, p in TL.named_parameters()}
X = rng.standard_normal((2, 5, 8))
kpm = np.zeros((2, 5), bool); kpm[1, 3:] = True
def enc(norm_first=False, act="relu", **kw):
    def f(L, dt):
        m = L.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True, norm_first=norm_first, activation=act).to(dt)
        with L.no_grad():
            for n, p in m.named_parameters(): p.copy_(L.tensor(SRC[n], dtype=dt))
        x = L.tensor(X, dtype=dt, requires_grad=True)
        kw2 = {a: (L.tensor(b) if isinstance(b, np.ndarray) else b) for a, b in kw.items()}
        if kw2.get("is_causal"):
            kw2["src_mask"] = L.nn.Transformer.generate_square_subsequent_mask(5, dtype=dt)
        y = m(x, **kw2)
        m.eval()
        with L.no_grad():
            y2 = m(x, **kw2)
        (y * y.sin()).sum().backward()
        return [y, y2, x.grad, m.linear1.weight.grad, m.self_attn.in_proj_weight.grad]
    return f
def stack(L, dt):
    m = L.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True).to(dt)
    with L.no_grad():
        for n, p in m.named_parameters(): p.copy_(L.tensor(SRC[n], dtype=dt))
    e = L.nn.TransformerEncoder(m, 2, enable_nested_tensor=False)
    with L.no_grad():
        e.layers[1].linear1.weight.mul_(0.5)
    x = L.tensor(X, dtype=dt, requires_grad=True)
    y = e(x, src_key_padding_mask=L.tensor(kpm)); (y ** 2).sum().backward()
    return [y, x.grad]
def bn_switch(L, dt):
    m = L.nn.Sequential(L.nn.Conv1d(2, 3, 2), L.nn.BatchNorm1d(3, momentum=0.3), L.nn.ReLU()).to(dt)
    with L.no_grad():
        m[0].weight.copy_(L.tensor(rng_w, dtype=dt)); m[0].bias.fill_(0.2)
    opt = L.optim.Adam(m.parameters(), lr=0.05)
    x = L.tensor(rng_x, dtype=dt)
    outs = []
    for s in range(5):
        m.train(s % 2 == 0)
        opt.zero_grad(); y = m(x * (1 + s)); (y ** 2).mean().backward(); opt.step(); outs.append(y)
    outs += [m[1].running_mean, m[1].running_var, m[0].weight]
    return outs
rng_w = rng.standard_normal((3, 2, 2)); rng_x = rng.standard_normal((4, 2, 6))
cases = [(f"int {d}", intops(d), "float64") for d in ["int8", "uint8", "int16", "int32", "int64"]]
for dt in ["float64", "float32"]:
    cases += [("enc", enc(), dt), ("enc nf gelu kpm", enc(True, "gelu", src_key_padding_mask=kpm), dt),
              ("enc causal", enc(is_causal=True), dt), ("enc stack", stack, dt), ("bn switch", bn_switch, dt)]
main(cases)
