import numpy as np, symgrad as sg, collections
P = collections.namedtuple("P", "a b")
x = np.array([0.5, 1.5])
for B in ["interpreter", "numba"]:
    sg.config.tiered = False
    r = sg.jit(lambda x: {"s": np.sum(x), "n": None, "t": (x * 2, [x[0], 3.0]), "p": P(x, 1)}, backend=B)(x)
    print(B, r)
    r2 = sg.vjp(lambda x: P(np.sin(x), {"k": x[0] * x[1]}), x, backend=B)
    print(B, r2[1](P(np.ones(2), {"k": 1.0})), np.cos(x) + x[::-1])
    v = sg.vmap(lambda x: {"a": x * 2, "b": np.sum(x)})(np.stack([x, x + 1]))
    print(B, v)
