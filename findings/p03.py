import numpy as np, symgrad as sg, jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
B="interpreter"
a = sg.grad(lambda x, y: np.sum(x * y), backend=B, argnums=(0,1))(np.ones((3,1)), np.arange(12.).reshape(1,3,4))
b = jax.grad(lambda x, y: jnp.sum(x * y), argnums=(0,1))(jnp.ones((3,1)), jnp.arange(12.).reshape(1,3,4))
for u, v in zip(a, b): print(np.allclose(u, v), u.shape, v.shape)
a = sg.grad(lambda x, y: np.sum(np.sin(x + y)), backend=B, argnums=(0,1))(np.ones((1,1,4))*0.3, np.arange(12.).reshape(3,1,4))
b = jax.grad(lambda x, y: jnp.sum(jnp.sin(x + y)), argnums=(0,1))(jnp.ones((1,1,4))*0.3, jnp.arange(12.).reshape(3,1,4))
for u, v in zip(a, b): print(np.allclose(u, v), u.shape, v.shape)
import torch
x = torch.tensor([-np.inf, -np.inf], requires_grad=True); torch.logsumexp(x, 0).backward(); print("torch lse", x.grad)
print("sg lse", sg.grad(sg.logsumexp, backend=B)(np.array([-np.inf, -np.inf])))
print("sg softmax -inf", sg.jacrev(sg.softmax, backend=B)(np.array([-np.inf, -np.inf])), sg.softmax(np.array([-np.inf, -np.inf])))
