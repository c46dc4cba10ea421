import numpy as np, torch, symgrad as sgt
rng = np.random.default_rng(0)
for dt in (np.float32, np.float64):
  for n in [1000, 1003, 4099]:
    a = rng.standard_normal(n).astype(dt)
    for alpha in [0.1, 3, 1/3]:
        t = torch.add(torch.tensor(a), 1.7, alpha=alpha).numpy(); s = sgt.add(sgt.tensor(a), 1.7, alpha=alpha).numpy()
        old = (a + (sgt.tensor(1.7, dtype=getattr(sgt, dt.__name__)) * alpha).numpy()) if False else None
        tt = torch.add(torch.tensor(a), torch.tensor(a[::-1].copy()), alpha=alpha).numpy(); st = sgt.add(sgt.tensor(a), sgt.tensor(a[::-1].copy()), alpha=alpha).numpy()
        print(dt.__name__, n, alpha, "scalar mismatches at", np.nonzero(t != s)[0], "tensor:", np.nonzero(tt != st)[0])
