"""float32 backward with int64 index data beyond 2**24: are indices rounded to float32?"""
import numpy as np
import torch as T
import symgrad as S
n = 2 ** 24 + 8
for name, fn in [("getitem", lambda L, x, i: x[i]),
                 ("index_select", lambda L, x, i: x.index_select(0, i)),
                 ("gather", lambda L, x, i: x.gather(0, i)),
                 ("take", lambda L, x, i: x.take(i)),
                 ("embedding", lambda L, x, i: L.nn.functional.embedding(i, x.reshape(-1, 1)).reshape(-1)),
                 ("index_add", lambda L, x, i: L.zeros(n).index_add(0, i, x[:3] * 1.0)),
                 ("scatter_add", lambda L, x, i: L.zeros(n).scatter_add(0, i, x[:3] * 1.0))]:
    out = []
    for L in (S, T):
        x = L.zeros(n, dtype=L.float32, requires_grad=True)
        i = L.tensor([2 ** 24 + 1, 2 ** 24 + 3, 5])
        y = fn(L, x, i)
        (y * L.tensor([1.0, 2.0, 3.0], dtype=L.float32) if y.shape[0] == 3 else y * L.arange(n, dtype=L.float32)).sum().backward()
        g = x.grad.numpy()
        nz = np.nonzero(g)[0]
        out.append((nz.tolist(), g[nz].tolist(), str(x.grad.dtype)))
    print("ok  " if out[0][:2] == out[1][:2] else "FAIL", name, "sym", out[0], "torch", out[1])
