import numpy as np, io, copy
from _h import main
rng = np.random.default_rng(0)
W1 = rng.standard_normal((5, 3)); B1 = rng.standard_normal(5); W2 = rng.standard_normal((2, 5)); X = rng.standard_normal((7, 3)); Y = rng.standard_normal((7, 2))
def model(L, dt):
    m = L.nn.Sequential(L.nn.Linear(3, 5), L.nn.Tanh(), L.nn.Linear(5, 2, bias=False)).to(dt)
    with L.no_grad():
        m[0].weight.copy_(L.tensor(W1, dtype=dt)); m[0].bias.copy_(L.tensor(B1, dtype=dt)); m[2].weight.copy_(L.tensor(W2, dtype=dt))
    return m
def train(opt_name, groups=False, steps=6, save_at=None, sched=None, deep=False, **kw):
    def f(L, dt):
        m = model(L, dt)
        params = [{"params": m[0].parameters(), "lr": 0.05}, {"params": m[2].parameters(), "weight_decay": 0.3}] if groups else m.parameters()
        opt = getattr(L.optim, opt_name)(params, **kw)
        sch = sched(L, opt) if sched else None
        x = L.tensor(X, dtype=dt); y = L.tensor(Y, dtype=dt)
        lrs = []
        for s in range(steps):
            if save_at == s:
                buf = io.BytesIO(); L.save({"m": m.state_dict(), "o": opt.state_dict()}, buf); buf.seek(0)
                st = L.load(buf, weights_only=False)
                m = model(L, dt); m.load_state_dict(st["m"])
                params = [{"params": m[0].parameters(), "lr": 0.05}, {"params": m[2].parameters(), "weight_decay": 0.3}] if groups else m.parameters()
                opt = getattr(L.optim, opt_name)(params, **kw); opt.load_state_dict(st["o"])
                if sch is not None:
                    sd = sch.state_dict(); sch = sched(L, opt); sch.load_state_dict(sd)
            if deep == s:
                m2 = copy.deepcopy(m); opt2 = copy.deepcopy(opt)
            opt.zero_grad(set_to_none=(s % 2 == 0))
            loss = ((m(x) - y) ** 2).mean()
            loss.backward(); opt.step()
            if sch is not None:
                if sch.__class__.__name__ == "ReduceLROnPlateau": sch.step(loss.item() if s % 3 else 10.0)
                else: sch.step()
            lrs.append([g["lr"] for g in opt.param_groups])
        out = [p for p in m.parameters()] + [np.array(lrs)]
        if deep is not False:
            # continue the deepcopy for the same steps: should be independent
            opt2.zero_grad(); ((m2(x) - y) ** 2).mean().backward(); opt2.step()
            out += list(m2.parameters())
        return out
    return f
cases = []
for dt in ["float64", "float32"]:
    cases += [
        ("sgd nesterov", train("SGD", lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01), dt),
        ("sgd dampening", train("SGD", lr=0.1, momentum=0.9, dampening=0.3, maximize=True), dt),
        ("sgd groups", train("SGD", groups=True, lr=0.1, momentum=0.5), dt),
        ("adam amsgrad", train("Adam", lr=0.05, amsgrad=True, weight_decay=0.1, betas=(0.8, 0.9)), dt),
        ("adam maximize", train("Adam", lr=0.05, maximize=True), dt),
        ("adamw amsgrad", train("AdamW", lr=0.05, amsgrad=True, weight_decay=0.1), dt),
        ("adamw groups", train("AdamW", groups=True, lr=0.02), dt),
        ("rmsprop centered", train("RMSprop", lr=0.01, centered=True, momentum=0.5, weight_decay=0.1, alpha=0.9), dt),
        ("rmsprop", train("RMSprop", lr=0.01), dt),
        ("adam save/load", train("Adam", lr=0.05, amsgrad=True, save_at=3), dt),
        ("sgd save/load", train("SGD", lr=0.1, momentum=0.9, save_at=3, groups=True), dt),
        ("rms save/load", train("RMSprop", lr=0.01, centered=True, momentum=0.5, save_at=2), dt),
        ("adam deepcopy", train("Adam", lr=0.05, deep=3), dt),
        ("onecycle", train("SGD", lr=0.1, momentum=0.9, steps=8, sched=lambda L, o: L.optim.lr_scheduler.OneCycleLR(o, max_lr=0.5, total_steps=10)), dt),
        ("onecycle linear 3phase", train("Adam", lr=0.1, steps=8, sched=lambda L, o: L.optim.lr_scheduler.OneCycleLR(o, max_lr=[0.5, 0.2], total_steps=10, anneal_strategy="linear", three_phase=True), groups=True), dt),
        ("onecycle save", train("SGD", lr=0.1, momentum=0.9, steps=8, save_at=4, sched=lambda L, o: L.optim.lr_scheduler.OneCycleLR(o, max_lr=0.5, total_steps=10)), dt),
        ("plateau min", train("SGD", lr=0.1, steps=12, sched=lambda L, o: L.optim.lr_scheduler.ReduceLROnPlateau(o, patience=1, factor=0.5, threshold=0.1, cooldown=1)), dt),
        ("plateau max abs", train("SGD", lr=0.1, steps=12, sched=lambda L, o: L.optim.lr_scheduler.ReduceLROnPlateau(o, mode="max", patience=0, threshold_mode="abs", min_lr=0.02)), dt),
        ("cosine", train("SGD", lr=0.1, steps=12, sched=lambda L, o: L.optim.lr_scheduler.CosineAnnealingLR(o, T_max=4, eta_min=0.01)), dt),
        ("step", train("SGD", lr=0.1, steps=8, sched=lambda L, o: L.optim.lr_scheduler.StepLR(o, 3, gamma=0.5)), dt),
        ("multistep", train("SGD", lr=0.1, steps=8, sched=lambda L, o: L.optim.lr_scheduler.MultiStepLR(o, [2, 2, 5], gamma=0.5)), dt),
        ("lambda", train("SGD", lr=0.1, steps=8, groups=True, sched=lambda L, o: L.optim.lr_scheduler.LambdaLR(o, lambda e: 1 / (e + 1))), dt),
        ("exp", train("Adam", lr=0.1, steps=8, sched=lambda L, o: L.optim.lr_scheduler.ExponentialLR(o, 0.7)), dt),
    ]
main(cases)
