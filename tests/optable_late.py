"""Op table records (tests/optable.py) of ops PyTorch computes that symgrad refused until
round 3's seventh session: nuclear and spectral norms through ``torch.norm``, the
``*_scatter`` functions (symgrad/eager/scatter_views.py) and ``F.affine_grid``/
``F.grid_sample`` (symgrad/nn/grid_sampling.py)."""

from __future__ import annotations

from optable import add

# -- nuclear and spectral norms (symgrad/eager/reduction_methods.py: matrix_norm): the
# singular values' sum, largest and smallest, their gradients PyTorch's through svdvals
add("norm(nuc)", lambda L, a: (
    L.norm(a[0], p="nuc"), a[1].norm("nuc", keepdim=True), L.norm(a, "nuc", dim=(0, 2)),
    a.norm(p="nuc", dim=[2, 1], keepdim=True), L.linalg.norm(a[0], "nuc"),
    L.linalg.norm(a, 2, dim=(1, 2)), L.linalg.norm(a, -2, dim=(-1, 0), keepdim=True),
    L.linalg.matrix_norm(a, -2), L.linalg.matrix_norm(a, "nuc", dim=(2, 0))),
    samples=(((2, 3, 4),),), domain="matrix", rtol=1e-9,
    covers=("torch.norm", "Tensor.norm", "linalg.norm", "linalg.matrix_norm"))
