import numpy as np, torch, symgrad as sgt
rng = np.random.default_rng(0)
bad = []
for dt, tdt in [(np.float32, "float32"), (np.float64, "float64")]:
    for n in [1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 67, 1000, 1003]:
        a = rng.standard_normal(n).astype(dt); b = rng.standard_normal(n).astype(dt)
        for alpha in [0.1, 3, -2.7, 1/3]:
            for op in ["add", "sub"]:
                for other_kind in ["tensor", "float", "int", "0d64", "0d32", "0d_same"]:
                    def other(L):
                        return {"tensor": lambda: L.tensor(b), "float": lambda: 1.7, "int": lambda: 3,
                                "0d64": lambda: L.tensor(1.7, dtype=L.float64), "0d32": lambda: L.tensor(1.7, dtype=L.float32), "0d_same": lambda: L.tensor(b[0])}[other_kind]()
                    t = getattr(torch, op)(torch.tensor(a), other(torch), alpha=alpha)
                    s = getattr(sgt, op)(sgt.tensor(a), other(sgt), alpha=alpha)
                    tm = getattr(torch.tensor(a), op)(other(torch), alpha=alpha); sm = getattr(sgt.tensor(a), op)(other(sgt), alpha=alpha)
                    ti = torch.tensor(a); getattr(ti, op + "_")(other(torch), alpha=alpha)
                    si = sgt.tensor(a); getattr(si, op + "_")(other(sgt), alpha=alpha)
                    for kind, (x, y) in {"fn": (t, s), "method": (tm, sm), "inplace": (ti, si)}.items():
                        x, y = x.numpy(), y.detach().numpy()
                        if x.dtype != y.dtype or not np.array_equal(x, y):
                            bad.append((tdt, n, alpha, op, other_kind, kind, str(y.dtype), int(np.sum(x != y))))
import collections
print(len(bad)); print(collections.Counter((b[0], b[4], b[5]) for b in bad)); print(bad[:10])
