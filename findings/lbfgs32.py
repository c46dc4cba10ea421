"""LBFGS strong_wolfe float32: is symgrad's gap to torch32 the size of torch32's gap to torch64?"""
import numpy as np
import torch as T
import symgrad as S
from optim1 import run
kw = dict(lr=0.5, max_iter=7, history_size=3, line_search_fn="strong_wolfe")
for steps in (1, 2, 3):
    s32 = run(S, "LBFGS", kw, "float32", steps); t32 = run(T, "LBFGS", kw, "float32", steps)
    t64 = run(T, "LBFGS", kw, "float64", steps); s64 = run(S, "LBFGS", kw, "float64", steps)
    d = lambda a, b: max(float(np.max(np.abs(u - v))) for u, v in zip(a, b))
    print(steps, "s32-t32 %.2e  t32-t64 %.2e  s32-t64 %.2e  s64-t64 %.2e" % (d(s32, t32), d(t32, t64), d(s32, t64), d(s64, t64)))
