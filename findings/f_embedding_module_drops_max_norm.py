"""nn.Embedding(max_norm=..., scale_grad_by_freq=True) silently ignores both options:
Embedding.forward calls F.embedding(input, weight, padding_idx) only (symgrad/nn/spatial.py),
so rows are not renormalised (and the weight is not renormalised in place) and repeated
indices' grads are not divided by their frequency. F.embedding itself raises for these."""
import numpy as np
from _h import main
W = np.random.default_rng(0).standard_normal((6, 3)) * 2
def prog(**kw):
    def f(L, dt):
        e = L.nn.Embedding(6, 3, **kw).to(dt)
        with L.no_grad():
            e.weight.copy_(L.tensor(W, dtype=dt))
        y = e(L.tensor([[0, 2, 2], [5, 1, 2]]))
        (y * y.sin()).sum().backward()
        return [y, e.weight.grad, e.weight]
    return f
main([(f"Embedding {k}", prog(**{k: v}), dt) for k, v in [("max_norm", 1.0), ("scale_grad_by_freq", True)]
      for dt in ["float64", "float32"]])
