"""The older names of :mod:`torch.linalg` as Tensor methods: ``det``, ``logdet``,
``slogdet``, ``inverse``, ``pinverse``, ``matrix_power``, ``matrix_exp``, ``cholesky``,
``cholesky_solve``, ``cholesky_inverse``, ``qr``, ``svd`` (PyTorch's ``some=`` and ``V``,
not ``linalg.svd``'s ``Vh``), ``triangular_solve``, ``lu`` and ``lu_solve``. They are
:mod:`.linalg`'s functions, which import the Tensor class: so they are set on it here (imported by
:mod:`symgrad` through :mod:`.shape_functions`) rather than inherited from a mixin. The
functions of the same names (``torch.det``) are in :mod:`.shape_functions`.

Where PyTorch's gradient reads the whole factor (``cholesky_solve``,
``cholesky_inverse``: ``A = L L^T`` of the full ``L``), the composite reads it too.

    >>> import symgrad as torch
    >>> torch.tensor([[2.0, 0.0], [0.0, 3.0]]).logdet()
    tensor(1.7918)
"""

from __future__ import annotations

import collections
from typing import Any

import numpy as np

from ..numpy_api import functions as ops
from ..numpy_api import shapes as shape_ops
from . import linalg
from .complex_tensors import guard_methods
from .lu import lu_factor_ex
from .method_args import named
from .tensor import Tensor

_svd_result = collections.namedtuple("svd", ["U", "S", "V"])
_qr_result = collections.namedtuple("qr", ["Q", "R"])
_slogdet_result = collections.namedtuple("slogdet", ["sign", "logabsdet"])
_lu_infos = collections.namedtuple("lu", ["LU", "pivots", "infos"])
_triangular_result = collections.namedtuple("triangular_solve",
                                            ["solution", "cloned_coefficient"])


def _cat_columns(a: Any, b: Any) -> Any:
    return shape_ops.concatenate([a, b], axis=-1)


def det(self) -> Any:
    return linalg.det(self)


def slogdet(self) -> Any:
    return _slogdet_result(*linalg.slogdet(self))


def logdet(self) -> Any:
    """``log(det)``: nan for a negative determinant, -inf for a zero one."""
    sign, logabsdet = linalg.slogdet(self)
    bad = sign._value <= 0
    if not bad.any():
        return named(logabsdet, self, "LogdetBackward0")
    fill = np.where(sign._value < 0, np.nan, -np.inf).astype(logabsdet._value.dtype)
    return named(ops.where(bad, fill, logabsdet), self, "LogdetBackward0")


def inverse(self) -> Any:
    return linalg.inv(self)


def pinverse(self, rcond: float = 1e-15) -> Any:
    return linalg.pinv(self, rtol=rcond)


def matrix_power(self, n: int) -> Any:
    return linalg.matrix_power(self, n)


def matrix_exp(self) -> Any:
    return linalg.matrix_exp(self)


def cholesky(self, upper: bool = False) -> Any:
    return linalg.cholesky(self, upper=upper)


def cholesky_solve(self, input2: Any, upper: bool = False) -> Any:
    """``X`` with ``A X = self``, ``A = L L^T`` (``U^T U`` for ``upper``) of the factor
    ``input2``; as PyTorch's gradient, the whole factor is read."""
    L = input2
    A = L.mT @ L if upper else L @ L.mT
    return named(linalg.solve(A, self), self, "CholeskySolveBackward0", (self, L))


def cholesky_inverse(self, upper: bool = False) -> Any:
    A = self.mT @ self if upper else self @ self.mT
    return named(linalg.inv(A), self, "CholeskyInverseBackward0", (self,))


def qr(self, some: bool = True) -> Any:
    return _qr_result(*linalg.qr(self, "reduced" if some else "complete"))


def svd(self, some: bool = True, compute_uv: bool = True) -> Any:
    """``(U, S, V)`` with ``self = U diag(S) V^T`` (``V``, not ``linalg.svd``'s ``Vh``);
    ``some=False``: square ``U`` and ``V``; ``compute_uv=False``: zero ``U`` and ``V``
    (PyTorch's), and no gradient through them."""
    m, n = self.shape[-2:]
    if not compute_uv:  # zero (m, m) and (n, n) U and V, as PyTorch's
        S = linalg.svdvals(self)
        batch, kind = tuple(self.shape[:-2]), S._value.dtype
        U, V = (type(self)._make(np.zeros(batch + (k, k), kind)) for k in (m, n))
        return _svd_result(U, S, V)
    U, S, Vh = linalg.svd(self, full_matrices=some is False and m == n)
    if not some and m != n:  # the extra columns as data: PyTorch's gradient ignores them
        k = min(m, n)
        Uf, _, Vhf = np.linalg.svd(self._value, full_matrices=True)
        make = type(self)._make
        U = U if m == k else _cat_columns(U, make(Uf[..., :, k:]))
        Vh = Vh if n == k else _cat_columns(Vh.mT, make(Vhf[..., k:, :]).mT).mT
    return _svd_result(U, S, Vh.mT)


def triangular_solve(self, A: Any, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> Any:
    """``X`` with ``op(A) X = self`` (``op(A) = A^T`` for ``transpose``), reading only
    ``A``'s upper or lower triangle; ``(solution, A.clone())``."""
    T = A.mT if transpose else A
    X = linalg.solve_triangular(T, self, upper=upper != transpose,
                               unitriangular=unitriangular)
    return _triangular_result(named(X, self, "TriangularSolveBackward0", (self, A)),
                              A.clone())



def lu(self, pivot: bool = True, get_infos: bool = False) -> Any:
    """``(LU, pivots)`` (with ``infos``), PyTorch's packed factors of ``A = P L U``
    (``linalg.lu_factor_ex``, :mod:`.lu`: its gradient for a square matrix)."""
    if not pivot:
        raise RuntimeError("lu without pivoting is not implemented on the CPU")
    LU, pivots, infos = lu_factor_ex(self)
    return _lu_infos(LU, pivots, infos) if get_infos else (LU, pivots)


def lu_solve(self, LU_data: Any, LU_pivots: Any) -> Any:
    """``X`` with ``A X = self`` for ``A = P L U`` of ``lu``'s factors; the gradient reaches
    ``self`` and the packed factors (through ``A``)."""
    n = LU_data.shape[-1]
    pivots = np.asarray(LU_pivots._value, np.int64) - 1
    order = np.broadcast_to(np.arange(n), pivots.shape[:-1] + (n,)).copy()
    rows, swaps = order.reshape(-1, n), pivots.reshape(-1, pivots.shape[-1])
    r = np.arange(rows.shape[0])
    for k in range(swaps.shape[-1]):  # LAPACK's row swaps, in order: P^T A = A[order]
        rows[r, k], rows[r, swaps[:, k]] = rows[r, swaps[:, k]], rows[r, k].copy()
    eye = np.eye(n, dtype=LU_data._value.dtype)
    lower = LU_data.tril(-1) + type(self)._make(eye)
    upper = LU_data.triu()
    P = type(self)._make(np.ascontiguousarray(eye[order].swapaxes(-1, -2)))
    A = P @ (lower @ upper)
    return named(linalg.solve(A, self), self, "LinalgLuSolveBackward0", (self, LU_data))


METHODS = ("det", "slogdet", "logdet", "inverse", "pinverse", "matrix_power", "matrix_exp",
           "cholesky", "cholesky_solve", "cholesky_inverse", "qr", "svd", "triangular_solve",
           "lu", "lu_solve")
for _name in METHODS:
    setattr(Tensor, _name, globals()[_name])
del _name
guard_methods(Tensor)
