"""MultiheadAttention options the README does not list: add_bias_kv, add_zero_attn,
need_weights=False, is_causal without mask, dropout in eval: refused or equal?"""
import numpy as np
import torch as T
import symgrad as S
from common import cmp, sd_copy
T.set_default_dtype(T.float64)
rng = np.random.default_rng(0)
q = rng.standard_normal((4, 2, 6))
for kw in (dict(add_bias_kv=True), dict(add_zero_attn=True), dict(bias=False), dict(dropout=0.3)):
    try:
        sm = S.nn.MultiheadAttention(6, 2, **kw)
    except Exception as e:
        print("refused", kw, type(e).__name__, str(e)[:100]); continue
    tm = T.nn.MultiheadAttention(6, 2, **kw)
    try:
        sd_copy(tm, sm)
    except Exception as e:
        print("state_dict", kw, type(e).__name__, str(e)[:100]); continue
    sm.eval(); tm.eval()
    a = sm(S.tensor(q), S.tensor(q), S.tensor(q)); b = tm(T.tensor(q), T.tensor(q), T.tensor(q))
    cmp(f"MHA {kw} out", a[0], b[0]); cmp(f"MHA {kw} w", a[1], b[1])
sm = S.nn.MultiheadAttention(6, 2); tm = T.nn.MultiheadAttention(6, 2); sd_copy(tm, sm)
mask = T.nn.Transformer.generate_square_subsequent_mask(4)
a = sm(S.tensor(q), S.tensor(q), S.tensor(q), need_weights=False, attn_mask=S.tensor(mask.numpy()), is_causal=True)
b = tm(T.tensor(q), T.tensor(q), T.tensor(q), need_weights=False, attn_mask=mask, is_causal=True)
cmp("MHA causal noweights", a[0], b[0]); print(a[1], b[1])
