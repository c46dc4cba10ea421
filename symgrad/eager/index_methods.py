"""PyTorch's Tensor methods that find or place elements by position or value:
``nonzero``/``argwhere``, ``masked_select``, ``masked_scatter``, ``index_copy``,
``index_reduce``, ``put`` (and their in-place forms), ``unique``, ``unique_consecutive``,
``bincount`` and ``histc``. A mixin of
:class:`~symgrad.eager.tensor.Tensor`; the functions of the same names
(``torch.nonzero``) are in :mod:`.shape_functions`.

Positions are computed in numpy and enter as data (indices, masks), so each value's
gradient goes where PyTorch's does: ``masked_scatter`` and ``index_copy`` to the source
elements that land in the result, ``put`` (``accumulate=True``) to every one. Integer
results (indices, inverses, counts, ``bincount`` without weights) are int64, as PyTorch's.
``unique`` and ``unique_consecutive`` have no derivative in PyTorch: on a tensor that
requires grad their values require grad too (``Unique2Backward0``), and a backward
through them raises PyTorch's error.

    >>> import symgrad as torch
    >>> torch.tensor([[0.0, 1.5], [2.0, 0.0]]).nonzero()
    tensor([[0, 1],
            [1, 0]])
    >>> torch.unique(torch.tensor([3, 1, 3, 2]), return_counts=True)
    (tensor([1, 2, 3]), tensor([1, 1, 2]))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..numpy_api import functions as ops
from . import grad_mode
from .host_nodes import no_derivative
from .method_args import named, same_dtype
from .method_args import one_dim as _one_dim
from .saved_indices import watch_indices


def _array(x: Any) -> np.ndarray:
    return np.asarray(getattr(x, "_value", x))


def _int64(cls: Any, a: Any) -> Any:
    return cls._make(np.asarray(a, dtype=np.int64))


class IndexMethods:
    """See the module docstring."""

    __slots__ = ()

    def nonzero(self, *, as_tuple: bool = False) -> Any:
        a = self._value if self.ndim else self._value.reshape(1)
        where = np.nonzero(a)
        if as_tuple:
            return tuple(_int64(type(self), w) for w in where)
        out = np.stack(where, 1) if self.ndim else np.zeros((len(where[0]), 0), np.int64)
        return _int64(type(self), out)

    def argwhere(self) -> Any:
        return self.nonzero()

    def masked_select(self, mask: Any) -> Any:
        m = _array(mask)
        if m.dtype != np.bool_:
            raise RuntimeError(f"masked_select: expected BoolTensor for mask, got {m.dtype}")
        shape = np.broadcast_shapes(tuple(self.shape), m.shape)
        x = self.expand(*shape) if tuple(self.shape) != shape else self
        return watch_indices(named(x[np.broadcast_to(m, shape)], self, "MaskedSelectBackward0",
                                   (self,)), mask)

    def masked_scatter(self, mask: Any, source: Any) -> Any:
        """``source``'s elements, in order, where ``mask`` is true; ``self`` elsewhere."""
        same_dtype("masked_scatter", self, source)
        m = np.broadcast_to(_array(mask), tuple(self.shape))
        count = int(m.sum())
        if count > source.numel():
            raise RuntimeError("masked_scatter: expected source to have at least as many "
                               f"elements as ones in mask ({count}), got {source.numel()}")
        position = np.where(m, np.cumsum(m.reshape(-1)).reshape(m.shape) - 1, 0)
        picked = source.reshape(-1)[position] if source.numel() else source.reshape(-1)
        return watch_indices(named(ops.where(m, picked.to(self.dtype), self) if count
                                   else self.clone(), self, "MaskedScatterBackward0",
                                   (self, source)), mask)

    def index_copy(self, dim: int, index: Any, source: Any) -> Any:
        """``self`` with the slices ``index`` along ``dim`` replaced by ``source``'s."""
        same_dtype("index_copy", self, source)
        d = _one_dim(dim, self.ndim) if self.ndim else 0
        idx = _array(index)
        n = self.shape[d] if self.ndim else 1
        if idx.ndim > 1 or idx.dtype != np.int64:
            raise IndexError("index_copy_(): Index should have dimension 1 or 0 and dtype "
                             "int64")
        idx = idx.reshape(-1)
        bad = idx[(idx < 0) | (idx >= n)]
        if bad.size:  # (negative indices too, as PyTorch's)
            raise IndexError(f"index_copy_(): index {bad[0]} is out of bounds for dimension "
                             f"{d} with size {n}")
        slot = np.zeros(n, np.int64)
        slot[idx] = np.arange(idx.size)  # (of repeated indices, the last one)
        chosen = np.zeros(n, bool)
        chosen[idx] = True
        if not idx.size:
            return self.clone()
        x = self if self.ndim else self.reshape(1)
        src = source if source.ndim == x.ndim else source.reshape(*x.shape[:d], -1,
                                                                  *x.shape[d + 1:])
        spread = src.index_select(d, _int64(type(self), slot))
        shape = [1] * x.ndim
        shape[d] = n
        out = ops.where(chosen.reshape(shape), spread.to(self.dtype), x)
        return watch_indices(named(out.reshape(()) if not self.ndim else out, self,
                                   "IndexCopyBackward0", (self, source)), index)

    def put(self, index: Any, source: Any, accumulate: bool = False) -> Any:
        """``self`` flattened, with ``source``'s elements put (or added) at ``index``."""
        same_dtype("put", self, source)
        flat = self.reshape(-1)
        idx = _array(index).reshape(-1)
        n = flat.shape[0]
        if idx.size and (idx.min() < -n or idx.max() >= n):
            raise IndexError(f"put_(): index out of range for a tensor of {n} elements")
        idx = _int64(type(self), np.where(idx < 0, idx + n, idx))
        values = source.reshape(-1).to(self.dtype)
        out = flat.index_add(0, idx, values) if accumulate else flat.index_copy(0, idx, values)
        return watch_indices(named(out.reshape(*self.shape), self, "PutBackward0",
                                   (self, source)), index)

    def index_reduce(self, dim: int, index: Any, source: Any, reduce: str, *,
                     include_self: bool = True) -> Any:
        """``source``'s slices reduced (``prod``, ``mean``, ``amax``, ``amin``) into the
        slices ``index`` along ``dim``: ``scatter_reduce`` with the index spread over the
        source's other dims (its gradients)."""
        if reduce not in ("prod", "mean", "amax", "amin"):
            raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, "
                               f"amax or amin but got {reduce}.")
        same_dtype("index_reduce", self, source)
        d = _one_dim(dim, self.ndim) if self.ndim else 0
        idx = _array(index).reshape(-1)
        shape = [1] * max(source.ndim, 1)
        shape[d] = idx.size
        spread = np.broadcast_to(idx.reshape(shape), tuple(source.shape) or (1,))
        out = self.scatter_reduce(d, _int64(type(self), np.ascontiguousarray(spread)), source,
                                  reduce, include_self=include_self)
        return watch_indices(named(out, self, "IndexReduceBackward0", (self, source)), index)

    def index_reduce_(self, dim: int, index: Any, source: Any, reduce: str, *,
                      include_self: bool = True) -> Any:
        return self._inplace(self._written("index_reduce", dim, index, reduce=reduce,
                                           include_self=include_self), source)

    # -- in place: the out-of-place op written into ``self`` (the source recorded) -------
    def _written(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """``fn(a, source)`` for ``_inplace``: ``a.name(*args, source, **kwargs)``, on
        Tensors when the change is recorded, else on arrays (made Tensors for the call)."""
        def fn(a: Any, source: Any) -> Any:
            recorded = hasattr(a, "_node")
            t = a if recorded else self._make(a)
            src = source if hasattr(source, "_node") else self._make(np.asarray(source))
            out = getattr(t, name)(*args, src, **kwargs)
            return out if recorded else out._value
        return fn

    def masked_scatter_(self, mask: Any, source: Any) -> Any:
        return self._inplace(self._written("masked_scatter", mask), source)

    def index_copy_(self, dim: int, index: Any, source: Any) -> Any:
        return self._inplace(self._written("index_copy", dim, index), source)

    def put_(self, index: Any, source: Any, accumulate: bool = False) -> Any:
        return self._inplace(self._written("put", index, accumulate=accumulate), source)

    def _no_derivative(self, values: np.ndarray, node: str, op: str) -> Any:
        """The values of ``op`` as a Tensor; of a node whose backward raises PyTorch's
        error when ``self`` requires grad (PyTorch has no derivative for it)."""
        if not (self.requires_grad and grad_mode.is_grad_enabled()):
            return type(self)._make(values)
        return no_derivative(values, (self,), node,
                             f"the derivative for '{op}' is not implemented.")

    def unique(self, sorted: bool = True, return_inverse: bool = False,
               return_counts: bool = False, dim: int | None = None) -> Any:
        """The distinct values (slices along ``dim``) in ascending order, with the
        inverse indices and the counts if asked (``sorted=False``: also ascending, as
        PyTorch's on the CPU)."""
        a = self._value
        if dim is None:
            values, inverse, counts = np.unique(a.reshape(-1), return_inverse=True,
                                                return_counts=True)
            inverse = inverse.reshape(a.shape)
        else:
            d = _one_dim(dim, self.ndim)
            values, inverse, counts = np.unique(a, return_inverse=True, return_counts=True,
                                                axis=d)
            inverse = inverse.reshape(-1)
        out = [self._no_derivative(values.astype(a.dtype), *(
            ("Unique2Backward0", "_unique2") if dim is None else
            ("UniqueDimBackward0", "unique_dim")))]
        out += [_int64(type(self), inverse)] if return_inverse else []
        out += [_int64(type(self), counts)] if return_counts else []
        return out[0] if len(out) == 1 else tuple(out)

    def unique_consecutive(self, return_inverse: bool = False, return_counts: bool = False,
                           dim: int | None = None) -> Any:
        a = self._value.reshape(-1) if dim is None else self._value
        d = 0 if dim is None else _one_dim(dim, self.ndim)
        a = np.moveaxis(a, d, 0)
        n = a.shape[0]
        if n:
            change = np.concatenate([[True], (a[1:] != a[:-1]).reshape(n - 1, -1).any(1)])
        else:
            change = np.zeros(0, bool)
        starts = np.flatnonzero(change)
        values = np.moveaxis(a[starts], 0, d)
        inverse = np.cumsum(change) - 1
        if dim is None:
            inverse = inverse.reshape(self._value.shape)
        counts = np.diff(np.append(starts, n))
        out = [self._no_derivative(np.ascontiguousarray(values), "UniqueConsecutiveBackward0",
                                   "unique_consecutive")]
        out += [_int64(type(self), inverse)] if return_inverse else []
        out += [_int64(type(self), counts)] if return_counts else []
        return out[0] if len(out) == 1 else tuple(out)

    def bincount(self, weights: Any = None, minlength: int = 0) -> Any:
        """The count of each value of a 1-D non-negative integer tensor (the sum of its
        ``weights``, of their dtype; no gradient, as PyTorch's)."""
        a = self._value
        if a.ndim != 1 or a.dtype.kind not in "iub":
            raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
        if a.size and a.min() < 0:
            raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
        size = max(int(a.max()) + 1 if a.size else 0, minlength)
        if weights is None:
            return _int64(type(self), np.bincount(a, minlength=size))
        if weights.requires_grad and grad_mode.is_grad_enabled():
            raise RuntimeError("bincount has no derivative (PyTorch's backward raises: the "
                               "derivative for aten::bincount is not implemented); pass "
                               "weights.detach()")
        w = weights if weights.dtype.is_floating_point else weights.double()
        zeros = type(self)._make(np.zeros(size, w._value.dtype))
        return zeros.index_add(0, _int64(type(self), a), w)

    def histc(self, bins: int = 100, min: float = 0, max: float = 0) -> Any:
        """The counts of ``bins`` equal bins between ``min`` and ``max`` (the data's range
        where both are 0), elements outside ignored; of the tensor's dtype."""
        if not self.dtype.is_floating_point:
            raise RuntimeError(f"\"histogram_cpu\" not implemented for "
                               f"'{self.dtype.name.capitalize()}'")
        a = self._value.reshape(-1)
        lo, hi = float(min), float(max)
        if lo == hi and a.size:
            lo, hi = float(a.min()), float(a.max())
        if lo == hi:
            lo, hi = lo - 1, hi + 1
        if lo > hi:
            raise RuntimeError("torch.histc: max must be larger than min")
        inside = a[(a >= lo) & (a <= hi)]
        # PyTorch's bin: floor((x - min) * bins / (max - min)), the top edge in the last bin
        position = ((inside - lo) * bins / (hi - lo)).astype(np.int64)
        position = np.minimum(position, bins - 1)
        return type(self)._make(np.bincount(position, minlength=bins).astype(a.dtype))
