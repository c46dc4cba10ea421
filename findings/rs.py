import numpy as np, scipy.special as ss, symgrad as sg, warnings
warnings.simplefilter("ignore")
vals = np.array([0.0, -0.0, 1e-310, -1e-310, 1e-8, 0.5, -0.5, 1., -1., -2.5, 2.5, -3.0, 3.0, 7.0, -7.0, 30.0, -30.0, 39., -39, 200.0, -200.0, 710., -710., 800., -800., 1e10, -1e10, np.inf, -np.inf, np.nan])
names1 = ["gamma", "psi", "ndtr", "loggamma", "rgamma", "erfi", "erfcx", "dawsn", "exp1", "expi", "log_ndtr", "erf", "erfc", "spence", "gammaln", "ndtri", "expit", "log_expit", "i0", "i1", "i0e", "i1e", "k0", "k1", "k0e","k1e", "entr", "erfinv", "erfcinv"]
def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return (a == b) & (np.signbit(a) == np.signbit(b)) | (np.isnan(a) & np.isnan(b))
for dt in [np.float64, np.float32]:
  x = vals.astype(dt)
  for name in names1:
    fn = getattr(ss, name)
    want = fn(x)
    for backend in ["numpy", "numba"]:
        try:
            got = sg.jit(lambda x: getattr(ss, name)(x), backend=backend)(x)
        except Exception as e:
            print(dt.__name__, name, backend, "ERR", type(e).__name__, str(e)[:100]); continue
        ok = same(got, want)
        if got.dtype != want.dtype: print(dt.__name__, name, backend, "dtype", got.dtype, want.dtype)
        if not ok.all():
            bad = np.nonzero(~ok)[0]
            print(dt.__name__, name, backend, len(bad), [(x[i], got[i], want[i]) for i in bad[:4]])
  for name in ["iv", "ive", "kv", "kve", "jv", "yv"]:
    fn = getattr(ss, name)
    for v in [0.0, 1.0, -1.5, 2.5, 40.0, -3.0]:
        want = fn(dt(v), x)
        for backend in ["numpy", "numba"]:
            try:
                got = sg.jit(lambda x: getattr(ss, name)(v, x), backend=backend)(x)
            except Exception as e:
                print(dt.__name__, name, v, backend, "ERR", type(e).__name__, str(e)[:100]); continue
            ok = same(got, want)
            if got.dtype != want.dtype: print(dt.__name__, name, backend, "dtype", got.dtype, want.dtype)
            if not ok.all():
                bad = np.nonzero(~ok)[0]
                print(dt.__name__, name, v, backend, len(bad), [(x[i], got[i], want[i]) for i in bad[:4]])
