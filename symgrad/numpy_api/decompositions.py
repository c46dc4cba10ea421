"""``np.linalg``'s decompositions on traced values, and the norms built on them.

``cholesky``, ``eigh``/``eigvalsh``, ``eig``/``eigvals``, ``qr``, ``svd``/``svdvals``,
``pinv`` and ``lstsq`` with numpy's signatures and named results, on the
primitives of :mod:`symgrad.prims.decompositions` (whose docstring lists the
conventions at degenerate points). What has no gradient is refused with what
to do instead: ``qr(mode="complete")`` of a tall matrix and ``svd`` with
``full_matrices=True`` of a non-square one (their extra columns are not
determined), ``mode="raw"``, complex input (``eig`` with complex eigenvalues
is refused when it runs). :func:`other_norm` adds to ``np.linalg.norm`` the
vector norms of any order and the matrix norms 1, -1, 2, -2, inf, -inf and
``"nuc"``.

    >>> import numpy as np, symgrad as sg
    >>> a = np.array([[2.0, 1.0], [1.0, 3.0]])
    >>> g = sg.grad(lambda a: np.sum(np.linalg.eigh(a).eigenvalues))(a)
    >>> g.round(12) + 0.0                  # the trace's gradient, on the lower triangle
    array([[1., 0.],
           [0., 1.]])
"""

from __future__ import annotations

import builtins
import operator
from typing import Any, NamedTuple

import numpy as np

from ..core.errors import ShapeError, UnsupportedFunctionError, user_location
from ..core.tracing import Traced, shape_of
from ..prims import decompositions as D
from ..prims import svd as SVD
from ..prims.elementwise import as_float
from ..prims.linalg import swap
from .complex_order import is_complex
from .dispatch import implements, normalize_axes
from .functions import max, min, reshape, sum, transpose, where


class EighResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


class EigResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


class QRResult(NamedTuple):
    Q: Any
    R: Any


class SVDResult(NamedTuple):
    U: Any
    S: Any
    Vh: Any


class LstsqResult(NamedTuple):
    x: Any
    residuals: Any
    rank: Any
    s: Any


def _refuse(what: str, instead: str) -> UnsupportedFunctionError:
    return UnsupportedFunctionError(f"{what} on a traced value (at {user_location()}): {instead}")


def _uplo(UPLO: str) -> str:
    uplo = str(UPLO).upper()
    if uplo not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    return uplo


@implements(np.linalg.cholesky)
def cholesky(a: Any, /, *, upper: bool = False) -> Any:
    """The lower Cholesky factor (``upper=True``: the upper one, from the upper triangle);
    only that triangle of ``a`` is read, and only it gets a gradient."""
    a = as_float(a)
    return swap(D.cholesky(swap(a))) if upper else D.cholesky(a)


@implements(np.linalg.eigh)
def eigh(a: Any, UPLO: str = "L") -> EighResult:
    """Eigenvalues (ascending) and eigenvectors of the symmetric matrix whose triangle
    ``UPLO`` ``a`` holds."""
    a, uplo = as_float(a), _uplo(UPLO)
    return EighResult(D.eigh(a, "values", uplo), D.eigh(a, "vectors", uplo))


@implements(np.linalg.eigvalsh)
def eigvalsh(a: Any, UPLO: str = "L") -> Any:
    return D.eigh(as_float(a), "values", _uplo(UPLO))


@implements(np.linalg.eig)
def eig(a: Any) -> EigResult:
    """Eigenvalues and unit eigenvectors of a real matrix whose eigenvalues are real (a
    ValueError when the function runs otherwise)."""
    a = as_float(a)
    return EigResult(D.eig(a, "values"), D.eig(a, "vectors"))


@implements(np.linalg.eigvals)
def eigvals(a: Any) -> Any:
    return D.eig(as_float(a), "values")


