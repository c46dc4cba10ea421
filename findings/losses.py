import numpy as np, torch, symgrad as sgt, warnings
warnings.simplefilter("ignore")
torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(0)
X = rng.standard_normal((6, 4)); Y = rng.standard_normal((6, 4)); C = np.array([0, 3, 1, 1, 2, -100]); P = rng.random((6, 4)); B = (rng.random((6, 4)) > 0.5).astype(float)
W = np.array([0.5, 1.0, 2.0, 0.3])
codes = {
 "ce": "F.cross_entropy(x, c, weight=w, ignore_index=-100, reduction=r)",
 "ce_ls": "F.cross_entropy(x, c.clamp(min=0), weight=w, label_smoothing=0.2, reduction=r)",
 "ce_prob": "F.cross_entropy(x, p.softmax(1), label_smoothing=0.1, reduction=r)",
 "nll": "F.nll_loss(x.log_softmax(1), c, weight=w, reduction=r)",
 "mse": "F.mse_loss(x, y, reduction=r)", "l1": "F.l1_loss(x, y, reduction=r)",
 "smoothl1": "F.smooth_l1_loss(x, y, beta=0.5, reduction=r)", "huber": "F.huber_loss(x, y, delta=0.7, reduction=r)",
 "bce": "F.binary_cross_entropy(p, b, weight=w, reduction=r)", "bcel": "F.binary_cross_entropy_with_logits(x, b, pos_weight=w, reduction=r)",
 "kl": "F.kl_div(x.log_softmax(1), p.softmax(1), reduction=r)", "kl_lt": "F.kl_div(x.log_softmax(1), y.log_softmax(1), reduction=r, log_target=True)",
 "poisson": "F.poisson_nll_loss(x, p * 3, reduction=r)", "gauss": "F.gaussian_nll_loss(x, y, p + 0.1, reduction=r)",
 "margin": "F.multi_margin_loss(x, c.clamp(min=0), p=1, margin=0.8, weight=w, reduction=r)",
 "mlsm": "F.multilabel_soft_margin_loss(x, b, weight=w, reduction=r)", "softm": "F.soft_margin_loss(x, b * 2 - 1, reduction=r)",
 "cos": "F.cosine_embedding_loss(x, y, (b[:, 0] * 2 - 1), margin=0.1, reduction=r)", "hinge": "F.hinge_embedding_loss(x, b * 2 - 1, margin=0.5, reduction=r)",
 "triplet": "F.triplet_margin_loss(x, y, p, margin=0.3, swap=True, reduction=r)", "mrank": "F.margin_ranking_loss(x[:, 0], y[:, 0], b[:, 0] * 2 - 1, margin=0.2, reduction=r)",
}
for name, code in codes.items():
    for r in ("mean", "sum", "none"):
        res = []
        for L in (torch, sgt):
            env = dict(F=L.nn.functional, x=L.tensor(X, requires_grad=True), y=L.tensor(Y, requires_grad=True), c=L.tensor(C), p=L.tensor(P, requires_grad=True), b=L.tensor(B), w=L.tensor(W), r=r)
            try:
                out = eval(code, env)
                (out * L.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)))).sum().backward()
                res.append([out.detach().numpy(), env["x"].grad.numpy() if env["x"].grad is not None else None, env["p"].grad.numpy() if env["p"].grad is not None else None])
            except Exception as e:
                res.append(f"{type(e).__name__}: {str(e)[:80]}")
        t, s = res
        if isinstance(t, str) or isinstance(s, str):
            if t != s: print(name, r, "torch:", t if isinstance(t, str) else "ok", "| sg:", s if isinstance(s, str) else "ok")
            continue
        for a, b in zip(t, s):
            if (a is None) != (b is None) or (a is not None and not np.allclose(a, b, rtol=1e-10, atol=1e-12, equal_nan=True)):
                print(name, r, "DIFF", a if a is None else a.ravel()[:3], b if b is None else b.ravel()[:3]); break
print("done")
