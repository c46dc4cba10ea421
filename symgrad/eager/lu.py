"""``linalg.lu_factor``, ``linalg.lu_factor_ex`` and ``linalg.lu`` (and ``Tensor.lu``), with
PyTorch's gradient for square matrices.

The factorization is LAPACK's ``getrf`` (partial pivoting), ``A = P L U`` with ``L``
unit lower triangular; ``lu_factor`` packs ``L`` (below the diagonal) and ``U`` in one
matrix, with the 1-based row swaps (int32). The gradient is PyTorch's
``linalg_lu_backward`` for the pivots held fixed (the LU map is smooth where no pivot
changes)::

    gA = P L^{-T} [ (L^T gL) o 1_L + (gU U^T) o 1_U ] U^{-T}

(``1_L`` strictly lower, ``1_U`` upper triangular masks); ``lu_factor``'s gradient is
the same with ``gL``, ``gU`` the strictly lower and upper parts of the packed gradient.
It is computed at once on the factors' values: a backward with ``create_graph=True``
through it (double backward, which PyTorch has) raises NotImplementedError here. A wide or
tall matrix factors, but its gradient is refused (NotImplementedError).

    >>> import symgrad as torch
    >>> A = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> P, L, U = torch.linalg.lu(A)
    >>> U
    tensor([[3.0000, 4.0000],
            [0.0000, 0.6667]], grad_fn=<LinalgLuBackward0>)
"""

from __future__ import annotations

import collections
from typing import Any

import numpy as np
from scipy.linalg import solve_triangular

from ..numpy_api import shapes
from . import grad_mode
from .function import Function
from .method_args import named
from .tensor import Tensor

lu_factor_result = collections.namedtuple("linalg_lu_factor", ["LU", "pivots"])
lu_factor_ex_result = collections.namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
lu_result = collections.namedtuple("linalg_lu", ["P", "L", "U"])

#: why create_graph=True through an LU factorization raises (rather than give a gradient
#: that would be taken as constant in the LU part)
DOUBLE_BACKWARD_ERROR = (
    "the gradient of linalg.lu / lu_factor is computed on the factors' values in symgrad, so "
    "it cannot be differentiated again (create_graph=True); PyTorch can. Differentiate "
    "without create_graph, or use functions of A whose double backward symgrad has "
    "(linalg.solve, linalg.det, linalg.inv)")


