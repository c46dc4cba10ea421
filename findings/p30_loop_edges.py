import numpy as np, symgrad as sg, jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
def cmp(name, a, b):
    ok = np.shape(a) == np.shape(b) and np.allclose(a, b, equal_nan=True)
    print("OK " if ok else "BAD", name, "" if ok else (a, b))
for B in ["interpreter", "numba"]:
    sg.config.tiered = False
    cmp(B + " fori empty", sg.grad(lambda a: sg.fori_loop(5, 2, lambda i, c: c * a, a), backend=B)(0.7), 1.0)
    cmp(B + " fori traced lower/upper", sg.grad(lambda a, lo, hi: sg.fori_loop(lo, hi, lambda i, c: c * a + i, a), backend=B)(0.7, 2, 5), jax.grad(lambda a, lo, hi: jax.lax.fori_loop(lo, hi, lambda i, c: c * a + i, a))(0.7, 2, 5))
    cmp(B + " fori traced reversed bounds", sg.grad(lambda a, lo, hi: sg.fori_loop(lo, hi, lambda i, c: c * a + i, a), backend=B)(0.7, 5, 2), 1.0)
    cmp(B + " fori neg bounds", sg.grad(lambda a, n: sg.fori_loop(-n, n, lambda i, c: c * a + i, a), backend=B)(0.7, 2), jax.grad(lambda a, n: jax.lax.fori_loop(-n, n, lambda i, c: c * a + i, a))(0.7, 2))
    cmp(B + " while false at once", sg.grad(lambda a: sg.while_loop(lambda c: c > 10.0, lambda c: c * a, a * 2), backend=B)(0.7), 2.0)
    cmp(B + " scan length 0", sg.grad(lambda a, xs: sg.scan(lambda c, x: (c * x * a, c), a, xs)[0], backend=B)(0.7, np.zeros(0)), 1.0)
    cmp(B + " scan ys length 0 sum", sg.grad(lambda a, xs: a + np.sum(sg.scan(lambda c, x: (c * x * a, c), a, xs)[1]), backend=B)(0.7, np.zeros(0)), 1.0)
    cmp(B + " fori i used as float", sg.grad(lambda a: sg.fori_loop(0, 4, lambda i, c: c + np.sin(a * i), 0.0), backend=B)(0.7), sum(i * np.cos(0.7 * i) for i in range(4)))
    cmp(B + " fori carry int+float", sg.grad(lambda a: sg.fori_loop(0, 3, lambda i, c: (c[0] + 2, c[1] * a + c[0]), (1, a))[1], backend=B)(0.7), jax.grad(lambda a: jax.lax.fori_loop(0, 3, lambda i, c: (c[0] + 2, c[1] * a + c[0]), (1, a))[1])(0.7))
    cmp(B + " while grad checkpoint", sg.grad(lambda a: sg.while_loop(lambda c: c[0] < 7, lambda c: (c[0] + 1, np.sin(c[1]) * a), (0, a), checkpoint=2)[1], backend=B)(0.9), jax.grad(lambda a: jax.lax.fori_loop(0, 7, lambda i, c: jnp.sin(c) * a, a))(0.9))
    cmp(B + " scan checkpoint", sg.grad(lambda xs: sg.scan(lambda c, x: (np.tanh(c * x + 1), c), 0.1, xs, checkpoint=3)[0], backend=B)(np.linspace(0.1, 1, 7)), jax.grad(lambda xs: jax.lax.scan(lambda c, x: (jnp.tanh(c * x + 1), c), 0.1, xs)[0])(np.linspace(0.1, 1, 7)))
