"""The new losses' functional forms accept PyTorch's legacy size_average=/reduce= and
ignore them: size_average=False gives the mean where PyTorch gives the sum."""
import warnings
import numpy as np
import torch as T
import symgrad as S
warnings.filterwarnings("ignore")
x = np.array([0.3, -1.2, 2.0]); y = np.array([1.0, 0.5, -0.4]); t = np.array([1., -1., 1.])
for name, call in [
    ("margin_ranking_loss", lambda F, a, b, tt, kw: F.margin_ranking_loss(a, b, tt, **kw)),
    ("hinge_embedding_loss", lambda F, a, b, tt, kw: F.hinge_embedding_loss(a, tt, **kw)),
    ("soft_margin_loss", lambda F, a, b, tt, kw: F.soft_margin_loss(a, tt, **kw)),
    ("cosine_embedding_loss", lambda F, a, b, tt, kw: F.cosine_embedding_loss(a[None].expand(3, 3), b[None].expand(3, 3), tt, **kw)),
    ("triplet_margin_loss", lambda F, a, b, tt, kw: F.triplet_margin_loss(a[None].expand(2, 3), b[None].expand(2, 3), tt[None].expand(2, 3) * 3, **kw)),
    ("poisson_nll_loss", lambda F, a, b, tt, kw: F.poisson_nll_loss(a, tt.abs(), **kw)),
    ("multi_margin_loss", lambda F, a, b, tt, kw: F.multi_margin_loss(a[None].expand(2, 3), (tt[:2] > 0).long(), **kw)),
    ("multilabel_soft_margin_loss", lambda F, a, b, tt, kw: F.multilabel_soft_margin_loss(a[None].expand(2, 3), (tt[None] > 0).double().expand(2, 3), **kw)),
]:
    for kw in (dict(size_average=False), dict(reduce=False), dict(size_average=True, reduce=True)):
        vals = []
        for L in (S, T):
            F = L.nn.functional
            try:
                v = call(F, L.tensor(x), L.tensor(y), L.tensor(t), kw)
                vals.append(v.detach().numpy().tolist())
            except Exception as e:
                vals.append(type(e).__name__)
        print("ok  " if vals[0] == vals[1] or (not isinstance(vals[0], str) and not isinstance(vals[1], str) and np.allclose(vals[0], vals[1])) else "FAIL", name, kw, "sym", vals[0], "torch", vals[1])
