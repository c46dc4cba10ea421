"""cond values for p != 2 (PyTorch's own backward fails there), MHA kdim/vdim, sdpa gqa,
InstanceNorm, int8 wrap: vs PyTorch."""
import numpy as np
import torch as T
import symgrad as S
from common import cmp, sd_copy
T.set_default_dtype(T.float64)
rng = np.random.default_rng(2)
Sq = rng.standard_normal((2, 4, 4))
for p in ("fro", "nuc", np.inf, -np.inf, 1, -1, 2, -2, None):
    cmp(f"cond {p}", S.linalg.cond(S.tensor(Sq), p), T.linalg.cond(T.tensor(Sq), p))
# MHA kdim/vdim with masks, batch_first both, need_weights average False
for bf in (False, True):
    for avg in (True, False):
        tm = T.nn.MultiheadAttention(6, 2, kdim=3, vdim=5, batch_first=bf, bias=True, add_bias_kv=False)
        sm = S.nn.MultiheadAttention(6, 2, kdim=3, vdim=5, batch_first=bf, bias=True)
        sd_copy(tm, sm)
        L_, Sx, N = 4, 5, 2
        q = rng.standard_normal((N, L_, 6) if bf else (L_, N, 6)); k = rng.standard_normal((N, Sx, 3) if bf else (Sx, N, 3)); v = rng.standard_normal((N, Sx, 5) if bf else (Sx, N, 5))
        kpm = np.zeros((N, Sx), bool); kpm[1, -2:] = True
        am = rng.standard_normal((L_, Sx))
        outs = []
        for L, m in ((S, sm), (T, tm)):
            qq = L.tensor(q, requires_grad=True)
            o, w = m(qq, L.tensor(k), L.tensor(v), key_padding_mask=L.tensor(kpm), attn_mask=L.tensor(am), average_attn_weights=avg)
            (o.sum() + (w * w).sum()).backward()
            outs.append((o, w, qq.grad, m.k_proj_weight.grad if hasattr(m, "k_proj_weight") else None))
        for name, a, b in zip(("out", "weights", "q.grad", "k_proj.grad"), outs[0], outs[1]):
            if b is not None:
                cmp(f"MHA bf{bf} avg{avg} {name}", a, b)
# sdpa enable_gqa
q = rng.standard_normal((2, 6, 4, 3)); k = rng.standard_normal((2, 2, 5, 3)); v = rng.standard_normal((2, 2, 5, 3))
for causal in (False, True):
    r = []
    for L in (S, T):
        qq, kk, vv = (L.tensor(a, requires_grad=True) for a in (q, k, v))
        o = L.nn.functional.scaled_dot_product_attention(qq, kk, vv, is_causal=causal, enable_gqa=True, scale=0.7)
        (o * o).sum().backward()
        r.append((o, qq.grad, kk.grad, vv.grad))
    for name, a, b in zip(("o", "dq", "dk", "dv"), *r):
        cmp(f"sdpa gqa causal{causal} {name}", a, b)
# InstanceNorm with running stats, eval, affine
for cls, shape in (("InstanceNorm1d", (3, 4, 6)), ("InstanceNorm2d", (2, 4, 3, 5)), ("InstanceNorm1d", (4, 6))):
    for affine, track in ((True, True), (False, True), (True, False)):
        tm = getattr(T.nn, cls)(4, affine=affine, track_running_stats=track, momentum=0.3)
        sm = getattr(S.nn, cls)(4, affine=affine, track_running_stats=track, momentum=0.3)
        if affine:
            with T.no_grad():
                tm.weight.copy_(T.tensor(rng.standard_normal(4))); tm.bias.copy_(T.tensor(rng.standard_normal(4)))
        sd_copy(tm, sm)
        x = rng.standard_normal(shape) * 3 + 1
        for step in range(2):
            a = sm(S.tensor(x)); b = tm(T.tensor(x))
            cmp(f"{cls}{shape} affine{affine} track{track} train{step}", a, b)
        if track:
            cmp("running_var", sm.running_var, tm.running_var)
            sm.eval(); tm.eval()
            cmp(f"{cls} eval", sm(S.tensor(x)), tm(T.tensor(x)))
# int8 wrap with Python ints
for dt in ("int8", "uint8", "int16"):
    for op in ("add", "sub", "mul", "gt", "lt", "eq", "ge"):
        for k in (300, -200, 1000, 127, -129):
            a = np.array([120, -5, 0, 7, 100]) if dt != "uint8" else np.array([250, 5, 0, 7, 100])
            try:
                rs = getattr(S.tensor(a, dtype=getattr(S, dt)), op)(k).numpy()
            except Exception as e:
                rs = type(e).__name__
            try:
                rt = getattr(T.tensor(a, dtype=getattr(T, dt)), op)(k).numpy()
            except Exception as e:
                rt = type(e).__name__
            if isinstance(rs, str) or isinstance(rt, str):
                if rs != rt: print("DIFF", dt, op, k, rs, rt)
            elif rs.dtype != rt.dtype or not np.array_equal(rs, rt):
                print("DIFF", dt, op, k, rs, rs.dtype, rt, rt.dtype)
    for expr in ("x + 300", "300 + x", "x - 300", "300 - x", "x * 3", "x // 3", "x % 100", "x == 256", "x < 300", "x & 255", "x | 256", "x ^ 257", "x >> 1", "x << 9", "-x", "x += 300", "x *= -2"):
        a = np.array([120, 5, 0, 7, 100])
        out = []
        for L in (S, T):
            x = L.tensor(a, dtype=getattr(L, dt))
            try:
                if "=" in expr and "==" not in expr:
                    exec(expr); r = x
                else:
                    r = eval(expr)
                out.append((str(r.dtype).split(".")[-1], r.numpy().tolist()))
            except Exception as e:
                out.append(type(e).__name__)
        if out[0] != out[1]:
            print("DIFF", dt, expr, "sym", out[0], "torch", out[1])
print("done")
