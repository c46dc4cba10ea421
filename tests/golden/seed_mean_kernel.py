# symgrad kernel k_1e0f4bc25aafc529f91f2d69495de1f7 (symgrad 0.1.0, codegen 1, conventions 2); generated, do not edit
# grad of seed with respect to x
# seed(x: f64[2,2])
import numpy as np
from numba import njit


@njit(cache=True, error_model="numpy", fastmath=False)
def seed(x):
    a = x + 2.0
    b = np.square(a)
    c = 3.0 * b
    d = np.mean(c)
    # grad of: b: f64[2,2] = square(a)
    e = 2.0 * a
    grad_x = 0.75 * e
    return (d, grad_x)
