"""DataLoader over IterableDatasets, batch_size=None, drop_last, len(); collate edge cases."""
import collections
import numpy as np
import torch as T
import symgrad as S
T.set_default_dtype(T.float64)
def desc(x):
    if hasattr(x, "numpy"):
        return ("T", str(x.dtype).split(".")[-1], tuple(x.shape), x.numpy().tolist())
    if isinstance(x, dict):
        return (type(x).__name__, {k: desc(v) for k, v in x.items()})
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [desc(v) for v in x])
    return (type(x).__name__, x)
def run(L):
    D = L.utils.data
    class It(D.IterableDataset):
        def __init__(self, n): self.n = n
        def __iter__(self): return iter([(float(i), np.int64(i), {"a": L.tensor([i, i])}) for i in range(self.n)])
        def __len__(self): return self.n
    class NoLen(D.IterableDataset):
        def __iter__(self): return iter(range(5))
    out = {}
    for name, mk in {
        "it bs2": lambda: D.DataLoader(It(5), batch_size=2),
        "it bs2 drop": lambda: D.DataLoader(It(5), batch_size=2, drop_last=True),
        "it none": lambda: D.DataLoader(It(3), batch_size=None),
        "nolen": lambda: D.DataLoader(NoLen(), batch_size=2),
        "map none": lambda: D.DataLoader([(1, 2.0), (3, 4.0)], batch_size=None),
        "strs": lambda: D.DataLoader(["ab", "cd", "ef"], batch_size=2),
        "np scalars": lambda: D.DataLoader([np.float32(1.5), np.float32(2)], batch_size=2),
        "np bool": lambda: D.DataLoader([np.bool_(True), np.bool_(False)], batch_size=2),
        "np 0d": lambda: D.DataLoader([np.array(1.5), np.array(2.5)], batch_size=2),
        "tensors0d": lambda: D.DataLoader([L.tensor(1), L.tensor(2)], batch_size=2),
        "lists": lambda: D.DataLoader([[1, 2], [3, 4]], batch_size=2),
        "uneven lists": lambda: D.DataLoader([[1, 2], [3]], batch_size=2),
        "sampler + bs none": lambda: D.DataLoader([5, 6, 7], batch_size=None, sampler=[2, 0]),
        "subset tensor idx": lambda: D.DataLoader(D.Subset(D.TensorDataset(L.arange(6.0)), [5, 1, 3]), batch_size=2),
    }.items():
        try:
            dl = mk()
            items = [desc(b) for b in dl]
            try:
                n = len(dl)
            except TypeError as e:
                n = "TypeError"
            out[name] = (items, n)
        except Exception as e:
            out[name] = type(e).__name__
    return out
a, b = run(S), run(T)
for k in a:
    print("ok  " if a[k] == b[k] else "DIFF", k)
    if a[k] != b[k]:
        print("   sym", a[k], "\n   tor", b[k])
