"""Double backward through LSTM/GRU (a gradient penalty) vs PyTorch, float64."""
import numpy as np
import torch as T
import symgrad as S
from common import cmp, sd_copy
T.set_default_dtype(T.float64)
rng = np.random.default_rng(0)
for kind, kw in (("LSTM", dict(num_layers=2, proj_size=2)), ("GRU", dict(bidirectional=True)), ("RNN", dict(nonlinearity="relu"))):
    tm = getattr(T.nn, kind)(3, 4, **kw); sm = getattr(S.nn, kind)(3, 4, **kw); sd_copy(tm, sm)
    x = rng.standard_normal((5, 2, 3))
    res = []
    for L, m in ((S, sm), (T, tm)):
        xx = L.tensor(x, requires_grad=True)
        out, _ = m(xx)
        gx, = L.autograd.grad((out ** 2).sum(), xx, create_graph=True)
        pen = (gx ** 2).sum()
        pen.backward()
        res.append((pen, xx.grad, next(iter(m.parameters())).grad))
    for name, a, b in zip(("penalty", "x.grad", "w_ih.grad"), *res):
        cmp(f"{kind} {name}", a, b)
