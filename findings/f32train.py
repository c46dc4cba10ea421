"""float32 training loops vs PyTorch float32 (and float64 as the yardstick): losses and
parameters after each step; each model's worst relative gap."""
import sys
import numpy as np
import torch as T
import symgrad as S
from common import sd_copy

def models(L):
    nn = L.nn
    class Mix(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(11, 8)
            self.gru = nn.GRU(8, 6, num_layers=2, batch_first=True, bidirectional=True)
            self.lstm = nn.LSTM(12, 5, proj_size=3)
            self.norm = nn.LayerNorm(3)
            self.head = nn.Linear(3, 11)
        def forward(self, idx):
            x = self.emb(idx)
            x, _ = self.gru(x)
            x, _ = self.lstm(x.transpose(0, 1))
            return self.head(nn.functional.gelu(self.norm(x)))
    class Conv(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(2, 4, 3, padding=1); self.bn = nn.BatchNorm2d(4)
            self.c2 = nn.Conv2d(4, 3, 3, stride=2); self.pool = nn.MaxPool2d(2)
            self.ln = nn.Linear(3, 11)
        def forward(self, x):
            x = self.pool(self.bn(self.c1(x)).relu())
            x = self.c2(nn.functional.interpolate(x, scale_factor=2, mode="bilinear"))
            return self.ln(x.mean((2, 3)))
    class Attn(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(11, 8)
            self.enc = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True, norm_first=True)
            self.head = nn.Linear(8, 11)
        def forward(self, idx):
            m = nn.Transformer.generate_square_subsequent_mask(idx.shape[1], dtype=L.float32)
            return self.head(self.enc(self.emb(idx), src_mask=m, is_causal=True))
    return {"Mix": Mix, "Conv": Conv, "Attn": Attn}

def train(L, name, dtype, opt_name, steps=5):
    L.manual_seed(0)
    m = models(L)[name]().to(dtype)
    return m

rng = np.random.default_rng(0)
idx = rng.integers(0, 11, (4, 7)); tgt = rng.integers(0, 11, (4, 7))
img = rng.standard_normal((4, 2, 8, 8)); tgt_img = rng.integers(0, 11, 4)

def run(L, m, name, dtype, opt_name):
    opt = getattr(L.optim, opt_name)(m.parameters(), lr=0.01)
    losses, params = [], []
    for step in range(5):
        opt.zero_grad()
        if name == "Conv":
            out = m(L.tensor(img, dtype=dtype)); loss = L.nn.functional.cross_entropy(out, L.tensor(tgt_img), label_smoothing=0.1)
        else:
            out = m(L.tensor(idx)); loss = L.nn.functional.cross_entropy(out.reshape(-1, 11), L.tensor(tgt).reshape(-1), label_smoothing=0.1)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        params.append({k: v.detach().numpy().copy() for k, v in m.named_parameters()})
    return np.array(losses), params

for name in ("Mix", "Conv", "Attn"):
    for opt_name in ("Adam", "SGD", "RMSprop"):
        res = {}
        for key, L, dt in (("s32", S, S.float32), ("t32", T, T.float32), ("t64", T, T.float64)):
            L.manual_seed(0)
            m = models(L)[name]().to(dt)
            if key == "s32":
                ref = models(T)[name]()
                T.manual_seed(0); ref = models(T)[name]()
                sd_copy(ref, m)
                m = m.to(dt)
            elif key == "t64":
                T.manual_seed(0); m = models(T)[name]().to(dt)
            res[key] = run(L, m, name, dt, opt_name)
        def gap(a, b):
            lg = np.max(np.abs(a[0] - b[0]) / np.abs(b[0]))
            pg = max(np.max(np.abs(pa[k].astype(float) - pb[k].astype(float))) for pa, pb in zip(a[1], b[1]) for k in pb)
            return lg, pg
        s_t = gap(res["s32"], res["t32"]); t_64 = gap(res["t32"], res["t64"]); s_64 = gap(res["s32"], res["t64"])
        dts = {v.dtype for v in res["s32"][1][-1].values()}
        flag = "FAIL" if s_t[0] > 10 * max(t_64[0], 1e-6) or s_64[1] > 10 * max(t_64[1], 1e-6) else "ok  "
        print(f"{flag} {name} {opt_name}: loss rel gap s32-t32 {s_t[0]:.1e} t32-t64 {t_64[0]:.1e} s32-t64 {s_64[0]:.1e} | param abs gap s32-t32 {s_t[1]:.1e} t32-t64 {t_64[1]:.1e} s32-t64 {s_64[1]:.1e} {dts}")
