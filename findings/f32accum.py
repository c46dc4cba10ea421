"""float32: .grad accumulated over backward calls, retain_grad dtypes, leaf hooks, mixed
float32/float64 0-d data, vs PyTorch."""
import numpy as np
import torch as T
import symgrad as S
rng = np.random.default_rng(1)
w0 = rng.standard_normal((5, 5)).astype(np.float32); x0 = rng.standard_normal((3, 5)).astype(np.float32)
out = []
for L in (S, T):
    w = L.tensor(w0, requires_grad=True); x = L.tensor(x0)
    h = (x @ w).tanh(); h.retain_grad()
    loss = (h * L.tensor(0.1, dtype=L.float64)).sum() + (h ** 2).mean()   # float64 0-d data
    loss.backward(retain_graph=True)
    g1 = w.grad.clone()
    loss.backward()
    w.register_hook(lambda g: g * 3)
    ((x @ w).sigmoid() * 1e-3).sum().backward()
    out.append([loss.detach().numpy(), g1.numpy(), w.grad.numpy(), h.grad.numpy(), str(w.grad.dtype), str(h.grad.dtype), str(loss.dtype)])
for k, (a, b) in enumerate(zip(*out)):
    if isinstance(a, str):
        print("dtype", a, b, "ok" if a == b else "DIFF")
    else:
        print(k, "maxrel %.2e" % (np.max(np.abs(a - b)) / np.max(np.abs(b))), a.dtype, b.dtype)
