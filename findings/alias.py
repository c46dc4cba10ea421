import numpy as np, symgrad as sg
from symgrad.backend.numba import pool
for N in (5, pool.MIN_BYTES // 8 + 5):
  for backend in ("numpy", "numba"):
    x = np.random.default_rng(0).random(N); y = np.random.default_rng(1).random(N)
    f = lambda x, y: np.sum(x * y)
    gx, gy = sg.grad(f, argnums=(0, 1), backend=backend)(x, y)
    print(N, backend, "grad x is y:", np.shares_memory(gx, y), np.shares_memory(gy, x))
    g2 = [0, 1]
    print("  argnums (0,0) alias:", None)
    g3 = sg.grad(lambda x: np.sum(x), backend=backend)(x)
    g4 = sg.grad(lambda x: np.sum(x), backend=backend)(x)
    print("  const grad alias across calls:", np.shares_memory(g3, g4))
    v, pb = sg.vjp(lambda x: x * 1.0, x, backend=backend) if "backend" in sg.vjp.__code__.co_varnames else sg.vjp(lambda x: x * 1.0, x)
    ct = np.ones(N)
    r = pb(ct)
    r0 = r[0] if isinstance(r, tuple) else r
    print("  vjp identity returns cotangent:", np.shares_memory(r0, ct), "value aliases x:", np.shares_memory(v, x))
    vg = sg.value_and_grad(lambda x: np.sum(x**2), backend=backend)

    h1 = sg.jit(lambda x: x.reshape(-1), backend=backend)(x)
    print("  jit reshape aliases x:", np.shares_memory(h1, x))
    h2 = sg.jit(lambda x: (x + 0.0, x * 1.0), backend=backend)(x)
    print("  jit x+0 aliases x:", np.shares_memory(h2[0], x), np.shares_memory(h2[1], x), np.shares_memory(h2[0], h2[1]))
