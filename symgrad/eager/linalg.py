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
import functools
from typing import Any

import numpy as np

from ..numpy_api import functions as ops
from ..numpy_api.scipy_linalg import expm as _expm
from ..prims import svd as _svd_prims
from . import reduction_methods
from .composite_functions import vander
from .linalg_ex import LinAlgError
from .linalg_ex import around_failures as _around_failures
from .linalg_ex import infos as _infos
from .linalg_ex import linalg_error as _linalg_error
from .lu import lu, lu_factor, lu_factor_ex
from .methods import named
from .select_methods import cross3 as _cross3
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
    if 1 < B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]):
        # PyTorch's batch of vectors (B's shape is A's without its last dim, exactly;
        # numpy's solve takes only a 1-d B as a vector)
        return solve(A, B.unsqueeze(-1)).squeeze(-1)
    return named(np.linalg.solve(A, B), A, "LinalgSolveExBackward0", (A, B))


def inv(A: Any) -> Any:
    A = _square(A, "inv")
    try:
        return named(np.linalg.inv(A), A, "LinalgInvExBackward0", (A,))
    except np.linalg.LinAlgError:  # PyTorch's error, naming the matrix and its zero pivot
        error = _linalg_error("linalg.inv", _infos(A._value, "getrf"))
        if error is None:
            raise
        raise error from None


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
    try:
        L = named(np.linalg.cholesky(A_used), A, "LinalgCholeskyExBackward0", (A,))
    except np.linalg.LinAlgError:  # PyTorch's error, naming the matrix and its minor
        error = _linalg_error("linalg.cholesky", _infos(A._value, "potrf"))
        if error is None:
            raise
        raise error from None
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
    """The ``ord`` norm of the matrices over ``dim`` (:func:`.reduction_methods.matrix_norm`)."""
    return reduction_methods.matrix_norm(_tensor(A), ord, dim, keepdim, dtype=dtype)


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


# ---------------------------------------------------------------------------
# pinv, lstsq, matrix_rank, cond, cross, multi_dot, vecdot, matrix_exp, solve_triangular,
# inv_ex, cholesky_ex: compositions of the primitives (gradients from the core): pinv and
# lstsq from the SVD (differentiated at constant rank, PyTorch's convention), matrix_exp
# from sg.scipy.linalg.expm, solve_triangular as solve of the triangle it reads (A's
# gradient is that triangle's, as PyTorch's). inv_ex/cholesky_ex return LAPACK's info: a
# singular or non positive-definite matrix gets NaN values and gradients (.linalg_ex).

_lstsq = _result("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
_inv_ex = _result("linalg_inv_ex", ["inverse", "info"])
_cholesky_ex = _result("linalg_cholesky_ex", ["L", "info"])


def _matrices(A: Any, name: str) -> Any:
    A = _tensor(A)
    if A.ndim < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 "
                           f"dimensions.")
    return A


def _default_rtol(A: Any, atol: Any, rtol: Any) -> float:
    if rtol is not None:
        return float(rtol)
    if atol is not None and atol > 0:
        return 0.0
    return max(A.shape[-2:]) * float(np.finfo(A._value.dtype).eps)


def pinv(A: Any, *, atol: Any = None, rtol: Any = None, hermitian: bool = False) -> Any:
    """The pseudo-inverse, dropping singular values at most ``max(atol, rtol * largest)``
    (PyTorch's default ``rtol = max(m, n) * eps``). Its gradient is PyTorch's
    ``pinv_backward`` of the truncated result, also where a dropped singular value is not
    0 (which is then no derivative of the function, as PyTorch's)."""
    A = _matrices(A, "pinv")
    if hermitian:  # the symmetric matrix of the lower triangle (PyTorch's eigh reads it)
        if A.requires_grad and not np.array_equal(A._value, np.swapaxes(A._value, -1, -2)):
            raise NotImplementedError(
                "linalg.pinv(hermitian=True) of a nonsymmetric tensor that requires grad: "
                "PyTorch's gradient is its general pinv formula applied to the whole matrix "
                "and the pseudo-inverse of its lower triangle's symmetric matrix, which "
                "symgrad does not reproduce; pass the symmetric matrix (A.tril() + "
                "A.tril(-1).mT) or use hermitian=False")
        if not A.requires_grad:
            A = _hermitian(A, "L", "pinv")
        # (a symmetric A requiring grad: the general pinv, PyTorch's gradient there)
    rcond = _relative_cutoffs(A, atol, rtol)
    if rcond.size <= 1 or np.all(rcond == rcond.flat[0]):
        result = _svd_prims.pinv(A, float(rcond.flat[0]) if rcond.size else 0.0)
    else:  # an absolute cutoff: a relative one per matrix
        flat = A.reshape(-1, *A.shape[-2:])
        result = np.stack([_svd_prims.pinv(flat[k], float(r)) for k, r in
                            enumerate(rcond.reshape(-1))]).reshape(*A.shape[:-2], A.shape[-1],
                                                                   A.shape[-2])
    return named(result, A, "LinalgPinvBackward0", (A,))


