import numpy as np, symgrad as sg
x = np.random.default_rng(0).normal(size=(3, 4)); v = np.random.default_rng(1).normal(size=4)
A = x.reshape(3, 2, 2) + 2 * np.eye(2)
for b in [v[:2], v[:4].reshape(2, 2), np.stack([v[:2]] * 3)]:
    f = lambda A, b: np.linalg.solve(A, b)
    try:
        print(b.shape, np.allclose(sg.jit(f, backend="interpreter")(A, b), f(A, b)), f(A, b).shape)
    except Exception as e: print(b.shape, "EXC", e)
