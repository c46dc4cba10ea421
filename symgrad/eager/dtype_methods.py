"""The dtype conversions of :class:`symgrad.eager.tensor.Tensor` (a mixin of it): ``to``,
``type``, ``float()``/``double()``/``long()``/..., ``astype``. A cast between floating
dtypes is recorded (``ToCopyBackward0``) as the identity; one from complex to real
refuses rather than dropping the imaginary part."""

from __future__ import annotations

from typing import Any

from . import dtypes as dt
from . import grad_mode
from .bf16 import exempt as exempt_bf16
from .dtypes import as_device, device
from .graph import ROUNDED
from .method_args import named


class DtypeMethods:
    """Tensor's dtype conversions (a mixin: ``self`` is a Tensor)."""

    __slots__ = ()

    def to(self, *args: Any, **kwargs: Any) -> Any:
        """``to(dtype)``, ``to(device)``, ``to(other)`` (its dtype), ``to(device, dtype)``,
        with ``dtype=``/``device=``/``copy=`` keywords. Only the CPU exists."""
        target = kwargs.pop("dtype", None)
        copy = kwargs.pop("copy", False)
        kwargs.pop("non_blocking", None)
        for a in (*args, kwargs.pop("device", None)):
            if isinstance(a, DtypeMethods):
                target = a.dtype
            elif isinstance(a, (str, device)):
                as_device(a)
            elif a is not None:
                target = a
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
        result = self if target is None else self._cast(dt.as_dtype(target))
        return result.clone() if copy and result is self else result

    def _cast(self, target: dt.dtype) -> Any:
        """``self`` as ``target``; the same tensor when it has that dtype already. A cast
        between floating dtypes is recorded (``ToCopyBackward0``), as the identity in the
        IR: the backward runs in float64 and gives a float32 leaf a float32 gradient."""
        if self.dtype is target:
            return self
        if self.dtype.is_complex and not target.is_complex:
            raise TypeError(f"casting a complex tensor to {target} would drop the imaginary "
                            "part; take z.real (or z.abs()) explicitly")
        if target.is_complex and self._requires_grad and grad_mode.is_grad_enabled():
            result = named(self * (1.0 if self.dtype.is_complex else 1 + 0j), self,
                           "ToCopyBackward0")  # (the identity, recorded)
            result._value = dt.cast(self._value, target)
            if dt.complex64 in (self.dtype, target) and dt.float32 not in (self.dtype, target):
                ROUNDED[result._node] = ("complex64",)  # (its gradient rounded, as PyTorch's)
                result._node.sig = (*result._node.sig, ("complex64",))
            return result
        value = dt.cast(self._value, target)
        if target.is_floating_point and self._requires_grad and grad_mode.is_grad_enabled():
            result = named(self * 1.0, self, "ToCopyBackward0")
            result._value = value
            narrow = tuple(d.name for d in (self.dtype, target) if d.itemsize < 8)
            if narrow and result._node is not None:  # (rounded as PyTorch's: not refused)
                exempt_bf16(result._node)
                ROUNDED[result._node] = narrow
                result._node.sig = (*result._node.sig, narrow)
            return result
        return self._make(value)

    def type(self, dtype: Any = None, non_blocking: bool = False) -> Any:  # noqa: A003
        """``x.type()`` names the tensor type (``'torch.DoubleTensor'``); ``x.type(t)``
        converts to a dtype or a tensor type (``torch.FloatTensor``, or its name)."""
        if dtype is None:
            return _TYPE_NAMES[self.dtype]
        if isinstance(dtype, str):
            found = [d for d, name in _TYPE_NAMES.items() if name == dtype]
            if not found:
                raise ValueError(f"invalid type: {dtype!r}; use one of "
                                 f"{sorted(_TYPE_NAMES.values())}")
            dtype = found[0]
        return self._cast(getattr(dtype, "_default", None) or dt.as_dtype(dtype))

    def float(self) -> Any: return self._cast(dt.float32)
    def double(self) -> Any: return self._cast(dt.float64)
    def long(self) -> Any: return self._cast(dt.int64)
    def bool(self) -> Any: return self._cast(dt.bool)
    def half(self) -> Any: return self._cast(dt.float16)
    def bfloat16(self) -> Any: return self._cast(dt.as_dtype(dt.bfloat16))
    def int(self) -> Any: return self._cast(dt.int32)
    def short(self) -> Any: return self._cast(dt.int16)
    def char(self) -> Any: return self._cast(dt.int8)
    def byte(self) -> Any: return self._cast(dt.uint8)

    def astype(self, dtype: Any, copy: bool = True) -> Any:  # type: ignore[override]
        return self._cast(dt.as_dtype(dtype))


_TYPE_NAMES = {dt.float64: "torch.DoubleTensor", dt.float32: "torch.FloatTensor",
               dt.int64: "torch.LongTensor", dt.bool: "torch.BoolTensor",
               dt.complex64: "torch.ComplexFloatTensor", dt.complex128: "torch.ComplexDoubleTensor"}
