import numpy as np, symgrad as sg
x = np.array([0.3, -0.7, 1.2]); v = np.array([1.0, 2.0, -1.0])
f = lambda x: (np.sin(x) * 2, np.sum(x))
for name, t in [("grad", sg.grad(f, has_aux=True, backend="interpreter")), ("value_and_grad", sg.value_and_grad(f, has_aux=True, backend="interpreter"))]:
    try:
        print(name, t(x, gradient=v), "want grad", 2 * np.cos(x) * v)
    except Exception as e:
        print(name, "EXC", type(e).__name__, e)
    try:
        print(name, "with aux ct", t(x, gradient=(v, 1.0)))
    except Exception as e:
        print(name, "with aux ct EXC", type(e).__name__, e)
