"""NaN handling differs silently: x.relu()/F.relu/nn.ReLU and F.threshold turn NaN into 0 / the
fill value (PyTorch propagates NaN, so a diverged net shows NaN loss); x.topk ignores NaN
(PyTorch ranks NaN largest). Also sign(NaN): symgrad NaN, PyTorch 0; max_pool NaN-window index."""
import numpy as np
from _h import main
X = np.array([[1.0, np.nan, 3.0, -np.inf], [2.0, 5.0, np.nan, 0.0], [-np.inf, -np.inf, 4.0, 1.0]])
def t(expr):
    def f(L, dt):
        x = L.tensor(X, dtype=dt); F = L.nn.functional  # noqa
        r = eval(expr)
        return list(r) if isinstance(r, tuple) else [r]
    return f
E = ["x.relu()", "F.relu(x)", "L.nn.ReLU()(x)", "F.threshold(x, 1.5, -1.0)", "x.topk(2, -1)", "x.sign()",
     "F.max_pool2d(x[None, None], 2, stride=1, return_indices=True)[1]"]
main([(e, t(e), dt) for e in E for dt in ["float64", "float32"]])
