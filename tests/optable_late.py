"""Op table records (tests/optable.py) of ops PyTorch computes that symgrad refused until
round 3's seventh session: ``linalg.pinv`` dropping a singular value that is not 0
(PyTorch's ``pinv_backward`` of the truncated result), ``F.ctc_loss`` and
``F.interpolate(antialias=True)``; nuclear and spectral norms through ``torch.norm``, the
``*_scatter`` functions (symgrad/eager/scatter_views.py) and ``F.affine_grid``/
``F.grid_sample`` (symgrad/nn/grid_sampling.py)."""

from __future__ import annotations

from optable import FLOAT, add

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

# -- nuclear and spectral norms (symgrad/eager/reduction_methods.py: matrix_norm): the
# singular values' sum, largest and smallest, their gradients PyTorch's through svdvals
add("norm(nuc)", lambda L, a: (
    L.norm(a[0], p="nuc"), a[1].norm("nuc", keepdim=True), L.norm(a, "nuc", dim=(0, 2)),
    a.norm(p="nuc", dim=[2, 1], keepdim=True), L.linalg.norm(a[0], "nuc"),
    L.linalg.norm(a, 2, dim=(1, 2)), L.linalg.norm(a, -2, dim=(-1, 0), keepdim=True),
    L.linalg.matrix_norm(a, -2), L.linalg.matrix_norm(a, "nuc", dim=(2, 0))),
    samples=(((2, 3, 4),),), domain="matrix", rtol=1e-9,
    covers=("torch.norm", "Tensor.norm", "linalg.norm", "linalg.matrix_norm"))

# -- the *_scatter ops (symgrad/eager/scatter_views.py): gradients to input and src
add("select_scatter", lambda L, x, s: (
    L.select_scatter(x, s[0], 0, 1), x.select_scatter(s[1, :3], 1, -1),
    L.select_scatter(x[0], s[0, 0], 0, 2), x.select_scatter(s[1].detach().to(L.float32), 0, 0)),
    samples=(((3, 4), (2, 4)),), dtypes=FLOAT + ("int64",),
    covers=("torch.select_scatter", "Tensor.select_scatter"))
add("slice_scatter", lambda L, x, a, b: (
    L.slice_scatter(x, a, 1, 1, 5, 2), x.slice_scatter(b, 0, -2), L.slice_scatter(x, x * 2),
    x.slice_scatter(a[:, :0], 1, 4, 2), L.slice_scatter(x, b[:1], dim=0, end=-2, step=3)),
    samples=(((3, 5), (3, 2), (2, 5)),), dtypes=FLOAT + ("int64",),
    covers=("torch.slice_scatter", "Tensor.slice_scatter"))
add("diagonal_scatter", lambda L, x, d: (
    L.diagonal_scatter(x, d, 0, 0, 1), x[0].diagonal_scatter(d[:3, 0]),
    x.diagonal_scatter(d[:3, :1], 1, 2, 0), L.diagonal_scatter(x[1], d[:2, 1], -1)),
    samples=(((2, 3, 4), (4, 2)),), dtypes=FLOAT + ("int64",),
    covers=("torch.diagonal_scatter", "Tensor.diagonal_scatter"))
# PyTorch 2.13's gradient for the input is wrong (the cotangent at the written places, not
# at the others: its gradcheck fails): compared with finite differences in
# tests/test_scatter_grid.py; here the values and src's gradient
add("as_strided_scatter", lambda L, x, s: (
    L.as_strided_scatter(x.detach(), s, (2, 2), (1, 2), 1),
    x.detach().as_strided_scatter(s.reshape(4), (4,), (3,)),
    L.as_strided_scatter(x.detach(), s[:1], (1, 2), (0, 5), 2),
    L.as_strided_scatter(x.detach().t(), s.detach(), (2, 2), (4, 1))),
    samples=(((3, 4), (2, 2)),), dtypes=FLOAT + ("int64",),
    covers=("torch.as_strided_scatter", "Tensor.as_strided_scatter"))

# -- F.affine_grid and F.grid_sample (symgrad/nn/grid_sampling.py): the grid's points reach
# past the borders (domain "real": -1.4 to 1.6); points on them in tests/test_scatter_grid.py
add("F.affine_grid", lambda L, t: (
    L.nn.functional.affine_grid(t, (2, 1, 3, 4), align_corners=False),
    L.nn.functional.affine_grid(t, [2, 3, 2, 5], align_corners=True),
    L.nn.functional.affine_grid(t, (2, 1, 2, 1), align_corners=False)),
    samples=(((2, 2, 3),),), covers=("F.affine_grid",))
add("F.affine_grid(3-D)", lambda L, t: (
    L.nn.functional.affine_grid(t, (2, 1, 2, 3, 4), align_corners=False),
    L.nn.functional.affine_grid(t, (2, 1, 3, 1, 2), align_corners=False),
    L.nn.functional.affine_grid(t, (2, 1, 3, 2, 2), align_corners=True)),
    samples=(((2, 3, 4),),), covers=())
# (every padding mode with both align_corners, on and past the borders, in 2-D and 3-D:
# tests/test_scatter_grid.py)
_PADDINGS = [("zeros", False), ("border", True), ("reflection", False), ("reflection", True)]
for _mode in ("bilinear", "nearest"):
    add(f"F.grid_sample({_mode})", lambda L, x, g, m=_mode: tuple(
        L.nn.functional.grid_sample(x, g, mode=m, padding_mode=p, align_corners=a)
        for p, a in _PADDINGS),
        samples=(((2, 3, 4, 5), (2, 3, 4, 2)), ((1, 2, 3, 4, 5), (1, 2, 3, 2, 3))),
        domain=("normal3", "real"), covers=("F.grid_sample",),
        # (bilinear's double backward in CI: tests/test_scatter_grid.py, at the borders)
        full_only=("gradgrad",) if _mode == "bilinear" else ())
add("F.grid_sample(bicubic)", lambda L, x, g: tuple(  # (4-D only, as PyTorch's)
    L.nn.functional.grid_sample(x, g, mode="bicubic", padding_mode=p, align_corners=a)
    for p, a in _PADDINGS),
    samples=(((2, 3, 4, 5), (2, 3, 4, 2)),), domain=("normal3", "real"),
    covers=("F.grid_sample",), full_only=("gradgrad",))
