import numpy as np, torch, symgrad as sgt, itertools, warnings
warnings.simplefilter("ignore")
rng = np.random.default_rng(0)
X = rng.standard_normal((3, 4, 5, 2))
idxs = {
 "i,:,idx": lambda L: (1, slice(None), L.tensor([0, 2, 2])),
 "idx,:,i": lambda L: (L.tensor([0, 2]), slice(None), 1),
 ":,i,idx": lambda L: (slice(None), 1, L.tensor([4, 0])),
 "i,idx,j": lambda L: (1, L.tensor([3, 0, 1]), 2),
 "idx,i,idx": lambda L: (L.tensor([0, 2]), 1, L.tensor([4, 0])),
 "idx,:,idx": lambda L: (L.tensor([0, 2]), slice(None), L.tensor([4, 0])),
 "idx2d,:,i": lambda L: (L.tensor([[0, 2], [1, 1]]), slice(None), 3),
 "i,idx2d,:,j": lambda L: (2, L.tensor([[0, 3], [1, 1]]), slice(None), 0),
 "...,idx,i": lambda L: (Ellipsis, L.tensor([1, 0]), 1),
 "i,...,idx": lambda L: (0, Ellipsis, L.tensor([1, 0, 1])),
 "mask,i": lambda L: (L.tensor([True, False, True]), 1),
 "i,mask": lambda L: (1, L.tensor([True, False, True, True])),
 "i,None,idx": lambda L: (1, None, L.tensor([1, 2])),
 "idx,None,i,idx": lambda L: (L.tensor([0, 1]), None, 2, L.tensor([1, 0])),
 "neg i,idx": lambda L: (-1, L.tensor([-1, 0])),
 "slice step,i,idx": lambda L: (slice(None, None, 2), 1, L.tensor([1, 4])),
 "i,idx,:,idx": lambda L: (0, L.tensor([1, 2]), slice(None), L.tensor([1, 0])),
 "i,j,idx,k": lambda L: (0, 1, L.tensor([1, 2]), 0),
 "0d idx tensor": lambda L: (L.tensor(1), slice(None), L.tensor([1, 2])),
 "list idx, i": lambda L: ([0, 2], 1),
 "i, list, list": lambda L: (1, [0, 1], [2, 3]),
}
for name, ix in idxs.items():
    res = []
    for L in (torch, sgt):
        try:
            x = L.tensor(X.copy(), requires_grad=True)
            y = x[ix(L)]
            w = L.tensor(np.arange(1, y.numel() + 1, dtype=float).reshape(tuple(y.shape)))
            (y * w).sum().backward()
            # setitem
            z = L.tensor(X.copy())
            val = L.tensor(np.arange(y.numel(), dtype=float).reshape(tuple(y.shape)) + 100)
            z[ix(L)] = val
            # setitem with grad
            p = L.tensor(X.copy(), requires_grad=True); q = p * 1
            v = L.tensor(np.ones(tuple(y.shape)) * 3, requires_grad=True)
            q[ix(L)] = v * 2
            (q * L.tensor(np.arange(X.size, dtype=float).reshape(X.shape))).sum().backward()
            res.append((tuple(y.shape), y.detach().numpy(), x.grad.numpy(), z.numpy(), p.grad.numpy(), v.grad.numpy()))
        except Exception as e:
            res.append(("ERR", f"{type(e).__name__}: {str(e)[:100]}"))
    t, s = res
    if t[0] == "ERR" or s[0] == "ERR":
        if t[0] != s[0]: print(name, "torch", t[1] if t[0] == "ERR" else "ok", "| sg", s[1] if s[0] == "ERR" else "ok")
        continue
    if t[0] != s[0]: print(name, "SHAPE", t[0], s[0]); continue
    for k, lab in enumerate(["val", "grad", "setitem", "setgrad_p", "setgrad_v"], start=1):
        if not np.allclose(t[k], s[k]): print(name, "MISMATCH", lab)
print("done")
