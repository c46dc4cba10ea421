"""numpy's matrix functions on traced values: diagonals, triangles, products, rotations.

``diagonal``/``diag`` are strided slices of the flattened matrices (and
``diag`` of a vector their adjoint, ``unslice``), ``triu``/``tril`` select with
numpy's own triangle masks, ``kron`` and ``tensordot`` are broadcasting
products and one ``matmul`` between reshapes, ``cross`` is its formula on the
components, ``rot90`` flips and transposes. All exact: no arithmetic that numpy
does not do.

    >>> import numpy as np, symgrad as sg
    >>> sg.grad(lambda a: np.sum(np.diag(a) * np.array([1.0, 2.0])))(np.ones((2, 2)))
    array([[1., 0.],
           [0., 2.]])
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from ..core.errors import ShapeError
from ..core.tracing import Traced, shape_of
from ..prims import elementwise as E
from ..prims.elementwise import as_float
from ..prims.indexing import normalize, strided, unslice
from ..prims.linalg import matmul
from .dispatch import implements, normalize_axes
from .functions import reshape, transpose
from .shapes import flip, moveaxis, stack


def _ndim(x: Any) -> int:
    return len(shape_of(x))


@implements(np.diagonal)
def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """``np.diagonal``: the diagonal ``offset`` of the matrices over ``axis1``/``axis2``,
    as the last axis (a strided slice of the matrices flattened)."""
    a = as_float(a)
    nd = _ndim(a)
    if nd < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    (p,), (q,) = normalize_axes(axis1, nd), normalize_axes(axis2, nd)
    if p == q:
        raise ValueError("axis1 and axis2 cannot be the same")
    rest = [k for k in range(nd) if k not in (p, q)]
    a = transpose(a, (*rest, p, q))
    *batch, r, c = shape_of(a)
    offset = operator.index(offset)
    start = offset if offset >= 0 else -offset * c
    count = max(0, min(r, c - offset) if offset >= 0 else min(r + offset, c))
    flat = reshape(a, (*batch, r * c))
    last = normalize(slice(start, start + count * (c + 1), c + 1), r * c) if count else (0, 0, 1)
    return strided(flat, (*((0, n, 1) for n in batch), last))


@implements(np.diag)
def diag(v: Any, k: int = 0) -> Any:
    """``np.diag``: the diagonal ``k`` of a matrix, or the matrix with a vector there."""
    v = as_float(v)
    k = operator.index(k)
    if _ndim(v) == 2:
        return diagonal(v, k)
    if _ndim(v) != 1:
        raise ValueError("Input must be 1- or 2-d.")
    (n,) = shape_of(v)
    m = n + abs(k)
    start = k if k >= 0 else -k * m
    if not n:
        return np.zeros((m, m))
    flat = unslice(v, (m * m,), (normalize(slice(start, start + n * (m + 1), m + 1), m * m),))
    return reshape(flat, (m, m))


@implements(np.diagflat)
def diagflat(v: Any, k: int = 0) -> Any:
    return diag(reshape(as_float(v), (-1,)), k)


@implements(np.tril)
def tril(m: Any, k: int = 0) -> Any:
    """``np.tril``: numpy's mask ``tri(..., k)`` selects; the rest is 0 with gradient 0."""
    m = as_float(m)
    mask = np.tri(*shape_of(m)[-2:], k=operator.index(k), dtype=bool)
    return E.where(mask, m, 0.0)


@implements(np.triu)
def triu(m: Any, k: int = 0) -> Any:
    m = as_float(m)
    mask = np.tri(*shape_of(m)[-2:], k=operator.index(k) - 1, dtype=bool)
    return E.where(mask, 0.0, m)


@implements(np.kron)
def kron(a: Any, b: Any) -> Any:
    """``np.kron``: the two arrays' axes interleaved by broadcasting, then merged."""
    a, b = as_float(a), as_float(b)
    sa, sb = shape_of(a), shape_of(b)
    if not sa or not sb:
        return E.mul(a, b)
    nd = max(len(sa), len(sb))
    sa, sb = (1,) * (nd - len(sa)) + sa, (1,) * (nd - len(sb)) + sb
    spread_a = reshape(a, tuple(d for n in sa for d in (n, 1)))
    spread_b = reshape(b, tuple(d for n in sb for d in (1, n)))
    return reshape(E.mul(spread_a, spread_b), tuple(x * y for x, y in zip(sa, sb)))


