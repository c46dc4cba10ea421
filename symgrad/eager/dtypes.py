"""Tensor dtypes and PyTorch's type promotion; ``torch.Size`` and ``torch.device``.

A Tensor holds a numpy array of a storage dtype: ``float64`` (the default,
as after PyTorch's ``torch.set_default_dtype(torch.float64)``), ``float32``,
``float16``, ``int64`` (integer data, class labels, indices: ``torch.long``),
``int32``, ``int16``, ``int8``, ``uint8``, ``bool`` (masks) and ``bfloat16``;
operations compute in the promoted dtype with numpy, so integers wrap as PyTorch's
do. numpy has no bfloat16: its storage is ``ml_dtypes.bfloat16`` (the package JAX
uses), and :mod:`.bf16` computes in float32 and rounds as PyTorch's CPU does;
without ``ml_dtypes`` installed, ``bfloat16`` names itself but is refused wherever
it is used.
:data:`float64` and friends are the ``symgrad.float64`` objects user code passes as
``dtype=``; they print as PyTorch prints its dtypes (``torch.float32``), so a
program's output reads the same under either import.

:func:`result_type` is PyTorch's promotion for mixed operands: categories
(bool < integer < floating) decide first, and within the highest category
dimensioned tensors outrank zero-dimensional ones, which outrank Python numbers;
a Python float next to integer tensors gives the default float dtype.

    >>> import symgrad as torch
    >>> result_type([torch.ones(2, dtype=torch.float32), 2.5])
    torch.float32
    >>> result_type([torch.tensor([1, 2]), 0.5])
    torch.float64
    >>> result_type([torch.tensor([1, 2]), torch.tensor(1.5, dtype=torch.float32)])
    torch.float32
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..core.tracing import as_constant_array

try:  # numpy's bfloat16 type (JAX's dependency); without it bfloat16 is refused
    import ml_dtypes
except ImportError:  # pragma: no cover -- the test extra installs it (through jax)
    ml_dtypes = None


class dtype:  # noqa: N801 -- PyTorch's name: ``torch.dtype``
    """A tensor storage dtype; compares equal to the numpy dtype it holds."""

    __slots__ = ("name", "numpy", "is_floating_point", "is_complex", "category", "itemsize")

    def __init__(self, name: str, category: int, storage: Any = None):
        self.name = name
        self.numpy = np.dtype(name if storage is None else storage)
        self.is_floating_point = category == FLOATING
        self.is_complex = category == COMPLEX
        self.category = category
        self.itemsize = self.numpy.itemsize

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, dtype):
            return other is self
        try:
            return self.numpy == np.dtype(other)
        except TypeError:
            return NotImplemented

    def __hash__(self) -> int:
        return hash(self.numpy)

    def __reduce__(self) -> str:  # pickles (state_dict) as the module-level object
        return self.name


BOOLEAN, INTEGRAL, FLOATING, COMPLEX = 0, 1, 2, 3

bool = dtype("bool", BOOLEAN)  # noqa: A001 -- torch.bool
uint8 = dtype("uint8", INTEGRAL)
int8 = dtype("int8", INTEGRAL)
int16 = dtype("int16", INTEGRAL)
int32 = dtype("int32", INTEGRAL)
int64 = dtype("int64", INTEGRAL)
float16 = dtype("float16", FLOATING)
float32 = dtype("float32", FLOATING)
float64 = dtype("float64", FLOATING)
complex64 = dtype("complex64", COMPLEX)  # (see symgrad.eager.complex_tensors)
complex128 = dtype("complex128", COMPLEX)


class _NoStorage:
    """A PyTorch dtype with no numpy storage (``bfloat16`` without ``ml_dtypes``): it
    names itself as PyTorch does, and every use goes through :func:`as_dtype`, which
    refuses it saying why."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


bfloat16: Any = (dtype("bfloat16", FLOATING, ml_dtypes.bfloat16) if ml_dtypes is not None
                 else _NoStorage("bfloat16"))
long, float, double = int64, float32, float64  # noqa: A001 -- torch.long, torch.float, ...
short, int, half = int16, int32, float16  # noqa: A001 -- torch.short, torch.int, torch.half
cfloat, cdouble = complex64, complex128  # torch.cfloat, torch.cdouble

#: the storage dtypes (bfloat16 only with ml_dtypes: numpy has no bfloat16 type)
DTYPES = (bool, uint8, int8, int16, int32, int64, float16, float32, float64, complex64,
          complex128,
          *((bfloat16,) if isinstance(bfloat16, dtype) else ()))
_BY_NUMPY = {d.numpy: d for d in DTYPES}
#: the dtype of a float tensor made without ``dtype=`` (PyTorch's is float32; ours float64)
DEFAULT = float64

