import numpy as np
from _h import main
rng = np.random.default_rng(0)
N, C = 6, 4
X = rng.standard_normal((N, C)); Y = np.array([0, 3, -100, 1, 2, 3]); Y2 = np.array([0, 3, 1, 1, 2, 3])
P = rng.random((N, C)); P /= P.sum(1, keepdims=True)
Wc = np.array([0.5, 2.0, 1.0, 3.0])
X3 = rng.standard_normal((2, C, 3, 2)); Y3 = rng.integers(0, C, (2, 3, 2)); Y3[0, 1, 1] = 2
def ce(Xa, Ya, prob=False, **kw):
    def f(L, dt):
        x = L.tensor(Xa, dtype=dt, requires_grad=True)
        kw2 = {a: (L.tensor(b, dtype=dt) if isinstance(b, np.ndarray) else b) for a, b in kw.items()}
        t = L.tensor(Ya, dtype=dt) if prob else L.tensor(Ya)
        l = L.nn.functional.cross_entropy(x, t, **kw2)
        g, = L.autograd.grad(l.sum(), x, create_graph=True)
        (g ** 2).sum().backward()
        return [l, g, x.grad]
    return f
def nll(Xa, Ya, **kw):
    def f(L, dt):
        x = L.tensor(Xa, dtype=dt, requires_grad=True)
        kw2 = {a: (L.tensor(b, dtype=dt) if isinstance(b, np.ndarray) else b) for a, b in kw.items()}
        l = L.nn.functional.nll_loss(x.log_softmax(1), L.tensor(Ya), **kw2)
        l.sum().backward(); return [l, x.grad]
    return f
def loss(name, **kw):
    def f(L, dt):
        x = L.tensor(X, dtype=dt, requires_grad=True)
        t = L.tensor(P if name.startswith("b") or name == "kl_div" else X[::-1] * 1.5, dtype=dt)
        inp = x.sigmoid() if name == "binary_cross_entropy" else x.log_softmax(1) if name == "kl_div" else x
        kw2 = {a: (L.tensor(b, dtype=dt) if isinstance(b, np.ndarray) else b) for a, b in kw.items()}
        l = getattr(L.nn.functional, name)(inp, t, **kw2)
        g, = L.autograd.grad(l.sum(), x, create_graph=True)
        (g ** 2).sum().backward()
        return [l, g, x.grad]
    return f
cases = []
for dt in ["float64", "float32"]:
    for red in ["mean", "sum", "none"]:
        cases += [
            (f"ce ign {red}", ce(X, Y, reduction=red), dt),
            (f"ce ign w {red}", ce(X, Y, weight=Wc, reduction=red), dt),
            (f"ce ign w ls {red}", ce(X, Y, weight=Wc, label_smoothing=0.2, reduction=red), dt),
            (f"ce ls {red}", ce(X, Y2, label_smoothing=0.3, reduction=red), dt),
            (f"ce ign=3 w ls {red}", ce(X, Y2, weight=Wc, ignore_index=3, label_smoothing=0.1, reduction=red), dt),
            (f"ce prob {red}", ce(X, P, prob=True, reduction=red), dt),
            (f"ce prob w ls {red}", ce(X, P, prob=True, weight=Wc, label_smoothing=0.25, reduction=red), dt),
            (f"ce 4d w ign {red}", ce(X3, Y3, weight=Wc, ignore_index=2, label_smoothing=0.1, reduction=red), dt),
            (f"nll w ign {red}", nll(X, Y, weight=Wc, reduction=red), dt),
            (f"nll 4d {red}", nll(X3, Y3, weight=Wc, ignore_index=1, reduction=red), dt),
            (f"bce {red}", loss("binary_cross_entropy", reduction=red, weight=Wc), dt),
            (f"bcel {red}", loss("binary_cross_entropy_with_logits", reduction=red, weight=Wc, pos_weight=Wc[::-1].copy()), dt),
            (f"huber {red}", loss("huber_loss", reduction=red, delta=0.7), dt),
            (f"sl1 {red}", loss("smooth_l1_loss", reduction=red, beta=0.6), dt),
            (f"sl1 b0 {red}", loss("smooth_l1_loss", reduction=red, beta=0.0), dt),
            (f"kl {red}", loss("kl_div", reduction=red), dt),
            (f"kl log_target", loss("kl_div", reduction="batchmean", log_target=False), dt),
            (f"mse {red}", loss("mse_loss", reduction=red), dt),
            (f"l1 {red}", loss("l1_loss", reduction=red), dt),
        ]
    cases.append(("ce all ignored", ce(X[:2], np.array([-100, -100])), dt))
    cases.append(("ce all ignored w", ce(X[:2], np.array([-100, -100]), weight=Wc), dt))
    cases.append(("ce 1d input", ce(X[0], np.array(2)), dt))
    cases.append(("ce 1d prob", ce(X[0], P[0], prob=True, label_smoothing=0.2), dt))
main(cases)
