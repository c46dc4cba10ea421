import numpy as np, torch, symgrad as st, copy
torch.set_default_dtype(torch.float64)
def cmp(name, a, b):
    a = [np.asarray(v.detach().numpy() if hasattr(v, "detach") else v, dtype=float) for v in a]
    b = [np.asarray(v.detach().numpy() if hasattr(v, "detach") else v, dtype=float) for v in b]
    ok = len(a) == len(b) and all(u.shape == v.shape and np.allclose(u, v, rtol=1e-9, atol=1e-12) for u, v in zip(a, b))
    print("OK " if ok else "BAD", name, "" if ok else list(zip(a, b)))
X = np.random.default_rng(1).normal(size=(6, 3)); Y = np.random.default_rng(2).normal(size=(6, 2))
def model(T, seed=0):
    T.manual_seed(0)
    m = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.BatchNorm1d(4), T.nn.Tanh(), T.nn.Linear(4, 2))
    rng = np.random.default_rng(seed)
    with T.no_grad():
        for p in m.parameters():
            p.copy_(T.tensor(rng.normal(size=tuple(p.shape))))
    return m
def train(T, opt_fn, steps=4, freeze=False, clip=None, f32=False):
    m = model(T)
    if f32: m = m.float()
    if freeze:
        m[0].bias.requires_grad_(False)
    opt = opt_fn(T, m)
    losses = []
    for i in range(steps):
        opt.zero_grad()
        x = T.tensor(X); y = T.tensor(Y)
        if f32: x, y = x.float(), y.float()
        loss = T.nn.functional.mse_loss(m(x), y)
        loss.backward()
        if clip == "norm": T.nn.utils.clip_grad_norm_(m.parameters(), 0.5, norm_type=2.0)
        if clip == "inf": T.nn.utils.clip_grad_norm_(m.parameters(), 0.1, norm_type=float("inf"))
        if clip == "value": T.nn.utils.clip_grad_value_(m.parameters(), 0.05)
        opt.step(); losses.append(loss.item())
    m.eval()
    x = T.tensor(X)
    if f32: x = x.float()
    out = m(x)
    return [*losses, out, *m.parameters(), m[1].running_mean, m[1].running_var]
for name, fn in {
    "adam freeze": lambda T, m: T.optim.Adam([p for p in m.parameters() if p.requires_grad], lr=0.01),
    "sgd all incl frozen": lambda T, m: T.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, weight_decay=0.01),
    "rmsprop groups": lambda T, m: T.optim.RMSprop([{"params": m[0].parameters(), "lr": 0.001}, {"params": m[3].parameters()}], lr=0.01, alpha=0.9),
    "adamw groups wd0": lambda T, m: T.optim.AdamW([{"params": m[0].parameters(), "weight_decay": 0.0}, {"params": list(m[1].parameters()) + list(m[3].parameters())}], lr=0.01),
}.items():
    for freeze in (False, True):
        for clip in (None, "norm", "inf", "value"):
            cmp(f"{name} freeze={freeze} clip={clip}", train(torch, fn, freeze=freeze, clip=clip), train(st, fn, freeze=freeze, clip=clip))
cmp("adam f32", train(torch, lambda T, m: T.optim.Adam(m.parameters(), lr=0.01), f32=True), train(st, lambda T, m: T.optim.Adam(m.parameters(), lr=0.01), f32=True))
# load_state_dict of model into fresh then continue
def reload(T):
    m = model(T); opt = T.optim.Adam(m.parameters(), lr=0.01)
    for i in range(2):
        opt.zero_grad(); T.nn.functional.mse_loss(m(T.tensor(X)), T.tensor(Y)).backward(); opt.step()
    sd = copy.deepcopy(m.state_dict()); osd = copy.deepcopy(opt.state_dict())
    m2 = model(T, seed=5); m2.load_state_dict(sd); opt2 = T.optim.Adam(m2.parameters(), lr=0.5); opt2.load_state_dict(osd)
    for i in range(2):
        opt2.zero_grad(); T.nn.functional.mse_loss(m2(T.tensor(X)), T.tensor(Y)).backward(); opt2.step()
    return [*m2.parameters(), m2[1].running_mean, m2[1].running_var, m2[1].num_batches_tracked, opt2.param_groups[0]["lr"]]
cmp("reload model+opt", reload(torch), reload(st))
