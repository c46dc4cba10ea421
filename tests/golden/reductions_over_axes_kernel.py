# symgrad kernel k_448a79eb44673d51aff2ff2393a98ce7 (symgrad 0.1.0, codegen 6, conventions 6); generated, do not edit
# grad of loss with respect to w, x
# loss(w: f64[n0], x: f64[n1,n0])
import numpy as np
from numba import njit
from symgrad.backend import vecmath as vm  # vecmath 3b3facbab0e8


@njit(cache=True, error_model="numpy", fastmath=False)
def loss(w, x):
    n0 = w.shape[0]
    n1 = x.shape[0]
    # grad of: ab: f64[] = mean(e, axes=(0,))
    f = float(n0)
    g = 1.0 / f
    h = np.full((n0,), g)
    # grad of: e: f64[n0] = sum(b, axes=(0,))
    i = np.ascontiguousarray(h).reshape((1, n0))
    b = np.empty((n1, n0))
    e = np.zeros((n0,))
    for i0 in range(n1):
        for i1 in range(n0):
            a = x[i0, i1] * w[i1]
            b[i0, i1] = vm.tanh(a)
            e[i1] += b[i0, i1]
    c = np.full((b.shape[0], ), -np.inf)
    for i0 in range(b.shape[0]):
        for i1 in range(b.shape[1]):
            acc = b[i0, i1]
            if not (c[i0] > acc or c[i0] != c[i0]):
                c[i0] = acc
    d_rows = np.ascontiguousarray(b).reshape((b.shape[0], b.shape[1]))
    d_w = np.zeros_like(d_rows)
    for d_i in range(d_rows.shape[0]):
        d_best = d_rows[d_i, 0]
        for d_j in range(1, d_rows.shape[1]):
            if d_rows[d_i, d_j] > d_best or d_rows[d_i, d_j] != d_rows[d_i, d_j]:
                d_best = d_rows[d_i, d_j]
        d_k = 0
        for d_j in range(d_rows.shape[1]):
            if d_rows[d_i, d_j] == d_best:
                d_k += 1
        for d_j in range(d_rows.shape[1]):
            if d_best != d_best:
                d_w[d_i, d_j] = np.nan
            elif d_rows[d_i, d_j] == d_best:
                d_w[d_i, d_j] = 1.0 / d_k
    d = d_w.reshape((b.shape[0], b.shape[1], ))
    j = np.empty((n1,))
    for i0 in range(n1):
        # grad of: ac: f64[n1] = square(c)
        j[i0] = 2.0 * c[i0]
    # grad of: c: f64[n1] = max(b, axes=(1,))
    k = np.ascontiguousarray(j).reshape((n1, 1))
    grad_x = np.empty((n1, n0))
    grad_w = np.zeros((n0,))
    for i0 in range(n1):
        for i1 in range(n0):
            # grad of: c: f64[n1] = max(b, axes=(1,))
            m = k[i0, 0] * d[i0, i1]
            n = i[0, i1] + m
            # grad of: b: f64[n1,n0] = tanh(a)
            a = x[i0, i1] * w[i1]
            o = a >= 0.0
            p = np.negative(a)
            q = a if o else p
            r = (-2.0) * q
            s = vm.exp(r)
            t = 4.0 * s
            u = 1.0 + s
            v = np.square(u)
            y = t / v
            z = n * y
            # grad of: a: f64[n1,n0] = mul(x, w)
            grad_x[i0, i1] = z * w[i1]
            aa = z * x[i0, i1]
            grad_w[i1] += aa
    return (grad_w, grad_x)
