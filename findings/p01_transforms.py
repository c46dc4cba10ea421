import numpy as np, symgrad as sg, jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
B="interpreter"
def cmp(name, a, b):
    a=np.asarray(a); b=np.asarray(b)
    ok = a.shape==b.shape and np.allclose(a,b,rtol=1e-8,atol=1e-10,equal_nan=True)
    print(("OK  " if ok else "BAD "), name, "" if ok else (a, b))

# vmap(grad) with scan
def f_np(w, x):
    c, ys = sg.scan(lambda c, xi: (np.tanh(c * w + xi), c * xi), 0.3, x)
    return c + np.sum(ys)
def f_j(w, x):
    c, ys = jax.lax.scan(lambda c, xi: (jnp.tanh(c * w + xi), c * xi), 0.3, x)
    return c + jnp.sum(ys)
W = np.array([0.5, -0.2, 1.1]); X = np.random.default_rng(0).normal(size=(3, 4))
cmp("vmap(grad(scan))", sg.vmap(sg.grad(f_np, backend=B))(W, X), jax.vmap(jax.grad(f_j))(W, X))
cmp("hessian scan", sg.hessian(lambda x: f_np(0.7, x), backend=B)(X[0]), jax.hessian(lambda x: f_j(0.7, x))(X[0]))
cmp("jacfwd(jacrev) scan", sg.jacfwd(sg.jacrev(lambda x: f_np(0.7, x)), backend=B)(X[0]), jax.jacfwd(jax.jacrev(lambda x: f_j(0.7, x)))(X[0]))

# cond
def g_np(x):
    return sg.cond(np.sum(x) > 0, lambda y: np.sum(np.sin(y) * y), lambda y: np.sum(y ** 3), x)
def g_j(x):
    return jax.lax.cond(jnp.sum(x) > 0, lambda y: jnp.sum(jnp.sin(y) * y), lambda y: jnp.sum(y ** 3), x)
for x in [np.array([1., 2.]), np.array([-1., -2.])]:
    cmp("hessian cond", sg.hessian(g_np, backend=B)(x), jax.hessian(g_j)(x))
    cmp("vmap grad cond", sg.vmap(sg.grad(g_np, backend=B))(np.stack([x, -x])), jax.vmap(jax.grad(g_j))(jnp.stack([x, -x])))

# while_loop
def h_np(a):
    return sg.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * a + np.sin(c[1])), (0, a))[1]
def h_j(a):
    # jax can't reverse while; unroll
    c = a
    for _ in range(5): c = c * a + jnp.sin(c)
    return c
cmp("grad while", sg.grad(h_np, backend=B)(0.7), jax.grad(h_j)(0.7))
cmp("hessian while", sg.hessian(h_np, backend=B)(0.7), jax.hessian(h_j)(0.7))
cmp("vmap grad while (non-batched cond)", sg.vmap(sg.grad(h_np, backend=B))(np.array([0.7, 0.3])), jax.vmap(jax.grad(h_j))(jnp.array([0.7, 0.3])))

# fori_loop with traced count
def k_np(x, n):
    return sg.fori_loop(0, n, lambda i, v: v * np.cos(v) + i * 0.1, x)
def k_j(x, n):
    return jax.lax.fori_loop(0, n, lambda i, v: v * jnp.cos(v) + i * 0.1, x)
for n in [3, 0, 5]:
    cmp(f"grad fori n={n}", sg.grad(k_np, backend=B)(0.4, n), jax.grad(k_j)(0.4, n))
    cmp(f"hess fori n={n}", sg.hessian(k_np, backend=B)(0.4, n), jax.hessian(k_j)(0.4, n))
