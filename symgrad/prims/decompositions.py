"""Matrix decompositions: cholesky, eigh, eig, qr (svd, pinv and lstsq: :mod:`.svd`).

Each is one primitive over a matrix or a stack of matrices (a loop over the
batch axes in the kernel, which calls LAPACK through Numba's ``np.linalg``). A
decomposition with several results is one primitive with a ``part`` parameter
(``eigh(x, part="values")``, ``svd(x, part="u")``): each part's VJP gives that
part's share of the gradient, the adjoint adds them up, and CSE merges the two
calls of one part (the forward's and a VJP's) into one.

VJP rules are PyTorch's documented formulas (``cholesky_backward``,
``linalg_eig_backward``, ``linalg_qr_backward``, ``svd_backward``,
``pinv_backward``), written with ``matmul`` and ``solve``; tests check them
against finite differences and against those formulas written out in numpy.
Conventions (rows of :mod:`symgrad.core.conventions`):

- ``cholesky`` and ``eigh`` read one triangle of their input (numpy's
  ``UPLO``): the gradient lives on that triangle, the symmetric gradient's
  off-diagonal entries added up there; along symmetric perturbations (any
  ``A(X)`` that is symmetric) it gives PyTorch's symmetric gradient;
- where two eigenvalues (singular values) are exactly equal, the gradient
  through the eigenvectors (singular vectors) is nan: it is not determined
  there (PyTorch gives nan or inf, JAX inf). Eigenvalues and singular values
  alone keep a finite gradient;
- a zero singular value of a non-square matrix makes the gradient through the
  singular vectors nan (the ``S^-1`` terms);
- ``pinv`` and ``lstsq`` differentiate along perturbations of constant rank
  (the Golub-Pereyra formula, as PyTorch): at a rank-deficient matrix, the
  gradient of the map restricted to matrices of that rank;
- ``eig`` of a real matrix with complex eigenvalues is refused when it runs.
- ``cholesky`` and ``qr`` of complex matrices: PyTorch's rules (conjugate transposes)
  conjugated into symgrad's convention (JAX's); ``cholesky`` reads the lower triangle
  of a Hermitian matrix, ``qr``'s R has a real diagonal (LAPACK's).
- complex eigenvectors (``eig``, ``eigh``): a loss that depends on their phases
  gets nan (PyTorch raises).
- ``svd`` of a complex matrix: JAX's rule (the phase of each pair of singular
  vectors put on U); a loss that depends on those phases gets nan (PyTorch
  raises), tested on the cotangents of U and Vh together, which the part ``uv``
  (U above Vh^T) brings to one VJP.

``cholesky``, ``pinv`` and ``lstsq`` have SymPy forms (for matrices of full
rank); the others are checked against finite differences.

Under ``vmap`` (the ``batch`` facets) a batch of matrices is one more stack
axis, so each primitive runs once on the batch; the VJP rules, written for
stacks, stay valid. ``lstsq`` takes a stack of matrices ``a`` with one of
right-hand-side matrices ``b`` (numpy's own ``lstsq`` takes no stacks: only the
batching rule makes them); when only ``b`` is batched, its examples become more
columns of one right-hand side.

    >>> import numpy as np
    >>> from_triangle(np.array([[1.0, 2.0], [3.0, 4.0]]), lower=True)
    array([[1., 0.],
           [5., 4.]])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import ShapeError
from ..core.ir import FLOAT, Aval, real_of
from ..core.tracing import apply, shape_of
from .complex import cabs, conj, imag, real
from .convert import convert
from .elementwise import where
from .indexing import along, concatenate_p
from .linalg import _square_rule, _stacked, matmul, solve, swap
from .reductions import broadcast_to, max_p, reduce, reshape, sum_p
from .registry import register, require

NAN = float("nan")


# ---------------------------------------------------------------------------
# helpers of the VJP rules (they record primitives; on arrays, numpy computes)


def _eye(n: int) -> np.ndarray:
    return np.eye(n, dtype=bool)


def tril(x: Any, k: int = 0) -> Any:
    """``x`` with the elements above diagonal ``k`` of its last two axes set to 0."""
    n, m = shape_of(x)[-2:]
    return where(np.tri(n, m, k, dtype=bool), x, 0.0)


def diagonal(x: Any) -> Any:
    """The diagonals of a stack of square matrices, as a stack of vectors."""
    shape = shape_of(x)
    return reduce(sum_p, where(_eye(shape[-1]), x, 0.0), (len(shape) - 1,))


def columns(x: Any, v: Any) -> Any:
    """``x @ diag(v)``: column j of each matrix of ``x`` times ``v[..., j]``."""
    return x * reshape(v, shape_of(v)[:-1] + (1, shape_of(v)[-1]))


def rows(v: Any, x: Any) -> Any:
    """``diag(v) @ x``: row i of each matrix of ``x`` times ``v[..., i]``."""
    return reshape(v, shape_of(v) + (1,)) * x


def _sym(x: Any) -> Any:
    return (x + swap(x)) * 0.5


def from_triangle(s: Any, lower: bool) -> Any:
    """The gradient with respect to a matrix of which only one triangle is read, from
    the symmetric gradient ``s``: ``s_ii`` on the diagonal, ``s_ij + s_ji`` in the
    triangle read, 0 in the other."""
    n = shape_of(s)[-1]
    keep = np.tri(n, dtype=bool) if lower else np.tri(n, dtype=bool).T
    return where(_eye(n), s, where(keep, s + swap(s), 0.0))


def _gaps(w: Any, squares: bool = False) -> Any:
    """``F[..., i, j] = 1 / (w_j - w_i)`` (``1 / (w_j^2 - w_i^2)`` with ``squares``) off
    the diagonal, 0 on it, and nan where ``w_i == w_j`` (the gradient through the
    vectors is not determined there)."""
    shape = shape_of(w)
    n = shape[-1]
    wj, wi = reshape(w, shape[:-1] + (1, n)), reshape(w, shape + (1,))
    d = wj - wi
    denominator = d * (wj + wi) if squares else d
    safe = where(_eye(n), 1.0, denominator)
    zero = (cabs(d) if np.dtype(d.dtype).kind == "c" else d) == 0.0
    return where(_eye(n), 0.0, where(zero, NAN, 1.0 / safe))


def _right_inverse_transpose(b: Any, r: Any) -> Any:
    """``b @ inv(r).T``, as ``solve(r, b.T).T``."""
    return swap(solve(r, swap(b)))


def _no_sympy(name: str):
    def sympy(sp, *args, **params):
        raise NotImplementedError(f"{name} has no closed form in SymPy; its gradient is "
                                  "checked against finite differences")
    return sympy


# ---------------------------------------------------------------------------
# batching: the batch axis is one more axis of a stack of matrices


def _batched(b, args, flags) -> list:
    """Every operand with the batch axis (the unbatched ones broadcast along it)."""
    return [x if f else b.with_batch(x) for x, f in zip(args, flags)]


def _each_matrix(b, prim, args, params) -> tuple[Any, bool]:
    """The batching rule of a primitive of one stack of matrices: the batch axis is one
    more stack axis."""
    return b.bind(prim, args, **params), True


# ---------------------------------------------------------------------------
# cholesky


def _cholesky_rule(x: Aval) -> Aval:
    _square_rule("cholesky", x)
    return Aval(x.shape, x.dtype)


def _cholesky_vjp(g, ans, x):
    # PyTorch's cholesky_backward: L^-T Phi(L^T gL) L^-1, symmetrized, where Phi takes
    # the lower triangle with the diagonal halved (Murray 2016, arXiv:1602.07527). A
    # complex (Hermitian) matrix: PyTorch's L^-H Phi(L^H gL) L^-1 conjugated into
    # symgrad's convention is L^-T Phi(L^T g) conj(L)^-1, on the triangle numpy reads
    n = shape_of(ans)[-1]
    phi = tril(matmul(swap(ans), g))
    phi = where(_eye(n), phi * 0.5, phi)
    if x.dtype.kind == "c":
        s = _right_inverse_transpose(solve(swap(ans), phi), conj(swap(ans)))
        return (_hermitian_triangle(s, "L"),)
    s = _right_inverse_transpose(solve(swap(ans), phi), swap(ans))
    return (from_triangle(_sym(s), lower=True),)


def _cholesky_sympy(sp, x):
    def one(m):  # the lower triangle, its conjugate above, the diagonal's real part (LAPACK)
        n = m.shape[0]
        full = sp.Matrix(n, n, lambda i, j: m[i, j] if i > j else sp.re(m[i, i]) if i == j
                         else sp.conjugate(m[j, i]))
        return np.array(full.cholesky(hermitian=True).tolist(), dtype=object)
    return _stacked(one, x.ndim - 2, x)


cholesky_p = register(
    name="cholesky", complex=True, kind="array", shape_rule=_cholesky_rule, impl=np.linalg.cholesky,
    vjp=_cholesky_vjp,
    sympy=_cholesky_sympy, numpy=np.linalg.cholesky,
    batch=lambda b, args, flags: _each_matrix(b, cholesky_p, args, {}))


# ---------------------------------------------------------------------------
# eigh: eigenvalues (ascending) and eigenvectors of a symmetric matrix, of which
# the triangle ``uplo`` is read, as numpy's eigh(x, uplo) computes them: LAPACK reduces
# the upper triangle otherwise than the lower one, so eigh(x, "U")'s eigenvectors are
# not those of eigh(x.T) (signs differ), and Numba's eigh has no UPLO: the kernel of an
# upper triangle calls dsyevd itself (symgrad.backend.lapack)


def _eigh_rule(x: Aval, *, part: str, uplo: str) -> Aval:
    _square_rule("eigh", x)
    if part not in ("values", "vectors") or uplo not in ("L", "U"):
        raise ValueError(f"eigh: part {part!r} / uplo {uplo!r} unknown")
    # a Hermitian matrix's eigenvalues are real
    return Aval(x.shape[:-1], real_of(x.dtype)) if part == "values" else Aval(x.shape, x.dtype)


def _eigh_impl(x, part, uplo):
    return np.linalg.eigh(x, UPLO=uplo)[0 if part == "values" else 1]


def _hermitian_eigvals_vjp(g, x, uplo):
    """A complex Hermitian matrix of which numpy reads one triangle (the other is its
    conjugate transpose, the diagonal's imaginary part is ignored): dw_k = v_k^H dA v_k,
    whose transpose under Re(sum(a * b)) is G = conj(V) diag(g) V^T on the full matrix;
    an entry of the triangle read gets G_ij + conj(G_ji), the diagonal Re(G_ii)."""
    if uplo not in ("L", "U"):
        raise ValueError(f"eigh: uplo {uplo!r} unknown")
    v = eigh(x, "vectors", uplo)
    return _hermitian_triangle(matmul(columns(conj(v), g), swap(v)), uplo)


def _hermitian_triangle(full, uplo):
    n = shape_of(full)[-1]
    keep = np.tri(n, k=-1, dtype=bool) if uplo == "L" else np.tri(n, k=-1, dtype=bool).T
    return where(_eye(n), 0.5 * (full + conj(full)),
                 where(keep, full + conj(swap(full)), 0.0))


def _vector_phases_free(vtg: Any, ga: Any) -> Any:
    """``ga``, or nan where the loss depends on the phases of complex eigenvectors:
    ``Im(diag(V^T g))`` is that dependence (PyTorch raises where it is not 0)."""
    d = diagonal(vtg)
    last = (len(shape_of(d)) - 1,)
    im = imag(d)
    n = len(shape_of(vtg))
    scale = reduce(max_p, cabs(vtg), (n - 2, n - 1))
    bad = reduce(max_p, im * im, last) > 1e-16 * scale * scale
    return where(reshape(bad, shape_of(bad) + (1, 1)), NAN, ga)


def _complex_eigh_vectors_vjp(g, v, x, uplo):
    # PyTorch's linalg_eig_backward (Hermitian), conjugated into symgrad's convention:
    # G = conj(V) (F o (X - X^H) / 2) V^T with X = V^T g on the full matrix, then the
    # triangle numpy reads
    vtg = matmul(swap(v), g)
    skew = 0.5 * (vtg - conj(swap(vtg)))
    full = matmul(matmul(conj(v), _gaps(eigh(x, "values", uplo)) * skew), swap(v))
    return _vector_phases_free(vtg, _hermitian_triangle(full, uplo))


def _eigh_vjp(g, ans, x, *, part, uplo):
    if x.dtype.kind == "c":
        if part == "vectors":
            return (_complex_eigh_vectors_vjp(g, ans, x, uplo),)
        return (_hermitian_eigvals_vjp(g, x, uplo),)
    # A = V diag(w) V^T: dw_i = v_i^T dA v_i, dV = V (F o (V^T dA V)), F_ij = 1/(w_j - w_i)
    if part == "values":
        v = eigh(x, "vectors", uplo)
        s = matmul(columns(v, g), swap(v))
    else:
        v = ans
        s = matmul(matmul(v, _gaps(eigh(x, "values", uplo)) * matmul(swap(v), g)), swap(v))
    return (from_triangle(_sym(s), lower=uplo == "L"),)


eigh_p = register(
    name="eigh", complex=True, kind="array", shape_rule=_eigh_rule, impl=_eigh_impl,
    vjp=_eigh_vjp, sympy=_no_sympy("eigh"), numpy=np.linalg.eigh,
    batch=lambda b, args, flags, **params: _each_matrix(b, eigh_p, args, params))


# ---------------------------------------------------------------------------
# eig of a real matrix with real eigenvalues (eigenvectors of unit norm, LAPACK's order)

_COMPLEX_EIG = ("np.linalg.eig: the real matrix has complex eigenvalues, which a real "
                "result cannot hold (symgrad fixes dtypes when it traces); pass a complex "
                "matrix, np.linalg.eig(a.astype(np.complex128)), for complex eigenvalues "
                "(always complex, as jax.numpy.linalg.eig), or use np.linalg.eigh for a "
                "symmetric one")


def _eig_rule(x: Aval, *, part: str) -> Aval:
    _square_rule("eig", x)
    if part not in ("values", "vectors"):
        raise ValueError(f"eig: part {part!r} unknown")
    return Aval(x.shape[:-1] if part == "values" else x.shape, x.dtype)


def _eig_impl(x, part):
    w, v = np.linalg.eig(x)
    if np.iscomplexobj(w) and not np.iscomplexobj(x):
        raise ValueError(_COMPLEX_EIG)
    return w if part == "values" else v


def _eig_vjp(g, ans, x, *, part):
    # PyTorch's linalg_eig_backward for real results: V^-T K V^T with K = diag(gw) or
    # F o (V^T gV - V^T V diag(diag(V^T gV))) (the second term: unit-norm eigenvectors)
    # complex eigenvalues: the same formula transposes dw = diag(V^-1 dA V) (JAX's rule);
    # complex eigenvectors: PyTorch's rule conjugated into symgrad's convention, V^T conj(V)
    # and Re(diag(V^T g)) in place of V^T V and diag(V^T g), nan where the loss depends on
    # the eigenvectors' phases
    v = ans if part == "vectors" else eig(x, "vectors")
    if part == "values":
        n = shape_of(g)[-1]
        k = where(_eye(n), reshape(g, shape_of(g) + (1,)), 0.0)
    else:
        vtg = matmul(swap(v), g)
        if x.dtype.kind == "c":
            norms = columns(matmul(swap(v), conj(v)), convert(real(diagonal(vtg)), x.dtype.name))
        else:
            norms = columns(matmul(swap(v), v), diagonal(vtg))
        k = _gaps(eig(x, "values")) * (vtg - norms)
    ga = solve(swap(v), matmul(k, swap(v)))
    return (_vector_phases_free(vtg, ga) if part == "vectors" and x.dtype.kind == "c" else ga,)


eig_p = register(
    name="eig", complex=True, kind="array", shape_rule=_eig_rule, impl=_eig_impl,
    vjp=_eig_vjp, sympy=_no_sympy("eig"), numpy=np.linalg.eig,
    batch=lambda b, args, flags, **params: _each_matrix(b, eig_p, args, params))


# ---------------------------------------------------------------------------
# qr, mode="reduced": Q (m, k) with orthonormal columns, R (k, n) upper triangular


def _qr_rule(x: Aval, *, part: str) -> Aval:
    require("qr", (x,), FLOAT)
    if x.ndim < 2 or part not in ("q", "r"):
        raise ShapeError(f"qr: needs a matrix or a stack of them, got {x}")
    m, n = x.shape[-2:]
    k = min(m, n)
    return Aval(x.shape[:-2] + ((m, k) if part == "q" else (k, n)), x.dtype)


def _qr_tall(q, r, gq, gr, h):
    # m >= n (PyTorch's linalg_qr_backward, Walter & Lehmann 2018): with
    # M = R gR^H - gQ^H Q, gA = (gQ + Q copyltu(M)) R^-H, where
    # copyltu(M) = tril(M, -1) + tril(M, -1)^H + Re(diag(M)) (``h``: the transpose, the
    # conjugate one for complex matrices, whose R has a real diagonal)
    m = 0.0
    if gr is not None:
        m = matmul(r, h(gr))
    if gq is not None:
        m = m - matmul(h(gq), q)
    n = shape_of(m)[-1]
    low = tril(m, -1)
    b = matmul(q, low + h(low) + where(_eye(n), 0.5 * (m + h(m)), 0.0))
    if gq is not None:
        b = b + gq
    return _right_inverse_transpose(b, h(swap(r)))


def _qr_pytorch(x, q, r, gq, gr, h):
    """PyTorch's gradient (the conjugate one for complex matrices) of A = QR."""
    m, n = shape_of(x)[-2:]
    last = len(shape_of(x)) - 1
    if m >= n:
        return _qr_tall(q, r, gq, gr, h)
    # wide: A = [X | Y] and R = [U | V] with X = Q U square and Y = Q V, so gY = Q gV and
    # X sees the cotangent gQ + Y gV^H for Q
    u = along(r, last, 0, m)
    if gr is None:
        gx = _qr_tall(q, u, gq, None, h)
        gy = broadcast_to(0.0, shape_of(x)[:-1] + (n - m,))
    else:
        gv = along(gr, last, m, n)
        gqx = matmul(along(x, last, m, n), h(gv))
        gx = _qr_tall(q, u, gqx if gq is None else gq + gqx, along(gr, last, 0, m), h)
        gy = matmul(q, gv)
    return apply(concatenate_p, gx, gy, axis=last)


def _qr_vjp(g, ans, x, *, part):
    q = ans if part == "q" else qr(x, "q")
    r = ans if part == "r" else qr(x, "r")
    if x.dtype.kind != "c":
        gq, gr = (g, None) if part == "q" else (None, g)
        return (_qr_pytorch(x, q, r, gq, gr, swap),)
    # complex: PyTorch's conjugate gradient of conj(g), conjugated (symgrad's convention)
    gq, gr = (conj(g), None) if part == "q" else (None, conj(g))
    return (conj(_qr_pytorch(x, q, r, gq, gr, lambda a: conj(swap(a)))),)


qr_p = register(
    name="qr", complex=True, kind="array", shape_rule=_qr_rule,
    impl=lambda x, part: np.linalg.qr(x)[0 if part == "q" else 1],
    vjp=_qr_vjp, sympy=_no_sympy("qr"), numpy=np.linalg.qr,
    batch=lambda b, args, flags, **params: _each_matrix(b, qr_p, args, params))



# ---------------------------------------------------------------------------
# recording helpers


def cholesky(x: Any) -> Any:
    return apply(cholesky_p, x)


def eigh(x: Any, part: str, uplo: str = "L") -> Any:
    return apply(eigh_p, x, part=part, uplo=uplo)


def eig(x: Any, part: str) -> Any:
    return apply(eig_p, x, part=part)


def qr(x: Any, part: str) -> Any:
    return apply(qr_p, x, part=part)
