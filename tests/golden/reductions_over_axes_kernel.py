# symgrad kernel k_6c565f252714ae6a0e6cb2d13c10c679 (symgrad 0.1.0, codegen 1, conventions 2); generated, do not edit
# grad of loss with respect to w, x
# loss(w: f64[3], x: f64[2,3])
import numpy as np
from numba import njit


@njit(cache=True, error_model="numpy", fastmath=False)
def loss(w, x):
    a = x * w
    b = np.tanh(a)
    c = np.full((b.shape[0], ), -np.inf)
    for i0 in range(b.shape[0]):
        for i1 in range(b.shape[1]):
            acc = b[i0, i1]
            if acc > c[i0] or acc != acc:
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
    e = np.square(c)
    f = np.sum(e)
    g = np.full((b.shape[1], ), 0.0)
    for i0 in range(b.shape[0]):
        for i1 in range(b.shape[1]):
            g[i1] += b[i0, i1]
    h = np.mean(g)
    i = f + h
    # grad of: h: f64[] = mean(g, axes=(0,))
    j = np.full((3,), 0.3333333333333333)
    # grad of: g: f64[3] = sum(b, axes=(0,))
    k = np.ascontiguousarray(j).reshape((1, 3))
    # grad of: e: f64[2] = square(c)
    m = 2.0 * c
    # grad of: c: f64[2] = max(b, axes=(1,))
    n = np.ascontiguousarray(m).reshape((2, 1))
    o = n * d
    p = k + o
    # grad of: b: f64[2,3] = tanh(a)
    q = np.square(b)
    r = 1.0 - q
    s = p * r
    # grad of: a: f64[2,3] = mul(x, w)
    grad_x = s * w
    t = s * x
    grad_w = np.full((t.shape[1], ), 0.0)
    for i0 in range(t.shape[0]):
        for i1 in range(t.shape[1]):
            grad_w[i1] += t[i0, i1]
    return (i, grad_w, grad_x)
