"""The dtype an eager operation computes in, and the IR aval it records.

The IR knows float64 and bool; Tensors also hold float32 and int64.
:class:`symgrad.eager.tensor.EagerTrace` asks :func:`result_dtype` for the dtype of an
operation's result (PyTorch's promotion, :func:`.dtypes.result_type`, with PyTorch's
rules on integers and bools), converts each operand to it (:func:`in_dtype`), and
checks shapes with the primitive's own rule on the float64 avals the IR sees
(:func:`ir_shape_rule`, memoized).

    >>> from symgrad.prims.elementwise import add_p
    >>> import numpy as np
    >>> result_dtype(add_p, [np.ones(2, np.int64), 1], Aval((2,), "float64"), {})
    torch.int64
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.ir import BOOL, FLOAT, INT, Aval, Primitive
from . import bf16
from . import dtypes as dt

#: primitives whose result keeps an integer dtype, as PyTorch's do (``x + 1`` on int64
#: is int64); every other one computes integer operands in the default float dtype
_INTEGER_KEEPING = {"add", "sub", "mul", "neg", "abs", "sign", "maximum", "minimum", "pow",
                    "square", "floor", "ceil", "trunc", "rint", "relu", "where", "sum", "prod",
                    "max", "min", "cumsum", "matmul", "scatter_add"}


#: integer reductions that PyTorch computes and returns in int64 (``int32.sum()`` is int64)
_WIDENING = {"sum", "prod", "cumsum"}


def result_dtype(prim: Primitive, values: list[Any], aval: Aval, params: dict[str, Any]
                  ) -> dt.dtype | None:
    """The dtype of ``prim``'s result, or None for a bool result (a comparison)."""
    if aval.dtype == BOOL:
        return None
    if aval.dtype == INT:  # positions (np.argmax, np.argsort of a Tensor): int64, as PyTorch's
        return dt.int64
    if prim.name == "convert":  # numpy's float32 results (np.var of float32 values)
        return dt.as_dtype(params["dtype"])
    operands = values[1:] if prim.name == "where" else values  # not the condition
    out = dt.result_type(operands)
    if not out.is_floating_point and not (prim.name in _INTEGER_KEEPING
                                          or prim.kind == "structural"):
        return dt.DEFAULT
    if out is dt.bool:  # bools in arithmetic count as integers (numpy_api makes them floats)
        return dt.int64
    if not out.is_floating_point and prim.name in _WIDENING:
        return dt.int64
    return out


def in_dtype(v: Any, out: dt.dtype, k: int, prim: Primitive) -> Any:
    """An operand converted to the dtype the operation computes in (not a condition)."""
    if k == 0 and prim.name == "where":
        return v
    if out is dt.bfloat16:
        if prim.view and type(v) is np.ndarray and dt.is_bfloat16(v):
            return v  # y[0], y.t(), y.view(4): a numpy view of the same bfloat16 memory
        return bf16.operand(v, k, prim)  # computed in float32, rounded by the caller (.bf16)
    if out is dt.float16 and bf16.opmath_scalar(v, k, prim.name):  # x * 0.1: 0.1 in float32,
        dt.refuse_complex(v)  # the product in float32, rounded once (by the caller)
        return np.asarray(v, np.float32)
    if type(v) in (float, int, bool):
        return float(v) if out.is_floating_point else wrapped_int(v, out, prim.name)
    dt.refuse_complex(v)
    return v if v.dtype == out.numpy else dt.cast(v, out)


#: the operations whose Python int operand PyTorch wraps into a narrower integer dtype
#: (``int8 + 300`` is ``int8 + 44``, a wrapped-number tensor cast); the others (``where``,
#: ``clamp``, ``pow``, fills) check the value and raise, as PyTorch's Scalar arguments do
_WRAPPING = {"add", "sub", "mul", "gt", "ge", "lt", "le", "eq", "ne", "floordiv", "mod"}


