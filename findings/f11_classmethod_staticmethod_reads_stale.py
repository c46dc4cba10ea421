"""A helper called as a classmethod or staticmethod of a user class reads a class attribute
(`cls.k`, `C.k`); after `C.k = 6.0` the gradient is still the old one: the trace is reused
although its world changed. (The same read through an instance, `type(self).m` or
`self.k` from a method, is guarded correctly.)
Cause guess: symgrad/transforms/captured.py: the helper reached as `C.scale` is a bound
classmethod / a plain function found on a class object; its reads (`cls.k`, the global
`C` then `.k`) are not followed, or the class object is guarded by identity only."""
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
