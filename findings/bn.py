import numpy as np, torch, symgrad as sgt
torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(0)
xs = [rng.standard_normal((4, 3, 5)) * 3 + 1 for _ in range(3)]
for kw in (dict(), dict(momentum=None), dict(affine=False), dict(track_running_stats=False), dict(momentum=0.3, eps=1e-3)):
    for cls in ("BatchNorm1d", "InstanceNorm1d"):
        res = []
        for L in (torch, sgt):
            L.manual_seed(0)
            m = getattr(L.nn, cls)(3, **kw)
            outs = []
            for x in xs:
                t = L.tensor(x, requires_grad=True)
                y = m(t); (y * L.tensor(np.arange(y.numel()).reshape(tuple(y.shape)) / 10.)).sum().backward()
                outs += [y.detach().numpy(), t.grad.numpy()]
            m.eval()
            outs.append(m(L.tensor(xs[0])).detach().numpy())
            for k in ("running_mean", "running_var", "num_batches_tracked"):
                v = getattr(m, k, None)
                outs.append(None if v is None else np.asarray(v.numpy(), float))
            m.reset_running_stats() if hasattr(m, "reset_running_stats") and getattr(m, "running_mean", None) is not None else None
            res.append(outs)
        for i, (a, b) in enumerate(zip(*res)):
            if (a is None) != (b is None) or (a is not None and not np.allclose(a, b, rtol=1e-12, atol=1e-12)):
                print(cls, kw, "differs at output", i, a if a is None or a.size < 4 else a.ravel()[:3], b if b is None or b.size < 4 else b.ravel()[:3])
print("done")
