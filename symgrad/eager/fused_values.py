"""The values of PyTorch's fused CPU kernels, with the gradients of their formulas.

PyTorch's vectorized CPU kernels of ``lerp`` and ``addcmul`` (the CPU capabilities AVX2
and AVX-512, which PyTorch picks on any x86 machine with FMA, and ARM's NEON) round once
where the formula rounds twice: ``lerp`` is ``fma(w, end - start, start)`` for
``|w| < 0.5``, else ``fma(w - 1, end - start, end)``; ``addcmul`` is
``fma(value * t1, t2, self)``. ``addcdiv`` is ``self + (value * t1) / t2``, as its
formula (no fused step). Here the value is computed so (:func:`.bf16.fma`, exact) and
the gradient is the formula's, written as Tensor operations: the result is
``value - (plain.detach() - plain)`` (:func:`with_value`), whose second term is +0.0
wherever ``plain`` is finite, and ``v - (+0.0)`` is ``v``, -0.0 included. float32 and
float64 (bfloat16 and float16 tensors compute in float32: :func:`.bf16.in_float32`).
PyTorch's ``DEFAULT`` capability (``ATEN_CPU_CAPABILITY=default``, or a CPU without
AVX2) computes the formulas with two roundings: its values differ from these there.

    >>> import symgrad as torch
    >>> a = torch.tensor([0.1, 0.7], dtype=torch.float32)
    >>> torch.lerp(a, torch.tensor([0.3, -0.2], dtype=torch.float32), 0.7)
    tensor([0.2400, 0.0700])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..numpy_api import functions as ops
from . import dtypes as dt
from .bf16 import fma

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _arrays(*operands: Any) -> list[np.ndarray] | None:
    """The operands' values broadcast in their common dtype, if that is float32 or
    float64 (numbers take the tensors' dtype, as PyTorch's scalars do); else None."""
    kind = dt.result_type(list(operands))
    if kind.numpy not in _FLOATS:
        return None
    values = [np.asarray(o._value if hasattr(o, "_value") else o).astype(kind.numpy)
              for o in operands]
    return list(np.broadcast_arrays(*values))


def with_value(value: np.ndarray, plain: Any) -> Any:
    """A Tensor of ``value`` (the fused kernel's) whose gradient is ``plain``'s (the
    formula's, the same numbers up to a rounding); ``plain`` itself where an element of
    it is not finite (``inf - inf`` would be NaN)."""
    exact = type(plain)._make(np.asarray(value, plain._value.dtype))
    if not plain.requires_grad:
        return exact
    finite = np.isfinite(plain._value)
    result = exact - (plain.detach() - plain)
    return result if finite.all() else ops.where(finite, result, plain)


def lerp(start: Any, end: Any, weight: Any, plain: Any) -> Any:
    """``start.lerp(end, weight)`` with PyTorch's value; ``plain`` is the formula's Tensor."""
    arrays = _arrays(start, end, weight)
    if arrays is None:
        return plain
    s, e, w = arrays
    with np.errstate(all="ignore"):
        diff = e - s
        small = np.abs(w) < 0.5
        value = np.where(small, fma(s, w, diff), fma(e, w - w.dtype.type(1), diff))
    return with_value(value.reshape(plain.shape), plain)


def addcmul(self: Any, tensor1: Any, tensor2: Any, value: Any, plain: Any) -> Any:
    """``self.addcmul(tensor1, tensor2, value=value)`` with PyTorch's value."""
    arrays = _arrays(self, tensor1, tensor2)
    if arrays is None:
        return plain
    a, t1, t2 = arrays
    with np.errstate(all="ignore"):
        fused = fma(a, t1 * t1.dtype.type(value) if value != 1 else t1, t2)
    return with_value(fused.reshape(plain.shape), plain)
