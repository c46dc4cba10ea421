import numpy as np, symgrad as sg, jax, jax.numpy as jnp, collections, sys
jax.config.update("jax_enable_x64", True)
B = sys.argv[1] if len(sys.argv) > 1 else "interpreter"
def cmp(name, a, b):
    la, ta = jax.tree_util.tree_flatten(a, is_leaf=lambda z: z is None); lb, tb = jax.tree_util.tree_flatten(b, is_leaf=lambda z: z is None)
    ok = len(la)==len(lb) and all((u is None and v is None) or (u is not None and v is not None and np.shape(u)==np.shape(v) and np.allclose(u, v)) for u, v in zip(la, lb))
    print("OK " if ok else "BAD", name, "" if ok else (a, b))
P = collections.namedtuple("P", "w b")
params = {"1": np.array([1., 2.]), "a": P(np.array([0.5, -0.5]), 0.3), "0": [np.array(1.5), None]}
def loss(p, x):
    return np.sum(np.tanh(p["1"] * x + p["a"].w) ** 2) + p["a"].b ** 2 * p["0"][0]
x = np.array([0.3, 0.7])
def jloss(w1, aw, ab, p0):
    return jnp.sum(jnp.tanh(w1 * x + aw) ** 2) + ab ** 2 * p0
try:
    gs = sg.grad(loss, backend=B)(params, x)
    gj = jax.grad(jloss, argnums=(0,1,2,3))(params["1"], params["a"].w, params["a"].b, params["0"][0])
    print(type(gs), list(gs), type(gs["a"]), gs["0"])
    cmp("dict int/str keys + namedtuple + None", [gs["1"], gs["a"].w, gs["a"].b, gs["0"][0]], list(gj))
except Exception as e: print("EXC pytree", type(e).__name__, e)
# static_argnums
def f(x, n, mode):
    y = x
    for _ in range(n): y = np.sin(y)
    return np.sum(y * 2.0 if mode == "a" else y)
g = sg.jit(sg.grad(f, backend=B), static_argnums=(1, 2)) if "static_argnums" in sg.jit.__code__.co_varnames else None
try:
    g = sg.grad(f, backend=B, static_argnums=(1, 2))
    def fj(x, n, mode):
        y = x
        for _ in range(n): y = jnp.sin(y)
        return jnp.sum(y * 2.0 if mode == "a" else y)
    jg = jax.grad(fj)
    for n, mode in [(2, "a"), (3, "a"), (2, "b"), (3, "b")]:
        cmp(f"static n={n} mode={mode}", g(x, n, mode), jg(jnp.asarray(x), n, mode))
except Exception as e: print("EXC static", type(e).__name__, e)
# vjp pullback called twice with changed closure
c = np.array([2.0, 3.0])
def h(x): return np.sin(x) * c
y, pb = sg.vjp(h, x)
print("pb1", pb(np.ones(2)), np.cos(x) * c)
c2 = c.copy()
print("pb1 again", pb(np.array([1.0, 0.0])))
c[:] = 5.0
try:
    print("pb after mutation", pb(np.ones(2)))
except Exception as e: print("pb after mutation raised:", type(e).__name__, str(e)[:100])
# jit of a function that calls vjp and pullback twice
def k(x, ct1, ct2):
    y, pb = sg.vjp(lambda z: z ** 3 * c, x)
    return pb(ct1)[0] + 2 * pb(ct2)[0]
jk = sg.jit(k, backend=B)
cmp("jit vjp twice", jk(x, np.ones(2), np.array([1., 0.])), 3 * x ** 2 * c * (np.ones(2) + 2 * np.array([1., 0.])))
c[:] = 1.0
cmp("jit vjp twice changed", jk(x, np.ones(2), np.array([1., 0.])), 3 * x ** 2 * c * (np.ones(2) + 2 * np.array([1., 0.])))
# jvp with pytree tangents
def m(d): return np.sum(d["a"] * d["b"] ** 2)
d = {"a": np.array([1., 2.]), "b": np.array([3., 4.])}
t = {"a": np.array([1., 0.]), "b": np.array([0., 1.])}
cmp("jvp pytree", sg.jvp(m, (d,), (t,)), jax.jvp(m, (jparams_ := {k_: jnp.asarray(v) for k_, v in d.items()},), ({k_: jnp.asarray(v) for k_, v in t.items()},)))
# vmap over dict with in_axes
cmp("vmap dict", sg.vmap(lambda d: np.sum(d["a"] * d["b"]), in_axes=({"a": 0, "b": None},))({"a": np.ones((3, 2)), "b": np.array([1., 2.])}),
    jax.vmap(lambda d: jnp.sum(d["a"] * d["b"]), in_axes=({"a": 0, "b": None},))({"a": jnp.ones((3, 2)), "b": jnp.array([1., 2.])}))
