"""Shared helpers for the review's probes: run under symgrad and torch, compare."""
import numpy as np
import torch as T
import symgrad as S


def to_s(t, dtype=None):
    return S.tensor(t.detach().numpy().copy(), dtype=dtype, requires_grad=t.requires_grad)


def sd_copy(tm, sm):
    sd = {k: S.tensor(v.detach().numpy().copy()) for k, v in tm.state_dict().items()}
    sm.load_state_dict(sd)


def cmp(name, a, b, rtol=1e-9, atol=1e-12):
    a = a.detach().numpy() if hasattr(a, "detach") and not isinstance(a, S.Tensor) else a
    if isinstance(a, S.Tensor):
        a = a.detach().numpy()
    if isinstance(b, S.Tensor):
        b = b.detach().numpy()
    elif hasattr(b, "detach"):
        b = b.detach().numpy()
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        print(f"FAIL {name}: shape {a.shape} vs {b.shape}")
        return False
    if a.dtype != b.dtype:
        print(f"DTYPE {name}: {a.dtype} vs {b.dtype}")
    ok = np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
    err = np.max(np.abs(a.astype(float) - b.astype(float))) if a.size else 0
    print(f"{'ok  ' if ok else 'FAIL'} {name}: maxerr {err:.3g}")
    return ok
