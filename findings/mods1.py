"""Module forms vs PyTorch: RMSNorm options, Bilinear no bias, Unflatten, PixelShuffle,
CosineSimilarity, ParameterList in state_dict, float32 RMSNorm default eps."""
import numpy as np
import torch as T
import symgrad as S
from common import cmp, sd_copy
T.set_default_dtype(T.float64)
rng = np.random.default_rng(0)
x = rng.standard_normal((2, 3, 4)) * 1e-4
for kw in (dict(normalized_shape=4), dict(normalized_shape=[3, 4], eps=1e-3), dict(normalized_shape=(4,), elementwise_affine=False)):
    for dt in ("float64", "float32"):
        tm = T.nn.RMSNorm(**kw, dtype=getattr(T, dt)); sm = S.nn.RMSNorm(**kw, dtype=getattr(S, dt))
        if tm.weight is not None:
            with T.no_grad(): tm.weight.copy_(T.tensor(rng.standard_normal(tm.weight.shape)))
        sd_copy(tm, sm)
        xs = S.tensor(x, dtype=getattr(S, dt), requires_grad=True); xt = T.tensor(x, dtype=getattr(T, dt), requires_grad=True)
        a = sm(xs); b = tm(xt); a.pow(3).sum().backward(); b.pow(3).sum().backward()
        tol = 1e-10 if dt == "float64" else 1e-5
        cmp(f"RMSNorm {kw} {dt}", a, b, rtol=tol, atol=tol); cmp("  grad", xs.grad, xt.grad, rtol=tol, atol=tol * 1e4)
        print("  repr", repr(sm) == repr(tm), repr(sm), repr(tm))
tm = T.nn.Bilinear(3, 4, 2, bias=False); sm = S.nn.Bilinear(3, 4, 2, bias=False); sd_copy(tm, sm)
cmp("Bilinear nobias", sm(S.tensor(x[..., :3]), S.tensor(x)), tm(T.tensor(x[..., :3]), T.tensor(x)))
print(repr(sm) == repr(tm), repr(sm))
cmp("Unflatten", S.nn.Unflatten(2, (2, 2))(S.tensor(x)), T.nn.Unflatten(2, (2, 2))(T.tensor(x)))
cmp("Unflatten neg", S.nn.Unflatten(-1, (2, -1))(S.tensor(x)), T.nn.Unflatten(-1, (2, -1))(T.tensor(x)))
cmp("CosineSimilarity", S.nn.CosineSimilarity(dim=-1, eps=1e-3)(S.tensor(x), S.tensor(x[::-1].copy())), T.nn.CosineSimilarity(dim=-1, eps=1e-3)(T.tensor(x), T.tensor(x[::-1].copy())))
cmp("CosineSimilarity bcast", S.nn.CosineSimilarity(dim=1)(S.tensor(x), S.tensor(x[:1])), T.nn.CosineSimilarity(dim=1)(T.tensor(x), T.tensor(x[:1])))
class PL:
    def __init__(s, L):
        s.m = L.nn.Module(); s.m.pl = L.nn.ParameterList([L.nn.Parameter(L.ones(2)), L.nn.Parameter(L.zeros(3))]); s.m.pd = L.nn.ParameterDict({"a": L.nn.Parameter(L.ones(1))})
print("ParameterList keys", list(PL(S).m.state_dict()) == list(PL(T).m.state_dict()), list(PL(S).m.state_dict()))
