"""``scatter_reduce``'s ``amax``/``amin`` as an :class:`~symgrad.autograd.Function`:
the value from numpy's ``ufunc.at`` (a selection, so bit-identical to PyTorch's, ±inf
and nan included), and PyTorch's gradient, which is no derivative of a composition:
the cotangent of each output divided by the number ``N`` of elements equal to it
(``self`` counted even when ``include_self=False`` drops its share), given to each
of them. Double backward: the gradient is linear in the cotangent (the masks and
``N`` are data), as PyTorch's."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..numpy_api import functions as ops
from . import extra_methods
from .function import Function
from .tensor import Tensor


def _identity(dtype: np.dtype, reduce: str) -> Any:
    """The start of a maximum (minimum) that drops ``self``: -inf (inf) for floats, the
    dtype's least (greatest) value for integers and booleans."""
    if dtype.kind == "f":
        return -np.inf if reduce == "amax" else np.inf
    if dtype.kind == "b":
        return reduce != "amax"
    info = np.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


class ScatterExtreme(Function):
    """``apply(self_flat, src_flat, positions, include_self, reduce)``: 1-d ``self``,
    the values and their flat positions in ``self``."""

    @staticmethod
    def forward(ctx: Any, own: Tensor, src: Tensor, flat: np.ndarray, include_self: bool,
                reduce: str) -> Tensor:
        mine, given = own._value, np.asarray(src._value, dtype=own._value.dtype)
        ufunc = np.maximum if reduce == "amax" else np.minimum
        result = mine.copy()
        scattered = np.isin(np.arange(mine.size), flat)
        if not include_self:  # the reduction's identity, for integers too
            result[scattered] = _identity(mine.dtype, reduce)
        ufunc.at(result, flat, given)
        if own.requires_grad or src.requires_grad:
            self_hit = (mine == result).astype(np.float64)
            src_hit = (given == result[flat]).astype(np.float64)
            ctx.count = self_hit + np.bincount(flat, weights=src_hit, minlength=mine.size)
            ctx.self_hit, ctx.src_hit, ctx.flat = self_hit, src_hit, flat
            ctx.dropped = scattered if not include_self else None
        return Tensor._make(result)

    @staticmethod
    def backward(ctx: Any, g: Any) -> tuple:
        with np.errstate(divide="ignore", invalid="ignore"):
            share = g / ctx.count  # PyTorch's order: (grad / N) * mask, bit for bit
        own = share * ctx.self_hit
        if ctx.dropped is not None:  # PyTorch's masked_fill: 0 even where share is nan
            own = ops.where(ctx.dropped, np.zeros(()), own)
        return own, share[ctx.flat] * ctx.src_hit, None, None, None


extra_methods._SCATTER_EXTREME[:] = [ScatterExtreme.apply]
