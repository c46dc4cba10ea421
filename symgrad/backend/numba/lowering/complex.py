"""Numba lowering of the complex-number primitives (:mod:`symgrad.prims.complex`) and
the FFT (:mod:`symgrad.prims.fft`).

Kernels take complex128 and complex64 values (README, "Complex numbers"): ``real``,
``imag``, ``conj`` and ``|z|`` are numpy's functions, which Numba compiles for complex
scalars and arrays. Numba has no FFT: an ``fft`` equation runs between kernels
(:data:`.table.INTERPRETED`), numpy's ``fftn``/``rfftn``/``irfftn`` on the
interpreter, as a Python callback does. That costs a return to Python and a
call into the next kernel per FFT (measured: about 4 us of CPU per FFT of a
64-element vector, against 1.5 us for numpy's transform alone; see the report
of issue 28), and a graph with an FFT compiles one kernel per piece between FFTs.
"""

from __future__ import annotations

from typing import Any

from ....core.ir import COMPLEXES, Graph, has_complex, subgraphs
from ....prims import complex as C
from ....prims import fft as F
from .table import interpreted, lower

lower(C.real_p, "np.real({0})", cheap=True)
lower(C.imag_p, "np.imag({0})", cheap=True)
lower(C.conj_p, "np.conj({0})", cheap=True)
lower(C.cabs_p, "np.abs({0})", cheap=True)


def _fft_emit(out: str, args: list[str], avals: Any, out_aval: Any, **params: Any) -> list[str]:
    raise NotImplementedError(
        "fft has no Numba source (Numba has no FFT): it runs on numpy between kernels, which "
        "a loop or branch body cannot do; call it outside sg.fori_loop/scan/while_loop/cond, "
        "or use backend='numpy'")


interpreted(F.fft_p, "Numba has no FFT: numpy's fftn/rfftn/irfftn run between the kernels "
            "before and after it", _fft_emit)


#: the primitives whose Numba lowering takes complex operands and results, each checked
#: against the interpreter (tests/test_complex_numba.py, the complex cases of the
#: SymPy table); a complex value met by any other primitive sends the graph to the
#: interpreter (:func:`interpreted_reason`)
KERNEL_PRIMITIVES = frozenset({
    # elementwise: numpy's ufuncs (libm's complex functions) and arithmetic
    "add", "sub", "mul", "div", "pow", "neg", "exp", "log", "log1p", "expm1", "sqrt", "sin",
    "cos", "tan", "tanh", "sinh", "cosh", "arcsin", "arccos", "square", "reciprocal",
    "log2", "log10", "exp2", "arcsinh", "arccosh", "arctanh", "where", "convert",
    "real", "imag", "conj", "cabs",
    # reductions and moves
    "sum", "mean", "count", "prod", "broadcast_to", "reshape", "transpose",
    # indexing
    "slice", "unslice", "gather", "scatter_add", "concatenate", "cumsum",
    # linear algebra (Numba's LAPACK calls take complex matrices)
    "matmul", "inv", "det", "solve", "eig", "eigh", "svd",
})


def interpreted_reason(graph: Graph) -> str | None:
    """Why a graph with complex values runs on the interpreter rather than as Numba
    kernels, or None when every equation that sees a complex value lowers (the FFT
    runs between kernels)."""
    for e in graph.eqns:
        held = [sub for _, sub in subgraphs(e)]
        if any(has_complex(sub) for sub in held):
            return f"complex values inside {e.prim.name}'s body (kernels hold loops of reals)"
        dtypes = {a.dtype for a in (*e.inputs, e.out)}
        if not dtypes & set(COMPLEXES) or e.prim is F.fft_p:
            continue
        if e.prim.name not in KERNEL_PRIMITIVES:
            return f"primitive {e.prim.name} has no complex Numba kernel"
        if e.prim.name == "eigh" and e.params.get("uplo") == "U":
            return ("eigh of a complex matrix's upper triangle (Numba's eigh reads the lower "
                    "one, and symgrad's own reads real matrices)")
    return None
