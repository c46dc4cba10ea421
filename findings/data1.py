"""DataLoader/collate/samplers vs PyTorch (deterministic parts)."""
import collections
import numpy as np
import torch as T
import symgrad as S

def conv(x):
    if isinstance(x, (S.Tensor, T.Tensor)):
        return ("T", str(x.dtype).replace("symgrad.", "torch."), tuple(x.shape), np.asarray(x.detach().numpy()).tolist())
    if isinstance(x, dict):
        return (type(x).__name__, {k: conv(v) for k, v in x.items()})
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [conv(v) for v in x])
    return (type(x).__name__, x)

Point = collections.namedtuple("Point", "x y")

def samples(lib):
    return [
        {"a": lib.tensor([float(i), 2.0 * i]), "b": {"c": i, "d": float(i) / 3, "e": [i, (i, 1.5)]},
         "f": np.float32(i) / 7, "g": np.arange(3, dtype=np.int32) + i, "s": f"s{i}", "p": Point(i, lib.tensor(i)),
         "t": True, "od": collections.OrderedDict(z=i, y=float(i))}
        for i in range(7)]

class DS:
    def __init__(self, lib): self.d = samples(lib)
    def __len__(self): return len(self.d)
    def __getitem__(self, i): return self.d[i]

def loaders(lib):
    D = lib.utils.data
    ds = DS(lib)
    yield "bs3", D.DataLoader(ds, batch_size=3)
    yield "bs3drop", D.DataLoader(ds, batch_size=3, drop_last=True)
    yield "batch_sampler", D.DataLoader(ds, batch_sampler=D.BatchSampler(D.SequentialSampler(ds), 2, drop_last=True))
    yield "batch_sampler_list", D.DataLoader(ds, batch_sampler=[[6, 0], [3], [1, 2, 5]])
    yield "sampler", D.DataLoader(ds, batch_size=2, sampler=[6, 5, 1, 1, 0], drop_last=False)
    yield "none", D.DataLoader(ds, batch_size=None, sampler=[2, 3])
    td = D.TensorDataset(lib.arange(10.0).reshape(5, 2), lib.arange(5))
    yield "tensords", D.DataLoader(td, batch_size=2)
    yield "concat", D.DataLoader(D.ConcatDataset([td, D.Subset(td, [4, 0])]), batch_size=3)
    yield "subset_neg", D.DataLoader(D.ConcatDataset([td, td]), batch_size=4, sampler=[-1, -10, 3, 9])

bad = 0
for (n, ls), (_, lt) in zip(loaders(S), loaders(T)):
    try:
        a = [conv(b) for b in ls]; la = len(ls)
    except Exception as e:
        a = repr(e); la = None
    try:
        b = [conv(b) for b in lt]; lb = len(lt)
    except Exception as e:
        b = repr(e); lb = None
    if a != b or la != lb:
        bad += 1
        print("DIFF", n, la, lb)
        if isinstance(a, str) or isinstance(b, str):
            print("  sym", a if isinstance(a, str) else "ok", "\n  tor", b if isinstance(b, str) else "ok")
        else:
            for x, y in zip(a, b):
                if x != y:
                    print("  sym", x, "\n  tor", y); break
print("bad", bad)
# random_split fractions, lengths
for lens in ([0.3, 0.3, 0.4], [0.5, 0.5], [0.1, 0.2, 0.3, 0.4], [3, 4]):
    a = [len(s) for s in S.utils.data.random_split(list(range(7)), lens)]
    b = [len(s) for s in T.utils.data.random_split(list(range(7)), lens)]
    print("split", lens, a, b, "ok" if a == b else "DIFF")
