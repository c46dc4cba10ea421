"""float32 double backward (create_graph) vs PyTorch float32; result dtypes."""
import numpy as np
import torch as T
import symgrad as S
rng = np.random.default_rng(0)
x0 = rng.standard_normal((3, 4)).astype(np.float32); w0 = rng.standard_normal((4, 4)).astype(np.float32)
fns = {
 "tanh-mm": lambda L, F, x, w: (x @ w).tanh().sum(),
 "softmax": lambda L, F, x, w: (F.softmax(x @ w, -1) * L.arange(4, dtype=L.float32)).sum(),
 "layernorm": lambda L, F, x, w: (F.layer_norm(x @ w, (4,)) ** 3).sum(),
 "gelu": lambda L, F, x, w: F.gelu(x @ w).sum(),
 "logsumexp": lambda L, F, x, w: (x @ w).logsumexp(-1).sum(),
 "ce": lambda L, F, x, w: F.cross_entropy(x @ w, L.tensor([0, 3, 1])),
 "mse": lambda L, F, x, w: F.mse_loss(x @ w, x),
 "sigmoid-div": lambda L, F, x, w: ((x @ w).sigmoid() / (1 + x * x)).sum(),
 "conv": lambda L, F, x, w: F.conv1d(x.reshape(1, 3, 4), w[:2, :3].reshape(2, 3, 1).expand(2, 3, 2) * 1.0, padding=1).pow(2).sum(),
 "rnn": lambda L, F, x, w: L.tanh(x[0] @ w + L.tanh(x[1] @ w)).pow(2).sum(),
}
for name, f in fns.items():
    out = []
    for L in (S, T):
        x = L.tensor(x0, requires_grad=True); w = L.tensor(w0, requires_grad=True)
        y = f(L, L.nn.functional, x, w)
        gx, gw = L.autograd.grad(y, (x, w), create_graph=True)
        z = (gx ** 2).sum() + (gw * gw.detach()).sum()
        hx, hw = L.autograd.grad(z, (x, w))
        out.append([y.detach().numpy(), gx.detach().numpy(), gw.detach().numpy(), hx.numpy(), hw.numpy()])
    dts = [a.dtype for a in out[0]]
    errs = [float(np.max(np.abs(a.astype(float) - b.astype(float)) / (np.abs(b).max() + 1e-30))) for a, b in zip(*out)]
    flag = "ok  " if max(errs) < 1e-5 and all(d == np.float32 for d in dts) else "FAIL"
    print(flag, name, ["%.1e" % e for e in errs], set(map(str, dts)))
