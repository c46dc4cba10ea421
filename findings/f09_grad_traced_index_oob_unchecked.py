"""The gradient of x[i] / take_along_axis with an out-of-range traced index: the interpreter
raises IndexError (as the forward does on both backends), the Numba kernel returns a
gradient silently (zeros here) -- the scatter-add of the cotangent writes at an unchecked
position (out of the array: this script ends with glibc "corrupted size vs. prev_size", a heap corruption).
Cause: symgrad/backend/numba/lowering/sorting.py _scatter_along_emit (the adjoint of
take_along) indexes `out[int(idx[j])] += g[j]` with no bounds check, where
_take_along_emit raises IndexError("take_along: index out of bounds"); the grad graph
never runs the forward gather, so nothing checks."""
import sys
import numpy as np
import symgrad as sg

x = np.array([0.3, 2.0, -1.0, 0.5])
bad = False
cases = [("a[argmax(a) + 10]", lambda a: a[np.argmax(a) + 10] * 2),
         ("a[argmax(a) - 6]", lambda a: a[np.argmax(a) - 6] * 2),
         ("take_along_axis(a, argsort(a) + 2)", lambda a: np.sum(np.take_along_axis(a, np.argsort(a) + 2, axis=0)))]
for be in ["interpreter", "numba"]:
    for name, f in cases:
        try:
            g = sg.grad(f, backend=be)(x)
            print(be, name, "gradient returned:", g, "(numpy raises IndexError on the forward)")
            bad = True
        except IndexError as e:
            print(be, name, "IndexError:", e)
sys.exit(1 if bad else 0)
