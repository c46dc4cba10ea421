"""``torch.linalg`` for symgrad Tensors: numpy's ``linalg`` on Tensors, with PyTorch's
names, defaults and result tuples (gradients from the decompositions' own rules).

    >>> import symgrad as torch
    >>> a = torch.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
    >>> torch.linalg.slogdet(a)
    torch.return_types.linalg_slogdet(
    sign=tensor(1., grad_fn=<LinalgSlogdetBackward0>),
    logabsdet=tensor(1.6094, grad_fn=<LinalgSlogdetBackward0>))
"""

from __future__ import annotations

import collections
from typing import Any

import numpy as np

from ..numpy_api import functions as ops
from .methods import named
from .tensor import Tensor


def _result(name: str, fields: list[str]) -> type:
    base = collections.namedtuple(name, fields)  # type: ignore[misc]

    def __repr__(self: Any) -> str:
        inner = ",\n".join(f"{f}={getattr(self, f)!r}" for f in fields)
        return f"torch.return_types.{name}(\n{inner})"

    return type(name, (base,), {"__slots__": (), "__repr__": __repr__})


_slogdet = _result("linalg_slogdet", ["sign", "logabsdet"])
_qr = _result("linalg_qr", ["Q", "R"])
_svd = _result("linalg_svd", ["U", "S", "Vh"])
_eigh = _result("linalg_eigh", ["eigenvalues", "eigenvectors"])


def _tensor(x: Any) -> Any:
    return x if isinstance(x, Tensor) else Tensor._leaf(np.asarray(x))


def _square(a: Any, name: str) -> Any:
    a = _tensor(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"linalg.{name}: A must be batches of square matrices, but they are "
                           f"{a.shape[-2] if a.ndim >= 2 else 1} by {a.shape[-1]} matrices")
    return a


def solve(A: Any, B: Any, *, left: bool = True) -> Any:
    A, B = _square(A, "solve"), _tensor(B)
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return solve(A.transpose(-2, -1), B.transpose(-2, -1)).transpose(-2, -1)
    return named(np.linalg.solve(A, B), A, "LinalgSolveExBackward0", (A, B))


def inv(A: Any) -> Any:
    A = _square(A, "inv")
    return named(np.linalg.inv(A), A, "LinalgInvExBackward0", (A,))


def det(A: Any) -> Any:
    A = _square(A, "det")
    return named(np.linalg.det(A), A, "LinalgDetBackward0", (A,))


def slogdet(A: Any) -> Any:
    A = _square(A, "slogdet")
    sign, logabsdet = np.linalg.slogdet(A)
    if isinstance(sign, Tensor):
        sign = _zero_gradient(sign.detach(), A[..., 0, 0])
    return _slogdet(named(sign, A, "LinalgSlogdetBackward0", (A,)),
                    named(logabsdet, A, "LinalgSlogdetBackward0", (A,)))


def _zero_gradient(value: Any, source: Any) -> Any:
    """``value``, an output of ``source``'s graph with a zero gradient, as PyTorch's
    piecewise-constant outputs (slogdet's sign, matrix_power(A, 0)): it requires grad
    when ``source`` does (a selection: exact zeros, whatever ``source``'s values)."""
    if not getattr(source, "requires_grad", False):
        return value
    return ops.where(np.ones(tuple(value.shape), dtype=bool), value, source)


def cholesky(A: Any, *, upper: bool = False) -> Any:
    """The factor of A's lower triangle (as PyTorch's, which reads only it), with PyTorch's
    symmetric gradient: taken through (A + A^T) / 2, equal to A where A is symmetric."""
    A = _square(A, "cholesky")
    if A.requires_grad:
        symmetric = (A + A.transpose(-2, -1)) * 0.5
        lower = A.tril() + A.tril(-1).transpose(-2, -1)
        A_used = symmetric + (lower - symmetric).detach()
    else:
        A_used = A
    L = named(np.linalg.cholesky(A_used), A, "LinalgCholeskyExBackward0", (A,))
    return L.transpose(-2, -1) if upper else L


