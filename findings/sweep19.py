import numpy as np
from _h import main
exec(open(__import__("os").path.join(__import__("os").path.dirname(__file__), "sweep5.py")).read().split("cases = []")[0])
bm3 = np.zeros((B * H, Lq, Lk), bool); bm3[1, :, 2] = True; bm3[4, 0, :4] = True
causal = np.triu(np.ones((Lq, Lk), bool), 1)
def mha2(batch_first=True, **kw):
    return mha(batch_first=batch_first, **kw)
cases = []
for dt in ["float64", "float32"]:
    cases += [("mha 3d bool", mha(attn_mask=bm3, average_attn_weights=False), dt),
              ("mha causal w mask", mha(attn_mask=causal, is_causal=True), dt),
              ("mha bool mask + float kpm", mha(attn_mask=bmask, key_padding_mask=fkpm), dt),
              ("mha float mask + bool kpm seqfirst", mha(batch_first=False, attn_mask=fmask, key_padding_mask=kpm, average_attn_weights=False), dt),
              ("mha no weights", mha(need_weights=False, key_padding_mask=kpm), dt)]
main(cases)
