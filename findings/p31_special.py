import numpy as np, symgrad as sg, jax, jax.numpy as jnp, scipy.special as ss
jax.config.update("jax_enable_x64", True)
B = "interpreter"
def cmp(name, a, b):
    la = jax.tree_util.tree_leaves(a); lb = jax.tree_util.tree_leaves(b)
    ok = len(la) == len(lb) and all(np.shape(u) == np.shape(v) and np.allclose(u, v, rtol=1e-8, atol=1e-10, equal_nan=True) for u, v in zip(la, lb))
    print("OK " if ok else "BAD", name, "" if ok else (a, b))
x = np.array([0.3, -1.2, 2.0]); bb = np.array([1.0, -0.5, 0.25])
cmp("lse b neg", sg.grad(lambda x, b: sg.scipy.special.logsumexp(x, b=b, return_sign=True)[0], argnums=(0, 1), backend=B)(x, bb),
    jax.grad(lambda x, b: jax.scipy.special.logsumexp(x, b=b, return_sign=True)[0], argnums=(0, 1))(x, bb))
cmp("lse axis keepdims", sg.grad(lambda x: np.sum(sg.scipy.special.logsumexp(x.reshape(1, 3) * x[:, None], axis=1, keepdims=True) ** 2), backend=B)(x),
    jax.grad(lambda x: jnp.sum(jax.scipy.special.logsumexp(x.reshape(1, 3) * x[:, None], axis=1, keepdims=True) ** 2))(x))
cmp("softmax axis None", sg.grad(lambda x: np.sum(sg.scipy.special.softmax(np.outer(x, x)) * np.arange(9.).reshape(3, 3)), backend=B)(x),
    jax.grad(lambda x: jnp.sum(jax.scipy.special.softmax(jnp.outer(x, x), axis=None) * jnp.arange(9.).reshape(3, 3)))(x))
cmp("gammaln neg", sg.grad(lambda x: np.sum(ss.gammaln(x)), backend=B)(np.array([-0.5, 2.5])), jax.grad(lambda x: jnp.sum(jax.scipy.special.gammaln(x)))(np.array([-0.5, 2.5])))
cmp("xlog1py", sg.grad(lambda x, y: np.sum(ss.xlog1py(x, y)), argnums=(0, 1), backend=B)(np.array([0.0, 2.0]), np.array([-1.0, 0.5])),
    jax.grad(lambda x, y: jnp.sum(jax.scipy.special.xlog1py(x, y)), argnums=(0, 1))(np.array([0.0, 2.0]), np.array([-1.0, 0.5])))
cmp("erfinv", sg.grad(lambda x: np.sum(ss.erfinv(x)), backend=B)(np.array([0.1, -0.9])), jax.grad(lambda x: jnp.sum(jax.scipy.special.erfinv(x)))(np.array([0.1, -0.9])))
cmp("i1e", sg.grad(lambda x: np.sum(ss.i1e(x)), backend=B)(np.array([0.1, -3.0, 25.0])), jax.grad(lambda x: jnp.sum(jax.scipy.special.i1e(x)))(np.array([0.1, -3.0, 25.0])))
cmp("polygamma 2", sg.grad(lambda x: np.sum(sg.scipy.special.polygamma(2, x)), backend=B)(np.array([0.7, 3.0])), jax.grad(lambda x: jnp.sum(jax.scipy.special.polygamma(2, x)))(np.array([0.7, 3.0])))
cmp("betaln", sg.grad(lambda a, b: np.sum(ss.betaln(a, b)), argnums=(0, 1), backend=B)(np.array([0.7, 3.0]), np.array([2.0, 0.4])), jax.grad(lambda a, b: jnp.sum(jax.scipy.special.betaln(a, b)), argnums=(0, 1))(np.array([0.7, 3.0]), np.array([2.0, 0.4])))
cmp("zeta q", sg.grad(lambda q: np.sum(sg.scipy.special.zeta(3.0, q)), backend=B)(np.array([0.7, 3.0])), jax.grad(lambda q: jnp.sum(jax.scipy.special.zeta(3.0, q)))(np.array([0.7, 3.0])))
cmp("ndtr", sg.grad(lambda x: np.sum(ss.ndtr(x)), backend=B)(x), jax.grad(lambda x: jnp.sum(jax.scipy.special.ndtr(x)))(x))
cmp("logit", sg.grad(lambda x: np.sum(ss.logit(x)), backend=B)(np.array([0.2, 0.9])), jax.grad(lambda x: jnp.sum(jax.scipy.special.logit(x)))(np.array([0.2, 0.9])))
cmp("norm.logcdf tail", sg.grad(lambda x: np.sum(sg.scipy.stats.norm.logcdf(x, 0.5, 2.0)), backend=B)(np.array([-60.0, -25.0, 0.0, 8.0])), jax.grad(lambda x: jnp.sum(jax.scipy.stats.norm.logcdf(x, 0.5, 2.0)))(np.array([-60.0, -25.0, 0.0, 8.0])))
cmp("t.logpdf", sg.grad(lambda x, df: np.sum(sg.scipy.stats.t.logpdf(x, df, 0.3, 1.5)), argnums=(0, 1), backend=B)(x, 3.5), jax.grad(lambda x, df: jnp.sum(jax.scipy.stats.t.logpdf(x, df, 0.3, 1.5)), argnums=(0, 1))(x, 3.5))
cmp("gamma.logpdf", sg.grad(lambda a, s: np.sum(sg.scipy.stats.gamma.logpdf(np.array([0.5, 2.0]), a, 0.1, s)), argnums=(0, 1), backend=B)(2.5, 1.5), jax.grad(lambda a, s: jnp.sum(jax.scipy.stats.gamma.logpdf(jnp.array([0.5, 2.0]), a, 0.1, s)), argnums=(0, 1))(2.5, 1.5))
cmp("beta.logpdf", sg.grad(lambda a, b: np.sum(sg.scipy.stats.beta.logpdf(np.array([0.2, 0.7]), a, b)), argnums=(0, 1), backend=B)(2.5, 1.5), jax.grad(lambda a, b: jnp.sum(jax.scipy.stats.beta.logpdf(jnp.array([0.2, 0.7]), a, b)), argnums=(0, 1))(2.5, 1.5))
cmp("poisson.logpmf", sg.grad(lambda mu: np.sum(sg.scipy.stats.poisson.logpmf(np.array([0.0, 3.0]), mu)), backend=B)(2.5), jax.grad(lambda mu: jnp.sum(jax.scipy.stats.poisson.logpmf(jnp.array([0.0, 3.0]), mu)))(2.5))
cmp("mvn logpdf", sg.grad(lambda m, c: sg.scipy.stats.multivariate_normal.logpdf(x, m, c), argnums=(0, 1), backend=B)(x * 0.5, np.eye(3) * 2 + 0.1),
    jax.grad(lambda m, c: jax.scipy.stats.multivariate_normal.logpdf(x, m, c), argnums=(0, 1))(x * 0.5, np.eye(3) * 2 + 0.1))
cmp("dirichlet logpdf", sg.grad(lambda a: sg.scipy.stats.dirichlet.logpdf(np.array([0.2, 0.3, 0.5]), a), backend=B)(np.array([1.5, 2.0, 0.7])),
    jax.grad(lambda a: jax.scipy.stats.dirichlet.logpdf(jnp.array([0.2, 0.3, 0.5]), a))(np.array([1.5, 2.0, 0.7])))
