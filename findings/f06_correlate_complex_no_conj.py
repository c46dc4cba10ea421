"""np.correlate of complex traced arrays does not conjugate v: numpy computes
c[k] = sum_n a[n+k] * conj(v[n]); symgrad sum_n a[n+k] * v[n]. Silent wrong values (and
gradients) for every mode. (np.convolve is right.)
Cause guess: symgrad/numpy_api/signals.py correlate: `_full(a, _reversed(v))` needs
conj(v) (and the swapped branch for a longer v: numpy returns conj of the reversed result)
-- or refuse complex operands."""
import sys
import numpy as np
import symgrad as sg

a = np.array([1 + 2j, 3 - 1j, 0.5j])
v = np.array([2 - 1j, 1j])
bad = False
for be in ["interpreter", "numba"]:
    for mode in ["valid", "same", "full"]:
        got = sg.jit(lambda a, v: np.correlate(a, v, mode), backend=be)(a, v)
        ref = np.correlate(a, v, mode)
        print(be, mode, "symgrad", got, "numpy", ref)
        bad |= not np.allclose(got, ref)
    got = sg.jit(lambda a, v: np.correlate(a, v, "full"), backend=be)(v, a)   # longer second
    print(be, "full, longer v: symgrad", got, "numpy", np.correlate(v, a, "full"))
    bad |= not np.allclose(got, np.correlate(v, a, "full"))
sys.exit(1 if bad else 0)