def promote_types(a: dtype, b: dtype) -> dtype:
    """``torch.promote_types``: the smallest dtype both convert to (the higher category's
    dtype across categories: ``int64`` with ``float16`` is ``float16``, as PyTorch's;
    numpy's promotion within one: ``int8`` with ``uint8`` is ``int16``)."""
    if a is b:
        return a
    if a.category != b.category:
        high, low = (a, b) if a.category > b.category else (b, a)
        if high.is_complex and low.is_floating_point:  # float64 with complex64: complex128
            return complex_of(promote_types(real_of(high), low))
        return high
    if a is bfloat16 or b is bfloat16:  # float16 with bfloat16 is float32, as PyTorch's
        other = b if a is bfloat16 else a
        return float32 if other is float16 else other
    return _BY_NUMPY[np.promote_types(a.numpy, b.numpy)]


def complex_of(d: dtype) -> dtype:
    """The complex dtype of a floating one's precision (float32: complex64; float64, and
    float16 and bfloat16, which have no complex dtype here: complex128)."""
    return complex64 if d is float32 else complex128


def real_of(d: dtype) -> dtype:
    """The floating dtype of a complex one's parts (``z.real``'s)."""
    return float32 if d is complex64 else float64


def as_dtype(x: Any) -> dtype:
    """``x`` (a symgrad dtype, a numpy dtype or type, ``float``, ``int``, ``bool``, a
    name such as ``"float32"``) as one of the four dtypes; others are a TypeError."""
    if isinstance(x, dtype):
        return x
    if x is builtins.float:
        return DEFAULT
    if x is builtins.int:
        return int64
    try:
        found = _BY_NUMPY.get(np.dtype(x))
    except TypeError:
        found = None
    if found is None:
        hint = (" (numpy has no bfloat16: install ml_dtypes, or use float32 or float16)"
                if "bfloat16" in str(x) else "")
        raise TypeError(f"dtype {x!r} is not supported: Tensors hold float64 (the default), "
                        f"float32, float16, bfloat16, complex128, complex64, int64, int32, "
                        f"int16, int8, uint8 or bool{hint}")
    return found


def cast(a: np.ndarray, target: dtype) -> np.ndarray:
    """``a`` converted to ``target`` as PyTorch converts: to bfloat16 and float16 through
    float32, so a float64 or an integer is rounded twice (to float32, then to the nearest
    even bfloat16 or float16), as by PyTorch's ``c10::BFloat16(float)`` and
    ``c10::Half(float)`` (numpy rounds float64 to float16 once: 1 + 2**-11 + 2**-40 is
    1.0 in PyTorch, 1.00098 in numpy); numpy's casts otherwise."""
    if a.dtype == target.numpy:
        return a
    if a.dtype.kind == "c" and target.category != COMPLEX:  # never the real part, silently
        raise TypeError(f"cannot convert complex values to {target} (the imaginary part would "
                        "be dropped); take .real or .abs() explicitly")
    with np.errstate(all="ignore"):  # (nan, inf and overflow to inf, as PyTorch's)
        if target is bfloat16 or target is float16:
            return a.astype(np.float32).astype(target.numpy)
        return a.astype(target.numpy)


def is_bfloat16(a: np.ndarray) -> builtins.bool:
    """Whether ``a`` holds bfloat16 values (never without ``ml_dtypes``)."""
    return isinstance(bfloat16, dtype) and a.dtype == bfloat16.numpy


def of_array(a: np.ndarray) -> dtype:
    """The dtype of a tensor's array (which always has one of the four)."""
    return _BY_NUMPY[a.dtype]


def infer(data: Any) -> dtype:
    """The dtype ``torch.tensor(data)`` gives: bool, int64 for integers, complex128 for
    complex numbers, else the default float (a float32 or complex64 numpy array keeps its
    dtype)."""
    a = np.asarray(data)
    if a.dtype.kind == "c":
        return complex64 if a.dtype == np.complex64 else complex128
    if a.dtype.kind == "b":
        return bool
    if a.dtype in _BY_NUMPY and a.dtype != np.float64:  # an array of a storage dtype keeps it
        return _BY_NUMPY[a.dtype]
    if a.dtype.kind in "iu":
        return int64
    if a.dtype.kind == "f":
        return DEFAULT
    raise TypeError(f"a tensor cannot hold {a.dtype} data: Tensors hold float64, float32, "
                    "float16, complex128, complex64, int64, int32, int16, int8, uint8 or bool")


