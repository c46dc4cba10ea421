import numpy as np, symgrad as sg, sys, functools
B = sys.argv[1] if len(sys.argv) > 1 else "interpreter"
def chk(name, got, want):
    ok = np.allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float))
    print("OK " if ok else "BAD", name, "" if ok else (got, want))
x = np.array([0.5, 1.5])
K = 2.0
def f(x): return np.sum(K * x ** 2)
g1 = sg.jit(sg.grad(f, backend=B), backend=B)
g2 = sg.vmap(sg.grad(f, backend=B))
g3 = sg.grad(lambda x: np.sum(sg.grad(f)(x) ** 2), backend=B)
g4 = sg.hessian(f, backend=B)
inner = sg.grad(f)
g5 = sg.jit(lambda x: inner(x) * 1.0, backend=B)
g6 = sg.jit(functools.partial(lambda c, x: sg.grad(f)(x) * c, 1.0), backend=B)
def run():
    return [g1(x), g2(np.stack([x, x]))[0], g3(x), np.diag(g4(x)), g5(x), g6(x)]
want = lambda: [2 * K * x, 2 * K * x, 8 * K ** 2 * x, [2 * K] * 2, 2 * K * x, 2 * K * x]
for name, a, b in zip("jit(grad) vmap(grad) grad(grad^2) hessian jit(closure grad) jit(partial)".split(), run(), want()): chk(name, a, b)
K = 5.0
for name, a, b in zip("jit(grad) vmap(grad) grad(grad^2) hessian jit(closure grad) jit(partial)".split(), run(), want()): chk(name + " changed", a, b)
# inner transformed function redefined via global rebinding
def helper(x): return x * 2.0
h = sg.jit(lambda x: sg.grad(lambda z: np.sum(helper(z) ** 2))(x), backend=B)
chk("inner helper", h(x), 8 * x)
def helper(x): return x * 3.0
chk("inner helper changed", h(x), 18 * x)
# custom_vjp rule reading a global
S = 1.0
@sg.custom_vjp
def cf(x): return np.sin(x)
cf.defvjp(lambda x: (np.sin(x), x), lambda r, g: (g * np.cos(r) * S,))
gc = sg.jit(sg.grad(lambda x: np.sum(cf(x))), backend=B)
chk("custom rule", gc(x), np.cos(x))
S = 3.0
chk("custom rule global changed", gc(x), 3 * np.cos(x))
