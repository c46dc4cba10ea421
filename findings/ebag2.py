"""EmbeddingBag / embedding scale_grad_by_freq (with padding_idx, 2-D input) vs PyTorch."""
import numpy as np
import torch as T
import symgrad as S
T.set_default_dtype(T.float64)
W = np.random.default_rng(0).standard_normal((6, 3))
idx = np.array([1, 1, 2, 5, 1, 0, 2]); offs = np.array([0, 3, 5])
for mode in ("sum", "mean", "max"):
    for pad in (None, 1):
        for twod in (False, True):
            out = []
            for L in (S, T):
                w = L.tensor(W, requires_grad=True)
                i = L.tensor(idx[:6].reshape(2, 3) if twod else idx)
                try:
                    y = L.nn.functional.embedding_bag(i, w, None if twod else L.tensor(offs), mode=mode, scale_grad_by_freq=True, padding_idx=pad)
                    (y * L.tensor(np.arange(y.numel()).reshape(tuple(y.shape)) * 1.0)).sum().backward()
                    out.append((y.detach().numpy(), w.grad.numpy()))
                except Exception as e:
                    out.append(type(e).__name__ + str(e)[:80])
            a, b = out
            if isinstance(a, str) or isinstance(b, str):
                print("EXC" if isinstance(a, str) != isinstance(b, str) else "both-exc", mode, pad, twod, a if isinstance(a, str) else "ok", "|", b if isinstance(b, str) else "ok")
            else:
                print("ok  " if all(np.allclose(u, v) for u, v in zip(a, b)) else "FAIL", mode, pad, twod)
                if not all(np.allclose(u, v) for u, v in zip(a, b)): print(a[1], "\n", b[1])
for pad in (None, 1):
    out = []
    for L in (S, T):
        w = L.tensor(W, requires_grad=True)
        y = L.nn.functional.embedding(L.tensor(idx.reshape(1, 7)), w, padding_idx=pad, scale_grad_by_freq=True)
        (y * 1.0).sum().backward(); out.append(w.grad.numpy())
    print("embedding sgbf", pad, np.allclose(*out))
