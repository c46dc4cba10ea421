import numpy as np, io
from _h import main
rng = np.random.default_rng(1)
X5 = rng.standard_normal((1, 2, 5, 6, 7)); X3 = rng.standard_normal((2, 3, 10))
def p3(L, dt):
    x = L.tensor(X5, dtype=dt, requires_grad=True); F = L.nn.functional
    a, ia = F.max_pool3d(x, (2, 3, 2), stride=(2, 2, 3), padding=(1, 1, 0), dilation=(1, 2, 1), ceil_mode=True, return_indices=True)
    b = F.avg_pool3d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)
    c = F.avg_pool3d(x, 2, divisor_override=3)
    d = F.adaptive_avg_pool3d(x, (3, 4, 5)); e, ie = F.adaptive_max_pool3d(x, (2, 4, 3), return_indices=True)
    (a.sin().sum() + (b * b).sum() + c.sum() + d.cos().sum() + (e ** 3).sum()).backward()
    return [a, ia, b, c, d, e, ie, x.grad]
def p1(L, dt):
    x = L.tensor(X3, dtype=dt, requires_grad=True); F = L.nn.functional
    a = F.adaptive_avg_pool1d(x, 4); b, ib = F.adaptive_max_pool1d(x, 7, return_indices=True)
    c = F.max_unpool1d(*F.max_pool1d(x, 3, stride=2, return_indices=True), 3, stride=2)
    (a.sin().sum() + (b * b).sum() + c.cos().sum()).backward(); return [a, b, ib, c, x.grad]
def convT3(L, dt):
    x = L.tensor(X5, dtype=dt, requires_grad=True); w = L.tensor(W3, dtype=dt, requires_grad=True); b = L.tensor([0.3, -0.2, 0.1, 0.5], dtype=dt, requires_grad=True)
    y = L.nn.functional.conv_transpose3d(x, w, b, stride=(2, 1, 3), padding=(0, 1, 1), output_padding=(1, 0, 2), groups=2, dilation=(1, 2, 1))
    (y * y.sin()).sum().backward(); return [y, x.grad, w.grad, b.grad]
W3 = rng.standard_normal((2, 2, 2, 3, 3))
E = 6
import torch
torch.manual_seed(1)
TM = torch.nn.MultiheadAttention(E, 3, kdim=4, vdim=5, batch_first=True, add_bias_kv=False).double()
SRC = {n: p.detach().numpy().copy() for n, p in TM.named_parameters()}
Q = rng.standard_normal((2, 3, E)); K = rng.standard_normal((2, 4, 4)); V = rng.standard_normal((2, 4, 5))
def mha_kv(nw=True, **kw):
    def f(L, dt):
        m = L.nn.MultiheadAttention(E, 3, kdim=4, vdim=5, batch_first=True).to(dt)
        with L.no_grad():
            for n, p in m.named_parameters(): p.copy_(L.tensor(SRC[n], dtype=dt))
        q = L.tensor(Q, dtype=dt, requires_grad=True)
        kw2 = {a: (L.tensor(b) if isinstance(b, np.ndarray) and b.dtype == bool else L.tensor(b, dtype=dt) if isinstance(b, np.ndarray) else b) for a, b in kw.items()}
        out, w = m(q, L.tensor(K, dtype=dt), L.tensor(V, dtype=dt), need_weights=nw, **kw2)
        (out ** 2).sum().backward()
        return [out, q.grad, m.q_proj_weight.grad, m.v_proj_weight.grad] + ([w] if nw else [])
    return f
def norms(L, dt):
    x = L.tensor(X3, dtype=dt, requires_grad=True)
    a = L.nn.LayerNorm(10, elementwise_affine=False).to(dt)(x); b = L.nn.LayerNorm([3, 10], bias=False).to(dt)(x)
    c = L.nn.GroupNorm(3, 3, affine=False).to(dt)(x); d = L.nn.functional.normalize(x, p=1.5, dim=1); e = L.nn.functional.normalize(x, p=float("inf"), dim=-1)
    (a.sin().sum() + (b ** 3).sum() + c.cos().sum() + d.sum() * 3 + (e * e).sum()).backward(); return [a, b, c, d, e, x.grad]
def save_whole(L, dt):
    m = L.nn.Sequential(L.nn.Linear(10, 4), L.nn.BatchNorm1d(3)).to(dt)
    with L.no_grad(): m[0].weight.copy_(L.tensor(rng_l, dtype=dt)); m[0].bias.fill_(0.1)
    x = L.tensor(X3, dtype=dt)
    m(x)
    buf = io.BytesIO(); L.save(m, buf); buf.seek(0); m2 = L.load(buf, weights_only=False)
    opt = L.optim.SGD(m2.parameters(), lr=0.1); (m2(x) ** 2).sum().backward(); opt.step()
    m2.eval()
    return [m2(x), m2[1].running_mean, m2[1].running_var, m[0].weight]
rng_l = rng.standard_normal((4, 10))
def dec(L, dt):
    L.manual_seed(0)
    m = L.nn.TransformerDecoderLayer(6, 2, 12, dropout=0.0, batch_first=True).to(dt)
    with L.no_grad():
        for i, (n, p) in enumerate(m.named_parameters()): p.copy_(L.tensor(np.sin(np.arange(p.numel()) * 0.37 + i).reshape(tuple(p.shape)) * 0.4, dtype=dt))
    t = L.tensor(Q, dtype=dt, requires_grad=True); mem = L.tensor(rng_mem, dtype=dt)
    msk = L.nn.Transformer.generate_square_subsequent_mask(3, dtype=dt)
    y = m(t, mem, tgt_mask=msk, memory_key_padding_mask=L.tensor(np.array([[False, False, True, True], [False] * 4])))
    (y * y.sin()).sum().backward(); return [y, t.grad]
rng_mem = rng.standard_normal((2, 4, 6))
cases = []
for dt in ["float64", "float32"]:
    cases += [("pool3d", p3, dt), ("pool1d", p1, dt), ("convT3", convT3, dt), ("mha kdim vdim", mha_kv(), dt), ("mha kv no weights", mha_kv(False, is_causal=False), dt),
              ("mha kv float mask", mha_kv(attn_mask=rng.standard_normal((3, 4))), dt), ("norms", norms, dt), ("save whole", save_whole, dt), ("decoder", dec, dt)]
main(cases)
