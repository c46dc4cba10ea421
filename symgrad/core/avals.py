"""The IR's dtypes and abstract values: what it knows about a value before it exists.

The dtypes of :mod:`.ir` (``float64``, ``float32``, ``bool``, ``int64``, ``tuple``,
``complex128``, ``complex64``), :class:`Aval` (shape, dtype, a tuple's parts) and
numpy's promotion of float dtypes (:func:`promote`, :func:`float_of`). They know
no graph; :mod:`.ir` imports and re-exports them, the place to import them from.

    >>> str(Aval((2, 3))), str(Aval((), F32)), str(tuple_aval([Aval((DYN,))]))
    ('f64[2,3]', 'f32[]', '(f64[?],)')
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

FLOAT = "float64"
F32 = "float32"
BOOL = "bool"
INT = "int64"
TUPLE = "tuple"
C128 = "complex128"
C64 = "complex64"
DTYPES = (FLOAT, F32, BOOL, INT, TUPLE, C128, C64)
FLOATS = (FLOAT, F32)
#: complex dtypes: only primitives declared ``complex=True`` take them (checked when traced)
COMPLEXES = (C128, C64)
#: the dtypes that carry derivatives (a tangent, a cotangent)
INEXACT = FLOATS + COMPLEXES
_SHORT = {FLOAT: "f64", F32: "f32", BOOL: "bool", INT: "i64", C128: "c128", C64: "c64"}
#: a size known only when the kernel runs (the leading axis of a tape)
DYN = -1


@dataclass(frozen=True, slots=True)
class Aval:
    """Abstract value: what the IR knows about a value before it exists."""

    shape: tuple[int, ...]
    dtype: str = FLOAT
    parts: tuple[Aval, ...] = ()  # for dtype "tuple": the avals of its parts
    #: a literal's: weak in dtype promotion (NEP 50), not part of equality or the text
    weak: bool = field(default=False, compare=False)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __str__(self) -> str:
        if self.dtype == TUPLE:
            inner = ", ".join(map(str, self.parts))
            return f"({inner}{',' if len(self.parts) == 1 else ''})"
        dims = ("?" if d == DYN else str(d) for d in self.shape)
        return f"{_SHORT[self.dtype]}[{','.join(dims)}]"


def is_float(dtype: str) -> bool:
    """Whether ``dtype`` is a float dtype of the IR (float64 or float32)."""
    return dtype in FLOATS


def is_complex(dtype: str) -> bool:
    """Whether ``dtype`` is a complex dtype of the IR (complex128 or complex64)."""
    return dtype in COMPLEXES


def holds_complex(x: object) -> bool:
    """Whether the value ``x`` (an array, a traced value, an eager Tensor, a number) holds
    complex numbers."""
    dtype = getattr(x, "dtype", None)
    dtype = getattr(dtype, "numpy", dtype)  # an eager Tensor's dtype names numpy's
    return (np.asarray(x) if dtype is None else np.empty(0, dtype)).dtype.kind == "c"


def real_of(dtype: str) -> str:
    """The real dtype of a complex one (complex64 -> float32), a float dtype itself."""
    return {C128: FLOAT, C64: F32}.get(dtype, dtype)


def complex_of(dtype: str) -> str:
    """The complex dtype of a float one (float32 -> complex64), a complex dtype itself."""
    return {FLOAT: C128, F32: C64}.get(dtype, dtype if dtype in COMPLEXES else C128)


def promote(*dtypes: str) -> str:
    """The float dtype of an arithmetic result on operands of ``dtypes``, as numpy
    promotes them (``np.result_type``): float32 with float32 (or bool) stays float32,
    anything with float64 is float64, no float operand at all gives float64 (integers
    enter arithmetic as float64, ``to_float``). Literals (Python scalars) are weak, as
    in NEP 50, and are not passed here: ``x32 * 2.0`` stays float32.

        >>> promote(F32, F32), promote(F32, FLOAT), promote(F32, BOOL), promote(INT)
        ('float32', 'float64', 'float32', 'float64')
    """
    floats = [d for d in dtypes if d in INEXACT]
    real = F32 if floats and all(d in (F32, C64) for d in floats) else FLOAT
    return complex_of(real) if any(d in COMPLEXES for d in floats) else real


def float_of(*avals: Aval) -> str:
    """:func:`promote` of the dtypes of the operands ``avals``; a literal's (weak) aval
    does not count, so ``mul(x32, 2.0)`` is float32, but a complex literal makes the
    result complex (``mul(x32, 1j)`` is complex64, as in numpy)."""
    dtype = promote(*(a.dtype for a in avals if not a.weak))
    return complex_of(dtype) if any(a.weak and a.dtype in COMPLEXES for a in avals) else dtype


def nbytes(aval: Aval) -> int:
    """The bytes of a value of ``aval``: a tuple's parts summed; a size not known yet
    (:data:`DYN`, a loop's tape) counts none."""
    if aval.dtype == TUPLE:
        return sum(map(nbytes, aval.parts))
    return max(aval.size, 0) * np.dtype(aval.dtype).itemsize


def tuple_aval(parts: Sequence[Aval]) -> Aval:
    """The aval of a tuple of values of avals ``parts``."""
    return Aval((), TUPLE, tuple(parts))
