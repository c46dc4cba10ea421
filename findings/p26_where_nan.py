import numpy as np, symgrad as sg
x = np.array([-1.0, 0.0, 4.0])
f = lambda x: np.sum(np.where(x > 0, np.sqrt(x), 0.0))
print("grad", sg.grad(f, backend="interpreter")(x), "want [0 0 0.25]")
print("hess diag", np.diag(sg.hessian(f, backend="interpreter")(x)), "want [0 0 -1/32]", -1 / 32)
print("jacfwd(grad)", np.diag(sg.jacfwd(sg.grad(f), backend="interpreter")(x)))
print("hvp", sg.hvp(f, x, np.ones(3)))
g = lambda x: np.sum(np.where(x > 0, np.log(x) * x, x ** 2))
print("hess log", np.diag(sg.hessian(g, backend="interpreter")(x)), "want [2, 2, 0.25]")
h = lambda x: np.sum(np.where(x < 1e300, x, np.exp(x)))  # overflow in unselected branch
print("grad exp overflow branch", sg.grad(h, backend="interpreter")(np.array([800.0, 1.0])), "want [1,1]")
k = lambda x: np.sum(sg.where(x > 0, 1.0 / x, 0.0) ** 2)
print("grad where 1/x at 0", sg.grad(k, backend="interpreter")(np.array([0.0, 2.0])), "want [0, -0.25]")
print("vmap grad where", sg.vmap(sg.grad(lambda s: np.where(s > 0, np.sqrt(s), 0.0)))(x))
print("numba grad", sg.grad(f)(x), "hess", np.diag(sg.hessian(f)(x)))
# select / piecewise
m = lambda x: np.sum(np.select([x < 0, x > 2], [np.log(-x), np.sqrt(x - 2)], default=x))
print("select", sg.grad(m, backend="interpreter")(np.array([-1.0, 1.0, 6.0])), "want [-1, 1, 0.25]")
n = lambda x: np.sum(np.piecewise(x, [x < 0, x >= 0], [lambda z: np.log(-z), lambda z: np.sqrt(z)])) if hasattr(np, "piecewise") else 0
try: print("piecewise", sg.grad(n, backend="interpreter")(np.array([-1.0, 4.0])))
except Exception as e: print("piecewise EXC", type(e).__name__, str(e)[:100])
