import numpy as np, symgrad as sg, sys
from symgrad.backend.numba import pool
N = pool.MIN_BYTES // 8 + 5
rng = np.random.default_rng(0)
def f(x, y):
    return np.sum(np.sin(x) * np.cos(y))
g = sg.grad(f, argnums=(0, 1)); o = sg.grad(f, argnums=(0, 1), backend="numpy")
x, y = rng.random(N), rng.random(N)
for _ in range(3):
    gx, gy = g(x, y)
    print("distinct", gx.__array_interface__['data'][0] != gy.__array_interface__['data'][0], sys.getrefcount(gx))
    ox, oy = o(x, y)
    print(np.max(abs(gx-ox)), np.max(abs(gy-oy)))
    del gx, gy
# aliasing: same gradient value for both
def h(x, y):
    return np.sum(3.0 * x + 3.0 * y)
g2 = sg.grad(h, argnums=(0, 1))
a, b = g2(x, y)
print("alias h", a is b, np.shares_memory(a, b))
a += 1
print(b[:3])
# value_and_grad with output array
def k(x):
    return np.sin(x)
vg = sg.vjp(k, x)
yv, pb = vg
c1 = pb(np.ones(N))
c2 = pb(np.ones(N)*2)
print("vjp", np.shares_memory(c1[0] if isinstance(c1, tuple) else c1, c2[0] if isinstance(c2, tuple) else c2))
j = sg.jit(lambda x: (np.sin(x), np.sin(x)))
p, q = j(x)
print("jit dup outputs alias", np.shares_memory(p, q))
j2 = sg.jit(lambda x: (x*2, x))
p, q = j2(x)
print("jit returns input", q is x, np.shares_memory(q, x))
q[0] = 123.; print(x[0])
