import numpy as np
from _h import main
rng = np.random.default_rng(0)
E, H, Lq, Lk, B = 8, 2, 4, 5, 3
Q = rng.standard_normal((B, Lq, E)); K = rng.standard_normal((B, Lk, E)); V = rng.standard_normal((B, Lk, E))
def load_mha(L, m, dt, src):
    with L.no_grad():
        for n, p in m.named_parameters():
            p.copy_(L.tensor(src[n], dtype=dt))
import torch
torch.manual_seed(0)
tm = torch.nn.MultiheadAttention(E, H, bias=True, batch_first=True).double()
SRC = {n: p.detach().numpy().copy() for n, p in tm.named_parameters()}
SRC["in_proj_bias"] = rng.standard_normal(3 * E) * 0.1; SRC["out_proj.bias"] = rng.standard_normal(E) * 0.1
kpm = np.zeros((B, Lk), bool); kpm[0, 3:] = True; kpm[2, 0] = True
bmask = np.triu(np.ones((Lq, Lk), bool), 2)
fmask = rng.standard_normal((Lq, Lk))
fkpm = np.where(kpm, -np.inf, 0.0)
def mha(batch_first=True, self_attn=False, **kw):
    def f(L, dt):
        m = L.nn.MultiheadAttention(E, H, batch_first=batch_first).to(dt); load_mha(L, m, dt, SRC)
        q = L.tensor(Q if not self_attn else K, dtype=dt, requires_grad=True); k = L.tensor(K, dtype=dt, requires_grad=True); v = L.tensor(V if not self_attn else K, dtype=dt, requires_grad=True)
        if self_attn: q = k; v = k
        kw2 = {a: (L.tensor(b) if isinstance(b, np.ndarray) and b.dtype == bool else L.tensor(b, dtype=dt) if isinstance(b, np.ndarray) else b) for a, b in kw.items()}
        if not batch_first:
            q, k, v = q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1)
        out, w = m(q, k, v, **kw2)
        (out * out.sin()).sum().backward()
        return [out, w, m.in_proj_weight.grad, m.out_proj.bias.grad]
    return f
def sdpa(**kw):
    def f(L, dt):
        q = L.tensor(Q.reshape(B, Lq, 2, 4).transpose(0, 2, 1, 3), dtype=dt, requires_grad=True)
        k = L.tensor(K.reshape(B, Lk, 2, 4).transpose(0, 2, 1, 3), dtype=dt, requires_grad=True)
        v = L.tensor(V.reshape(B, Lk, 2, 4).transpose(0, 2, 1, 3), dtype=dt, requires_grad=True)
        kw2 = {a: (L.tensor(b) if isinstance(b, np.ndarray) and b.dtype == bool else L.tensor(b, dtype=dt) if isinstance(b, np.ndarray) else b) for a, b in kw.items()}
        y = L.nn.functional.scaled_dot_product_attention(q, k, v, **kw2)
        (y * y.cos()).sum().backward(); return [y, q.grad, k.grad, v.grad]
    return f
def sdpa_causal_sq(L, dt):
    q = L.tensor(Q.reshape(B, Lq, 2, 4).transpose(0, 2, 1, 3), dtype=dt, requires_grad=True)
    k = L.tensor(K[:, :Lq].reshape(B, Lq, 2, 4).transpose(0, 2, 1, 3), dtype=dt, requires_grad=True)
    y = L.nn.functional.scaled_dot_product_attention(q, k, k, is_causal=True, scale=0.7)
    (y * y.cos()).sum().backward(); return [y, q.grad, k.grad]
cases = []
for dt in ["float64", "float32"]:
    cases += [
        ("mha plain", mha(), dt), ("mha kpm bool", mha(key_padding_mask=kpm), dt),
        ("mha kpm float", mha(key_padding_mask=fkpm), dt),
        ("mha bool mask", mha(attn_mask=bmask), dt), ("mha float mask", mha(attn_mask=fmask), dt),
        ("mha both", mha(attn_mask=bmask, key_padding_mask=kpm), dt),
        ("mha no avg", mha(attn_mask=fmask, average_attn_weights=False), dt),
        ("mha seq first", mha(batch_first=False, key_padding_mask=kpm), dt),
        ("mha 3d mask", mha(attn_mask=np.repeat(fmask[None], B * H, 0) * np.arange(B * H)[:, None, None]), dt),
        ("sdpa", sdpa(), dt), ("sdpa bool", sdpa(attn_mask=bmask), dt), ("sdpa float", sdpa(attn_mask=fmask), dt),
        ("sdpa scale", sdpa(scale=0.3, attn_mask=fmask[None, None]), dt), ("sdpa causal rect", sdpa(is_causal=True), dt),
        ("sdpa causal sq", sdpa_causal_sq, dt),
    ]
main(cases)
