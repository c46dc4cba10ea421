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


#: scipy's Python functions that symgrad has under another name: ``scipy.special.logsumexp``
#: -> ``sg.scipy.special.logsumexp``, ``scipy.stats.norm.logpdf`` -> ... (filled by
#: :mod:`symgrad.numpy_api.scipy_namespace` and :mod:`symgrad.numpy_api.scipy_stats`)
SCIPY_EQUIVALENTS: dict[str, str] = {}


def _scipy_function(frame: FrameType) -> str | None:
    """``scipy.stats.norm.logpdf`` for a frame of scipy's code running a distribution's
    method (``self`` is the distribution), ``scipy.special.logsumexp`` for a function."""
    module = frame.f_globals.get("__name__", "")
    if not isinstance(module, str) or not module.startswith("scipy."):
        return None
    package = ".".join(module.split(".")[:2])
    owner = frame.f_locals.get("self")
    dist = getattr(owner, "name", None) if owner is not None else None
    if isinstance(dist, str):
        return f"{package}.{dist}.{frame.f_code.co_name}"
    return f"{package}.{frame.f_code.co_name}"


def scipy_hint() -> str:
    """When scipy's code asked for a traced value (its Python functions convert their
    arguments to numpy arrays, or branch on them), which function of the user's call it
    was, and symgrad's version of it where there is one."""
    frame: FrameType | None = sys._getframe(1)
    outermost = None
    while frame is not None:
        name = _scipy_function(frame)
        if name is not None:
            outermost = name  # the user's call is the outermost scipy frame
        elif outermost is not None:
            path = os.path.abspath(frame.f_code.co_filename)
            if not path.startswith((_PACKAGE_DIR, _NUMPY_DIR)):
                break
        frame = frame.f_back
    if outermost is None:
        return ""
    same = SCIPY_EQUIVALENTS.get(outermost)
    if same is None:
        parent = outermost.rpartition(".")[0]  # scipy.stats.t, or scipy.special
        available = sorted(v for k, v in SCIPY_EQUIVALENTS.items()
                           if k.rpartition(".")[0] == parent)
        if not available and parent.startswith("scipy.stats."):
            available = sorted({v.rpartition(".")[0] for k, v in SCIPY_EQUIVALENTS.items()
                                if k.startswith("scipy.stats.")})
        return (f" It was scipy's {outermost} that needed the value: scipy's Python code "
                "converts its arguments to numpy arrays, which traced values cannot be. "
                "symgrad has no version of it"
                + (f" (it has {', '.join(available)})" if available else "")
                + ": write it with numpy functions, or wrap it in "
                "sg.pure_callback(..., vjp=...).")
    return (f" It was scipy's {outermost} that needed the value: scipy's Python code "
            "converts its arguments to numpy arrays, which traced values cannot be. "
            f"Call {same} instead: the same function, for traced values.")


def called_from_numpy() -> bool:
    """Whether the innermost code outside symgrad running now is numpy's."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(_PACKAGE_DIR):
            return path.startswith(_NUMPY_DIR)
        frame = frame.f_back
    return False
