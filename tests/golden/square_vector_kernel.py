# symgrad kernel k_a32dd9f208244d8786805d898245d53b (symgrad 0.1.0, codegen 1, conventions 2); generated, do not edit
# grad of square with respect to x
# square(x: f64[5], ct: f64[5])
import numpy as np
from numba import njit


@njit(cache=True, error_model="numpy", fastmath=False)
def square(x, ct):
    a = x * x
    # grad of: a: f64[5] = mul(x, x)
    b = ct * x
    grad_x = b + b
    return (a, grad_x)
