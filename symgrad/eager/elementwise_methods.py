"""PyTorch's elementwise, comparison, logical and predicate Tensor methods that are
not numpy's: ``isclose``, ``logical_and``, ``isinf``, ``signbit``, ``frac``, ``lgamma``,
``logit``, ``copysign``, ``float_power``, ``ldexp``, ``gcd``, the aliases (``arcsinh``,
``greater``, ``multiply``, ``absolute``, ...) and the in-place forms (``x.lgamma_()``,
``x.eq_(y)``). A mixin of :class:`~symgrad.eager.tensor.Tensor`; the functions of the
same names (``torch.isclose``) are in :mod:`.elementwise_functions`.

Each is a composition of the primitives (``lgamma`` is the ``gammaln`` primitive,
``logit`` a ``log`` of a quotient), so gradients come from the core. Dtypes are
PyTorch's: comparisons, logical ops and predicates give bool tensors; the special
functions make integers the default float; ``float_power`` computes in float64;
``gcd``/``lcm`` take integers only. ``heaviside``, ``nextafter``, ``gcd`` and ``lcm``
have no gradient in PyTorch: their results do not require grad here.

    >>> import symgrad as torch
    >>> x = torch.tensor([-1.5, 0.0, 2.5])
    >>> x.frac(), x.signbit(), x.isclose(x + 1e-9)
    (tensor([-0.5000,  0.0000,  0.5000]), tensor([ True, False, False]), tensor([True, True, True]))
    >>> torch.tensor([4, 6]).gcd(torch.tensor([6, 9]))
    tensor([2, 3])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..numpy_api import functions as ops
from ..numpy_api.functions import xlogy as _xlogy
from ..prims import special as S
from ..prims import special_functions as SF
from . import dtypes as dt
from . import fused_values
from .bf16 import half_in_float32 as _half_in_float32
from .bf16 import in_float32
from .method_args import named, return_type
from .more_methods import _method_on
from .select_methods import no_gradient_at_nan

frexp_result = return_type("frexp", ("mantissa", "exponent"))


def _values(x: Any) -> Any:
    return getattr(x, "_value", x)


def _floating(self: Any, name: str) -> Any:
    """``self`` as a float tensor for a special function: integers and bools in the
    default float dtype, as PyTorch computes them."""
    return self if self.dtype.is_floating_point else self.to(dt.DEFAULT)


def _only(self: Any, name: str, floating: bool) -> None:
    """PyTorch's refusal of a dtype its kernel does not have."""
    if self.dtype.is_floating_point != floating or self.dtype is dt.bool:
        raise RuntimeError(f'"{name}_cpu" not implemented for \'{_type_name(self.dtype)}\'')


def _floats(self: Any, other: Any, name: str | None = None) -> tuple[Any, Any]:
    """Operands of a floating binary op with the integer and bool tensors among them in the
    result's dtype: ``float32`` with an int64 or bool tensor is float32 in PyTorch (numpy's
    API would compute them in float64). ``name``: an op PyTorch refuses on integers."""
    kind = dt.result_type([self, other])
    if name is not None and not kind.is_floating_point:
        raise NotImplementedError(f'"{name}_cpu" not implemented for \'{_type_name(kind)}\'')
    kind = kind if kind.is_floating_point else dt.DEFAULT
    return tuple(t.to(kind) if hasattr(t, "_value") and not t.dtype.is_floating_point else t
                 for t in (self, other))


def _type_name(d: dt.dtype) -> str:
    return dt.TYPE_NAMES[d.name]


