"""Linear algebra primitives: matrix products, inv, det, slogdet, solve.

Six primitives, each declared once below with all its facets:

- ``matmul``: ``x @ y`` of 1-D/2-D operands (``np.dot`` in the kernel, which
  is BLAS in Numba), or of stacks of matrices with equal batch dims (a loop of
  ``np.dot`` over the batch); ``linear``: ``x @ w.T`` over the last axis of an ``x`` of
  any rank, one product of its rows (``F.linear``'s, as PyTorch's ``addmm``);
- ``inv``, ``det``, ``slogdet`` (``part="sign"`` or ``"logabsdet"``) of a
  square matrix and ``solve(a, b)`` for a vector or matrix ``b``; of stacks of
  matrices too, as a loop over the batch axes in the kernel.

Numba runs ``np.dot`` and ``np.linalg`` through SciPy's BLAS and LAPACK, so
kernels using these need SciPy at run time. numpy's API on top of them
(promotion, batch broadcasting, ``einsum``, norms) is :mod:`symgrad.numpy_api.linalg`.

    >>> import numpy as np
    >>> outer(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    array([[3., 4.],
           [6., 8.]])
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.errors import ShapeError
from ..core.ir import COMPLEXES, FLOAT, Aval, float_of, real_of
from ..core.tracing import apply, shape_of
from .complex import imag
from .convert import convert
from .elementwise import add_p, mul, mul_p
from .reductions import reduce, reshape, sum_p, transpose
from .registry import register, require


def swap(x: Any) -> Any:
    """The last two axes swapped: a stack of transposed matrices."""
    n = len(shape_of(x))
    return transpose(x, (*range(n - 2), n - 1, n - 2))


# ---------------------------------------------------------------------------
# matmul


def _matmul_rule(x: Aval, y: Aval) -> Aval:
    require("matmul", (x, y), FLOAT)
    if not x.ndim or not y.ndim:
        raise ShapeError(f"matmul: operands {x} and {y} must have at least one axis")
    k_x, k_y = x.shape[-1], y.shape[0 if y.ndim == 1 else -2]
    if k_x != k_y:
        raise ShapeError(f"matmul: {x} and {y} are not aligned ({k_x} != {k_y})")
    if x.ndim <= 2 and y.ndim <= 2:
        return Aval(x.shape[:-1] + y.shape[1:], float_of(x, y))
    if x.ndim != y.ndim or x.shape[:-2] != y.shape[:-2]:
        raise ShapeError(f"matmul: stacks {x} and {y} must have equal batch axes "
                         "(np.matmul broadcasts them first)")
    return Aval(x.shape[:-1] + y.shape[-1:], float_of(x, y))


def _matmul_vjp(g, ans, x, y):
    if x.ndim == 1 and y.ndim == 1:        # (k,) @ (k,) -> ()
        return g * y, g * x
    if x.ndim == 1:                        # (k,) @ (k, n) -> (n,)
        return matmul(y, g), outer(x, g)
    if y.ndim == 1:                        # (m, k) @ (k,) -> (m,)
        return outer(g, y), matmul(swap(x), g)
    return matmul(g, swap(y)), matmul(swap(x), g)


def _matmul_batch(b, args, flags):
    x, y = args
    fx, fy = flags
    xs, ys = b.shape(x)[fx:], b.shape(y)[fy:]  # each example's operand shapes
    out = _matmul_rule(Aval(xs), Aval(ys)).shape
    if fx != fy and len(xs) <= 2 and len(ys) <= 2 and (fx or len(xs) == 2):
        # one matrix product for the whole batch: the batched operand's rows stacked
        if fx:
            rows = b.reshape(x, (b.size * math.prod(xs[:-1]), xs[-1]))
            return b.reshape(b.bind(matmul_p, [rows, y]), (b.size, *out)), True
        # x @ y_b, as (y_b^T x^T)^T: y's examples (and columns) as rows
        yt = y if len(ys) == 1 else b.transpose(y, (0, 2, 1))
        rows = b.reshape(yt, (b.size * math.prod(ys[1:]), ys[0]))
        prod = b.reshape(b.bind(matmul_p, [rows, b.transpose(x, (1, 0))]),
                         (b.size, *ys[1:], xs[0]))
        return (prod if len(ys) == 1 else b.transpose(prod, (0, 2, 1))), True
    x = x if fx else b.with_batch(x)
    y = y if fy else b.with_batch(y)
    if len(xs) == 1 and len(ys) == 1:  # a dot product per example
        return b.bind(sum_p, [b.bind(mul_p, [x, y])], axes=(1,)), True
    stack = max(len(xs), len(ys), 2) - 2  # the examples' own stack axes
    lead = (b.size, *(xs[:-2] if len(xs) > 2 else ys[:-2]))
    x2 = b.broadcast_to(b.reshape(x, (b.size, *(1,) * stack, 1, xs[0])),
                        (*lead, 1, xs[0])) if len(xs) == 1 else x
    y2 = b.broadcast_to(b.reshape(y, (b.size, *(1,) * stack, ys[0], 1)),
                        (*lead, ys[0], 1)) if len(ys) == 1 else y
    return b.reshape(b.bind(matmul_p, [x2, y2]), (b.size, *out)), True


matmul_p = register(
    name="matmul", complex=True, kind="array", shape_rule=_matmul_rule, impl=np.matmul,
    vjp=_matmul_vjp,
    sympy=lambda sp, x, y: np.matmul(x, y),
    batch=lambda b, args, flags: _matmul_batch(b, args, flags))


# ---------------------------------------------------------------------------
# linear: F.linear's product, x @ w.T over x's last axis, any leading axes (its rows), plus
# a bias b of one element per row of w when given (a third operand: PyTorch's addmm)


def _linear_rule(x: Aval, w: Aval, *bias: Aval) -> Aval:
    require("linear", (x, w, *bias), FLOAT)
    if (not x.ndim or w.ndim != 2 or x.shape[-1] != w.shape[1] or len(bias) > 1
            or bias and bias[0].shape != w.shape[:1]):
        raise ShapeError(f"linear: takes rows {x} of the length of the rows of the matrix "
                         f"{w} (x @ w.T over x's last axis), and at most a bias of one element "
                         f"per row of the matrix, got {', '.join(map(str, bias)) or 'none'}")
    return Aval(x.shape[:-1] + w.shape[:1], float_of(x, w, *bias))


def _rows(x: Any) -> tuple[int, int]:
    """``x``'s leading axes as one (its rows), and its last."""
    shape = shape_of(x)
    return math.prod(shape[:-1]), shape[-1]


