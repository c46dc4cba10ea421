"""Op table records (tests/optable.py) of torch.nn pieces a later round of issue 27 added:
max pooling of windows holding NaNs (PyTorch's index: the last NaN), F.pad with negative
pads in every mode, F.interpolate(mode='area'), huber_loss, kl_div, pairwise_distance,
rrelu, Softmax2d, the InstanceNorm modules, MultiheadAttention with kdim/vdim and
scaled_dot_product_attention with enable_gqa."""

from __future__ import annotations

from optable import add

NAN = float("nan")


def _nans(L, x):
    """``x`` with NaNs in every third element (several in a window), a mask as data."""
    mask = L.tensor((L.arange(x.numel()) % 3 == 1).reshape(x.shape).numpy())
    return L.where(mask, L.tensor(NAN, dtype=x.dtype), x)


def _pool_nans(L, x):
    F = L.nn.functional
    y = _nans(L, x)
    return (F.max_pool1d(y[0], 3, return_indices=True),
            F.max_pool2d(y, 3, stride=2, padding=1, return_indices=True),
            F.max_pool3d(y[:, None], (1, 2, 3), return_indices=True),
            F.adaptive_max_pool2d(y, (2, 3), return_indices=True),
            F.max_pool2d(y, 2))


add("max_pool(NaN)", _pool_nans, samples=(((2, 3, 6, 7),),), domain="normal3",
    covers=())
add("F.pad(negative)", lambda L, x: tuple(
    L.nn.functional.pad(x, pads, mode=mode)
    for mode in ("reflect", "replicate", "circular")
    for pads in ((-1, 2, 1, -2), (2, -1, -3, 0), (-2, -1, 0, 2))),
    samples=(((2, 3, 5, 6),),), domain="normal3", covers=(),
    full_only=("gradgrad",))  # (linear: the F.pad records' double backward in CI)
add("F.interpolate(area)", lambda L, x: (
    L.nn.functional.interpolate(x, size=(3, 4), mode="area"),
    L.nn.functional.interpolate(x, scale_factor=0.7, mode="area"),
    L.nn.functional.interpolate(x[:, :, 0], size=4, mode="area"),
    L.nn.functional.interpolate(x[:, :, None], scale_factor=(1, 1.5, 0.5), mode="area")),
    samples=(((2, 3, 5, 7),),), domain="normal3", covers=())


def _losses(L, x, y, w):
    F = L.nn.functional
    p = y.softmax(-1)
    return (F.huber_loss(x, y), F.huber_loss(x, y, delta=0.5, reduction="sum"),
            F.huber_loss(x, y, reduction="none", delta=2.0), F.huber_loss(x, y, weight=w),
            L.nn.HuberLoss(delta=0.3)(x, y),
            F.kl_div(x.log_softmax(-1), p, reduction="batchmean"),
            F.kl_div(x.log_softmax(-1), p.log(), reduction="sum", log_target=True),
            F.kl_div(x, p, reduction="none"), F.kl_div(x, y.exp(), reduction="mean"),
            L.nn.KLDivLoss(reduction="batchmean", log_target=True)(x, y))


add("F.huber_loss, F.kl_div", _losses, samples=(((3, 4), (3, 4), (3, 4)),),
    domain=("normal3", "normal3", "positive"), covers=("F.huber_loss", "F.kl_div"))
add("F.kl_div(zero target)", lambda L, x: L.nn.functional.kl_div(
    x, L.tensor([[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]], dtype=x.dtype), reduction="none"),
    samples=(((2, 3),),), covers=())
add("F.pairwise_distance", lambda L, x, y: (
    L.nn.functional.pairwise_distance(x, y), L.nn.functional.pairwise_distance(x, y, p=1.0),
    L.nn.functional.pairwise_distance(x, y[0], p=3.0, keepdim=True),
    L.nn.functional.pairwise_distance(x[0], y[0], eps=0.0),
    L.nn.PairwiseDistance(p=float("inf"))(x, y)),
    samples=(((3, 4), (3, 4)),), domain="normal3")
add("F.rrelu", lambda L, x: (L.nn.functional.rrelu(x), L.nn.functional.rrelu(x, 0.1, 0.5),
                             L.nn.RReLU(0.2, 0.3).eval()(x),
                             L.nn.functional.rrelu(x * 1, training=False, inplace=True)),
    samples=(((3, 4),),), domain="kinks", covers=("F.rrelu", "F.rrelu_"))
add("nn.Softmax2d", lambda L, x: (L.nn.Softmax2d()(x), L.nn.Softmax2d()(x[0])),
    samples=(((2, 3, 4, 2),),), covers=())


def _instance_norms(L, x):
    """The modules (affine, tracked statistics: two training calls, then evaluation;
    unbatched input) on the same data in 1, 2 and 3 spatial dims."""
    outs = []
    for cls, y in ((L.nn.InstanceNorm1d, x[:, :, 0]), (L.nn.InstanceNorm2d, x),
                   (L.nn.InstanceNorm3d, x[:, :, None])):
        m = cls(3, momentum=0.3, affine=True, track_running_stats=True)
        outs += [m(y), m(y * 2 + 1), m.running_mean, m.running_var, m.eval()(y),
                 cls(3)(y), cls(3, momentum=None, track_running_stats=True)(y[0])]
    return tuple(outs)


add("nn.InstanceNorm", _instance_norms, samples=(((2, 3, 4, 5),),), domain="normal3",
    dtypes=("float64",), covers=(), full_only=("gradgrad",))  # (F.instance_norm's: CI)


def _mha(L, q, k, v):
    """kdim and vdim other than embed_dim: separate projections, PyTorch's names (weights
    set from one stream, in named_parameters' order)."""
    import numpy as np
    m = L.nn.MultiheadAttention(4, 2, kdim=3, vdim=5, batch_first=True)
    rng = np.random.default_rng(0)
    with L.no_grad():
        for _, p in m.named_parameters():
            p.copy_(L.tensor(rng.standard_normal(tuple(p.shape)) * 0.5))
    names = [n for n, _ in m.named_parameters()]
    assert names == ["q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias",
                     "out_proj.weight", "out_proj.bias"], names
    return m(q, k, v) + m(q[0], k[0], v[0], need_weights=False)[:1]


add("nn.MultiheadAttention(kdim, vdim)", _mha, samples=(((2, 3, 4), (2, 6, 3), (2, 6, 5)),),
    domain="normal3", dtypes=("float64",), gradgrad=False, covers=())  # (PyTorch: none)
add("F.scaled_dot_product_attention(gqa)", lambda L, q, k, v: (
    L.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True),
    L.nn.functional.scaled_dot_product_attention(q, k[:, :1], v[:, :1], enable_gqa=True,
                                                 is_causal=True)),
    samples=(((2, 4, 3, 2), (2, 2, 5, 2), (2, 2, 5, 3)),), domain="normal3", gradgrad=False,
    covers=())  # (CPU attention's double backward: none in PyTorch)
