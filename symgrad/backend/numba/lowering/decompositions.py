"""Numba lowering of :mod:`symgrad.prims.decompositions` and :mod:`symgrad.prims.svd`."""

from __future__ import annotations

from typing import Any

from ....core.ir import COMPLEXES, Aval
from ....prims import decompositions as P
from ....prims import svd as SVD
from ....prims.decompositions import _COMPLEX_EIG
from ....prims.svd import _SVD_PARTS
from ..scope import complex_arg
from .linalg import widened
from .table import lower


def _emit(call: str, trailing: Any, before: tuple[str, ...] = ()) -> Any:
    """Numba emit of ``out = call`` per matrix (``call`` and the lines ``before`` it are
    templates over the operands and parameters); ``trailing(dim)`` lists the source of
    the output's last axes, given ``dim(k)``, the length of the matrix's axis k."""
    def emit(out: str, args: list[str], avals: list[Aval], out_aval: Aval,
             **params: Any) -> list[str]:
        def fill(template: str, operands: list[str]) -> str:
            return template.format(*operands, **params)
        batch = avals[0].ndim - 2
        if not batch:
            return [fill(b, args) for b in before] + [f"{out} = {fill(call, args)}"]
        x = args[0]
        dims = [f"{x}.shape[{k}]" for k in range(batch)]
        dims += trailing(lambda k: f"{x}.shape[{batch + k}]")
        index = ", ".join(f"i{k}" for k in range(batch))
        lines = [f"{out} = np.empty(({', '.join(dims)},){complex_arg(out_aval.dtype)})"]
        for k in range(batch):
            lines.append("    " * k + f"for i{k} in range({x}.shape[{k}]):")
        each = [f"{a}[{index}]" for a in args]
        lines += ["    " * batch + fill(b, each) for b in before]
        lines.append("    " * batch + f"{out}[{index}] = {fill(call, each)}")
        return lines
    return emit


def _square(dim) -> list[str]:
    return [dim(0), dim(1)]


def _vector(dim) -> list[str]:
    return [dim(1)]


def _k(dim) -> str:
    return f"min({dim(0)}, {dim(1)})"


def _eigh_emit(out, args, avals, out_aval, *, part, uplo):
    call = "np.linalg.eigh({0})" if uplo == "L" else "la.eigh_upper({0})"
    k = 0 if part == "values" else 1
    return _emit(f"{call}[{k}]", _vector if k == 0 else _square)(out, args, avals, out_aval)


def _eig_emit(out, args, avals, out_aval, *, part):
    k = 0 if part == "values" else 1
    # a real matrix must have real eigenvalues (else: refused); a complex one has complex
    check = () if avals[0].dtype in COMPLEXES else (
        "if np.any(np.linalg.eigvals({0} + 0j).imag != 0.0):",
        f"    raise ValueError({_COMPLEX_EIG!r})")
    return _emit(f"np.linalg.eig({{0}})[{k}]", _vector if k == 0 else _square, check)(
        out, args, avals, out_aval)


def _svd_trailing(part: str):
    return {"u": lambda d: [d(0), _k(d)], "s": lambda d: [_k(d)],
            "vh": lambda d: [_k(d), d(1)]}[part]


def _svd_emit(out, args, avals, out_aval, *, part):
    if part != "uv":
        return _emit(f"np.linalg.svd({{0}}, full_matrices=False)[{_SVD_PARTS.index(part)}]",
                     _svd_trailing(part))(out, args, avals, out_aval)
    # a complex matrix's singular vectors: U above Vh^T, from one decomposition
    t = f"{out}_svd"
    return _emit(f"np.concatenate(({t}[0], np.ascontiguousarray(np.transpose({t}[2]))), "
                 "axis=0)", lambda d: [f"{d(0)} + {d(1)}", _k(d)],
                 (f"{t} = np.linalg.svd({{0}}, full_matrices=False)",))(
        out, args, avals, out_aval)


def _lstsq_emit(out, args, avals, out_aval, *, rcond):
    args = widened(args, avals, out_aval)
    k = f"{args[1]}.shape[{avals[1].ndim - 1}]"  # a stack's right-hand sides are matrices
    return _emit(f"np.linalg.lstsq({{0}}, {{1}}, {rcond!r})[0]", lambda d: [d(1), k])(
        out, args, avals, out_aval)


lower(P.cholesky_p, _emit("np.linalg.cholesky({0})", _square))
lower(P.eigh_p, _eigh_emit)
lower(P.eig_p, _eig_emit)
lower(P.qr_p, lambda out, args, avals, out_aval, *, part: _emit(
        f"np.linalg.qr({{0}})[{0 if part == 'q' else 1}]",
        (lambda d: [d(0), _k(d)]) if part == "q" else (lambda d: [_k(d), d(1)]))(
        out, args, avals, out_aval))
lower(SVD.svd_p, _svd_emit)
lower(SVD.pinv_p, _emit("np.linalg.pinv({0}, {rcond!r})", lambda d: [d(1), d(0)]))
lower(SVD.lstsq_p, _lstsq_emit)
