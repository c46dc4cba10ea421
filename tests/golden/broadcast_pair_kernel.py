# symgrad kernel k_dad8c29551189ec15289184fddba37c4 (symgrad 0.1.0, codegen 1, conventions 1); generated, do not edit
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
    l = np.ascontiguousarray(k).reshape((2, 1))
    m = np.full((j.shape[1], ), 0.0)
    for i0 in range(j.shape[0]):
        for i1 in range(j.shape[1]):
            m[i1] += j[i0, i1]
    # grad of: a: f64[2,2] = div(x, y)
    n = 1.0 / y
    o = np.broadcast_to(n, (2, 2))
    p = np.negative(a)
    q = p / y
    r = np.full((o.shape[0], ), 0.0)
    for i0 in range(o.shape[0]):
        for i1 in range(o.shape[1]):
            r[i0] += o[i0, i1]
    s = np.ascontiguousarray(r).reshape((2, 1))
    grad_x = l + s
    t = np.full((q.shape[1], ), 0.0)
    for i0 in range(q.shape[0]):
        for i1 in range(q.shape[1]):
            t[i1] += q[i0, i1]
    grad_y = m + t
    return (d, grad_x, grad_y)
