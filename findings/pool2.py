import numpy as np, symgrad as sg, sys
from symgrad.backend.numba import pool
N = pool.MIN_BYTES // 8 + 5
rng = np.random.default_rng(0)
fs = {
 "stride": lambda x: np.sum(np.sin(x[::2])),
 "slice": lambda x: np.sum(x[10:-7] ** 2),
 "pad": lambda x: np.sum(np.pad(x, 3) ** 2 * np.arange(N + 6)),
 "where": lambda x: np.sum(np.where(x > 0.5, x ** 2, 0.0)),
 "concat": lambda x: np.sum(np.concatenate([x[:100], x[:50]]) ** 2),
 "cumsum": lambda x: np.sum(np.cumsum(x) * x),
 "sort": lambda x: np.sum(np.sort(x)[:10]),
 "max": lambda x: np.max(x),
 "2d": lambda x: np.sum(np.tanh(x.reshape(-1, 5)[:, 1:3]) ) if False else np.sum(x[:N-N%5].reshape(-1,5).sum(axis=1) ** 2),
 "outer": lambda x: np.sum(np.outer(x[:400], x[:400]) ** 2),
 "take": lambda x: np.sum(x[np.array([3, 3, 5])] ** 2),
}
for name, f in fs.items():
    try:
        g = sg.grad(f); o = sg.grad(f, backend="numpy")
        x = rng.random(N)
        bad = 0
        for it in range(4):
            r = g(x)
            w = o(x)
            err = np.max(np.abs(r - w)) / (np.max(np.abs(w)) + 1e-300)
            bad = max(bad, err)
            r[:] = np.nan
            del r
        print(name, "pool" if "pool_take(" in g.source(x) else "-", bad)
    except Exception as e:
        print(name, "ERR", type(e).__name__, str(e)[:200])
