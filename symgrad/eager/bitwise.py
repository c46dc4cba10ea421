"""PyTorch's bitwise operators on Tensors: ``& | ^ ~ << >>`` and ``&= |= ^= <<= >>=``.

They take integer and bool tensors (and Python ints and bools) and compute, in the
dtype of PyTorch's promotion (:func:`.dtypes.result_type`), with numpy's ufuncs on the
stored arrays: exact at every width (no float64 on the way), integers wrap as
PyTorch's, and shifts by a negative count or by the width or more give PyTorch's
results (0 to the left; 0 or -1, the sign, to the right), which are numpy's. On bools
``& | ^ ~`` are logical (a bool result); a bool shift, as PyTorch's, is an int64 one
only next to a Python int. Float operands are refused with PyTorch's errors. The
results are integers or bools: not differentiable, as in PyTorch.

    >>> import symgrad as torch
    >>> x = torch.tensor([5, 6], dtype=torch.int8)
    >>> (x & 3, x << 4, 3 & torch.tensor([True, False]))
    (tensor([1, 2], dtype=torch.int8), tensor([80, 96], dtype=torch.int8), tensor([1, 0]))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import dtypes as dt

_UFUNCS = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
           "lshift": np.left_shift, "rshift": np.right_shift}
_TORCH_NAMES = {"and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
                "lshift": "lshift", "rshift": "rshift"}
_SCALAR_TYPES = {"float64": "Double", "float32": "Float", "float16": "Half",
                 "bfloat16": "BFloat16", "bool": "Bool"}  # PyTorch's names in its errors


def _operand(x: Any) -> Any:
    """A Tensor's array, a Python number as itself (a float to be refused as PyTorch
    refuses it); anything else None."""
    value = getattr(x, "_value", None)
    if isinstance(value, np.ndarray):
        return value
    if isinstance(x, (int, float, np.integer, np.floating, np.bool_)):
        return x
    return None


def binary(a: Any, b: Any, op: str) -> Any:
    """``a op b`` as PyTorch computes it, or NotImplemented for an operand that is no
    Tensor nor Python int (Python then tries the other operand's method)."""
    values = [_operand(a), _operand(b)]
    if any(v is None for v in values):
        return NotImplemented
    out = dt.result_type([a, b])
    if out.is_floating_point or (out is dt.bool and op in ("lshift", "rshift")):
        raise NotImplementedError(f'"{_TORCH_NAMES[op]}_cpu" not implemented for '
                                  f"'{_SCALAR_TYPES.get(out.name, out.name)}'")
    args = [np.asarray(v).astype(out.numpy, copy=False) for v in values]
    tensor = type(a) if hasattr(a, "_make") else type(b)  # (no import of .tensor: a cycle)
    return tensor._make(np.asarray(_UFUNCS[op](*args)))


def invert(a: Any) -> Any:
    """``~a``: logical not of a bool tensor, bitwise not of an integer one."""
    if a.dtype.is_floating_point:
        raise TypeError("~ (operator.invert) is only implemented on integer and "
                        "Boolean-type tensors")
    return type(a)._make(np.asarray(np.invert(a._value)))


class BitwiseMethods:
    """The bitwise operators of :class:`~symgrad.eager.tensor.Tensor` (module docstring);
    a base before numpy's and the traced operators, which hold integers as floats."""

    __slots__ = ()

    def __and__(self, o): return binary(self, o, "and")
    def __rand__(self, o): return binary(o, self, "and")
    def __or__(self, o): return binary(self, o, "or")
    def __ror__(self, o): return binary(o, self, "or")
    def __xor__(self, o): return binary(self, o, "xor")
    def __rxor__(self, o): return binary(o, self, "xor")
    def __lshift__(self, o): return binary(self, o, "lshift")
    def __rlshift__(self, o): return binary(o, self, "lshift")
    def __rshift__(self, o): return binary(self, o, "rshift")
    def __rrshift__(self, o): return binary(o, self, "rshift")
    def __invert__(self): return invert(self)

    def _bitwise_inplace(self, o: Any, op: str) -> Any:
        """``x &= y`` and friends: the result written into ``x``, whose shape and
        category it must have (PyTorch's checks: ``int8 &= int64 tensor`` wraps into
        int8, ``bool &= 1`` is refused)."""
        result = binary(self, o, op)
        if result is NotImplemented:
            return NotImplemented
        return self._inplace(lambda a, b: result._value, None)

    def __iand__(self, o): return self._bitwise_inplace(o, "and")
    def __ior__(self, o): return self._bitwise_inplace(o, "or")
    def __ixor__(self, o): return self._bitwise_inplace(o, "xor")
    def __ilshift__(self, o): return self._bitwise_inplace(o, "lshift")
    def __irshift__(self, o): return self._bitwise_inplace(o, "rshift")
