"""Optimizer state_dict round trip mid-training (into a fresh optimizer, deep-copied and
via torch.save/load), then more steps; state keys/values vs PyTorch; float32 single-step
tightness."""
import copy, io
import numpy as np
import torch as T
import symgrad as S
from optim1 import ALL_CASES as cases, W0, B0, X, Y
T.set_default_dtype(T.float64)

def train(L, name, kw, dtype, mode):
    dt = getattr(L, dtype)
    w = L.tensor(W0, dtype=dt, requires_grad=True); b = L.tensor(B0, dtype=dt, requires_grad=True)
    x, y = L.tensor(X, dtype=dt), L.tensor(Y, dtype=dt)
    make = lambda: getattr(L.optim, name)([{"params": [w]}, {"params": [b], "lr": 0.02}] if name != "LBFGS" else [w, b], **kw)
    opt = make()
    def closure():
        opt.zero_grad()
        loss = (((x @ w + b).tanh() - y) ** 2).mean() + (w ** 4).sum() * 0.01
        loss.backward(); return loss
    for k in range(6):
        opt.step(closure)
        if k == 2:
            sd = opt.state_dict()
            if mode == "deepcopy":
                sd = copy.deepcopy(sd)
            elif mode == "save":
                buf = io.BytesIO(); L.save(sd, buf); buf.seek(0); sd = L.load(buf, weights_only=False)
            opt = make(); opt.load_state_dict(sd)
            if mode == "groups":  # hyper-parameters edited after loading
                opt.param_groups[0]["lr"] *= 0.5
    st = opt.state_dict()["state"]
    flat = {f"{i}.{k}": np.asarray(v.numpy() if hasattr(v, "numpy") else v, dtype=float) for i, s in st.items() for k, v in s.items()
            if hasattr(v, "numpy") or isinstance(v, (int, float))}
    return w.detach().numpy(), b.detach().numpy(), flat

bad = 0
for dtype, tol in (("float64", 1e-10), ("float32", 1e-4)):
    for mode in ("plain", "deepcopy", "save", "groups"):
        for name, kw in cases:
            a = train(S, name, kw, dtype, mode); b = train(T, name, kw, dtype, mode)
            ok = all(np.allclose(u, v, rtol=tol, atol=tol * 1e-2) for u, v in zip(a[:2], b[:2]))
            keys_ok = sorted(a[2]) == sorted(b[2])
            vals_ok = keys_ok and all(np.allclose(a[2][k], b[2][k], rtol=tol * 10, atol=tol) for k in a[2])
            if not (ok and keys_ok and vals_ok):
                bad += 1
                print("FAIL", dtype, mode, name, kw, "params" if not ok else "", "keys" if not keys_ok else "", "vals" if keys_ok and not vals_ok else "")
                if not keys_ok:
                    print("   sym", sorted(a[2]), "\n   tor", sorted(b[2]))
                elif not vals_ok:
                    print("   ", [k for k in a[2] if not np.allclose(a[2][k], b[2][k], rtol=tol * 10, atol=tol)])
                if not ok:
                    print("   sym", a[0].ravel()[:3], "\n   tor", b[0].ravel()[:3])
print("bad", bad)
