"""BatchNorm / InstanceNorm with momentum=None (cumulative average) vs PyTorch."""
import numpy as np
import torch as T
import symgrad as S
from common import cmp, sd_copy
T.set_default_dtype(T.float64)
rng = np.random.default_rng(0)
for cls, shape in (("BatchNorm1d", (5, 3)), ("InstanceNorm1d", (2, 3, 6)), ("BatchNorm2d", (2, 3, 4, 4))):
    kw = dict(momentum=None, track_running_stats=True) if "Instance" in cls else dict(momentum=None)
    try:
        sm = getattr(S.nn, cls)(3, **kw)
    except Exception as e:
        print("refused", cls, type(e).__name__, e); continue
    tm = getattr(T.nn, cls)(3, **kw); sd_copy(tm, sm)
    for step in range(4):
        x = rng.standard_normal(shape) * (step + 1) + step
        sm(S.tensor(x)); tm(T.tensor(x))
    cmp(f"{cls} running_mean", sm.running_mean, tm.running_mean)
    cmp(f"{cls} running_var", sm.running_var, tm.running_var)
    print("  num_batches_tracked", sm.num_batches_tracked.item() if hasattr(sm, "num_batches_tracked") else None, tm.num_batches_tracked.item())
