import numpy as np, symgrad as sg, collections
P = collections.namedtuple("P", "a b")
x = np.array([0.5, 1.5])
y, pb = sg.vjp(lambda x: P(np.sin(x), {"k": x[0] * x[1]}), x, backend="interpreter")
print(type(y), y)
print(pb(P(np.ones(2), {"k": 1.0})), "want", np.cos(x) + x[::-1])
