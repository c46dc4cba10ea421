"""``sg.scipy.linalg.expm``: the matrix exponential of traced matrices, by scaling and
squaring with the [13/13] Padé approximant (Higham 2005, as scipy's and JAX's), written
with numpy functions so that its gradient is the traced algorithm's.

The number of squarings ``s = max(0, ceil(log2(|A|_1 / theta_13)))`` depends on the
values, which a trace does not know: the matrix is scaled by ``2**-s`` (a traced
number) and squared :data:`MAX_SQUARINGS` times, each squaring kept only where ``k <
s``. A matrix whose 1-norm needs more squarings (beyond ``5.4 * 2**24 = 9e7``, where
``exp`` is far beyond float64 anyway for any eigenvalue of that size) gives nan, never
a wrong number. scipy's ``expm`` called on a traced value names this function.

    >>> import numpy as np, symgrad as sg
    >>> round(float(sg.scipy.linalg.expm(np.array([[0.0, 1.0], [0.0, 0.0]]))[0, 1]), 12)
    1.0
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import SCIPY_EQUIVALENTS
from ..core.tracing import shape_of
from ..prims import elementwise as E
from ..prims.elementwise import as_float
from ..prims.special import exp2, log2
from . import functions as F
from .linalg import matmul, solve

#: Higham's bound on |A|_1 for the [13/13] approximant, and its coefficients b_0..b_13
THETA_13 = 5.371920351148152
B = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
     129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
     40840800.0, 960960.0, 16380.0, 182.0, 1.0)
MAX_SQUARINGS = 24


def _pade13(a: Any, eye: np.ndarray) -> Any:
    a2 = matmul(a, a)
    a4 = matmul(a2, a2)
    a6 = matmul(a4, a2)
    u_inner = E.add(E.add(E.mul(B[13], a6), E.mul(B[11], a4)), E.mul(B[9], a2))
    u = E.add(E.add(E.add(matmul(a6, u_inner), E.mul(B[7], a6)), E.mul(B[5], a4)),
              E.add(E.mul(B[3], a2), E.mul(B[1], eye)))
    u = matmul(a, u)
    v_inner = E.add(E.add(E.mul(B[12], a6), E.mul(B[10], a4)), E.mul(B[8], a2))
    v = E.add(E.add(E.add(matmul(a6, v_inner), E.mul(B[6], a6)), E.mul(B[4], a4)),
              E.add(E.mul(B[2], a2), E.mul(B[0], eye)))
    return solve(E.sub(v, u), E.add(v, u))


def expm(A: Any) -> Any:
    """``scipy.linalg.expm`` of a square matrix (or a stack of them, the last two axes)."""
    a = as_float(A)
    shape = shape_of(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError("expected a square matrix")
    eye = np.eye(shape[-1])
    norm = F.max(F.sum(E.absolute(a), axis=-2, keepdims=True), axis=-1, keepdims=True)
    tiny = E.less_equal(norm, THETA_13)
    # s = ceil(log2(norm / theta)): piecewise constant (no gradient), 0 for small norms
    s = E.where(tiny, 0.0, E.ceil(log2(E.div(E.where(tiny, THETA_13, norm), THETA_13))))
    result = _pade13(E.mul(a, exp2(E.neg(s))), eye)
    for k in range(MAX_SQUARINGS):
        result = E.where(E.less(float(k), s), matmul(result, result), result)
    return E.where(E.greater(s, float(MAX_SQUARINGS)), np.nan, result)


SCIPY_EQUIVALENTS["scipy.linalg.expm"] = "sg.scipy.linalg.expm"

__all__ = ["expm"]
