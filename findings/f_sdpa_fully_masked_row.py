"""F.scaled_dot_product_attention with a bool attn_mask where one query row masks every key:
PyTorch 2.13 returns 0 for that row (safe softmax) and finite grads; symgrad returns NaN for the
row and NaN in key.grad/value.grad *everywhere* (the NaN leaks into the healthy rows' grads)."""
import numpy as np
from _h import main
rng = np.random.default_rng(0)
Q = rng.standard_normal((1, 1, 2, 3)); K = rng.standard_normal((1, 1, 3, 3))
M = np.array([[True, False, True], [False, False, False]])
def prog(L, dt):
    q = L.tensor(Q, dtype=dt, requires_grad=True); k = L.tensor(K, dtype=dt, requires_grad=True)
    y = L.nn.functional.scaled_dot_product_attention(q, k, k, attn_mask=L.tensor(M))
    y.sum().backward()
    return [y, q.grad, k.grad]
main([("sdpa fully masked row", prog, "float64"), ("sdpa fully masked row", prog, "float32")])
