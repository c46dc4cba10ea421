import numpy as np, symgrad as sg
sg.config.tiered = False
x = np.array([-27.0, -8.0, 27.0, 8.0, -0.0, 1e-300, -64.0, 2.0, -2.0, 1000.0, -1000.0])
got = sg.jit(lambda x: np.cbrt(x))(x)
want = np.cbrt(x)
for a, b, c in zip(x, got, want):
    print(a, repr(b), repr(c), "" if b == c and np.signbit(b) == np.signbit(c) else "DIFF")
print(sg.jit(lambda x: np.cbrt(x)).source(x)[-600:])
