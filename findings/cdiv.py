import numpy as np, symgrad as sg, warnings
warnings.simplefilter("ignore")
vals = [0.0, -0.0, 1.0, -1.0, 1e-310, 1e300, -1e300, 1e-300, 3.0, np.inf, -np.inf, np.nan]
Z = np.array([complex(a, b) for a in vals for b in vals])
A, B = np.meshgrid(Z, Z)
A, B = A.ravel(), B.ravel()
def same(a, b):
    eqr = (a.real == b.real) & (np.signbit(a.real) == np.signbit(b.real)) | (np.isnan(a.real) & np.isnan(b.real))
    eqi = (a.imag == b.imag) & (np.signbit(a.imag) == np.signbit(b.imag)) | (np.isnan(a.imag) & np.isnan(b.imag))
    return eqr & eqi
for dt in (np.complex128, np.complex64):
    a, b = A.astype(dt), B.astype(dt)
    want = a / b
    for name, f, w in [("div", lambda x, y: x / y, want), ("rdiv_scalar", lambda x, y: 2.5 / y, 2.5 / b), ("div_real", lambda x, y: x / y.real, a / b.real), ("reciprocal", lambda x, y: np.reciprocal(y), np.reciprocal(b)), ("c/(-0j)", lambda x, y: x / complex(0, -0.0), a / complex(0, -0.0)), ("power-1", lambda x, y: y ** -1, b ** -1), ("true_divide_ints", lambda x, y: x / 3, a / 3)]:
        for backend in ("numpy", "numba"):
            got = sg.jit(f, backend=backend)(a, b)
            ok = same(got, w)
            if got.dtype != w.dtype: print(dt.__name__, name, backend, "dtype", got.dtype, w.dtype)
            if not ok.all():
                bad = np.nonzero(~ok)[0]
                print(dt.__name__, name, backend, len(bad), [(a[i], b[i], got[i], w[i]) for i in bad[:3]])
