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
    samples=(((2, 3, 5, 6),),), domain="normal3", covers=())
add("F.interpolate(area)", lambda L, x: (
    L.nn.functional.interpolate(x, size=(3, 4), mode="area"),
    L.nn.functional.interpolate(x, scale_factor=0.7, mode="area"),
    L.nn.functional.interpolate(x[:, :, 0], size=4, mode="area"),
    L.nn.functional.interpolate(x[:, :, None], scale_factor=(1, 1.5, 0.5), mode="area")),
    samples=(((2, 3, 5, 7),),), domain="normal3", covers=())
