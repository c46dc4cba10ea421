"""New functional forms vs PyTorch: value, gradient, double backward (float64)."""
import numpy as np
import torch as T
import symgrad as S
T.set_default_dtype(T.float64)
rng = np.random.default_rng(1)
bad = 0

def both(fn, arrays, ints=(), tag=""):
    """fn(lib, *tensors); arrays: float arrays (requires grad), ints: int arrays."""
    global bad
    res = []
    for lib in (S, T):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        ks = [lib.tensor(k) for k in ints]
        try:
            y = fn(lib, *xs, *ks)
            g = lib.autograd.grad(y.sum() if y.dim() else y, xs, create_graph=True, allow_unused=True)
            npy = lambda v: None if v is None else (v.detach() * 1).numpy()
            try:
                gg_src = sum(((gi * gi).sum() for gi in g if gi is not None and gi.requires_grad), lib.tensor(0.0))
                gg = lib.autograd.grad(gg_src, xs, allow_unused=True) if gg_src.requires_grad else [None] * len(xs)
                gg = [npy(v) for v in gg]
            except (RuntimeError, NotImplementedError) as e:
                if lib is S: raise
                gg = None
            res.append((y.detach().numpy(), [npy(v) for v in g], gg))
        except Exception as e:
            res.append(repr(e)[:200])
    a, b = res
    if isinstance(a, str) or isinstance(b, str):
        if isinstance(a, str) != isinstance(b, str):
            bad += 1; print("EXC", tag, "\n  sym", a if isinstance(a, str) else "ok", "\n  tor", b if isinstance(b, str) else "ok")
        return
    def close(u, v):
        if u is None or v is None:
            return (u is None or not np.any(u)) and (v is None or not np.any(v))
        return u.shape == v.shape and np.allclose(u, v, rtol=1e-8, atol=1e-10, equal_nan=True)
    ok = close(a[0], b[0]) and all(close(u, v) for u, v in zip(a[1], b[1]))
    ok2 = b[2] is None or all(close(u, v) for u, v in zip(a[2], b[2]))
    if not ok or not ok2:
        bad += 1
        print("FAIL", tag, "value/grad" if not ok else "", "double" if not ok2 else "")
        print("  sym", a[0].ravel()[:5], [None if u is None else u.ravel()[:4] for u in (a[1] if not ok else a[2])])
        print("  tor", b[0].ravel()[:5], [None if u is None else u.ravel()[:4] for u in (b[1] if not ok else b[2])])

x = rng.standard_normal((4, 5)); y = rng.standard_normal((4, 5)); z = rng.standard_normal((4, 5))
t1 = np.array([1, -1, 1, -1]); t1b = np.array([1.0, -1.0, -1.0, 1.0])
lab = np.array([0, 3, 4, 3])
for red in ("mean", "sum", "none"):
    both(lambda L, a, b, t: L.nn.functional.margin_ranking_loss(a[:, 0], b[:, 0], t, margin=0.3, reduction=red), [x, y], [t1], "mrl " + red)
    both(lambda L, a: L.nn.functional.hinge_embedding_loss(a, L.tensor(np.sign(z)), margin=0.5, reduction=red), [x], (), "hinge " + red)
    both(lambda L, a: L.nn.functional.soft_margin_loss(a, L.tensor(np.sign(z)), reduction=red), [x], (), "softmargin " + red)
    both(lambda L, a, b, t: L.nn.functional.cosine_embedding_loss(a, b, t, margin=0.1, reduction=red), [x, y], [t1], "cosemb " + red)
    for swap in (False, True):
        for p in (1, 2, 3):
            both(lambda L, a, b, c: L.nn.functional.triplet_margin_loss(a, b, c, margin=0.5, p=p, swap=swap, reduction=red), [x, y, z], (), f"triplet p{p} swap{swap} " + red)
    for log_input in (True, False):
        for full in (False, True):
            both(lambda L, a: L.nn.functional.poisson_nll_loss(a if log_input else a.abs() + 0.1, L.tensor(np.abs(z) * 3), log_input=log_input, full=full, reduction=red), [x], (), f"poisson li{log_input} full{full} " + red)
    for vshape in ((4, 5), (4,), (4, 1), (1, 5)):
        both(lambda L, a, v: L.nn.functional.gaussian_nll_loss(a, L.tensor(z), v.abs() * 0.5, full=True, reduction=red), [x, np.abs(rng.standard_normal(vshape))], (), f"gauss {vshape} " + red)
    for p in (1, 2):
        both(lambda L, a, w, t: L.nn.functional.multi_margin_loss(a, t, p=p, margin=0.7, weight=w.detach(), reduction=red), [x, np.abs(rng.standard_normal(5))], [lab], f"multimargin p{p} " + red)
    both(lambda L, a, w: L.nn.functional.multilabel_soft_margin_loss(a, L.tensor((z > 0) * 1.0), weight=w, reduction=red), [x, rng.standard_normal(5)], (), "mlsm " + red)
    both(lambda L, a, b: L.nn.functional.huber_loss(a, b, delta=0.7, reduction=red), [x, y], (), "huber " + red)
    for lt in (False, True):
        both(lambda L, a, b: L.nn.functional.kl_div(a.log_softmax(-1), b.softmax(-1) if not lt else b.log_softmax(-1), reduction=red if red != "mean" else "batchmean", log_target=lt), [x, y], (), f"kl lt{lt} " + red)
both(lambda L, a: L.nn.functional.multi_margin_loss(a[0], L.tensor(2)), [x], (), "multimargin 1d")
# rms norm, bilinear, pixel shuffle, pairwise, cdist
both(lambda L, a, w: L.nn.functional.rms_norm(a, (5,), w), [x, rng.standard_normal(5)], (), "rmsnorm")
both(lambda L, a: L.nn.functional.rms_norm(a, (4, 5), None, eps=0.1), [x], (), "rmsnorm2")
both(lambda L, a, b, w, bias: L.nn.functional.bilinear(a, b[:, :3], w, bias), [x, y, rng.standard_normal((2, 5, 3)), rng.standard_normal(2)], (), "bilinear")
both(lambda L, a: L.nn.functional.pixel_shuffle(a.reshape(1, 4, 5, 1).repeat(2, 2, 1, 3), 2), [x], (), "pixshuffle")
both(lambda L, a: L.nn.functional.pixel_unshuffle(a.reshape(1, 1, 4, 5)[..., :4], 2), [x], (), "pixunshuffle")
for p in (1.0, 2.0, 3.0, float("inf"), 0.5):
    both(lambda L, a, b: L.nn.functional.pairwise_distance(a, b, p=p, keepdim=True), [x, y], (), f"pairwise p{p}")
    both(lambda L, a, b: L.cdist(a, b[:3], p=p), [x, y], (), f"cdist p{p}")
both(lambda L, a: L.cdist(a, a), [x], (), "cdist self (zero distances)")
print("bad", bad)