def getrf(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """LAPACK's ``getrf`` of one matrix: the packed ``L`` (unit diagonal, below) and
    ``U``, and the 1-based row swaps (partial pivoting: the first largest magnitude).
    Unblocked: where two candidate pivots differ only by rounding, PyTorch's blocked
    LAPACK may choose the other row (another exact factorization)."""
    a = a.copy()
    m, n = a.shape
    k_max = min(m, n)
    pivots = np.empty(k_max, np.int32)
    for k in range(k_max):
        p = k + int(np.argmax(np.abs(a[k:, k])))
        pivots[k] = p + 1
        if p != k:
            a[[k, p]] = a[[p, k]]
        if a[k, k] != 0:
            a[k + 1:, k] /= a[k, k]
            a[k + 1:, k + 1:] -= np.outer(a[k + 1:, k], a[k, k + 1:])
    return a, pivots


def factor(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``getrf`` of each matrix of ``a``: (packed factors, pivots, info: the 1-based
    position of the first zero on ``U``'s diagonal, 0 if none)."""
    batch, k = a.shape[:-2], min(a.shape[-2:])
    flat = a.reshape((-1,) + a.shape[-2:])
    factors = [getrf(m) for m in flat]
    packed = np.stack([f[0] for f in factors]).reshape(a.shape) if factors else a.copy()
    pivots = (np.stack([f[1] for f in factors]).reshape(batch + (k,)) if factors
              else np.zeros(batch + (k,), np.int32))
    zero = np.diagonal(packed, axis1=-2, axis2=-1) == 0
    info = np.where(zero.any(-1), np.argmax(zero, -1) + 1, 0).astype(np.int32)
    return packed, pivots, info


def permutation(pivots: np.ndarray, m: int, dtype: Any) -> np.ndarray:
    """``P`` (``A = P L U``) of LAPACK's 1-based row swaps, applied in order."""
    swaps = np.asarray(pivots, np.int64) - 1
    order = np.broadcast_to(np.arange(m), swaps.shape[:-1] + (m,)).copy()
    rows, flat = order.reshape(-1, m), swaps.reshape(-1, swaps.shape[-1])
    r = np.arange(rows.shape[0])
    for k in range(flat.shape[-1]):  # P^T A = A[order]
        rows[r, k], rows[r, flat[:, k]] = rows[r, flat[:, k]], rows[r, k].copy()
    return np.ascontiguousarray(np.eye(m, dtype=dtype)[order].swapaxes(-1, -2))


def _unpack(packed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    m, n = packed.shape[-2:]
    k = min(m, n)
    L = np.tril(packed[..., :, :k], -1) + np.eye(m, k, dtype=packed.dtype)
    return L, np.triu(packed[..., :k, :])


def _check(A: Any, name: str) -> Any:
    A = A if isinstance(A, Tensor) else Tensor._make(np.asarray(A))
    if A.ndim < 2:
        raise RuntimeError(f"linalg.{name}: Expected tensor with 2 or more dimensions. Got "
                           f"size: {tuple(A.shape)} instead")
    return A


def _factors(A: Any, pivot: bool, name: str) -> tuple:
    """P, L, U (Tensors; L and U with the gradient), the pivots and info, of ``A``."""
    if not pivot:
        raise RuntimeError(f"linalg.{name}: LU without pivoting is not implemented on the CPU")
    packed, pivots, info = factor(A._value)
    P = Tensor._make(permutation(pivots, A.shape[-2], A._value.dtype))
    L, U = _unpack(packed)
    if A.requires_grad and grad_mode.is_grad_enabled():
        if A.shape[-1] != A.shape[-2]:
            raise NotImplementedError(
                f"linalg.{name}: the gradient of the LU factorization of a non-square matrix "
                "is not implemented in symgrad; call it on A.detach(), or factor a square one")
        L, U = _LU.apply(A, P._value, L, U)
    else:
        L, U = Tensor._make(L), Tensor._make(U)
    return P, L, U, pivots, info


def lu(A: Any, *, pivot: bool = True) -> Any:
    """``(P, L, U)`` with ``A = P L U``."""
    A = _check(A, "lu")
    P, L, U, _, _ = _factors(A, pivot, "lu")
    return lu_result(P, named(L, A, "LinalgLuBackward0", (A,)),
                     named(U, A, "LinalgLuBackward0", (A,)))


def lu_factor_ex(A: Any, *, pivot: bool = True, check_errors: bool = False,
                 _name: str = "lu_factor_ex") -> Any:
    """``(LU, pivots, info)``: ``L`` below the diagonal and ``U`` in one matrix; ``info``
    the position of ``U``'s first zero pivot (PyTorch's error with ``check_errors``)."""
    A = _check(A, _name)
    _, L, U, pivots, info = _factors(A, pivot, _name)
    if check_errors and np.any(info != 0):
        k = int(np.argmax(info.reshape(-1) != 0))
        i = int(info.reshape(-1)[k])
        where = f"(Batch element {k}): " if info.ndim else ""
        raise RuntimeError(f"torch.linalg.{_name}: {where}U[{i},{i}] is zero and using it on "
                           "lu_solve would result in a division by zero. If you still want to "
                           "perform the factorization, consider calling linalg.lu(A, pivot) or "
                           "linalg.lu_factor_ex(A, pivot)")
    m, n = A.shape[-2:]
    eye = Tensor._make(np.eye(m, n, dtype=A._value.dtype))
    if m >= n:  # L is m x n, U n x n
        packed = L - eye + _pad(U, m - n, -2)
    else:  # L is m x m, U m x n
        packed = _pad(L, n - m, -1) - eye + U
    packed = named(packed, A, "LinalgLuFactorExBackward0", (A,))
    return lu_factor_ex_result(packed, Tensor._make(pivots), Tensor._make(info))


def lu_factor(A: Any, *, pivot: bool = True) -> Any:
    """``(LU, pivots)``: ``L`` below the diagonal and ``U`` in one matrix."""
    LU, pivots, _ = lu_factor_ex(A, pivot=pivot, check_errors=True, _name="lu_factor")
    return lu_factor_result(LU, pivots)


def _pad(X: Any, n: int, axis: int) -> Any:
    """``X`` with ``n`` rows (``axis=-2``) or columns of zeros after its own."""
    if not n:
        return X
    shape = list(X.shape)
    shape[axis] = n
    return shapes.concatenate([X, Tensor._make(np.zeros(shape, X._value.dtype))], axis=axis)


class _LU(Function):
    """``(L, U)`` of a square ``A`` (computed by the caller); PyTorch's gradient."""

    @staticmethod
    def forward(ctx: Any, A: Any, P: np.ndarray, L: np.ndarray, U: np.ndarray) -> Any:
        ctx.P, ctx.L, ctx.U = P, L, U
        return Tensor._make(L.copy()), Tensor._make(U.copy())

    @staticmethod
    def backward(ctx: Any, gL: Any, gU: Any) -> Any:
        if grad_mode.is_grad_enabled():  # create_graph=True: a gradient to differentiate
            raise NotImplementedError(DOUBLE_BACKWARD_ERROR)
        P, L, U = ctx.P, ctx.L, ctx.U
        Lt, Ut = np.swapaxes(L, -1, -2), np.swapaxes(U, -1, -2)
        g = np.tril(Lt @ gL._value, -1) + np.triu(gU._value @ Ut)
        flat_g = g.reshape((-1,) + g.shape[-2:])
        flat_L, flat_U = (x.reshape((-1,) + x.shape[-2:]) for x in (L, U))
        out = np.empty_like(flat_g)
        for k in range(flat_g.shape[0]):
            # X U^T = g (U^T lower), then L^T Y = X (unit upper)
            X = solve_triangular(flat_U[k], flat_g[k].T, lower=False, trans="N").T
            out[k] = solve_triangular(flat_L[k].T, X, lower=False, unit_diagonal=True)
        return Tensor._make(P @ out.reshape(g.shape)), None, None, None
