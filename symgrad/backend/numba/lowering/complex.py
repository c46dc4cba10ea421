"""Numba lowering of the complex-number primitives (:mod:`symgrad.prims.complex`) and
the FFT (:mod:`symgrad.prims.fft`).

Kernels take complex128 and complex64 values (README, "Complex numbers"): ``real``,
``imag``, ``conj`` and ``|z|`` are numpy's functions, which Numba compiles for complex
scalars and arrays; the transcendental functions, ``sign`` and ``**`` are numpy's own
(:mod:`symgrad.backend.npymath`, called from :mod:`.elementwise`: libm's ``clog``,
``ctanh``... as numpy calls them, and numpy's compositions: the same bits, where
Numba's own differ, by up to every digit). Numba has no FFT: an ``fft`` equation at
the top of a graph runs between kernels (:data:`.table.INTERPRETED`), numpy's
``fftn``/``rfftn``/``irfftn`` on the interpreter, as a Python callback does: the
backend's existing cut around host primitives. It costs a return to Python and a call
into the next kernel per FFT, and a kernel to compile per piece between FFTs.
Measured (process time per call, a loaded 2-core machine): the gradient of
``sum(abs(rfft(x))**2)`` (two FFTs, one kernel between them) takes 0.023 ms at n = 8
(the interpreter: 0.057 ms; numpy's rfft and irfft alone: 0.007 ms) and 3.6-4.4 ms at
n = 65536 (interpreter 3.6-4.9 ms; numpy's transforms 2.0-2.6 ms). Inside a loop or
branch body, and in an exported module, the kernel calls numpy's transform in an
object-mode block (:func:`_fft_emit`, :data:`.table.IN_KERNELS`): numpy's bits, about
1 us more per call than from Python, where the alternatives were a radix FFT of our
own (not numpy's pocketfft bits, and Bluestein's algorithm for other lengths) or the
whole graph on the interpreter (as before: every operation of every step from Python).

A complex value met by a primitive outside :data:`KERNEL_PRIMITIVES`, or by one of
:data:`.table.COMPLEX_INTERPRETED` (complex ``erf``: scipy's) inside a loop or branch
body, sends the whole graph to the interpreter (:func:`interpreted_reason`). Complex
``/`` is numpy's loop (``np.divide``); complex ``*`` is Numba's, which is numpy's
scalar formula where numpy's array loop may use FMA (AVX-512: the last bit differs in
about 4 of 10 random products).
"""

from __future__ import annotations

from typing import Any

from ....core.ir import COMPLEXES, Graph, has_complex, subgraphs
from ....core.trace_errors import complex_aval
from ....prims import complex as C
from ....prims import elementwise as E
from ....prims import fft as F
from ....prims import special as S
from .table import COMPLEX_INTERPRETED, IN_KERNELS, NPYMATH, between, interpreted, lower

lower(C.real_p, "np.real({0})", cheap=True)
lower(C.imag_p, "np.imag({0})", cheap=True)
lower(C.conj_p, "np.conj({0})", cheap=True)
lower(C.cabs_p, "np.abs({0})", cheap=True)


def _complex_emit(out: str, args: list[str], avals: Any, out_aval: Any) -> list[str]:
    """``x + iy``, each part as it is (``complex(x, y)``; float32 parts widen exactly)."""
    (x, y), kind = args, f"np.{out_aval.dtype}"
    if not out_aval.shape:
        return [f"{out} = {kind}(complex({x}, {y}))"]
    return [f"{out} = np.empty(np.broadcast({x}, {y}).shape, {kind})",
            f"{out}.real[...] = {x}", f"{out}.imag[...] = {y}"]


lower(C.complex_p, _complex_emit, cheap=True)


def _fft_emit(out: str, args: list[str], avals: Any, out_aval: Any, *, fft_type: str,
              axes: tuple[int, ...], lengths: tuple[int, ...], norm: str) -> list[str]:
    """numpy's transform in an object-mode block (Numba has no FFT,
    :func:`symgrad.backend.npymath.fft_complex128`...): where a kernel holds an ``fft``
    equation (a loop or branch body, an exported module), the values are numpy's
    ``fftn``/``rfftn``/``irfftn``, to the bit, for about 1 us more per call than from
    Python (measured: a 3 x 8 fft in a kernel's loop 8.1 us, from Python 7.2 us)."""
    (x,) = args
    shape = "(" + "".join(f"{d}, " for d in out_aval.shape) + ")"
    name = {"fft": "fftn", "ifft": "ifftn", "rfft": "rfftn", "irfft": "irfftn"}[fft_type]
    return [f"{out} = nm.fft_{out_aval.dtype}({x}, {name!r}, {axes!r}, {norm!r}, "
            f"{lengths!r}).reshape({shape})"]


