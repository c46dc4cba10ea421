"""Exceptions symgrad raises for problems in user code or user input.

Each message says what happened, where (the user's source line), and what to
do instead. Internal inconsistencies raise :class:`symgrad.core.ir.IRError`.
"""

from __future__ import annotations

import os
import sys
import traceback
from types import FrameType, TracebackType

import numpy as np

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # symgrad/
_NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__ or ""))


#: PyTorch's words for a gradient asked of a non-scalar output without a cotangent
SCALAR_OUTPUT_ERROR = "grad can be implicitly created only for scalar outputs"


class TracerBoolConversionError(TypeError):
    """Python control flow (``if``, ``while``, ``and``, ``bool()``) on a traced value."""


class TracerConversionError(TypeError):
    """A traced value was turned into a concrete Python or numpy object."""


class UnsupportedFunctionError(NotImplementedError):
    """A numpy function or method symgrad cannot trace (yet)."""


class ShapeError(ValueError, RuntimeError):
    """Operands whose shapes do not fit the operation: a ValueError for numpy code and a
    RuntimeError for PyTorch code, which catches shape errors as RuntimeError."""


class EscapedTracerError(RuntimeError):
    """A traced value was used after the trace that made it had finished."""


class RetraceWarning(UserWarning):
    """A transformed function reads a value from outside its arguments that its guards
    cannot cover, so it is traced again on every call (warned once per function)."""


class Refused:
    """What a VJP rule gives for an input it cannot differentiate (a custom_vjp's ``bwd``
    in its cotangent: forward mode): the adjoint raises ``error`` only if that input
    depends on what is differentiated, so a rule need not know which inputs do."""

    __slots__ = ("error",)

    def __init__(self, error: Exception):
        self.error = error


def user_location(tb: TracebackType | None = None) -> str:
    """``file:line (function)`` of the innermost frame outside symgrad and numpy: of the
    code running now, or of the traceback ``tb`` of an exception caught."""
    if tb is None:
        frames: list[tuple[FrameType, int]] = []
        frame: FrameType | None = sys._getframe(1)
        while frame is not None:
            frames.append((frame, frame.f_lineno))
            frame = frame.f_back
    else:
        frames = list(traceback.walk_tb(tb))[::-1]  # innermost first
    for frame, line in frames:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith((_PACKAGE_DIR, _NUMPY_DIR)):
            return f"{frame.f_code.co_filename}:{line} (in {frame.f_code.co_name})"
    return "<unknown location>"


def called_from_numpy() -> bool:
    """Whether the innermost code outside symgrad running now is numpy's."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(_PACKAGE_DIR):
            return path.startswith(_NUMPY_DIR)
        frame = frame.f_back
    return False