def wrapped_int(v: Any, out: dt.dtype, name: str) -> Any:
    """A Python int operand of an integer operation computed in ``out``: itself where it
    fits, PyTorch's value where not (wrapped modulo 2**bits for ``+ - *`` and comparisons;
    PyTorch's errors otherwise, and beyond int64's range)."""
    info = np.iinfo(out.numpy) if np.dtype(out.numpy).kind in "iu" else None
    if type(v) is bool or info is None or info.min <= v <= info.max:
        return int(v)
    if name not in _WRAPPING:
        raise RuntimeError(f"value cannot be converted to type {np.dtype(out.numpy).name}_t "
                           "without overflow")
    if not -2**63 <= v < 2**64:
        raise OverflowError("int too big to convert")
    r = v % 2**info.bits
    return np.dtype(out.numpy).type(r - 2**info.bits if info.min < 0 and r > info.max else r)


def compared(raw: list[Any], prim: Primitive) -> list[Any]:
    """A comparison's operands: a Python int or a 0-d integer tensor against an integer
    tensor wrapped into the tensor's dtype, as PyTorch compares (``int8 == 300`` is
    ``int8 == 44``, ``uint8 < tensor(-3)`` is ``uint8 < 253``)."""
    if prim.name not in _WRAPPING or not any(type(v) is int or _int_0d(v) for v in raw):
        return raw
    out = dt.result_type(raw)
    if out.is_floating_point or out is dt.bool:
        return raw
    return [wrapped_int(v, out, prim.name) if type(v) is int
            else v.astype(out.numpy) if _int_0d(v) else v for v in raw]


def _int_0d(v: Any) -> bool:
    return isinstance(v, np.ndarray) and v.ndim == 0 and v.dtype.kind in "iu"


def _ir_dtype(v: Any) -> str:
    return BOOL if (type(v) is bool or (type(v) is not float and type(v) is not int
                                        and v.dtype == np.bool_)) else FLOAT


_RULES: dict[tuple, Aval] = {}


def ir_shape_rule(prim: Primitive, values: list[Any], params: dict[str, Any]) -> Aval:
    """``prim.shape_rule`` on the values' IR avals (float64 for every number type; checks
    shapes, names the output's shape), memoized: a training loop asks the same question
    every step."""
    types = tuple(((), _ir_dtype(v)) if type(v) in (float, int, bool) else
                  (v.shape, _ir_dtype(v)) for v in values)
    try:
        key: tuple | None = (prim.name, types, tuple(params.items()) if params else ())
        hash(key)
    except TypeError:
        key = None
    aval = _RULES.get(key) if key is not None else None
    if aval is None:
        aval = prim.shape_rule(*(Aval(*t) for t in types), **params)
        if key is not None and len(_RULES) < 100_000:
            _RULES[key] = aval
    return aval


def int_power(base: Any, exponent: Any, otherwise: Any) -> Any:
    """``base ** exponent`` of integer (and bool) operands with a negative exponent, as
    PyTorch's ``powi``: a Python integer exponent below 0 raises (PyTorch's RuntimeError);
    negative entries of an integer tensor exponent give 1 for a base of 1, +-1 for -1 (by the
    exponent's parity) and 0 otherwise (numpy would raise). ``otherwise()`` computes every
    other case."""
    kinds = [_int_kind(v) for v in (base, exponent)]
    if not all(kinds):
        return otherwise()
    if "python" == kinds[1]:
        if int(exponent) < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        return otherwise()
    e = np.asarray(getattr(exponent, "_value", exponent), np.int64)
    if not (e < 0).any():
        return otherwise()
    out = dt.result_type([base, exponent])
    b = np.asarray(getattr(base, "_value", base), np.int64)
    with np.errstate(over="ignore"):
        positive = np.power(b, np.maximum(e, 0))  # (wraps, as PyTorch's in its dtype)
    negative = np.where(b == 1, 1, np.where(b == -1, np.where(e % 2 == 0, 1, -1), 0))
    value = np.where(e < 0, negative, positive).astype(out.numpy)
    tensor = next(v for v in (base, exponent) if hasattr(v, "_make"))
    return tensor._make(value)


def _int_kind(v: Any) -> str | None:
    """``"tensor"`` for an integer or bool tensor, ``"python"`` for a Python or numpy integer
    (or bool) number, else None."""
    if hasattr(v, "_value"):
        return "tensor" if v._value.dtype.kind in "iub" else None
    return "python" if isinstance(v, (int, np.integer, np.bool_)) else None
