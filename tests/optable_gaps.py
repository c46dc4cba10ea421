"""Op table records (tests/optable.py) of issue 27's late gaps: integer powers with negative
exponents, ``tensordot``, ``block_diag``, ``logspace``, ``linalg.vander``, ``F.pdist``,
the in-place shape methods and the nn functions added with them."""

from __future__ import annotations

from optable import FLOAT, add

BINARY = (((3, 4), (3, 4)), ((3, 1), (4,)), ((), (2, 3)))

# PyTorch's powi: a negative exponent gives 1 for a base of 1, +-1 for -1, 0 otherwise
add("pow(negative integer exponents)", lambda L, x, y: (
    x ** y, L.pow(x, y), x.pow(y), 2 ** y, (-1) ** y, L.pow(1, y), (x * 1).pow_(x * 0 - 1)),
    samples=BINARY, dtypes=("int64", "int8", "int32", "uint8"), grad=False, covers=())

# -- torch.tensordot, torch.block_diag, torch.linalg.vander (symgrad/eager/composite_functions.py)
add("tensordot", lambda L, a, b: (L.tensordot(a, b, dims=([1, 2], [1, 0])), L.tensordot(a, b, 1),
                                  L.tensordot(a[0], b[0], dims=0),
                                  L.tensordot(a, b, dims=([-1], [0]))),
    samples=(((2, 3, 4), (4, 3, 5)),), dtypes=FLOAT + ("int64",), covers=("torch.tensordot",))
add("block_diag", lambda L, a, b, c: (L.block_diag(a, b, c), L.block_diag(c, a),
                                      L.block_diag(b.to(L.int32), c), L.block_diag(a[0, 0])),
    samples=(((2, 3), (4,), ()),), dtypes=FLOAT + ("int64",), covers=("torch.block_diag",))
add("linalg.vander", lambda L, x: (L.linalg.vander(x), L.linalg.vander(x, N=2),
                                   L.linalg.vander(x[0], N=5)),
    samples=(((2, 4),),), dtypes=FLOAT + ("int64", "int32"), covers=("linalg.vander",))
add("logspace", lambda L, x: (L.logspace(0, 2, 5), L.logspace(-3.5, 2.25, 17, base=2),
                              L.logspace(0, 3, 7, base=2, dtype=L.int64),
                              L.logspace(1, -1, 6, dtype=L.float32), L.logspace(1, 1, 1),
                              L.logspace(0, 1, 0)),
    samples=(((1,),),), grad=False, covers=("torch.logspace",))

# -- nn.functional (symgrad/nn/extra_functional.py)
_TIES = [[1.0, 2.0], [1.0, 2.0], [0.0, 1.0], [3.0, 2.0]]
add("F.pdist", lambda L, x: tuple(L.nn.functional.pdist(x, p) for p in
                                  (2.0, 1.0, 0.5, 0.0, float("inf"), 3.0)),
    samples=(((5, 3),), ((1, 3),)), gradgrad=False, covers=("F.pdist",))  # (PyTorch has none)
add("F.pdist(ties)", lambda L, x: tuple(L.nn.functional.pdist(L.tensor(_TIES) + x * 0, p) for p in
                                        (2.0, 1.0, 0.5, 0.0, float("inf"), 3.0)),
    samples=(((4, 2),),), gradgrad=False, covers=())
add("F.lp_pool", lambda L, x: (L.nn.functional.lp_pool1d(x[0], 2, 3),
                               L.nn.functional.lp_pool1d(x[0], 3.0, 2, stride=3, ceil_mode=True),
                               L.nn.functional.lp_pool1d(x[0] - 1, 1, 2),
                               L.nn.functional.lp_pool2d(x, 2, (2, 3)),
                               L.nn.functional.lp_pool2d(x, 1.5, 2, stride=(1, 2))),
    samples=(((1, 2, 5, 6),),), domain="positive", covers=("F.lp_pool1d", "F.lp_pool2d"),
    full_only=("gradgrad",))  # (pow and avg_pool: their double backward in CI elsewhere)
