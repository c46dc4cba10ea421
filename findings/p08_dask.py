import numpy as np, symgrad as sg, dask.array as da, dask, jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
dask.config.set(scheduler="synchronous")
rng = np.random.default_rng(0)
Xn = rng.normal(size=(103, 4)); yn = (rng.random(103) > 0.5) * 1.0; w = rng.normal(size=4) * 0.3
X = da.from_array(Xn, chunks=(25, 4)); y = da.from_array(yn, chunks=25)
def cmp(name, a, b):
    a = np.asarray(a); b = np.asarray(b)
    ok = a.shape == b.shape and np.allclose(a, b, rtol=1e-9, atol=1e-12)
    print("OK " if ok else "BAD", name, "" if ok else (a, b))
losses = {
 "logreg": (lambda w, X, y: np.mean(np.logaddexp(0.0, X @ w) - y * (X @ w)), lambda w, X, y: jnp.mean(jnp.logaddexp(0.0, X @ w) - y * (X @ w))),
 "centered": (lambda w, X, y: np.mean((X @ w - np.mean(X @ w)) ** 2), lambda w, X, y: jnp.mean((X @ w - jnp.mean(X @ w)) ** 2)),
 "std cols": (lambda w, X, y: np.sum(((X - X.mean(0)) / X.std(0)) @ w), lambda w, X, y: jnp.sum(((X - X.mean(0)) / X.std(0)) @ w)),
 "max": (lambda w, X, y: np.sum(np.max(X * w, axis=1)), lambda w, X, y: jnp.sum(jnp.max(X * w, axis=1))),
 "logsumexp rows": (lambda w, X, y: np.log(np.sum(np.exp(X @ w))), lambda w, X, y: jnp.log(jnp.sum(jnp.exp(X @ w)))),
 "var ddof": (lambda w, X, y: np.var(X @ w, ddof=1), lambda w, X, y: jnp.var(X @ w, ddof=1)),
 "softmax row": (lambda w, X, y: np.sum(sg.softmax(X * w, axis=1)[:, 0] * y), lambda w, X, y: jnp.sum(jax.nn.softmax(X * w, axis=1)[:, 0] * y)),
 "prod rows": (lambda w, X, y: np.sum(np.prod(1 + 0.01 * X, axis=0) * w), lambda w, X, y: jnp.sum(jnp.prod(1 + 0.01 * X, axis=0) * w)),
 "mean all": (lambda w, X, y: np.mean(X * w) * np.sum(y), lambda w, X, y: jnp.mean(X * w) * jnp.sum(y)),
 "min axis0": (lambda w, X, y: np.sum(np.min(X, axis=0) * w), lambda w, X, y: jnp.sum(jnp.min(X, axis=0) * w)),
 "gram": (lambda w, X, y: w @ (X.T @ X) @ w / X.shape[0], lambda w, X, y: w @ (X.T @ X) @ w / X.shape[0]),
 "mean keepdims": (lambda w, X, y: np.sum((X - np.mean(X, axis=0, keepdims=True)) ** 2 @ w), lambda w, X, y: jnp.sum((X - jnp.mean(X, axis=0, keepdims=True)) ** 2 @ w)),
 "sum axis (0,1)": (lambda w, X, y: np.sum(X * w, axis=(0, 1)) ** 2, lambda w, X, y: jnp.sum(X * w, axis=(0, 1)) ** 2),
 "norm": (lambda w, X, y: np.linalg.norm(X @ w), lambda w, X, y: jnp.linalg.norm(X @ w)),
 "average weights": (lambda w, X, y: np.average(X @ w, weights=y + 1.0), lambda w, X, y: jnp.average(X @ w, weights=y + 1.0)),
}
for name, (fs, fj) in losses.items():
    try:
        v, g = sg.value_and_grad(fs, argnums=(0, 1))(w, X, y)
        vj, gj = jax.value_and_grad(fj, argnums=(0, 1))(w, Xn, yn)
        cmp(name + " value", v, vj); cmp(name + " grad w", g[0], gj[0]); cmp(name + " grad X", np.asarray(g[1]), gj[1])
    except Exception as e:
        print("EXC", name, type(e).__name__, str(e)[:200])
