"""More of PyTorch's Tensor methods: ``fmod``, ``remainder``, ``floor_divide``, ``lerp``,
``addmm``, the ``bitwise_*`` names, ``select``, ``diagonal``, in-place index updates
(``index_add_``, ``scatter_``, ``scatter_add_``, ``index_put_``) and the in-place forms of
the unary ops (``x.sin_()``). A mixin of :class:`~symgrad.eager.tensor.Tensor`; the
functions of the same names (``torch.fmod``) are in :mod:`.functions`.

Dtypes are PyTorch's: integer ``fmod``/``remainder``/``floor_divide`` keep the integer
dtype (and a zero divisor raises PyTorch's ``ZeroDivisionError``), bitwise ops take
integers and bools only. ``diagonal`` and ``select`` return views, as PyTorch's: an
in-place change of the result changes the tensor they came from (:mod:`.views`).

    >>> import symgrad as torch
    >>> x = torch.tensor([5.0, -5.0, 7.5])
    >>> x.fmod(2), x.remainder(2)
    (tensor([ 1.0000, -1.0000,  1.5000]), tensor([1.0000, 1.0000, 1.5000]))
    >>> torch.lerp(x, torch.zeros(3), 0.5)
    tensor([ 2.5000, -2.5000,  3.7500])
    >>> m = torch.zeros(3, 3)
    >>> _ = m.diagonal().fill_(1.0)
    >>> m.sum().item()
    3.0
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..numpy_api import functions as ops
from ..numpy_api.indexing import at
from . import bitwise, fused_values, views
from . import dtypes as dt
from .method_args import named, same_dtype
from .method_args import one_dim as _one_dim
from .saved_indices import watch_indices

#: the unary ops whose in-place form ``x.op_()`` PyTorch has (besides those of .inplace)
UNARY_INPLACE = ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "expm1",
                 "log1p", "log2", "log10", "rsqrt", "reciprocal", "square", "sign", "floor",
                 "ceil", "trunc", "round", "erf", "erfinv")


def _integer_operands(a: Any, b: Any) -> np.ndarray | None:
    """For integer ``a op b`` (PyTorch's promotion): both operands as arrays of the result
    dtype, after PyTorch's check of a zero divisor; None for a float result."""
    out = dt.result_type([a, b])
    if out.is_floating_point:
        return None
    x, y = (np.asarray(getattr(v, "_value", v)).astype(out.numpy, copy=False) for v in (a, b))
    if (y == 0).any():
        raise RuntimeError("ZeroDivisionError")
    return x, y


class MoreMethods:
    """See the module docstring."""

    __slots__ = ()

    # -- division and interpolation ------------------------------------------------
    def fmod(self, other: Any) -> Any:
        """``self - trunc(self / other) * other``, with the sign of ``self`` (C's ``fmod``),
        exact, and PyTorch's gradients: 1 for ``self``, ``-trunc(self / other)`` of the
        rounded quotient for ``other`` (-20 for ``2 / 0.1``, whose exact quotient is 19.99...;
        -inf for ``other = 0``): C's value minus ``g.detach() - g`` (0), ``g = self - q *
        other`` with that quotient ``q`` as data (an infinite ``other`` of a finite ``self``
        taken as 0: its gradient ``-trunc(x / inf)`` is 0). Where ``g`` would still not be
        finite but the value is (``q * other`` overflows), and for float16 and bfloat16,
        ``s * remainder(s * self, |other|)`` with ``s`` the sign of ``self``: the same
        values, the exact quotient's gradient. Known difference: for an infinite
        ``other`` PyTorch's zero gradient is ``-g * trunc(self / other)``, signed (-0.0
        for ``fmod(2.5, inf)`` and g = 1), here +0.0 (``where``'s zero: a signed one would
        need a second path to ``other``, and a sum of +0.0 and -0.0 is +0.0)."""
        ints = _integer_operands(self, other)
        if ints is not None:
            return self._make(np.fmod(*ints))
        kind = dt.result_type([self, other])
        x = self if self.dtype is kind else self.to(kind)
        name = "FmodBackward1" if hasattr(other, "_value") else "FmodBackward0"
        if kind is dt.float32 or kind is dt.float64:
            b = np.asarray(getattr(other, "_value", other), dtype=kind.numpy)
            infinite, zero = np.isinf(b) & np.isfinite(x._value), np.zeros((), kind.numpy)
            finite = ops.where(infinite, zero, other) if infinite.any() else other
            with np.errstate(all="ignore"):
                exact, q = np.fmod(x._value, b), np.trunc(x._value / b)
                g_value = x._value - q * np.where(infinite, zero, b)
            if np.isfinite(g_value)[np.isfinite(exact)].all():
                with np.errstate(all="ignore"):  # (a number other = 0: 0 * inf)
                    g = x - finite * q
                return named(self._make(exact) - (g.detach() - g), self, name)
        s = np.where(np.signbit(x._value), -1.0, 1.0).astype(kind.numpy)
        magnitude = abs(other) if hasattr(other, "_value") else np.abs(
            np.asarray(other, dtype=kind.numpy))
        return named((x * s).remainder(magnitude) * s, self, name)

    def remainder(self, other: Any) -> Any:
        """``self - floor(self / other) * other`` (Python's ``%``: the sign of ``other``)."""
        ints = _integer_operands(self, other)
        if ints is not None:
            return self._make(np.mod(*ints))
        return named(self % other, self,
                     "RemainderBackward1" if hasattr(other, "_value") else "RemainderBackward0")

    def floor_divide(self, other: Any) -> Any:
        """``self // other``, rounded down as PyTorch's; integers keep their dtype."""
        ints = _integer_operands(self, other)
        if ints is not None:
            return self._make(np.floor_divide(*ints))
        return self // other

    def lerp(self, end: Any, weight: Any) -> Any:
        """``self + weight * (end - self)``, by PyTorch's formula: from ``end`` when
        ``|weight| >= 0.5`` (``end - (end - self) * (1 - weight)``), so ``weight=1`` gives
        ``end`` exactly; its value rounded once, as PyTorch's kernel (:mod:`.fused_values`;
        bfloat16 and float16 in float32, then rounded)."""
        plain = (dt.float32, dt.float64)
        if (getattr(weight, "ndim", None) == 0 and weight.dtype is not self.dtype
                and self.dtype in plain and weight.dtype in (*plain, dt.int64, dt.int32)):
            # PyTorch takes a 0-d weight of another dtype (float16 and bfloat16 ones, whose
            # gradient in self rounds 1 - weight to their dtype there, are left refused)
            weight = weight.to(self.dtype)
        same_dtype("lerp", self, end, weight)
        if self.dtype is dt.bfloat16 or self.dtype is dt.float16:
            def up(v: Any) -> Any:
                return v.float() if getattr(v, "dtype", None) is self.dtype else v
            return up(self).lerp(up(end), up(weight)).to(self.dtype)
        def formula() -> Any:
            diff = end - self
            if not hasattr(weight, "_value"):
                return self + weight * diff if abs(weight) < 0.5 else end - diff * (1 - weight)
            near = np.abs(weight._value) < 0.5
            return ops.where(near, self + weight * diff, end - diff * (1 - weight))
        tensor_weight = hasattr(weight, "_value")
        return named(fused_values.lerp(self, end, weight, formula), self,
                     "LerpBackward1" if tensor_weight else "LerpBackward0",
                     (self, end, weight) if tensor_weight else (self, end))

    def addmm(self, mat1: Any, mat2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
        """``beta * self + alpha * (mat1 @ mat2)``; with ``beta=0`` ``self`` is not read (its
        NaNs do not reach the result), as in PyTorch."""
        if mat1.ndim != 2 or mat2.ndim != 2:
            raise RuntimeError(f"mat1 must be a matrix, got {mat1.ndim}-D tensor"
                               if mat1.ndim != 2 else
                               f"mat2 must be a matrix, got {mat2.ndim}-D tensor")
        product = mat1 @ mat2
        same_dtype("addmm", self, product)
        if alpha != 1:
            product = product * alpha
        if beta == 0:
            return named(product, self, "AddmmBackward0", (self, mat1, mat2))
        scaled = self if beta == 1 else self * beta
        return named(scaled + product, self, "AddmmBackward0", (self, mat1, mat2))

    # -- bitwise names of the operators -------------------------------------------
    def bitwise_and(self, other): return bitwise.binary(self, other, "and")
    def bitwise_or(self, other): return bitwise.binary(self, other, "or")
    def bitwise_xor(self, other): return bitwise.binary(self, other, "xor")
    def bitwise_left_shift(self, other): return bitwise.binary(self, other, "lshift")
    def bitwise_right_shift(self, other): return bitwise.binary(self, other, "rshift")
    def bitwise_not(self): return bitwise.invert(self)
    def bitwise_and_(self, other): return self._bitwise_inplace(other, "and")
    def bitwise_or_(self, other): return self._bitwise_inplace(other, "or")
    def bitwise_xor_(self, other): return self._bitwise_inplace(other, "xor")
    def bitwise_left_shift_(self, other): return self._bitwise_inplace(other, "lshift")
    def bitwise_right_shift_(self, other): return self._bitwise_inplace(other, "rshift")

    def bitwise_not_(self) -> Any:
        result = bitwise.invert(self)
        return self._inplace(lambda a, b: result._value, None)

    # -- views ----------------------------------------------------------------------
    def select(self, dim: int, index: int) -> Any:
        """The slice at ``index`` along ``dim`` (that dimension removed): a view."""
        d = _one_dim(dim, self.ndim)
        size = self.shape[d]
        if not -size <= index < size:
            raise IndexError(f"select(): index {index} out of range for tensor of size "
                             f"{list(self.shape)} at dimension {dim}")
        return named(self[(slice(None),) * d + (index % size,)], self, "SelectBackward0")

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:
        """The diagonal of the planes of ``dim1`` and ``dim2`` (shifted up by ``offset``),
        as a last dimension: a view of ``self``, as PyTorch's (``x.diagonal().zero_()``
        zeroes the diagonal of ``x``)."""
        d1, d2 = _one_dim(dim1, self.ndim), _one_dim(dim2, self.ndim)
        if d1 == d2:
            raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
        a = self._value
        n = max(0, min(a.shape[d1] - max(-offset, 0), a.shape[d2] - max(offset, 0)))
        rows = np.arange(n) + max(-offset, 0)
        cols = np.arange(n) + max(offset, 0)
        rest = [k for k in range(self.ndim) if k not in (d1, d2)]
        moved = self.permute(*rest, d1, d2) if (d1, d2) != (self.ndim - 2, self.ndim - 1) \
            else self
        result = named(moved[..., rows, cols], self, "DiagonalBackward0", (self,))
        # the same values as a strided view of self's memory (numpy's diagonal is read-only)
        first = tuple(slice(rows[0] if n else 0, None) if k == d1 else
                      slice(cols[0] if n else 0, None) if k == d2 else slice(None)
                      for k in range(self.ndim))
        diag = np.diagonal(a, offset, d1, d2)
        result._value = np.lib.stride_tricks.as_strided(
            a[first], diag.shape, diag.strides, writeable=a.flags.writeable)
        views.note((self,), result)
        return result

    # -- in-place index updates -----------------------------------------------------
    def index_add_(self, dim, index, source, *, alpha=1):
        same_dtype("index_add_", self, source)  # (unrecorded, source comes as an array)
        return self._inplace(_method_on(self, "index_add", dim, index, alpha=alpha), source)

    def scatter_add_(self, dim, index, src):
        same_dtype("scatter_add_", self, src)
        return self._inplace(_method_on(self, "scatter_add", dim, index), src)

    def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
        same_dtype("scatter_reduce_", self, src)
        return self._inplace(_method_on(self, "scatter_reduce", dim, index, reduce=reduce,
                                        include_self=include_self), src)

    def scatter_(self, dim, index, src=None, value=None, reduce=None):
        source = src if src is not None else value
        same_dtype("scatter_", self, source)
        return self._inplace(_method_on(self, "scatter", dim, index, reduce=reduce), source)

    def index_put(self, indices, values, accumulate=False):
        """``self`` with ``values`` written (or added, ``accumulate``) at ``indices`` (a
        tuple of index tensors, as ``self[indices]``)."""
        same_dtype("index_put", self, values)
        target = tuple(indices)
        update = at(self)[_arrays(target)]
        out = update.add(values) if accumulate else update.set(values)
        return watch_indices(named(out, self, "IndexPutBackward0"), target)

    def index_put_(self, indices, values, accumulate=False):
        same_dtype("index_put_", self, values)
        return self._inplace(_method_on(self, "index_put", indices, accumulate=accumulate), values,
                             "IndexPutBackward0")

    def fmod_(self, other): return self._inplace(_method_on(self, "fmod"), other)
    def remainder_(self, other): return self._inplace(_method_on(self, "remainder"), other)
    def floor_divide_(self, other): return self._inplace(_method_on(self, "floor_divide"), other)


def _method_on(t: Any, name: str, *args: Any, **kwargs: Any) -> Any:
    """``fn(a, operand)`` for ``_inplace``: ``a.name(*args, operand, **kwargs)``; ``a`` is a
    Tensor when the operation is recorded, else an array (whose result is an array)."""
    kwargs = {k: v for k, v in kwargs.items() if v is not None}

    def fn(a: Any, operand: Any) -> Any:
        if hasattr(a, "_node"):
            return getattr(a, name)(*args, operand, **kwargs)
        return getattr(t._make(a), name)(*args, operand, **kwargs)._value
    return fn


def _arrays(index: tuple) -> tuple:
    return tuple(getattr(p, "_value", p) for p in index)


def _install_unary_inplace() -> None:
    def make(op: str) -> Any:
        def method(self: Any) -> Any:
            return self._unary_(op)
        method.__name__ = method.__qualname__ = f"{op}_"
        method.__doc__ = f"``x.{op}()`` written into ``x``."
        return method
    for op in UNARY_INPLACE:
        setattr(MoreMethods, f"{op}_", make(op))


_install_unary_inplace()
