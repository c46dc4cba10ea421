# symgrad kernel k_233cb1922b8137b37a295a545ef47668 (symgrad 0.1.0, codegen 5, conventions 5); generated, do not edit
# grad of modulus with respect to z
# modulus(z: c128[n0])
import numpy as np
from numba import njit


@njit(cache=True, error_model="numpy", fastmath=False)
def modulus(z):
    n0 = z.shape[0]
    grad_z = np.empty((n0,), dtype=np.complex128)
    for i0 in range(n0):
        a = z[i0] * z[i0]
        b = a + complex(0.0, 1.0)
        c = np.abs(b)
        # grad of: m: f64[n0] = square(c)
        d = 2.0 * c
        # grad of: c: f64[n0] = cabs(b)
        e = c == 0.0
        f = 1.0 if e else c
        g = np.complex128(d)
        h = np.conj(b)
        i = np.divide(h, f)
        j = g * i
        # grad of: a: c128[n0] = mul(z, z)
        k = j * z[i0]
        grad_z[i0] = k + k
    return (grad_z,)