def _linear(x: Any, w: Any, *bias: Any) -> Any:
    """One matrix product of ``x``'s rows (a copy first only if they are not one array's
    rows), as PyTorch's ``addmm`` of the ``(N·L, E)`` view; the bias added into the fresh
    product (the bits of ``x @ w.T + b``, without a second array)."""
    x, w = np.asarray(x), np.asarray(w)
    rows = x.reshape(math.prod(x.shape[:-1]), x.shape[-1])
    out = np.matmul(rows, w.T)
    if bias:
        b = np.asarray(bias[0])
        out = np.add(out, b, out=out if np.result_type(out, b) == out.dtype else None)
    return out.reshape(x.shape[:-1] + w.shape[:1])


def linear_gemm(x: Any, w: Any, *bias: Any) -> Any:
    """``linear``'s value as PyTorch's ``addmm`` computes it, for the eager Tensor
    (:mod:`symgrad.eager.fastpath`): the bias copied into the result and the product added
    by one BLAS ``gemm`` (beta = 1), without numpy's second pass over the product (0.21 ->
    0.18 ms for (1024, 64) by (192, 64) float32). For C-ordered float32 or float64
    operands of one dtype, none empty; else :func:`_linear`'s. Where a row's long sum is
    split in blocks, its last bits may differ from numpy's product and add (as PyTorch's)."""
    x, w = np.asarray(x), np.asarray(w)
    b = np.asarray(bias[0]) if bias else None
    kind = x.dtype
    gemm = _GEMMS.get(kind)
    if (b is None or gemm is None or w.dtype != kind or b.dtype != kind or b.ndim != 1
            or not x.size or not w.size or not w.flags.c_contiguous):
        return _linear(x, w, *bias)
    rows = x.reshape(math.prod(x.shape[:-1]), x.shape[-1])  # (a C-ordered copy if need be)
    if not rows.flags.c_contiguous:
        return _linear(x, w, *bias)
    out = np.empty((rows.shape[0], w.shape[0]), kind)
    out[...] = b
    # Fortran's view: out.T = w @ rows.T, w.T and rows.T Fortran-ordered, w.T transposed;
    # its result, not ``out`` (in place unless f2py had to copy)
    out = gemm(1.0, w.T, rows.T, 1.0, out.T, trans_a=1, overwrite_c=1).T
    return out.reshape(x.shape[:-1] + w.shape[:1])


def _blas_gemms() -> dict[np.dtype, Any]:
    from scipy.linalg.blas import dgemm, sgemm
    return {np.dtype(np.float32): sgemm, np.dtype(np.float64): dgemm}


_GEMMS = _blas_gemms()


def _linear_vjp(g, ans, x, w, *bias):
    rows = reshape(g, (_rows(x)[0], shape_of(w)[0]))
    grads = (reshape(matmul(rows, w), shape_of(x)), matmul(swap(rows), reshape(x, _rows(x))))
    return (*grads, reduce(sum_p, rows, (0,))) if bias else grads


