"""PyTorch's statistics Tensor methods: ``count_nonzero``, ``diff``, ``kthvalue``,
``mode``, ``quantile``/``nanquantile``, ``nanmedian``, ``nansum``, ``aminmax``, ``renorm``,
``cov``, ``corrcoef`` and ``msort``. A mixin of :class:`~symgrad.eager.tensor.Tensor`; the
functions of the same names (``torch.quantile``) are in :mod:`.shape_functions`.

Positions that depend on the values (the k-th smallest, the mode, the order statistics
a quantile interpolates) are computed in numpy and enter as data, so each value's
gradient goes to the elements PyTorch's does; the rest are composites of ops with their
own gradients.

    >>> import symgrad as torch
    >>> torch.tensor([1.0, 4.0, 2.0, 3.0]).quantile(0.5)
    tensor(2.5000)
    >>> torch.tensor([[1, 2, 2, 3]]).mode(1).values
    tensor([2])
"""

from __future__ import annotations

import collections
from typing import Any

import numpy as np

from ..numpy_api import functions as ops
from ..numpy_api import shapes as shape_ops
from .method_args import dim_axes, int_arg, keepdim_arg, named
from .method_args import one_dim as _one_dim
from .method_args import return_type as _return_type

kthvalue_result = _return_type("kthvalue")
mode_result = _return_type("mode")
nanmedian_result = _return_type("nanmedian")
aminmax_result = collections.namedtuple("aminmax", ["min", "max"])


def _flat_dim(x: Any, dim: Any) -> tuple[Any, int]:
    """``x`` flattened for ``dim=None``, with the dim reduced."""
    if dim is None:
        return x.reshape(-1), 0
    if not x.ndim:
        return x.reshape(1), 0
    return x, _one_dim(dim, x.ndim)


