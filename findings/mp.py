import numpy as np, torch, symgrad as sgt
torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(0)
cases = {
 "rand": rng.standard_normal((2, 3, 8, 8)),
 "ties": rng.integers(0, 2, (2, 3, 8, 8)).astype(float),
 "zeros": np.where(rng.random((2, 3, 8, 8)) > 0.5, 0.0, -0.0),
 "nan": np.where(rng.random((2, 3, 8, 8)) > 0.9, np.nan, rng.standard_normal((2, 3, 8, 8))),
 "inf": np.where(rng.random((2, 3, 8, 8)) > 0.8, -np.inf, rng.integers(0, 2, (2, 3, 8, 8)).astype(float)),
 "odd": rng.integers(0, 3, (2, 3, 9, 7)).astype(float),
}
for dt in ("float64", "float32"):
  for name, a in cases.items():
    for kw in (dict(kernel_size=2), dict(kernel_size=2, stride=2, return_indices=True), dict(kernel_size=(2, 2), ceil_mode=True), dict(kernel_size=3, stride=2, padding=1)):
        res = []
        for L in (torch, sgt):
            x = L.tensor(a, dtype=getattr(L, dt), requires_grad=True)
            out = L.nn.functional.max_pool2d(x, **kw)
            y, idx = (out if isinstance(out, tuple) else (out, None))
            w = L.tensor(np.arange(y.numel(), dtype=float).reshape(tuple(y.shape)) + 1, dtype=getattr(L, dt))
            (y * w).sum().backward()
            res.append((y.detach().numpy(), None if idx is None else idx.numpy(), x.grad.numpy()))
        t, s = res
        okv = np.array_equal(t[0], s[0], equal_nan=True) and np.array_equal(np.signbit(t[0]), np.signbit(s[0]))
        oki = t[1] is None or np.array_equal(t[1], s[1])
        okg = np.array_equal(t[2], s[2], equal_nan=True)
        if not (okv and oki and okg): print(dt, name, kw, "value", okv, "idx", oki, "grad", okg)
print("done")