def _relative_cutoffs(A: Any, atol: Any, rtol: Any) -> np.ndarray:
    """``max(atol, rtol * largest)`` over each matrix's largest singular value, per matrix
    (PyTorch's cutoff as the pinv primitive's ``rcond``); without ``rtol``, PyTorch's
    default where ``atol`` is not above 0, and 0 where it is."""
    default = max(A.shape[-2:]) * float(np.finfo(A._value.dtype).eps)
    value = (lambda t: np.asarray(getattr(t, "_value", t), dtype=np.float64))
    if atol is None:
        return np.full(A.shape[:-2], default if rtol is None else value(rtol))
    atol = value(atol)
    rtol = np.where(atol > 0, 0.0, default) if rtol is None else value(rtol)
    s = np.linalg.svd(A._value.astype(np.float64), compute_uv=False)
    top = s[..., 0] if s.shape[-1] else np.zeros(s.shape[:-1])
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.maximum(np.where(atol > 0, atol / top, 0.0), rtol)
    return np.where(np.isfinite(r), r, np.inf) * np.ones(A.shape[:-2])


def _cutoff(A: Any, rtol: float) -> float:
    """``rtol`` as the pseudo-inverse's cutoff, lowered to the most symgrad differentiates
    (``PINV_MAX_RCOND``) where no singular value lies between the two: the same result
    (float32's default ``max(m, n) * eps`` is above it). A singular value in between is
    refused: dropping it is not differentiated at constant rank."""
    from ..numpy_api.decompositions import PINV_MAX_RCOND
    if rtol <= PINV_MAX_RCOND:
        return rtol
    s = np.linalg.svd(A._value.astype(np.float64), compute_uv=False)
    ratio = s / np.maximum(s[..., :1], np.finfo(np.float64).tiny)
    if ((ratio > PINV_MAX_RCOND) & (ratio <= rtol)).any():
        raise NotImplementedError(
            f"linalg.pinv/lstsq: a singular value is between {PINV_MAX_RCOND} and the cutoff "
            f"{rtol:g} times the largest: dropping it has no gradient at constant rank; pass "
            "rtol= (rcond=) at most 1e-8, or compute in float64")
    return PINV_MAX_RCOND


def matrix_rank(A: Any, *, atol: Any = None, rtol: Any = None, hermitian: bool = False) -> Any:
    """The number of singular values above ``max(atol, rtol * largest)`` (int64)."""
    A = _matrices(A, "matrix_rank")
    a = A._value
    if hermitian:
        a = np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2)
        s = np.abs(np.linalg.eigvalsh(a))
    else:
        s = np.linalg.svd(a, compute_uv=False)
    top = s.max(axis=-1, initial=0.0)
    cutoff = np.maximum(0.0 if atol is None else atol, _default_rtol(A, atol, rtol) * top)
    return Tensor._make(np.asarray((s > cutoff[..., None]).sum(axis=-1), dtype=np.int64))


def lstsq(A: Any, B: Any, rcond: Any = None, *, driver: str | None = None) -> Any:
    """``(solution, residuals, rank, singular_values)``: the minimum-norm least-squares
    solution ``pinv(A) @ B`` (PyTorch's gradient, at constant rank); ``residuals`` and
    ``singular_values`` as PyTorch's CPU drivers give them (empty for ``gelsy``, the
    default)."""
    A, B = _matrices(A, "lstsq"), _tensor(B)
    if driver not in (None, "gelsy", "gelsd", "gelss", "gels"):
        raise RuntimeError(f"torch.linalg.lstsq: parameter `driver` should be one of (gels, "
                           f"gelsy, gelsd, gelss), got {driver}")
    vector = B.ndim == A.ndim - 1
    Bm = B.unsqueeze(-1) if vector else B
    m, n = A.shape[-2:]
    if Bm.shape[-2] != m:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size(-2), "
                           f"got {m} and {Bm.shape[-2]}")
    eps = float(np.finfo(A._value.dtype).eps)
    cut = max(m, n) * eps if rcond is None else float(rcond)
    X = np.linalg.pinv(A, rcond=_cutoff(A, cut)) @ Bm
    s = np.linalg.svd(A._value, compute_uv=False)
    rank = Tensor._make(np.asarray((s > cut * s.max(axis=-1, keepdims=True)).sum(-1),
                                   dtype=np.int64))
    svals = Tensor._make(s if driver in ("gelsd", "gelss") else np.zeros(0, A._value.dtype))
    residuals = X.reshape(-1)[:0]  # empty (PyTorch's, requiring grad as it does)
    if driver not in (None, "gelsy") and m > n and bool((rank._value == n).all()):
        residuals = ((A @ X - Bm) ** 2).sum(-2)
    X = X.squeeze(-1) if vector else X
    return _lstsq(named(X, A, "LinalgLstsqBackward0", (A, B)), residuals, rank, svals)


