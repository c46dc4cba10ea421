import numpy as np
from _h import main
rng = np.random.default_rng(5)
W1 = rng.standard_normal((4, 3)); X = rng.standard_normal((5, 3))
def conv_after_opt(method):
    def f(L, dt):
        m = L.nn.Linear(3, 4)
        with L.no_grad(): m.weight.copy_(L.tensor(W1, dtype=L.float32)); m.bias.fill_(0.5)
        opt = L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        ids = [id(p) for p in m.parameters()]
        eval(method)
        x = L.tensor(X, dtype=m.weight.dtype)
        for _ in range(3):
            opt.zero_grad(); m(x).pow(2).sum().backward(); opt.step()
        return [m.weight, m.bias, np.array([id(p) for p in m.parameters()] == ids), np.array(str(m.weight.dtype))]
    return f
def strict_false(L, dt):
    m = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.Linear(4, 2)).to(dt)
    sd = {"0.weight": L.tensor(W1, dtype=dt), "extra": L.zeros(1)}
    r = m.load_state_dict(sd, strict=False)
    return [m[0].weight, np.array(sorted(r.missing_keys)), np.array(sorted(r.unexpected_keys))]
def sd_alias(L, dt):
    m = L.nn.Linear(3, 4).to(dt)
    sd = m.state_dict()
    with L.no_grad(): m.weight.fill_(2.0)
    return [sd["weight"]]
def requires_grad_false(L, dt):
    m = L.nn.Linear(3, 4).to(dt)
    with L.no_grad(): m.weight.copy_(L.tensor(W1, dtype=dt)); m.bias.fill_(0.5)
    m.weight.requires_grad_(False)
    opt = L.optim.Adam(m.parameters(), lr=0.1, weight_decay=0.1)
    for _ in range(2):
        opt.zero_grad(); m(L.tensor(X, dtype=dt)).pow(2).sum().backward(); opt.step()
    return [m.weight, m.bias]
main([(m, conv_after_opt(m), "float64") for m in ["m.double()", "m.to(L.float64)", "m.half().float()", "m.float()"]] +
     [("strict_false", strict_false, "float64"), ("sd alias", sd_alias, "float64"), ("rg false", requires_grad_false, "float64")])
