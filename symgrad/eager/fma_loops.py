"""LLVM's fused multiply-add over arrays, as Numba loops (:func:`.bf16.fma` calls them
where eager kernels are on). Module-level functions, so that Numba's disk cache holds
them across processes; imported on first use (it imports Numba)."""

from __future__ import annotations

from typing import Any

from numba import njit

from ..backend.vecmath import _fma as _fma64
from ..backend.vecmath32 import _fma as _fma32


def _loop64(a, alpha, b, out):  # pragma: no cover (Numba)
    for i in range(out.size):
        out[i] = _fma64(alpha[i], b[i], a[i])


def _loop32(a, alpha, b, out):  # pragma: no cover (Numba)
    for i in range(out.size):
        out[i] = _fma32(alpha[i], b[i], a[i])


_OPTIONS: dict[str, Any] = {"cache": True, "nogil": True, "error_model": "numpy"}
loop64 = njit(**_OPTIONS)(_loop64)  # out = a + alpha * b, rounded once (float64)
loop32 = njit(**_OPTIONS)(_loop32)  # (float32)
