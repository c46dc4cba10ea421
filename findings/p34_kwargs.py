import numpy as np, symgrad as sg, jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
x = np.array([0.5, 1.5]); w = np.array([2.0, -1.0])
def f(x, *, w, scale=1.0): return np.sum(np.sin(x * w)) * scale
for B in ["interpreter", "numba"]:
    g = sg.grad(f, backend=B)
    a = g(x, w=w, scale=3.0); b = jax.grad(lambda x: jnp.sum(jnp.sin(x * w)) * 3.0)(x)
    print(B, np.allclose(a, b))
    a = g(x, w=w * 2, scale=0.5); b = jax.grad(lambda x: jnp.sum(jnp.sin(x * w * 2)) * 0.5)(x)
    print(B, "changed kw", np.allclose(a, b))
    a = g(x, w=w); b = jax.grad(lambda x: jnp.sum(jnp.sin(x * w)))(x)
    print(B, "default kw", np.allclose(a, b))
    a = g(x, w=w, scale=3); b = jax.grad(lambda x: jnp.sum(jnp.sin(x * w)) * 3.0)(x)
    print(B, "int kw", np.allclose(a, b))
    a = g(x, w=1.5, scale=np.float32(2)); b = jax.grad(lambda x: jnp.sum(jnp.sin(x * 1.5)) * 2.0)(x)
    print(B, "scalar kws", np.allclose(a, b))
    # Tensor argument, symgrad functions on traced
    import symgrad as torch
    t = torch.tensor(x)
    a = sg.grad(lambda x: torch.exp(x).sum() if False else np.sum(sg.sigmoid(x) * torch.exp(x)), backend=B)(t)
    print(B, "tensor arg", np.allclose(a, jax.grad(lambda x: jnp.sum(jax.nn.sigmoid(x) * jnp.exp(x)))(x)))
