import numpy as np, copy
from _h import main
rng = np.random.default_rng(2)
W1 = rng.standard_normal((4, 3)); W2 = rng.standard_normal((2, 4)); X = rng.standard_normal((5, 3)); Y = rng.standard_normal((5, 2))
def mk(L, dt):
    m = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.Tanh(), L.nn.Linear(4, 2)).to(dt)
    with L.no_grad():
        m[0].weight.copy_(L.tensor(W1, dtype=dt)); m[2].weight.copy_(L.tensor(W2, dtype=dt)); m[0].bias.fill_(0.1); m[2].bias.fill_(-0.2)
    return m
def mutate(opt_name, **kw):
    def f(L, dt):
        m = mk(L, dt); opt = getattr(L.optim, opt_name)([{"params": m[0].parameters()}], **kw)
        x = L.tensor(X, dtype=dt); y = L.tensor(Y, dtype=dt)
        for s in range(8):
            if s == 2: opt.param_groups[0]["lr"] *= 3
            if s == 3: opt.add_param_group({"params": m[2].parameters(), "lr": 0.02})
            if s == 4:
                for k in ("betas", "momentum", "weight_decay", "alpha"):
                    if k in opt.param_groups[1]:
                        opt.param_groups[1][k] = (0.5, 0.6) if k == "betas" else 0.3 if k != "alpha" else 0.8
            if s == 5: m[0].bias.requires_grad_(False)
            opt.zero_grad()
            out = m(x) if s != 6 else m[2](m[1](x @ m[0].weight.detach().T))   # step 6: m[0] gets no grad
            ((out - y) ** 2).mean().backward()
            opt.step()
        return list(m.parameters())
    return f
def deep_tied(L, dt):
    lin = L.nn.Linear(3, 3).to(dt)
    with L.no_grad(): lin.weight.copy_(L.tensor(W1[:3], dtype=dt)); lin.bias.fill_(0.)
    m = L.nn.Sequential(lin, L.nn.Tanh(), lin)
    m2 = copy.deepcopy(m); opt = L.optim.Adam(m2.parameters(), lr=0.1)
    x = L.tensor(X, dtype=dt)
    for _ in range(3):
        opt.zero_grad(); m2(x).pow(2).sum().backward(); opt.step()
    return [m2[0].weight, m2[2].weight, m[0].weight, np.array(m2[0].weight is m2[2].weight)]
def nograd_inplace(L, dt):
    m = mk(L, dt); opt = L.optim.Adam(m.parameters(), lr=0.05)
    x = L.tensor(X, dtype=dt); y = L.tensor(Y, dtype=dt)
    for s in range(4):
        opt.zero_grad(); ((m(x) - y) ** 2).mean().backward(); opt.step()
        with L.no_grad():
            m[0].weight.clamp_(-0.5, 0.5); m[2].weight.data.mul_(0.9); m[2].bias[0] = 1.0
    return list(m.parameters())
cases = []
for dt in ["float64", "float32"]:
    cases += [("mutate adam", mutate("Adam", lr=0.05), dt), ("mutate adamw", mutate("AdamW", lr=0.05, amsgrad=True), dt),
              ("mutate sgd", mutate("SGD", lr=0.05, momentum=0.9), dt), ("mutate rms", mutate("RMSprop", lr=0.01, momentum=0.2, centered=True), dt),
              ("deep tied", deep_tied, dt), ("nograd inplace", nograd_inplace, dt)]
main(cases)
