import numpy as np, symgrad as sg
xi = np.array([1, 2, 3]); xb = np.array([True, False, True]); xf = np.array([1.5, 2.5])
G = 2
def f(x): return x * G
def fdiv(x): return x // G
def fb(x): return x + G
def fp(x): return np.sum(x ** G)
cases = [(f, xi, 2, 2.0), (fdiv, xf, 2, 2.0), (fb, xb, True, 1), (fb, xi, 2, 2.0), (f, xi, True, 1), (fp, xf, 2, 2.0), (f, xf.astype(np.float32), 2.0, np.float64(2.0)), (f, xf.astype(np.float32), np.float32(2.0), 2.0), (f, xi, 3, np.int64(3)), (fb, xb, 1, True)]
for fn, x, g0, g1 in cases:
    for backend in ("numpy", "numba"):
        G = g0
        t = sg.jit(fn, backend=backend)
        try:
            a = t(x)
        except Exception as e:
            print(fn.__name__, "first ERR", e); continue
        G = g1
        try:
            b = np.asarray(t(x))
        except Exception as e:
            print(fn.__name__, "ERR", type(e).__name__, str(e)[:80]); continue
        want = np.asarray(fn(x))
        ok = b.dtype == want.dtype and np.array_equal(b, want)
        print(fn.__name__, x.dtype, repr(g0), "->", repr(g1), backend, b, b.dtype, "want", want, want.dtype, "OK" if ok else "WRONG")
