"""Upsample / interpolate options vs PyTorch (value and gradient, float64 and float32)."""
import numpy as np
import torch as T
import symgrad as S
rng = np.random.default_rng(9)
bad = 0
x2 = rng.standard_normal((2, 3, 5, 7)); x1 = x2[:, :, 0]; x3 = rng.standard_normal((1, 2, 3, 4, 5))
cases = []
for mode, x in (("nearest", x2), ("nearest-exact", x2), ("bilinear", x2), ("bicubic", x2), ("linear", x1), ("trilinear", x3), ("area", x2), ("nearest", x1), ("nearest-exact", x3)):
    nd = x.ndim - 2
    for kw in (dict(scale_factor=2.5), dict(scale_factor=0.7), dict(scale_factor=(1.5,) * nd, recompute_scale_factor=True), dict(scale_factor=1.7),
               dict(size=(4, 9, 2)[:nd]), dict(size=(11, 3, 6)[:nd])):
        for ac in ((None, False, True) if mode in ("linear", "bilinear", "bicubic", "trilinear") else (None,)):
            cases.append((mode, x, dict(kw, align_corners=ac) if ac is not None else kw))
for dtype, tol in (("float64", 1e-10), ("float32", 2e-5)):
    for mode, x, kw in cases:
        res = []
        for L in (S, T):
            a = L.tensor(x, dtype=getattr(L, dtype), requires_grad=True)
            try:
                y = L.nn.functional.interpolate(a, mode=mode, **kw)
                (y * L.tensor(np.sin(np.arange(y.numel())).reshape(tuple(y.shape)), dtype=getattr(L, dtype))).sum().backward()
                res.append((y.detach().numpy(), a.grad.numpy()))
            except Exception as e:
                res.append(type(e).__name__ + str(e)[:100])
        a, b = res
        if isinstance(a, str) or isinstance(b, str):
            if isinstance(a, str) != isinstance(b, str):
                bad += 1; print("EXC", dtype, mode, x.shape, kw, "\n  sym", a if isinstance(a, str) else "ok", "\n  tor", b if isinstance(b, str) else "ok")
            continue
        ok = all(u.shape == v.shape and np.allclose(u, v, rtol=tol, atol=tol) for u, v in zip(a, b))
        if not ok:
            bad += 1
            print("FAIL", dtype, mode, x.shape, kw, [u.shape for u in a], [v.shape for v in b],
                  [float(np.max(np.abs(u - v))) if u.shape == v.shape else None for u, v in zip(a, b)])
# Upsample module / PixelShuffle module
for kw in (dict(scale_factor=2, mode="nearest"), dict(scale_factor=(2, 1.5), mode="bilinear", align_corners=True), dict(size=(3, 3), mode="bicubic")):
    a = S.nn.Upsample(**kw)(S.tensor(x2)).numpy(); b = T.nn.Upsample(**kw)(T.tensor(x2)).numpy()
    if a.shape != b.shape or not np.allclose(a, b):
        bad += 1; print("FAIL Upsample", kw)
a = S.nn.UpsamplingBilinear2d(scale_factor=2)(S.tensor(x2)).numpy(); b = T.nn.UpsamplingBilinear2d(scale_factor=2)(T.tensor(x2)).numpy()
print("UpsamplingBilinear2d", np.allclose(a, b))
a = S.nn.UpsamplingNearest2d(size=(7, 3))(S.tensor(x2)).numpy(); b = T.nn.UpsamplingNearest2d(size=(7, 3))(T.tensor(x2)).numpy()
print("UpsamplingNearest2d", np.allclose(a, b))
print("bad", bad)
