"""int8.add(uint8, alpha=2): PyTorch promotes to int16 first, then adds alpha*other
(-100 + 2*200 = 300). symgrad returns int16 but with other*alpha computed in uint8 first, so it
wraps: 44 (=(-100 + 144)). Same for sub(alpha=...)."""
import numpy as np
from _h import main
def prog(expr):
    def f(L, _):
        u = L.tensor([200, 3, 255, 0], dtype=L.uint8); i = L.tensor([-100, 7, -1, 127], dtype=L.int8)
        x = eval(expr)
        return [x, np.array(str(x.dtype))]
    return f
main([(e, prog(e), "float64") for e in ["i.add(u, alpha=2)", "L.add(i, u, alpha=2)", "i.sub(u, alpha=2)", "u.add(i, alpha=3)", "i.add(i, alpha=2)"]])
