import numpy as np, symgrad as sg
class Cfg:
    k = 2.0
def helper(x):
    return x * Cfg.k
def f(x):  # names __call__ and reaches a class object: Cfg.__call__ is new at every read
    return np.sum(helper.__call__(x) * Cfg.__dict__["k"])
x = np.array([1.0, 2.0])
y, pb = sg.vjp(f, x, backend="interpreter")
print(pb(1.0))
Cfg.k = 3.0
print(sg.grad(f, backend="interpreter")(x), "want", [9.0, 9.0])
