"""Numba lowering of :mod:`symgrad.prims.linalg`."""

from __future__ import annotations

from collections.abc import Callable

from ....core.index_text import loop_nest
from ....core.ir import Aval
from ....prims import linalg as P
from ....prims.linalg import _SLOGDET_PARTS
from ..scope import complex_arg
from .table import lower


def _contiguous(x: str) -> str:
    # Numba's np.dot warns and runs slower on non-contiguous (e.g. transposed)
    # operands; ascontiguousarray returns a contiguous array as it is. Codegen
    # writes ``c.T`` only for a C-contiguous c: F-contiguous, which BLAS reads as is
    return x if x.endswith(".T") else f"np.ascontiguousarray({x})"


def widened(args: list[str], avals: list[Aval], out_aval: Aval) -> list[str]:
    """The operands of a LAPACK/BLAS call as the result's dtype: Numba's ``np.dot`` and
    ``np.linalg`` take one dtype, so a float32 operand of a float64 result (numpy's
    promotion) is converted first."""
    return [f"{a}.astype(np.{out_aval.dtype})" if v.dtype != out_aval.dtype and v.shape
            else a for a, v in zip(args, avals)]


#: the functions of :mod:`symgrad.backend.blas` (``bl``) for ``a.T @ b``, by dtype
_NUMPY_GEMM = {"float32": "sdot_tn", "float64": "ddot_tn"}


def _matmul_emit(out: str, args: list[str], avals: list[Aval], out_aval: Aval) -> list[str]:
    (x, y), (xa, ya) = widened(args, avals, out_aval), avals
    if xa.ndim == ya.ndim == 2 and x.endswith(".T") and not y.endswith(".T") and \
            out_aval.dtype in _NUMPY_GEMM:
        from ...blas import AVAILABLE  # (imports Numba: when a kernel is written, only)
        if AVAILABLE:  # numpy's gemm of a transposed first operand (symgrad.backend.blas)
            return [f"{out} = bl.{_NUMPY_GEMM[out_aval.dtype]}({x[:-2]}, {y})"]
    if xa.ndim <= 2:
        return [f"{out} = np.dot({_contiguous(x)}, {_contiguous(y)})"]
    # a stack of matrices: one BLAS product per batch index
    batch = range(xa.ndim - 2)
    dims = [f"{x}.shape[{k}]" for k in batch] + [f"{x}.shape[{xa.ndim - 2}]",
                                                 f"{y}.shape[{xa.ndim - 1}]"]
    lines = [f"{out} = np.empty(({', '.join(dims)}), dtype=np.{out_aval.dtype})"]
    if out_aval.dtype in ("float32", "float64"):
        # symgrad.backend.batched: each slice read where it lies, written into out
        # (the batch axes before the last as loops here: a 3-d stack per call)
        nest, depth = loop_nest([f"{x}.shape[{k}]" for k in batch[:-1]])
        index = "".join(f"i{k}, " for k in batch[:-1])
        at = (lambda a: f"{a}[{index[:-2]}]") if index else (lambda a: a)
        return [*lines, *nest, "    " * depth + f"bm.matmul({at(x)}, {at(y)}, {at(out)})"]
    nest, depth = loop_nest([f"{x}.shape[{k}]" for k in batch])
    lines += nest
    index = ", ".join(f"i{k}" for k in batch)
    lines.append("    " * depth + f"{out}[{index}] = np.dot("
                 f"{_contiguous(f'{x}[{index}]')}, {_contiguous(f'{y}[{index}]')})")
    return lines


def _stack_emit(call: str, batch: int, out: str, args: list[str], shape: str,
                dtype: str = "float64") -> list[str]:
    """``out = call`` for one matrix, else a loop that fills ``out[i0, ...]`` per matrix.

    ``call`` is a template over the operands, indexed by the batch index in the loop.
    """
    if not batch:
        return [f"{out} = {call.format(*args)}"]
    index = ", ".join(f"i{k}" for k in range(batch))
    lines = [f"{out} = np.empty({shape}{complex_arg(dtype)})"]
    nest, depth = loop_nest([f"{args[0]}.shape[{k}]" for k in range(batch)])
    lines += nest
    lines.append("    " * depth + f"{out}[{index}] = "
                 + call.format(*(f"{a}[{index}]" for a in args)))
    return lines


def _stack_shape(x: str, ndim: int) -> str:
    dims = [f"{x}.shape[{k}]" for k in range(ndim)]
    return f"({', '.join(dims)}{',' if ndim == 1 else ''})"


def _linalg_emit(call: str) -> Callable:
    """Numba emit of a square-matrix function, looping over a stack's batch axes.

    The output's shape is a prefix of the last operand's (x for inv, det; b for solve).
    """
    def emit(out: str, args: list[str], avals: list[Aval], out_aval: Aval) -> list[str]:
        args = widened(args, avals, out_aval)
        return _stack_emit(call, avals[0].ndim - 2, out, args,
                           _stack_shape(args[-1], out_aval.ndim), out_aval.dtype)
    return emit


def _slogdet_emit(out, args, avals, out_aval, *, part) -> list[str]:
    # (the operand as it is: a complex matrix's log|det| is real, its result's dtype)
    call = f"np.linalg.slogdet({{}})[{_SLOGDET_PARTS.index(part)}]"
    return _stack_emit(call, avals[0].ndim - 2, out, args,
                       _stack_shape(args[-1], out_aval.ndim), out_aval.dtype)


def _linear_emit(out: str, args: list[str], avals: list[Aval], out_aval: Aval) -> list[str]:
    """One BLAS product of ``x``'s rows (its leading axes as one) by ``w.T``, plus the
    bias when given."""
    (x, w, *bias), xa = widened(args, avals, out_aval), avals[0]
    lead = [f"{x}.shape[{k}]" for k in range(xa.ndim - 1)]
    rows = f"np.ascontiguousarray({x}).reshape(({' * '.join(lead) or '1'}, {x}.shape[-1]))"
    product = f"np.dot({rows}, np.ascontiguousarray({w}).T)"
    if bias:
        product = f"({product} + {bias[0]})"
    if xa.ndim == 2:
        return [f"{out} = {product}"]
    return [f"{out} = {product}.reshape(({''.join(d + ', ' for d in lead)}{w}.shape[0],))"]


lower(P.matmul_p, _matmul_emit, transposed_operands=True)
lower(P.linear_p, _linear_emit)
lower(P.inv_p, _linalg_emit("np.linalg.inv({})"))
lower(P.det_p, _linalg_emit("np.linalg.det({})"))
lower(P.slogdet_p, _slogdet_emit)
lower(P.solve_p, _linalg_emit("np.linalg.solve({}, {})"))
