# symgrad kernel k_47bc02938dc1ec9a2737970de37db496 (symgrad 0.1.0, codegen 6, conventions 6); generated, do not edit
# grad of square with respect to x
# square(x: f64[n0], ct: f64[n0])
import numpy as np
from numba import njit


@njit(cache=True, error_model="numpy", fastmath=False)
def square(x, ct):
    n0 = x.shape[0]
    grad_x = np.empty((n0,))
    for i0 in range(n0):
        # grad of: b: f64[n0] = mul(x, x)
        a = ct[i0] * x[i0]
        grad_x[i0] = a + a
    return (grad_x,)
