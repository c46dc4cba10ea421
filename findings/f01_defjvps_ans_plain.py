"""custom_jvp.defjvps: the `ans` handed to the rules is the plain function's output, so a
second derivative differentiates the primal code instead of the custom rule (JAX calls the
custom function again: `primal_out = self(*primals)`). Silent wrong Hessian.
Cause guess: symgrad/numpy_api/custom.py defjvps.jvp: `ans = self.fun(...)` (should be `self(...)`).
The equivalent defjvp rule that calls e(x) itself gives JAX's number."""
import sys
import numpy as np
import jax
import jax.numpy as jnp
import symgrad as sg

jax.config.update("jax_enable_x64", True)


@sg.custom_jvp
def e(x):
    return np.exp(np.round(x * 1e6) / 1e6)   # plain derivative 0 (np.round): the rule gives it


e.defjvps(lambda t, ans, x: t * ans)


@jax.custom_jvp
def ej(x):
    return jnp.exp(jnp.round(x * 1e6) / 1e6)


ej.defjvps(lambda t, ans, x: t * ans)

x = 0.5
bad = False
for be in ["interpreter", "numba"]:
    got, ref = sg.hessian(e, backend=be)(x), jax.hessian(ej)(x)
    print(be, "hessian: symgrad", got, "jax", ref)
    bad |= not np.isclose(got, ref)
sys.exit(1 if bad else 0)
