import numpy as np, symgrad as sg, math
x = np.array([1.0, 2.0])
G = 0.0
def f(x): return np.sum(x * math.copysign(1.0, G))
def f2(x): return np.sum(x * math.atan2(G, -1.0))
def f3(x): return np.sum(np.arctan2(G, -x))
S = np.float64(0.0)
def f4(x): return np.sum(x * math.copysign(1.0, S))
for fn in (f, f2, f3, f4):
    for backend in ("numpy", "numba"):
        for tr in ("jit", "grad"):
            G = 0.0; S = np.float64(0.0)
            t = (sg.jit if tr == "jit" else sg.grad)(fn, backend=backend)
            a = t(x)
            G = -0.0; S = np.float64(-0.0)
            b = t(x)
            want = fn(x) if tr == "jit" else sg.grad(fn, backend="numpy")(x)
            print(fn.__name__, backend, tr, a, b, "want", want, "OK" if np.array_equal(b, want) else "WRONG")
