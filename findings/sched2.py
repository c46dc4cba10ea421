"""ReduceLROnPlateau options and CosineAnnealingWarmRestarts fractional step(epoch) vs PyTorch."""
import warnings
import numpy as np
import torch as T
import symgrad as S
warnings.filterwarnings("ignore")
metrics = [5, 4, 4, 4.0001, 4, 3.9999, 4, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3]
def plateau(L, kw, resume=False):
    w = L.nn.Parameter(L.ones(1)); b = L.nn.Parameter(L.ones(1))
    opt = L.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.05}], lr=0.1)
    sch = L.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
    out = []
    for k, m in enumerate(metrics):
        sch.step(m if kw.get("mode", "min") == "min" else -m)
        if resume and k == 6:
            sd = sch.state_dict(); sch = L.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw); sch.load_state_dict(sd)
        out.append([g["lr"] for g in opt.param_groups] + [sch.num_bad_epochs, sch.cooldown_counter])
    return np.array(out, float)
for kw in (dict(patience=1), dict(patience=2, cooldown=2, factor=0.5), dict(mode="max", patience=1, threshold=0.01, threshold_mode="abs"),
           dict(patience=0, min_lr=[0.02, 0.001], factor=0.3), dict(patience=1, eps=0.05), dict(mode="max", patience=1, threshold=1e-3)):
    for resume in (False, True):
        a, b = plateau(S, kw, resume), plateau(T, kw, resume)
        print("ok  " if np.allclose(a, b, rtol=1e-15) else "FAIL", "plateau", kw, resume)
        if not np.allclose(a, b): print(np.c_[a, b])
def warm(L, epochs):
    w = L.nn.Parameter(L.ones(1))
    opt = L.optim.SGD([w], lr=0.1)
    sch = L.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, 3, 2, 0.01)
    out = []
    for e in epochs:
        sch.step(e) if e is not None else sch.step()
        out.append([opt.param_groups[0]["lr"], sch.T_cur, sch.T_i, sch.last_epoch])
    return np.array(out, float)
for epochs in ([0.5, 1.25, 2.9, 3.0, 3.5, 9.0, 9.1, 21.5, 2.0, None, None, None, None], [None] * 12 + [4.5, None, None]):
    a, b = warm(S, epochs), warm(T, epochs)
    print("ok  " if np.allclose(a, b, rtol=1e-14) else "FAIL", "warm restarts", epochs)
    if not np.allclose(a, b): print(np.c_[a, b])
