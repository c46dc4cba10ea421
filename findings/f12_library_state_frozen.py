"""Reads that plain Python repeats on every call but symgrad freezes at the first trace
(no RetraceWarning): np.random.rand (the global RandomState: the same "random" numbers on
every call, e.g. a frozen dropout mask or noise), a user functools.lru_cache helper after
cache_clear(), os.environ. An explicit Generator (rng.normal) does retrace, with a warning.
JAX freezes np.random inside jit too, but symgrad's README promises "seen on every call, as
plain Python sees them" and fails closed for an rng object; the module-level functions
slip through because calls into library modules are taken as pure.
Cause guess: symgrad/transforms/captured.py (library calls taken as pure: np.random.*,
time.*, os.environ are stateful; lru_cache wrappers are user objects whose state is hidden)."""
import functools
import os
import sys
import numpy as np
import symgrad as sg

x = np.array([0.5, 1.0, 2.0])
bad = False
for be in ["interpreter", "numba"]:
    np.random.seed(0)
    g = sg.grad(lambda x: np.sum(x * np.random.rand(3)), backend=be)
    r1, r2 = g(x), g(x)
    print(be, "np.random.rand: call 1", r1, "call 2", r2, "(plain Python: different)")
    bad |= np.allclose(r1, r2)

    state = {"v": 1.0}

    @functools.lru_cache
    def table():
        return np.full(3, state["v"])

    g = sg.grad(lambda x: np.sum(x * table()), backend=be)
    g(x)
    state["v"] = 2.0
    table.cache_clear()
    got = g(x)
    print(be, "lru_cache helper after cache_clear: symgrad", got, "expected [2 2 2]")
    bad |= not np.allclose(got, 2.0)

    os.environ["SG_REVIEW_SCALE"] = "1.0"
    g = sg.grad(lambda x: np.sum(x * float(os.environ["SG_REVIEW_SCALE"])), backend=be)
    g(x)
    os.environ["SG_REVIEW_SCALE"] = "5.0"
    got = g(x)
    print(be, "os.environ after change: symgrad", got, "expected [5 5 5]")
    bad |= not np.allclose(got, 5.0)
sys.exit(1 if bad else 0)
