"""The reductions among the Tensor methods: PyTorch's names, ``dim=``, return types.

:class:`ReductionMethods` is the base of :class:`.methods.TensorMethods`: ``sum``,
``mean``, ``prod``, ``max``/``min`` (with ``dim``: a named tuple of values and
indices, the gradient to the element its index names), ``amax``/``amin`` (ties
share it), ``argmax``, ``sort``, ``topk``, ``gather``, ``std``/``var``, ``norm``,
``logsumexp``, ``cumsum``, ``all``/``any``. Each is a composition of the numpy API
on traced values, as every Tensor method.

    >>> import symgrad as torch
    >>> torch.tensor([[1.0, 5.0], [4.0, 2.0]]).sort(dim=1).indices
    tensor([[0, 1],
            [1, 0]])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..numpy_api import functions as ops
from ..numpy_api import linalg
from ..numpy_api import shapes as shape_ops
from ..prims.reductions import mean_p, prod_p, sum_p
from . import dtypes as dt
from .bf16 import in_float32
from .fastpath import apply_f64, unary_f64
from .method_args import dim_axes as _dims
from .method_args import int_arg, keepdim_arg, named, type_name
from .method_args import one_dim as _one_dim
from .method_args import return_type as _return_type
from .saved_indices import watch_indices

max_result = _return_type("max")
min_result = _return_type("min")
sort_result = _return_type("sort")
topk_result = _return_type("topk")


_ALL_AXES = [tuple(range(n)) for n in range(33)]


def _all_axes(ndim: int) -> tuple[int, ...]:
    """``(0, 1, ..., ndim - 1)``: a reduction over every dim."""
    return _ALL_AXES[ndim] if ndim < 33 else tuple(range(ndim))


#: the primitive of each reduction _reduce takes (numpy_api's function applies it)
_REDUCTIONS = {ops.sum: sum_p, ops.mean: mean_p, ops.prod: prod_p}


class ReductionMethods:
    """PyTorch's reductions (the base of :class:`.methods.TensorMethods`)."""

    __slots__ = ()

    # -- reductions ------------------------------------------------------------------
    def _reduce(self, op: Any, name: str, dim: Any, keepdim: bool, kw: dict) -> Any:
        """``op`` over all elements (torch's ``<name>Backward0``) or over ``dim``
        (``<name>Backward1``); numpy's ``axis=``/``keepdims=`` are accepted too."""
        keepdim_arg(keepdim)
        dim = kw.pop("axis", dim)
        keepdim = kw.pop("keepdims", keepdim)
        dtype = kw.pop("dtype", None)
        if kw:
            raise TypeError(f"{name.lower()}() got unexpected keyword arguments {sorted(kw)}")
        if dtype is None and not keepdim:  # float64: the fast path, the same operation
            prim = _REDUCTIONS.get(op)
            axes = _dims(dim, self.ndim)
            result = None if prim is None else apply_f64(
                prim, (self,), {"axes": tuple(range(self.ndim)) if axes is None else axes},
                self._make)
            if result is not None:
                return named(result, self, None if dim is None else f"{name}Backward1")
        x = self.to(dtype) if dtype is not None else self
        if x.dtype is dt.bool:  # PyTorch sums bools as int64
            x = x.long()
        axes = _dims(dim, x.ndim)
        if x.dtype is dt.float16 and op in (ops.sum, ops.mean):  # PyTorch's sum and mean
            # of half run in float32, rounded once (in float16: 49 of 200 means were off)
            result = op(x.float(), axes, keepdims=keepdim).half()
            return named(result, x, f"{name}Backward{0 if dim is None else 1}")
        result = _wrapped(op(x, axes, keepdims=keepdim), dtype)
        return named(result, x, None if dim is None else f"{name}Backward1")

    def sum(self, dim=None, keepdim=False, **kw):  # type: ignore[override]
        return self._reduce(ops.sum, "Sum", dim, keepdim, kw)

    def mean(self, dim=None, keepdim=False, **kw):  # type: ignore[override]
        if dim is None and not keepdim and not kw:  # x.mean() of float64 or float32: at once
            params = {"axes": _all_axes(self._value.ndim)}
            result = unary_f64(mean_p, self, params, self._make)
            if result is None:
                result = apply_f64(mean_p, (self,), params, self._make)
            if result is not None:  # (what _reduce's fast path gives, without its steps)
                return result
        if not (self.dtype.is_floating_point or self.dtype.is_complex) and kw.get("dtype") is None:
            raise RuntimeError(
                f"mean(): could not infer output dtype. Input dtype must be either a floating "
                f"point or complex dtype. Got: {self.dtype.name.capitalize()}; convert it first "
                "(x.double().mean(), or x.mean(dtype=torch.float64))")
        return self._reduce(ops.mean, "Mean", dim, keepdim, kw)

    def prod(self, dim=None, keepdim=False, **kw):  # type: ignore[override]
        if isinstance(dim, (tuple, list)):
            raise TypeError("prod(): argument 'dim' must be int, not a tuple: PyTorch's prod "
                            "reduces one dim (x.prod(0).prod(0) for two)")
        return self._reduce(ops.prod, "Prod", dim, keepdim, kw)

    def _extremum(self, dim: Any, keepdim: bool, kw: dict, largest: bool) -> Any:
        """``max()``: the largest element; ``max(dim)``: (values, indices), as PyTorch;
        ``max(other)``: the elementwise maximum."""
        keepdim_arg(keepdim)
        dim = kw.pop("axis", dim)
        keepdim = kw.pop("keepdims", keepdim)
        if hasattr(dim, "_value") or isinstance(dim, np.ndarray):
            return self.maximum(dim) if largest else self.minimum(dim)
        if self._value.dtype == np.bool_:  # of masks: any/all, a bool result as PyTorch's
            found = self.long()._extremum(dim, keepdim, kw, largest)
            if dim is None:
                return found.bool()
            return type(found)(found.values.bool(), found.indices)
        name = "Max" if largest else "Min"
        if dim is None:
            nan = np.isnan(self._value) if self.dtype.is_floating_point else None
            if nan is not None and nan.any():  # PyTorch's evenly_distribute_backward: the
                zero = np.zeros((), dtype=self._value.dtype)  # NaNs share it (it gave NaNs)
                out = ops.sum(ops.where(nan, self, zero)) / int(nan.sum())
            else:
                out = (ops.max if largest else ops.min)(self)
            return named(out, self, f"{name}Backward1")
        d = _one_dim(dim, self.ndim)
        indices = (np.argmax if largest else np.argmin)(self._value, axis=d, keepdims=True)
        values = self._pick(indices, d, keepdim)
        named(values, self, f"{name}Backward0", (self,))
        if not keepdim:
            indices = np.squeeze(indices, axis=d)
        result = max_result if largest else min_result
        return result(values, type(self)._make(indices.astype(np.int64)))

    def _pick(self, indices: np.ndarray, d: int, keepdim: bool) -> Any:
        """The elements at ``indices`` along ``d`` (``take_along_axis``): their gradient
        goes to those elements only. A mask enters as data, so the recorded structure
        does not depend on where the maxima are."""
        if self.ndim == 0:
            return self * 1.0 if self._requires_grad else self
        if not self.dtype.is_floating_point:  # no gradient; the dtype kept (a sum widens)
            picked = np.take_along_axis(self._value, indices, axis=d)
            return type(self)._make(picked if keepdim else np.squeeze(picked, axis=d))
        mask = np.zeros(self.shape, dtype=bool)
        np.put_along_axis(mask, indices, True, axis=d)
        zero = np.zeros((), dtype=self._value.dtype)
        return ops.sum(ops.where(mask, self, zero), d, keepdims=keepdim)

    def max(self, dim=None, keepdim=False, **kw):  # type: ignore[override]
        return self._extremum(dim, keepdim, kw, largest=True)

    def min(self, dim=None, keepdim=False, **kw):  # type: ignore[override]
        return self._extremum(dim, keepdim, kw, largest=False)

    def amax(self, dim=(), keepdim=False):
        keepdim_arg(keepdim)
        return named(ops.max(self, _dims(dim, self.ndim), keepdims=keepdim), self,
                     "AmaxBackward0")

    def amin(self, dim=(), keepdim=False):
        keepdim_arg(keepdim)
        return named(ops.min(self, _dims(dim, self.ndim), keepdims=keepdim), self,
                     "AminBackward0")

    def argmax(self, dim=None, keepdim=False):
        return self._arg(np.argmax, dim, keepdim)

    def argmin(self, dim=None, keepdim=False):
        return self._arg(np.argmin, dim, keepdim)

    def _arg(self, fn: Any, dim: Any, keepdim: bool) -> Any:
        keepdim_arg(keepdim)
        if dim is None:
            index = fn(self._value.reshape(-1))
            out = np.reshape(index, (1,) * self.ndim if keepdim else ())
        else:
            out = fn(self._value, axis=_one_dim(dim, self.ndim), keepdims=keepdim)
        return type(self)._make(np.asarray(out, dtype=np.int64))

    def sort(self, dim=-1, descending=False, stable=False):
        """``(values, indices)`` sorted along ``dim`` (stable: equal elements keep their
        order); the gradient of a value goes to the element it came from."""
        keepdim_arg(descending, "descending")
        d = _one_dim(dim, self.ndim)
        indices = (_order(self._value, d, descending) if self.ndim else np.zeros((), int))
        return sort_result(self._gather(indices, d), type(self)._make(indices.astype(np.int64)))

    def topk(self, k, dim=-1, largest=True, sorted=True):
        k = int_arg(k, "k")
        keepdim_arg(largest, "largest")
        keepdim_arg(sorted, "sorted")
        d = _one_dim(dim, self.ndim)
        indices = np.take(_order(self._value, d, largest), np.arange(k), axis=d)
        return topk_result(self._gather(indices, d), type(self)._make(indices.astype(np.int64)))

    def _gather(self, indices: np.ndarray, d: int) -> Any:
        """``torch.gather(self, d, indices)`` for concrete ``indices``."""
        if self.ndim == 0:
            return self * 1.0 if self._requires_grad else self
        flat = np.arange(self._value.size).reshape(self.shape)
        return self.reshape(-1)[np.take_along_axis(flat, indices, axis=d)]

    def gather(self, dim, index):
        """``torch.gather``: ``out[i][j] = self[index[i][j]][j]`` for ``dim=0``, ..."""
        d = _one_dim(dim, self.ndim) if self.ndim else _one_dim(dim, 1)
        idx = np.asarray(getattr(index, "_value", index))
        size = self.shape[d] if self.ndim else 1
        bad = idx[(idx < 0) | (idx >= size)]
        if bad.size:  # PyTorch's error; it does not wrap negative indices
            raise RuntimeError(f"index {int(bad.flat[0])} is out of bounds for dimension {d} "
                               f"with size {size}")
        if not self.ndim:  # a 0-d tensor's one element (index 0 of a size-1 dimension)
            return named(self.reshape(idx.shape) * 1, self, "GatherBackward0", (self,))
        flat = np.arange(self._value.size).reshape(self.shape)
        grid = list(np.indices(idx.shape, sparse=True))
        grid[d] = idx
        return watch_indices(named(self.reshape(-1)[flat[tuple(grid)]], self,
                                   "GatherBackward0", (self,)), index)

    def std(self, *args: Any, **kwargs: Any) -> Any:
        """``x.std(dim=None, unbiased=None, keepdim=False, *, correction=None)``, or
        ``x.std(unbiased)`` alone (see :func:`_spread_args`)."""
        return self._spread(ops.std, "Std", *_spread_args(*args, **kwargs))

    def var(self, *args: Any, **kwargs: Any) -> Any:
        """``x.var(dim=None, unbiased=None, keepdim=False, *, correction=None)``, or
        ``x.var(unbiased)`` alone (see :func:`_spread_args`)."""
        return self._spread(ops.var, "Var", *_spread_args(*args, **kwargs))

    @in_float32
    def _spread(self, op: Any, name: str, dim: Any, unbiased: Any, keepdim: bool,
                correction: Any) -> Any:
        keepdim_arg(keepdim)
        if unbiased is not None and type(unbiased) is not bool:
            raise TypeError(f"argument 'unbiased' must be bool, not {type_name(unbiased)}")
        ddof = correction if correction is not None else 0 if unbiased is False else 1
        return named(op(self, _dims(dim, self.ndim), ddof=ddof, keepdims=keepdim), self,
                     f"{name}Backward0", (self,))

    def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
        """``x.norm()``: the 2-norm of all elements (gradient 0 at 0, as PyTorch);
        ``p`` = 1, 2, inf, -inf, 'fro' or another number; ``dim`` an int or a tuple;
        ``p='nuc'`` (or 'fro' over more than two dims) is ``linalg.matrix_norm`` over
        ``dim`` (all dims if None), as ``torch.norm`` dispatches."""
        keepdim_arg(keepdim)
        if isinstance(p, str) and (p != "fro" or not (
                dim is None or isinstance(dim, int) or len(dim) <= 2)):
            return matrix_norm(self, p, tuple(range(self.ndim)) if dim is None else
                               (dim,) if isinstance(dim, int) else dim, keepdim, dtype=dtype)
        x = self.to(dtype) if dtype is not None else self
        axes = _dims(dim, x.ndim) or tuple(range(x.ndim))
        if p in ("fro", 2, 2.0, None):
            flat = dim is None
            if len(axes) > 2 and not flat:  # (numpy's norm takes two axes): those axes last,
                rest = [a for a in range(x.ndim) if a not in axes]  # as one
                result = linalg.norm(x.permute(*rest, *axes).reshape(
                    *(x.shape[a] for a in rest), int(np.prod([x.shape[a] for a in axes]))),
                    None, -1)
                if keepdim:
                    result = result.reshape(tuple(1 if a in axes else x.shape[a]
                                                  for a in range(x.ndim)))
            else:
                result = linalg.norm(x.reshape(-1) if flat else x, None, None if flat else axes,
                                     keepdims=keepdim and not flat)
            if keepdim and dim is None:
                result = result.reshape((1,) * x.ndim)
            return named(result, x, "NormBackward1" if dim is not None else "NormBackward0",
                         (x,))
        magnitude = x.abs()
        if p == np.inf:
            return magnitude.amax(axes, keepdim)
        if p == -np.inf:
            return magnitude.amin(axes, keepdim)
        if p == 1:
            return magnitude.sum(axes, keepdim)
        if p == 0:
            return (magnitude != 0).to(x.dtype).sum(axes, keepdim)
        return (magnitude ** p).sum(axes, keepdim) ** (1.0 / p)

    def logsumexp(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        # PyTorch's dim/keepdim, or numpy's axis/keepdims as sg.logsumexp takes them
        dim = axis if dim is None else dim
        keepdim = keepdim_arg(keepdim) if keepdims is None else keepdims
        return named(ops.logsumexp(self, _dims(dim, self.ndim), keepdims=keepdim), self,
                     "LogsumexpBackward0", (self,))

    def cumsum(self, dim=None, dtype=None, *, axis=None):  # type: ignore[override]
        x = self.to(dtype) if dtype is not None else self
        if x.dtype is dt.bool:  # counted in int64, as PyTorch's (numpy's API: in float64)
            x = x.long()
        if x.dtype is dt.float16:  # PyTorch's sums run in float32, each rounded once (in
            # float16 the error grew with the length: 848 of 1000 elements were off)
            return named(x.float().cumsum(dim, axis=axis).half(), x, "CumsumBackward0")
        if x.ndim == 0 and (dim is not None or axis is not None):  # PyTorch: a 0-d result
            _one_dim(dim if dim is not None else axis, 1)
            return named(x * 1, x, "CumsumBackward0")
        if dim is None and axis is None:  # numpy's: flattened
            return named(_wrapped(shape_ops.cumsum(x), dtype), x, "CumsumBackward0")
        dim = dim if dim is not None else axis
        return named(_wrapped(shape_ops.cumsum(x, _one_dim(dim, x.ndim)), dtype), x,
                     "CumsumBackward0")

    def all(self, dim=None, keepdim=False):
        return self._logical(np.all, dim, keepdim)

    def any(self, dim=None, keepdim=False):
        return self._logical(np.any, dim, keepdim)

    def _logical(self, fn: Any, dim: Any, keepdim: bool) -> Any:
        keepdim_arg(keepdim)
        axes = _dims(dim, self.ndim)
        found = np.asarray(fn(self._value, axis=axes, keepdims=keepdim))
        # PyTorch's any/all of a uint8 tensor are uint8 (of others bool)
        return type(self)._make(found.astype(np.uint8) if self.dtype is dt.uint8 else found)


def _wrapped(result: Any, dtype: Any) -> Any:
    """An integer sum or product asked for in a narrower integer ``dtype`` (``sum(dtype=
    torch.uint8)``): PyTorch accumulates in it, wrapping around; the exact int64 result
    taken modulo the dtype's range is the same number (modular arithmetic)."""
    if dtype is None:
        return result
    want = dt.as_dtype(dtype)
    if want.is_floating_point or want is dt.bool or result.dtype is want:
        return result
    return result.to(want)


def _order(values: np.ndarray, d: int, descending: bool) -> np.ndarray:
    """The stable sorting permutation along ``d``, with PyTorch's NaN: the largest value,
    so last ascending and first descending (``sort(descending=True)``, ``topk``)."""
    if not descending:
        return np.argsort(values, axis=d, kind="stable")
    key = -values.astype(np.float64)
    if values.dtype.kind != "f":
        return np.argsort(key, axis=d, kind="stable")
    return np.lexsort((key, ~np.isnan(values)), axis=d)  # NaNs first, then descending


#: the orders of ``linalg.matrix_norm``
MATRIX_ORDERS = ("fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf)


def matrix_norm(A: Any, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False, *,
                dtype: Any = None) -> Any:
    """``linalg.matrix_norm``: the norm of the matrices over the two dims ``dim``;
    ``ord`` 'fro', 'nuc' (the sum of the singular values), 2 and -2 (the largest and
    smallest: their gradients PyTorch's through ``svdvals``), 1, -1, inf, -inf; PyTorch's
    errors for other orders, dims and integer tensors."""
    if ord not in MATRIX_ORDERS:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    dims = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    if len(dims) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(map(str, dims))}")
    axes = _dims(dims, A.ndim)
    if len(set(axes)) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got {tuple(dims)}")
    x = A.to(dtype) if dtype is not None else A
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"linalg.matrix_norm: Expected a floating point or complex tensor "
                           f"as input. Got {x.dtype.name.capitalize()}: convert it first "
                           f"(A.double())")
    return np.linalg.norm(x, ord, tuple(dims), keepdims=keepdim)


def _spread_args(*args: Any, **kwargs: Any) -> tuple[Any, Any, Any, Any]:
    """``(dim, unbiased, keepdim, correction)`` of ``std``/``var``'s arguments, as
    PyTorch's two overloads take them: one positional bool alone is ``unbiased``
    (``x.std(False)``); a bool ``dim`` anywhere else (``x.std(dim=True)``,
    ``x.std(True, keepdim=True)``) is PyTorch's TypeError (:func:`.method_args.dim_axes`),
    not ``unbiased``."""
    if len(args) == 1 and not kwargs and isinstance(args[0], (bool, np.bool_)):
        return None, args[0], False, None
    return _std_var_args(*args, **kwargs)


def _std_var_args(dim: Any = None, unbiased: Any = None, keepdim: Any = False, *,
                  correction: Any = None) -> tuple[Any, Any, Any, Any]:
    return dim, unbiased, keepdim, correction