add("F.local_response_norm", lambda L, x: (
    L.nn.functional.local_response_norm(x[0], 3), L.nn.functional.local_response_norm(
        x, 4, alpha=0.1, beta=0.5, k=2.0), L.nn.functional.local_response_norm(x[:, :, None], 2),
    L.nn.functional.local_response_norm(x, 9)),
    samples=(((2, 6, 3, 4),),), domain="normal3", covers=("F.local_response_norm",))
add("F.channel_shuffle", lambda L, x: (L.nn.functional.channel_shuffle(x, 3),
                                       L.nn.functional.channel_shuffle(x[0, None], 2)),
    samples=(((2, 6, 5),),), dtypes=FLOAT + ("int64",), covers=("F.channel_shuffle",))
add("F.alpha_dropout(eval)", lambda L, x: (
    L.nn.functional.alpha_dropout(x, 0.3), L.nn.functional.feature_alpha_dropout(x, 0.5),
    L.nn.functional.alpha_dropout(x, 0.0, True), L.nn.functional.alpha_dropout(x, 1.0, True)),
    samples=(((2, 3, 4),),), covers=("F.alpha_dropout", "F.feature_alpha_dropout"))
_LABELS = [[3, 0, -1, 1, 1], [1, 1, 4, 2, -1], [-1, 2, 3, 4, 0]]
add("F.multilabel_margin_loss", lambda L, x: (
    L.nn.functional.multilabel_margin_loss(x, L.tensor(_LABELS)),
    L.nn.functional.multilabel_margin_loss(x, L.tensor(_LABELS), reduction="none"),
    L.nn.functional.multilabel_margin_loss(x, L.tensor(_LABELS), reduction="sum"),
    L.nn.functional.multilabel_margin_loss(x[0], L.tensor(_LABELS[1]), reduction="none"),
    L.nn.functional.multilabel_margin_loss(x[1] * 0, L.tensor(_LABELS[0]))),
    samples=(((3, 5),),), gradgrad=False, covers=("F.multilabel_margin_loss",))  # (none in PyTorch)
add("F.triplet_margin_with_distance_loss", lambda L, a, p, n: (
    L.nn.functional.triplet_margin_with_distance_loss(a, p, n),
    L.nn.functional.triplet_margin_with_distance_loss(
        a, p, n, distance_function=lambda u, v: 1 - L.nn.functional.cosine_similarity(u, v),
        swap=True, margin=0.5, reduction="none"),
    L.nn.functional.triplet_margin_with_distance_loss(a, p, n, margin=3.0, reduction="sum")),
    samples=(((4, 3), (4, 3), (4, 3)),), domain="normal3",
    covers=("F.triplet_margin_with_distance_loss",))

# -- in-place shape changes (symgrad/eager/inplace.py): recorded on results; the leaf
# refusals, views, version counters and saved tensors in tests/test_torch_gaps.py
add("in-place shape methods", lambda L, x: (
    (x * 1).unsqueeze_(0), (x * 1).unsqueeze_(-1).squeeze_(), (x * 1).unsqueeze_(1).squeeze_(1),
    (x * 1).t_(), (x * 1).transpose_(0, 1), (x * 1).swapdims_(0, 1),
    (x * 1).unsqueeze_(0).swapaxes_(2, 0)),
    samples=(((3, 4),),), dtypes=FLOAT + ("int64",),
    covers=("Tensor.unsqueeze_", "Tensor.squeeze_", "Tensor.t_", "Tensor.transpose_",
            "Tensor.swapdims_", "Tensor.swapaxes_"))
add("resize_", lambda L, x: (x.detach().clone().resize_(2, 6), x.detach().clone().resize_(5),
                             x.detach().clone().resize_((2, 2, 3))),
    samples=(((3, 4),),), dtypes=FLOAT + ("int64",), grad=False, covers=("Tensor.resize_",))
add("as_strided", lambda L, x: (x.as_strided((2, 2), (1, 2)), L.as_strided(x, (3,), (4,), 1),
                                x.as_strided((3, 3), (1, 1)), (x * 1)[1:].as_strided((2,), (1,)),
                                x.t().as_strided((4,), (3,))),
    samples=(((3, 4),),), dtypes=FLOAT + ("int64",),
    covers=("torch.as_strided", "Tensor.as_strided"))
