"""Every optimizer x options, several steps, float64 and float32, vs PyTorch."""
import sys
import numpy as np
import torch as T
import symgrad as S
from common import cmp

rng = np.random.default_rng(0)
W0 = rng.standard_normal((4, 3)); B0 = rng.standard_normal(3)
X = rng.standard_normal((8, 4)); Y = rng.standard_normal((8, 3))

def run(lib, name, kw, dtype, steps=6, groups=False, sched=None):
    dt = getattr(lib, dtype)
    w = lib.tensor(W0, dtype=dt, requires_grad=True)
    b = lib.tensor(B0, dtype=dt, requires_grad=True)
    x, y = lib.tensor(X, dtype=dt), lib.tensor(Y, dtype=dt)
    params = [{"params": [w]}, {"params": [b], "lr": 0.03}] if groups else [w, b]
    opt = getattr(lib.optim, name)(params, **kw)
    losses = []
    def closure():
        opt.zero_grad()
        loss = (((x @ w + b).tanh() - y) ** 2).mean() + (w ** 4).sum() * 0.01
        loss.backward()
        return loss
    for _ in range(steps):
        l = opt.step(closure)
        losses.append(float(l))
    return np.array(losses), w.detach().numpy(), b.detach().numpy()

cases = [
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1, maximize=False)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3, weight_decay=0.1)),
    ("Adam", dict(lr=0.05, amsgrad=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.05, amsgrad=True, weight_decay=0.1, maximize=True)),
    ("Adam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
    ("Adam", dict(lr=0.05, foreach=True)),
    ("AdamW", dict(lr=0.05, amsgrad=True)),
    ("AdamW", dict(lr=0.05, maximize=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, maximize=True)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.2)),
    ("Adagrad", dict(lr=0.1, maximize=True)),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1)),
    ("Adadelta", dict(lr=0.5, maximize=True)),
    ("Adamax", dict(lr=0.05, weight_decay=0.1)),
    ("Adamax", dict(lr=0.05, maximize=True)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
    ("NAdam", dict(lr=0.05, maximize=True)),
    ("RAdam", dict(lr=0.05, weight_decay=0.1)),
    ("RAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, betas=(0.8, 0.9))),
    ("RAdam", dict(lr=0.05, maximize=True, betas=(0.8, 0.9))),
    ("Rprop", dict(lr=0.01)),
    ("Rprop", dict(lr=0.01, etas=(0.3, 1.5), step_sizes=(1e-3, 0.05), maximize=True)),
    ("ASGD", dict(lr=0.05, t0=2, lambd=0.01, weight_decay=0.1)),
    ("ASGD", dict(lr=0.05, t0=2, maximize=True)),
    ("LBFGS", dict(lr=1, max_iter=5)),
    ("LBFGS", dict(lr=0.5, max_iter=7, history_size=3, line_search_fn="strong_wolfe")),
]
ALL_CASES = list(cases)
if __name__ != "__main__":
    cases = []
bad = 0
for dtype, rtol, atol in (("float64", 1e-9, 1e-12), ("float32", 2e-4, 2e-5)):
    for groups in (False, True):
        for name, kw in cases:
            if groups and name == "LBFGS":
                continue
            steps = 3 if name == "LBFGS" else 6
            a = run(S, name, kw, dtype, steps, groups)
            b = run(T, name, kw, dtype, steps, groups)
            ok = all(np.allclose(u, v, rtol=rtol, atol=atol) for u, v in zip(a, b))
            if not ok:
                bad += 1
                print("FAIL", dtype, groups, name, kw)
                for u, v in zip(a, b):
                    print("  sym", np.ravel(u)[:4], "\n  tor", np.ravel(v)[:4])
            elif a[1].dtype != b[1].dtype:
                print("DTYPE", name, a[1].dtype, b[1].dtype)
print("bad", bad)
