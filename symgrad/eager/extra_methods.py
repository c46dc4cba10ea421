"""More of PyTorch's Tensor methods: triangles, ``roll``, ``trace``, the cumulative
family (``cumprod``, ``cummax``, ``cummin``, ``logcumsumexp``), scatters
(``scatter``, ``scatter_add``, ``scatter_reduce``, ``index_add``) and ``erf``.

Compositions of the primitives (through numpy's API on Tensors): positions that
depend on values (the running arg-max of ``cummax``) are computed in numpy and
enter as data, so the gradient of each value goes to the element it came from,
as PyTorch's does.

    >>> import symgrad as torch
    >>> x = torch.tensor([1.0, 3.0, 2.0, 3.0], requires_grad=True)
    >>> x.cummax(0)
    torch.return_types.cummax(
    values=tensor([1., 3., 3., 3.], grad_fn=<CummaxBackward0>),
    indices=tensor([0, 1, 1, 3]))
    >>> torch.zeros(3).scatter_add(0, torch.tensor([0, 0, 2]), torch.ones(3))
    tensor([2., 0., 1.])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..numpy_api import functions as ops
from ..numpy_api.indexing import at
from ..prims.special import erf as _erf
from ..prims.special_functions import erfinv as _erfinv
from . import dtypes as dt
from .method_args import keeps_bool, named, same_dtype
from .method_args import one_dim as _one_dim
from .method_args import return_type as _return_type
from .saved_indices import watch_indices

cummax_result = _return_type("cummax")
cummin_result = _return_type("cummin")
#: scatter_reduce's amax/amin: an autograd.Function set by :mod:`.scatter_extreme` (which
#: this module cannot import: that Function's module imports the Tensor class)
_SCATTER_EXTREME: list = []
_EXACT_LOGCUMSUMEXP = 64  # up to this length a chain of logaddexp, exact at any spread


def _index(index: Any) -> np.ndarray:
    value = np.asarray(getattr(index, "_value", index))
    if value.dtype.kind not in "iu":
        raise RuntimeError(f"index must be an integer (int64) tensor, not {value.dtype}")
    return value.astype(np.int64)


def _check_bounds(idx: np.ndarray, size: int, d: int) -> None:
    """PyTorch's error for the first index (in order) outside ``[0, size)``."""
    bad = idx[(idx < 0) | (idx >= size)]
    if bad.size:
        raise RuntimeError(f"index {int(bad.flat[0])} is out of bounds for dimension {d} "
                           f"with size {size}")


def _in_range(idx: np.ndarray, size: int) -> None:
    """``index_add``'s and ``index_select``'s error (PyTorch's words) for an index outside
    ``[0, size)``: negative ones are not wrapped."""
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        raise IndexError("index out of range in self")


def rebuild_tensor(cls: type, value: np.ndarray, requires_grad: bool) -> Any:
    """A leaf of class ``cls`` (Tensor or ``nn.Parameter``) holding ``value``: what a
    pickled tensor becomes (its graph is not saved, as in PyTorch)."""
    t = object.__new__(cls)
    t._init(value, None, False)
    t.requires_grad = requires_grad
    return t