interpreted(F.fft_p, "Numba has no FFT: numpy's fftn, ifftn, rfftn or irfftn", _fft_emit)
IN_KERNELS.add(F.fft_p)  # (inside a body, or exported: an object-mode block, _fft_emit)

# Numba's own complex functions that are not numpy's (measured against numpy on complex
# values from 1e-300 to 1e200 in modulus, near |z| = 1 and near the axes): these run
# numpy's, between kernels, where an operand is complex
# (where kernels call numpy's own, symgrad.backend.npymath, these are kernel code: NPYMATH)
_NEAR_ONE = "Numba's complex log loses digits near |z| = 1 (1.6e-9 relative where numpy's is exact)"
_NUMBAS = {
    E.log_p: _NEAR_ONE, S.log2_p: _NEAR_ONE, S.log10_p: _NEAR_ONE,
    E.expm1_p: "Numba's complex expm1 is exp(z) - 1 (all digits lost at |z| = 1e-17)",
    E.tanh_p: "Numba's complex tanh overflows to nan for |Re z| > 355 (numpy's gives +-1)",
    S.arccosh_p: "Numba's complex arccosh loses digits (2e-11 relative against numpy)",
    E.sign_p: "Numba's complex sign is nan where a part is infinite (numpy's: +-1 or +-1j)",
    E.xlogy_p: "xlogy of a complex y takes its log: " + _NEAR_ONE,
}
COMPLEX_INTERPRETED.update({} if NPYMATH else _NUMBAS)
COMPLEX_INTERPRETED.update({
    S.erf_p: "Numba has no complex erf: scipy.special's (Faddeeva's algorithm)",
    S.erfc_p: "Numba has no complex erfc: scipy.special's (Faddeeva's algorithm)",
})


#: the primitives whose Numba lowering takes complex operands and results, each checked
#: against the interpreter (tests/test_complex_numba.py, the complex cases of the
#: SymPy table); a complex value met by any other primitive sends the graph to the
#: interpreter (:func:`interpreted_reason`)
KERNEL_PRIMITIVES = frozenset({
    # elementwise: numpy's functions (symgrad.backend.npymath: libm's complex functions as
    # numpy calls them) and arithmetic; log, log2, log10, expm1, tanh, arccosh, sign and
    # xlogy where NPYMATH (else Numba's own differ: between kernels)
    *(p.name for p in _NUMBAS),
    "add", "sub", "mul", "div", "pow", "neg", "exp", "log1p", "sqrt", "sin", "cos", "tan",
    "sinh", "cosh", "arcsin", "arccos", "arctan", "square", "reciprocal", "exp2", "arcsinh",
    "arctanh", "sinc", "where", "convert",
    "real", "imag", "conj", "cabs", "complex",
    # numpy's order of complex values (lowering/elementwise.py's _complex_comparison)
    "gt", "ge", "lt", "le", "eq", "ne", "maximum", "minimum",
    "rint",  # (each part rounded: numpy's bits, complex128 and complex64)
    # reductions and moves
    "sum", "mean", "count", "prod", "broadcast_to", "reshape", "transpose",
    # indexing
    "slice", "unslice", "gather", "scatter_add", "concatenate", "cumsum",
    "take_along", "scatter_along", "windows", "unwindows",
    # linear algebra (Numba's LAPACK calls take complex matrices)
    "matmul", "inv", "det", "slogdet", "solve", "eig", "eigh", "svd", "cholesky", "qr",
    "cumprod", "pinv", "lstsq",
    # control flow: loops and branches whose bodies hold complex values (each body's
    # equations are checked too)
    "loop", "while", "cond", "proj",
})


def interpreted_reason(graph: Graph, inside: str = "") -> str | None:
    """Why a graph with complex values runs on the interpreter rather than as Numba
    kernels, or None when every equation that sees a complex value lowers (the FFT and
    :data:`.table.COMPLEX_INTERPRETED` run between kernels, which a loop or branch body
    (``inside``: the primitive holding it) cannot do)."""
    for e in graph.eqns:
        for _, sub in subgraphs(e):
            reason = interpreted_reason(sub, e.prim.name) if has_complex(sub) else None
            if reason is not None:
                return reason
        dtypes = {a.dtype for a in (*e.inputs, e.out)}
        if not dtypes & set(COMPLEXES) and not complex_aval(e.out.aval):
            continue
        cut = between(e)
        if cut is not None and inside and e.prim not in IN_KERNELS:
            return (f"complex {e.prim.name} inside {inside}'s body: {cut}; numpy's runs "
                    "between kernels, which a body inside a kernel cannot")
        if cut is not None:
            continue  # (between kernels, or an FFT's object-mode block in a body)
        if e.prim.name not in KERNEL_PRIMITIVES:
            return f"primitive {e.prim.name} has no complex Numba kernel"
    return None
