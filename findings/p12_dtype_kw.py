import numpy as np, symgrad as sg, jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
x32 = (np.arange(1, 7, dtype=np.float32) / 7).reshape(2, 3)
C = np.arange(6.).reshape(3, 2) / 3
cases = {
 "sum": (lambda x: np.sum(x, dtype=np.float64), lambda x: jnp.sum(x, dtype=jnp.float64)),
 "method sum": (lambda x: x.sum(axis=1, dtype=np.float64), lambda x: x.sum(axis=1, dtype=jnp.float64)),
 "mean": (lambda x: np.mean(x, axis=0, dtype=np.float64), lambda x: jnp.mean(x, axis=0, dtype=jnp.float64)),
 "var": (lambda x: np.var(x, dtype=np.float64), lambda x: jnp.var(x, dtype=jnp.float64)),
 "std": (lambda x: np.std(x, axis=1, dtype=np.float64), lambda x: jnp.std(x, axis=1, dtype=jnp.float64)),
 "prod": (lambda x: np.prod(x, dtype=np.float64), lambda x: jnp.prod(x, dtype=jnp.float64)),
 "cumsum": (lambda x: np.cumsum(x, dtype=np.float64), lambda x: jnp.cumsum(x, dtype=jnp.float64)),
 "cumprod": (lambda x: np.cumprod(x, axis=1, dtype=np.float64), lambda x: jnp.cumprod(x, axis=1, dtype=jnp.float64)),
 "trace": (lambda x: np.trace(x, dtype=np.float64), lambda x: jnp.trace(x, dtype=jnp.float64)),
 "einsum": (lambda x: np.einsum("ij,ij->i", x, x, dtype=np.float64), lambda x: jnp.einsum("ij,ij->i", x, x, preferred_element_type=jnp.float64)),
 "matmul": (lambda x: np.matmul(x, x.T, dtype=np.float64), lambda x: jnp.matmul(x.astype(jnp.float64), x.T.astype(jnp.float64))),
 "ufunc add": (lambda x: np.add(x, x, dtype=np.float64), lambda x: jnp.add(x.astype(jnp.float64), x.astype(jnp.float64))),
 "ufunc exp": (lambda x: np.exp(x, dtype=np.float64), lambda x: jnp.exp(x.astype(jnp.float64))),
 "concat": (lambda x: np.concatenate([x, x], dtype=np.float64), lambda x: jnp.concatenate([x, x], dtype=jnp.float64)),
 "stack": (lambda x: np.stack([x, x], dtype=np.float64), lambda x: jnp.stack([x, x], dtype=jnp.float64)),
}
for name, (fs, fj) in cases.items():
    try:
        want = fs(x32)  # numpy itself
        got = sg.jit(fs, backend="interpreter")(x32)
        g = sg.grad(lambda x: np.sum(np.sin(fs(x))), backend="interpreter")(x32)
        gj = jax.grad(lambda x: jnp.sum(jnp.sin(fj(x))))(jnp.asarray(x32))
        ok = np.asarray(got).dtype == np.asarray(want).dtype == np.float64 and np.allclose(got, want, rtol=1e-14, atol=0) and g.dtype == np.float32 and np.allclose(g, gj, rtol=1e-6)
        print("OK " if ok else "BAD", name, "" if ok else (np.asarray(got).dtype, got, want, g.dtype, g, gj))
    except Exception as e:
        print("EXC", name, type(e).__name__, str(e)[:200])