class ExtraMethods:
    """Mixed into :class:`~symgrad.eager.tensor.Tensor`."""

    # -- pickle and copy (torch.save, copy.deepcopy) ----------------------------
    def __reduce_ex__(self, protocol):
        return (rebuild_tensor, (type(self), self._value.copy(), self._requires_grad))

    def __deepcopy__(self, memo):
        if self._node is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.  If you were "
                               "attempting to deepcopy a module, this may be because of a "
                               "torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        if id(self) in memo:
            return memo[id(self)]
        result = rebuild_tensor(type(self), self._value.copy(), self._requires_grad)
        if self.grad is not None:
            result.grad = self.grad.__deepcopy__(memo)
        memo[id(self)] = result
        return result

    def take(self, index):
        """PyTorch's ``take``: the elements of the flattened tensor at ``index`` (an integer
        tensor; negative entries count from the end), in ``index``'s shape."""
        idx, n = _index(index), self.numel()
        bad = idx[(idx < -n) | (idx >= n)]
        if bad.size:
            raise IndexError(f"out of range: tried to access index {int(bad.flat[0])} on a "
                             f"tensor of {n} elements.")
        return watch_indices(named(self.reshape(-1)[idx % max(n, 1)], self, "TakeBackward0",
                                   (self,)), index)

    def conj(self):  # a real tensor is its own conjugate: PyTorch returns it, any dtype
        return self

    @property
    def real(self):  # and its own real part (numpy's API would make a bool float64)
        return self

    @keeps_bool
    def tril(self, diagonal=0):
        keep = np.tril(np.ones(self.shape[-2:], dtype=bool), diagonal)
        return named(ops.where(keep, self, 0), self, "TrilBackward0", (self,))

    @keeps_bool
    def triu(self, diagonal=0):
        keep = np.triu(np.ones(self.shape[-2:], dtype=bool), diagonal)
        return named(ops.where(keep, self, 0), self, "TriuBackward0", (self,))

    @keeps_bool
    def roll(self, shifts, dims=None):
        if dims is None:
            return np.roll(self.reshape(-1), shifts).reshape(tuple(self.shape))
        return named(np.roll(self, shifts, dims), self, "RollBackward0", (self,))

    def trace(self):
        if self.ndim != 2:
            raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self.ndim}")
        # the diagonal's sum: integers summed in int64, exactly (np.trace of a Tensor masks
        # with a float 0.0, so an int64 trace went through float64)
        k = np.arange(min(self.shape))
        return named(self[k, k].sum(), self, "TraceBackward0", (self,))

    def cumprod(self, dim, dtype=None):
        x = self.to(dtype) if dtype is not None else self
        if x.ndim == 0:
            return x * 1
        d = _one_dim(dim, x.ndim)
        if not x.dtype.is_floating_point:  # int64, exactly and wrapping, as PyTorch's (no
            # gradient: numpy's own; the traced cumprod computes integers in float64)
            return type(x)._make(np.cumprod(x._value, axis=d, dtype=np.int64))
        return named(np.cumprod(x, axis=d), x, "CumprodBackward0", (x,))

    def _running(self, dim: Any, largest: bool) -> tuple[Any, Any]:
        """Values and indices of the running maximum (or minimum) along ``dim``; ties and
        nan go to the later element, as PyTorch's."""
        d = _one_dim(dim, self.ndim) if self.ndim else 0
        values = np.moveaxis(np.atleast_1d(self._value), d, -1)
        accumulate = np.maximum.accumulate if largest else np.minimum.accumulate
        running = accumulate(values, axis=-1)
        hit = (values == running) | np.isnan(values)
        positions = np.where(hit, np.arange(values.shape[-1]), 0)
        indices = np.moveaxis(np.maximum.accumulate(positions, axis=-1), -1, d)
        indices = indices.reshape(self.shape).astype(np.int64)
        taken = self.gather(d, indices) if self.ndim else self * 1
        return taken, type(self)._make(indices)

    def cummax(self, dim):
        values, indices = self._running(dim, largest=True)
        return cummax_result(named(values, self, "CummaxBackward0", (self,)), indices)

    def cummin(self, dim):
        values, indices = self._running(dim, largest=False)
        return cummin_result(named(values, self, "CumminBackward0", (self,)), indices)

    def logcumsumexp(self, dim):
        """``log(cumsum(exp(x)))`` along ``dim``, without overflow: a chain of ``logaddexp``
        up to 64 elements; beyond, shifted by the maximum, and an error where that shift
        would underflow a partial sum to 0 (use a shorter axis or ``torch.logaddexp``)."""
        if self.ndim == 0:
            return self * 1
        d = _one_dim(dim, self.ndim)
        n = self.shape[d]
        if n <= _EXACT_LOGCUMSUMEXP:
            parts = [self.narrow(d, 0, 1)]
            for k in range(1, n):
                parts.append(np.logaddexp(parts[-1], self.narrow(d, k, 1)))
            out = np.concatenate(parts, axis=d) if n else self * 1
        else:
            top = np.max(self._value, axis=d, keepdims=True)
            top = np.where(np.isfinite(top), top, 0.0)
            partial = np.cumsum(np.exp(self._value - top), axis=d)
            if np.any((partial == 0) & np.isfinite(self._value)):
                raise RuntimeError("logcumsumexp: a partial sum underflows once shifted by the "
                                   f"maximum along dim {dim} ({n} elements); split the axis "
                                   "into pieces of at most 64 elements")
            out = np.log(np.cumsum(np.exp(self - top), axis=d)) + top
        return named(out, self, "LogcumsumexpBackward0", (self,))

    @keeps_bool
    def unfold(self, dimension, size, step):
        """PyTorch's sliding windows along ``dimension``: that axis becomes the windows'
        count, ``(n - size) // step + 1``, and a new last axis holds each window (a
        gather, so overlapping windows add their gradients). PyTorch's is a view of
        ``self``; this one is a copy, read-only, so that an in-place change of it (which
        PyTorch's would write to ``self``) raises instead of being lost."""
        d = _one_dim(dimension, self.ndim) if self.ndim else _one_dim(dimension, 1)
        n = self.shape[d] if self.ndim else 1
        if size > n:
            raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size "
                               f"is {size}")
        if step <= 0:
            raise RuntimeError(f"step is {step} but must be > 0")
        if not self.ndim:  # PyTorch: a 0-d tensor's one window is itself, of shape (1,)
            return named(self.reshape(1)[:size], self, "UnfoldBackward0", (self,))
        x = self
        starts = np.arange((n - size) // step + 1) * step
        windows = np.take(x, starts[:, None] + np.arange(size), axis=d)
        out = named(np.moveaxis(windows, d + 1, -1), self, "UnfoldBackward0", (self,))
        out._value.flags.writeable = False  # a copy, PyTorch's a view: refuse in-place writes
        return out

    def erf(self):
        return named(_erf(self), self, "ErfBackward0", (self,))

    def erfinv(self):
        """PyTorch's ``erfinv`` (scipy.special's, a primitive with its own derivative
        ``sqrt(pi)/2 * exp(erfinv(x)**2)``); outside [-1, 1] nan, as PyTorch's."""
        return named(_erfinv(self), self, "ErfinvBackward0", (self,))

    # -- scatters ---------------------------------------------------------------
    def _scatter_positions(self, dim: Any, index: Any) -> tuple[int, np.ndarray]:
        """Flat positions in ``self`` that ``index`` addresses along ``dim``; an index
        outside ``[0, size)`` raises PyTorch's error (PyTorch does not wrap negative ones)."""
        d = _one_dim(dim, self.ndim) if self.ndim else 0
        idx = _index(index)
        if idx.ndim != self.ndim:
            raise RuntimeError(f"Index tensor must have the same number of dimensions as self "
                               f"tensor ({idx.ndim} vs {self.ndim})")
        _check_bounds(idx, self.shape[d] if self.ndim else 1, d)
        if not self.ndim:
            return d, np.zeros((), np.int64)
        grid = list(np.indices(idx.shape, sparse=True))
        grid[d] = idx
        flat = np.arange(self._value.size).reshape(self.shape)
        return d, flat[tuple(grid)]

    def _source(self, src: Any, shape: tuple[int, ...]) -> Any:
        if isinstance(src, (int, float)):  # a value: in self's dtype, as PyTorch casts it
            return type(self)._make(dt.cast(np.full(shape, src), self.dtype))
        if np.ndim(getattr(src, "_value", src)) == 0:
            return ops.broadcast_to(src, shape)
        region = tuple(slice(0, n) for n in shape)
        return src[region]

    def scatter(self, dim, index, src=None, value=None, reduce=None):
        if reduce is not None:
            return self.scatter_reduce(dim, index, src if src is not None else value,
                                       {"add": "sum", "multiply": "prod"}.get(reduce, reduce))
        source = src if src is not None else value
        same_dtype("scatter", self, source)
        _, positions = self._scatter_positions(dim, index)
        values = self._source(source, positions.shape)
        out = at(self.reshape(-1))[positions.reshape(-1)].set(values.reshape(-1))
        return watch_indices(named(out.reshape(tuple(self.shape)), self, "ScatterBackward0",
                                   (self,)), index)

    def scatter_add(self, dim, index, src):
        same_dtype("scatter_add", self, src)
        _, positions = self._scatter_positions(dim, index)
        values = self._source(src, positions.shape)
        out = at(self.reshape(-1))[positions.reshape(-1)].add(values.reshape(-1))
        return watch_indices(named(out.reshape(tuple(self.shape)), self,
                                   "ScatterAddBackward0", (self,)), index)

    def scatter_reduce(self, dim, index, src, reduce, *, include_self=True):
        """PyTorch's ``scatter_reduce`` for ``reduce`` in sum, mean (counting ``self``
        when ``include_self``), prod, amax and amin, with PyTorch's gradients: ``prod``
        the product of the other factors (zeros included), ``amax``/``amin`` shared
        evenly among the elements equal to the result."""
        if reduce not in ("sum", "mean", "prod", "amax", "amin"):
            raise RuntimeError(f"scatter_reduce: reduce argument must be one of sum, prod, "
                               f"mean, amax, amin, got {reduce!r}")
        same_dtype("scatter_reduce", self, src)
        _, positions = self._scatter_positions(dim, index)
        values = self._source(src, positions.shape).reshape(-1)
        flat = positions.reshape(-1)
        if reduce == "prod":
            total = self._scatter_prod(values, flat, include_self)
        elif reduce in ("amax", "amin"):
            if not _SCATTER_EXTREME:
                raise RuntimeError("scatter_reduce amax/amin: import symgrad (or "
                                   "symgrad.autograd) first; it sets their autograd.Function")
            total = _SCATTER_EXTREME[0](self.reshape(-1), values, flat, include_self, reduce)
        else:
            zero = np.zeros((), self._value.dtype)  # (a Python 0.0 would promote integers)
            base = self.reshape(-1) if include_self else ops.where(
                np.isin(np.arange(self._value.size), flat), zero, self.reshape(-1))
            total = at(base)[flat].add(values)
        if reduce == "mean":
            count = np.bincount(flat, minlength=self._value.size)
            count = np.maximum(count + (1 if include_self else 0), 1)
            if self._value.dtype.kind in "iu":  # PyTorch floor-divides integers
                total = total // count.astype(self._value.dtype)
            else:
                total = total / count.astype(self._value.dtype)
        return watch_indices(named(total.reshape(tuple(self.shape)), self,
                                   "ScatterReduceBackward0", (self,)), index)

    def _scatter_prod(self, values, flat: np.ndarray, include_self: bool):
        """Each output the product of its factors laid out in a row padded with ones,
        so the gradient is ``prod``'s own: the product of the other factors."""
        n = self._value.size
        kept = np.ones(n, bool) if include_self else ~np.isin(np.arange(n), flat)
        owner = np.concatenate([np.flatnonzero(kept), flat])    # output of each factor
        source = np.concatenate([np.flatnonzero(kept), n + np.arange(flat.size)])
        order = np.argsort(owner, kind="stable")
        owner, source = owner[order], source[order]
        count = np.bincount(owner, minlength=n)
        width = max(int(count.max(initial=0)), 1)
        slot = np.arange(owner.size) - np.repeat(np.cumsum(count) - count, count)
        layout = np.full((n, width), n + flat.size)             # the padding one
        layout[owner, slot] = source
        factors = np.concatenate([self.reshape(-1), values, np.ones(1, self._value.dtype)])
        return factors[layout].prod(1)

    def index_add(self, dim, index, source, *, alpha=1):
        same_dtype("index_add", self, source)
        d = _one_dim(dim, self.ndim)
        idx = _index(index)
        if idx.ndim != 1:
            raise IndexError("index_add_(): Index is supposed to be a vector")
        _in_range(idx, self.shape[d] if self.ndim else 1)
        target = (slice(None),) * d + (idx,)
        out = at(self)[target].add(source * alpha if alpha != 1 else source)
        return watch_indices(named(out, self, "IndexAddBackward0", (self,)), index)

    def index_select(self, dim, index):
        d = _one_dim(dim, self.ndim)
        idx = _index(index)
        _in_range(idx, self.shape[d] if self.ndim else 1)
        return watch_indices(named(np.take(self, idx, axis=d), self, "IndexSelectBackward0",
                                   (self,)), index)