def qr(A: Any, mode: str = "reduced") -> Any:
    if mode not in ("reduced", "complete"):
        raise NotImplementedError(f"linalg.qr: mode={mode!r} is not supported (reduced, "
                                  "complete)")
    Q, R = np.linalg.qr(_tensor(A), mode=mode)
    return _qr(Q, R)


def svd(A: Any, full_matrices: bool = True) -> Any:
    U, S, Vh = np.linalg.svd(_tensor(A), full_matrices=full_matrices)
    return _svd(U, S, Vh)


def svdvals(A: Any) -> Any:
    return np.linalg.svd(_tensor(A), compute_uv=False)


def _hermitian(A: Any, UPLO: str, name: str) -> Any:
    """The symmetric matrix of ``A``'s ``UPLO`` triangle, whose gradient is the symmetric
    part of the one it receives: PyTorch's convention (the gradient of ``eigh`` is
    computed as if the input were symmetric), where numpy's function reads one triangle."""
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"linalg.{name}: UPLO must be 'L' or 'U', not {UPLO!r}")
    A = _square(A, name)
    kept = np.tril(np.ones(A.shape[-2:], dtype=bool), 0 if UPLO == "L" else -1)
    value = np.where(kept if UPLO == "L" else ~kept, A._value, 0.0)
    triangle = value + np.swapaxes(value, -1, -2) - value * np.eye(A.shape[-1], dtype=value.dtype)
    change = A - A.detach()
    return (change + change.transpose(-2, -1)) * 0.5 + Tensor._leaf(triangle)


def eigh(A: Any, UPLO: str = "L") -> Any:
    w, v = np.linalg.eigh(_hermitian(A, UPLO, "eigh"))
    return _eigh(w, v)


def eigvalsh(A: Any, UPLO: str = "L") -> Any:
    return np.linalg.eigvalsh(_hermitian(A, UPLO, "eigvalsh"))


def _dims(dim: Any) -> Any:
    return tuple(dim) if isinstance(dim, (list, tuple)) else dim


def vector_norm(x: Any, ord: Any = 2, dim: Any = None, keepdim: bool = False, *,
                dtype: Any = None) -> Any:
    """The ``ord``-norm of ``x`` flattened (``dim=None``) or along ``dim``."""
    x = _tensor(x)
    if dim is None:
        x, dim = x.reshape(-1), 0
        if keepdim:
            return vector_norm(x, ord, 0, True).reshape((1,) * _tensor(x).ndim)
    return x.norm(ord if ord != "fro" else 2, _dims(dim), keepdim, dtype)


def matrix_norm(A: Any, ord: Any = "fro", dim: tuple[int, int] = (-2, -1),
                keepdim: bool = False, *, dtype: Any = None) -> Any:
    A = _tensor(A)
    if dtype is not None:
        A = A.to(dtype)
    return np.linalg.norm(A, ord, tuple(dim), keepdims=keepdim)


def norm(A: Any, ord: Any = None, dim: Any = None, keepdim: bool = False, *,
         dtype: Any = None) -> Any:
    """``vector_norm`` for a vector or an int ``dim``, ``matrix_norm`` for a matrix or a
    pair of dims (the 2-norm of all elements when both are left out)."""
    A = _tensor(A)
    if dim is not None and not isinstance(dim, int) and len(dim) == 2 or \
            dim is None and ord is not None and A.ndim == 2:
        return matrix_norm(A, "fro" if ord is None else ord, (-2, -1) if dim is None else dim,
                           keepdim, dtype=dtype)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def matrix_power(A: Any, n: int) -> Any:
    A = _square(A, "matrix_power")
    if n < 0:
        return matrix_power(inv(A), -n)
    result = None
    base = A
    while n:
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    if result is None:
        eye = np.broadcast_to(np.eye(A.shape[-1]), tuple(A.shape))
        return named(_zero_gradient(Tensor._leaf(eye.astype(A._value.dtype)), A), A,
                     "CopyBackwards", (A,))  # A: the identity's shape
    return result


__all__ = ["solve", "inv", "det", "slogdet", "cholesky", "qr", "svd", "svdvals", "eigh",
           "eigvalsh", "vector_norm", "matrix_norm", "norm", "matrix_power"]
