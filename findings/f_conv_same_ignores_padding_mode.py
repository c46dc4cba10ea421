"""nn.Conv1d/2d/3d(padding='same', padding_mode='reflect'|'replicate'|'circular') pads with
ZEROS: _ConvNd.forward (symgrad/nn/spatial.py) takes the zero-padding path whenever padding is a
string, ignoring padding_mode. PyTorch pads with the mode (asymmetric for even kernels)."""
import numpy as np
from _h import main
rng = np.random.default_rng(0)
X = rng.standard_normal((1, 2, 5, 6)); W = rng.standard_normal((3, 2, 3, 2))
def prog(mode):
    def f(L, dt):
        m = L.nn.Conv2d(2, 3, (3, 2), padding="same", padding_mode=mode).to(dt)
        with L.no_grad():
            m.weight.copy_(L.tensor(W, dtype=dt)); m.bias.fill_(0.1)
        x = L.tensor(X, dtype=dt, requires_grad=True)
        y = m(x); (y * y.sin()).sum().backward()
        return [y, x.grad, m.weight.grad]
    return f
def prog1(L, dt):
    m = L.nn.Conv1d(2, 3, 3, padding="same", padding_mode="circular").to(dt)
    with L.no_grad():
        m.weight.copy_(L.tensor(W[:, :, :, 0], dtype=dt)); m.bias.fill_(0.1)
    return [m(L.tensor(X[:, :, 0], dtype=dt))]
main([(f"Conv2d same {m}", prog(m), dt) for m in ["reflect", "replicate", "circular"] for dt in ["float64", "float32"]]
     + [("Conv1d same circular", prog1, "float64")])
