"""np.median / np.quantile / np.percentile of a traced array that holds a NaN return a number
where numpy (and JAX) return nan: the NaN sorts last and the position q*(n-1) picks a finite
element. np.median([1, nan, 2]) is 2.0 in symgrad, nan in numpy; median along axis=1 of a
row with a NaN is 3.5 instead of nan. (quantile .9 happens to pick the NaN.)
Cause guess: symgrad/numpy_api/quantiles.py _quantile (nan=False path): no
`where(any(isnan(row)), nan, result)` as numpy/JAX do."""
import sys
import numpy as np
import symgrad as sg

x = np.array([1.0, np.nan, 2.0])
X = np.array([[1.0, np.nan, 2.0, 5.0], [3.0, 1.0, 2.0, 0.0]])
cases = [("median", np.median, x), ("median axis=1", lambda a: np.median(a, axis=1), X),
         ("quantile 0.1 lower", lambda a: np.quantile(a, 0.1, method="lower"), x),
         ("percentile 0", lambda a: np.percentile(a, 0), x)]
bad = False
for be in ["interpreter", "numba"]:
    for name, f, a in cases:
        got, ref = sg.jit(f, backend=be)(a), f(a)
        print(be, name, "symgrad", got, "numpy", ref)
        bad |= not np.array_equal(np.asarray(got), np.asarray(ref), equal_nan=True)
sys.exit(1 if bad else 0)