def _linear_batch(b, args, flags):
    """A batch of inputs is more rows of one product; a batch of matrices, one product
    per example (a stack); a batched bias is added to each example's product."""
    x, w, *bias = args
    if not any(flags[1:]):
        return b.bind(linear_p, [x, w, *bias]), True
    if flags[1]:
        x = x if flags[0] else b.with_batch(x)
        xs = b.shape(x)[1:]
        rows = b.reshape(x, (b.size, math.prod(xs[:-1]), xs[-1]))
        out = b.bind(matmul_p, [rows, b.transpose(w, (0, 2, 1))])
        out = b.reshape(out, (b.size, *xs[:-1], b.shape(w)[1]))
    else:
        out = b.bind(linear_p, [x if flags[0] else b.with_batch(x), w])
    if bias:
        out = b.bind(add_p, [out, b.aligned(bias[0], flags[2], len(b.shape(out)) - 1)])
    return out, True


linear_p = register(
    name="linear", kind="array", shape_rule=_linear_rule, impl=_linear, vjp=_linear_vjp,
    sympy=lambda sp, x, w, *bias: np.matmul(x, w.T) + bias[0] if bias else np.matmul(x, w.T),
    batch=_linear_batch)

# ---------------------------------------------------------------------------
# inv, det, slogdet, solve of square matrices and stacks of them. Numba's
# np.linalg takes one matrix, so a stack is a loop over its batch axes.


def _square_rule(name: str, x: Aval) -> int:
    require(name, (x,), FLOAT)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ShapeError(f"{name}: needs a square matrix or a stack of them (last two axes of "
                         f"equal length), got {x}")
    return x.shape[-1]


def _stacked(fn: Callable, batch: int, *arrays: np.ndarray) -> Any:
    """``fn`` applied to each matrix of a stack of SymPy object arrays."""
    if not batch:
        return fn(*arrays)
    first = fn(*(a[(0,) * batch] for a in arrays))
    out = np.empty(arrays[0].shape[:batch] + np.shape(first), dtype=object)
    for idx in np.ndindex(*arrays[0].shape[:batch]):
        out[idx] = fn(*(a[idx] for a in arrays))
    return out


def _sympy_matrix(sp, x: np.ndarray):
    return sp.Matrix(np.asarray(x, dtype=object).tolist())


def _batch_scalar(v: Any, x: Any) -> Any:
    """A scalar per matrix (det, log|det|) as a (..., 1, 1) stack beside ``x``."""
    return v if len(shape_of(x)) == 2 else reshape(v, shape_of(v) + (1, 1))


def _inv_rule(x: Aval) -> Aval:
    _square_rule("inv", x)
    return Aval(x.shape, x.dtype)


def _det_rule(x: Aval) -> Aval:
    _square_rule("det", x)
    return Aval(x.shape[:-2], x.dtype)


inv_p = register(
    name="inv", complex=True, kind="array", shape_rule=_inv_rule,
    impl=np.linalg.inv,
    # d(A^-1) = -A^-1 dA A^-1, so the cotangent of A is -A^-T g A^-T
    vjp=lambda g, ans, x: (
        -matmul(matmul(swap(ans), g), swap(ans)),),
    sympy=lambda sp, x: _stacked(
        lambda m: np.array(_sympy_matrix(sp, m).inv().tolist(), dtype=object), x.ndim - 2, x),
    numpy=np.linalg.inv,
    batch=lambda b, args, flags: (b.bind(inv_p, args), True))  # a stack is a stack

# d det(A) / dA = det(A) A^-T (the Matrix Cookbook, eq. 49); A must be invertible
det_p = register(
    name="det", complex=True, kind="array", shape_rule=_det_rule,
    impl=np.linalg.det,
    vjp=lambda g, ans, x: (
        _batch_scalar(g * ans, x) * swap(inv(x)),),
    sympy=lambda sp, x: _stacked(lambda m: _sympy_matrix(sp, m).det(), x.ndim - 2, x),
    numpy=np.linalg.det,
    batch=lambda b, args, flags: (b.bind(det_p, args), True))

_SLOGDET_PARTS = ("sign", "logabsdet")


def _slogdet_rule(x: Aval, *, part: str) -> Aval:
    if part not in _SLOGDET_PARTS:
        raise ValueError(f"slogdet: part must be one of {_SLOGDET_PARTS}, not {part!r}")
    _square_rule("slogdet", x)
    real = part == "logabsdet" and x.dtype in COMPLEXES  # (a complex sign is the phase)
    return Aval(x.shape[:-2], real_of(x.dtype) if real else x.dtype)


