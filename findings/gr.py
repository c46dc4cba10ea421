import numpy as np, scipy.special as ss, symgrad as sg, mpmath as mp, warnings
warnings.simplefilter("ignore")
mp.mp.dps = 40
def mpf_ndtr(x): return mp.erfc(-x/mp.sqrt(2))/2
cases = {
 "log_ndtr": (lambda x: ss.log_ndtr(x), lambda x: mp.log(mpf_ndtr(x)), [-1e5, -300., -40., -20., -10., -5., -1., 0., 1., 5., 8., 10., 20., 37., 40., 1e5]),
 "spence": (lambda x: ss.spence(x), lambda x: mp.polylog(2, 1-x), [0.0, 1e-300, 1e-10, 0.5, 0.75, 0.999999, 1.0, 1.000001, 1.25, 2., 10., 1e10, 1e300]),
 "exp1": (lambda x: ss.exp1(x), lambda x: mp.e1(x), [1e-300, 1e-10, 0.5, 1., 50., 700., 740., 1e10]),
 "expi": (lambda x: ss.expi(x), lambda x: mp.ei(x), [-1e10, -740., -700., -50., -1., -1e-10, 1e-300, 1e-10, 0.3725, 1., 50., 700., 709.5, 715.]),
 "erfcx": (lambda x: ss.erfcx(x), lambda x: mp.exp(x*x)*mp.erfc(x), [-27., -26., -10., -1., 0., 1., 6.9, 7.1, 50., 1e5, 1e160, 1e300]),
 "dawsn": (lambda x: ss.dawsn(x), lambda x: mp.sqrt(mp.pi)/2*mp.exp(-x*x)*mp.erfi(x), [-1e300, -1e5, -7.1, -6.9, 0., 1e-300, 0.9241388730, 3., 6.9, 7.1, 100., 1e10, 1e160]),
 "erfi": (lambda x: ss.erfi(x), lambda x: mp.erfi(x), [-26., -1., 0., 1e-300, 1., 26.6, 27.]),
 "loggamma": (lambda x: ss.loggamma(x), lambda x: mp.loggamma(x), [1e-300, 1e-10, 0.5, 1., 2., 1e5, 1e300]),
 "rgamma": (lambda x: ss.rgamma(x), lambda x: mp.rgamma(x), [-1e5 - 0.5, -171.5, -3.0, -2.0 + 1e-9, -0.5, 0., 1e-300, 0.5, 1., 171.5, 1e5]),
}
for v in [0.0, 1.0, 2.5, -1.5, 30.0]:
    cases[f"iv{v}"] = (lambda x, v=v: ss.iv(v, x), lambda x, v=v: mp.besseli(v, x), [0.0, 1e-300, 1e-5, 1., 30., 700., 720.])
    cases[f"ive{v}"] = (lambda x, v=v: ss.ive(v, x), lambda x, v=v: mp.besseli(v, x)*mp.exp(-abs(x)), [-50., -1., 0., 1e-300, 1e-5, 1., 30., 700., 720., 1e6])
    cases[f"kv{v}"] = (lambda x, v=v: ss.kv(v, x), lambda x, v=v: mp.besselk(v, x), [1e-300, 1e-5, 1., 30., 700., 720.])
    cases[f"kve{v}"] = (lambda x, v=v: ss.kve(v, x), lambda x, v=v: mp.besselk(v, x)*mp.exp(x), [1e-300, 1e-100, 1e-5, 1., 30., 720., 1e6])
    cases[f"jv{v}"] = (lambda x, v=v: ss.jv(v, x), lambda x, v=v: mp.besselj(v, x), [-10., -1., 0., 1e-300, 1e-5, 1., 30., 1e4])
    cases[f"yv{v}"] = (lambda x, v=v: ss.yv(v, x), lambda x, v=v: mp.bessely(v, x), [1e-300, 1e-5, 1., 30., 1e4])
for name, (f, mf, pts) in cases.items():
    x = np.array(pts, dtype=float)
    for backend in ["numpy", "numba"]:
        try:
            g = sg.grad(lambda x: np.sum(f(x)), backend=backend)(x)
        except Exception as e:
            print(name, backend, "ERR", type(e).__name__, str(e)[:150]); break
        for xi, gi in zip(pts, g):
            try:
                want = mp.diff(mf, mp.mpf(xi))
                want = float(want.real) if isinstance(want, mp.mpc) and abs(want.imag) < 1e-30*abs(want) else (complex(want) if isinstance(want, mp.mpc) else float(want))
            except Exception as e:
                want = None
            if want is None or isinstance(want, complex): continue
            if np.isfinite(want) and np.isfinite(gi):
                err = abs(gi - want) / max(abs(want), 1e-300)
                if err > 1e-10: print(name, backend, xi, gi, want, "rel", err)
            elif not (np.isnan(gi) and np.isnan(want)) and gi != want:
                if abs(want) < 1e300 or np.isfinite(gi) : print(name, backend, xi, gi, want, "nonfinite")
