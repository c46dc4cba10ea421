# symgrad kernel k_6b11bad74641c5e317fac97693ff2c1a (symgrad 0.1.0, codegen 6, conventions 6); generated, do not edit
# grad of modulus with respect to z
# modulus(z: c128[n0])
import numpy as np
from numba import njit
from symgrad.backend import npymath as nm  # npymath 9afbd922c026


@njit(cache=True, error_model="numpy", fastmath=False)
def modulus(z):
    n0 = z.shape[0]
    grad_z = np.empty((n0,), dtype=np.complex128)
    for i0 in range(n0):
        a = z[i0] * z[i0]
        b = a + complex(0.0, 1.0)
        c = np.abs(b)
        # grad of: ae: f64[n0] = square(c)
        d = 2.0 * c
        # grad of: c: f64[n0] = cabs(b)
        e = np.real(b)
        f = np.imag(b)
        g = np.absolute(e)
        h = np.absolute(f)
        i = g if (g > h) or (g != g) else h
        j = i > 0.0
        k = i < np.inf
        m = i if k else 1.0
        n = m if j else 1.0
        o = e / n
        p = np.complex128(o.item())
        q = f / n
        r = np.complex128(q.item())
        s = r * complex(0.0, 1.0)
        t = p + s
        u = np.abs(t)
        v = np.conj(t)
        w = u == 0.0
        x = 1.0 if w else u
        y = np.complex128(x.item())
        aa = nm.divide(v, y)
        ab = np.complex128(d.item())
        ac = ab * aa
        # grad of: a: c128[n0] = mul(z, z)
        ad = ac * z[i0]
        grad_z[i0] = ad + ad
    return (grad_z,)
