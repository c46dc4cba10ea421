# symgrad kernel k_554e091b72c255d7ac06106aab27f77e (symgrad 0.1.0, codegen 1, conventions 1); generated, do not edit
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
