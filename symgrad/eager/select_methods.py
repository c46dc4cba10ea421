"""Tensor methods that select or replace elements by their values: ``median``,
``nanmean``, ``nan_to_num``, ``fmax``/``fmin``, ``argsort`` and ``index_fill``/``index_fill_``.
A mixin of :class:`~symgrad.eager.tensor.Tensor`; the
functions of the same names (``torch.median``) are in :mod:`.functions`.

Positions that depend on the values are computed in numpy and enter as data (a mask),
so each value's gradient goes where PyTorch's does: ``median(dim)`` to the element its
index names (PyTorch's index: the ``(n - 1) // 2``-th of a stable sort, the first NaN
where there is one); ``median()`` shares it evenly among the elements equal to the
median (PyTorch's ``evenly_distribute_backward``); ``nan_to_num`` gives none to the
replaced elements; ``fmax`` all of it to ``self`` at ties.

    >>> import symgrad as torch
    >>> x = torch.tensor([[3.0, 1.0, 2.0, 1.0]], requires_grad=True)
    >>> x.median(1)
    torch.return_types.median(
    values=tensor([1.], grad_fn=<MedianBackward1>),
    indices=tensor([3]))
    >>> torch.fmax(torch.tensor([1.0, float("nan")]), torch.tensor([float("nan"), 2.0]))
    tensor([1., 2.])
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..numpy_api import functions as ops
from . import dtypes as dt
from .method_args import keepdim_arg, keeps_bool, named
from .method_args import one_dim as _one_dim
from .method_args import return_type as _return_type
from .op_dtypes import wrapped_int
from .saved_indices import watch_indices

median_result = _return_type("median")


def _value(x: Any) -> Any:
    return x._value if hasattr(x, "_value") and hasattr(x, "_node") else np.asarray(x)


def no_gradient_at_nan(out: Any, *operands: Any, value: Any = None) -> Any:
    """``out`` with no gradient at the elements where an operand is NaN: PyTorch's derivative
    there for ``clamp`` (each form, tensor bounds too), ``hardtanh`` and ``hardsigmoid``
    (``where``'s would pass the gradient; ``abs``'s is :func:`zero_times_gradient_at_nan`). The
    mask is computed in numpy and enters as data, only where there is a NaN (so no other
    graph changes); the value there is ``value`` (clamp's NaN of a NaN bound), else ``out``'s."""
    if not out.dtype.is_floating_point:
        return out
    nan = False
    for a in operands:
        v = None if a is None else _value(a)
        if v is not None and (v.dtype.kind == "f" or str(v.dtype) == "bfloat16"):
            nan = nan | np.isnan(v)
    if not np.any(nan):
        return out
    return ops.where(nan, out._value if value is None else value, out)


def zero_times_gradient_at_nan(out: Any, x: Any) -> Any:
    """``abs``'s ``out`` with PyTorch's derivative at a NaN of ``x``: ``g * sgn(nan)``,
    ``g * 0`` (NaN where the incoming gradient is NaN or infinite, 0 elsewhere), where
    :func:`no_gradient_at_nan`'s 0 would hide a NaN gradient (``sqrt(abs(nan))``)."""
    v = x._value
    if not (v.dtype.kind == "f" or str(v.dtype) == "bfloat16"):
        return out
    nan = np.isnan(v)
    if not np.any(nan):
        return out
    return ops.where(nan, out._value + x * 0.0, out)  # (the value: out's NaN)


def nan_passes_both(out: Any, a: Any, b: Any) -> Any:
    """``maximum``/``minimum`` of ``a`` and ``b`` with a NaN in either: PyTorch's derivative
    gives the gradient to both there (its masks ``self < other``, ``self > other`` are
    false at a NaN); ``where``'s gave it to neither. ``a + b`` there: NaN, and 1 for each."""
    nan = False
    for v in (a, b):
        v = _value(v)
        if v.dtype.kind == "f" or str(v.dtype) == "bfloat16":
            nan = nan | np.isnan(v)
    if not np.any(nan):
        return out
    return ops.where(nan, a + b, out)


class SelectMethods:
    """See the module docstring."""

    __slots__ = ()

    def median(self, dim=None, keepdim=False):
        """The lower median (``median()``), or ``(values, indices)`` along ``dim``."""
        keepdim_arg(keepdim)
        if dim is None:
            return self._global_median()
        d = _one_dim(dim, self.ndim)
        a = self._value if self.ndim else self._value.reshape(1)
        n = a.shape[d]
        if n == 0:
            raise IndexError("median(): Expected reduction dim 0 to have non-zero size.")
        order = np.argsort(a, axis=d, kind="stable")
        indices = np.take(order, [(n - 1) // 2], axis=d)
        nan = np.isnan(a) if a.dtype.kind == "f" else np.zeros(a.shape, bool)
        has_nan = nan.any(axis=d, keepdims=True)
        indices = np.where(has_nan, np.argmax(nan, axis=d, keepdims=True), indices)
        if not self.ndim:
            indices = indices.reshape(())
        values = self._pick(indices, d, keepdim or not self.ndim)
        named(values, self, "MedianBackward1", (self,))
        if not keepdim and self.ndim:
            indices = np.squeeze(indices, axis=d)
        return median_result(values, type(self)._make(indices.astype(np.int64)))

    def _global_median(self):
        a = self._value.reshape(-1)
        if not a.size:
            raise IndexError("median() input tensor cannot be empty")
        nan = np.isnan(a) if a.dtype.kind == "f" else np.zeros(a.shape, bool)
        median = a[nan].reshape(-1)[0] if nan.any() else np.sort(a)[(a.size - 1) // 2]
        if not self.dtype.is_floating_point:
            return type(self)._make(np.asarray(median))
        mask = (nan if nan.any() else a == median).reshape(self.shape)
        # the median itself, its gradient shared evenly among the elements equal to it:
        # ``share - share.detach()`` is 0 exactly (a mean of equal values may round)
        share = ops.where(mask, self, np.zeros((), a.dtype)).sum() * (1.0 / mask.sum())
        exact = type(self)._make(np.asarray(median))
        return named(exact + (share - share.detach()), self, "MedianBackward0", (self,))

    def nanmean(self, dim=None, keepdim=False, *, dtype=None):
        keepdim_arg(keepdim)
        x = self if dtype is None else self.to(dtype)
        if not x.dtype.is_floating_point:
            raise RuntimeError(f"nanmean(): expected input to have floating point or complex "
                               f"dtype but got {x.dtype.name.capitalize()}")
        nan = np.isnan(x._value)
        zero = np.zeros((), x._value.dtype)
        axes = _axes(dim, x.ndim)
        counts = (~nan).sum(axis=axes, keepdims=keepdim)
        count = type(self)._make(np.asarray(counts, x._value.dtype))
        mean = ops.where(nan, zero, x).sum(dim, keepdim) / count
        if not (counts == 0).any():
            return mean
        # a row of NaN only: PyTorch's nansum(x) / count has the gradient (g / 0) * 0, NaN,
        # for each of its elements (the where above gives them 0): the same product here
        empty = np.broadcast_to((~nan).sum(axis=axes, keepdims=True) == 0, x.shape)
        nan_rows = ops.where(empty, x, zero).sum(dim, keepdim) * 0.0 / count
        return named(ops.where(counts == 0, nan_rows, mean), x, "DivBackward0")

    def nan_to_num(self, nan=0.0, posinf=None, neginf=None):
        """NaN, +inf and -inf replaced (by default with 0 and the dtype's largest and
        smallest values); the replaced elements get no gradient, as PyTorch's."""
        if not self.dtype.is_floating_point:
            return self.clone()
        a = self._value
        info = np.finfo(a.dtype)
        big = info.max if posinf is None else posinf
        small = info.min if neginf is None else neginf
        with np.errstate(over="ignore"):
            fills = np.where(np.isnan(a), nan, np.where(a > 0, big, small)).astype(a.dtype)
        return named(ops.where(np.isfinite(a), self, fills), self, "NanToNumBackward0",
                     (self,))

    def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
        return self._unary_("nan_to_num", nan, posinf, neginf)

    def fmax(self, other):
        """The elementwise maximum that ignores NaN (NaN only where both are)."""
        return self._nan_ignoring(other, operator.ge, "FmaxBackward0")

    def fmin(self, other):
        return self._nan_ignoring(other, operator.le, "FminBackward0")

    def _nan_ignoring(self, other, keeps, name):
        a, b = self._value, _value(other)
        with np.errstate(invalid="ignore"):
            mine = keeps(a, b) | (np.isnan(b) if b.dtype.kind == "f" else False)
        return named(ops.where(mine, self, other), self, name, (self, other))

    def cross(self, other, dim=None):
        """The cross product of 3-vectors along ``dim`` (``None``: the first dimension of
        size 3, PyTorch's deprecated default)."""
        if dim is None:
            dim = next((d for d, n in enumerate(self.shape) if n == 3), -1)
        return cross3(self, other, dim)

    def argsort(self, dim=-1, descending=False, stable=False):
        return self.sort(dim, descending, stable).indices

    @keeps_bool
    def index_fill(self, dim, index, value):
        """``value`` in the slices ``index`` along ``dim`` (they get no gradient; a tensor
        ``value`` gets theirs), ``self`` elsewhere."""
        d = _one_dim(dim, self.ndim) if self.ndim else _one_dim(dim, 1)
        idx = _value(index)
        if idx.dtype.kind not in "iu" or idx.ndim > 1:
            raise IndexError("index_fill_(): Expected a long tensor for index, and it should "
                             "be a 0-d or 1-d tensor")
        size = self.shape[d] if self.ndim else 1
        if idx.size and (idx.min() < 0 or idx.max() >= size):  # (negative ones too)
            bad = idx[(idx < 0) | (idx >= size)].reshape(-1)[0]
            raise IndexError(f"index_fill(): index {bad} is out of bounds for dimension {d} "
                             f"with size {size}")
        chosen = np.zeros(size, dtype=bool)
        chosen[idx.reshape(-1)] = True
        mask = chosen.reshape((size,) + (1,) * (self.ndim - d - 1)) if self.ndim else chosen[0]
        if hasattr(value, "_value"):
            if value.ndim:
                raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, "
                                   f"but got tensor with {value.ndim} dimension(s).")
            fill = value if value.dtype == self.dtype else value.to(self.dtype)
        else:
            if type(value) is int and not self.dtype.is_floating_point:
                wrapped_int(value, self.dtype, "fill")  # PyTorch's range check
            fill = dt.cast(np.asarray(value), self.dtype)
        return watch_indices(named(ops.where(mask, fill, self), self, "IndexFillBackward0",
                                   (self,)), index)

    def index_fill_(self, dim, index, value):
        return self._unary_("index_fill", dim, index, value)


def cross3(a: Any, b: Any, dim: int) -> Any:
    """``linalg.cross(a, b, dim=dim)`` of Tensors: PyTorch's checks, then the three
    components (the gradient from the products)."""
    if a.ndim != b.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    shape = np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    if not shape or shape[dim] != 3 or a.shape[dim] != 3 or b.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{a.shape[dim] if a.ndim else 0} and "
                           f"{b.shape[dim] if b.ndim else 0}")
    x, y = a.expand(*shape), b.expand(*shape)
    x0, x1, x2 = (x.select(dim, k) for k in range(3))
    y0, y1, y2 = (y.select(dim, k) for k in range(3))
    out = np.stack([x1 * y2 - x2 * y1, x2 * y0 - x0 * y2, x0 * y1 - x1 * y0],
                   axis=dim % len(shape))
    return named(out, a, "LinalgCrossBackward0", (a, b))


def _axes(dim: Any, ndim: int) -> Any:
    if dim is None:
        return None
    dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    return tuple(d % max(ndim, 1) for d in dims) if ndim else None
