import numpy as np, torch, symgrad as st, copy
torch.set_default_dtype(torch.float64)
def both(fn):
    a = fn(torch); b = fn(st)
    return a, b
def cmp(name, a, b):
    a = [np.asarray(v.detach().numpy() if hasattr(v, "detach") else v, dtype=float) for v in a]
    b = [np.asarray(v.detach().numpy() if hasattr(v, "detach") else v, dtype=float) for v in b]
    ok = all(u.shape == v.shape and np.allclose(u, v, rtol=1e-9, atol=1e-12) for u, v in zip(a, b))
    print("OK " if ok else "BAD", name, "" if ok else (a, b))
W0 = np.random.default_rng(0).normal(size=(3, 2)); B0 = np.array([0.1, -0.2]); X = np.random.default_rng(1).normal(size=(5, 3))
def setup(T):
    w = T.nn.Parameter(T.tensor(W0.copy())); b = T.nn.Parameter(T.tensor(B0.copy()))
    return w, b
def loss(T, w, b): return ((T.tensor(X) @ w + b) ** 2).sum().sin()
def run(T, make_opt, steps=5, mid=None, sched=None):
    w, b = setup(T)
    opt = make_opt(T, w, b)
    s = sched(T, opt) if sched else None
    lrs = []
    for i in range(steps):
        opt.zero_grad(); l = loss(T, w, b); l.backward(); opt.step()
        if s: s.step(); lrs.append(opt.param_groups[0]["lr"])
        if mid and i == 1:
            opt = mid(T, opt, w, b)
    return [w, b] + lrs
opts = {
 "sgd groups": lambda T, w, b: T.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.05, "momentum": 0.5}], lr=0.01, momentum=0.9, nesterov=True),
 "adam groups": lambda T, w, b: T.optim.Adam([{"params": [w], "weight_decay": 0.1}, {"params": [b], "lr": 0.05, "amsgrad": True}], lr=0.01),
 "adamw": lambda T, w, b: T.optim.AdamW([w, b], lr=0.02, weight_decay=0.3, amsgrad=True),
 "rmsprop": lambda T, w, b: T.optim.RMSprop([w, b], lr=0.01, momentum=0.5, centered=True, weight_decay=0.1),
 "sgd maximize": lambda T, w, b: T.optim.SGD([w, b], lr=0.01, momentum=0.9, dampening=0.3, weight_decay=0.1, maximize=True),
 "adam maximize": lambda T, w, b: T.optim.Adam([w, b], lr=0.01, maximize=True, betas=(0.8, 0.9)),
}
for name, mk in opts.items():
    cmp(name, run(torch, mk), run(st, mk))
# state_dict save / load into fresh optimizer then step
def mid(T, opt, w, b):
    sd = copy.deepcopy(opt.state_dict())
    opt2 = type(opt)([{"params": [w]}, {"params": [b]}] if len(opt.param_groups) == 2 else [w, b], lr=1.0)
    opt2.load_state_dict(sd)
    return opt2
for name in ["sgd groups", "adam groups", "rmsprop", "adamw"]:
    cmp("state_dict reload " + name, run(torch, opts[name], mid=mid), run(st, opts[name], mid=mid))
# editing param_groups lr mid-run
def mid2(T, opt, w, b):
    opt.param_groups[0]["lr"] = 0.1
    opt.param_groups[-1]["betas"] = (0.5, 0.6) if "betas" in opt.param_groups[-1] else None
    if opt.param_groups[-1]["betas"] is None: del opt.param_groups[-1]["betas"]
    return opt
cmp("edit groups adam", run(torch, opts["adam groups"], mid=mid2), run(st, opts["adam groups"], mid=mid2))
# add_param_group
def mk_add(T, w, b):
    o = T.optim.Adam([w], lr=0.01); o.add_param_group({"params": [b], "lr": 0.1}); return o
cmp("add_param_group", run(torch, mk_add), run(st, mk_add))
# schedulers
scheds = {
 "steplr": lambda T, o: T.optim.lr_scheduler.StepLR(o, step_size=2, gamma=0.5),
 "multistep": lambda T, o: T.optim.lr_scheduler.MultiStepLR(o, milestones=[1, 3, 3], gamma=0.3),
 "exp": lambda T, o: T.optim.lr_scheduler.ExponentialLR(o, gamma=0.9),
 "cosine": lambda T, o: T.optim.lr_scheduler.CosineAnnealingLR(o, T_max=3, eta_min=0.001),
 "onecycle": lambda T, o: T.optim.lr_scheduler.OneCycleLR(o, max_lr=0.1, total_steps=10),
 "onecycle linear": lambda T, o: T.optim.lr_scheduler.OneCycleLR(o, max_lr=[0.1, 0.2], total_steps=10, anneal_strategy="linear", three_phase=True),
 "lambda": lambda T, o: T.optim.lr_scheduler.LambdaLR(o, lambda e: 0.9 ** e),
 "plateau": None,
}
for name, sc in scheds.items():
    if sc is None: continue
    for oname in ["sgd groups", "adam groups"]:
        cmp(f"sched {name} {oname}", run(torch, opts[oname], steps=8, sched=sc), run(st, opts[oname], steps=8, sched=sc))
# ReduceLROnPlateau
def plateau(T):
    w, b = setup(T); o = T.optim.SGD([w, b], lr=0.1); s = T.optim.lr_scheduler.ReduceLROnPlateau(o, factor=0.5, patience=1, threshold=0.1, cooldown=1, min_lr=0.01)
    out = []
    for v in [1.0, 0.99, 0.98, 0.97, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]:
        s.step(v); out.append(o.param_groups[0]["lr"])
    return out
cmp("plateau", plateau(torch), plateau(st))
# scheduler state_dict and chained
def chained(T):
    w, b = setup(T); o = T.optim.SGD([w, b], lr=0.1)
    s1 = T.optim.lr_scheduler.StepLR(o, 2, 0.5); s2 = T.optim.lr_scheduler.ExponentialLR(o, 0.9)
    out = []
    for i in range(6):
        o.step(); s1.step(); s2.step(); out.append(o.param_groups[0]["lr"])
    return out
cmp("chained", chained(torch), chained(st))
def cos_long(T):
    w, b = setup(T); o = T.optim.SGD([w, b], lr=0.1)
    s = T.optim.lr_scheduler.CosineAnnealingLR(o, T_max=3, eta_min=0.01)
    out = []
    for i in range(12):
        o.step(); s.step(); out.append(o.param_groups[0]["lr"])
    return out
cmp("cosine beyond T_max", cos_long(torch), cos_long(st))
def get_last(T):
    w, b = setup(T); o = T.optim.SGD([w, b], lr=0.1)
    s = T.optim.lr_scheduler.StepLR(o, 2, 0.5)
    out = []
    for i in range(5):
        o.step(); s.step(); out += s.get_last_lr()
    sd = s.state_dict()
    s2 = T.optim.lr_scheduler.StepLR(o, 3, 0.1); s2.load_state_dict(sd); o.step(); s2.step(); out += s2.get_last_lr()
    return out
cmp("sched state_dict", get_last(torch), get_last(st))
