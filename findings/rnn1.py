"""LSTM/GRU/RNN options against PyTorch (float64): outputs, states, gradients."""
import numpy as np
import torch as T
import symgrad as S
from common import cmp, sd_copy
T.set_default_dtype(T.float64)
T.manual_seed(0)

def run(kind, kw, T_, N, I, H, with_h0=True, packed=None, lengths=None):
    tm = getattr(T.nn, kind)(I, H, **kw)
    sm = getattr(S.nn, kind)(I, H, **kw)
    sd_copy(tm, sm)
    bf = kw.get("batch_first", False)
    x = T.randn(*(N, T_, I) if bf else (T_, N, I))
    D = 2 if kw.get("bidirectional") else 1
    L = kw.get("num_layers", 1)
    P = kw.get("proj_size", 0) or H
    hx_t = hx_s = None
    if with_h0:
        h0 = T.randn(L * D, N, P)
        if kind == "LSTM":
            c0 = T.randn(L * D, N, H)
            hx_t = (h0.clone().requires_grad_(), c0.clone().requires_grad_())
            hx_s = tuple(S.tensor(a.detach().numpy(), requires_grad=True) for a in hx_t)
        else:
            hx_t = h0.clone().requires_grad_()
            hx_s = S.tensor(h0.numpy(), requires_grad=True)
    xt = x.clone().requires_grad_()
    xs = S.tensor(x.numpy(), requires_grad=True)
    if lengths is not None:
        pt = T.nn.utils.rnn.pack_padded_sequence(xt, lengths, batch_first=bf, enforce_sorted=False)
        ps = S.nn.utils.rnn.pack_padded_sequence(xs, lengths, batch_first=bf, enforce_sorted=False)
        ot, ht = tm(pt, hx_t)
        os_, hs = sm(ps, hx_s)
        cmp(f"{kind}{kw} packed data", os_.data, ot.data)
        ot, _ = T.nn.utils.rnn.pad_packed_sequence(ot, batch_first=bf)
        os_, _ = S.nn.utils.rnn.pad_packed_sequence(os_, batch_first=bf)
    else:
        ot, ht = tm(xt, hx_t)
        os_, hs = sm(xs, hx_s)
    cmp(f"{kind}{kw} out", os_, ot)
    wt = T.randn(*ot.shape)
    loss_t = (ot * wt).sum()
    loss_s = (os_ * S.tensor(wt.numpy())).sum()
    if kind == "LSTM":
        cmp("h_n", hs[0], ht[0]); cmp("c_n", hs[1], ht[1])
        loss_t = loss_t + (ht[0] ** 2).sum() + (ht[1] * 0.5).sum()
        loss_s = loss_s + (hs[0] ** 2).sum() + (hs[1] * 0.5).sum()
    else:
        cmp("h_n", hs, ht)
        loss_t = loss_t + (ht ** 2).sum(); loss_s = loss_s + (hs ** 2).sum()
    loss_t.backward(); loss_s.backward()
    cmp("x.grad", xs.grad, xt.grad)
    if with_h0:
        if kind == "LSTM":
            cmp("h0.grad", hx_s[0].grad, hx_t[0].grad); cmp("c0.grad", hx_s[1].grad, hx_t[1].grad)
        else:
            cmp("h0.grad", hx_s.grad, hx_t.grad)
    sp = dict(sm.named_parameters())
    for n, p in tm.named_parameters():
        cmp("grad " + n, sp[n].grad, p.grad)

run("LSTM", dict(num_layers=2, bidirectional=True, proj_size=3), 5, 4, 3, 6)
run("LSTM", dict(num_layers=2, bidirectional=True, proj_size=3, batch_first=True), 5, 4, 3, 6)
run("GRU", dict(num_layers=2, bidirectional=True), 5, 3, 2, 4)
run("GRU", dict(num_layers=3, bias=False), 4, 3, 2, 4)
run("RNN", dict(num_layers=2, nonlinearity="relu", bidirectional=True), 4, 3, 2, 4)
run("LSTM", dict(num_layers=2, bidirectional=True, proj_size=2), 6, 4, 3, 5, lengths=[3, 6, 1, 3])
run("GRU", dict(num_layers=2, bidirectional=True, batch_first=True), 6, 4, 3, 5, lengths=[2, 6, 6, 4])
run("LSTM", dict(num_layers=1, bidirectional=True), 6, 4, 3, 5, with_h0=False, lengths=[2, 5, 6, 4])
