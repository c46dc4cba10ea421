import numpy as np, torch, symgrad as st, sys
torch.set_default_dtype(torch.float64)
st.config.tiered = False
print("eager_compile", st.config.eager_compile)
rng = np.random.default_rng(0)
X = rng.normal(size=(4, 3))
def step(T, c, i):
    x = T.tensor(X, requires_grad=True)
    y = T.nn.functional.leaky_relu(x, negative_slope=c) * c
    y = y.clamp(min=-c, max=c * 3).abs().pow(1 + c) if i % 2 == 0 else y.clamp(min=-c).abs().pow(2 + c)
    z = T.nn.functional.softplus(y, beta=1 + c, threshold=2 * c) + T.nn.functional.elu(y, alpha=c)
    z = z + T.nn.functional.hardtanh(x, -c, c) * c ** 2 + x.masked_fill(x > c, c) + T.where(x > c, x * c, c - x)
    loss = (z ** 2).mean() * (1.0 / (c + 1)) + T.nn.functional.smooth_l1_loss(x, x * c, beta=c)
    loss.backward()
    return x.grad.numpy().copy(), loss.item()
bad = 0
for i, c in enumerate([0.1, 0.2, 0.3, 0.1, 0.7, 0.45, 0.2, 0.33, 0.9, 1.2]):
    a = step(torch, c, i); b = step(st, c, i)
    ok = np.allclose(a[0], b[0], rtol=1e-9, atol=1e-12) and np.isclose(a[1], b[1], rtol=1e-12)
    if not ok:
        bad += 1; print("BAD", i, c, np.max(np.abs(a[0] - b[0])), a[1], b[1])
print("bad", bad, st.compile_stats() if hasattr(st, "compile_stats") else "")
from symgrad.eager import backward as BW
bad = 0
for i, c in enumerate([0.1, 0.2, 0.1, 0.2, 0.1, 0.2, 0.3, 0.1, 0.2]):
    a = step(torch, c, 0); b = step(st, c, 0)
    ok = np.allclose(a[0], b[0], rtol=1e-9, atol=1e-12) and np.isclose(a[1], b[1], rtol=1e-12)
    if not ok:
        bad += 1; print("BAD2", i, c, np.max(np.abs(a[0] - b[0])), a[1], b[1])
print("bad2", bad, BW._STATS)
