"""F.instance_norm(x, running_mean, running_var): PyTorch's 2nd/3rd positional args are the
running stats (normalise by input stats, update the running stats); symgrad's signature is
(input, weight, bias, eps) so running_mean is taken as the *weight* -> output silently scaled."""
import numpy as np
from _h import main
X = np.random.default_rng(0).standard_normal((2, 3, 5))
def prog(L, dt):
    x = L.tensor(X, dtype=dt, requires_grad=True)
    rm = L.tensor([0.5, -1.0, 2.0], dtype=dt); rv = L.tensor([1.0, 2.0, 3.0], dtype=dt)
    y = L.nn.functional.instance_norm(x, rm, rv)
    (y * y.sin()).sum().backward()
    return [y, x.grad, rm, rv]
main([("instance_norm(x, rm, rv)", prog, "float64"), ("instance_norm(x, rm, rv)", prog, "float32")])
