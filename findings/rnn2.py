"""Packed-sequence utilities with tied lengths, unbatched RNN inputs with states, cells,
float32 LSTM: vs PyTorch."""
import numpy as np
import torch as T
import symgrad as S
from common import cmp, sd_copy
T.set_default_dtype(T.float64)
rng = np.random.default_rng(4)
for lengths in ([3, 5, 3, 5, 1, 3], [2, 2, 2], [4, 1, 4, 4, 2, 2, 4]):
    x = rng.standard_normal((max(lengths), len(lengths), 2))
    ps = S.nn.utils.rnn.pack_padded_sequence(S.tensor(x), lengths, enforce_sorted=False)
    pt = T.nn.utils.rnn.pack_padded_sequence(T.tensor(x), lengths, enforce_sorted=False)
    print(lengths, "sorted_indices", ps.sorted_indices.tolist(), pt.sorted_indices.tolist(), "same" if ps.sorted_indices.tolist() == pt.sorted_indices.tolist() else "DIFF")
    cmp("packed data", ps.data, pt.data)
    a, la = S.nn.utils.rnn.pad_packed_sequence(ps, batch_first=True, padding_value=-3.0, total_length=7)
    b, lb = T.nn.utils.rnn.pad_packed_sequence(pt, batch_first=True, padding_value=-3.0, total_length=7)
    cmp("padded", a, b); print("lengths", la.tolist() == lb.tolist(), la.dtype, lb.dtype)
    seqs = [rng.standard_normal((n, 2)) for n in lengths]
    ps = S.nn.utils.rnn.pack_sequence([S.tensor(s) for s in seqs], enforce_sorted=False)
    pt = T.nn.utils.rnn.pack_sequence([T.tensor(s) for s in seqs], enforce_sorted=False)
    cmp("pack_sequence data", ps.data, pt.data); print("batch_sizes", ps.batch_sizes.tolist() == pt.batch_sizes.tolist())
    us = S.nn.utils.rnn.unpack_sequence(ps); ut = T.nn.utils.rnn.unpack_sequence(pt)
    print("unpack", all(np.array_equal(a.numpy(), b.numpy()) for a, b in zip(us, ut)))
    # LSTM on the tied packed batch with hx
    tm = T.nn.LSTM(2, 4, num_layers=2, bidirectional=True, proj_size=2); sm = S.nn.LSTM(2, 4, num_layers=2, bidirectional=True, proj_size=2)
    sd_copy(tm, sm)
    h0 = rng.standard_normal((4, len(lengths), 2)); c0 = rng.standard_normal((4, len(lengths), 4))
    os_, (hs, cs) = sm(ps, (S.tensor(h0), S.tensor(c0))); ot, (ht, ct) = tm(pt, (T.tensor(h0), T.tensor(c0)))
    cmp("lstm packed out", os_.data, ot.data); cmp("h_n", hs, ht); cmp("c_n", cs, ct)
# unbatched with states
for kind in ("RNN", "GRU", "LSTM"):
    tm = getattr(T.nn, kind)(3, 4, num_layers=2, bidirectional=True); sm = getattr(S.nn, kind)(3, 4, num_layers=2, bidirectional=True)
    sd_copy(tm, sm)
    x = rng.standard_normal((5, 3)); h = rng.standard_normal((4, 4))
    hx_s = (S.tensor(h), S.tensor(h * 0.5)) if kind == "LSTM" else S.tensor(h)
    hx_t = (T.tensor(h), T.tensor(h * 0.5)) if kind == "LSTM" else T.tensor(h)
    a, ha = sm(S.tensor(x), hx_s); b, hb = tm(T.tensor(x), hx_t)
    cmp(f"{kind} unbatched", a, b); cmp("h", ha[0] if kind == "LSTM" else ha, hb[0] if kind == "LSTM" else hb)
    # cells
    ct = getattr(T.nn, kind + "Cell")(3, 4); cs = getattr(S.nn, kind + "Cell")(3, 4); sd_copy(ct, cs)
    for xs in (rng.standard_normal((2, 3)), rng.standard_normal(3)):
        hh = rng.standard_normal(xs.shape[:-1] + (4,))
        if kind == "LSTM":
            a = cs(S.tensor(xs), (S.tensor(hh), S.tensor(hh))); b = ct(T.tensor(xs), (T.tensor(hh), T.tensor(hh)))
            cmp(f"{kind}Cell {xs.shape}", a[1], b[1])
        else:
            cmp(f"{kind}Cell {xs.shape}", cs(S.tensor(xs), S.tensor(hh)), ct(T.tensor(xs), T.tensor(hh)))
        a = cs(S.tensor(xs)); b = ct(T.tensor(xs))
        cmp(f"{kind}Cell nohx {xs.shape}", a[0] if kind == "LSTM" else a, b[0] if kind == "LSTM" else b)
# float32 GRU (batch_first=False) training gradient
T.set_default_dtype(T.float32)
tm = T.nn.GRU(3, 5, num_layers=2); sm = S.nn.GRU(3, 5, num_layers=2, dtype=S.float32); sd_copy(tm, sm)
x = rng.standard_normal((6, 2, 3)).astype(np.float32)
a, _ = sm(S.tensor(x)); b, _ = tm(T.tensor(x)); (a ** 2).sum().backward(); (b ** 2).sum().backward()
cmp("GRU f32 out", a, b, rtol=1e-5, atol=1e-6)
for (n, p), (_, q) in zip(sm.named_parameters(), tm.named_parameters()):
    cmp("GRU f32 grad " + n, p.grad, q.grad, rtol=1e-4, atol=1e-6)
