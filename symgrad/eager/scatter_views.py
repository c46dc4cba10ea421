"""PyTorch's ``*_scatter`` ops: a copy of ``input`` with the elements of one of its views
replaced by ``src``: ``select_scatter``, ``slice_scatter``, ``diagonal_scatter`` and
``as_strided_scatter``. A mixin of :class:`~symgrad.eager.tensor.Tensor`; the functions
of the same names (``torch.select_scatter``) are in :mod:`.functions`.

The view's elements are found by applying the view itself (``select``, slicing,
``diagonal``: the same checks and errors) to a tensor of positions; the result is
``where(written, src[source], input)``, so ``input``'s gradient is the cotangent with the
view's elements zeroed and ``src``'s the cotangent's view, as PyTorch's, and both are
again differentiable. ``src`` must have the view's shape (no broadcasting) and is cast to
``input``'s dtype, as PyTorch's ``copy_``. ``as_strided_scatter`` addresses ``input``'s
storage (its root tensor, as ``as_strided``); a view whose elements overlap is refused
(PyTorch raises for some and writes others in an unspecified order), and so is the
gradient of a non-contiguous ``input`` (PyTorch asserts a contiguous one).

    >>> import symgrad as torch
    >>> torch.zeros(2, 3).select_scatter(torch.ones(3), 0, 1)
    tensor([[0., 0., 0.],
            [1., 1., 1.]])
    >>> torch.diagonal_scatter(torch.zeros(2, 2), torch.tensor([1.0, 2.0]))
    tensor([[1., 0.],
            [0., 2.]])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..numpy_api import functions as ops
from . import dtypes as dt
from . import grad_mode, views
from .method_args import named
from .method_args import one_dim as _one_dim


class ScatterViewMethods:
    """See the module docstring."""

    __slots__ = ()

    def _positions(self) -> Any:
        """A tensor of ``self``'s shape holding each element's flat (C order) position."""
        return self._make(np.arange(math.prod(self.shape), dtype=np.int64).reshape(self.shape))

    def select_scatter(self, src: Any, dim: int, index: int) -> Any:
        """``self`` with ``self.select(dim, index)`` replaced by ``src``."""
        return _scatter(self, src, self._positions().select(dim, index), "SelectScatter")

    def slice_scatter(self, src: Any, dim: int = 0, start: int | None = None,
                      end: int | None = None, step: int = 1) -> Any:
        """``self`` with the slice ``start:end:step`` of dimension ``dim`` replaced by ``src``."""
        if step <= 0:
            raise RuntimeError("slice step must be positive")
        d = _one_dim(dim, self.ndim)
        place = self._positions()[(slice(None),) * d + (slice(start, end, step),)]
        return _scatter(self, src, place, "SliceScatter")

    def diagonal_scatter(self, src: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:
        """``self`` with ``self.diagonal(offset, dim1, dim2)`` replaced by ``src``."""
        place = self._positions().diagonal(offset, dim1, dim2)
        return _scatter(self, src, place, "DiagonalScatter")

    def as_strided_scatter(self, src: Any, size: Any, stride: Any,
                           storage_offset: int | None = None) -> Any:
        """``self`` with the elements of ``self.as_strided(size, stride, storage_offset)``
        replaced by ``src``, as PyTorch's (which writes into a clone of ``self``'s whole
        storage): element ``i`` of ``src`` goes to storage position ``storage_offset +
        sum(i_k * stride_k)`` (``storage_offset`` by default ``self``'s), the storage being
        ``self``'s root (:mod:`.views`); positions outside ``self`` are not seen."""
        _, own, memory = views.strided_places(self, size, stride, storage_offset,
                                              "as_strided_scatter")
        if np.unique(own).size != own.size or np.unique(memory).size != memory.size:
            raise RuntimeError("as_strided_scatter: more than one element of the input or of "
                               "the view refers to a single memory location, which PyTorch "
                               "writes in an unspecified order (or refuses): use tensors "
                               "without overlap (.contiguous())")
        if (grad_mode.is_grad_enabled() and (self.requires_grad or getattr(
                src, "requires_grad", False)) and not np.array_equal(own, np.arange(own.size))):
            raise NotImplementedError("the gradient of as_strided_scatter of a tensor that is "
                                      "not contiguous (PyTorch requires a contiguous one): "
                                      "call it on x.contiguous()")
        order = np.argsort(own, kind="stable")
        k = np.minimum(np.searchsorted(own[order], memory), max(own.size - 1, 0))
        found = own[order][k] == memory if own.size else np.zeros(memory.shape, bool)
        place = self._make(np.where(found, order[k], -1))  # -1: a place outside self
        return _scatter(self, src, place, "AsStridedScatter")


def _scatter(x: Any, src: Any, place: Any, name: str) -> Any:
    """``x`` with the elements at flat positions ``place`` (an int64 tensor of the view's
    shape; -1 for an element written outside ``x``) replaced by ``src``."""
    src = src if hasattr(src, "_value") else x._make(np.asarray(src))
    if tuple(src.shape) != tuple(place.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size "
                           f"= {list(src.shape)}, slice size = {list(place.shape)}")
    src = src.to(x.dtype)
    n = math.prod(x.shape)
    source = np.zeros(n, np.int64)  # the element of src each written position takes
    written = np.zeros(n, bool)
    positions = place._value.reshape(-1)
    kept = positions >= 0
    source[positions[kept]] = np.arange(positions.size)[kept]
    written[positions[kept]] = True
    if not written.any():
        return named(x.clone(), x, f"{name}Backward0", (x, src))
    if x.dtype is dt.bool:  # (a where of bools is numpy's float64)
        return _scatter(x.byte(), src.byte(), place, name).bool()
    taken = src.reshape(-1)[x._make(source)]
    result = ops.where(written.reshape(x.shape), taken.reshape(x.shape), x)
    return named(result, x, f"{name}Backward0", (x, src))