@implements(np.linalg.qr)
def qr(a: Any, mode: str = "reduced") -> Any:
    """``Q, R`` (``mode="r"``: ``R`` alone). ``"complete"`` is ``"reduced"`` where they
    agree (rows <= columns) and refused otherwise."""
    a = as_float(a)
    m, n = shape_of(a)[-2:]
    if mode == "complete" and m > n:
        raise _refuse("np.linalg.qr(..., mode='complete') of a matrix with more rows than "
                      "columns", "the extra columns of Q are not determined by a, so they "
                      "have no gradient; use mode='reduced'")
    if mode not in ("reduced", "complete", "r"):
        raise _refuse(f"np.linalg.qr(..., mode={mode!r})", "use mode='reduced' or 'r'")
    if mode == "r":
        return D.qr(a, "r")
    return QRResult(D.qr(a, "q"), D.qr(a, "r"))


@implements(np.linalg.svd)
def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True,
        hermitian: bool = False) -> Any:
    """``U, S, Vh`` with ``full_matrices=False`` (or of a square matrix); ``S`` alone with
    ``compute_uv=False``."""
    a = as_float(a)
    if not compute_uv and hermitian:
        # numpy's: |eigvalsh(a)| in descending order, of the lower triangle alone
        return np.flip(np.sort(np.absolute(D.eigh(a, "values", "L")), axis=-1), axis=-1)
    if not compute_uv:
        return SVD.svd(a, "s")
    m, n = shape_of(a)[-2:]
    if full_matrices and m != n:
        raise _refuse("np.linalg.svd(..., full_matrices=True) of a non-square matrix",
                      "the extra singular vectors are not determined by a, so they have no "
                      "gradient; pass full_matrices=False")
    if hermitian:
        raise _refuse("np.linalg.svd(..., hermitian=True)", "its singular vectors come from "
                      "np.linalg.eigh, with other signs; pass hermitian=False, or use "
                      "np.linalg.eigh")
    if np.iscomplexobj(a):  # U and Vh from one part (their phases go together)
        u, vh = SVD.complex_vectors(a)
        return SVDResult(u, SVD.svd(a, "s"), vh)
    return SVDResult(SVD.svd(a, "u"), SVD.svd(a, "s"), SVD.svd(a, "vh"))


if hasattr(np.linalg, "svdvals"):
    @implements(np.linalg.svdvals)
    def svdvals(x: Any, /) -> Any:
        return SVD.svd(as_float(x), "s")


def _scalar(value: Any, what: str) -> float:
    if isinstance(value, Traced) or np.ndim(value):
        raise _refuse(f"{what} that is an array or traced value", "pass one number")
    return float(value)


@implements(np.linalg.pinv)
def pinv(a: Any, rcond: Any = None, hermitian: bool = False, *, rtol: Any = np._NoValue) -> Any:
    """The pseudo-inverse, dropping singular values at most ``rcond`` times the largest
    (numpy's defaults); differentiated at constant rank, which is the derivative of
    numpy's function where the dropped singular values are 0. Its error is of the order
    of the dropped ones over the kept ones, at most ``rcond``: a cutoff above
    :data:`PINV_MAX_RCOND` is refused. ``hermitian=True`` reads the lower triangle
    alone, as numpy's (which calls ``eigh``)."""
    a = as_float(a)
    if rcond is None:
        rcond = 1e-15 if rtol is np._NoValue else (
            builtins.max(shape_of(a)[-2:]) * np.finfo(np.float64).eps if rtol is None
            else rtol)
    elif rtol is not np._NoValue:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    rcond = _scalar(rcond, "np.linalg.pinv's rcond")
    if rcond > PINV_MAX_RCOND:
        raise _refuse(f"np.linalg.pinv(..., rcond={rcond!r}) (or rtol)", "its gradient at "
                      "constant rank is the derivative of numpy's function only where the "
                      "singular values it drops are 0; with a cutoff above "
                      f"{PINV_MAX_RCOND} it may drop others. Compute the truncated "
                      "pseudo-inverse from np.linalg.svd(a, full_matrices=False) instead")
    if hermitian and is_complex(a):  # (numpy's eigh: the diagonal's real part)
        low = np.tril(a, -1)
        a = low + np.conj(swap(low)) + np.eye(shape_of(a)[-1]) * np.real(a)
    elif hermitian:
        a = np.tril(a) + swap(np.tril(a, -1))  # the symmetric matrix of the lower triangle
    return SVD.pinv(a, rcond)


#: the largest pinv cutoff (relative to the largest singular value) differentiated
PINV_MAX_RCOND = 1e-8


