"""An np.matrix argument is traced as a plain array, so `a * b` and `a ** 2` are elementwise
where numpy (the same function, called without symgrad) computes matrix products: silent
wrong values and gradients. numpy.ma masked arrays are refused with a clear TypeError;
np.matrix (whose operators mean something else) is not.
Cause guess: argument conversion in symgrad/transforms (where the numpy.ma refusal lives)."""
import sys
import numpy as np
import symgrad as sg

m = np.matrix([[1.0, 2.0], [3.0, 4.0]])
bad = False
for be in ["interpreter", "numba"]:
    for name, f in [("a * b", lambda a, b: a * b), ("a ** 2", lambda a, b: a ** 2)]:
        try:
            got = sg.jit(f, backend=be)(m, m)
        except TypeError as e:
            print(be, name, "refused:", e)
            continue
        ref = f(m, m)
        print(be, name, "symgrad", np.asarray(got).tolist(), "numpy", np.asarray(ref).tolist())
        bad |= not np.allclose(got, ref)
sys.exit(1 if bad else 0)
