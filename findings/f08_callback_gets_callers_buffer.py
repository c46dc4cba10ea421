"""sg.pure_callback hands the callback the caller's own array (writable), so a callback that
writes into its argument silently changes the user's input array and the rest of the
traced function (`+ x` after it sees 99, not 0.5). JAX passes read-only copies
(`ValueError: assignment destination is read-only`). Also a callback returning complex
values for a float64 declaration is silently cast (imaginary part dropped, [0, 0, 0] here)
where JAX refuses a dtype mismatch.
Cause guess: symgrad/prims/custom.py callback impl (pass np.array(a, copy=...) with
writeable=False, and check np.iscomplexobj(result) against a real declaration)."""
import sys
import numpy as np
import symgrad as sg

SD = sg.ShapeDtypeStruct
bad = False


def scribble(a):
    a[0] = 99.0
    return a


for be in ["interpreter", "numba"]:
    x = np.array([0.5, 1.0, 2.0])
    try:
        got = sg.jit(lambda x: sg.pure_callback(scribble, SD(x.shape, np.float64), x) + x, backend=be)(x)
        print(be, "result", got, "(plain Python on a copy: [99.5 2 4]); the caller's x is now", x)
        bad |= x[0] != 0.5
    except ValueError as e:
        print(be, "refused:", e)
    try:
        got = sg.jit(lambda x: sg.pure_callback(lambda a: a * 1j, SD(x.shape, np.float64), x) * 2, backend=be)(x)
        print(be, "complex result declared float64:", got)
        bad |= bool(np.all(got == 0))
    except TypeError as e:
        print(be, "refused:", e)
sys.exit(1 if bad else 0)
