"""Op table records (tests/optable.py) of issue 27's last refusals: ``linalg.pinv``
dropping a singular value that is not 0 (PyTorch's ``pinv_backward`` of the truncated
result), ``F.ctc_loss`` and ``F.interpolate(antialias=True)``."""

from __future__ import annotations

from optable import add

# -- linalg.pinv with a cutoff that drops the smallest singular value (~1e-4 of the
# largest: a column scaled down), relative, absolute and per matrix of a stack
_SMALL = [1.0, 1.0, 1e-4]
add("linalg.pinv(dropping)", lambda L, a: (
    L.linalg.pinv(a * L.tensor(_SMALL), rtol=0.01), L.linalg.pinv(a * L.tensor(_SMALL), atol=0.05),
    L.linalg.pinv(a * L.tensor(_SMALL), atol=0.05, rtol=0.01),
    L.linalg.pinv(a.mT * L.tensor(_SMALL)[:, None], atol=L.tensor([0.05, 0.5]))),
    samples=(((2, 4, 3),),), domain="matrix", dtypes=("float64",), rtol=1e-9,
    covers=())

# -- F.ctc_loss (symgrad/nn/ctc.py): log_softmax inputs and raw ones (PyTorch's gradient is
# its own convention there), padded and concatenated targets, lengths as tuples and
# tensors, an empty target, another blank, an impossible alignment zeroed
_TG = [[1, 1, 3, 2], [2, 4, 0, 0], [3, 1, 2, 4]]
_IL, _TL = (6, 5, 4), (3, 2, 0)
_CAT = [1, 1, 3, 2, 4]  # the same targets, concatenated
add("F.ctc_loss", lambda L, x: (
    L.nn.functional.ctc_loss(x.log_softmax(2), L.tensor(_TG), _IL, _TL),
    L.nn.functional.ctc_loss(x, L.tensor(_TG), L.tensor(_IL), L.tensor(_TL), reduction="none"),
    L.nn.functional.ctc_loss(x.log_softmax(2), L.tensor(_CAT), (6, 4, 2), (3, 2, 0),
                             reduction="sum"),
    L.nn.functional.ctc_loss(x.log_softmax(2), L.tensor(_TG) - 1, (6, 5, 1), (4, 2, 2), blank=4,
                             reduction="none", zero_infinity=True),
    L.nn.functional.ctc_loss(x[:, 0].log_softmax(1), L.tensor(_TG[0][:3]), (6,), (3,),
                             reduction="none")),
    samples=(((6, 3, 5),),), dtypes=("float64", "float32"), gradgrad=False,
    covers=("F.ctc_loss",))  # (PyTorch has no double backward: tests/test_ctc_interpolate.py)

# -- F.interpolate(antialias=True) (symgrad/nn/resampling.py): PyTorch's separable
# antialiasing filters, shrinking (sizes, scale factors, recomputed), growing, align_corners;
# and mode="lanczos" (PyTorch 2.13's, antialiased only, no align_corners)
add("F.interpolate(antialias)", lambda L, x: tuple(
    L.nn.functional.interpolate(x, mode=mode, antialias=True, **kw)
    for mode in ("bilinear", "bicubic", "lanczos") for kw in (
        dict(size=(3, 4)), dict(scale_factor=(0.45, 0.3)),
        dict(scale_factor=0.37, recompute_scale_factor=True),
        dict(size=(9, 5), align_corners=mode != "lanczos"), dict(size=(12, 2)))),
    samples=(((2, 2, 7, 11),),), covers=())
