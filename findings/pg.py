import numpy as np, mpmath as mp
from symgrad.prims.complex_polygamma import complex_polygamma
mp.mp.dps = 30
rng = np.random.default_rng(0)
pts = []
for scale in [0.01, 1, 5, 19.9, 20.1, 30, 100, 1e4]:
    for _ in range(25):
        pts.append(complex(rng.normal()*scale, rng.normal()*scale))
pts += [0.5+0j, 0.5+1e-3j, 0.49999+20j, -5.5+19.99j, -5.5+20.01j, -0.3+1e-12j, 1e-300+0j, 25+0j, 19.5-0.2j, -19.5+40j, 0.5+200j, -100.3+1e3j]
for n in [1, 2, 3, 5]:
    worst = (0, None)
    for z in pts:
        got = complex(complex_polygamma(n, np.complex128(z)))
        want = complex(mp.polygamma(n, mp.mpc(z)))
        if not np.isfinite(want): continue
        err = abs(got - want) / abs(want)
        if not err < worst[0] and not np.isnan(err) and err < worst[0]: pass
        if not (err <= worst[0]): worst = (err, z, got, want)
    print(n, worst)
