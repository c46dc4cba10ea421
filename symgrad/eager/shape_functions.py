"""More torch-level functions (re-exported by :mod:`symgrad`): the Tensor methods of
:mod:`.torch_methods` and :mod:`.linalg_names` as functions (``torch.bmm(a, b)`` is
``a.bmm(b)``), and the
functions of several tensors or of sizes: ``broadcast_tensors``, ``meshgrid``,
``cartesian_prod``, ``tril_indices``/``triu_indices``, ``atleast_1d``/``2d``/``3d``,
``hstack``/``vstack``/``dstack``/``column_stack``/``row_stack``, ``bucketize``/
``searchsorted``, ``trapezoid``/``cumulative_trapezoid``, ``std_mean``/``var_mean``.

    >>> import symgrad as torch
    >>> torch.meshgrid(torch.arange(2), torch.arange(3), indexing="xy")[0]
    tensor([[0, 1],
            [0, 1],
            [0, 1]])
    >>> torch.tril_indices(3, 3)
    tensor([[0, 1, 1, 2, 2, 2],
            [0, 0, 1, 0, 1, 2]])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import dtypes as dt
from . import linalg_names  # noqa: F401 -- sets x.det(), x.svd(), ... on Tensor
from .functions import _as_tensor, _method, cat, stack
from .tensor import Tensor

_METHODS = ("bmm baddbmm addbmm addmv addr ger inner vdot kron dist det "
            "logdet slogdet inverse pinverse matrix_power matrix_exp cholesky cholesky_solve "
            "cholesky_inverse qr svd triangular_solve lu lu_solve "
            "diag diag_embed diagflat tile rot90 fliplr flipud movedim moveaxis "
            "unflatten tensor_split hsplit vsplit dsplit split_with_sizes narrow_copy "
            "broadcast_to take_along_dim masked_fill "
            "nonzero argwhere masked_select masked_scatter index_copy index_reduce put unique "
            "unique_consecutive bincount histc count_nonzero diff kthvalue mode quantile "
            "nanquantile nanmedian nansum aminmax renorm cov corrcoef msort "
            "select_scatter slice_scatter diagonal_scatter as_strided_scatter").split()
for _name in _METHODS:
    globals()[_name] = _method(_name)
del _name


def repeat_interleave(input: Any, repeats: Any = None, dim: int | None = None, *,
                      output_size: int | None = None) -> Any:
    """``input.repeat_interleave(repeats, dim)``; with one int64 tensor ``repeats`` (as
    ``torch.repeat_interleave(repeats)``), each index ``i`` ``repeats[i]`` times."""
    if repeats is None:
        counts = _as_tensor(input)
        index = np.arange(counts.shape[0] if counts.ndim else 1)
        return Tensor._make(np.repeat(index, counts._value.reshape(-1)).astype(np.int64))
    return _as_tensor(input).repeat_interleave(repeats, dim, output_size=output_size)


def broadcast_tensors(*tensors: Any) -> tuple[Any, ...]:
    tensors = tuple(_as_tensor(t) for t in tensors)
    shape = np.broadcast_shapes(*(tuple(t.shape) for t in tensors))
    return tuple(t.expand(*shape) for t in tensors)


def _tensors(tensors: tuple[Any, ...]) -> list[Any]:
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    return [_as_tensor(t) for t in tensors]


def meshgrid(*tensors: Any, indexing: str = "ij") -> tuple[Any, ...]:
    """Grids of 0-d or 1-d tensors: ``indexing="ij"`` (matrix) or ``"xy"`` (Cartesian:
    the first two dims swapped)."""
    ts = _tensors(tensors)
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    if any(t.ndim > 1 for t in ts):
        raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list")
    flat = [t.reshape(-1) for t in ts]
    at = list(range(len(flat)))  # the dim of each tensor's grid that it varies along
    if indexing == "xy" and len(flat) >= 2:
        at[0], at[1] = 1, 0
    shape = [0] * len(flat)
    for t, d in zip(flat, at):
        shape[d] = t.shape[0]
    grids = [t.reshape(*(-1 if d == j else 1 for j in range(len(flat)))).expand(*shape)
             for t, d in zip(flat, at)]
    return tuple(grids)


def cartesian_prod(*tensors: Any) -> Any:
    ts = _tensors(tensors)
    if len(ts) == 1:
        return ts[0].clone()
    return stack([g.reshape(-1) for g in meshgrid(*ts, indexing="ij")], 1)


def _triangle_indices(row: int, col: int, offset: int, lower: bool, dtype: Any) -> Any:
    rows, cols = np.tril_indices(row, offset, col) if lower else np.triu_indices(row, offset, col)
    return Tensor._make(np.stack([rows, cols]).astype(dt.as_dtype(dtype).numpy))


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, **_: Any) -> Any:
    return _triangle_indices(row, col, offset, True, dtype or dt.int64)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, **_: Any) -> Any:
    return _triangle_indices(row, col, offset, False, dtype or dt.int64)


def _atleast(n: int, tensors: tuple[Any, ...]) -> Any:
    one = len(tensors) == 1 and not isinstance(tensors[0], (list, tuple))
    out = []
    for t in _tensors(tensors):
        if t.ndim < n:
            shape = {0: (1,) * n, 1: (1, -1) + (1,) * (n - 2), 2: (*t.shape, 1)}[t.ndim]
            t = t.reshape(*shape)
        out.append(t)
    return out[0] if one else tuple(out)


def atleast_1d(*tensors: Any) -> Any:
    return _atleast(1, tensors)


def atleast_2d(*tensors: Any) -> Any:
    return _atleast(2, tensors)


def atleast_3d(*tensors: Any) -> Any:
    return _atleast(3, tensors)


def hstack(tensors: Sequence[Any]) -> Any:
    ts = atleast_1d(*tensors)
    ts = ts if isinstance(ts, tuple) else (ts,)
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tensors: Sequence[Any]) -> Any:
    ts = atleast_2d(*tensors)
    return cat(ts if isinstance(ts, tuple) else (ts,), 0)


row_stack = vstack


def dstack(tensors: Sequence[Any]) -> Any:
    ts = atleast_3d(*tensors)
    return cat(ts if isinstance(ts, tuple) else (ts,), 2)


def column_stack(tensors: Sequence[Any]) -> Any:
    ts = [_as_tensor(t) for t in tensors]
    ts = [t.reshape(-1, 1) if t.ndim <= 1 else t for t in ts]
    return cat(ts, 1)


def searchsorted(sorted_sequence: Any, input: Any, *, out_int32: bool = False,
                 right: bool = False, side: str | None = None, sorter: Any = None) -> Any:
    """The indices where ``input``'s values would go in the last dim of
    ``sorted_sequence`` (row by row for an n-d one), ``side="left"`` unless ``right``."""
    seq = np.asarray(getattr(sorted_sequence, "_value", sorted_sequence))
    values = np.asarray(getattr(input, "_value", input))
    if side is not None and side not in ("left", "right"):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                           f"got {side}")
    if side == "left" and right:
        raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                           "got side of left while right was True")
    how = "right" if right or side == "right" else "left"
    if sorter is not None:
        seq = np.take_along_axis(seq, np.asarray(getattr(sorter, "_value", sorter)), -1)
    if seq.ndim <= 1:
        out = np.searchsorted(seq, values, side=how)
    else:
        if seq.shape[:-1] != values.shape[:-1]:
            raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension "
                               "or the first N-1 dimensions of boundaries tensor and input "
                               "value tensor must match")
        rows = seq.reshape(-1, seq.shape[-1])
        vals = values.reshape(rows.shape[0], -1)
        out = np.stack([np.searchsorted(r, v, side=how) for r, v in zip(rows, vals)])
        out = out.reshape(values.shape)
    return Tensor._make(np.asarray(out, np.int32 if out_int32 else np.int64))


def bucketize(input: Any, boundaries: Any, *, out_int32: bool = False,
              right: bool = False) -> Any:
    """The bucket of each value: ``boundaries[i-1] < x <= boundaries[i]`` (``<= x <`` for
    ``right``)."""
    if np.ndim(getattr(boundaries, "_value", boundaries)) != 1:
        raise RuntimeError("boundaries tensor must be 1 dimension")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def trapezoid(y: Any, x: Any = None, *, dx: Any = None, dim: int = -1) -> Any:
    """The trapezoidal rule along ``dim``: spacing ``dx`` (1 by default) or sample points
    ``x`` (PyTorch's formulas)."""
    y = _as_tensor(y)
    d = y.ndim + dim if dim < 0 else dim
    n = y.shape[d]
    if x is None:
        if n == 0:
            return y.sum(d)
        spacing = 1.0 if dx is None else dx
        return (y.sum(d) - (y.select(d, 0) + y.select(d, -1)) * 0.5) * spacing
    x = _as_tensor(x)
    if n == 0:
        return y.sum(d)
    steps = x.diff(dim=-1 if x.ndim == 1 else d)
    if x.ndim == 1:
        steps = steps.reshape(*([-1] + [1] * (y.ndim - d - 1)))
    return (steps * (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1))).sum(d) / 2.0


