import numpy as np, torch, symgrad as sgt, itertools
torch.set_default_dtype(torch.float64)
bad = 0
for dtn in ["uint8", "int8", "int16", "int32", "int64"]:
    a = np.array([100, 7, 0, 200, 13, 255, 1]) if dtn == "uint8" else np.array([100, -7, 0, -128, 13, 127, -1])
    for other in [300, -3, 2, -1, 1000, -129, 256, ("0d", -3), ("0d", 300), ("0d32", 70000), ("t8", [3, -2, 5, 7, -1, 2, 9])]:
        for mode in ("floor", "trunc"):
            res = []
            for L in (torch, sgt):
                x = L.tensor(a, dtype=getattr(L, dtn))
                o = other if not isinstance(other, tuple) else (L.tensor(other[1]) if other[0] == "0d" else L.tensor(other[1], dtype=L.int32) if other[0] == "0d32" else L.tensor(other[1], dtype=L.int8))
                try:
                    r = x.div(o, rounding_mode=mode); r2 = L.div(x, o, rounding_mode=mode)
                    y = x.clone(); y.div_(o, rounding_mode=mode)
                    res.append([(str(v.dtype), v.tolist()) for v in (r, r2, y)])
                except Exception as e:
                    res.append(type(e).__name__)
            if res[0] != res[1]:
                bad += 1; print(dtn, other, mode, res[0], res[1])
print("bad", bad)
