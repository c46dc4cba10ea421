import numpy as np, scipy.special as ss, symgrad as sg, warnings
warnings.simplefilter("ignore")
vals = [0.0, -0.0, 1e-300, -1e-300, 0.5, -0.5, -2.5, 2.5, -3.0, 3.0, 30.0, -30.0, 200.0, -200.0, 800., -800., 1e10, -1e10, np.inf, -np.inf, np.nan]
Z = np.array([complex(a, b) for a in vals for b in vals])
names = ["gamma", "psi", "ndtr", "loggamma", "rgamma", "erfi", "erfcx", "dawsn", "exp1", "expi", "log_ndtr", "erf", "erfc", "spence"]
def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    eqr = (a.real == b.real) & (np.signbit(a.real) == np.signbit(b.real)) | (np.isnan(a.real) & np.isnan(b.real))
    eqi = (a.imag == b.imag) & (np.signbit(a.imag) == np.signbit(b.imag)) | (np.isnan(a.imag) & np.isnan(b.imag))
    return eqr & eqi
for dt in [np.complex128, np.complex64]:
  z = Z.astype(dt)
  for name in names:
    fn = getattr(ss, name)
    try:
        want = fn(z)
    except Exception as e:
        print(name, "scipy", e); continue
    for backend in ["numpy", "numba"]:
        try:
            got = sg.jit(lambda x: getattr(ss, name)(x), backend=backend)(z)
        except Exception as e:
            print(dt.__name__, name, backend, "ERR", type(e).__name__, str(e)[:100]); continue
        ok = same(got, want)
        if got.dtype != want.dtype: print(dt.__name__, name, backend, "dtype", got.dtype, want.dtype)
        if not ok.all():
            bad = np.nonzero(~ok)[0]
            print(dt.__name__, name, backend, len(bad), [(z[i], got[i], want[i]) for i in bad[:3]])
