# symgrad kernel k_f39c95b76773afe846a32e6d06fae12e (symgrad 0.1.0, codegen 1, conventions 1); generated, do not edit
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
    d = np.square(c)
    e = np.sum(d)
    f = np.full((b.shape[1], ), 0.0)
    for i0 in range(b.shape[0]):
        for i1 in range(b.shape[1]):
            f[i1] += b[i0, i1]
    g = np.mean(f)
    h = e + g
    # grad of: g: f64[] = mean(f, axes=(0,))
    i = np.full((3,), 0.3333333333333333)
    # grad of: f: f64[3] = sum(b, axes=(0,))
    j = np.ascontiguousarray(i).reshape((1, 3))
    # grad of: d: f64[2] = square(c)
    k = 2.0 * c
    # grad of: c: f64[2] = max(b, axes=(1,))
    m = np.ascontiguousarray(c).reshape((2, 1))
    n = b == m
    o = np.where(n, 1.0, 0.0)
    p = np.full((o.shape[0], ), 0.0)
    for i0 in range(o.shape[0]):
        for i1 in range(o.shape[1]):
            p[i0] += o[i0, i1]
    q = k / p
    r = np.ascontiguousarray(q).reshape((2, 1))
    s = r * o
    t = j + s
    # grad of: b: f64[2,3] = tanh(a)
    u = np.square(b)
    v = 1.0 - u
    y = t * v
    # grad of: a: f64[2,3] = mul(x, w)
    grad_x = y * w
    z = y * x
    grad_w = np.full((z.shape[1], ), 0.0)
    for i0 in range(z.shape[0]):
        for i1 in range(z.shape[1]):
            grad_w[i1] += z[i0, i1]
    return (h, grad_w, grad_x)
