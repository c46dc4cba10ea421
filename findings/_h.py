"""Tiny harness: run prog(lib) with symgrad and torch, compare every returned number."""
import sys
import numpy as np
import torch as T
import symgrad as S

def to_np(x):
    if isinstance(x, (list, tuple)):
        return [to_np(v) for v in x]
    if x is None:
        return np.array("None")
    if hasattr(x, "detach"):
        x = x.detach()
    if hasattr(x, "numpy"):
        return np.asarray(x.numpy())
    return np.asarray(x)

def flat(x):
    if isinstance(x, list):
        out = []
        for v in x:
            out += flat(v)
        return out
    return [x]

def compare(name, prog, dtype="float64", quiet=False):
    tol = 1e-10 if dtype == "float64" else 1e-5
    try:
        a = flat(to_np(prog(S, getattr(S, dtype))))
    except Exception as e:  # noqa
        a = "error"; aerr = f"{type(e).__name__}: {str(e)[:200]}"
    try:
        b = flat(to_np(prog(T, getattr(T, dtype))))
    except Exception as e:  # noqa
        print(f"[{name}] torch ERROR too ({type(e).__name__})" if a == "error" else f"[{name}] torch ERROR: {str(e)[:100]}")
        return "ok"
    if a == "error":
        print(f"[{name}] symgrad ERROR (torch computes): {aerr}"); return "error"
    bad = False
    for i, (x, y) in enumerate(zip(a, b)):
        x = np.asarray(x); y = np.asarray(y)
        if x.dtype.kind in "US" or y.dtype.kind in "US":
            if not np.array_equal(x, y): print(f"[{name}] out{i} {x} vs torch {y}"); bad = True
            continue
        if x.shape != y.shape:
            print(f"[{name}] out{i} shape {x.shape} vs torch {y.shape}"); bad = True; continue
        if x.dtype.kind in "iub" or y.dtype.kind in "iub":
            ok = np.array_equal(x, y)
        else:
            d = np.abs(x.astype(np.float64) - y.astype(np.float64))
            ok = np.all(np.isclose(x, y, rtol=tol, atol=tol, equal_nan=True))
        if not ok:
            bad = True
            print(f"[{name}] out{i} MISMATCH\n symgrad={x.ravel()[:8]}\n torch  ={y.ravel()[:8]}")
    if len(a) != len(b):
        print(f"[{name}] count {len(a)} vs {len(b)}"); bad = True
    if not bad and not quiet:
        print(f"[{name}] ok")
    return "bad" if bad else "ok"

def main(cases):
    res = {n: compare(n, p, d) for n, p, d in cases}
    sys.exit(1 if any(v == "bad" for v in res.values()) else 0)