def _slogdet_sympy(sp, x, *, part):
    def one(m):
        det = _sympy_matrix(sp, m).det()
        return sp.sign(det) if part == "sign" else sp.log(sp.Abs(det))
    return _stacked(one, x.ndim - 2, x)


def _slogdet_vjp(g, ans, x, part):
    # with t = tr(A^-1 dA) = sum(A^-T * dA): d log|det A| = Re(t), and a complex sign
    # s (the phase) has ds = i s Im(t) (JAX's rule); a real sign is piecewise constant
    # (zero gradient). So the cotangent of t is g, or i Im(g s), times A^-T
    kind = np.dtype(x.dtype).name
    if part == "sign":
        if kind not in COMPLEXES:
            return (None,)
        g = mul(convert(imag(mul(g, ans)), kind), 1j)
    elif kind in COMPLEXES:
        g = convert(g, kind)
    return (_batch_scalar(g, x) * swap(inv(x)),)


slogdet_p = register(
    name="slogdet", complex=True, kind="array", shape_rule=_slogdet_rule,
    impl=lambda x, part: np.linalg.slogdet(x)[_SLOGDET_PARTS.index(part)],
    vjp=_slogdet_vjp,
    sympy=_slogdet_sympy, numpy=np.linalg.slogdet,
    batch=lambda b, args, flags, *, part: (b.bind(slogdet_p, args, part=part), True))


def _solve_rule(a: Aval, b: Aval) -> Aval:
    n = _square_rule("solve", a)
    require("solve", (b,), FLOAT)
    if b.ndim == 1 and a.ndim == 2 and b.shape[0] == n:
        return Aval(b.shape, float_of(a, b))
    if b.ndim != a.ndim or b.shape[:-2] != a.shape[:-2] or b.shape[-2] != n:
        raise ShapeError(f"solve: the right-hand side {b} must have shape ({n},) or "
                         f"{a.shape[:-2] + (n, 'k')} for the matrix {a} (np.linalg.solve "
                         "broadcasts batch axes first)")
    return Aval(b.shape, float_of(a, b))


def _solve_vjp(g, ans, a, b):
    # x = A^-1 b: the cotangent of b solves A^T gb = g, that of A is -gb x^T
    gb = solve(swap(a), g)
    ga = -outer(gb, ans) if b.ndim == 1 else -matmul(gb, swap(ans))
    return ga, gb


def _solve_sympy(sp, a, b):
    def one(m, rhs):
        x = _sympy_matrix(sp, m).LUsolve(_sympy_matrix(sp, rhs.reshape(rhs.shape[0], -1)))
        return np.array(x.tolist(), dtype=object).reshape(rhs.shape)
    return _stacked(one, a.ndim - 2, a, b)


def _solve_batch(b, args, flags):
    a, rhs = (x if f else b.with_batch(x) for x, f in zip(args, flags))
    if len(b.shape(args[0])) - flags[0] == 2 and len(b.shape(args[1])) - flags[1] == 1:
        n = b.shape(rhs)[-1]  # one right-hand side vector per example: a column each
        x = b.bind(solve_p, [a, b.reshape(rhs, (b.size, n, 1))])
        return b.reshape(x, (b.size, n)), True
    return b.bind(solve_p, [a, rhs]), True


solve_p = register(
    name="solve", complex=True, kind="array", shape_rule=_solve_rule, impl=np.linalg.solve,
    vjp=_solve_vjp, sympy=_solve_sympy, numpy=np.linalg.solve,
    batch=lambda b, args, flags: _solve_batch(b, args, flags))


# ---------------------------------------------------------------------------
# recording helpers: the primitives as they are (numpy's promotions and batch
# broadcasting are symgrad.numpy_api.linalg's)


def matmul(x: Any, y: Any) -> Any:
    """``x @ y`` for operands the ``matmul`` primitive takes as they are."""
    return apply(matmul_p, x, y)


def linear(x: Any, w: Any, bias: Any = None) -> Any:
    """``x @ w.T`` over ``x``'s last axis, plus ``bias`` when given (one equation, whatever
    ``x``'s leading axes)."""
    return apply(linear_p, x, w) if bias is None else apply(linear_p, x, w, bias)


def outer(a: Any, b: Any) -> Any:
    """Every element of the vector ``a`` times every one of the vector ``b``."""
    (m,), (n,) = shape_of(a), shape_of(b)
    return mul(reshape(a, (m, 1)), reshape(b, (1, n)))


def inv(x: Any) -> Any:
    """The inverse of a square matrix (or of each of a stack)."""
    return apply(inv_p, x)


def solve(a: Any, b: Any) -> Any:
    """``x`` with ``a @ x == b`` for operands the ``solve`` primitive takes as they are."""
    return apply(solve_p, a, b)
