"""sg.scipy.stats.t.logpdf (and binom.logpmf at huge n: 4.0 off at n=1e15, k=10) loses all accuracy as df grows: gammaln((df+1)/2) - gammaln(df/2)
cancels. At df = 1e15 the log-density is +1.91 (scipy and mpmath: -1.1639); at df = 1e8 the
value is off by 1e-8 relative and d/ddf by a factor 25 (1.1e-15 against 4.3e-17).
(JAX's jax.scipy.stats.t.logpdf has the same cancellation; scipy's is right.)
Cause guess: symgrad/numpy_api/scipy_stats.py t.logpdf: the normalizing constant as a
difference of gammaln; scipy uses an asymptotic form for large df (or write it with
betaln(df/2, 1/2), whose large-argument form cancels analytically)."""
import sys
import numpy as np
import scipy.stats as st
import mpmath as mp
import symgrad as sg

mp.mp.dps = 50


def ref(x, n):
    x, n = mp.mpf(x), mp.mpf(n)
    return float(mp.loggamma((n + 1) / 2) - mp.loggamma(n / 2) - mp.log(mp.sqrt(n * mp.pi))
                 - (n + 1) / 2 * mp.log1p(x * x / n))


bad = False
for be in ["interpreter", "numba"]:
    for df in [1e8, 1e15]:
        v = sg.jit(lambda x, d: sg.scipy.stats.t.logpdf(x, d), backend=be)(0.7, df)
        r = ref(0.7, df)
        print(f"{be} df={df:g}: symgrad {v!r}  scipy {st.t.logpdf(0.7, df)!r}  mpmath {r!r}")
        bad |= not np.isclose(v, r, rtol=1e-12)
# the same cancellation in binom.logpmf (gammaln(n+1) - gammaln(n-k+1)) at n = 1e15:
ks = np.array([0.0, 1.0, 3.0, 10.0])
for be in ["interpreter", "numba"]:
    v = sg.jit(lambda k: sg.scipy.stats.binom.logpmf(k, 1e15, 3e-15), backend=be)(ks)
    r = st.binom.logpmf(ks, 1e15, 3e-15)
    print(f"{be} binom.logpmf(k, 1e15, 3e-15): symgrad {v}  scipy {r}")
    bad |= not np.allclose(v, r, rtol=1e-9)
sys.exit(1 if bad else 0)
