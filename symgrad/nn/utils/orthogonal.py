"""``torch.nn.utils.parametrizations.orthogonal``: a matrix (or a batch of them) kept
orthogonal, with PyTorch's maps, names and initial values.

``orthogonal(module, name, orthogonal_map, use_trivialization=True)``: the weight is
``Q`` (orthonormal columns when it is tall, rows when wide) made from the unconstrained
``parametrizations.<name>.original`` by ``"matrix_exp"`` (the exponential of the
skew-symmetric ``X.tril() - X.tril()ᵀ``, the default for square weights),
``"cayley"`` (``(I - A/2)⁻¹ (I + A/2)``) or ``"householder"`` (the product of the
reflectors below the diagonal, the default for rectangular ones). With
``use_trivialization`` (the default) the parametrization keeps a buffer ``base`` (``n ×
n``) and the weight is ``base @ Q``: registering makes ``base`` the weight itself if it
is orthogonal, else the Q of its QR decomposition (diagonal of R non-negative), and for
a rectangular weight completed by random normal columns first (symgrad's random numbers,
not PyTorch's: copy ``base`` across to compare), and sets ``original`` to ``-I``. Real
weights only (symgrad's Tensor has no complex dtype; the transposes are PyTorch's ``mH``).

    >>> import symgrad as torch
    >>> m = torch.nn.utils.parametrizations.orthogonal(torch.nn.Linear(3, 3))
    >>> w = m.weight
    >>> bool(torch.allclose(w.T @ w, torch.eye(3)))
    True
"""

from __future__ import annotations

import numpy as np

from ...eager.functions import cat
from ...eager.grad_mode import no_grad
from ...eager.linalg import qr, solve
from ...eager.tensor import Tensor
from ...eager.tensor_ops import eye, randn, zeros_like
from ..module import Module
from . import parametrize

__all__ = ["orthogonal"]

_MAPS = ("matrix_exp", "cayley", "householder")


def _is_orthogonal(q: Tensor) -> bool:
    """PyTorch's test: ``Qᴴ Q`` within ``10 n eps`` of the identity (absolutely)."""
    v = q._value
    n, k = v.shape[-2:]
    eps = 10.0 * n * np.finfo(v.dtype).eps
    gram = np.swapaxes(v, -1, -2) @ v
    return bool(np.all(np.abs(gram - np.eye(k, dtype=v.dtype)) <= eps))


def _make_orthogonal(a: Tensor) -> Tensor:
    """The Q of ``a = QR`` (``a`` tall) with the diagonal of R non-negative (unique: the
    Q of any QR times the signs of R's diagonal, which is PyTorch's geqrf formula)."""
    q, r = qr(a)
    return q * r.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def _householder_product(a: Tensor, tau: Tensor) -> Tensor:
    """``torch.linalg.householder_product``: the first ``k`` columns of ``H_1 ⋯ H_k``,
    ``H_i = I - τ_i v_i v_iᵀ`` with ``v_i`` column ``i`` of ``a`` below the diagonal and
    1 on it (differentiable: a product of eager operations)."""
    n, k = a.shape[-2:]
    v = a.tril(-1) + eye(n, k, dtype=a.dtype)
    q = eye(n, k, dtype=a.dtype).expand(*a.shape[:-2], n, k)
    for i in reversed(range(k)):
        vi = v[..., :, i:i + 1]
        q = q - tau[..., i:i + 1, None] * (vi @ (vi.mT @ q))
    return q


def _geqrf_reflectors(q: Tensor) -> Tensor:
    """PyTorch's right inverse of the Householder map without trivialization: LAPACK's
    geqrf of ``q`` (numpy's ``qr(mode='raw')``, transposed) with its diagonal the signs
    of R's, negated where geqrf made no reflection (``tau == 0``)."""
    h, tau = np.linalg.qr(q._value, mode="raw")
    a = np.array(np.swapaxes(h, -1, -2))
    d = np.sign(np.diagonal(a, axis1=-2, axis2=-1))
    d = np.where(tau == 0.0, -d, d)
    k = d.shape[-1]
    a[..., np.arange(k), np.arange(k)] = d
    return Tensor._make(a)


class _Orthogonal(Module):
    def __init__(self, weight: Tensor, orthogonal_map: str, *,
                 use_trivialization: bool = True):
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            X = X.tril()
            if n != k:
                X = cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mT
            if self.orthogonal_map == "matrix_exp":
                Q = A.matrix_exp()
            else:
                Id = eye(n, dtype=A.dtype)
                Q = solve(Id - 0.5 * A, Id + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = _householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)  # (±1: not differentiated)
        if hasattr(self, "base"):
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q: Tensor) -> Tensor:
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map in ("matrix_exp", "cayley"):
                raise NotImplementedError(
                    "It is not possible to assign to the matrix exponential or the Cayley "
                    "parametrizations when use_trivialization=False.")
            A = _geqrf_reflectors(Q)
            return A.mT if transpose else A
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:
            N = randn(*(tuple(Q.shape[:-2]) + (n, n - k)), dtype=Q.dtype)
            Q = _make_orthogonal(cat([Q, N], dim=-1))
        self.base = Q
        neg_Id = zeros_like(Q_init)
        neg_Id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_Id


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Parametrize ``module.<name>`` as an orthogonal matrix (see the module docstring)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. "
                         f"Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = ("matrix_exp" if weight.size(-2) == weight.size(-1)
                          or weight.is_complex() else "householder")
    if orthogonal_map not in _MAPS:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
