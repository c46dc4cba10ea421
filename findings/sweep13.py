import numpy as np
from _h import main
rng = np.random.default_rng(3)
X = rng.standard_normal((2, 5, 3, 2)); P = rng.random((2, 5, 3, 2)); P /= P.sum(1, keepdims=True)
def ce_prob4d(L, dt):
    x = L.tensor(X, dtype=dt, requires_grad=True)
    l = L.nn.functional.cross_entropy(x, L.tensor(P, dtype=dt), weight=L.tensor(np.arange(1, 6) * 0.5, dtype=dt), label_smoothing=0.3)
    l.backward(); return [l, x.grad]
def sdpa_gqa(L, dt):
    q = L.tensor(rng_q, dtype=dt, requires_grad=True); k = L.tensor(rng_k, dtype=dt, requires_grad=True)
    y = L.nn.functional.scaled_dot_product_attention(q, k, k * 2, dropout_p=0.0, enable_gqa=True, attn_mask=L.tensor(rng_m, dtype=dt))
    (y ** 2).sum().backward(); return [y, q.grad, k.grad]
rng_q = rng.standard_normal((2, 4, 3, 5)); rng_k = rng.standard_normal((2, 2, 6, 5)); rng_m = rng.standard_normal((3, 6))
def pad_nobatch(L, dt):
    x = L.tensor(X[0], dtype=dt, requires_grad=True)
    a = L.nn.functional.pad(x, (1, 1, 2, 2), mode="reflect"); b = L.nn.functional.pad(x[0], (1, 1), mode="replicate"); c = L.nn.functional.pad(x, (1, 0, 0, 1), mode="circular")
    (a.sin().sum() + b.cos().sum() + (c ** 2).sum()).backward(); return [a, b, c, x.grad]
def agrad(L, dt):
    x = L.tensor(X[0, 0], dtype=dt, requires_grad=True); w = L.tensor(X[1, 0], dtype=dt, requires_grad=True); u = L.tensor(1.0, dtype=dt, requires_grad=True)
    y = (x * w).sin()
    g = L.autograd.grad(y, [x, u], grad_outputs=L.tensor(P[0, 0], dtype=dt), allow_unused=True, retain_graph=True)
    h = L.autograd.grad(y.sum(), w, create_graph=True)[0]
    hh = L.autograd.grad(h, x, grad_outputs=L.ones_like(h))[0]
    return [g[0], np.array(g[1] is None), h, hh]
def interp_aa(L, dt):
    x = L.tensor(X, dtype=dt, requires_grad=True)
    y = L.nn.functional.interpolate(x, size=(2, 1), mode="bilinear", antialias=True)
    y.sum().backward(); return [y, x.grad]
def onehot(L, dt):
    return [L.nn.functional.one_hot(L.tensor([[0, 3], [2, 1]]), 5), L.nn.functional.one_hot(L.tensor([0, 3, 1]))]
def bce_bcast(L, dt):
    x = L.tensor(X[0, :, :, 0], dtype=dt, requires_grad=True)
    l = L.nn.functional.binary_cross_entropy_with_logits(x, L.tensor(P[0, :, :, 0], dtype=dt), weight=L.tensor([1., 2., 3.], dtype=dt), pos_weight=L.tensor([0.5, 1., 4.], dtype=dt), reduction="sum")
    l2 = L.nn.functional.binary_cross_entropy(x.sigmoid(), L.tensor(P[0, :, :, 0], dtype=dt), weight=L.tensor([[1.], [2.], [3.], [1.], [0.]], dtype=dt))
    (l + l2).backward(); return [l, l2, x.grad]
cases = []
for dt in ["float64", "float32"]:
    cases += [("ce prob4d", ce_prob4d, dt), ("sdpa gqa", sdpa_gqa, dt), ("pad nobatch", pad_nobatch, dt), ("agrad", agrad, dt), ("interp aa", interp_aa, dt), ("onehot", onehot, dt), ("bce bcast", bce_bcast, dt)]
main(cases)
