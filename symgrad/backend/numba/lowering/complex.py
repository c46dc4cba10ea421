"""Numba lowering of the complex-number primitives (:mod:`symgrad.prims.complex`) and
the FFT (:mod:`symgrad.prims.fft`).

A graph with complex values runs on the interpreter today
(:func:`symgrad.transforms.pipeline.program`), so these entries spell each primitive in
numpy for the day kernels take complex values; Numba has no FFT of its own.
"""

from __future__ import annotations

from typing import Any

from ....core.ir import Aval
from ....prims import complex as C
from ....prims import fft as F
from .table import lower

lower(C.real_p, "np.real({0})", cheap=True)
lower(C.imag_p, "np.imag({0})", cheap=True)
lower(C.conj_p, "np.conj({0})", cheap=True)
lower(C.cabs_p, "np.abs({0})", cheap=True)


def _emit_fft(out: str, args: list[str], avals: Any, out_aval: Aval, *, fft_type: str,
              axes: tuple[int, ...], lengths: tuple[int, ...], norm: str) -> list[str]:
    s = f"s={lengths!r}, " if fft_type == "irfft" else ""
    return [f"{out} = np.fft.{F._NUMPY[fft_type]}({args[0]}, {s}axes={axes!r}, norm={norm!r})"
            f".astype(np.{out_aval.dtype})"]


lower(F.fft_p, _emit_fft)