@implements(np.tensordot)
def tensordot(a: Any, b: Any, axes: Any = 2) -> Any:
    """``np.tensordot``: the summed axes to the end of ``a`` and the front of ``b``,
    flattened, one matrix product."""
    a, b = as_float(a), as_float(b)
    sa, sb = shape_of(a), shape_of(b)
    try:
        n = operator.index(axes)
        axes_a, axes_b = list(range(len(sa) - n, len(sa))), list(range(n))
    except TypeError:
        axes_a, axes_b = ([x] if isinstance(x, int) else list(x) for x in axes)
    if len(axes_a) != len(axes_b):
        raise ValueError("shape-mismatch for sum")
    axes_a = [normalize_axes(x, len(sa))[0] for x in axes_a]
    axes_b = [normalize_axes(x, len(sb))[0] for x in axes_b]
    if any(sa[i] != sb[j] for i, j in zip(axes_a, axes_b)):
        raise ShapeError(f"tensordot: shape-mismatch for sum: axes {axes_a} of {sa} and "
                         f"{axes_b} of {sb}")
    free_a = [k for k in range(len(sa)) if k not in axes_a]
    free_b = [k for k in range(len(sb)) if k not in axes_b]
    k = math.prod(sa[i] for i in axes_a)
    left = reshape(transpose(a, (*free_a, *axes_a)), (math.prod(sa[i] for i in free_a), k))
    right = reshape(transpose(b, (*axes_b, *free_b)), (k, math.prod(sb[j] for j in free_b)))
    product = matmul(left, right)
    return reshape(product, tuple(sa[i] for i in free_a) + tuple(sb[j] for j in free_b))


def _component(x: Any, i: int) -> Any:
    return x[..., i] if isinstance(x, Traced) else np.asarray(x)[..., i]


@implements(np.cross)
def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: Any = None) -> Any:
    """``np.cross`` of 2- and 3-vectors along the given axes, broadcasting the others."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = as_float(a), as_float(b)
    a, b = moveaxis(a, axisa, -1), moveaxis(b, axisb, -1)
    na, nb = shape_of(a)[-1], shape_of(b)[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n"
                         "(dimension must be 2 or 3)")
    a0, a1, b0, b1 = (_component(x, i) for x, i in ((a, 0), (a, 1), (b, 0), (b, 1)))
    z = a0 * b1 - a1 * b0
    if na == 2 and nb == 2:
        return z
    if na == 3 and nb == 3:
        a2, b2 = _component(a, 2), _component(b, 2)
        parts = [a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, z]
    elif na == 2:
        b2 = _component(b, 2)
        parts = [a1 * b2, -(a0 * b2), z]
    else:
        a2 = _component(a, 2)
        parts = [-(a2 * b1), a2 * b0, z]
    shape = np.broadcast_shapes(*(shape_of(p) for p in parts))
    parts = [p if shape_of(p) == shape else np.broadcast_to(p, shape) for p in parts]
    return moveaxis(stack(parts, axis=-1), -1, axisc)


@implements(np.rot90)
def rot90(m: Any, k: int = 1, axes: Any = (0, 1)) -> Any:
    """``np.rot90``: numpy's flips and transposes."""
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    m = as_float(m)
    nd = _ndim(m)
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == nd:
        raise ValueError("Axes must be different.")
    if axes[0] >= nd or axes[0] < -nd or axes[1] >= nd or axes[1] < -nd:
        raise ValueError(f"Axes={axes} out of range for array of ndim={nd}.")
    k = operator.index(k) % 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, axes[0]), axes[1])
    perm = list(range(nd))
    perm[axes[0]], perm[axes[1]] = perm[axes[1]], perm[axes[0]]
    if k == 1:
        return transpose(flip(m, axes[1]), tuple(perm))
    return flip(transpose(m, tuple(perm)), axes[1])
