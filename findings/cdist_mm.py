"""cdist above 25 rows (PyTorch switches to its matmul formula): values and gradients."""
import numpy as np
import torch as T
import symgrad as S
T.set_default_dtype(T.float64)
rng = np.random.default_rng(0)
a = rng.standard_normal((30, 4)) + 100; b = rng.standard_normal((27, 4)) + 100
b[3] = a[5]
for mode in ("use_mm_for_euclid_dist_if_necessary", "donot_use_mm_for_euclid_dist", "use_mm_for_euclid_dist"):
    out = []
    for L in (S, T):
        x = L.tensor(a, requires_grad=True)
        try:
            d = L.cdist(x, L.tensor(b), compute_mode=mode)
            (d * L.tensor(np.cos(np.arange(d.numel())).reshape(30, 27))).sum().backward()
            out.append((d.detach().numpy(), x.grad.numpy()))
        except Exception as e:
            out.append(type(e).__name__ + str(e)[:80])
    if any(isinstance(o, str) for o in out):
        print(mode, out if all(isinstance(o, str) for o in out) else [o if isinstance(o, str) else "ok" for o in out]); continue
    (ds, gs), (dt, gt) = out
    exact = np.sqrt(((a[:, None] - b[None]) ** 2).sum(-1))
    print(mode, "value maxerr sym-exact %.1e torch-exact %.1e" % (np.max(np.abs(ds - exact)), np.max(np.abs(dt - exact))),
          "grad sym-torch %.1e, at the zero distance sym %s torch %s" % (np.nanmax(np.abs(gs - gt)), gs[5], gt[5]))
