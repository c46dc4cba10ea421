import numpy as np, scipy.special as ss, symgrad as sg, warnings
warnings.simplefilter("ignore")
Z = np.array([1.5+0.5j, -2.5+1e-9j, -2.5-1e-9j, -2.5+0j, -2.5-0j, 3-2j, 0.2-3j, -0.3+1.2j, 30+5j, -30.5+0.1j, 1e-8+1e-8j, 0j, -1+0j, 8+1j, 700+1j, -700+1j])
for name in ["gamma", "psi", "ndtr", "loggamma", "rgamma", "erfi", "erfcx", "dawsn", "exp1", "expi", "erf", "erfc"]:
    f = lambda z: np.sum(np.abs(getattr(ss, name)(z)) ** 2 + np.real(getattr(ss, name)(z) * (1 - 2j)))
    gs = [sg.grad(f, backend=b)(Z) for b in ("numpy", "numba")]
    # holomorphic derivative via jacfwd? use vjp of complex output
    h = lambda z: getattr(ss, name)(z) * (1 + 0j)
    d = []
    for b in ("numpy", "numba"):
        y, pb = sg.vjp(h, Z, backend=b) if False else (None, None)
    eq = np.array_equal(gs[0], gs[1], equal_nan=True)
    rel = np.nanmax(np.abs(gs[0] - gs[1]) / np.maximum(np.abs(gs[0]), 1e-300))
    # finite differences (JAX convention df/dx - i df/dy)
    eps = 1e-7
    fd = np.array([(f(Z + eps * (np.arange(len(Z)) == k)) - f(Z - eps * (np.arange(len(Z)) == k))) / (2 * eps) - 1j * (f(Z + 1j * eps * (np.arange(len(Z)) == k)) - f(Z - 1j * eps * (np.arange(len(Z)) == k))) / (2 * eps) for k in range(len(Z))])
    err = np.abs(gs[0] - fd) / np.maximum(np.abs(fd), 1)
    bad = [(Z[k], gs[0][k], fd[k]) for k in range(len(Z)) if np.isfinite(fd[k]) and not err[k] < 1e-5]
    print(name, "numpy==numba bits:", eq, "max rel", rel, "fd bad:", bad[:3])
