"""clip_grad_norm_ / clip_grad_value_ options vs PyTorch (float64, float32, mixed)."""
import numpy as np
import torch as T
import symgrad as S
rng = np.random.default_rng(3)
g = [rng.standard_normal((3, 4)) * 3, rng.standard_normal(5), np.array([7.0])]
for dtypes in (("float64",) * 3, ("float32",) * 3, ("float32", "float64", "float32")):
    for norm_type in (2.0, 1, float("inf"), 3.5, 0.5, "inf"):
        for max_norm in (0.5, 100.0):
            outs = []
            for L in (S, T):
                ps = [L.nn.Parameter(L.zeros(a.shape, dtype=getattr(L, d))) for a, d in zip(g, dtypes)]
                ps.append(L.nn.Parameter(L.zeros(2)))  # no grad
                for p, a in zip(ps, g):
                    p.grad = L.tensor(a, dtype=p.dtype)
                try:
                    n = L.nn.utils.clip_grad_norm_(ps, max_norm, norm_type=norm_type)
                    outs.append([float(n)] + [p.grad.numpy().astype(float) for p in ps[:3]] + [str(n.dtype)])
                except Exception as e:
                    outs.append(type(e).__name__ + ": " + str(e)[:80])
            a, b = outs
            if isinstance(a, str) or isinstance(b, str):
                if isinstance(a, str) != isinstance(b, str) : print("EXC", dtypes, norm_type, max_norm, a if isinstance(a, str) else "ok", "|", b if isinstance(b, str) else "ok")
                continue
            tol = 1e-6 if "float32" in dtypes else 1e-13
            ok = np.isclose(a[0], b[0], rtol=tol) and all(np.allclose(u, v, rtol=tol, atol=tol) for u, v in zip(a[1:4], b[1:4]))
            print("ok  " if ok else "FAIL", dtypes, norm_type, max_norm, a[0], b[0], a[-1], b[-1])
