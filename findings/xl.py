import numpy as np, symgrad as sg, scipy.special as ss, jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
x = np.array([0., 0., 0., 0., 1., 2.]); y = np.array([np.nan, 0., -1., 2., np.nan, 3.])
f = lambda x, y: np.sum(ss.xlogy(x, y) * np.arange(1, 7))
for b in ("numpy", "numba"):
    print(b, sg.grad(f, argnums=(0, 1), backend=b)(x, y))
print("jax", jax.grad(lambda x, y: jnp.sum(jax.scipy.special.xlogy(x, y) * jnp.arange(1, 7)), argnums=(0, 1))(x, y))
print(sg.hessian(lambda x: np.sum(sg.xlogy(x[:3], x[3:])))(np.array([0., 0., 1., np.nan, 0., 2.])))
