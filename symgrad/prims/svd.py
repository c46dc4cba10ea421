"""The singular value decomposition and what is built on it: pinv and lstsq.

``svd`` is one primitive with a ``part`` parameter (``"u"``, ``"s"``, ``"vh"``, and
``"uv"`` for complex matrices: U above Vh^T, so one VJP sees both cotangents),
numpy's ``full_matrices=False``. The VJP rules are PyTorch's ``svd_backward`` and
``pinv_backward``, with the conventions listed in :mod:`.decompositions` (equal
singular values and zero singular values of non-square matrices give nan through
the vectors; ``pinv`` and ``lstsq`` differentiate along perturbations of constant
rank; complex ``svd`` follows JAX's phase rule). ``pinv`` and ``lstsq`` have SymPy
forms for matrices of full rank.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import ShapeError
from ..core.ir import FLOAT, Aval, float_of, real_of
from ..core.tracing import apply, shape_of
from .complex import cabs, conj, imag
from .convert import convert
from .decompositions import (
    NAN,
    _batched,
    _each_matrix,
    _eye,
    _gaps,
    _no_sympy,
    columns,
    diagonal,
    rows,
)
from .elementwise import where
from .indexing import along
from .linalg import _stacked, matmul, outer, swap
from .reductions import max_p, reduce, reshape
from .registry import register, require

_SVD_PARTS = ("u", "s", "vh")


def _svd_rule(x: Aval, *, part: str) -> Aval:
    require("svd", (x,), FLOAT)
    if x.ndim < 2 or part not in _SVD_PARTS + ("uv",):
        raise ShapeError(f"svd: needs a matrix or a stack of them, got {x}")
    m, n = x.shape[-2:]
    k = min(m, n)
    shape = x.shape[:-2] + {"u": (m, k), "s": (k,), "vh": (k, n), "uv": (m + n, k)}[part]
    return Aval(shape, real_of(x.dtype) if part == "s" else x.dtype)


def _svd_impl(x, part):
    u, s, vh = np.linalg.svd(x, full_matrices=False)
    if part == "uv":
        return np.concatenate([u, np.swapaxes(vh, -1, -2)], axis=-2)
    return {"u": u, "s": s, "vh": vh}[part]


# A complex matrix's singular vectors: one part "uv" holds U above Vh^T (rows m..m+n),
# so one VJP sees the cotangents of U and Vh together. The pair (U, V) is determined up
# to (U D, V D) with D = diag(e^{i phi}): a loss has a gradient only if it does not
# depend on those phases, which only both cotangents together tell.


def complex_vectors(x: Any, both: Any = None) -> tuple[Any, Any]:
    """``U, Vh`` of a complex matrix (or stack), from the part ``uv`` (``both``, if
    given, is that part already recorded)."""
    m, n = shape_of(x)[-2:]
    both = svd(x, "uv") if both is None else both
    last = len(shape_of(both)) - 2
    return along(both, last, 0, m), swap(along(both, last, m, m + n))


def _h(x: Any) -> Any:
    """The conjugate transpose of a stack of matrices."""
    return conj(swap(x))


def _phase_free(du: Any, dv: Any, ga: Any) -> Any:
    """``ga``, or nan where the loss depends on the singular vectors' phases: ``du``,
    ``dv`` are the diagonals of ``U^H gU`` and ``V^H gV`` (PyTorch's convention), and
    ``Im(du + dv)`` is that dependence (PyTorch raises where it is not 0)."""
    last = (len(shape_of(du)) - 1,)
    im = imag(du + dv)
    worst = reduce(max_p, im * im, last)
    scale = reduce(max_p, cabs(du) + cabs(dv), last)
    bad = worst > 1e-16 * scale * scale
    return where(reshape(bad, shape_of(bad) + (1, 1)), NAN, ga)


def _complex_svd_vjp(g, ans, x, part):
    # PyTorch's svd_backward for complex matrices, in its convention (cotangents
    # conjugated): gA = conj(PyTorch's gA for conj(g)), the transpose under symgrad's
    # pairing Re(sum(a * b)); the diagonal term i Im(diag(U^H gU)) / S puts the phase on
    # U as JAX's rule does (the same number wherever the loss is phase-free).
    m, n = shape_of(x)[-2:]
    k = min(m, n)
    # (the vectors of the part differentiated are its own result: a second derivative
    # then sends one cotangent to them, which must be phase-free as a whole)
    u, vh = complex_vectors(x, ans if part == "uv" else None)
    s = svd(x, "s")
    if part == "s":
        return (conj(matmul(columns(u, convert(g, x.dtype.name)), vh)),)
    last = len(shape_of(g)) - 2
    gu = conj(along(g, last, 0, m))          # PyTorch's cotangent of U
    gvh = conj(swap(along(g, last, m, m + n)))  # and of Vh
    inverse = where(s == 0.0, NAN, 1.0 / where(s == 0.0, 1.0, s))
    gaps = _gaps(s, squares=True)
    utg = matmul(_h(u), gu)
    vtg = matmul(vh, _h(gvh))  # V^H gV, gV = gVh^H
    du, dv = diagonal(utg), diagonal(vtg)
    core = (columns(gaps * (utg - _h(utg)), s) + rows(s, gaps * (vtg - _h(vtg)))
            + where(_eye(k), reshape(imag(du) * inverse, shape_of(du) + (1,)) * 1j, 0.0))
    ga = matmul(matmul(u, core), vh)
    if m > k:
        ga = ga + matmul(columns(gu - matmul(u, utg), inverse), vh)
    if n > k:
        ga = ga + matmul(columns(u, inverse), gvh - matmul(matmul(gvh, _h(vh)), vh))
    return (conj(_phase_free(du, dv, ga)),)


def _svd_vjp(g, ans, x, *, part):
    # PyTorch's svd_backward for real matrices (Townsend 2016), one part at a time:
    # gA = U [F o (U^T gU - gU^T U) S + S F o (V^T gV - gV^T V) + diag(gS)] V^T
    #      + (I - U U^T) gU S^-1 V^T + U S^-1 gV^T (I - V V^T),  F_ij = 1/(s_j^2 - s_i^2)
    if x.dtype.kind == "c":
        if part in ("u", "vh"):
            raise TypeError("svd: a complex matrix's U and Vh are the part 'uv'")
        return _complex_svd_vjp(g, ans, x, part)
    m, n = shape_of(x)[-2:]
    k = min(m, n)
    u = ans if part == "u" else svd(x, "u")
    vh = ans if part == "vh" else svd(x, "vh")
    s = svd(x, "s")
    if part == "s":
        return (matmul(columns(u, g), vh),)
    inverse = where(s == 0.0, NAN, 1.0 / where(s == 0.0, 1.0, s))
    if part == "u":
        utg = matmul(swap(u), g)
        core = columns(_gaps(s, squares=True) * (utg - swap(utg)), s)
        ga = matmul(matmul(u, core), vh)
        if m > k:  # the part of gU outside U's columns
            ga = ga + matmul(columns(g - matmul(u, utg), inverse), vh)
        return (ga,)
    vtg = matmul(vh, swap(g))  # V^T gV, where gV = g^T is the cotangent of V = Vh^T
    core = rows(s, _gaps(s, squares=True) * (vtg - swap(vtg)))
    ga = matmul(matmul(u, core), vh)
    if n > k:
        ga = ga + matmul(columns(u, inverse), g - matmul(matmul(g, swap(vh)), vh))
    return (ga,)


svd_p = register(
    name="svd", complex=True, kind="array", shape_rule=_svd_rule,
    impl=_svd_impl,
    vjp=_svd_vjp, sympy=_no_sympy("svd"), numpy=np.linalg.svd,
    batch=lambda b, args, flags, **params: _each_matrix(b, svd_p, args, params))


# ---------------------------------------------------------------------------
# pinv (singular values at most rcond * the largest are dropped) and lstsq


def _pinv_rule(x: Aval, *, rcond: float) -> Aval:
    require("pinv", (x,), FLOAT)
    if x.ndim < 2:
        raise ShapeError(f"pinv: needs a matrix or a stack of them, got {x}")
    return Aval(x.shape[:-2] + (x.shape[-1], x.shape[-2]), x.dtype)


def pinv_grad(a: Any, p: Any, g: Any) -> Any:
    """The cotangent of ``a`` from that of ``p = pinv(a)``, at constant rank (Golub and
    Pereyra 1973; PyTorch's pinv_backward):
    ``-P^T G P^T + (I - A P) G^T P P^T + P^T P G^T (I - P A)``; of a complex ``a``,
    PyTorch's rule (conjugate transposes) conjugated into symgrad's convention (JAX's):
    ``-P^T G P^T + conj(I - A P) G^H conj(P) P^T + P^T conj(P) G^H conj(I - P A)``."""
    m, n = shape_of(a)[-2:]
    pt, gh, pc = swap(p), conj(swap(g)), conj(p)
    return (-matmul(matmul(pt, g), pt)
            + matmul(matmul(conj(np.eye(m) - matmul(a, p)), gh), matmul(pc, pt))
            + matmul(matmul(matmul(pt, pc), gh), conj(np.eye(n) - matmul(p, a))))


def _sympy_pinv(sp, m):
    a = sp.Matrix(np.asarray(m, dtype=object).tolist())
    # a matrix of full rank: (A^H A)^-1 A^H or A^H (A A^H)^-1
    return (a.H * a).inv() * a.H if a.rows >= a.cols else a.H * (a * a.H).inv()


pinv_p = register(
    name="pinv", complex=True, kind="array", shape_rule=_pinv_rule,
    impl=lambda x, rcond: np.linalg.pinv(x, rcond),
    vjp=lambda g, ans, x, rcond: (pinv_grad(x, ans, g),),
    sympy=lambda sp, x, rcond: _stacked(
        lambda m: np.array(_sympy_pinv(sp, m).tolist(), dtype=object), x.ndim - 2, x),
    numpy=np.linalg.pinv,
    batch=lambda b, args, flags, **params: _each_matrix(b, pinv_p, args, params))


def _lstsq_rule(a: Aval, b: Aval, *, rcond: float) -> Aval:
    require("lstsq", (a, b), FLOAT)
    if a.ndim < 2:
        raise ShapeError(f"lstsq: needs a matrix a (or a stack of them), got {a}")
    m, n = a.shape[-2:]
    if a.ndim == 2 and b.ndim == 1 and b.shape[0] == m:
        return Aval((n,), float_of(a, b))
    if b.ndim != a.ndim or b.shape[:-2] != a.shape[:-2] or b.shape[-2] != m:
        raise ShapeError(f"lstsq: needs a matrix a and b of shape ({m},) or ({m}, k), or "
                         f"stacks of both with equal batch axes, got {a} and {b}")
    return Aval(a.shape[:-2] + (a.shape[-1], b.shape[-1]), float_of(a, b))


def _lstsq_impl(a, b, rcond):
    if a.ndim == 2:
        return np.linalg.lstsq(a, b, rcond)[0]
    out = np.empty(a.shape[:-2] + (a.shape[-1], b.shape[-1]), np.result_type(a, b))
    for idx in np.ndindex(*a.shape[:-2]):
        out[idx] = np.linalg.lstsq(a[idx], b[idx], rcond)[0]
    return out


def _lstsq_vjp(g, ans, a, b, *, rcond):
    # x = pinv(a) b (the minimum-norm solution), so gb = pinv(a)^T g, and a gets the
    # pinv cotangent g b^T
    p = pinv(a, rcond)  # (stacks of matrices b for stacks of a: matmul applies)
    gp = outer(g, b) if len(shape_of(b)) == 1 else matmul(g, swap(b))
    return pinv_grad(a, p, gp), matmul(swap(p), g)


def _lstsq_sympy(sp, a, b, rcond):
    def one(m, rhs):
        x = _sympy_pinv(sp, m) * sp.Matrix(rhs.reshape(rhs.shape[0], -1).tolist())
        return np.array(x.tolist(), dtype=object).reshape((m.shape[1],) + rhs.shape[1:])
    return _stacked(one, a.ndim - 2, a, b)


def _lstsq_batch(b, args, flags, *, rcond):
    (a, rhs), (fa, fb) = args, flags
    vector = len(b.shape(rhs)) - fb == 1  # each example's right-hand side
    if not fa and len(b.shape(a)) == 2:  # one a: the examples' b are more columns of one
        m, n = b.shape(a)
        if vector:  # (B, m) -> (m, B)
            x = b.bind(lstsq_p, [a, b.transpose(rhs, (1, 0))], rcond=rcond)
            return b.transpose(x, (1, 0)), True
        k = b.shape(rhs)[-1]  # (B, m, k) -> (m, B, k) -> (m, B k)
        cols = b.reshape(b.transpose(rhs, (1, 0, 2)), (m, b.size * k))
        x = b.bind(lstsq_p, [a, cols], rcond=rcond)
        return b.transpose(b.reshape(x, (n, b.size, k)), (1, 0, 2)), True
    a, rhs = _batched(b, args, flags)  # a stack of matrices a
    if not vector:
        return b.bind(lstsq_p, [a, rhs], rcond=rcond), True
    m, n = b.shape(a)[1:]
    x = b.bind(lstsq_p, [a, b.reshape(rhs, (b.size, m, 1))], rcond=rcond)
    return b.reshape(x, (b.size, n)), True


lstsq_p = register(
    name="lstsq", complex=True, kind="array", shape_rule=_lstsq_rule, impl=_lstsq_impl,
    vjp=_lstsq_vjp, sympy=_lstsq_sympy, numpy=np.linalg.lstsq,
    batch=lambda b, args, flags, *, rcond: _lstsq_batch(b, args, flags, rcond=rcond))


# ---------------------------------------------------------------------------
# recording helpers


def svd(x: Any, part: str) -> Any:
    return apply(svd_p, x, part=part)


def pinv(x: Any, rcond: float) -> Any:
    return apply(pinv_p, x, rcond=float(rcond))


def lstsq(a: Any, b: Any, rcond: float) -> Any:
    return apply(lstsq_p, a, b, rcond=float(rcond))

