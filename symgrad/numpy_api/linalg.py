"""numpy's linear algebra on traced values: products, contractions, norms, solve, inv, det.

All of it is numpy's API on the five primitives of :mod:`symgrad.prims.linalg`,
written with exact rewrites: batch broadcasting is ``broadcast_to``, ``outer`` a
broadcasting ``*``, ``inner``/``dot``/``einsum`` reshapes and transposes around
one ``matmul``, ``trace`` a masked sum, ``linalg.norm`` the scaled ``norm2``
primitive, whose gradient at 0 is 0 rather than NaN (pytorch issue #2421).

    >>> import numpy as np, symgrad as sg
    >>> sg.grad(lambda a, x: x @ a @ x, argnums=1)(np.eye(2), np.array([1.0, 2.0]))
    array([2., 4.])
    >>> sg.grad(lambda x: np.linalg.norm(x))(np.zeros(3))
    array([0., 0., 0.])
"""

from __future__ import annotations

import math
import operator
import string
from typing import Any, NamedTuple

import numpy as np

from ..core.errors import ShapeError, UnsupportedFunctionError, user_location
from ..core.tracing import apply, shape_of
from ..prims.elementwise import as_float
from ..prims.linalg import det_p, inv_p, matmul_p, slogdet_p, solve_p
from ..prims.norms import norm2
from .decompositions import axes_of, other_norm
from .dispatch import float_dtype, implements, in_dtype, normalize_axes, refuse_kwargs
from .einsum_spec import in_pairs
from .einsum_spec import normalize as normalize_einsum
from .functions import broadcast_to, multiply, reshape, sum, transpose, where

# ---------------------------------------------------------------------------
# numpy's API


def _operands(a: Any, b: Any) -> tuple[Any, Any, tuple[int, ...], tuple[int, ...]]:
    a, b = as_float(a), as_float(b)
    return a, b, tuple(shape_of(a)), tuple(shape_of(b))


def _not_aligned(name: str, sa: tuple, sb: tuple, ka: int, kb: int, which: str) -> ShapeError:
    return ShapeError(
        f"{name}: shapes {sa} and {sb} are not aligned: the last axis of the first operand "
        f"({ka}) must equal the {which} axis of the second ({kb}) (at {user_location()})")


@implements(np.matmul)
def matmul(x1: Any, x2: Any, /, out: Any = None, **kwargs: Any) -> Any:
    """``x1 @ x2`` with numpy's rules: 1-D operands promoted, batch axes broadcast."""
    refuse_kwargs("np.matmul", {"out": out, **kwargs}, allowed={"dtype": float_dtype})
    x1, x2 = (in_dtype(kwargs.get("dtype"), a) for a in (x1, x2))
    x, y, sx, sy = _operands(x1, x2)
    if not sx or not sy:
        raise ShapeError(f"matmul: operands of shapes {sx} and {sy} must have at least one "
                         f"axis (at {user_location()}); multiply by a scalar with *")
    k_y = sy[0] if len(sy) == 1 else sy[-2]
    if sx[-1] != k_y:
        raise _not_aligned("matmul", sx, sy, sx[-1], k_y,
                           "only" if len(sy) == 1 else "second-to-last")
    if len(sx) <= 2 and len(sy) <= 2:
        return apply(matmul_p, x, y)
    if len(sy) <= 2:
        # (..., m, k) @ (k, n): one matrix product of all the rows at once
        rows = apply(matmul_p, reshape(x, (math.prod(sx[:-1]), sx[-1])), y)
        return reshape(rows, sx[:-1] + sy[1:])
    # stacks: promote a vector to a row, broadcast the batch axes, multiply, drop the row
    xs = sx if len(sx) > 1 else (1,) + sx
    try:
        batch = tuple(np.broadcast_shapes(xs[:-2], sy[:-2]))
    except ValueError:
        raise ShapeError(f"matmul: the batch axes of shapes {sx} and {sy} cannot be broadcast "
                         f"together (at {user_location()})") from None
    x = broadcast_to(reshape(x, xs), batch + xs[-2:])
    y = broadcast_to(y, batch + sy[-2:])
    result = apply(matmul_p, x, y)
    return result if len(sx) > 1 else reshape(result, batch + sy[-1:])


