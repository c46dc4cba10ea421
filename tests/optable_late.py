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
