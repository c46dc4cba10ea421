import torch, symgrad as sg, numpy as np
torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(0)
for n in (7, 100, 1000, 4099):
    a = (rng.standard_normal((3, n)) * 3).astype(np.float16)
    res = []
    for L in (torch, sg):
        t = L.tensor(a)
        res.append([t.cumsum(1), t.cumsum(0), t.softmax(1), t.softmax(0), t.sigmoid(), t.log_softmax(1), L.nn.functional.softmax(t, -1), L.special.expit(t), t.cumsum(dim=1), L.cumsum(t, 1)])
    print(n, [int(np.sum(x.numpy() != y.numpy())) for x, y in zip(*res)])
