import numpy as np, torch, symgrad as sgt
torch.set_default_dtype(torch.float64)
codes = [
 "x = L.arange(12.); y = x.as_strided((3, 2), (3, 1), 1); y.mul_(10); out = [x, y]",
 "x = L.arange(12.); y = x[2:].as_strided((2, 2), (4, 1)); y.add_(100); out = [x, y]",
 "x = L.arange(12.).reshape(3, 4); y = x.as_strided((2, 2), (4, 1), 2); x.add_(1); out = [x, y]",
 "x = L.arange(12.); y = L.as_strided(x, (3, 3), (1, 1)); out = [y]",
 "x = L.arange(12.); y = L.as_strided(x, (3, 3), (1, 1)); y.add_(1); out = [x]",
 "x = L.arange(12., requires_grad=True); y = (x * 1).as_strided((3, 3), (2, 1), 1); (y * L.arange(9.).reshape(3, 3)).sum().backward(); out = [x.grad]",
 "x = L.arange(12., requires_grad=True); z = x * 1; y = z.as_strided((2, 3), (1, 2)); w = y.exp(); (w * L.arange(6.).reshape(2, 3)).sum().backward(); out = [x.grad]",
 "x = L.arange(12., requires_grad=True); z = x * 1; v = z[3:]; y = v.as_strided((2, 2), (3, 1), 1); (y ** 2).sum().backward(); out = [x.grad]",
 "x = L.arange(12., requires_grad=True); z = (x * 1).reshape(3, 4)[:, 1:]; y = z.as_strided((2, 2), (4, 1)); (y ** 2).sum().backward(); out = [x.grad, y]",
 "x = L.arange(12.); z = x.reshape(3, 4).t(); y = z.as_strided((2, 2), (1, 4)); out = [y]",
 "x = L.arange(6.); y = x.as_strided((2,), (2,)); y[0] = -5; out = [x]",
 "x = L.arange(6., requires_grad=True); z = x * 2; y = z.as_strided((2, 2), (1, 1)); y2 = y * 1; y2.sum().backward(); out = [x.grad]",
 "x = L.arange(6., requires_grad=True); z = x * 2; y = z.as_strided((3,), (2,)); y.mul_(3); z.sum().backward(); out = [x.grad, z]",
]
for c in codes:
    res = []
    for L in (torch, sgt):
        env = {"L": L}
        try:
            exec(c, env); res.append([np.asarray(v.detach().numpy()).tolist() for v in env["out"]])
        except Exception as e:
            res.append(f"{type(e).__name__}: {str(e)[:80]}")
    if res[0] != res[1]: print(c, "\n   torch:", res[0], "\n   sg:   ", res[1])
print("done")
