"""sg.pure_callback inside a sg.cond branch or a sg.fori_loop body crashes with an internal
`TypeError: _callback_emit() got multiple values for argument 'avals'` instead of the
intended NotImplementedError ("call it outside sg.fori_loop/scan/while_loop/cond, or use
backend='numpy'"), and it does so with backend='interpreter' too, so the workaround the
message would suggest does not work either.
Cause guess: symgrad/backend/numba/lowering/custom.py _callback_emit's signature
(codegen.statements passes avals by keyword as well); and the interpreter backend still
reaches numba codegen for a body holding a callback."""
import sys
import numpy as np
import symgrad as sg

x = np.array([0.5, 1.0])
SD = sg.ShapeDtypeStruct
bad = False
for be in ["interpreter", "numba"]:
    for name, f in [
        ("cond", lambda x: sg.cond(x[0] > 0, lambda v: sg.pure_callback(np.sin, SD(v.shape, np.float64), v),
                                   lambda v: v, x)),
        ("fori_loop", lambda x: sg.fori_loop(0, 2, lambda i, v: sg.pure_callback(np.sin, SD(v.shape, np.float64), v), x))]:
        try:
            print(be, name, "value", sg.jit(f, backend=be)(x))
        except Exception as e:
            print(be, name, type(e).__name__, str(e)[:160])
            bad |= isinstance(e, TypeError) and "_callback_emit" in str(e)
sys.exit(1 if bad else 0)
