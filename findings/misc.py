import numpy as np, torch, symgrad as sgt
for lib in (torch, sgt):
    A = lib.tensor(np.stack([np.eye(3), np.zeros((3, 3)), np.array([[1., 2, 3], [2, 4, 6], [0, 0, 1.]]), -np.eye(3)]))
    print(lib.__name__, "inv_ex info", lib.linalg.inv_ex(A).info.tolist(), "chol info", lib.linalg.cholesky_ex(A).info.tolist(), lib.linalg.cholesky_ex(A, upper=True).info.tolist())
    x = lib.tensor([[1., np.nan, 3.], [np.nan, np.nan, np.nan], [2., 4., np.nan]], requires_grad=True)
    y = lib.nanmean(x, dim=1, keepdim=True)
    (y * lib.tensor([[1.], [2.], [3.]])).sum().backward()
    print("  nanmean", y.detach().flatten().tolist(), x.grad.tolist())
    x = lib.tensor([[1., np.nan, 3.], [np.nan, np.nan, np.nan]], requires_grad=True)
    y = lib.nanmean(x, dim=0); y.sum().backward(); print("  nanmean0", y.detach().tolist(), x.grad.tolist())
    x = lib.tensor([np.nan, np.nan], requires_grad=True)
    y = lib.nanmean(x); y.backward(); print("  nanmean all", y.item(), x.grad.tolist())
    x = lib.tensor([[1., np.nan], [np.inf, 2.]], requires_grad=True)
    y = lib.nansum(x, 1); y.sum().backward(); print("  nansum", y.detach().tolist(), x.grad.tolist())
