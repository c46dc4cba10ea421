"""Schedulers vs PyTorch: lr sequences, chained/sequential, resume with last_epoch and
state_dict round-trip (also of the optimizer), momentum cycling."""
import warnings
import numpy as np
import torch as T
import symgrad as S
warnings.filterwarnings("ignore")

def make(lib, spec, opt_name="SGD", okw=None):
    w = lib.nn.Parameter(lib.ones(2)); b = lib.nn.Parameter(lib.ones(1))
    okw = okw or dict(lr=0.1, momentum=0.9)
    opt = getattr(lib.optim, opt_name)([{"params": [w]}, {"params": [b], "lr": 0.05}], **okw)
    return opt, spec(lib, opt)

def seq(lib, spec, n, opt_name="SGD", okw=None, resume_at=None):
    opt, sch = make(lib, spec, opt_name, okw)
    out = []
    for k in range(n):
        opt.step(); sch.step()
        out.append([g["lr"] for g in opt.param_groups] + [g.get("momentum", g.get("betas", [0])[0]) for g in opt.param_groups])
        if resume_at == k:
            osd, ssd = opt.state_dict(), sch.state_dict()
            opt, sch2 = make(lib, spec, opt_name, okw)
            opt.load_state_dict(osd)
            sch = spec(lib, opt, last_epoch=ssd["last_epoch"]) if "last_epoch" in ssd else spec(lib, opt)
            sch.load_state_dict(ssd)
    return np.array(out, dtype=float)

L = lambda lib: lib.optim.lr_scheduler
specs = {
 "StepLR": lambda lib, o, **k: L(lib).StepLR(o, 3, 0.5, **k),
 "MultiStepLR": lambda lib, o, **k: L(lib).MultiStepLR(o, [2, 5, 5, 9], 0.3, **k),
 "ExponentialLR": lambda lib, o, **k: L(lib).ExponentialLR(o, 0.9, **k),
 "Cosine": lambda lib, o, **k: L(lib).CosineAnnealingLR(o, 4, 0.001, **k),
 "OneCycle": lambda lib, o, **k: L(lib).OneCycleLR(o, [0.5, 0.2], total_steps=13, **k),
 "OneCycle3lin": lambda lib, o, **k: L(lib).OneCycleLR(o, 0.5, total_steps=13, three_phase=True, anneal_strategy="linear", **k),
 "Lambda": lambda lib, o, **k: L(lib).LambdaLR(o, lambda e: 1 / (1 + e), **k),
 "Multiplicative": lambda lib, o, **k: L(lib).MultiplicativeLR(o, lambda e: 0.95, **k),
 "Constant": lambda lib, o, **k: L(lib).ConstantLR(o, 0.25, 4, **k),
 "Linear": lambda lib, o, **k: L(lib).LinearLR(o, 0.2, 0.9, 5, **k),
 "Poly": lambda lib, o, **k: L(lib).PolynomialLR(o, 6, 2.0, **k),
 "Cyclic": lambda lib, o, **k: L(lib).CyclicLR(o, 0.01, [0.1, 0.2], 3, 2, mode="triangular2", **k),
 "CyclicExp": lambda lib, o, **k: L(lib).CyclicLR(o, 0.01, 0.1, 2, mode="exp_range", gamma=0.9, **k),
 "WarmRestarts": lambda lib, o, **k: L(lib).CosineAnnealingWarmRestarts(o, 3, 2, 0.001, **k),
 "Chained": lambda lib, o, **k: L(lib).ChainedScheduler([L(lib).ConstantLR(o, 0.5, 3), L(lib).ExponentialLR(o, 0.9)]),
 "Sequential": lambda lib, o, **k: L(lib).SequentialLR(o, [L(lib).LinearLR(o, 0.1, 1.0, 3), L(lib).StepLR(o, 2, 0.5), L(lib).CosineAnnealingLR(o, 5)], [3, 7]),
 "SeqChained": lambda lib, o, **k: L(lib).SequentialLR(o, [L(lib).ChainedScheduler([L(lib).ConstantLR(o, 0.5, 2), L(lib).ExponentialLR(o, 0.8)]), L(lib).PolynomialLR(o, 4)], [4]),
}
bad = 0
for name, spec in specs.items():
    for opt_name, okw in (("SGD", None), ("Adam", dict(lr=0.1))):
        for resume in (None, 4):
            try:
                a = seq(S, spec, 14, opt_name, okw, resume)
            except Exception as e:
                a = repr(e)
            try:
                b = seq(T, spec, 14, opt_name, okw, resume)
            except Exception as e:
                b = repr(e)
            if isinstance(a, str) or isinstance(b, str):
                if isinstance(a, str) != isinstance(b, str):
                    bad += 1; print("EXC", name, opt_name, resume, "sym:", a if isinstance(a, str) else "ok", "| torch:", b if isinstance(b, str) else "ok")
                continue
            if not np.allclose(a, b, rtol=1e-13, atol=0):
                bad += 1
                i = np.argwhere(~np.isclose(a, b, rtol=1e-13, atol=0))[0]
                print("FAIL", name, opt_name, "resume", resume, "first at step", i, "\n sym", a[i[0]], "\n tor", b[i[0]])
print("bad", bad)
