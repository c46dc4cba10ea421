"""Primitives whose indices depend on the values: sorting, and the cumulative product.

- ``argsort``: the positions that sort the last axis, in numpy's stable order
  (``kind="stable"``), as float64 values (the IR has no integer type; indices
  are exact far beyond any array length). Piecewise constant: no gradient;
- ``take_along``: ``np.take_along_axis(x, idx, -1)`` for traced float indices;
- ``scatter_along``: its adjoint, ``out[..., idx[..., j]] += g[..., j]`` into
  zeros of ``size`` along the last axis;
- ``to_int``: float64 positions (whole numbers, computed by the above or by
  :mod:`symgrad.numpy_api.positions`) as int64, what ``np.argsort``/``np.argmax``
  return; no gradient, as integers carry none;
- ``cumprod`` along an axis. Its VJP, ``reverse_cumsum(g * ans) / x``, needs
  ``x`` without zeros; :func:`symgrad.numpy_api.reductions.cumprod` gives it
  such an ``x`` and handles zeros exactly around it.

Sorting is ``take_along(x, argsort(x))``: the gradient of a sorted array flows
back through the permutation, and tied values get the cotangent of the position
the stable sort put them in (a row of :mod:`symgrad.core.conventions`). None of
these has a SymPy form but ``cumprod``: a sort of symbols is not an expression.
Their cases in the test table use finite differences.

Under ``vmap`` (their ``batch`` facets) each works on its operands' last axis or
on ``axis``, so the batch axis goes in front: an unbatched operand of
``take_along``/``scatter_along`` is broadcast along it, ``cumprod``'s axis moves
up by one, and the primitive runs once on the whole batch.

    >>> import numpy as np
    >>> argsort(np.array([3.0, 1.0, 3.0, 2.0]))
    array([1., 3., 0., 2.])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import ShapeError
from ..core.ir import FLOAT, INT, Aval
from ..core.tracing import apply
from .indexing import _reverse_cumsum
from .registry import register, require


def _no_sympy(name: str):
    def sympy(sp, *args, **params):
        raise NotImplementedError(f"{name} has no SymPy form: the order of symbols is unknown")
    return sympy


def _batched(b, args, flags) -> list:
    """Every operand with the batch axis (the unbatched ones broadcast along it)."""
    return [x if f else b.with_batch(x) for x, f in zip(args, flags)]


# ---------------------------------------------------------------------------
# argsort


def _argsort_rule(x: Aval) -> Aval:
    require("argsort", (x,), FLOAT)
    if not x.ndim:
        raise ShapeError("argsort: needs an array with at least one axis")
    return Aval(x.shape)  # float64 indices, whatever x's dtype: float32 loses them past 2**24


argsort_p = register(
    name="argsort", kind="array", shape_rule=_argsort_rule,
    impl=lambda x: np.argsort(x, axis=-1, kind="stable").astype(np.float64),
    vjp=lambda g, ans, x: (None,), sympy=_no_sympy("argsort"),
    batch=lambda b, args, flags: (b.bind(argsort_p, args), True))  # the last axis stays last


# ---------------------------------------------------------------------------
# to_int: whole-number float positions as int64


def _to_int_rule(x: Aval) -> Aval:
    require("to_int", (x,), FLOAT)
    return Aval(x.shape, INT)


to_int_p = register(
    name="to_int", kind="array", shape_rule=_to_int_rule,
    impl=lambda x: np.asarray(x).astype(np.int64)[()] if np.ndim(x) == 0
    else np.asarray(x).astype(np.int64),
    vjp=lambda g, ans, x: (None,), sympy=lambda sp, x: x,
    batch=lambda b, args, flags: (b.bind(to_int_p, args), True))  # elementwise


# ---------------------------------------------------------------------------
# take_along and scatter_along: x[..., idx[..., j]] and its adjoint


def _along_rule(name: str, x: Aval, idx: Aval) -> None:
    require(name, (x, idx), FLOAT)
    if not x.ndim or x.ndim != idx.ndim or x.shape[:-1] != idx.shape[:-1]:
        raise ShapeError(f"{name}: the operand {x} and the indices {idx} must have the same "
                         "axes but the last")


def _take_along_rule(x: Aval, idx: Aval) -> Aval:
    _along_rule("take_along", x, idx)
    return Aval(idx.shape, x.dtype)


def _in_range(idx, size: int):
    """``idx`` as positions, or the kernels' IndexError for one outside ``[0, size)``
    (negative ones included: the front end has made numpy's negative indices positive)."""
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        bad = idx.min() if idx.min() < 0 else idx.max()
        raise IndexError(f"take_along: index out of bounds ({bad:.0f} for an axis of "
                         f"length {size})")
    return idx.astype(np.intp)


def _take_along_impl(x, idx):
    return np.take_along_axis(x, _in_range(idx, x.shape[-1]), axis=-1)


def _scatter_along_rule(g: Aval, idx: Aval, *, size: int) -> Aval:
    if g.shape != idx.shape:
        raise ShapeError(f"scatter_along: values {g} and indices {idx} differ in shape")
    require("scatter_along", (g, idx), FLOAT)
    return Aval(g.shape[:-1] + (size,), g.dtype)


def _scatter_along_impl(g, idx, size):
    out = np.zeros(g.shape[:-1] + (size,), g.dtype if g.dtype.kind == "c" else np.float64)
    batch = np.indices(g.shape[:-1]).reshape(g.ndim - 1, -1, 1) if g.ndim > 1 else ()
    idx = _in_range(idx, size)
    index = (*batch, idx.reshape(-1, g.shape[-1])) if g.ndim > 1 else (idx,)
    np.add.at(out, index, g.reshape(-1, g.shape[-1]) if g.ndim > 1 else g)
    return out


take_along_p = register(
    name="take_along", kind="array", complex=True, shape_rule=_take_along_rule,
    impl=_take_along_impl,
    vjp=lambda g, ans, x, idx: (scatter_along(g, idx, x.shape[-1]), None),
    sympy=_no_sympy("take_along"),
    batch=lambda b, args, flags: (b.bind(take_along_p, _batched(b, args, flags)), True))

scatter_along_p = register(
    name="scatter_along", kind="array", complex=True, shape_rule=_scatter_along_rule,
    impl=_scatter_along_impl,
    vjp=lambda g, ans, x, idx, size: (take_along(g, idx), None),
    sympy=_no_sympy("scatter_along"),
    batch=lambda b, args, flags, *, size: (
        b.bind(scatter_along_p, _batched(b, args, flags), size=size), True))


# ---------------------------------------------------------------------------
# cumprod


def _cumprod_rule(x: Aval, *, axis: int) -> Aval:
    require("cumprod", (x,), FLOAT)
    if not 0 <= axis < x.ndim:
        raise ShapeError(f"cumprod: axis {axis} is not an axis of {x}")
    return x


# d ans_j / d x_i = ans_j / x_i for i <= j: valid where x has no zeros (see above)
cumprod_p = register(
    name="cumprod", complex=True, kind="array", shape_rule=_cumprod_rule,
    impl=lambda x, axis: np.cumprod(x, axis=axis),
    vjp=lambda g, ans, x, axis: (_reverse_cumsum(g * ans, axis) / x,),
    sympy=lambda sp, x, axis: np.cumprod(x, axis=axis),
    batch=lambda b, args, flags, *, axis: (b.bind(cumprod_p, args, axis=axis + 1), True))


# ---------------------------------------------------------------------------
# recording helpers


def to_int(x: Any) -> Any:
    """Whole-number float positions as int64."""
    return apply(to_int_p, x)


def argsort(x: Any) -> Any:
    """The stable sorting permutation of the last axis, as float64 indices."""
    return apply(argsort_p, x)


def take_along(x: Any, idx: Any) -> Any:
    """``x[..., idx[..., j]]`` along the last axis, for float64 indices."""
    return apply(take_along_p, x, idx)


def scatter_along(g: Any, idx: Any, size: int) -> Any:
    """Zeros of ``size`` along the last axis, with ``g[..., j]`` added at ``idx[..., j]``."""
    return apply(scatter_along_p, g, idx, size=size)


def cumprod(x: Any, axis: int) -> Any:
    """The cumulative product along ``axis`` (a gradient only where ``x`` has no zeros)."""
    return apply(cumprod_p, x, axis=axis)
