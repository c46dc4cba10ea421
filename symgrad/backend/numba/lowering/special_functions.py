"""Numba lowering of scipy.special's primitives (:mod:`symgrad.prims.special_functions`).

``gammaln`` and ``gamma`` are libm's ``lgamma``/``tgamma`` (Numba's ``math.lgamma`` and
``math.gamma``; the interpreter calls the same libm functions, so the backends agree to
the bit); ``gamma`` of complex values is scipy's, between kernels. The others compute
with scipy's ufuncs, which Numba cannot call: they are host primitives (``host=True``),
which the backend cuts a compiled graph around and runs in Python between kernels
(:data:`.table.INTERPRETED` says so for the registry).
"""

from __future__ import annotations

from typing import Any

from ....prims import bessel as BESSEL
from ....prims import special_functions as SF
from .table import COMPLEX_INTERPRETED, interpreted, lower

lower(SF.gammaln_p, "math.lgamma({0})")
lower(SF.gamma_p, "math.gamma({0})")
# of complex values, scipy's gamma (a host primitive's complex digamma, polygamma and
# ndtr run between kernels as their real values do)
COMPLEX_INTERPRETED[SF.gamma_p] = "Numba has no complex gamma: scipy.special's"


def _host_emit(name: str) -> Any:
    def emit(out: str, args: list[str], avals: Any, out_aval: Any, **params: Any) -> list[str]:
        raise NotImplementedError(
            f"{name} has no Numba source: it runs scipy.special.{name} between kernels, "
            "which a loop or branch body cannot do; call it outside sg.fori_loop/scan/"
            "while_loop/cond, or use backend='interpreter'")
    return emit


for _prim in (SF.digamma_p, SF.polygamma_p, SF.beta_p, SF.betaln_p, SF.erfinv_p, SF.i0_p,
              SF.i1_p, SF.i0e_p, SF.i1e_p, SF.zeta_p, SF.ndtr_p, SF.gammainc_p, SF.gammaincc_p,
              SF.loggamma_p, SF.rgamma_p, SF.erfi_p, SF.erfcx_p, SF.dawsn_p, SF.exp1_p,
              SF.expi_p, SF.spence_p, SF.log_ndtr_p, *BESSEL.PRIMITIVES):
    interpreted(_prim, f"it computes with scipy.special.{_prim.name}, which Numba cannot "
                "call: the split cuts a compiled graph around it", _host_emit(_prim.name))
