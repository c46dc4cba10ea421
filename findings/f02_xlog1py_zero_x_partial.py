"""xlog1py(x, y) has d/dx = log1p(y) everywhere, also at x == 0 (JAX: log1p(y)); symgrad's
composite is where(x == 0, 0, x*log1p(y)), whose x-partial is 0 at x == 0. So
sg.scipy.stats.beta.logpdf(x, a, b=1) (and pdf) has a silently wrong d/db: the term
(b-1)*log1p(-x) drops out. xlogy is right (its own primitive).
Cause guess: symgrad/numpy_api/scipy_special.py _xlog1py and scipy_stats.py _xlog1py
(the outer where(zero, 0.0, ...) zeroes the x cotangent; only the y operand needs guarding)."""
import sys
import numpy as np
import scipy.special as ss
import scipy.stats as st
import jax
import jax.scipy.special as js
import symgrad as sg

jax.config.update("jax_enable_x64", True)
bad = False
for be in ["interpreter", "numba"]:
    g = sg.grad(ss.xlog1py, argnums=0, backend=be)(0.0, 2.0)
    ref = float(jax.grad(js.xlog1py, argnums=0)(0.0, 2.0))
    print(be, "d xlog1py/dx at (0, 2): symgrad", g, "jax", ref, "log1p(2) =", np.log1p(2.0))
    bad |= not np.isclose(g, ref)
    x, a, b, h = 0.3, 2.0, 1.0, 1e-6
    g = sg.grad(lambda b: sg.scipy.stats.beta.logpdf(x, a, b), backend=be)(b)
    fd = (st.beta.logpdf(x, a, b + h) - st.beta.logpdf(x, a, b - h)) / (2 * h)
    print(be, "d beta.logpdf(0.3, 2, b)/db at b=1: symgrad", g, "finite diff of scipy", fd)
    bad |= not np.isclose(g, fd, rtol=1e-6)
sys.exit(1 if bad else 0)
