"""What tracing says when a traced value is misused, and the operands it refuses.

The messages of :mod:`.tracing`'s errors in one place: a traced value written into a
numpy array (numpy's own message points the wrong way), one kept after its function
returned, numpy's or scipy's code asking for a value (:func:`inside_numpy`), a
masked array (:func:`refuse_masked`) and a complex operand of a primitive that takes
none (:func:`refuse_complex`). Nothing here knows a trace; :mod:`.tracing` imports it.

    >>> subject(1.5, ""), subject(1.5, "the argument x")
    ('float 1.5', 'the argument x')
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from .errors import (
    EscapedTracerError,
    TracerConversionError,
    called_from_numpy,
    scipy_hint,
    user_location,
)
from .ir import COMPLEXES, Atom, Aval

NUMPY_HOLDS = "a numpy array holds concrete numbers, but"
BUILD_INSTEAD = ("Build arrays of traced values with np.stack([a, b]) (or np.concatenate), "
                 "and write into an array with y = sg.at(y)[i].set(x), which returns the "
                 "updated array. Other libraries' functions (math, scipy) cannot take traced "
                 "values either: use numpy's.")


def written_into_numpy(e: ValueError) -> TracerConversionError | None:
    """The error symgrad means by numpy's ``y[i] = x`` for a traced ``x``, else None.

    numpy asks ``x`` for ``float()`` and, as a Tracer has ``__getitem__`` (a sequence
    to numpy), replaces the TracerConversionError with "setting an array element with
    a sequence", which points the wrong way."""
    if not (isinstance(e.__cause__, TracerConversionError) and "with a sequence" in str(e)):
        return None
    return TracerConversionError(
        f"a traced value was written into a numpy array (y[i] = x) at "
        f"{user_location(e.__traceback__)}: {NUMPY_HOLDS} x is known only when the compiled "
        f"function runs. {BUILD_INSTEAD}")


def inside_numpy() -> str:
    """A hint when numpy's own code asked for the value (numpy's reductions of an object
    array of traced values, ``np.mean([x, y])``), or scipy's (:func:`scipy_hint`)."""
    hint = scipy_hint()
    if hint:
        return hint
    if not called_from_numpy():
        return ""
    return (" It was numpy's own code that needed the value: numpy computes with the "
            "elements themselves when given a list or numpy array of traced values "
            "(np.mean([x, y]), np.max(np.array([x, y]))). Give numpy functions one traced "
            "array instead: np.stack([x, y]) or sg.array([x, y]).")


def escaped() -> EscapedTracerError:
    return EscapedTracerError(
        f"a traced value was used after its function returned (at {user_location()}); "
        "do not keep traced values in globals or closures between calls")


def refuse_masked(x: Any, what: str = "") -> None:
    """A TypeError for a ``numpy.ma`` masked array (symgrad computes with every element,
    and ``np.asarray`` would drop the mask silently) or an ``np.matrix`` (whose ``*`` and
    ``**`` are matrix products, where symgrad's are elementwise)."""
    if isinstance(x, np.matrix):
        raise TypeError(
            f"{what or 'a value'} is an np.matrix: its `*` and `**` are matrix products, "
            "but symgrad traces arrays, whose operators are elementwise, so the numbers "
            "would differ silently. Pass np.asarray(m) instead, and write matrix products "
            "with `@` (np.linalg.matrix_power for a power)")
    ma = sys.modules.get("numpy.ma")  # not imported: no masked array can exist
    # (another thread may be importing it: no MaskedArray yet, so none can exist either)
    masked = getattr(ma, "MaskedArray", None)
    if masked is not None and isinstance(x, masked):
        raise TypeError(
            f"{what or 'a value'} is a numpy.ma masked array: symgrad computes with every "
            "element, so its mask would be dropped silently. Pass x.filled(value) "
            "(masked elements replaced by a value, e.g. 0.0 in a sum) or x.compressed() "
            "(the unmasked elements only, flat) instead")


#: what a user's ndarray subclass may define without changing numpy's numbers (the
#: making, showing, pickling and attributes of an array, and writes, which a trace refuses)
_KEEPS_NUMPY = frozenset({
    "__new__", "__init__", "__array_finalize__", "__repr__", "__str__", "__format__",
    "__reduce__", "__reduce_ex__", "__setstate__", "__getstate__", "__copy__",
    "__deepcopy__", "__doc__", "__module__", "__qualname__", "__dict__", "__weakref__",
    "__init_subclass__", "__class_getitem__", "__setitem__", "__setattr__", "__delattr__",
    "__annotations__", "__firstlineno__", "__static_attributes__", "__slots__", "__hash__"})


def refuse_overriding(x: Any, what: str) -> None:
    """A TypeError for an argument of a user's ndarray subclass that redefines what numpy
    does (an operator, a method, ``__array_ufunc__``): traced, the argument runs numpy's
    operations, not its class's, so the numbers would differ silently."""
    cls = type(x)
    if cls is np.ndarray or not isinstance(x, np.ndarray) or cls.__module__.partition(
            ".")[0] == "numpy":  # (np.memmap, np.recarray; np.matrix: refuse_masked)
        return
    changed = sorted({name for c in cls.__mro__[:cls.__mro__.index(np.ndarray)]
                      for name in vars(c) if hasattr(np.ndarray, name)} - _KEEPS_NUMPY)
    if changed:
        raise TypeError(
            f"{what or 'a value'} is a {cls.__qualname__} (an ndarray subclass) that "
            f"redefines {', '.join(changed[:6])}{', ...' if len(changed) > 6 else ''}: "
            "symgrad traces an argument with numpy's operations, not its class's, so the "
            "numbers would differ silently. Pass np.asarray(x) and apply what the class "
            "does in the function instead")


def complex_aval(aval: Aval) -> bool:
    """Whether ``aval`` (or a part of a tuple) is complex."""
    return aval.dtype in COMPLEXES or any(map(complex_aval, aval.parts))


def refuse_complex(name: str, inputs: Sequence[Atom] = ()) -> TypeError:
    """The error for a complex operand of a primitive not declared ``complex=True``:
    numpy has no complex meaning for some (``floor``, ``logaddexp``, ``hypot``), and
    the others' derivatives (a branch cut) are not symgrad's to guess."""
    shown = ", ".join(str(a.aval) for a in inputs)
    return TypeError(
        f"{name} does not take complex operands (got {shown}) in symgrad: complex numbers "
        "are supported through arithmetic, exp/log/sqrt/power, sin/cos/tanh, sums and means, "
        "matmul, indexing and reshaping, where, comparisons, maximum/minimum, sorting, clip, "
        "sign, rint, np.real/imag/conj/abs/angle and np.fft (see README, 'Complex "
        "numbers'). numpy itself refuses complex floor, ceil, trunc, logaddexp, hypot and "
        "arctan2; for the others, compute with np.real(z) and np.imag(z) separately")


def subject(x: Any, what: str) -> str:
    """How error messages name ``x``: its repr is formatted only when one is raised."""
    return what or f"{type(x).__name__} {x!r:.60}"
