# symgrad kernel k_7d684b7dcc0e4a44bb0651481407e8ee (symgrad 0.1.0, codegen 6, conventions 6); generated, do not edit
# value_and_grad of ratio with respect to x, y
# ratio(x: f64[n0,1], y: f64[n0])
import numpy as np
from numba import njit
from symgrad.backend import vecmath as vm  # vecmath 3b3facbab0e8


@njit(cache=True, error_model="numpy", fastmath=False)
def ratio(x, y):
    n0 = x.shape[0]
    r0_0 = np.empty(n0)
    r0_1 = np.empty(n0)
    r0_2 = np.empty(n0)
    r = np.empty((n0, n0))
    d = 0.0
    k = np.zeros((n0,))
    n = np.zeros((n0,))
    s = np.zeros((n0,))
    for i0 in range(n0):
        for i1 in range(n0):
            a = x[i0, 0] / y[i1]
            b = x[i0, 0] if (x[i0, 0] > y[i1]) or (x[i0, 0] != x[i0, 0]) else y[i1]
            c = a + b
            r0_0[i1] = c
            # grad of: b: f64[n0,n0] = maximum(x, y)
            e = x[i0, 0] > y[i1]
            f = x[i0, 0] == y[i1]
            g = 0.5 if f else 0.0
            h = 1.0 if e else g
            i = y[i1] > x[i0, 0]
            j = 1.0 if i else g
            r0_1[i1] = h
            n[i1] += j
            # grad of: a: f64[n0,n0] = div(x, y)
            q = np.negative(a)
            r[i0, i1] = q / y[i1]
            o = 1.0 / y[i1]
            r0_2[i1] = o
        d += vm.row_sum(r0_0)
        k[i0] += vm.row_sum(r0_1)
        s[i0] += vm.row_sum(r0_2)
    # grad of: b: f64[n0,n0] = maximum(x, y)
    m = np.ascontiguousarray(k).reshape((n0, 1))
    # grad of: a: f64[n0,n0] = div(x, y)
    t = np.ascontiguousarray(s).reshape((n0, 1))
    # grad of: a: f64[n0,n0] = div(x, y)
    u = np.full((r.shape[1], ), 0.0)
    for i0 in range(r.shape[0]):
        for i1 in range(r.shape[1]):
            u[i1] += r[i0, i1]
    grad_y = np.empty((n0,))
    for i0 in range(n0):
        # grad of: a: f64[n0,n0] = div(x, y)
        grad_y[i0] = n[i0] + u[i0]
    grad_x = np.empty((n0, 1))
    for i0 in range(n0):
        for i1 in range(1):
            # grad of: a: f64[n0,n0] = div(x, y)
            grad_x[i0, i1] = m[i0, i1] + t[i0, i1]
    return (d, grad_x, grad_y)
