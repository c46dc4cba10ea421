import numpy as np
from _h import main
X = np.random.default_rng(0).standard_normal((3, 4)) * 2
def mod(name, *a, **k):
    def f(L, dt):
        x = L.tensor(X, dtype=dt, requires_grad=True)
        y = getattr(L.nn, name)(*a, **k)(x)
        (y * y.sin()).sum().backward(); return [y, x.grad]
    return f
cases = []
for dt in ["float64", "float32"]:
    cases += [(f"{n} {a} {k}", mod(n, *a, **k), dt) for n, a, k in [
        ("CELU", (2.0,), {}), ("CELU", (), dict(alpha=0.5)), ("GELU", ("tanh",), {}), ("GELU", (), dict(approximate="tanh")),
        ("GLU", (0,), {}), ("GLU", (), dict(dim=0)), ("Hardshrink", (1.1,), {}), ("Hardtanh", (-2.0, 1.0), {}),
        ("Hardtanh", (), dict(min_val=-0.3, max_val=3.0)), ("Softmin", (0,), {}), ("Softmin", (), dict(dim=1)),
        ("Softshrink", (1.2,), {}), ("Threshold", (0.1, 20.0), {}), ("ELU", (0.3,), {}), ("LeakyReLU", (0.2,), {}),
        ("Softplus", (2.0, 1.0), {}), ("Softmax", (0,), {}), ("LogSoftmax", (0,), {}), ("PReLU", (), {}),
        ("ReLU6", (True,), {}), ("SiLU", (True,), {}), ("Hardswish", (), {}), ("Mish", (), {}), ("SELU", (), {}),
        ("Hardsigmoid", (), {}), ("Softsign", (), {}), ("Tanhshrink", (), {}), ("LogSigmoid", (), {}),
    ]]
main(cases)