def _operand_dtype(x: Any) -> tuple[int, dtype] | None:
    """(priority, dtype) of an operand: 2 for a dimensioned tensor, 1 for a 0-d one,
    0 for a Python number (PyTorch's wrapped numbers); None for what takes no part."""
    if isinstance(x, np.ndarray):
        found = _BY_NUMPY.get(x.dtype)
        return (2 if x.ndim else 1, found if found is not None else DEFAULT)
    dt = getattr(x, "_value", None)
    if isinstance(dt, np.ndarray):  # a Tensor
        return (2 if dt.ndim else 1, _BY_NUMPY.get(dt.dtype, DEFAULT))
    if isinstance(x, (np.bool_, builtins.bool)):
        return (0, bool)
    if isinstance(x, (builtins.int, np.integer)):
        return (0, int64)
    if isinstance(x, (builtins.float, np.floating)):
        return (0, DEFAULT)
    if isinstance(x, (builtins.complex, np.complexfloating)):
        return (0, complex_of(DEFAULT))  # PyTorch's default complex dtype
    return None


def _combine(higher: dtype | None, lower: dtype | None) -> dtype | None:
    """PyTorch's ``combine_categories``: the higher priority's dtype, unless the lower
    one is of a higher category."""
    if higher is None:
        return lower
    if lower is None or higher.category == COMPLEX:
        return higher
    if lower.category == COMPLEX:  # float32 tensor * 1j: complex64
        return complex_of(higher) if higher.category == FLOATING else lower
    if higher.category == FLOATING:
        return higher
    if higher is bool or lower.category == FLOATING:
        return promote_types(higher, lower)
    return higher


def result_type(operands: Iterable[Any]) -> dtype:
    """The dtype of an arithmetic result of ``operands`` (``torch.result_type``)."""
    best: list[dtype | None] = [None, None, None]  # per priority
    for x in operands:
        found = _operand_dtype(x)
        if found is None:
            continue
        prio, dt = found
        best[prio] = dt if best[prio] is None else promote_types(best[prio], dt)
    result = _combine(best[2], _combine(best[1], best[0]))
    return DEFAULT if result is None else result


def as_array(x: Any) -> np.ndarray:
    """``x`` as an array of a storage dtype (other integers become int64, other floats
    float64); complex and object data are refused, as the IR refuses them."""
    a = np.asarray(x) if not isinstance(x, np.ndarray) else x
    if a.dtype in _BY_NUMPY:
        return a
    if a.dtype.kind in "iu":
        return a.astype(np.int64)
    if a.dtype.kind == "f":
        return a.astype(np.float64)
    return as_constant_array(x)  # raises the IR's TypeError (complex, object, ...)


class Size(tuple):
    """``torch.Size``: the shape, a tuple that prints as PyTorch's."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    def numel(self) -> int:
        return builtins.int(np.prod(self))


class device:  # noqa: N801 -- PyTorch's name
    """``torch.device('cpu')``: the only device."""

    __slots__ = ("type",)

    def __init__(self, type: str = "cpu", index: Any = None):  # noqa: A002
        self.type = str(type).partition(":")[0]
        if self.type != "cpu":
            raise RuntimeError(f"symgrad runs on the CPU only; device {type!r} is not "
                               "available (use 'cpu')")

    def __repr__(self) -> str:
        return f"device(type='{self.type}')"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, device) or other == "cpu"

    def __hash__(self) -> int:
        return hash("cpu")


CPU = device("cpu")


def as_device(d: Any) -> device:
    return d if isinstance(d, device) else device(d)


#: why an operation refuses complex values (README, "Complex numbers")
COMPLEX_TENSOR = ("this operation of symgrad Tensors takes no complex values: complex "
                  "Tensors (complex64, complex128) support the operations listed in "
                  "symgrad.eager.complex_tensors (arithmetic, exp, real/imag/conj/abs/angle, "
                  "view_as_real, shapes, indexing, sum/mean). Work on z.real and z.imag "
                  "(torch.view_as_real), or use sg.grad on a numpy function")


def refuse_complex(value: Any) -> None:
    """A TypeError for a complex number or array given to a Tensor or its operations:
    never its real part, silently (numpy's astype would drop the imaginary part)."""
    if isinstance(value, complex) or (isinstance(value, (np.ndarray, np.generic))
                                      and value.dtype.kind == "c"):
        raise TypeError(COMPLEX_TENSOR)


#: ATen's names of the dtypes, as its errors print them ("not implemented for 'Long'")
TYPE_NAMES = {"float64": "Double", "float32": "Float", "float16": "Half", "int64": "Long",
              "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
              "bool": "Bool", "bfloat16": "BFloat16", "complex64": "ComplexFloat",
              "complex128": "ComplexDouble"}