class StatMethods:
    """See the module docstring."""

    __slots__ = ()

    def count_nonzero(self, dim: Any = None) -> Any:
        axes = dim_axes(dim, self.ndim) if dim is not None else None
        return type(self)._make(np.asarray(np.count_nonzero(self._value, axis=axes),
                                           np.int64))

    def diff(self, n: int = 1, dim: int = -1, prepend: Any = None, append: Any = None) -> Any:
        if not self.ndim:
            raise RuntimeError("diff expects input to be at least one-dimensional")
        d = _one_dim(dim, self.ndim)
        x = _join([t for t in (prepend, self, append) if t is not None], d, self.dtype)
        for _ in range(n):
            m = x.shape[d]
            hi, lo = x.narrow(d, 1, max(m - 1, 0)), x.narrow(d, 0, max(m - 1, 0))
            x = hi ^ lo if x.dtype.name == "bool" else hi - lo
        return x

    def _at_positions(self, positions: np.ndarray, d: int, keepdim: bool, name: str) -> Any:
        """The elements at ``positions`` (with the dim ``d`` kept) and their indices."""
        index = type(self)._make(positions.astype(np.int64))
        values = named(self.gather(d, index), self, name, (self,))
        if not keepdim:
            values, index = values.squeeze(d), index.squeeze(d)
        return values, index

    def kthvalue(self, k: int, dim: int = -1, keepdim: bool = False) -> Any:
        """The k-th smallest value along ``dim`` and its index (among equal values, the
        one a stable sort puts k-th; PyTorch's quickselect may name another)."""
        keepdim_arg(keepdim)
        k = int_arg(k, "k")
        x = self if self.ndim else self.reshape(1)
        d = _one_dim(dim, x.ndim)
        if not 1 <= k <= x.shape[d]:
            raise IndexError(f"kthvalue(): selected number k out of range for dimension {dim}")
        order = np.argsort(x._value, axis=d, kind="stable")
        out = x._at_positions(np.take(order, [k - 1], axis=d), d, keepdim or not self.ndim,
                              "KthvalueBackward0")
        return kthvalue_result(*(t.reshape(()) if not self.ndim else t for t in out))

    def mode(self, dim: int = -1, keepdim: bool = False) -> Any:
        """The most frequent value along ``dim`` (the smallest of equally frequent ones) and
        the index of its last occurrence (PyTorch's on the CPU)."""
        keepdim_arg(keepdim)
        x = self if self.ndim else self.reshape(1)
        d = _one_dim(dim, x.ndim)
        a = np.moveaxis(x._value, d, -1)
        rows = a.reshape(-1, a.shape[-1])
        picks = np.empty(rows.shape[0], np.int64)
        for r, row in enumerate(rows):
            values, counts = np.unique(row, return_counts=True)  # (NaN: each its own)
            best = values[np.argmax(counts)]
            same = np.flatnonzero((row == best) | (np.isnan(row) & np.isnan(best))
                                  if row.dtype.kind == "f" else row == best)
            picks[r] = same[-1]
        positions = np.moveaxis(picks.reshape(a.shape[:-1] + (1,)), -1, d)
        out = x._at_positions(positions, d, keepdim or not self.ndim, "ModeBackward0")
        return mode_result(*(t.reshape(()) if not self.ndim else t for t in out))

    def _order_statistics(self, q: Any, dim: Any, keepdim: bool, interpolation: str,
                          ignore_nan: bool) -> Any:
        keepdim_arg(keepdim)
        name = "nanquantile" if ignore_nan else "quantile"
        if not self.dtype.is_floating_point:
            raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
        if hasattr(q, "_value") and q.dtype != self.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        qs = np.asarray(getattr(q, "_value", q), dtype=np.float64)
        if qs.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if ((qs < 0) | (qs > 1)).any():
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
        if interpolation not in ("linear", "lower", "higher", "midpoint", "nearest"):
            raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                               f"midpoint or nearest. Got {interpolation}")
        x, d = _flat_dim(self, dim)
        if x.shape[d] == 0:
            raise RuntimeError(f"{name}() input tensor must be non-empty")
        x = x.movedim(d, -1)
        order = np.argsort(x._value, axis=-1, kind="stable")  # NaN last
        ordered = x.gather(-1, type(self)._make(order))
        nan = np.isnan(x._value)
        size = (~nan).sum(-1, keepdims=True) if ignore_nan else np.full(
            nan.shape[:-1] + (1,), x.shape[-1])
        outs = []
        for qv in qs.reshape(-1):
            # PyTorch's ranks: the last (a NaN) where quantile meets one; 0 (a NaN) where
            # nanquantile meets only NaN; the value and its gradient from there
            rank = qv * (np.maximum(size, 1) - 1)
            if not ignore_nan:
                rank = np.where(nan.any(-1, keepdims=True), x.shape[-1] - 1, rank)
            lo = np.floor(rank).astype(np.int64)
            hi = np.ceil(rank).astype(np.int64)
            if interpolation == "lower":
                hi = lo
            elif interpolation == "higher":
                lo = hi
            elif interpolation == "nearest":
                lo = hi = np.round(rank).astype(np.int64)
            v_lo = ordered.gather(-1, type(self)._make(lo))
            v_hi = ordered.gather(-1, type(self)._make(hi))
            if interpolation in ("linear", "midpoint"):
                w = (rank - lo) if interpolation == "linear" else np.full(rank.shape, 0.5)
                w = w.astype(x._value.dtype)
                # PyTorch's lerp: from the upper end for weights >= 0.5
                value = ops.where(w < 0.5, v_lo + (v_hi - v_lo) * w,
                                  v_hi - (v_hi - v_lo) * (1 - w))
            else:
                value = v_lo
            outs.append(value)
        out = shape_ops.stack(outs, axis=0).squeeze(-1)  # (q, *rest)
        if keepdim:
            if dim is None:
                out = out.reshape(out.shape[0], *([1] * self.ndim))
            else:
                out = out.unsqueeze(_one_dim(dim, self.ndim) + 1)
        return named(out if qs.ndim else out[0], self, "QuantileBackward0", (self,))

    def quantile(self, q: Any, dim: Any = None, keepdim: bool = False, *,
                 interpolation: str = "linear") -> Any:
        return self._order_statistics(q, dim, keepdim, interpolation, False)

    def nanquantile(self, q: Any, dim: Any = None, keepdim: bool = False, *,
                    interpolation: str = "linear") -> Any:
        return self._order_statistics(q, dim, keepdim, interpolation, True)

    def nanmedian(self, dim: Any = None, keepdim: bool = False) -> Any:
        """The lower median of the non-NaN values (NaN where all are); along ``dim``, with
        its index."""
        keepdim_arg(keepdim)
        if dim is None:
            x = self.reshape(-1)
            if not x.shape[0]:
                raise IndexError("nanmedian() input tensor cannot be empty")
            nan = np.isnan(x._value) if self.dtype.is_floating_point else np.zeros(x.shape, bool)
            if nan.all():
                return x[0]
            order = np.argsort(x._value, kind="stable")
            median = x._value[int(order[(int((~nan).sum()) - 1) // 2])]
            # its gradient shared evenly among the elements equal to it (PyTorch's
            # evenly_distribute_backward); ``share - share.detach()`` is 0 exactly
            mask = x._value == median
            share = ops.where(mask, x, np.zeros((), x._value.dtype)).sum() * (1.0 / mask.sum())
            exact = type(self)._make(np.asarray(median))
            return named(exact + (share - share.detach()), self, "NanmedianBackward0",
                         (self,))
        x = self if self.ndim else self.reshape(1)
        d = _one_dim(dim, x.ndim)
        a = x._value
        nan = np.isnan(a) if a.dtype.kind == "f" else np.zeros(a.shape, bool)
        order = np.argsort(a, axis=d, kind="stable")
        count = (~nan).sum(axis=d, keepdims=True)
        k = np.maximum(count - 1, 0) // 2
        positions = np.take_along_axis(order, k, axis=d)
        out = x._at_positions(positions, d, keepdim or not self.ndim, "NanmedianBackward1")
        return nanmedian_result(*(t.reshape(()) if not self.ndim else t for t in out))

    def nansum(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
        x = self if dtype is None else self.to(dtype)
        if not x.dtype.is_floating_point:
            return x.sum(dim, keepdim)
        zero = np.zeros((), x._value.dtype)
        return named(ops.where(np.isnan(x._value), zero, x).sum(dim, keepdim), self,
                     "NansumBackward0")

    def aminmax(self, *, dim: Any = None, keepdim: bool = False) -> Any:
        if dim is None:
            return aminmax_result(self.amin(), self.amax())
        return aminmax_result(self.amin(dim, keepdim), self.amax(dim, keepdim))

    def renorm(self, p: float, dim: int, maxnorm: float) -> Any:
        """Each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled to it."""
        d = _one_dim(dim, self.ndim)
        others = tuple(i for i in range(self.ndim) if i != d)
        norms = self.norm(p, others, keepdim=True)
        over = norms._value > maxnorm
        factor = ops.where(over, maxnorm / (norms + 1e-7), np.ones((), self._value.dtype))
        return named(self * factor, self, "RenormBackward0", (self,))

    def renorm_(self, p: float, dim: int, maxnorm: float) -> Any:
        return self._unary_("renorm", p, dim, maxnorm)

    def cov(self, *, correction: int = 1, fweights: Any = None, aweights: Any = None) -> Any:
        """The covariance of the rows (variables) over the columns (observations)."""
        if self.ndim > 2:
            raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but "
                               f"got an input with {self.ndim} dimensions")
        x = self.reshape(1, -1) if self.ndim < 2 else self
        x = x if x.dtype.is_floating_point else x.double()
        n = x.shape[1]
        w = None
        if fweights is not None:
            w = fweights.to(x.dtype)
        if aweights is not None:
            w = aweights if w is None else w * aweights
        if w is None:
            mean = x.mean(1, keepdim=True)
            norm = n - correction
        else:
            total = w.sum()
            mean = (x * w).sum(1, keepdim=True) / total
            norm = total - (correction * (w * aweights).sum() / total
                            if aweights is not None and correction else correction)
        if float(_value(norm)) <= 0:
            norm = 0.0  # (PyTorch's: a warning and inf or nan entries)
        centred = x - mean
        out = centred @ (centred if w is None else centred * w).mT / norm
        return out.squeeze()

    def corrcoef(self) -> Any:
        c = self.cov()
        if c.ndim == 0:
            return c / c
        d = c.diagonal()
        scale = d.sqrt()
        out = c / scale.unsqueeze(1) / scale.unsqueeze(0)
        return out.clamp(-1, 1)

    def msort(self) -> Any:
        return self.sort(0).values


def _join(tensors: list[Any], d: int, kind: Any) -> Any:
    """``torch.cat`` of ``diff``'s operands (of ``self``'s dtype; bools joined as uint8)."""
    if len(tensors) == 1:
        return tensors[0]
    if kind.name == "bool":
        return _join([t.byte() for t in tensors], d, tensors[0].byte().dtype).bool()
    return shape_ops.concatenate([t.to(kind) for t in tensors], axis=d)


def _value(x: Any) -> Any:
    return getattr(x, "_value", x)