def cumulative_trapezoid(y: Any, x: Any = None, *, dx: Any = None, dim: int = -1) -> Any:
    y = _as_tensor(y)
    d = y.ndim + dim if dim < 0 else dim
    n = y.shape[d]
    pairs = y.narrow(d, 1, max(n - 1, 0)) + y.narrow(d, 0, max(n - 1, 0))
    if x is None:
        return (pairs * ((1.0 if dx is None else dx) / 2.0)).cumsum(d)
    x = _as_tensor(x)
    steps = x.diff(dim=-1 if x.ndim == 1 else d)
    if x.ndim == 1:
        steps = steps.reshape(*([-1] + [1] * (y.ndim - d - 1)))
    return (steps * pairs / 2.0).cumsum(d)


def _moments(input: Any, dim: Any, correction: Any, keepdim: bool, name: str) -> Any:
    x = _as_tensor(input)
    spread = getattr(x, name)(dim, correction=1 if correction is None else correction,
                              keepdim=keepdim)
    return spread, x.mean(dim, keepdim=keepdim)


def std_mean(input: Any, dim: Any = None, *, correction: Any = None,
             keepdim: bool = False) -> tuple[Any, Any]:
    return _moments(input, dim, correction, keepdim, "std")


def var_mean(input: Any, dim: Any = None, *, correction: Any = None,
             keepdim: bool = False) -> tuple[Any, Any]:
    return _moments(input, dim, correction, keepdim, "var")


__all__ = [*_METHODS, "searchsorted", "bucketize", "trapezoid", "cumulative_trapezoid",
           "std_mean", "var_mean", "repeat_interleave", "broadcast_tensors", "meshgrid",
           "cartesian_prod",
           "tril_indices", "triu_indices", "atleast_1d", "atleast_2d", "atleast_3d", "hstack",
           "vstack", "row_stack", "dstack", "column_stack"]
