"""PyTorch's linear algebra Tensor methods: batched products (``bmm``, ``baddbmm``,
``addbmm``, ``addmv``, ``addr``), ``addcmul``/``addcdiv``, ``ger``, ``inner``, ``vdot``,
``kron``, ``dist`` and the older names of :mod:`torch.linalg` (``det``, ``logdet``,
``slogdet``, ``inverse``, ``pinverse``, ``matrix_power``, ``matrix_exp``, ``cholesky``,
``cholesky_solve``, ``cholesky_inverse``, ``qr``, ``svd`` with its ``some=`` and ``V``,
``triangular_solve``). A mixin of :class:`~symgrad.eager.tensor.Tensor`; the functions
of the same names (``torch.bmm``) are in :mod:`.shape_functions`.

Each is a composite of ops with their own gradients (products, :mod:`.linalg`), so its
gradient and double backward come from those. Where PyTorch's gradient reads the whole
factor (``cholesky_solve``, ``cholesky_inverse``: ``A = L L^T`` of the full ``L``), the
composite reads it too.

    >>> import symgrad as torch
    >>> b = torch.ones(2, 2, 3)
    >>> torch.bmm(b, b.mT).shape
    torch.Size([2, 2, 2])
    >>> torch.tensor([[2.0, 0.0], [0.0, 3.0]]).logdet()
    tensor(1.7918)
"""

from __future__ import annotations

import collections
from typing import Any

import numpy as np

from ..numpy_api import functions as ops
from . import dtypes as dt
from .method_args import named


def _la() -> Any:
    from . import linalg  # (linalg imports the Tensor class)

    return linalg


def _scaled_sum(self: Any, product: Any, beta: Any, alpha: Any, name: str) -> Any:
    """``beta * self + alpha * product``; ``self`` is not read for ``beta=0`` (its NaNs do
    not reach the result), as PyTorch's."""
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return named(product, self, name)
    return named((self if beta == 1 else self * beta) + product, self, name)


def _check_ndim(x: Any, n: int, what: str) -> None:
    if x.ndim != n:
        raise RuntimeError(f"{what} must be a {n}D tensor, got {x.ndim}-D")


_svd_result = collections.namedtuple("svd", ["U", "S", "V"])
_qr_result = collections.namedtuple("qr", ["Q", "R"])
_slogdet_result = collections.namedtuple("slogdet", ["sign", "logabsdet"])
_triangular_result = collections.namedtuple("triangular_solve",
                                            ["solution", "cloned_coefficient"])


def _cat_columns(a: Any, b: Any) -> Any:
    from .functions import cat

    return cat([a, b], -1)


