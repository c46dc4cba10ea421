import numpy as np, symgrad as sg, jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
B = "interpreter"
def cmp(name, a, b):
    la = jax.tree_util.tree_leaves(a); lb = jax.tree_util.tree_leaves(b)
    ok = len(la) == len(lb) and all(np.shape(u) == np.shape(v) and np.allclose(u, v, rtol=1e-8, atol=1e-10, equal_nan=True) for u, v in zip(la, lb))
    print("OK " if ok else "BAD", name, "" if ok else (a, b))
x = np.array([0.3, -0.7, 1.2]); v = np.array([1.0, 2.0, -1.0])
f = lambda x: np.sum(np.sin(x) * x ** 2) ; fj = lambda x: jnp.sum(jnp.sin(x) * x ** 2)
cmp("hvp", sg.hvp(f, x, v), jax.jvp(jax.grad(fj), (x,), (v,))[1])
y, fl = sg.linearize(lambda x: np.sin(x) * x, x)
yj, flj = jax.linearize(lambda x: jnp.sin(x) * x, x)
cmp("linearize", fl(v), flj(v)); cmp("linearize twice", fl(2 * v), flj(2 * v))
d = {"a": x, "b": (v, 2.0)}
fd = lambda d: np.sum(d["a"] * d["b"][0] ** 2) * d["b"][1]
fdj = lambda d: jnp.sum(d["a"] * d["b"][0] ** 2) * d["b"][1]
cmp("hvp pytree", sg.hvp(fd, d, {"a": v, "b": (x, 1.0)}), jax.jvp(jax.grad(fdj), (d,), ({"a": v, "b": (x, 1.0)},))[1])
cmp("hessian pytree", sg.hessian(fd)(d), jax.hessian(fdj)(d))
g = sg.value_and_grad(lambda x: (np.sin(x) * 2, np.sum(x)), has_aux=True)(x, gradient=v)
gj = jax.vjp(lambda x: (jnp.sin(x) * 2, jnp.sum(x)), x, has_aux=True)
cmp("value_and_grad has_aux gradient=", (g[0][0], g[0][1], g[1]), (gj[0], gj[2], gj[1](v)[0]))
cmp("jvp of grad", sg.jvp(sg.grad(f), (x,), (v,)), jax.jvp(jax.grad(fj), (x,), (v,)))
cmp("vjp of jvp", sg.vjp(lambda x: sg.jvp(lambda z: np.sin(z) * z, (x,), (v,))[1], x)[1](x)[0], jax.vjp(lambda x: jax.jvp(lambda z: jnp.sin(z) * z, (x,), (v,))[1], x)[1](x)[0])
cmp("jacfwd of vmap", sg.jacfwd(sg.vmap(lambda r: np.sum(np.tanh(r)) * r))(np.outer(x, v)), jax.jacfwd(jax.vmap(lambda r: jnp.sum(jnp.tanh(r)) * r))(np.outer(x, v)))
cmp("grad of jit of vjp", sg.grad(lambda x: np.sum(sg.jit(lambda z: sg.vjp(np.sin, z)[1](z)[0])(x) ** 2))(x), jax.grad(lambda x: jnp.sum(jax.vjp(jnp.sin, x)[1](x)[0] ** 2))(x))
cmp("third order", sg.grad(sg.grad(sg.grad(lambda s: np.sin(s) * s ** 3)))(0.7), jax.grad(jax.grad(jax.grad(lambda s: jnp.sin(s) * s ** 3)))(0.7))
cmp("hessian of scan w/ xs grad", sg.hessian(lambda xs: sg.scan(lambda c, r: (c * r + np.sin(c), c), 0.5, xs)[0])(x), jax.hessian(lambda xs: jax.lax.scan(lambda c, r: (c * r + jnp.sin(c), c), 0.5, xs)[0])(x))
cmp("scan reverse", sg.grad(lambda xs: np.sum(sg.scan(lambda c, r: (c * r + 1.0, c * r), 0.5, xs, reverse=True)[1] ** 2))(x), jax.grad(lambda xs: jnp.sum(jax.lax.scan(lambda c, r: (c * r + 1.0, c * r), 0.5, xs, reverse=True)[1] ** 2))(x))
cmp("scan length no xs", sg.grad(lambda a: sg.scan(lambda c, _: (c * a, c), 1.0, None, length=4)[1].sum())(0.9), jax.grad(lambda a: jax.lax.scan(lambda c, _: (c * a, c), 1.0, None, length=4)[1].sum())(0.9))
cmp("scan pytree carry", sg.grad(lambda xs: sg.scan(lambda c, r: ({"s": c["s"] + r * c["t"], "t": c["t"] * 0.9}, r), {"s": 0.0, "t": 1.0}, xs)[0]["s"])(x),
    jax.grad(lambda xs: jax.lax.scan(lambda c, r: ({"s": c["s"] + r * c["t"], "t": c["t"] * 0.9}, r), {"s": 0.0, "t": 1.0}, xs)[0]["s"])(x))
cmp("fori checkpoint", sg.grad(lambda a: sg.fori_loop(0, 10, lambda i, c: c * a + np.sin(c), a, checkpoint=3))(0.7), jax.grad(lambda a: jax.lax.fori_loop(0, 10, lambda i, c: c * a + jnp.sin(c), a))(0.7))
cmp("cond in scan", sg.grad(lambda xs: sg.scan(lambda c, r: (sg.cond(r > 0, lambda z: z * r, lambda z: z - r, c), c), 1.0, xs)[0])(x),
    jax.grad(lambda xs: jax.lax.scan(lambda c, r: (jax.lax.cond(r > 0, lambda z: z * r, lambda z: z - r, c), c), 1.0, xs)[0])(x))
cmp("vmap cond batched pred", sg.vmap(lambda r: sg.cond(r[0] > 0, lambda z: np.sum(z ** 2), lambda z: np.sum(np.sin(z)), r))(np.outer(x, v)),
    jax.vmap(lambda r: jax.lax.cond(r[0] > 0, lambda z: jnp.sum(z ** 2), lambda z: jnp.sum(jnp.sin(z)), r))(np.outer(x, v)))
cmp("grad vmap while batched", sg.grad(lambda a: np.sum(sg.vmap(lambda s: sg.while_loop(lambda c: c[0] < s * 10, lambda c: (c[0] + 1.0, c[1] * s), (0.0, s))[1])(a)))(np.array([0.25, 0.5])),
    np.array([3 * 0.25 ** 2, 6 * 0.5 ** 5]))
