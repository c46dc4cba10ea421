import numpy as np, torch, symgrad as st
torch.set_default_dtype(torch.float64)
def run(T):
    a = T.tensor([0.1, 0.2, 0.3], dtype=T.float32, requires_grad=True)
    b = T.tensor(2.5, dtype=T.float64, requires_grad=True)
    c = T.tensor([1, 2, 3])
    d = T.tensor([True, False, True])
    outs = [a * b, a + c, c / 2, c * 2.5, d + 1, a * d, c // -2, c % -2, (c - 5).abs(), a ** 2, c ** 2, a.sum() * b, (a * 1e-8 + 1.0) - 1.0, T.where(d, a, b), T.where(d, c, 0.5)]
    loss = sum((o.double() if o.dtype != T.float64 else o).sum() for o in outs if o.dtype.is_floating_point)
    loss.backward()
    return [(o.dtype, o.detach().numpy()) for o in outs] + [(a.grad.dtype, a.grad.numpy()), (b.grad.dtype, b.grad.numpy())]
A = run(torch); S = run(st)
for i, ((da, va), (ds, vs)) in enumerate(zip(A, S)):
    ok = str(da).split(".")[-1] == str(ds).split(".")[-1] and np.allclose(va.astype(float), vs.astype(float), rtol=1e-6)
    if not ok: print("BAD", i, da, ds, va, vs)
print("done")