# vmap out_axes
cmp("vmap out_axes=1", sg.vmap(lambda x: x * 2, out_axes=1)(np.arange(6.).reshape(3, 2)), jax.vmap(lambda x: x * 2, out_axes=1)(jnp.arange(6.).reshape(3, 2)))
cmp("vmap in_axes=1", sg.vmap(lambda x: np.sum(x) * x, in_axes=1)(np.arange(6.).reshape(3, 2)), jax.vmap(lambda x: jnp.sum(x) * x, in_axes=1)(jnp.arange(6.).reshape(3, 2)))
cmp("vmap in_axes=-1", sg.vmap(lambda x: np.sum(x) * x, in_axes=-1)(np.arange(6.).reshape(3, 2)), jax.vmap(lambda x: jnp.sum(x) * x, in_axes=-1)(jnp.arange(6.).reshape(3, 2)))
cmp("vmap out_axes=-1", sg.vmap(lambda x: np.outer(x, x), out_axes=-1)(np.arange(6.).reshape(3, 2)), jax.vmap(lambda x: jnp.outer(x, x), out_axes=-1)(jnp.arange(6.).reshape(3, 2)))
# vmap of custom_vjp
@sg.custom_vjp
def cf(x, y): return np.sin(x) * y
cf.defvjp(lambda x, y: (np.sin(x) * y, (x, y)), lambda r, g: (g * np.cos(r[0]) * r[1] * 2.0, g * np.sin(r[0])))
@jax.custom_vjp
def jf(x, y): return jnp.sin(x) * y
jf.defvjp(lambda x, y: (jnp.sin(x) * y, (x, y)), lambda r, g: (g * jnp.cos(r[0]) * r[1] * 2.0, g * jnp.sin(r[0])))
X = np.arange(6.).reshape(3, 2) / 5
cmp("vmap grad custom_vjp in_axes None", sg.vmap(sg.grad(lambda x, y: np.sum(cf(x, y)), argnums=(0, 1), backend=B), in_axes=(0, None))(X, np.array([1., 2.])),
    jax.vmap(jax.grad(lambda x, y: jnp.sum(jf(x, y)), argnums=(0, 1)), in_axes=(0, None))(X, jnp.array([1., 2.])))
cmp("grad vmap custom_vjp", sg.grad(lambda X, y: np.sum(sg.vmap(cf, in_axes=(0, None))(X, y) ** 2), argnums=(0, 1), backend=B)(X, np.array([1., 2.])),
    jax.grad(lambda X, y: jnp.sum(jax.vmap(jf, in_axes=(0, None))(X, y) ** 2), argnums=(0, 1))(X, jnp.array([1., 2.])))
@sg.custom_jvp
def cj(x): return np.exp(x) - 1.0
cj.defjvps(lambda t, ans, x: t * (ans + 1.0) * 3.0)
@jax.custom_jvp
def jj(x): return jnp.exp(x) - 1.0
jj.defjvps(lambda t, ans, x: t * (ans + 1.0) * 3.0)
cmp("vmap jacfwd custom_jvp", sg.vmap(sg.jacfwd(cj, backend=B))(X), jax.vmap(jax.jacfwd(jj))(X))
cmp("hessian custom_jvp", sg.hessian(lambda x: np.sum(cj(x) * x), backend=B)(X[1]), jax.hessian(lambda x: jnp.sum(jj(x) * x))(X[1]))
cmp("vmap hessian custom_jvp", sg.vmap(sg.hessian(lambda x: np.sum(cj(x) * x), backend=B))(X), jax.vmap(jax.hessian(lambda x: jnp.sum(jj(x) * x)))(X))
