"""Numba lowering of :mod:`symgrad.prims.sorting`."""

from __future__ import annotations

from ....core.ir import COMPLEXES
from ....prims import sorting as P
from .table import lower


def _batch_loops(ndim: int, extent: str) -> tuple[list[str], str]:
    """Loops over the first ``ndim - 1`` axes (``extent.format(k)`` is the length of axis
    k), and the index text of the batch position with a trailing comma (or "")."""
    lines = ["    " * k + f"for i{k} in range({extent.format(k)}):" for k in range(ndim - 1)]
    return lines, "".join(f"i{k}, " for k in range(ndim - 1))


def _argsort_emit(out, args, avals, out_aval) -> list[str]:
    (x,), (aval,) = args, avals
    if aval.ndim == 1:  # Numba's mergesort is stable, as numpy's "stable"
        return [f'{out} = np.argsort({x}, kind="mergesort").astype(np.float64)']
    loops, at = _batch_loops(aval.ndim, x + ".shape[{}]")
    pad = "    " * (aval.ndim - 1)
    return [f"{out} = np.empty({x}.shape)", *loops,
            pad + f'{out}[{at}:] = np.argsort({x}[{at}:], kind="mergesort")']


def _to_int_emit(out, args, avals, out_aval) -> list[str]:
    (x,) = args
    return [f"{out} = {x}.astype(np.int64)" if out_aval.shape else f"{out} = int({x})"]


def _complex(aval) -> str:
    """The dtype argument of a complex result's ``np.empty``/``np.zeros`` (else float64)."""
    return f", np.{aval.dtype}" if aval.dtype in COMPLEXES else ""


def _take_along_emit(out, args, avals, out_aval) -> list[str]:
    (x, idx), (aval, _) = args, avals
    n = aval.ndim
    loops, at = _batch_loops(n, idx + ".shape[{}]")
    j = f"i{n - 1}"
    pad, k = "    " * n, f"{out}_at"  # (a name of its own: the kernel's are v1, x, k...)
    return [f"{out} = np.empty({idx}.shape{_complex(out_aval)})", *loops,
            "    " * (n - 1) + f"for {j} in range({idx}.shape[{n - 1}]):",
            pad + f"{k} = int({idx}[{at}{j}])",
            # np.take_along_axis's IndexError (indices computed by np.argsort are in
            # range; an int64 argument's may not be, and Numba does not check bounds)
            pad + f"if {k} < 0 or {k} >= {x}.shape[{n - 1}]:",
            pad + '    raise IndexError("take_along: index out of bounds")',
            pad + f"{out}[{at}{j}] = {x}[{at}{k}]"]


def _scatter_along_emit(out, args, avals, out_aval, *, size) -> list[str]:
    (g, idx), (aval, _) = args, avals
    n = aval.ndim
    shape = "".join(f"{g}.shape[{k}], " for k in range(n - 1)) + f"{size},"
    loops, at = _batch_loops(n, g + ".shape[{}]")
    j = f"i{n - 1}"
    pad, k = "    " * n, f"{out}_at"
    return [f"{out} = np.zeros(({shape}){_complex(out_aval)})", *loops,
            "    " * (n - 1) + f"for {j} in range({g}.shape[{n - 1}]):",
            pad + f"{k} = int({idx}[{at}{j}])",
            # the gradient of a gather whose forward never ran in this kernel: the same
            # IndexError (an unchecked position would write outside the array)
            pad + f"if {k} < 0 or {k} >= {size}:",
            pad + '    raise IndexError("take_along: index out of bounds")',
            pad + f"{out}[{at}{k}] += {g}[{at}{j}]"]


def _cumprod_emit(out, args, avals, out_aval, *, axis) -> list[str]:
    (x,), (aval,) = args, avals
    if aval.ndim == 1:
        return [f"{out} = np.cumprod({x})"]
    at = ":, " * axis
    return [f"{out} = {x}.copy()",
            f"for i0 in range({out}.shape[{axis}] - 1):",
            f"    {out}[{at}i0 + 1] *= {out}[{at}i0]"]


lower(P.argsort_p, _argsort_emit)
lower(P.to_int_p, _to_int_emit)
lower(P.take_along_p, _take_along_emit)
lower(P.scatter_along_p, _scatter_along_emit)
lower(P.cumprod_p, _cumprod_emit)
