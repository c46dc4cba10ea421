# symgrad kernel k_ed189df51d249317020365c516ecf055 (symgrad 0.1.0, codegen 6, conventions 6); generated, do not edit
# grad of seed with respect to x
# seed(x: f64[n0,n0])
import numpy as np
from numba import njit


@njit(cache=True, error_model="numpy", fastmath=False)
def seed(x):
    n0 = x.shape[0]
    # grad of: g: f64[] = mean(f, axes=(0, 1))
    b = float(n0 * n0)
    c = 1.0 / b
    # grad of: f: f64[n0,n0] = mul(3.0, h)
    d = c * 3.0
    grad_x = np.empty((n0, n0))
    for i0 in range(n0):
        for i1 in range(n0):
            a = x[i0, i1] + 2.0
            # grad of: h: f64[n0,n0] = square(a)
            e = 2.0 * a
            grad_x[i0, i1] = d * e
    return (grad_x,)
