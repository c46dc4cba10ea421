# symgrad kernel k_1d06d9b3a8f524249cc70b83bcd33e34 (symgrad 0.1.0, codegen 1, conventions 2); generated, do not edit
# value_and_grad of ratio with respect to x, y
# ratio(x: f64[2,1], y: f64[2])
import numpy as np
from numba import njit


@njit(cache=True, error_model="numpy", fastmath=False)
def ratio(x, y):
    a = x / y
    b = np.maximum(x, y)
    c = a + b
    d = np.sum(c)
    # grad of: b: f64[2,2] = maximum(x, y)
    e = x > y
    f = x == y
    g = np.where(f, 0.5, 0.0)
    h = np.where(e, 1.0, g)
    i = y > x
    j = np.where(i, 1.0, g)
    k = np.full((h.shape[0], ), 0.0)
    for i0 in range(h.shape[0]):
        for i1 in range(h.shape[1]):
            k[i0] += h[i0, i1]
    m = np.ascontiguousarray(k).reshape((2, 1))
    n = np.full((j.shape[1], ), 0.0)
    for i0 in range(j.shape[0]):
        for i1 in range(j.shape[1]):
            n[i1] += j[i0, i1]
    # grad of: a: f64[2,2] = div(x, y)
    o = 1.0 / y
    p = np.broadcast_to(o, (2, 2))
    q = np.negative(a)
    r = q / y
    s = np.full((p.shape[0], ), 0.0)
    for i0 in range(p.shape[0]):
        for i1 in range(p.shape[1]):
            s[i0] += p[i0, i1]
    t = np.ascontiguousarray(s).reshape((2, 1))
    grad_x = m + t
    u = np.full((r.shape[1], ), 0.0)
    for i0 in range(r.shape[0]):
        for i1 in range(r.shape[1]):
            u[i1] += r[i0, i1]
    grad_y = n + u
    return (d, grad_x, grad_y)
