import numpy as np, torch, symgrad as sgt
rng = np.random.default_rng(0); torch.set_default_dtype(torch.float64)
p0 = rng.standard_normal(64).astype(np.float32); gs = [rng.standard_normal(64).astype(np.float32) for _ in range(5)]
cfgs = [("SGD", dict(lr=0.1)), ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01)), ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, maximize=True)),
        ("Adam", dict(lr=0.01)), ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)), ("AdamW", dict(lr=0.01)), ("AdamW", dict(lr=0.01, amsgrad=True, maximize=True)),
        ("RMSprop", dict(lr=0.01)), ("RMSprop", dict(lr=0.01, centered=True, momentum=0.9)), ("Adagrad", dict(lr=0.1, lr_decay=0.01)), ("Adadelta", dict()), ("Adamax", dict(lr=0.01)),
        ("NAdam", dict(lr=0.01)), ("RAdam", dict(lr=0.01)), ("ASGD", dict(lr=0.01)), ("Rprop", dict(lr=0.01))]
for dt in (np.float32, np.float64):
    for name, kw in cfgs:
        res = []
        for L in (torch, sgt):
            p = L.tensor(p0.astype(dt), requires_grad=True)
            extra = dict(foreach=False) if L is torch and name not in ("LBFGS",) else {}
            try:
                opt = getattr(L.optim, name)([p], **kw, **extra)
            except TypeError:
                opt = getattr(L.optim, name)([p], **kw)
            for g in gs:
                p.grad = L.tensor(g.astype(dt)); opt.step()
            res.append(p.detach().numpy().copy())
        n = int(np.sum(res[0] != res[1]))
        if n: print(dt.__name__, name, kw, "elements differing:", n, "max rel", np.max(np.abs(res[0]-res[1]) / np.abs(res[0])))
print("done")
