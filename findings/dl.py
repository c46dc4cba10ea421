import numpy as np, symgrad as sg, torch
from symgrad.utils.data import DataLoader, TensorDataset, IterableDataset, get_worker_info
import torch.utils.data as tud
X = np.arange(23.)
def batches(L, DL, TD, **kw):
    L.manual_seed(0)
    return [b[0].tolist() for b in DL(TD(L.tensor(X)), **kw)]
for kw in (dict(batch_size=4), dict(batch_size=4, shuffle=True), dict(batch_size=5, drop_last=True, shuffle=True)):
    ref = batches(sg, DataLoader, TensorDataset, num_workers=0, **kw)
    for nw in (1, 2, 3):
        got = batches(sg, DataLoader, TensorDataset, num_workers=nw, **kw)
        if got != ref: print("DIFF", kw, nw, got, ref)
    tref = batches(torch, tud.DataLoader, tud.TensorDataset, num_workers=0, **kw)
    print(kw, "same as torch:", tref == ref)
class It(IterableDataset):
    def __iter__(self):
        info = get_worker_info()
        lo, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(lo, 10, step))
class TIt(tud.IterableDataset):
    def __iter__(self):
        info = tud.get_worker_info()
        lo, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(lo, 10, step))
for nw in (0, 2, 3):
    a = [b.tolist() for b in DataLoader(It(), batch_size=2, num_workers=nw)]
    t = [b.tolist() for b in tud.DataLoader(TIt(), batch_size=2, num_workers=nw)]
    print("iterable", nw, a == t, a, t)
