"""nanmean gradient vs PyTorch: an all-NaN row, and one NaN."""
import numpy as np
import torch as T
import symgrad as S
x = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan], [1.0, 2.0, 4.0]])
for L in (S, T):
    a = L.tensor(x, requires_grad=True)
    y = a.nanmean(1)
    y.backward(L.tensor([1.0, 2.0, 3.0], dtype=L.float64))
    print(L.__name__, y.detach().numpy(), "\n", a.grad.numpy())
    a = L.tensor(x, requires_grad=True)
    y = L.nanmean(a)
    y.backward()
    print(L.__name__, "all:", y.item(), "\n", a.grad.numpy())