@implements(np.linalg.lstsq)
def lstsq(a: Any, b: Any, rcond: Any = None) -> LstsqResult:
    """``(x, residuals, rank, s)`` as numpy: ``x`` the minimum-norm least-squares solution
    (differentiated at constant rank), ``residuals`` the squared norms of ``b - a @ x``
    when ``a`` has more rows than columns (nan where it is rank-deficient, for which numpy
    returns an empty array), ``rank`` a traced float, ``s`` the singular values."""
    a, b = as_float(a), as_float(b)
    if len(shape_of(a)) != 2:  # (the primitive takes stacks, which vmap makes)
        raise ShapeError(f"np.linalg.lstsq: a must be a matrix, as numpy's, got the shape "
                         f"{shape_of(a)}; for a stack of matrices use sg.vmap(np.linalg.lstsq)")
    if rcond is None:
        rcond = np.finfo(np.float64).eps * builtins.max(shape_of(a)[-2:] or (0,))
    x = SVD.lstsq(a, b, _scalar(rcond, "np.linalg.lstsq's rcond"))  # checks the shapes
    m, n = shape_of(a)
    s = SVD.svd(a, "s")
    top = max(s) if shape_of(s)[0] else 0.0
    rank = sum(where(np.greater(s, rcond * top), 1.0, 0.0))
    if m > n:
        r = b - np.matmul(a, x)
        residual = sum(np.square(np.abs(r) if is_complex(r) else r), axis=0)
        residuals = where(np.equal(rank, float(n)),
                          reshape(residual, shape_of(residual) or (1,)), np.nan)
    else:
        residuals = np.empty((0,))
    return LstsqResult(x, residuals, rank, s)


# ---------------------------------------------------------------------------
# norms beyond the 2-norm, 1, inf and Frobenius (np.linalg.norm's other orders)


def _vector_norm(x: Any, ord: float, axes: tuple[int, ...], keepdims: bool) -> Any:
    if ord == 0:  # the number of nonzero entries: piecewise constant
        return sum(where(np.not_equal(x, 0.0), 1.0, 0.0), axis=axes, keepdims=keepdims)
    # numpy's sum(|x|**ord) ** (1/ord); where the sum is 0 the norm is the constant 0,
    # with gradient 0 (as the 2-norm's at 0)
    total = sum(np.power(np.absolute(x), ord), axis=axes, keepdims=keepdims)
    zero = np.equal(total, 0.0)
    return where(zero, 0.0, np.power(where(zero, 1.0, total), 1.0 / ord))


def _matrix_norm(x: Any, ord: Any, axes: tuple[int, int], keepdims: bool) -> Any:
    row, col = axes
    if ord in ("nuc", 2, -2):  # from the singular values of the matrices over (row, col)
        rest = [k for k in range(len(shape_of(x))) if k not in axes]
        s = SVD.svd(transpose(x, (*rest, row, col)), "s")
        reduce = {"nuc": sum, 2: max, -2: min}[ord]
        result = reduce(s, axis=-1)
    elif ord in (1, -1, np.inf, -np.inf):
        summed, other = (row, col) if ord in (1, -1) else (col, row)
        totals = sum(np.absolute(x), axis=summed)
        reduce = max if ord > 0 else min
        result = reduce(totals, axis=other - (other > summed))
    else:
        raise ValueError("Invalid norm order for matrices.")
    if keepdims:
        shape = list(shape_of(x))
        shape[row] = shape[col] = 1
        result = reshape(result, tuple(shape))
    return result


def other_norm(x: Any, ord: Any, axes: tuple[int, ...], keepdims: bool, matrix: bool) -> Any:
    """``np.linalg.norm(x, ord, axes, keepdims)`` for the orders that
    :func:`symgrad.numpy_api.linalg.norm` passes on: vector norms of any other order,
    matrix norms other than Frobenius."""
    if matrix:
        return _matrix_norm(x, ord, axes, keepdims)
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    return _vector_norm(x, float(ord), axes, keepdims)


def axes_of(axis: Any, ndim: int) -> tuple[int, ...]:
    """numpy's ``axis=`` as a tuple of axes (in the order given)."""
    items = axis if isinstance(axis, (tuple, list)) else (axis,)
    return tuple(normalize_axes(operator.index(a), ndim)[0] for a in items)
