"""The values of PyTorch's fused CPU kernels, with the gradients of their formulas.

PyTorch's vectorized CPU kernels of ``lerp`` and ``addcmul`` (the CPU capabilities AVX2
and AVX-512, which PyTorch picks on any x86 machine with FMA, and ARM's NEON) round once
where the formula rounds twice: ``lerp`` is ``fma(w, end - start, start)`` for
``|w| < 0.5``, else ``fma(w - 1, end - start, end)``; ``addcmul`` is
``fma(value * t1, t2, self)``. ``addcdiv`` is ``self + (value * t1) / t2``, as its
formula (no fused step). Here the value is computed so (:func:`.bf16.fma`, exact) and
the gradient is the formula's, written as Tensor operations: the result is
``value - (plain.detach() - plain)`` (:func:`with_value`; ``plain`` built only when the
operation is recorded), whose second term is +0.0
wherever ``plain`` is finite, and ``v - (+0.0)`` is ``v``, -0.0 included. float32 and
float64 (bfloat16 and float16 tensors compute in float32: :func:`.bf16.in_float32`).
PyTorch's ``DEFAULT`` capability (``ATEN_CPU_CAPABILITY=default``, or a CPU without
AVX2) computes the formulas with two roundings: its values differ from these there.
float16 ``log_softmax`` (:func:`half_log_softmax`) rounds its sum and log to float16.

    >>> import symgrad as torch
    >>> a = torch.tensor([0.1, 0.7], dtype=torch.float32)
    >>> torch.lerp(a, torch.tensor([0.3, -0.2], dtype=torch.float32), 0.7)
    tensor([0.2400, 0.0700], dtype=torch.float32)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..numpy_api import functions as ops
from . import dtypes as dt
from . import grad_mode
from .bf16 import fma

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _arrays(*operands: Any) -> list[np.ndarray] | None:
    """The operands' values in their common dtype, if that is float32 or float64
    (numbers take the tensors' dtype, as PyTorch's scalars do); else None."""
    kind = dt.result_type(list(operands))
    if kind.numpy not in _FLOATS:
        return None
    return [np.asarray(o._value if hasattr(o, "_value") else o).astype(kind.numpy, copy=False)
            for o in operands]


def _records(*operands: Any) -> bool:
    return grad_mode.is_grad_enabled() and any(
        getattr(o, "_requires_grad", False) for o in operands)


def with_value(value: np.ndarray, formula: Callable[[], Any], like: Any,
               records: bool) -> Any:
    """A Tensor of ``value`` (the fused kernel's) whose gradient is that of ``formula()``
    (the same numbers up to a rounding; built only if ``records``); the formula itself
    where an element of it is not finite (``inf - inf`` would be NaN)."""
    exact = type(like)._make(value)
    if not records:
        return exact
    plain = formula()
    finite = np.isfinite(plain._value)
    result = exact - (plain.detach() - plain)
    return result if finite.all() else ops.where(finite, result, plain)


def lerp(start: Any, end: Any, weight: Any, formula: Callable[[], Any]) -> Any:
    """``start.lerp(end, weight)`` with PyTorch's value; ``formula()`` builds the Tensor of
    its formula (for its gradient)."""
    arrays = _arrays(start, end, weight)
    if arrays is None:
        return formula()
    s, e, w = arrays
    with np.errstate(all="ignore"):
        diff = e - s
        if w.ndim == 0:
            value = fma(s, w, diff) if abs(w) < 0.5 else fma(e, w - w.dtype.type(1), diff)
        else:
            s, e, diff, w = np.broadcast_arrays(s, e, diff, w)
            small = np.abs(w) < 0.5
            value = np.where(small, fma(s, w, diff), fma(e, w - w.dtype.type(1), diff))
    return with_value(_full(value, s, e, diff), formula, start, _records(start, end, weight))


def addcmul(self: Any, tensor1: Any, tensor2: Any, value: Any,
            formula: Callable[[], Any]) -> Any:
    """``self.addcmul(tensor1, tensor2, value=value)`` with PyTorch's value."""
    arrays = _arrays(self, tensor1, tensor2)
    if arrays is None:
        return formula()
    a, t1, t2 = arrays
    with np.errstate(all="ignore"):
        fused = fma(a, t1 * t1.dtype.type(value) if value != 1 else t1, t2)
    return with_value(_full(fused, a, t1, t2), formula, self, _records(self, tensor1, tensor2))


def _full(value: np.ndarray, *operands: np.ndarray) -> np.ndarray:
    """``value`` in the operands' broadcast shape, an array of its own."""
    shape = np.broadcast_shapes(*(o.shape for o in operands))
    if value.shape == shape and value.flags.writeable and value.flags.owndata:
        return value
    return np.broadcast_to(value, shape).copy()


def half_log_softmax(x: Any, axis: int) -> Any:
    """``x.log_softmax(axis)`` of a float16 tensor with PyTorch's CPU value: computed in
    float32 and rounded once, except that along the last dimension (its
    ``_vec_log_softmax_lastdim``) the sum of the exponentials is stored in
    float16, and its log too, before ``x - max - log(sum)`` (all of it in float32 left 6% of
    the elements an ulp off). The gradient is the float32 log_softmax's, rounded: PyTorch's
    is ``g - exp(y)·sum(g)`` of the float16 ``y``, so 1 to 2 float16 ulps apart at times."""
    v = x._value.astype(np.float32)
    with np.errstate(all="ignore"):
        top = v.max(axis, keepdims=True)
        total = np.exp(v - top).sum(axis, keepdims=True, dtype=np.float32)
        if axis == v.ndim - 1:
            total = total.astype(np.float16).astype(np.float32)
            lse = np.log(total).astype(np.float16).astype(np.float32)
        else:
            lse = np.log(total)
        value = (v - top - lse).astype(np.float16)
    return with_value(value, lambda: x.float().log_softmax(axis).half(), x, _records(x))
