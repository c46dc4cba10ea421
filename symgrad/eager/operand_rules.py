"""The operand rules of a Tensor's arithmetic that PyTorch keeps apart from numpy's: bools
in integer and float arithmetic (``mask + 1`` is int64, ``mask ** True`` a bool,
``mask - 1`` an error) and integer ``//`` and ``%`` in their own dtype, raising at a zero
divisor. Used by :class:`symgrad.eager.tensor.Tensor`'s operators, which set
:data:`Tensor` here when they are defined (this module is imported by that one).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import dtypes as dt
from . import grad_mode
from .host_nodes import no_derivative
from .method_args import unwrap as _unwrap

#: :class:`symgrad.eager.tensor.Tensor`, set by that module
Tensor: Any = None


def floordiv(a: Any, b: Any) -> Any:
    """``a // b`` (:func:`floor_quotient`); of an operand that requires grad, PyTorch's
    result without a derivative (a backward through it raises)."""
    if (_recorded(a) or _recorded(b)) and dt.result_type([a, b]).is_floating_point:
        return _underivable("floor_divide", floor_quotient, a, b)
    return floor_quotient(a, b)


def floor_quotient(a: Any, b: Any) -> Any:
    """``a // b``, rounded down (PyTorch's and numpy's); integers keep their dtype. Its
    gradient is 0 (``div(rounding_mode="floor")``'s in PyTorch). Floats go through numpy's
    ``floor_divide``, as PyTorch computes it (from ``fmod``): ``floor(a / b)`` of the
    rounded quotient gives 10 for ``1.0 // 0.1``, where both give 9."""
    out = dt.result_type([a, b])
    if not out.is_floating_point:
        return Tensor._make(np.floor_divide(*as_integers(a, b, out)))
    return np.floor_divide(a, b)


def remainder(a: Any, b: Any) -> Any:
    """``a % b`` with the sign of ``b`` (PyTorch's ``remainder``, numpy's ``mod``),
    whose gradient is 1 in ``a`` and ``-(a // b)`` in ``b``; numpy's ``remainder`` for
    floats, as :func:`floordiv` (``1.0 % 0.1`` is 0.09999999999999995, not 0).

    A zero result has the sign of ``a``, as PyTorch's (its kernel adds ``b`` to C's
    ``fmod`` only when that is not zero: ``2.0 % -0.5`` is 0.0), where numpy's has that
    of ``b``: there the divisor is ``-b``, which gives the same zero with the sign of
    ``a`` and the same gradients (``a / b`` is then an integer ``k``: ``-floor(k)`` in
    ``b`` either way)."""
    out = dt.result_type([a, b])
    if not out.is_floating_point:
        return Tensor._make(np.mod(*as_integers(a, b, out)))
    if not isinstance(a, Tensor) and _recorded(b):  # ``3.0 % w``: PyTorch's Scalar_Tensor
        return _underivable("remainder", _float_remainder, a, b)  # overload: no derivative
    return _float_remainder(a, b)


def _float_remainder(a: Any, b: Any) -> Any:
    """:func:`remainder` of floating operands."""
    r = np.remainder(a, b)
    v = np.asarray(_unwrap(r))
    flip = (v == 0) & (np.signbit(v) != np.signbit(np.asarray(_unwrap(a))))
    if not flip.any():
        return r
    return np.remainder(a, b * np.where(flip, -1, 1).astype(v.dtype))


def _recorded(t: Any) -> bool:
    return isinstance(t, Tensor) and t._requires_grad and grad_mode.is_grad_enabled()


def _underivable(name: str, fn: Any, a: Any, b: Any) -> Any:
    """``fn(a, b)`` as PyTorch gives an op without a derivative: a result that requires
    grad, of a node (``NotImplemented``) whose backward raises PyTorch's error."""
    with grad_mode.no_grad():
        value = fn(a, b)._value
    return no_derivative(value, tuple(t for t in (a, b) if isinstance(t, Tensor)),
                         "NotImplemented", f"derivative for aten::{name} is not implemented"
                         + (" (PyTorch differentiates a Tensor % a Tensor, not a number % a "
                            "Tensor: use torch.tensor(number) % w)" if name == "remainder"
                            else " (its gradient would be 0: detach() its operands)"))


def as_integers(a: Any, b: Any, out: dt.dtype) -> tuple[np.ndarray, np.ndarray]:
    """Integer operands as arrays of their result dtype ``out`` (``int8 // 3`` is int8); a
    zero divisor raises PyTorch's error (numpy would give 0)."""
    x, y = (np.asarray(_unwrap(v)).astype(out.numpy, copy=False) for v in (a, b))
    if (y == 0).any():
        raise RuntimeError("ZeroDivisionError")
    return x, y


def no_bools(a: Any, b: Any) -> tuple[Any, Any]:
    """A bool tensor in the result's dtype (``mask + 1`` is int64, ``int8 * mask`` int8;
    numpy: float64), a Python bool an int, the lowest category (``int8 * True`` is int8);
    two bools stay bools (``mask + mask`` is logical or, ``*`` and, as in PyTorch)."""
    flags = [type(t) is bool or isinstance(t, Tensor) and t._value.dtype == np.bool_
             for t in (a, b)]
    if flags[0] == flags[1]:  # (no bool, or two)
        return a, b
    kind = dt.result_type([a, b])
    return tuple(int(t) if type(t) is bool else t.to(kind) if f else t
                 for t, f in zip((a, b), flags))


def is_bool(t: Any) -> bool:
    return isinstance(t, Tensor) and t._value.dtype == np.bool_


def bool_power(x: Any, e: Any) -> Any:
    """PyTorch's ``mask ** True`` (the mask) and ``mask ** False`` (all True), bools; a
    bool tensor as the exponent of a bool is its NotImplementedError."""
    if isinstance(e, Tensor):
        raise NotImplementedError('"pow" not implemented for \'Bool\'')
    return x.clone() if e else x == x


def no_bool_sub(a: Any, b: Any) -> tuple[Any, Any]:
    """PyTorch refuses ``-`` with a bool tensor or a Python bool (``mask - 1``, ``x - True``)."""
    bools = [type(t) is bool or isinstance(t, Tensor) and t._value.dtype == np.bool_
             for t in (a, b)]
    if all(bools):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if any(bools):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not "
                           "supported. If you are trying to invert a mask, use the `~` or "
                           "`logical_not()` operator instead.")
    return a, b
