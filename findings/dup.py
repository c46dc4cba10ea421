import numpy as np, torch, symgrad as sgt
for L in (torch, sgt):
    q = L.zeros(4)
    v = L.tensor([1., 2., 3.], requires_grad=True)
    q[L.tensor([0, 2, 2])] = v * 1
    (q * L.tensor([1., 10., 100., 1000.])).sum().backward()
    print(L.__name__, q.detach().tolist(), v.grad.tolist())
    x = L.tensor([1., 2., 3., 4.], requires_grad=True)
    y = x.index_put((L.tensor([0, 2, 2]),), L.tensor([5., 6., 7.]))
    y.sum().backward(); print("  index_put x.grad", x.grad.tolist())
    x = L.tensor([1., 2., 3., 4.], requires_grad=True); v = L.tensor([5., 6., 7.], requires_grad=True)
    y = x.index_put((L.tensor([0, 2, 2]),), v, accumulate=True)
    (y * L.tensor([1., 10., 100., 1000.])).sum().backward(); print("  accumulate", y.detach().tolist(), x.grad.tolist(), v.grad.tolist())
    x = L.tensor([1., 2., 3., 4.], requires_grad=True); v = L.tensor([5., 6., 7.], requires_grad=True)
    y = x.scatter(0, L.tensor([0, 2, 2]), v)
    (y * L.tensor([1., 10., 100., 1000.])).sum().backward(); print("  scatter", y.detach().tolist(), x.grad.tolist(), v.grad.tolist())
