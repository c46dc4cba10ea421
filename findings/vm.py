import numpy as np, mpmath as mp
from symgrad.backend import vecmath as vm
from numba import njit
mp.mp.dps = 50
def ulp_err(got, want):
    wf = float(want)
    if wf == 0 or not np.isfinite(wf): return 0.0 if got == wf else np.inf

    w = float(want)
    return abs(mp.mpf(got) - want) / np.spacing(abs(w)) if np.isfinite(got) else np.inf
fns = {
 "exp": (njit(lambda x: vm.exp(x)), lambda x: mp.exp(x)),
 "expm1": (njit(lambda x: vm.expm1(x)), lambda x: mp.expm1(x)),
 "sigmoid": (njit(lambda x: vm.sigmoid(x)), lambda x: 1/(1+mp.exp(-x))),
 "softplus": (njit(lambda x: vm.softplus(x)), lambda x: mp.log1p(mp.exp(x))),
 "tanh": (njit(lambda x: vm.tanh(x)), lambda x: mp.tanh(x)),
 "sech2": (njit(lambda x: vm.tanh_sech2(x)[1]), lambda x: mp.sech(x)**2),
}
rng = np.random.default_rng(0)
pts = [0.0, -0.0, 5e-324, -5e-324, 1e-300, -1e-300, 1e-17, -1e-17, 1e-8, 0.34657359, -0.34657359, 0.5, 1.0, -1.0, 18.0, 19.0, 20.0, -29.99, -30.0, -30.01, -36.5147, 36.04, 37.0, 38.0, 38.01, 39.0, 40.0, -40.0, -40.01, 354.0, 355.0, 380., 381., -700.0, -708.39, -708.4, -709.0, -744.4, -745.0, -745.13, -745.14, -746.0, 709.0, 709.78, 709.79, 710.0, 1e10, -1e10]
pts += list(rng.uniform(-750, 710, 300)) + list(rng.uniform(-45, 45, 300)) + list(10**rng.uniform(-20, 0, 100) * rng.choice([-1,1],100))
for name, (f, mf) in fns.items():
    worst = (0, None)
    for x in pts:
        got = f(x)
        want = mf(mp.mpf(x))
        if np.isnan(got) : 
            print(name, x, "nan"); continue
        e = ulp_err(got, want)
        if e > worst[0]: worst = (e, x, got, float(want))
    print(name, worst)
    for x in [0.0, -0.0, np.inf, -np.inf, np.nan]:
        print("   ", x, f(x), end="")
    print()
