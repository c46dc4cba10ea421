"""Any read through a user *class object* is unguarded: `x * C.k`, a classmethod `C.scale`
(reading `cls.k`), a staticmethod `C.st` (reading `C.k`); after `C.k = 6.0` the gradient
is still the old one: the trace is reused although its world changed. (The same read
through an instance, `obj.k` or `type(self).m`, is guarded correctly.)
Cause (traced with a patched _Finder.value): symgrad/transforms/captured.py
_Finder.value, the line `if callable(x) and _library(type(x)) and not _symgrad(type(x)):
return` -- a user class is callable and type(C) is builtins.type, a "library", so the
class is guarded by identity only and its attributes are never followed. Needs
`not isinstance(x, type)` there."""
import sys
import numpy as np
import symgrad as sg

x = np.array([0.5, 1.0, 2.0])
bad = False
for be in ["interpreter", "numba"]:
    class C:
        k = 1.0

        @classmethod
        def scale(cls, v):
            return v * cls.k

        @staticmethod
        def st(v):
            return v * C.k

    g = sg.grad(lambda x: np.sum(x * C.k), backend=be)
    g(x)
    C.k = 5.0
    got = g(x)
    print(be, "x * C.k after C.k = 5: symgrad", got, "expected", 5 * np.ones(3))
    bad |= not np.allclose(got, 5.0)
    C.k = 1.0
    g = sg.grad(lambda x: np.sum(C.scale(x)), backend=be)
    g(x)
    C.k = 6.0
    got = g(x)
    print(be, "classmethod after C.k = 6: symgrad", got, "expected", 6 * np.ones(3))
    bad |= not np.allclose(got, 6.0)
    C.k = 1.0
    g = sg.grad(lambda x: np.sum(C.st(x)), backend=be)
    g(x)
    C.k = 7.0
    got = g(x)
    print(be, "staticmethod after C.k = 7: symgrad", got, "expected", 7 * np.ones(3))
    bad |= not np.allclose(got, 7.0)
sys.exit(1 if bad else 0)