class LinalgMethods:
    """See the module docstring."""

    __slots__ = ()

    # -- products ---------------------------------------------------------------------
    def bmm(self, mat2: Any) -> Any:
        _check_ndim(self, 3, "batch1")
        _check_ndim(mat2, 3, "batch2")
        if self.shape[0] != mat2.shape[0] or self.shape[2] != mat2.shape[1]:
            raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                               f"[{self.shape[0]}, {self.shape[2]}] but got: "
                               f"[{mat2.shape[0]}, {mat2.shape[1]}].")
        return named(self @ mat2, self, "BmmBackward0")

    def baddbmm(self, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
        return _scaled_sum(self, batch1.bmm(batch2), beta, alpha, "BaddbmmBackward0")

    def addbmm(self, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
        return _scaled_sum(self, batch1.bmm(batch2).sum(0), beta, alpha, "AddbmmBackward0")

    def addmv(self, mat: Any, vec: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
        return _scaled_sum(self, mat.mv(vec), beta, alpha, "AddmvBackward0")

    def addr(self, vec1: Any, vec2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
        _check_ndim(vec1, 1, "vec1")
        _check_ndim(vec2, 1, "vec2")
        return _scaled_sum(self, vec1.outer(vec2), beta, alpha, "AddrBackward0")

    def addcmul(self, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Any:
        """``self + value * tensor1 * tensor2`` (PyTorch's order of the products)."""
        if not dt.result_type([self, tensor1, tensor2]).is_floating_point:
            value = int(value)  # (PyTorch's cast of the scalar to the integer dtype)
        return named(self + value * tensor1 * tensor2, self, "AddcmulBackward0")

    def addcdiv(self, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Any:
        if not (tensor1.dtype.is_floating_point or tensor2.dtype.is_floating_point):
            raise RuntimeError("Integer division with addcdiv is no longer supported, and in "
                               "a future release addcdiv will perform a true division of "
                               "tensor1 and tensor2. Use addcmul with 1/tensor2 or true "
                               "division instead.")
        return named(self + value * tensor1 / tensor2, self, "AddcdivBackward0")

    def ger(self, vec2: Any) -> Any:
        return self.outer(vec2)

    def inner(self, other: Any) -> Any:
        """The sums of products over the last dim (a product with a 0-d operand)."""
        if self.ndim == 0 or other.ndim == 0:
            return self * other
        return named(np.inner(self, other), self, "InnerBackward0")

    def vdot(self, other: Any) -> Any:
        if self.ndim != 1 or other.ndim != 1:
            raise RuntimeError(f"1D tensors expected, but got {self.ndim}D and {other.ndim}D "
                               "tensors")
        return self.dot(other)

    def kron(self, other: Any) -> Any:
        return named(np.kron(self, other), self, "KronBackward0")

    def dist(self, other: Any, p: Any = 2) -> Any:
        """``norm(self - other, p)``, gradient 0 at a zero distance (PyTorch's)."""
        return named(_la().vector_norm(self - other, p), self, "DistBackward0")

    # -- the older names of torch.linalg -------------------------------------------------
    def det(self) -> Any:
        return _la().det(self)

    def slogdet(self) -> Any:
        return _slogdet_result(*_la().slogdet(self))

    def logdet(self) -> Any:
        """``log(det)``: nan for a negative determinant, -inf for a zero one."""
        sign, logabsdet = _la().slogdet(self)
        bad = sign._value <= 0
        if not bad.any():
            return named(logabsdet, self, "LogdetBackward0")
        fill = np.where(sign._value < 0, np.nan, -np.inf).astype(logabsdet._value.dtype)
        return named(ops.where(bad, fill, logabsdet), self, "LogdetBackward0")

    def inverse(self) -> Any:
        return _la().inv(self)

    def pinverse(self, rcond: float = 1e-15) -> Any:
        return _la().pinv(self, rtol=rcond)

    def matrix_power(self, n: int) -> Any:
        return _la().matrix_power(self, n)

    def matrix_exp(self) -> Any:
        return _la().matrix_exp(self)

    def cholesky(self, upper: bool = False) -> Any:
        return _la().cholesky(self, upper=upper)

    def cholesky_solve(self, input2: Any, upper: bool = False) -> Any:
        """``X`` with ``A X = self``, ``A = L L^T`` (``U^T U`` for ``upper``) of the factor
        ``input2``; as PyTorch's gradient, the whole factor is read."""
        L = input2
        A = L.mT @ L if upper else L @ L.mT
        return named(_la().solve(A, self), self, "CholeskySolveBackward0", (self, L))

    def cholesky_inverse(self, upper: bool = False) -> Any:
        A = self.mT @ self if upper else self @ self.mT
        return named(_la().inv(A), self, "CholeskyInverseBackward0", (self,))

    def qr(self, some: bool = True) -> Any:
        return _qr_result(*_la().qr(self, "reduced" if some else "complete"))

    def svd(self, some: bool = True, compute_uv: bool = True) -> Any:
        """``(U, S, V)`` with ``self = U diag(S) V^T`` (``V``, not ``linalg.svd``'s ``Vh``);
        ``some=False``: square ``U`` and ``V``; ``compute_uv=False``: zero ``U`` and ``V``
        (PyTorch's), and no gradient through them."""
        m, n = self.shape[-2:]
        if not compute_uv:  # zero (m, m) and (n, n) U and V, as PyTorch's
            S = _la().svdvals(self)
            batch, kind = tuple(self.shape[:-2]), S._value.dtype
            U, V = (type(self)._make(np.zeros(batch + (k, k), kind)) for k in (m, n))
            return _svd_result(U, S, V)
        U, S, Vh = _la().svd(self, full_matrices=some is False and m == n)
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
        X = _la().solve_triangular(T, self, upper=upper != transpose,
                                   unitriangular=unitriangular)
        return _triangular_result(named(X, self, "TriangularSolveBackward0", (self, A)),
                                  A.clone())
