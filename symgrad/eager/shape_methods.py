"""PyTorch's shape Tensor methods: ``diag``, ``diag_embed``, ``diagflat``, ``tile``,
``repeat_interleave``, ``rot90``, ``fliplr``/``flipud``, ``movedim``/``moveaxis``,
``unflatten``, ``tensor_split``, ``hsplit``/``vsplit``/``dsplit``, ``split_with_sizes``,
``narrow_copy``, ``broadcast_to`` and ``take_along_dim``. A mixin of
:class:`~symgrad.eager.tensor.Tensor`; the functions of the same names (``torch.tile``) are
in :mod:`.shape_functions`.

Each is a composite of ops with their own gradients (reshapes, selections, ``where``),
so its gradient and double backward come from those.

    >>> import symgrad as torch
    >>> torch.arange(3).diag_embed(1)
    tensor([[0, 0, 0, 0],
            [0, 0, 1, 0],
            [0, 0, 0, 2],
            [0, 0, 0, 0]])
    >>> torch.arange(4).repeat_interleave(torch.tensor([1, 0, 2, 1]))
    tensor([0, 2, 2, 3])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..numpy_api import functions as ops
from ..numpy_api import shapes as shape_ops
from .method_args import named, new_view, size_arg
from .method_args import one_dim as _one_dim
from .saved_indices import watch_indices


def _ints(value: Any) -> Any:
    """A Python int, or a list of ints, from an int, a sequence or an integer tensor."""
    value = getattr(value, "_value", value)
    if isinstance(value, np.ndarray):
        return int(value) if value.ndim == 0 else [int(v) for v in value]
    return value if isinstance(value, int) else [int(v) for v in value]


class ShapeMethods:
    """See the module docstring."""

    __slots__ = ()

    def diag(self, diagonal: int = 0) -> Any:
        """A 1-D tensor on the ``diagonal``-th diagonal of a square matrix, or the
        ``diagonal``-th diagonal of a matrix (a copy)."""
        if self.ndim == 1:
            return named(self.diag_embed(diagonal), self, "DiagEmbedBackward0", (self,))
        if self.ndim != 2:
            raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {self.ndim}D")
        return self.diagonal(diagonal).clone()

    def diag_embed(self, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Any:
        """The last dim on the ``offset``-th diagonal of new matrices in dims ``dim1``,
        ``dim2`` (zeros elsewhere, selected: an inf stays off the other entries)."""
        n = self.shape[-1] + abs(offset) if self.ndim else 1 + abs(offset)
        x = self.reshape(1) if not self.ndim else self
        pad = [(0, 0)] * (x.ndim - 1) + [(offset, 0) if offset >= 0 else (0, -offset)]
        padded = np.pad(x, pad) if offset else x
        on = np.eye(n, k=offset, dtype=bool)
        zero = np.zeros((), x._value.dtype)
        out = ops.where(on, padded.unsqueeze(-2), zero)
        out_ndim = x.ndim + 1
        d1, d2 = _one_dim(dim1, out_ndim), _one_dim(dim2, out_ndim)
        if d1 == d2:
            raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
        if (d1, d2) != (out_ndim - 2, out_ndim - 1):
            out = out.movedim((out_ndim - 2, out_ndim - 1), (d1, d2))
        return named(out, self, "DiagEmbedBackward0", (self,))

    def diagflat(self, offset: int = 0) -> Any:
        return self.reshape(-1).diag(offset)

    def tile(self, *dims: Any) -> Any:
        reps = size_arg(dims)
        reps = (1,) * (self.ndim - len(reps)) + tuple(reps)
        return self.repeat(*reps)

    def repeat_interleave(self, repeats: Any, dim: int | None = None, *,
                          output_size: int | None = None) -> Any:
        """Each element ``repeats`` times (or ``repeats[i]`` times) along ``dim`` (of the
        flattened tensor for ``dim=None``)."""
        x = self.reshape(-1) if dim is None else self
        d = 0 if dim is None else _one_dim(dim, x.ndim)
        n = x.shape[d] if x.ndim else 1
        counts = _ints(repeats)
        if not isinstance(counts, int) and len(counts) not in (1, n):
            raise RuntimeError("repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {len(counts)} and input.size({d}) = {n}")
        if not isinstance(counts, int) and len(counts) == 1:
            counts = counts[0]
        index = np.repeat(np.arange(n), counts)
        if output_size is not None and output_size != index.size:
            raise RuntimeError(f"allocated size does not match required size: output_size "
                               f"{output_size}, {index.size} needed")
        if not x.ndim:
            x = x.reshape(1)
        return named(x.index_select(d, type(self)._make(index)), self,
                     "RepeatInterleaveBackward0")

    def rot90(self, k: int = 1, dims: Any = (0, 1)) -> Any:
        dims = size_arg(dims)
        if len(dims) != 2:
            raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
        if self.ndim < 2:
            raise RuntimeError(f"expected total dims >= 2, but got total dims = {self.ndim}")
        a, b = (_one_dim(d, self.ndim) for d in dims)
        if a == b:
            raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {a} "
                               f"and dim1 = {b}")
        return named(np.rot90(self, k, (a, b)).clone(), self, "Rot90Backward0", (self,))

    def fliplr(self) -> Any:
        if self.ndim < 2:
            raise RuntimeError("Input must be >= 2-d.")
        return self.flip(1)

    def flipud(self) -> Any:
        if self.ndim < 1:
            raise RuntimeError("Input must be >= 1-d.")
        return self.flip(0)

    def movedim(self, source: Any, destination: Any) -> Any:
        src, dst = _ints(source), _ints(destination)
        src = [src] if isinstance(src, int) else src
        dst = [dst] if isinstance(dst, int) else dst
        if len(src) != len(dst):
            raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} "
                               f"dims) should contain the same number of dims as destination "
                               f"({dst} dims)")
        src = [_one_dim(s, self.ndim) for s in src]
        dst = [_one_dim(s, self.ndim) for s in dst]
        return named(new_view(shape_ops.moveaxis(self, src, dst), self), self, "PermuteBackward0")

    moveaxis = movedim

    def unflatten(self, dim: int, sizes: Any) -> Any:
        d = _one_dim(dim, self.ndim)
        sizes = list(size_arg(sizes) if not isinstance(sizes, int) else (sizes,))
        if sizes.count(-1) > 1:
            raise RuntimeError("unflatten: only one dimension can be inferred")
        if -1 in sizes:
            known = int(np.prod([s for s in sizes if s != -1]))
            sizes[sizes.index(-1)] = self.shape[d] // known if known else 0
        if int(np.prod(sizes)) != self.shape[d]:
            raise RuntimeError(f"unflatten: Provided sizes {sizes} don't multiply up to the "
                               f"size of dim {dim} ({self.shape[d]}) in the input tensor")
        return self.view(*self.shape[:d], *sizes, *self.shape[d + 1:])

    def tensor_split(self, indices_or_sections: Any, dim: int = 0) -> tuple[Any, ...]:
        """Views of ``sections`` near-equal parts (the first ones one longer), or of the
        parts between ``indices``, along ``dim``."""
        d = _one_dim(dim, self.ndim)
        n = self.shape[d]
        split = _ints(indices_or_sections)
        if isinstance(split, int):
            if split <= 0:
                raise RuntimeError(f"number of sections must be larger than 0, got {split}")
            size, extra = divmod(n, split)
            ends = np.cumsum([size + (i < extra) for i in range(split)])
            bounds = [0, *ends.tolist()]
        else:
            bounds = [0, *split, n]
        index = (slice(None),) * d
        return tuple(self[index + (slice(a, b),)] for a, b in zip(bounds, bounds[1:]))

    def _split_along(self, sections: Any, dim: int, name: str, ndim: int) -> tuple[Any, ...]:
        if self.ndim < ndim:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {ndim} "
                               f"dimension, but got a tensor with {self.ndim} dimensions!")
        split = _ints(sections)
        if isinstance(split, int) and (split == 0 or self.shape[dim] % split):
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but "
                               f"the size of the dimension {self.shape[dim]} is not divisible "
                               f"by the split_size {split}!")
        return self.tensor_split(split, dim)

    def hsplit(self, sections: Any) -> tuple[Any, ...]:
        return self._split_along(sections, 0 if self.ndim == 1 else 1, "hsplit", 1)

    def vsplit(self, sections: Any) -> tuple[Any, ...]:
        return self._split_along(sections, 0, "vsplit", 2)

    def dsplit(self, sections: Any) -> tuple[Any, ...]:
        return self._split_along(sections, 2, "dsplit", 3)

    def split_with_sizes(self, split_sizes: Any, dim: int = 0) -> tuple[Any, ...]:
        sizes = _ints(split_sizes)
        d = _one_dim(dim, self.ndim)
        if sum(sizes) != self.shape[d]:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to "
                               f"{self.shape[d]} (input tensor's size at dimension {dim}), "
                               f"but got split_sizes={sizes}")
        return tuple(self.split(sizes, d))

    def narrow_copy(self, dim: int, start: int, length: int) -> Any:
        return self.narrow(dim, start, length).clone()

    def broadcast_to(self, *size: Any) -> Any:  # type: ignore[override]
        return self.expand(*size)

    def take_along_dim(self, indices: Any, dim: int | None = None) -> Any:
        """``self``'s elements at ``indices`` along ``dim`` (of the flattened tensor for
        ``dim=None``), the other dims broadcast. PyTorch's node saves ``indices`` for
        ``dim=None`` (a view of them) and a copy otherwise: so are they watched."""
        index = getattr(indices, "_value", np.asarray(indices))
        if index.dtype != np.int64:
            raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be int64 "
                               f"but got {index.dtype}")
        if dim is None:
            flat = index.reshape(-1)
            flat = np.where(flat < 0, flat + self.numel(), flat)
            return watch_indices(named(self.reshape(-1).gather(0, type(self)._make(flat)),
                                       self, "TakeAlongDimBackward0"), indices)
        d = _one_dim(dim, self.ndim)
        if index.ndim != self.ndim:
            raise RuntimeError("torch.take_along_dim(): input and indices should have the "
                               "same number of dimensions, but got "
                               f"{self.ndim} dimensions for input, and {index.ndim} "
                               "dimensions for indices")
        shape = np.broadcast_shapes(tuple(self.shape[:d]) + (1,) + tuple(self.shape[d + 1:]),
                                    index.shape[:d] + (1,) + index.shape[d + 1:])
        x = self.expand(*shape[:d], self.shape[d], *shape[d + 1:])
        index = np.broadcast_to(index, shape[:d] + (index.shape[d],) + shape[d + 1:])
        index = np.where(index < 0, index + self.shape[d], index)
        return named(x.gather(d, type(self)._make(np.ascontiguousarray(index))), self,
                     "TakeAlongDimBackward0")
