"""``linalg.inv_ex`` / ``cholesky_ex`` on singular and non positive-definite matrices, and
PyTorch's ``LinAlgError``.

PyTorch's ``*_ex`` functions return LAPACK's ``info`` per matrix (int32: 0 when it
succeeded; for ``inv_ex`` the 1-based index of ``getrf``'s first zero pivot, for
``cholesky_ex`` the order of the first leading minor that is not positive-definite)
and raise only with ``check_errors=True``; ``linalg.inv`` and ``linalg.cholesky``
raise. Here ``info`` is LAPACK's own (SciPy's ``getrf``/``potrf``), equal to PyTorch's
where the failure is exact (a zero pivot in exact arithmetic); for a matrix singular
only through rounding, two LAPACKs may disagree.

The values of a failed matrix: PyTorch returns what LAPACK left (``getrs`` of the
singular factors: inf and NaN; ``potrf``'s partial factor, where the blocked LAPACK of
PyTorch's build leaves a partly updated trailing block). Those are rounding-dependent
(SciPy's LAPACK differs from PyTorch's beyond 3 x 3 in tests) and documented as
meaningless, so a failed matrix is NaN here, every element: garbage that looks like a
number is never returned. Its gradient is NaN: PyTorch's is NaN for ``inv_ex`` (its
backward formula meets the inf and NaN), and for ``cholesky_ex`` numbers made of the
partial factor, as meaningless. The other matrices of a batch get their exact values and
gradients.

    >>> import symgrad as torch
    >>> A = torch.tensor([[1.0, 2.0], [2.0, 4.0]])
    >>> torch.linalg.inv_ex(A).info
    tensor(2, dtype=torch.int32)
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.linalg import lapack

from ..numpy_api import functions as ops
from .function import Function
from .tensor import Tensor


class LinAlgError(RuntimeError, np.linalg.LinAlgError):
    """``torch.linalg.LinAlgError``: a RuntimeError (as PyTorch's), also numpy's
    ``LinAlgError``."""


def infos(a: np.ndarray, routine: str) -> np.ndarray:
    """LAPACK's ``info`` (int32) of each matrix of ``a`` (``"getrf"`` or ``"potrf"``, the
    lower triangle), in ``a``'s batch shape."""
    flat = a.reshape((-1,) + a.shape[-2:])
    if not flat.shape[0]:
        return np.zeros(a.shape[:-2], np.int32)
    work = flat if flat.dtype in (np.float32, np.float64) else flat.astype(np.float64)
    (fn,) = lapack.get_lapack_funcs((routine,), (work[0],))
    out = [fn(m)[2] if routine == "getrf" else fn(m, lower=1)[1] for m in work]
    return np.maximum(np.asarray(out, np.int32), 0).reshape(a.shape[:-2])


def _message(name: str, info: np.ndarray) -> str:
    """PyTorch's words for the first failed matrix of ``info``."""
    k = int(np.argmax(info.reshape(-1) != 0))
    order = int(info.reshape(-1)[k])
    where = f"(Batch element {k}): " if info.ndim else ""
    if name.startswith("linalg.cholesky"):
        return (f"{name}: {where}The factorization could not be completed because the input "
                f"is not positive-definite (the leading minor of order {order} is not "
                "positive-definite).")
    return (f"{name}: {where}The diagonal element {order} is zero, the inversion could not "
            "be completed because the input matrix is singular.")


def linalg_error(name: str, info: np.ndarray) -> LinAlgError | None:
    """PyTorch's ``LinAlgError`` if a matrix failed (``info`` nonzero somewhere)."""
    return LinAlgError(_message(name, info)) if np.any(info != 0) else None


def around_failures(fn: Any, A: Any, info: np.ndarray) -> Any:
    """``fn(A)`` for a batch whose matrices with ``info != 0`` ``fn`` cannot take: those
    replaced by the identity for ``fn``, their results NaN, with a NaN gradient."""
    failed = np.asarray(info != 0)[..., None, None]
    eye = np.broadcast_to(np.eye(A.shape[-1], dtype=A._value.dtype), tuple(A.shape))
    good = fn(ops.where(failed, eye, A))
    nan = np.full((), np.nan, A._value.dtype)
    undefined = _NanGradient.apply(A, failed) + nan if A.requires_grad else nan
    return ops.where(failed, undefined, good)


class _NanGradient(Function):
    """Zeros, whose gradient is NaN on the failed matrices (0 elsewhere): a failed
    matrix's result depends on its input through nothing defined."""

    @staticmethod
    def forward(ctx: Any, A: Any, failed: np.ndarray) -> Any:
        ctx.failed = failed
        ctx.save_for_backward(A)
        return Tensor._make(np.zeros(tuple(A.shape), A._value.dtype))

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (A,) = ctx.saved_tensors
        nan = np.where(np.broadcast_to(ctx.failed, tuple(g.shape)), np.nan, 0.0)
        # (g * 0 + A * nan: NaN there, 0 elsewhere; so are its derivatives in g and A)
        return g * 0 + A * Tensor._make(nan.astype(g._value.dtype)), None
