"""``torch.tensordot``, ``torch.block_diag``, ``torch.logspace``, ``torch.linalg.vander``
and ``torch.as_strided`` (re-exported by :mod:`symgrad` and :mod:`.linalg`; ``as_strided``
also a Tensor method), each composed of Tensor methods the
way ATen composes it, so values, dtypes and gradients follow from theirs: ``tensordot``
permutes, reshapes and multiplies matrices; ``vander`` is a ``cumprod`` of repeated
``x``; ``logspace`` is ATen's two-sided ``base ** (start + i * step)``; ``as_strided`` a gather
of the input's elements whose value is a strided view of their memory (as ``diagonal``'s),
so writes through it reach the input (:mod:`.views`).

    >>> import symgrad as torch
    >>> torch.block_diag(torch.tensor([[1, 2]]), torch.tensor(3))
    tensor([[1, 2, 0],
            [0, 0, 3]])
    >>> torch.linalg.vander(torch.tensor([2, 3]))
    tensor([[1, 2],
            [1, 3]])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import dtypes as dt
from . import views
from .complex_tensors import guard_methods
from .functions import _as_tensor, cat
from .method_args import named
from .tensor import Tensor
from .tensor_ops import _new


def _dim_list(dims: Any) -> list[int]:
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    return [int(d) for d in ([dims] if np.ndim(dims) == 0 else dims)]


def tensordot(a: Any, b: Any, dims: Any = 2, out: Any = None) -> Any:
    """``torch.tensordot``: ``dims`` an int (the last ``dims`` of ``a`` with the first of
    ``b``) or two lists of dims; ``a`` permuted and reshaped to a matrix, times ``b``'s."""
    if out is not None:
        raise TypeError("tensordot(out=) is not supported in symgrad: assign the result")
    a, b = _as_tensor(a), _as_tensor(b)
    if a.dtype != b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    if isinstance(dims, (int, np.integer)) or (isinstance(dims, Tensor) and dims.ndim == 0):
        n = int(dims)
        if n < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={n}")
        if n > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={n}")
        da, db = list(range(a.ndim - n, a.ndim)), list(range(n))
    else:
        if len(dims) != 2:
            raise RuntimeError("tensordot expects dims to be a pair of lists of dims")
        da = [d % a.ndim for d in _dim_list(dims[0])]
        db = [d % b.ndim for d in _dim_list(dims[1])]
        if len(da) != len(db):
            raise RuntimeError("both dimension lists should have same length")
    for i, j in zip(da, db):
        if a.shape[i] != b.shape[j]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[i]} in dim {i} and second has size {b.shape[j]} "
                               f"in dim {j}")
    if not a.dtype.is_floating_point:  # (no gradient: numpy's exact, wrapping products)
        return Tensor._make(np.tensordot(a._value, b._value, (da, db)).astype(a.dtype.numpy))
    fa = [d for d in range(a.ndim) if d not in da]
    fb = [d for d in range(b.ndim) if d not in db]
    k = math.prod(a.shape[d] for d in da)
    left = a.permute(*fa, *da).reshape(math.prod(a.shape[d] for d in fa), k)
    right = b.permute(*db, *fb).reshape(k, math.prod(b.shape[d] for d in fb))
    out_shape = [a.shape[d] for d in fa] + [b.shape[d] for d in fb]
    return left.mm(right).reshape(*out_shape)


def block_diag(*tensors: Any) -> Any:
    """``torch.block_diag``: the tensors (0-d as 1x1, 1-d as one row, 2-d as they are)
    on the diagonal of a matrix of zeros, in their promoted dtype."""
    ts = [_as_tensor(t) for t in tensors]
    for k, t in enumerate(ts):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {k} has {t.ndim} dimensions")
    kind = dt.result_type(ts) if ts else dt.DEFAULT
    blocks = [t.reshape(1, -1) if t.ndim < 2 else t for t in ts]
    width = sum(m.shape[1] for m in blocks)
    if not blocks:
        return Tensor._make(np.zeros((1, 0), kind.numpy))
    rows, left = [], 0
    for m in blocks:
        r, c = m.shape
        zeros = (Tensor._make(np.zeros((r, left), kind.numpy)), m.to(kind),
                 Tensor._make(np.zeros((r, width - left - c), kind.numpy)))
        rows.append(cat(zeros, 1))
        left += c
    return named(cat(rows, 0), ts[0], "BlockDiagBackward0", tuple(ts))


def logspace(start: float, end: float, steps: int, base: float = 10.0, *, dtype: Any = None,
             device: Any = None, requires_grad: bool = False, **_: Any) -> Tensor:
    """``torch.logspace``: ``base ** (start + i * step)`` for the first half and
    ``base ** (end - (steps - 1 - i) * step)`` for the rest (ATen's, so that both ends are
    exact), computed in float64 and cast to ``dtype`` (integers truncate, as PyTorch's)."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    i = np.arange(steps, dtype=np.float64)
    step = (end - start) / (steps - 1) if steps > 1 else 0.0
    half = steps // 2
    exponent = np.where(i < half, start + step * i, end - step * (steps - 1 - i))
    values = np.power(float(base), exponent)
    return _new(values, dtype, requires_grad, device, dt.DEFAULT)


def vander(x: Any, N: int | None = None) -> Any:
    """``torch.linalg.vander``: ``[1, x, x**2, ..., x**(N-1)]`` along a new last dim, as
    ATen's ``cumprod`` of ``x`` repeated (integers as int64, as its ``cumprod``)."""
    x = _as_tensor(x)
    if x.ndim == 0:
        raise RuntimeError("linalg.vander: Expected a tensor with at least one dimension, "
                           "but got a zero-dimensional tensor")
    n = x.shape[-1] if N is None else int(N)
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    column = x.unsqueeze(-1)
    powers = cat([column] * (n - 1), -1).cumprod(-1)
    ones = Tensor._make(np.ones(tuple(x.shape) + (1,), powers.dtype.numpy))
    return cat([ones, powers], -1)


def as_strided(input: Any, size: Any, stride: Any, storage_offset: int | None = None) -> Any:
    """``torch.as_strided``: element ``i`` of the result is the storage's element
    ``storage_offset + sum(i_k * stride_k)`` (``storage_offset`` by default the input's).
    The storage is the input's root tensor (:mod:`.views`), which must be C-contiguous,
    and every element reached must be one of the input's (else a clear error, not a guess:
    PyTorch may reach storage outside a view). A view: writes through it reach the input;
    overlapping elements add their gradients."""
    x = _as_tensor(input)
    size, stride = [int(n) for n in size], [int(n) for n in stride]
    r, own, places = views.strided_places(x, size, stride, storage_offset, "as_strided")
    index = places.reshape(-1)
    item, offset = x._value.itemsize, int(index[0]) if index.size else 0  # (index 0's place)
    order = np.argsort(own, kind="stable")
    k = np.minimum(np.searchsorted(own[order], index), max(own.size - 1, 0))
    if index.size and not (own.size and (own[order][k] == index).all()):
        raise NotImplementedError("as_strided reaching storage outside the input tensor "
                                  "(another part of its base): call it on the base")
    out = named(x.reshape(-1)[order[k]].reshape(*size), x, "AsStridedBackward0", (x,))
    if index.size:
        out._value = np.lib.stride_tricks.as_strided(
            r.reshape(-1)[offset:], tuple(size), tuple(s * item for s in stride),
            writeable=r.flags.writeable)
        views.note((x,), out)
    return out


Tensor.as_strided = as_strided  # (a method too, as PyTorch's)
guard_methods(Tensor)

__all__ = ["as_strided", "block_diag", "logspace", "tensordot"]