def cond(A: Any, p: Any = None) -> Any:
    """The condition number in the norm ``p``: the ratio of the extreme singular values
    for ``p`` None, 2 or -2; ``norm(A, p) * norm(inv(A), p)`` for the others."""
    A = _matrices(A, "cond")
    if p in (None, 2, -2):
        s = svdvals(A)
        big, small = s[..., 0], s[..., -1]
        return big / small if p != -2 else small / big
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


def cross(input: Any, other: Any, *, dim: int = -1) -> Any:
    """The cross product of 3-vectors along ``dim`` (broadcast)."""
    return _cross3(_tensor(input), _tensor(other), dim)


def _torch_cross(input: Any, other: Any, dim: int | None = None) -> Any:
    """``torch.cross``: ``Tensor.cross`` (``dim=None`` is the first dimension of size 3,
    PyTorch's deprecated default)."""
    return _tensor(input).cross(_tensor(other), dim)


def multi_dot(tensors: Any) -> Any:
    """``A @ B @ ...``; the first may be a row vector and the last a column (1-d)."""
    tensors = [_tensor(t) for t in tensors]
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    for k, t in enumerate(tensors):
        allowed = (1, 2) if k in (0, len(tensors) - 1) else (2,)
        if t.ndim not in allowed:
            raise RuntimeError(f"multi_dot(): tensor {k} must be "
                               f"{'1D or 2D' if len(allowed) == 2 else '2D'} but got "
                               f"{t.ndim}D")
    return functools.reduce(lambda x, y: x @ y, tensors)


def vecdot(x: Any, y: Any, *, dim: int = -1) -> Any:
    """``sum(x * y, dim)`` (real tensors: no conjugate), broadcast."""
    return (_tensor(x) * _tensor(y)).sum(dim)


def matrix_exp(A: Any) -> Any:
    A = _matrices(A, "matrix_exp")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError("linalg.matrix_exp: A must be batches of square matrices, but "
                           f"they are {A.shape[-2]} by {A.shape[-1]} matrices")
    out = _expm(A)
    return named(out if out.dtype == A.dtype else out.to(A.dtype), A,
                 "LinalgMatrixExpBackward0", (A,))


def solve_triangular(A: Any, B: Any, *, upper: bool, left: bool = True,
                     unitriangular: bool = False) -> Any:
    """``X`` with ``A X = B`` (``X A = B`` for ``left=False``), reading only ``A``'s
    upper or lower triangle (its diagonal taken as ones if ``unitriangular``)."""
    A, B = _matrices(A, "solve_triangular"), _tensor(B)
    if B.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 "
                           "dimensions.")
    T = A.triu() if upper else A.tril()
    if unitriangular:
        T = T.triu(1) if upper else T.tril(-1)
        T = T + Tensor._make(np.eye(A.shape[-1], dtype=A._value.dtype))
    X = solve(T, B) if left else solve(T.transpose(-2, -1), B.transpose(-2, -1)).transpose(-2, -1)
    return named(X, A, "LinalgSolveTriangularBackward0", (A, B))


def inv_ex(A: Any, *, check_errors: bool = False) -> Any:
    """``(inverse, info)``: LAPACK's info per matrix; a singular one's inverse is NaN
    (:mod:`.linalg_ex`), or with ``check_errors`` PyTorch's ``LinAlgError``."""
    return _ex(inv, _inv_ex, "inv_ex", "getrf", A, check_errors)


def cholesky_ex(A: Any, *, upper: bool = False, check_errors: bool = False) -> Any:
    """``(L, info)``: LAPACK's info per matrix; the factor of one that is not
    positive-definite is NaN (:mod:`.linalg_ex`), or with ``check_errors`` PyTorch's
    ``LinAlgError``."""
    return _ex(functools.partial(cholesky, upper=upper), _cholesky_ex, "cholesky_ex",
               "potrf", A, check_errors)


def _ex(fn: Any, result: type, name: str, routine: str, A: Any, check_errors: bool) -> Any:
    A = _square(A, name)
    try:
        return result(fn(A), Tensor._make(np.zeros(tuple(A.shape[:-2]), np.int32)))
    except LinAlgError:
        info = _infos(A._value, routine)
    error = _linalg_error(f"linalg.{name}", info) if check_errors else None
    if error is not None:
        raise error
    out = named(_around_failures(fn, A, info), A, f"Linalg{name.title().replace('_', '')}"
                "Backward0", (A,))
    return result(out, Tensor._make(info))


__all__ = ["solve", "inv", "det", "slogdet", "cholesky", "qr", "svd", "svdvals", "eigh",
           "eigvalsh", "vector_norm", "matrix_norm", "norm", "matrix_power", "pinv", "matrix_rank",
           "lstsq", "cond", "cross", "multi_dot", "vecdot", "matrix_exp", "solve_triangular",
           "inv_ex", "cholesky_ex", "LinAlgError", "lu", "lu_factor", "lu_factor_ex", "vander"]