class ElementwiseMethods:
    """See the module docstring."""

    __slots__ = ()

    # -- aliases (PyTorch's and numpy's spellings of existing methods) --------------
    def absolute(self): return self.abs()
    def negative(self): return self.neg()
    def multiply(self, other): return self.mul(other)
    def subtract(self, other, alpha=1): return self.sub(other, alpha)
    def divide(self, other, rounding_mode=None): return self.div(other, rounding_mode)
    def sgn(self): return self.sign()  # (the sign of a real tensor)
    def fix(self): return self.trunc()
    def arccos(self): return self.acos()
    def arcsin(self): return self.asin()
    def arctan(self): return self.atan()
    def arctan2(self, other): return self.atan2(other)
    def atan2(self, other): return np.arctan2(*_floats(self, other))
    def asinh(self): return np.arcsinh(self)
    def acosh(self): return np.arccosh(self)
    def atanh(self): return np.arctanh(self)
    arcsinh, arccosh, arctanh = asinh, acosh, atanh
    def greater(self, other): return self > other
    def greater_equal(self, other): return self >= other
    def less(self, other): return self < other
    def less_equal(self, other): return self <= other
    def not_equal(self, other): return self != other

    def positive(self):
        if self.dtype is dt.bool:
            raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
        return self

    # -- predicates: bool tensors (or Python values) --------------------------------
    def isinf(self): return self._make(np.isinf(self._value))
    def isposinf(self): return self._make(np.isposinf(self._value))
    def isneginf(self): return self._make(np.isneginf(self._value))
    def isreal(self): return self._make(np.ones(self.shape, np.bool_))  # (real tensors only)

    def signbit(self):
        """True where the sign bit is set: -0.0 and negative values (and -nan)."""
        v = self._value
        if self.dtype.is_floating_point:
            return self._make(np.signbit(v.astype(np.float32) if dt.is_bfloat16(v) else v))
        return self._make(v < 0 if v.dtype.kind == "i" else np.zeros(v.shape, np.bool_))

    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        """``|self - other| <= atol + rtol * |other|``, infinities equal to themselves."""
        if hasattr(other, "dtype") and isinstance(other.dtype, dt.dtype) \
                and other.dtype is not self.dtype:
            raise RuntimeError(f"{self.dtype} did not match {other.dtype}")
        a, b = self._value, _values(other)
        if self.dtype is dt.bool:
            return self._make(np.broadcast_to(a == b, np.broadcast_shapes(a.shape, np.shape(b)))
                              .copy())
        if dt.is_bfloat16(a):
            a, b = a.astype(np.float32), np.asarray(b).astype(np.float32)
        with np.errstate(all="ignore"):
            return self._make(np.asarray(np.isclose(a, b, rtol, atol, equal_nan)))

    def is_nonzero(self) -> bool:
        if self._value.size != 1:
            raise RuntimeError("Boolean value of Tensor with no values is ambiguous"
                               if self._value.size == 0 else
                               "Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._value.reshape(()) != 0)

    def is_signed(self) -> bool: return self.dtype not in (dt.uint8, dt.bool)
    def is_same_size(self, other) -> bool: return self.shape == other.shape

    # -- logical ops: bool tensors of the operands' truth ---------------------------
    def logical_and(self, other): return self._make(np.logical_and(self._value, _values(other)))
    def logical_or(self, other): return self._make(np.logical_or(self._value, _values(other)))
    def logical_xor(self, other): return self._make(np.logical_xor(self._value, _values(other)))

    # -- math --------------------------------------------------------------------------
    def frac(self):
        """``self - trunc(self)`` (the sign of ``self``); its gradient is 1."""
        _only(self, "frac", floating=True)
        return named(self - self.trunc(), self, "FracBackward0", (self,))

    def exp2(self): return np.exp2(self)
    def erfc(self): return named(S.erfc(_floating(self, "erfc")), self, "ErfcBackward0", (self,))
    def lgamma(self): return named(SF.gammaln(_floating(self, "lgamma")), self,
                                   "LgammaBackward0", (self,))
    def digamma(self): return named(SF.digamma(_floating(self, "digamma")), self,
                                    "DigammaBackward0", (self,))
    def i0(self): return named(SF.i0(_floating(self, "i0")), self, "I0Backward0", (self,))
    @_half_in_float32
    def sinc(self): return np.sinc(_floating(self, "sinc"))

    def polygamma(self, n):
        """``x.polygamma(n)``: the ``n``-th derivative of digamma (``torch.polygamma(n, x)``)."""
        if n < 0:
            raise RuntimeError("polygamma(n, x) does not support negative n.")
        x = _floating(self, "polygamma")
        out = SF.digamma(x) if n == 0 else SF.polygamma(x, n=int(n))
        return named(out, self, "PolygammaBackward0", (self,))

    def mvlgamma(self, p):
        """The multivariate log-gamma of dimension ``p``: ``sum_j lgamma(x - j/2)`` over
        ``j < p``, plus ``p (p - 1) / 4 log(pi)``; every element must exceed ``(p - 1)/2``."""
        if p < 1:
            raise RuntimeError("p has to be greater than or equal to 1")
        x = _floating(self, "mvlgamma")  # (integers in the default float, PyTorch 2.13's)
        if not (x._value > (p - 1) / 2).all():
            raise RuntimeError(f"All elements must be greater than (p-1)/2 = {(p - 1) / 2}")
        total = SF.gammaln(x)
        for j in range(1, p):
            total = total + SF.gammaln(x - j / 2)
        return named(total + p * (p - 1) / 4 * math.log(math.pi), self, "MvlgammaBackward0",
                     (self,))

    def logit(self, eps=None):
        """``log(x / (1 - x))``, of ``x`` clamped to ``[eps, 1 - eps]`` when ``eps`` is
        given (then the gradient is 0 outside that interval, as PyTorch's)."""
        x = _floating(self, "logit")
        if eps is not None:
            x = x.clamp(eps, 1 - eps)
        return named(np.log(x / (1 - x)), self, "LogitBackward0", (self,))

    def igamma(self, other):
        """The regularized lower incomplete gamma function ``P(self, other)``; its gradient
        in ``self`` raises, as PyTorch's (:data:`.special_functions.IGAMMA_A_ERROR`)."""
        return named(SF.gammainc(*_floats(self, other, "igamma")), self, "IgammaBackward0",
                     (self, other))

    def igammac(self, other):
        """The regularized upper incomplete gamma function ``Q = 1 - P``."""
        return named(SF.gammaincc(*_floats(self, other, "igammac")), self, "IgammacBackward0",
                     (self, other))

    def hypot(self, other): return np.hypot(*_floats(self, other, "hypot"))
    def logaddexp(self, other): return np.logaddexp(*_floats(self, other, "logaddexp"))
    def logaddexp2(self, other): return np.logaddexp2(*_floats(self, other, "logaddexp2"))
    def xlogy(self, other): return _xlogy(*_floats(self, other))
    def deg2rad(self): return np.deg2rad(_floating(self, "deg2rad"))
    def rad2deg(self): return np.rad2deg(_floating(self, "rad2deg"))

    def copysign(self, other):
        """``|self|`` with the sign of ``other``; the gradient is ``±1`` in ``self`` (0
        where ``self`` is 0, NaN where it is ±inf or NaN: PyTorch's ``result / self``)
        and 0 in ``other``."""
        kind = dt.result_type([self, other])
        kind = kind if kind.is_floating_point else dt.DEFAULT
        x = self.to(kind)
        o = np.asarray(_values(other))
        o = o.astype(np.float32) if dt.is_bfloat16(o) else o  # (for its sign)
        flip = np.signbit(x._value) != np.signbit(o)
        zero = np.broadcast_to(x._value == 0, flip.shape)
        moved = ops.where(flip, -x, x)
        if zero.any():  # copysign(0, other): a constant
            signed = np.where(flip, -x._value, x._value).astype(kind.numpy)
            moved = ops.where(zero, signed, moved)
        odd = np.broadcast_to(~np.isfinite(x._value), flip.shape)
        if odd.any():  # ±|self| as hypot(self, 0), whose gradient self/|self| is NaN there
            size = np.hypot(ops.where(odd, x, np.ones((), kind.numpy)), np.zeros((), kind.numpy))
            turn = np.signbit(size._value) != np.signbit(o)  # (-NaN too: not by a product)
            moved = ops.where(odd, ops.where(turn, -size, size), moved)
        if getattr(other, "requires_grad", False):  # in the graph with a zero gradient (not
            # None: an optimizer steps a parameter whose gradient is zero), as PyTorch's
            keep = np.ones(np.broadcast_shapes(moved.shape, other.shape), bool)
            moved = ops.where(keep, moved, other.to(kind))
        return named(moved, self, "CopysignBackward0", (self, other))

    def float_power(self, exponent):
        """``self ** exponent`` computed in float64 (PyTorch's result dtype)."""
        e = exponent.double() if hasattr(exponent, "_value") else float(exponent)
        return named(self.double() ** e, self, "PowBackward0" if not hasattr(exponent, "_value")
                     else "PowBackward1", (self,))

    def ldexp(self, other):
        """``self * 2 ** other``, in the promoted floating dtype (float32 with an int64
        ``other`` is float32, as PyTorch's); both operands have gradients."""
        x, e = _floats(self, other)
        return x * (2.0 ** e if hasattr(e, "_value") else 2.0 ** float(e))

    def heaviside(self, values):
        """0 where ``self < 0``, ``values`` where ``self == 0``, 1 where ``self > 0``; no
        gradient (PyTorch has none)."""
        other = getattr(values, "dtype", None)
        if other is not None and self.dtype != other:
            raise RuntimeError("heaviside is not yet implemented for tensors with different "
                               "dtypes")
        v, w = self._value, _values(values)
        out = np.where(v == 0, w, (v > 0).astype(v.dtype))
        return self._make(np.asarray(out, dtype=v.dtype))

    def nextafter(self, other):
        """The next representable value after ``self`` towards ``other``; no gradient."""
        kind = dt.result_type([self, other])
        if not kind.is_floating_point:
            raise RuntimeError(f'"nextafter_cpu" not implemented for \'{_type_name(kind)}\'')
        a, b = (np.asarray(_values(v)).astype(kind.numpy) for v in (self, other))
        return self._make(np.asarray(np.nextafter(a, b), dtype=kind.numpy))

    def frexp(self):
        """``(mantissa, exponent)`` with ``self = mantissa * 2 ** exponent``, ``|mantissa|``
        in [0.5, 1) (int32 exponents); the mantissa's gradient is ``2 ** -exponent``."""
        if not self.dtype.is_floating_point:
            raise RuntimeError("torch.frexp() only supports floating-point dtypes")
        v = self._value.astype(np.float32) if dt.is_bfloat16(self._value) else self._value
        exponent = np.frexp(v)[1].astype(np.int32)
        half = -exponent // 2  # (two exact scalings: 2 ** 1029 of a subnormal overflows)
        one = np.ones((), v.dtype)
        first, second = (np.ldexp(one, k).astype(self._value.dtype)
                         for k in (half, -exponent - half))
        return frexp_result(named(self * first * second, self, "FrexpBackward0"),
                            self._make(exponent))

    def gcd(self, other): return self._integers(other, np.gcd, "gcd")
    def lcm(self, other): return self._integers(other, np.lcm, "lcm")

    def _integers(self, other, fn, name):
        """An integer-only binary op in PyTorch's promoted integer dtype; no gradient."""
        kind = dt.result_type([self, other])
        if kind.is_floating_point or kind is dt.bool:
            raise RuntimeError(f'"{name}_cpu" not implemented for \'{_type_name(kind)}\'')
        a, b = (np.asarray(_values(v)).astype(kind.numpy) for v in (self, other))
        with np.errstate(all="ignore"):
            return self._make(np.asarray(fn(a, b), dtype=kind.numpy))

    @_half_in_float32
    @in_float32
    def addcmul(self, tensor1, tensor2, *, value=1):
        """``self + value * tensor1 * tensor2``, in PyTorch's order (bfloat16 rounded once;
        ``value`` cast to an integer result's dtype, as PyTorch casts it)."""
        if not dt.result_type([self, tensor1, tensor2]).is_floating_point:
            value = int(value)
        def formula() -> Any:
            return self + (value * tensor1 * tensor2 if value != 1 else tensor1 * tensor2)
        # (its value rounded once, as PyTorch's kernel: fused_values)
        return named(fused_values.addcmul(self, tensor1, tensor2, value, formula), self,
                     "AddcmulBackward0", (self, tensor1, tensor2))

    @_half_in_float32
    @in_float32
    def addcdiv(self, tensor1, tensor2, *, value=1):
        """``self + value * tensor1 / tensor2``; integer operands refused, as PyTorch does."""
        if not dt.result_type([tensor1, tensor2]).is_floating_point:
            raise RuntimeError("Integer division with addcdiv is no longer supported, and in a "
                               "future release addcdiv will perform a true division of tensor1 "
                               "and tensor2. The historic addcdiv behavior can be implemented "
                               "as (input + value * torch.trunc(tensor1 / tensor2)).to(input."
                               "dtype) for integer inputs and as (input + value * tensor1 / "
                               "tensor2) for float inputs. The future addcdiv behavior is just "
                               "the latter implementation: (input + value * tensor1 / tensor2), "
                               "for all dtypes.")
        quotient = value * tensor1 / tensor2 if value != 1 else tensor1 / tensor2
        return named(self + quotient, self, "AddcdivBackward0")

    def where(self, condition, y):  # type: ignore[override]
        """``torch.where(condition, self, y)``: ``self`` where ``condition``, else ``y``."""
        return named(ops.where(condition, self, y), self, "WhereBackward0")

    def type_as(self, other): return self.to(other.dtype)

    # -- activations PyTorch also has as methods ---------------------------------------
    def hardshrink(self, lambd=0.5):
        """0 on ``[-lambd, lambd]`` (gradient 0 there too), ``x`` elsewhere: NaN stays NaN,
        with gradient 0 (PyTorch's vectorized loop; its scalar tail passes the gradient)."""
        inside = (self._value >= -lambd) & (self._value <= lambd)
        return named(no_gradient_at_nan(ops.where(inside, 0.0, self), self), self,
                     "HardshrinkBackward0", (self,))

    def prelu(self, weight):
        """``x`` where positive, ``weight * x`` elsewhere (``weight`` per channel, dim 1)."""
        w = weight.reshape(-1, *([1] * (self.ndim - 2))) if self.ndim >= 2 \
            and weight.numel() > 1 else weight
        return named(ops.where(self > 0, self, w * self), self, "PreluKernelBackward0",
                     (self, weight))

    # -- in place ------------------------------------------------------------------------
    def _truth_(self, result):
        """A comparison's or logical op's bool ``result`` written into ``self`` (in its
        dtype); a recorded one gives ``self`` a zero gradient."""
        values = result._value

        def fn(a, _):
            if hasattr(a, "_node"):  # recorded: the constant values, zero gradient to a
                return ops.where(np.ones(a.shape, np.bool_), values.astype(a._value.dtype), a)
            return values.astype(a.dtype)
        return self._inplace(fn, None)

    def clamp_min_(self, min): return self._unary_("clamp", min, None)  # noqa: A002
    def clamp_max_(self, max): return self._unary_("clamp", None, max)  # noqa: A002
    def clip_(self, min=None, max=None): return self._unary_("clamp", min, max)  # noqa: A002
    def polygamma_(self, n): return self._unary_("polygamma", n)
    def igamma_(self, other): return self._unary_("igamma", other)
    def igammac_(self, other): return self._unary_("igammac", other)
    def mvlgamma_(self, p): return self._unary_("mvlgamma", p)
    def logit_(self, eps=None): return self._unary_("logit", eps)
    def subtract_(self, other, alpha=1): return self.sub_(other, alpha)
    def multiply_(self, other): return self.mul_(other)
    def divide_(self, other, rounding_mode=None):
        return self.div_(other, rounding_mode=rounding_mode)
    def true_divide_(self, other): return self.div_(other)
    def float_power_(self, exponent):
        if self.dtype is not dt.float64:
            raise RuntimeError(f"the base given to float_power_ has dtype {_type_name(self.dtype)}"
                               " but the operation's result requires dtype Double")
        return self._inplace(_method_on(self, "float_power"), exponent)


#: unary methods whose in-place form ``x.op_()`` is ``x.op()`` written into ``x``
UNARY_INPLACE = ("absolute", "negative", "sgn", "fix", "arccos", "arcsin", "arctan", "asinh",
                 "acosh", "atanh", "arcsinh", "arccosh", "arctanh", "frac", "exp2", "erfc",
                 "lgamma", "digamma", "i0", "sinc", "deg2rad", "rad2deg")
#: binary methods whose in-place form ``x.op_(other)`` writes ``x.op(other)`` into ``x``
BINARY_INPLACE = ("arctan2", "atan2", "hypot", "xlogy", "copysign", "ldexp", "heaviside",
                  "nextafter", "gcd", "lcm")
#: comparisons and logical ops: ``x.eq_(y)`` writes the truth values in ``x``'s dtype
TRUTH_INPLACE = ("eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less",
                 "less_equal", "not_equal", "logical_and", "logical_or", "logical_xor",
                 "logical_not")


def _install() -> None:
    def unary(op: str) -> Any:
        def method(self: Any) -> Any:
            return self._unary_(op)
        return method

    def binary(op: str) -> Any:
        def method(self: Any, other: Any) -> Any:
            return self._inplace(_method_on(self, op), other)
        return method

    def truth(op: str) -> Any:
        def method(self: Any, *other: Any) -> Any:
            return self._truth_(getattr(self, op)(*other))
        return method

    for ops_, make in ((UNARY_INPLACE, unary), (BINARY_INPLACE, binary), (TRUTH_INPLACE, truth)):
        for op in ops_:
            m = make(op)
            m.__name__ = m.__qualname__ = f"{op}_"
            m.__doc__ = f"``x.{op}(...)`` written into ``x``."
            setattr(ElementwiseMethods, f"{op}_", m)


_install()