@implements(np.dot)
def dot(a: Any, b: Any, out: Any = None) -> Any:
    """``np.dot``: a product with scalars, ``matmul`` up to 2-D, else a sum over the
    last axis of ``a`` and the second-to-last of ``b``."""
    refuse_kwargs("np.dot", {"out": out}, allowed={})
    a, b, sa, sb = _operands(a, b)
    if not sa or not sb:
        return multiply(a, b)
    if len(sb) == 1 or (len(sa) <= 2 and len(sb) <= 2):
        return matmul(a, b)
    k = sb[-2]
    if sa[-1] != k:
        raise _not_aligned("dot", sa, sb, sa[-1], k, "second-to-last")
    # b's contracted axis to the front: the rest of b, flattened, are the columns
    # (explicit sizes, not -1: k may be 0)
    columns = reshape(transpose(b, (len(sb) - 2, *range(len(sb) - 2), len(sb) - 1)),
                      (k, math.prod(sb) // k if k else math.prod(sb[:-2] + sb[-1:])))
    product = apply(matmul_p, reshape(a, (math.prod(sa[:-1]), k)), columns)
    return reshape(product, sa[:-1] + sb[:-2] + sb[-1:])


@implements(np.inner)
def inner(a: Any, b: Any) -> Any:
    """``np.inner``: the sum over the last axes of ``a`` and ``b``."""
    a, b, sa, sb = _operands(a, b)
    if not sa or not sb:
        return multiply(a, b)
    if sa[-1] != sb[-1]:
        raise _not_aligned("inner", sa, sb, sa[-1], sb[-1], "last")
    if len(sa) == 1 and len(sb) == 1:
        return apply(matmul_p, a, b)
    k = sa[-1]
    product = apply(matmul_p, reshape(a, (math.prod(sa[:-1]), k)),
                    transpose(reshape(b, (math.prod(sb[:-1]), k))))
    return reshape(product, sa[:-1] + sb[:-1])


@implements(np.outer)
def outer(a: Any, b: Any, out: Any = None) -> Any:
    """``np.outer``: every element of ``a`` (flattened) times every one of ``b``."""
    refuse_kwargs("np.outer", {"out": out}, allowed={})
    a, b, _, _ = _operands(a, b)
    return multiply(reshape(a, (-1, 1)), reshape(b, (1, -1)))


@implements(np.trace)
def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
          out: Any = None) -> Any:
    """``np.trace``: the sum of a diagonal, over ``axis1`` and ``axis2``."""
    refuse_kwargs("np.trace", {"dtype": dtype, "out": out}, allowed={"dtype": float_dtype})
    a = in_dtype(dtype, as_float(a))
    ndim = len(shape_of(a))
    if ndim < 2:
        raise ShapeError(f"trace: needs at least two axes, got shape {shape_of(a)}")
    (p, q) = (normalize_axes(axis1, ndim)[0], normalize_axes(axis2, ndim)[0])
    if p == q:
        raise ValueError(f"trace: axis1 and axis2 must differ, got {axis1} and {axis2}")
    return sum(_diagonal_masked(a, p, q, operator.index(offset)), axis=(-2, -1))


def _diagonal_masked(a: Any, p: int, q: int, offset: int = 0) -> Any:
    """``a`` with axes ``p``, ``q`` moved last and everything off their diagonal set to 0.

    Selecting (rather than multiplying by an identity matrix) keeps the sum
    exact when other elements are inf or nan, and their cotangent exactly 0.
    """
    ndim = len(shape_of(a))
    rest = [i for i in range(ndim) if i not in (p, q)]
    a = transpose(a, (*rest, p, q))
    n, m = shape_of(a)[-2:]
    return where(np.eye(n, m, k=offset, dtype=bool), a, 0.0)


# ---------------------------------------------------------------------------
# einsum


def _einsum_error(spec: str, problem: str) -> UnsupportedFunctionError:
    return UnsupportedFunctionError(
        f"np.einsum({spec!r}, ...) at {user_location()}: {problem}")


@implements(np.einsum)
def einsum(subscripts: Any, *operands: Any, out: Any = None, optimize: Any = False,
           **kwargs: Any) -> Any:
    """``np.einsum``: subscripts or sublists, ``...``, any number of operands (contracted
    in pairs, left to right), each pair as transposes, sums and one ``matmul``."""
    refuse_kwargs("np.einsum", {"out": out, **kwargs}, allowed={"dtype": float_dtype})
    operands = tuple(in_dtype(kwargs.get("dtype"), a) for a in operands)
    spec, operands = normalize_einsum(subscripts, operands)
    if len(operands) > 2:
        return in_pairs(spec, operands, einsum)
    inputs, _, output = spec.partition("->")
    terms = inputs.split(",")
    if not all(c in string.ascii_letters for c in "".join(terms) + output):
        raise _einsum_error(spec, "subscripts must be letters")
    if len(set(output)) != len(output) or not set(output) <= set("".join(terms)):
        raise ValueError(f"np.einsum({spec!r}, ...): output letters must be distinct and "
                         "appear in an input")
    arrays = [as_float(x) for x in operands]
    sizes: dict[str, int] = {}
    for term, x in zip(terms, arrays):
        shape = shape_of(x)
        if len(shape) != len(term):
            raise ShapeError(f"np.einsum({spec!r}, ...): term {term!r} has {len(term)} letters "
                             f"but its operand has shape {shape}")
        for c, d in zip(term, shape):
            if sizes.setdefault(c, d) != d:
                raise ShapeError(f"np.einsum({spec!r}, ...): letter {c!r} stands for axes of "
                                 f"sizes {sizes[c]} and {d} (operand shapes "
                                 f"{[shape_of(a) for a in arrays]})")
    # take diagonals of repeated letters, then sum letters used nowhere else
    pairs = []
    for i, (term, x) in enumerate(zip(terms, arrays)):
        term, x = _einsum_diagonals(term, x)
        elsewhere = output + "".join(t for j, t in enumerate(terms) if j != i)
        summed = tuple(k for k, c in enumerate(term) if c not in elsewhere)
        if summed:
            x = sum(x, axis=summed)
            term = "".join(c for c in term if c in elsewhere)
        pairs.append((term, x))
    if len(pairs) == 1:
        (term, x), = pairs
        return transpose(x, tuple(term.index(c) for c in output))
    (ta, a), (tb, b) = pairs
    contracted = [c for c in ta if c in tb and c not in output]
    if not contracted:  # a broadcasting product: outer, elementwise, scaled
        return multiply(_einsum_align(a, ta, output), _einsum_align(b, tb, output))
    return _einsum_matmul(a, ta, b, tb, contracted, output, sizes)


def _einsum_diagonals(term: str, x: Any) -> tuple[str, Any]:
    """Replace each repeated letter of ``term`` by the diagonal of its two axes."""
    while len(set(term)) < len(term):
        c = next(c for c in term if term.count(c) > 1)
        p = term.index(c)
        q = term.index(c, p + 1)
        x = sum(_diagonal_masked(x, p, q), axis=-1)  # one nonzero per row: its diagonal
        term = "".join(t for k, t in enumerate(term) if k not in (p, q)) + c
    return term, x


def _einsum_align(x: Any, term: str, output: str) -> Any:
    """``x`` transposed to ``output``'s letter order, with length-1 axes for the others."""
    present = [c for c in output if c in term]
    x = transpose(x, tuple(term.index(c) for c in present))
    shape = shape_of(x)
    return reshape(x, tuple(shape[present.index(c)] if c in term else 1 for c in output))


def _einsum_matmul(a: Any, ta: str, b: Any, tb: str, contracted: list[str], output: str,
                   sizes: dict[str, int]) -> Any:
    """Two operands with a contraction: batch letters, free letters and one matmul."""
    batch = [c for c in output if c in ta and c in tb]
    free_a = [c for c in output if c in ta and c not in tb]
    free_b = [c for c in output if c in tb and c not in ta]

    def size(letters: list[str]) -> int:
        return math.prod(sizes[c] for c in letters)

    bshape = tuple(sizes[c] for c in batch)
    k = size(contracted)
    a = transpose(a, tuple(ta.index(c) for c in batch + free_a + contracted))
    b = transpose(b, tuple(tb.index(c) for c in batch + contracted + free_b))
    if batch:
        a = reshape(a, bshape + (size(free_a), k))
        b = reshape(b, bshape + (k, size(free_b)))
    else:  # vectors where a side has no free letters: BLAS dot/gemv rather than gemm
        a = reshape(a, (size(free_a), k) if free_a else (k,))
        b = reshape(b, (k, size(free_b)) if free_b else (k,))
    product = apply(matmul_p, a, b)
    order = batch + free_a + free_b
    product = reshape(product, tuple(sizes[c] for c in order))
    return transpose(product, tuple(order.index(c) for c in output))


# ---------------------------------------------------------------------------
# np.linalg


def _two_norm(x: Any, axis: tuple[int, ...], keepdims: bool) -> Any:
    # one primitive, scaled as LAPACK's dnrm2: no square overflows or underflows, and
    # its gradient x / norm is exactly 0 where x is 0 (not 0 * inf = NaN, pytorch #2421)
    result = norm2(x, axis)
    if keepdims:
        return reshape(result, tuple(1 if i in axis else d for i, d in enumerate(shape_of(x))))
    return result


_VECTOR_ORDS = (1, np.inf, -np.inf)  # sum, max and min of |x|


@implements(np.linalg.norm)
def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """``np.linalg.norm``: vector norms of every order, the Frobenius norm, and the matrix
    norms 1, -1, 2, -2, inf, -inf and ``"nuc"`` (:func:`.decompositions.other_norm`).

    The 2-norm and the Frobenius norm are scaled (no square overflows or
    underflows) and have gradient ``x / norm(x)``, exactly 0 where ``x`` is 0.

        >>> import numpy as np, symgrad as sg
        >>> sg.grad(lambda x: np.linalg.norm(x))(np.array([1e-170, 2e-170]))
        array([0.4472136 , 0.89442719])
    """
    x = as_float(x)
    ndim = len(shape_of(x))
    if axis is None:
        if ord is not None and ndim > 2:  # numpy's message
            raise ValueError("Improper number of dimensions to norm.")
        matrix = ndim == 2 and ord is not None
        axes = tuple(range(ndim))
    else:
        axes = normalize_axes(axis, ndim)
        matrix = len(axes) == 2
        if len(axes) > 2:
            raise ValueError(f"np.linalg.norm: axis {axis!r} names more than two axes")
    if ord is None or (ord == "fro" and matrix) or (ord == 2 and not matrix):
        if np.iscomplexobj(x):  # |z|: the 2-norm of the real and imaginary parts together
            parts = np.stack([np.real(x), np.imag(x)], axis=-1)
            two = _two_norm(parts, (*axes, ndim), keepdims)
            return two[..., 0] if keepdims else two
        return _two_norm(x, axes, keepdims)
    if not matrix and not isinstance(ord, str) and ord in _VECTOR_ORDS:
        magnitude = np.absolute(x)
        if ord == 1:
            return np.sum(magnitude, axis=axes, keepdims=keepdims)
        extremum = np.max if ord > 0 else np.min
        return extremum(magnitude, axis=axes, keepdims=keepdims)
    # the other orders: vector norms of any order, matrix norms 1, 2, inf, 'nuc', ...
    return other_norm(x, ord, axes if axis is None else axes_of(axis, ndim), keepdims, matrix)


@implements(np.linalg.inv)
def inv(a: Any) -> Any:
    """``np.linalg.inv`` of a square matrix."""
    return apply(inv_p, as_float(a))


@implements(np.linalg.det)
def det(a: Any) -> Any:
    """``np.linalg.det`` of a square matrix; its gradient needs ``a`` invertible."""
    return apply(det_p, as_float(a))


class SlogdetResult(NamedTuple):
    """numpy 2's result of ``slogdet``: unpacks as a tuple, or by name."""

    sign: Any
    logabsdet: Any


@implements(np.linalg.slogdet)
def slogdet(a: Any) -> SlogdetResult:
    """``np.linalg.slogdet``: (sign, log|det|) of a square matrix, as numpy's named tuple."""
    a = as_float(a)
    return SlogdetResult(apply(slogdet_p, a, part="sign"), apply(slogdet_p, a, part="logabsdet"))


@implements(np.linalg.solve)
def solve(a: Any, b: Any) -> Any:
    """``np.linalg.solve(a, b)``: ``x`` with ``a @ x == b``.

    As numpy 2: ``b`` of shape (n,) is one vector (for every matrix of a stack
    ``a``), otherwise a stack of (n, k) matrices whose batch axes broadcast
    against those of ``a``.
    """
    a, b, sa, sb = _operands(a, b)
    rows = sb[0] if len(sb) == 1 else sb[-2] if sb else None
    if len(sa) < 2 or sa[-1] != sa[-2] or rows != sa[-1]:
        return apply(solve_p, a, b)  # the shape rule explains what is wrong
    if len(sb) == 1 and len(sa) > 2:  # one vector for each matrix: solve for columns
        column = broadcast_to(reshape(b, sb + (1,)), sa[:-1] + (1,))
        return reshape(apply(solve_p, a, column), sa[:-1])
    if len(sb) > 1 and (len(sa) > 2 or len(sb) > 2):
        try:
            batch = tuple(np.broadcast_shapes(sa[:-2], sb[:-2]))
        except ValueError:
            raise ShapeError(f"solve: the batch axes of shapes {sa} and {sb} cannot be "
                             f"broadcast together (at {user_location()})") from None
        a, b = broadcast_to(a, batch + sa[-2:]), broadcast_to(b, batch + sb[-2:])
    return apply(solve_p, a, b)
