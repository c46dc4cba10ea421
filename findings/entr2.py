import numpy as np, torch, symgrad as sgt
for dt in ("float64", "float32"):
    res = []
    for lib in (torch, sgt):
        x = lib.tensor([0., -1., 0.5, np.inf, 2.0, np.nan, 1e-30], dtype=getattr(lib, dt), requires_grad=True)
        y = lib.special.entr(x)
        (g,) = lib.autograd.grad((y * lib.tensor([1., 2, 3, 4, 5, 6, 7], dtype=getattr(lib, dt))).sum(), x, create_graph=True)
        (h,) = lib.autograd.grad(g[[2, 4, 6]].sum(), x)
        res.append((y.detach().numpy(), g.detach().numpy(), h.numpy(), type(y.grad_fn).__name__ if lib is torch else y.grad_fn.name()))
    for a, b in zip(*res):
        print(dt, a, b, a.dtype if hasattr(a, "dtype") else "", b.dtype if hasattr(b, "dtype") else "")
print(sgt.special.entr(sgt.tensor([0, 1, 2])), torch.special.entr(torch.tensor([0, 1, 2])))
