import numpy as np
from _h import main
rng = np.random.default_rng(4)
X = rng.standard_normal((2, 4, 6, 5)); W = rng.standard_normal((4, 2, 2, 3))
def dbl(body):
    def f(L, dt):
        x = L.tensor(X, dtype=dt, requires_grad=True); w = L.tensor(W, dtype=dt, requires_grad=True)
        y = body(L, x, w)
        gx, gw = L.autograd.grad((y ** 3).sum(), [x, w], create_graph=True, allow_unused=True, materialize_grads=True)
        (gx.sin().sum() + (gw * gw).sum()).backward()
        return [y, gx, gw, x.grad, w.grad]
    return f
F = lambda L: L.nn.functional
bodies = {
 "conv groups": lambda L, x, w: F(L).conv2d(x, w, stride=(1, 2), padding=(1, 1), dilation=(2, 1), groups=2),
 "convT groups": lambda L, x, w: F(L).conv_transpose2d(x, w, stride=2, padding=1, groups=2, output_padding=1),
 "maxpool": lambda L, x, w: F(L).max_pool2d(x * w.sum(), 3, stride=2, padding=1, ceil_mode=True),
 "avgpool": lambda L, x, w: F(L).avg_pool2d(x * w.mean(), 3, stride=2, padding=1, count_include_pad=False),
 "adaptmax": lambda L, x, w: F(L).adaptive_max_pool2d(x * w.sum(), (4, 3)),
 "interp bicubic": lambda L, x, w: F(L).interpolate(x * w.sum(), scale_factor=1.5, mode="bicubic", align_corners=False),
 "interp nearest": lambda L, x, w: F(L).interpolate(x * w.sum(), size=(4, 7), mode="nearest"),
 "sdpa": lambda L, x, w: F(L).scaled_dot_product_attention(x, x * w.sum(), x.flip(-1), attn_mask=(x[0, 0, :, :1] > 0) | True if False else None, is_causal=False),
 "sdpa causal": lambda L, x, w: F(L).scaled_dot_product_attention(x, x * w.sum(), x.flip(-1), is_causal=True),
 "pad reflect": lambda L, x, w: F(L).pad(x * w.sum(), (2, 1, 1, 2), mode="reflect"),
 "unfold": lambda L, x, w: F(L).unfold(x * w.sum(), (2, 3), stride=(2, 1), padding=1),
 "gn": lambda L, x, w: F(L).group_norm(x, 2, weight=w[:, 0, 0, 0], bias=w[:, 0, 1, 1]),
 "ln": lambda L, x, w: F(L).layer_norm(x, (6, 5), weight=w.reshape(4, 6)[:, :5].repeat(2, 1)[:6], eps=1e-3) if False else F(L).layer_norm(x, (5,), weight=w[0, 0, 0, :3].repeat(2)[:5] if False else None),
 "softplus ce": lambda L, x, w: F(L).cross_entropy(x * w.sum(), L.tensor(np.zeros((2, 6, 5), np.int64)), label_smoothing=0.1, reduction="none"),
}
main([(n, dbl(b), dt) for n, b in bodies.items() for dt in ["float64", "float32"]])
