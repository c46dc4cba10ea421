import numpy as np
from _h import main
X = np.array([[[1.0, np.nan, 3.0, -np.inf], [2.0, 5.0, np.nan, 0.0], [-np.inf, -np.inf, 4.0, 1.0]]])
def t(expr):
    def f(L, dt):
        x = L.tensor(X, dtype=dt); F = L.nn.functional
        r = eval(expr)
        return list(r) if isinstance(r, tuple) else [r]
    return f
E = ["F.max_pool1d(x, 2, return_indices=True)", "F.max_pool2d(x[None], 2, stride=1, return_indices=True)", "F.adaptive_max_pool1d(x, 3, return_indices=True)",
     "F.max_pool1d(x, 3, stride=1, padding=1, return_indices=True)", "x.max(-1)", "x.amax(-1)", "x.argmax(-1)", "x.relu()", "x.clamp(0, 2)", "F.avg_pool1d(x, 2)", "x.sort(-1)", "x.topk(2, -1)",
     "x.softmax(-1)", "x.cummax(-1)", "x.maximum(x.flip(-1))", "x.fmax(x.flip(-1))", "x.nan_to_num()", "x.median(-1)", "F.hardtanh(x)", "F.relu6(x)", "F.leaky_relu(x)", "x.min(-1)", "x.max()", "x.amin(-1)",
     "F.threshold(x, 1.5, -1.0)", "x.logsumexp(-1)", "x.nanmean(-1)", "x.sign()", "x.clamp(min=2)", "x.clip(max=0)"]
main([(e, t(e), dt) for e in E for dt in ["float64", "float32"]])
