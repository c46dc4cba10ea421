"""sum/cumsum/prod with an explicit narrow integer dtype= (uint8/int8/int16) return int64 and
do not wrap: PyTorch casts the input and accumulates *in that dtype* (result uint8 51 for
[200,100,7].sum(dtype=uint8)); symgrad returns int64 307. Silent wrong number and dtype."""
import numpy as np
from _h import main
def red(expr):
    def f(L, _):
        a = L.tensor([200, 100, 7], dtype=L.uint8); b = L.tensor([100, 100, 7], dtype=L.int8)
        x = eval(expr)
        return [x, np.array(str(x.dtype))]
    return f
main([(e, red(e), "float64") for e in ["a.sum(dtype=L.uint8)", "a.sum(0, dtype=L.uint8)", "b.sum(dtype=L.int8)",
      "a.cumsum(0, dtype=L.uint8)", "b.prod(dtype=L.int8)", "a.sum(dtype=L.int16)", "L.sum(a, dtype=L.uint8)"]])
