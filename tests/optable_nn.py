"""Op table records (tests/optable.py): convolutions, pooling, folding, padding,
interpolation, normalization, attention, embedding and the losses with class targets
(torch.nn.functional). Inputs are 3 x standard normal."""

from __future__ import annotations

from optable import add

# (function, input shapes, options)
_CALLS = [
    ("conv1d", [(2, 3, 9), (4, 3, 3)], dict(stride=2, padding=2)),
    ("conv2d", [(2, 3, 7, 6), (4, 3, 3, 2)], {}),
    ("conv2d", [(2, 4, 7, 6), (6, 2, 3, 2), (6,)], dict(stride=2, padding=1, dilation=(2, 1),
                                                       groups=2)),
    ("conv2d", [(3, 7, 6), (6, 3, 3, 3)], dict(padding="same")),
    ("conv3d", [(1, 2, 5, 4, 5), (3, 2, 2, 3, 2)], dict(stride=(1, 2, 1), padding=1)),
    ("conv_transpose1d", [(2, 3, 5), (3, 2, 4)], dict(stride=3)),
    ("conv_transpose2d", [(2, 4, 4, 5), (4, 3, 3, 2), (3,)], dict(stride=2, padding=1,
                                                                  output_padding=1)),
    ("conv_transpose2d", [(2, 4, 4, 5), (4, 2, 3, 3)], dict(stride=(2, 3), padding=(0, 1),
                                                            groups=2, dilation=2)),
    ("conv_transpose3d", [(1, 2, 3, 3, 2), (2, 2, 2, 2, 2)], dict(stride=2)),
    ("max_pool1d", [(2, 3, 9)], dict(kernel_size=3, return_indices=True)),
    ("max_pool2d", [(2, 3, 7, 6)], dict(kernel_size=3, stride=2, padding=1)),
    ("max_pool2d", [(2, 3, 9, 8)], dict(kernel_size=3, stride=2, dilation=2, padding=1,
                                        ceil_mode=True, return_indices=True)),
    ("max_pool3d", [(1, 2, 5, 4, 5)], dict(kernel_size=2, return_indices=True)),
    ("avg_pool1d", [(2, 3, 7)], dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("avg_pool2d", [(2, 3, 7, 6)], dict(kernel_size=3, stride=2, padding=1,
                                        count_include_pad=False, ceil_mode=True)),
    ("avg_pool2d", [(2, 3, 7, 6)], dict(kernel_size=3, divisor_override=2)),
    ("avg_pool3d", [(1, 2, 5, 4, 5)], dict(kernel_size=2, stride=1)),
    ("adaptive_avg_pool1d", [(2, 3, 7)], dict(output_size=5)),
    ("adaptive_avg_pool2d", [(2, 3, 7, 6)], dict(output_size=(3, 4))),
    ("adaptive_avg_pool3d", [(1, 2, 5, 4, 3)], dict(output_size=(2, 3, 2))),
    ("adaptive_max_pool1d", [(2, 3, 7)], dict(output_size=3, return_indices=True)),
    ("adaptive_max_pool2d", [(2, 3, 7, 6)], dict(output_size=(3, 4), return_indices=True)),
    ("adaptive_max_pool3d", [(1, 2, 5, 4, 3)], dict(output_size=(2, 3, 2))),
    ("unfold", [(2, 3, 6, 5)], dict(kernel_size=(2, 3), dilation=(1, 2), padding=1,
                                    stride=(2, 1))),
    ("unfold", [(3, 4, 4)], dict(kernel_size=2)),
    ("fold", [(2, 12, 12)], dict(output_size=(5, 6), kernel_size=2, padding=1, stride=2)),
    ("fold", [(8, 9)], dict(output_size=4, kernel_size=2, stride=1)),
    ("pad", [(2, 3, 5, 6)], dict(pad=(1, 2, 2, 1), mode="constant", value=3.0)),
    ("pad", [(2, 3, 5, 6)], dict(pad=(1, -2, 2, 1, 0, 1))),
    ("pad", [(2, 3, 5, 6)], dict(pad=(1, 2, 2, 1), mode="reflect")),
    ("pad", [(2, 3, 5, 6)], dict(pad=(1, 2, 2, 1), mode="replicate")),
    ("pad", [(2, 3, 5, 6)], dict(pad=(1, 2, 2, 1), mode="circular")),
    ("interpolate", [(2, 3, 5)], dict(size=8, mode="linear")),
    ("interpolate", [(2, 3, 4, 5)], dict(scale_factor=2, mode="bilinear", align_corners=True)),
    ("interpolate", [(2, 3, 4, 5)], dict(scale_factor=0.6, mode="bilinear")),
    ("interpolate", [(2, 3, 4, 5)], dict(size=(7, 9), mode="bicubic")),
    ("interpolate", [(2, 3, 4, 5)], dict(scale_factor=1.5, mode="nearest")),
    ("interpolate", [(2, 3, 4, 5)], dict(size=(3, 8), mode="nearest-exact")),
    ("interpolate", [(1, 2, 3, 4, 5)], dict(size=(5, 3, 6), mode="trilinear")),
    ("layer_norm", [(2, 3, 4), (3, 4), (3, 4)], dict(normalized_shape=(3, 4))),
    ("group_norm", [(2, 6, 4), (6,), (6,)], dict(num_groups=3)),
    ("instance_norm", [(2, 3, 5)], {}),
    ("scaled_dot_product_attention", [(2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 4)], {}),
    ("scaled_dot_product_attention", [(2, 3, 5, 4)] * 3, dict(is_causal=True)),
    ("scaled_dot_product_attention", [(2, 5, 4), (2, 6, 4), (2, 6, 4), (5, 6)], {}),
]
# keyword options that PyTorch takes positionally after the tensors
_AFTER = {"layer_norm": "normalized_shape", "group_norm": "num_groups"}
# PyTorch's double backward of these raises or is not implemented on CPU
_NO_GRADGRAD = {"scaled_dot_product_attention"}  # CPU flash attention's backward: none


def _call(F, name, tensors, options):
    options = dict(options)
    if name == "scaled_dot_product_attention" and len(tensors) == 4:
        *tensors, mask = tensors
        options["attn_mask"] = mask
    if name in _AFTER:
        return getattr(F, name)(tensors[0], options.pop(_AFTER[name]), *tensors[1:], **options)
    return getattr(F, name)(*tensors, **options)


for _k, (_name, _shapes, _options) in enumerate(_CALLS):
    add(f"F.{_name}-{_k}", lambda L, *xs, n=_name, o=_options: _call(L.nn.functional, n, xs, o),
        samples=(tuple(_shapes),), domain="normal3", gradgrad=_name not in _NO_GRADGRAD,
        covers=(f"F.{_name}",))


def _unpool(d, options, size):
    def op(L, x):
        F = L.nn.functional
        pooled, indices = getattr(F, f"max_pool{d}d")(x, return_indices=True, **options)
        return getattr(F, f"max_unpool{d}d")(pooled * 2, indices, output_size=size, **options)
    return op


for _d, _shape, _options, _size in [(1, (2, 3, 9), dict(kernel_size=3), [10]),
                                    (2, (2, 3, 6, 6), dict(kernel_size=2, stride=2, padding=1),
                                     [7, 7]),
                                    (3, (1, 2, 4, 6, 4), dict(kernel_size=2), [5, 7, 5])]:
    add(f"F.max_unpool{_d}d", _unpool(_d, _options, _size), samples=((_shape,),),
        domain="normal3", covers=(f"F.max_unpool{_d}d", f"F.max_pool{_d}d"))


def _batch_norm(L, x, w, b):
    F = L.nn.functional
    mean, var = L.zeros(3, dtype=x.dtype), L.ones(3, dtype=x.dtype)
    train = F.batch_norm(x, mean, var, w, b, training=True, momentum=0.3)
    return train, mean, var, F.batch_norm(x, mean, var, w, b, training=False)


add("F.batch_norm", _batch_norm, samples=(((4, 3, 5), (3,), (3,)), ((4, 3), (3,), (3,))),
    domain="normal3")


def _instance_norm(L, x, w, b):  # PyTorch's positional order; the running stats twice updated
    F = L.nn.functional
    mean, var = L.zeros(3, dtype=x.dtype), L.ones(3, dtype=x.dtype)
    first = F.instance_norm(x, mean, var, w, b, momentum=0.3)
    second = F.instance_norm(x * 2 + 1, mean, var, w, b, True, 0.3)
    return (first, second, mean, var, F.instance_norm(x, mean, var, w, b, use_input_stats=False))


add("F.instance_norm", _instance_norm, samples=(((4, 3, 5), (3,), (3,)),
                                                 ((2, 3, 2, 3), (3,), (3,))), domain="normal3")
add("F.embedding", lambda L, w: (L.nn.functional.embedding(L.tensor([[1, 0, 3], [3, 2, 0]]), w,
                                                           padding_idx=0),
                                 L.nn.functional.embedding(L.tensor(2), w)),
    samples=(((4, 5),),))
add("F.one_hot", lambda L: (L.nn.functional.one_hot(L.tensor([0, 2, 1]), 3),
                            L.nn.functional.one_hot(L.tensor([[1], [3]]))),
    samples=((),), dtypes=("float64",), grad=False)
_TARGET = [1, 0, 3]
add("F.cross_entropy", lambda L, x, w: (
    L.nn.functional.cross_entropy(x, L.tensor(_TARGET)),
    L.nn.functional.cross_entropy(x, L.tensor(_TARGET), weight=w.detach(), label_smoothing=0.1),
    L.nn.functional.cross_entropy(x, L.tensor([1, -100, 2]), reduction="none"),
    L.nn.functional.cross_entropy(x, x.softmax(1).detach()),
    L.nn.functional.cross_entropy(x[0], L.tensor(2))),
    samples=(((3, 4), (4,)),), domain=("real", "positive"))
add("F.nll_loss", lambda L, x, w: (L.nn.functional.nll_loss(x, L.tensor(_TARGET)),
                                   L.nn.functional.nll_loss(x, L.tensor(_TARGET), weight=w.detach(),
                                                            reduction="sum")),
    samples=(((3, 4), (4,)),), domain=("real", "positive"))
add("F.dropout", lambda L, x: (L.nn.functional.dropout(x, 0.5, training=False),
                               L.nn.functional.dropout(x, 0.0)),
    samples=(((3, 4),),))


# -- symgrad/nn/more_functional.py: margin and likelihood losses, pixel shuffle, channel
# dropout, rms_norm, bilinear
def _signs(L, x, n):
    return L.tensor([1.0, -1.0, -1.0, 1.0, 1.0][:n], dtype=x.dtype)


add("F.margin_ranking_loss", lambda L, a, b: (
    L.nn.functional.margin_ranking_loss(a, b, _signs(L, a, 5)),
    L.nn.functional.margin_ranking_loss(a, b, _signs(L, a, 5), margin=0.5, reduction="none")),
    samples=(((5,), (5,)),))
add("F.hinge_embedding_loss", lambda L, x: (
    L.nn.functional.hinge_embedding_loss(x, _signs(L, x, 5)),
    L.nn.functional.hinge_embedding_loss(x, _signs(L, x, 5), margin=0.3, reduction="sum")),
    samples=(((5,),),))
add("F.soft_margin_loss", lambda L, x: L.nn.functional.soft_margin_loss(x, _signs(L, x, 5)),
    samples=(((5,),),))
add("F.cosine_embedding_loss", lambda L, a, b: (
    L.nn.functional.cosine_embedding_loss(a, b, _signs(L, a, 3)),
    L.nn.functional.cosine_embedding_loss(a, b, _signs(L, a, 3), margin=-0.5,
                                          reduction="none"),
    L.nn.functional.cosine_embedding_loss(a[0], b[1], _signs(L, a, 1)[0])),
    samples=(((3, 4), (3, 4)),))
add("F.triplet_margin_loss", lambda L, a, p, n: (
    L.nn.functional.triplet_margin_loss(a, p, n),
    L.nn.functional.triplet_margin_loss(a, p, n, margin=0.5, p=1, swap=True, reduction="none")),
    samples=(((3, 4), (3, 4), (3, 4)),), domain="normal3")
_COUNTS = [[0.0, 1.0, 2.0, 3.0], [4.0, 0.0, 2.0, 5.0], [1.0, 1.0, 3.0, 7.0]]
add("F.poisson_nll_loss", lambda L, x: (
    L.nn.functional.poisson_nll_loss(x, L.tensor(_COUNTS, dtype=x.dtype)),
    L.nn.functional.poisson_nll_loss(x, L.tensor(_COUNTS, dtype=x.dtype), full=True,
                                     reduction="none"),
    L.nn.functional.poisson_nll_loss(x.exp(), L.tensor(_COUNTS, dtype=x.dtype),
                                     log_input=False, reduction="sum")),
    samples=(((3, 4),),))
add("F.gaussian_nll_loss", lambda L, x, y, v: (
    L.nn.functional.gaussian_nll_loss(x, y, v),
    L.nn.functional.gaussian_nll_loss(x, y, v, eps=1.0, full=True, reduction="none"),
    L.nn.functional.gaussian_nll_loss(x, y, v[:, 0]),
    L.nn.functional.gaussian_nll_loss(x, y, v[:, :1], reduction="sum")),
    samples=(((3, 4), (3, 4), (3, 4)),), domain=("real", "real", "positive"))
add("F.multi_margin_loss", lambda L, x, w: (
    L.nn.functional.multi_margin_loss(x, L.tensor(_TARGET)),
    L.nn.functional.multi_margin_loss(x, L.tensor(_TARGET), p=2, margin=0.7, weight=w.detach(),
                                      reduction="none"),
    L.nn.functional.multi_margin_loss(x[1], L.tensor(2))),
    samples=(((3, 4), (4,)),), domain=("real", "positive"),
    gradgrad=False)  # PyTorch: derivative for aten::multi_margin_loss_backward not implemented
add("F.multilabel_soft_margin_loss", lambda L, x, w: (
    L.nn.functional.multilabel_soft_margin_loss(x, (L.tensor(_COUNTS) > 1.5).to(x.dtype)),
    L.nn.functional.multilabel_soft_margin_loss(x, (L.tensor(_COUNTS) > 1.5).to(x.dtype),
                                                weight=w, reduction="none")),
    samples=(((3, 4), (4,)),), domain=("real", "positive"))
add("F.pixel_shuffle", lambda L, x: (L.nn.functional.pixel_shuffle(x, 2),
                                     L.nn.functional.pixel_shuffle(x[0], 2)),
    samples=(((2, 8, 3, 2),),))
add("F.pixel_unshuffle", lambda L, x: (L.nn.functional.pixel_unshuffle(x, 2),
                                       L.nn.functional.pixel_unshuffle(x[0], 3)),
    samples=(((2, 2, 6, 6),),))
for _d, _shape in ((1, (2, 3, 4)), (2, (2, 3, 4, 2)), (3, (2, 3, 2, 2, 2))):
    add(f"F.dropout{_d}d", lambda L, x, d=_d: (
        getattr(L.nn.functional, f"dropout{d}d")(x, 0.5, training=False),
        getattr(L.nn.functional, f"dropout{d}d")(x, 0.0)), samples=((_shape,),))
add("F.rms_norm", lambda L, x, w: (L.nn.functional.rms_norm(x, (3, 4), w),
                                   L.nn.functional.rms_norm(x, [4], eps=1e-3)),
    samples=(((2, 3, 4), (3, 4)),))
add("F.bilinear", lambda L, a, b, w, c: (L.nn.functional.bilinear(a, b, w, c),
                                         L.nn.functional.bilinear(a[0], b[0], w)),
    samples=(((3, 4), (3, 5), (2, 4, 5), (2,)),))
_BAG = [1, 2, 4, 5, 4, 3, 2, 0]


def _embedding_bag(L, w):
    F, bag = L.nn.functional, L.tensor(_BAG)
    return (F.embedding_bag(bag, w, L.tensor([0, 2, 2, 5])),  # an empty bag: zeros
            F.embedding_bag(bag, w, L.tensor([0, 2, 2, 5]), mode="sum", padding_idx=2),
            F.embedding_bag(bag, w, L.tensor([0, 3, 3, 5]), mode="max", padding_idx=4),
            F.embedding_bag(bag.reshape(2, 4), w, mode="max"),
            F.embedding_bag(bag[:5], w, L.tensor([0, 2, 5]), mode="sum",
                            include_last_offset=True,
                            per_sample_weights=L.arange(1.0, 6.0).to(w.dtype)))


add("F.embedding_bag", _embedding_bag, samples=(((6, 3),),))
