"""NAdam/ASGD float64 gap: torch default dtype float32 vs float64 (scalar state dtype)."""
import sys
import numpy as np
import torch as T
import symgrad as S
sys.argv += []
from optim1 import run
for default in (T.float32, T.float64):
    T.set_default_dtype(default)
    for name, kw in [("NAdam", dict(lr=0.05, maximize=True)), ("ASGD", dict(lr=0.05, t0=2, maximize=True)),
                     ("ASGD", dict(lr=0.05, t0=2)), ("ASGD", dict(lr=0.05, t0=2, lambd=0.1))]:
        a = run(S, name, kw, "float64", 8); b = run(T, name, kw, "float64", 8)
        print(default, name, kw, [float(np.max(np.abs(u - v) / np.abs(v))) for u, v in zip(a, b)])
