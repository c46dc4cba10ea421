"""EmbeddingBag vs PyTorch: modes, offsets (empty bags), include_last_offset,
per_sample_weights, padding_idx, max_norm, 2-D input; value and weight gradient;
float64 and float32."""
import numpy as np
import torch as T
import symgrad as S
rng = np.random.default_rng(3)
W = rng.standard_normal((10, 4))
bad = 0
def run(lib, dtype, mode, idx, offsets, psw, pad, last, max_norm, twod):
    dt = getattr(lib, dtype)
    m = lib.nn.EmbeddingBag(10, 4, mode=mode, padding_idx=pad, include_last_offset=last,
                            max_norm=max_norm, dtype=dt)
    with lib.no_grad():
        m.weight.copy_(lib.tensor(W, dtype=dt))
    i = lib.tensor(idx)
    kw = {}
    if psw is not None:
        kw["per_sample_weights"] = lib.tensor(psw, dtype=dt, requires_grad=True)
    out = m(i, None if twod else lib.tensor(offsets), **kw)
    (out * lib.tensor(np.arange(out.numel()).reshape(out.shape) % 3 - 1.0, dtype=dt)).sum().backward()
    g = m.weight.grad
    g = g.to_dense() if getattr(g, "is_sparse", False) else g
    res = [out.detach().numpy(), g.numpy(), m.weight.detach().numpy()]
    if psw is not None:
        res.append(kw["per_sample_weights"].grad.numpy())
    return res

idx1 = np.array([1, 2, 4, 5, 4, 3, 2, 9, 0, 0])
for dtype, tol in (("float64", 1e-12), ("float32", 1e-5)):
    for mode in ("sum", "mean", "max"):
        for offsets in ([0, 3, 3, 7], [0, 2, 5, 10], [0]):
            for last in (False, True):
                offs = offsets + [10] if last else offsets
                for pad in (None, 4, -1):
                    for psw in ((None, rng.standard_normal(10)) if mode == "sum" else (None,)):
                        for max_norm in (None, 1.0):
                            args = (dtype, mode, idx1, offs, psw, pad, last, max_norm, False)
                            try:
                                a = run(S, *args)
                            except Exception as e:
                                a = repr(e)[:150]
                            try:
                                b = run(T, *args)
                            except Exception as e:
                                b = repr(e)[:150]
                            if isinstance(a, str) or isinstance(b, str):
                                if isinstance(a, str) != isinstance(b, str):
                                    bad += 1; print("EXC", args[1:4], args[5:], "\n sym", a if isinstance(a, str) else "ok", "\n tor", b if isinstance(b, str) else "ok")
                                continue
                            if not all(u.shape == v.shape and np.allclose(u, v, rtol=tol, atol=tol) for u, v in zip(a, b)):
                                bad += 1
                                print("FAIL", dtype, mode, offs, "psw" if psw is not None else "", "pad", pad, "last", last, "max_norm", max_norm)
                                for k, (u, v) in enumerate(zip(a, b)):
                                    if not np.allclose(u, v, rtol=tol, atol=tol):
                                        print("  part", k, "\n  sym", u.ravel()[:8], "\n  tor", v.ravel()[:8])
    for mode in ("sum", "mean", "max"):
        args = (dtype, mode, idx1.reshape(2, 5), None, None, 0, False, None, True)
        a, b = run(S, *args), run(T, *args)
        if not all(np.allclose(u, v, rtol=tol, atol=tol) for u, v in zip(a, b)):
            bad += 1; print("FAIL 2d", dtype, mode)
print("bad", bad)
