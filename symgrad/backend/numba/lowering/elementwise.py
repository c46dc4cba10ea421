"""Numba lowering of the elementwise primitives (:mod:`symgrad.prims.elementwise`,
:mod:`symgrad.prims.special`).

Primitives of a numpy ufunc with no entry here lower to ``np.<ufunc>(...)``
(:func:`.table.lowering`): ``sqrt``, ``tan``, ``arcsinh``, ``hypot``...
An entry gives another spelling, the :mod:`symgrad.backend.vecmath` function fused loops
call (``vectorized``), or ``cheap`` (a fused loop recomputes it where it is read).
Integer ``+ - *`` and negation raise where int64 would wrap (:mod:`.overflow`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ....core.ir import COMPLEXES, Aval
from ....prims import elementwise as E
from ....prims import special as S
from ....prims.overflow import EXACT_LIMIT, TOTAL_LIMIT, inexact_message
from .overflow import checked_emit
from .table import NPYMATH, expression, lower, ufunc_template


def _selection_emit(cond: str, a: str, b: str) -> Callable[..., list[str]]:
    """Numba emit of ``out = a if cond else b`` elementwise, from templates over the operands."""
    def emit(out: str, args: list[str], avals: Any, out_aval: Aval, **params: Any) -> list[str]:
        c, x, y = (t.format(*args, out=out) for t in (cond, a, b))
        if not out_aval.shape:
            return [f"{out} = {x} if {c} else {y}"]
        return [f"{out} = np.where({c}, {x}, {y})"]
    return emit


def _sigmoid_emit(out: str, args: list[str], avals: Any, out_aval: Aval) -> list[str]:
    (x,) = args
    select = _selection_emit("{0} >= 0.0", "1.0 / (1.0 + {out})", "{out} / (1.0 + {out})")
    return [f"{out} = np.exp(-np.abs({x}))", *select(out, args, avals, out_aval)]


def _where_emit(out: str, args: list[str], avals: list[Aval], out_aval: Aval) -> list[str]:
    c, x, y = args
    if not out_aval.shape:
        return [f"{out} = {x} if {c} else {y}"]
    return [f"{out} = np.where({c}, {x}, {y})"]


def _to_float_emit(out: str, args: list[str], avals: Any, out_aval: Aval,
                   exact: str | None = None, total: bool = False) -> list[str]:
    (x,) = args
    lines = ([f"{out} = {x}.astype(np.float64)"] if out_aval.shape
             else [f"{out} = float({x})"])
    if exact is None:  # (else refuse what float64 would round: prims.overflow.check_exact)
        return lines
    if total:
        test = (f"np.sum(np.abs({out})) > {TOTAL_LIMIT!r}" if out_aval.shape
                else f"abs({out}) > {TOTAL_LIMIT!r}")
    else:
        test = f"({x} > {EXACT_LIMIT}) | ({x} < -{EXACT_LIMIT})"
        test = f"np.any({test})" if out_aval.shape else test
    return [*lines, f"if {test}: raise ValueError({inexact_message(exact, total)!r})"]


def _complex_ufunc(real: str, complex_: str) -> Callable[..., list[str]]:
    """Numba emit of ``real`` (a template), or of the ufunc ``complex_`` where a value is
    complex: Numba's ``/`` and ``**`` of complex scalars are Python's, which raise
    ZeroDivisionError at 0 where numpy's give inf or nan (``np.divide`` is numpy's loop:
    the same bits)."""
    def emit(out: str, args: list[str], avals: list[Aval], out_aval: Aval) -> list[str]:
        template = complex_ if out_aval.dtype in COMPLEXES else real
        return [f"{out} = {template.format(*args)}"]
    return emit


#: numpy's function of complex values, by primitive: the one of :mod:`symgrad.backend.npymath`
#: a kernel calls (libm's complex function, as numpy calls it, or numpy's composition:
#: the same bits; Numba's own differ, see npymath). Where libm's complex functions cannot
#: be called so (:data:`.complex.NPYMATH`), Numba's own: log, expm1... run between kernels
NPYMATH_FUNCTIONS = {
    E.exp_p: "cexp", E.log_p: "clog", E.log1p_p: "log1p", E.expm1_p: "expm1",
    E.sqrt_p: "csqrt", E.sin_p: "csin", E.cos_p: "ccos", E.tan_p: "ctan", E.tanh_p: "ctanh",
    E.sinh_p: "csinh", E.cosh_p: "ccosh", E.arcsin_p: "casin", E.arccos_p: "cacos",
    E.arctan_p: "catan", S.arcsinh_p: "casinh", S.arccosh_p: "cacosh", S.arctanh_p: "catanh",
    S.log2_p: "log2", S.log10_p: "log10", S.exp2_p: "exp2", E.sign_p: "sign",
    E.pow_p: "power", E.div_p: "divide",
}


def npymath_call(prim: Any, args: list[str], avals: list[Aval], out_aval: Aval) -> str:
    """``nm.<function>(...)`` of :data:`NPYMATH_FUNCTIONS` for ``prim`` of complex
    ``out_aval``, each operand of another dtype converted to the result's first (numpy's
    loop casts them so)."""
    kind = f"np.{out_aval.dtype}"
    ops = [a if av.dtype == out_aval.dtype else f"{kind}({a})" for a, av in zip(args, avals)]
    return f"nm.{NPYMATH_FUNCTIONS[prim]}({', '.join(ops)})"


def _npymath_emit(prim: Any, real: Callable[..., list[str]] | str | None = None
                  ) -> Callable[..., list[str]]:
    """Numba emit of ``prim``: ``real`` (a template; None: its ufunc) for real values,
    :func:`npymath_call` (numpy's bits) for complex ones where NPYMATH holds."""
    real_emit = expression(real if isinstance(real, str) else ufunc_template(prim)) \
        if not callable(real) else real

    def emit(out: str, args: list[str], avals: list[Aval], out_aval: Aval,
             **params: Any) -> list[str]:
        if out_aval.dtype in COMPLEXES and NPYMATH:
            return [f"{out} = {npymath_call(prim, args, avals, out_aval)}"]
        return real_emit(out, args, avals, out_aval, **params)
    return emit


def _parts(x: str, aval: Aval) -> tuple[str, str]:
    return (f"np.real({x})", f"np.imag({x})") if aval.dtype in COMPLEXES else (x, "0.0")


def _complex_comparison(op: str, args: list[str], avals: list[Aval]) -> str:
    """numpy's comparison of complex values (its ``CLT``, ``CLE``, ... of loops.c): by
    real part, then by imaginary part; a nan imaginary part makes an order of real parts
    false. Numba's own ``<`` of complex numbers is Python's (a TypeError)."""
    (xr, xi), (yr, yi) = map(_parts, args, avals)
    if op in ("==", "!="):
        join = " & " if op == "==" else " | "
        return f"(({xr} {op} {yr}){join}({xi} {op} {yi}))"
    return (f"((({xr} {op[0]} {yr}) & ({xi} == {xi}) & ({yi} == {yi})) | "
            f"(({xr} == {yr}) & ({xi} {op} {yi})))")


def _comparison_emit(op: str) -> Callable[..., list[str]]:
    def emit(out: str, args: list[str], avals: list[Aval], out_aval: Aval) -> list[str]:
        if not any(a.dtype in COMPLEXES for a in avals):
            return [f"{out} = {args[0]} {op} {args[1]}"]
        return [f"{out} = {_complex_comparison(op, args, avals)}"]
    return emit


def _extremum_emit(op: str) -> Callable[..., list[str]]:
    """``np.maximum``/``np.minimum``; of complex values numpy's: the first operand where it
    is ``>=`` (``<=``) the second in numpy's order or has a nan part, else the second."""
    def emit(out: str, args: list[str], avals: list[Aval], out_aval: Aval) -> list[str]:
        if out_aval.dtype not in COMPLEXES:  # numpy's: x where x op y or x is nan, else y
            x, y = args                       # (a tie of 0.0 and -0.0: y; Numba's gives x)
            return [f"{out} = {x} if ({x} {op[0]} {y}) or ({x} != {x}) else {y}"]
        xr, xi = _parts(args[0], avals[0])
        first = f"{_complex_comparison(op, args, avals)} | ({xr} != {xr}) | ({xi} != {xi})"
        dtype = f"np.{out_aval.dtype}"
        if not out_aval.shape:  # (a real operand as complex: one type for the choice)
            x, y = (f"{dtype}({a})" for a in args)
            return [f"{out} = {x} if {first} else {y}"]
        return [f"{out} = np.where({first}, {args[0]}, {args[1]}).astype({dtype})"]
    return emit


# arithmetic (int64 + - * raise where they would wrap)
lower(E.add_p, checked_emit(expression("{0} + {1}"), np.add), cheap=True)
lower(E.sub_p, checked_emit(expression("{0} - {1}"), np.subtract), cheap=True)
lower(E.mul_p, checked_emit(expression("{0} * {1}"), np.multiply), cheap=True)
lower(E.div_p, _npymath_emit(E.div_p, _complex_ufunc("{0} / {1}", "np.divide({0}, {1})")),
      cheap=True)
lower(E.pow_p, _npymath_emit(E.pow_p, _complex_ufunc("{0} ** {1}", "np.power({0}, {1})")),
      vectorized="powi",
      range_check="powi_in_range")
lower(E.maximum_p, _extremum_emit(">="), cheap=True)
lower(E.minimum_p, _extremum_emit("<="), cheap=True)
lower(E.neg_p, checked_emit(expression("np.negative({0})"), np.negative), cheap=True)
# functions: vectorized where vecmath has them
for _prim in (E.exp_p, E.log_p, E.log1p_p, E.expm1_p, E.tanh_p):
    lower(_prim, _npymath_emit(_prim), vectorized=_prim.name)
# vecmath's sin and cos are valid for |x| up to a bound: beyond it, the loop runs on libm
lower(E.sin_p, _npymath_emit(E.sin_p), vectorized="sin", range_check="trig_in_range")
lower(E.cos_p, _npymath_emit(E.cos_p), vectorized="cos", range_check="trig_in_range")
# the other complex functions: numpy's (npymath); of real values their ufuncs
for _prim in (E.sqrt_p, E.tan_p, E.sinh_p, E.cosh_p, E.arcsin_p, E.arccos_p, E.arctan_p,
              S.arcsinh_p, S.arccosh_p, S.arctanh_p, S.log2_p, S.log10_p, S.exp2_p):
    lower(_prim, _npymath_emit(_prim))
for _prim in (E.abs_p, E.floor_p, E.ceil_p, E.trunc_p, E.rint_p, E.square_p, E.reciprocal_p):
    lower(_prim, cheap=True)
# "+ 0.0": numpy's sign(-0.0) is 0.0, Numba's is -0.0
lower(E.sign_p, _npymath_emit(E.sign_p, "np.sign({0}) + 0.0"), cheap=True)
# selection and the numerically stable functions
lower(E.relu_p, _selection_emit("{0} < 0.0", "0.0", "{0}"), cheap=True)
lower(E.sigmoid_p, _sigmoid_emit, vectorized="sigmoid")
lower(E.softplus_p, "np.log1p(np.exp(-np.abs({0}))) + np.maximum({0}, 0.0)",
      vectorized="softplus")
_XLOGY_REAL = _selection_emit("({0} == 0.0) & ({1} == {1})", "0.0", "{0} * np.log({1})")


def _xlogy_emit(out: str, args: list[str], avals: list[Aval], out_aval: Aval) -> list[str]:
    """x * log(y), 0 where x == 0 and y is not nan; of a complex y numpy's clog."""
    if out_aval.dtype not in COMPLEXES or not NPYMATH:
        return _XLOGY_REAL(out, args, avals, out_aval)
    log = npymath_call(E.log_p, args[1:], avals[1:], out_aval)
    zero = f"np.{out_aval.dtype}(0.0)"  # (one type for both choices)
    return [f"{out} = {zero} if ({args[0]} == 0.0) & ({args[1]} == {args[1]}) "
            f"else {args[0]} * {log}"]


lower(E.xlogy_p, _xlogy_emit)
# comparisons (of complex values: numpy's order, _complex_comparison)
for _prim, _op in ((E.gt_p, ">"), (E.ge_p, ">="), (E.lt_p, "<"), (E.le_p, "<="),
                   (E.eq_p, "=="), (E.ne_p, "!=")):
    lower(_prim, _comparison_emit(_op), cheap=True)
lower(E.where_p, _where_emit, cheap=True, selects=True)
lower(E.to_float_p, _to_float_emit, cheap=True)


def _cbrt_emit(out: str, args: list[str], avals: Any, out_aval: Aval) -> list[str]:
    """numpy's cbrt loop (``nm.cbrt``) where this process registered it, else libm's
    (``nm.libm_cbrt``; Numba's np.cbrt is x ** (1/3), cbrt(27.0) = 3.0000000000000004).
    The source says which: it is the disk cache's key, and a kernel cached by a process
    that registered numpy's loop calls a symbol that another may not have (a segfault)."""
    from ...npymath import NUMPY_CBRT  # (imports Numba: at generation, not at import)

    return [f"{out} = nm.{'cbrt' if NUMPY_CBRT else 'libm_cbrt'}({args[0]})"]


def _divmod_emit(name: str) -> Callable[..., list[str]]:
    """numpy's float ``//`` or ``%`` (:mod:`symgrad.backend.npymath`: Numba's differ)."""
    def emit(out: str, args: list[str], avals: Any, out_aval: Aval) -> list[str]:
        return [f"{out} = nm.{name}({args[0]}, {args[1]}, np.{out_aval.dtype})"]
    return emit


# special functions; cbrt: _cbrt_emit
lower(S.floor_divide_p, _divmod_emit("floor_divide"))
lower(S.remainder_p, _divmod_emit("remainder"))
lower(S.cbrt_p, _cbrt_emit)
lower(S.sinc_p, "np.sinc({0})")
# libm's erf, as the interpreter computes it (math.erf per element)
lower(S.erf_p, "math.erf({0})")
lower(S.erfc_p, "math.erfc({0})")
