"""sg.scipy.stats.multivariate_normal.logpdf(x, mean, cov) with a scalar mean and cov and a
1-d x: scipy takes the dimension from mean (a scalar: dimension 1), so x of shape (3,) is
three 1-d points and the result has shape (3,); symgrad takes x as one 3-d point and
returns one number (-3.909 against scipy's [-1.306, -1.276, -1.328]). Silent wrong shape
and value (and gradient).
Cause guess: symgrad/numpy_api/scipy_stats.py multivariate_normal: the dimension is read
from x's last axis rather than from mean/cov (scipy's _process_parameters)."""
import sys
import numpy as np
import scipy.stats as st
import symgrad as sg

x = np.array([0.1, 0.7, 1.0])
bad = False
for be in ["interpreter", "numba"]:
    got = sg.jit(lambda x: sg.scipy.stats.multivariate_normal.logpdf(x, 0.5, 2.0), backend=be)(x)
    ref = st.multivariate_normal.logpdf(x, 0.5, 2.0)
    print(be, "symgrad", got, "scipy", ref)
    bad |= np.shape(got) != np.shape(ref) or not np.allclose(got, ref)
sys.exit(1 if bad else 0)
