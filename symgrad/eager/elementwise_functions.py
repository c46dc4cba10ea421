"""``torch.*`` functions of the elementwise, comparison, logical and predicate Tensor
methods (:mod:`.elementwise_methods`, :mod:`.methods`) and the ``torch.*_`` in-place
functions PyTorch has: ``torch.isclose(x, y)`` is ``x.isclose(y)``, ``torch.lgamma_(x)``
is ``x.lgamma_()`` (a numpy array or a list is made a tensor first). Re-exported by
:mod:`symgrad`.

    >>> import symgrad as torch
    >>> x = torch.tensor([0.5, 2.0])
    >>> torch.greater(x, 1.0), torch.logical_xor(x > 1, x > 0)
    (tensor([False,  True]), tensor([ True, False]))
    >>> torch.polygamma(1, torch.tensor([1.0]))  # pi**2 / 6
    tensor([1.6449])
"""

from __future__ import annotations

from typing import Any

from ..numpy_api.functions import xlogy as _numpy_xlogy
from .functions import _as_tensor, _method
from .tensor import Tensor

#: ``torch.name(input, *args)`` is ``input.name(*args)``
NAMES = (
    "eq ne lt le gt ge greater greater_equal less less_equal not_equal isclose logical_and "
    "logical_or logical_xor isinf isposinf isneginf isreal signbit is_nonzero is_complex "
    "is_signed is_same_size absolute negative positive multiply subtract sgn frac fix exp2 "
    "erfc lgamma digamma mvlgamma i0 sinc logit hypot logaddexp logaddexp2 copysign "
    "float_power heaviside deg2rad rad2deg nextafter ldexp gcd lcm arccos arcsin arctan "
    "arctan2 arccosh arcsinh arctanh acosh asinh atanh hardshrink prelu clamp_min clamp_max "
    "addcmul addcdiv frexp igamma igammac "
    # in place
    "abs_ acos_ arccos_ asin_ arcsin_ atan_ arctan_ acosh_ arccosh_ asinh_ "
    "arcsinh_ atanh_ arctanh_ ceil_ clamp_ clamp_min_ clamp_max_ clip_ cos_ cosh_ deg2rad_ "
    "rad2deg_ erf_ erfc_ exp_ exp2_ expm1_ fix_ floor_ frac_ gcd_ lcm_ ldexp_ log_ log10_ "
    "log1p_ log2_ logit_ neg_ negative_ i0_ reciprocal_ relu_ round_ rsqrt_ sigmoid_ sin_ "
    "sinc_ sinh_ sqrt_ square_ tan_ tanh_ trunc_ xlogy_ fill_ zero_").split()
for _name in NAMES:
    globals()[_name] = _method(_name)
del _name


def polygamma(n: int, input: Any) -> Any:
    """``torch.polygamma(n, input)``: the ``n``-th derivative of digamma at ``input``."""
    return _as_tensor(input).polygamma(n)


def xlogy(input: Any, other: Any) -> Any:
    """``torch.xlogy``: ``input * log(other)``, 0 where ``input`` is 0 (unless ``other`` is
    nan): ``input.xlogy(other)`` on a Tensor (PyTorch's dtypes), ``symgrad.xlogy`` of the
    numpy API on arrays and traced values."""
    if isinstance(input, Tensor):
        return input.xlogy(other)
    if isinstance(other, Tensor) and not hasattr(input, "_trace"):
        return _as_tensor(input).xlogy(other) if hasattr(input, "shape") else \
            _numpy_xlogy(input, other)
    return _numpy_xlogy(input, other)


__all__ = [*NAMES, "polygamma", "xlogy"]
