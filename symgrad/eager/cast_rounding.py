"""A cast's gradient rounded as PyTorch's ``ToCopyBackward0`` rounds it.

PyTorch's backward of a cast from dtype S to dtype T converts the gradient, computed in
T, to S: between float64 and a narrower float the gradient is rounded to the narrower
one. symgrad's backward of a graph with a cast is one float64 computation, so the cast
nodes (``graph.ROUNDED``: the narrow dtypes of the cast, source first) round there, in
the backward graph (:func:`emit`), both the value and its cotangent: float32 (and
complex64, for casts of complex Tensors) by two ``convert`` equations, float16 and
bfloat16 by a ``callback`` on the host whose VJP rounds the cotangent (the IR has
neither dtype). As PyTorch's ``c10::Half(float)`` and
``c10::BFloat16(float)``, a float64 value is rounded to float32 first, then to the
narrow dtype (:func:`round_to`). With ``create_graph`` the gradient's graph replays the
rounding as the casts themselves (:meth:`Rounding.replay`), as PyTorch's does.

    >>> float(round_to(np.float64(1 + 2**-11 + 2**-40), "float16"))  # (numpy: 1.00098)
    1.0
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.ir import Aval, Eqn, Var, freeze_params
from ..prims.control import proj_p
from ..prims.convert import convert_p
from ..prims.custom import Host, callback_p
from . import dtypes as dt

#: the narrow dtypes a backward graph rounds to on the host
_HOST = ("float16", "bfloat16")


def round_to(x: Any, dtype: str) -> np.ndarray:
    """``x`` (float64 values) rounded to ``dtype`` (float16 or bfloat16) as PyTorch's
    casts round (through float32), back in float64."""
    narrow = dt.float16.numpy if dtype == "float16" else dt.bfloat16.numpy
    with np.errstate(all="ignore"):  # (overflow to inf, as PyTorch's)
        return np.asarray(x, dtype=np.float64).astype(np.float32).astype(narrow) \
            .astype(np.float64)


class Rounding(Host):
    """The host function of a rounding ``callback``: the value rounded (``vjp=False``),
    or the cotangent (``vjp=True``: called with the value and the cotangent)."""

    __slots__ = ("dtype", "vjp")

    def __init__(self, dtype: str, vjp: bool):
        super().__init__(self._round, f"round_to_{dtype}" + ("'" if vjp else ""))
        self.dtype, self.vjp = dtype, vjp

    def _round(self, *args: Any) -> list[np.ndarray]:
        return [round_to(args[-1], self.dtype)]

    def replay(self, values: list[Any], like: Any) -> tuple:
        """With ``create_graph``: the rounding as casts of the Tensor (recorded, so their
        own backward rounds, as PyTorch's ``ToCopyBackward0`` nodes do)."""
        x = values[-1]
        if not hasattr(x, "_node"):
            x = type(like)._make(np.asarray(x, dtype=np.float64))
        return (x.to(getattr(dt, self.dtype)).to(x.dtype),)


_ROUNDINGS = {(d, vjp): Rounding(d, vjp) for d in _HOST for vjp in (False, True)}


def emit(eqns: list[Eqn], v: Var, dtypes: tuple[str, ...]) -> Var:
    """Append to ``eqns`` the rounding of ``v`` (a float64 value) to each of ``dtypes``
    in turn; the rounded value, whose cotangent the adjoint rounds in reverse order."""
    aval = v.aval
    for dtype in dtypes:
        if dtype in ("float32", "complex64"):  # (dtypes of the IR: two converts)
            narrow = Var(Aval(aval.shape, dtype))
            eqns.append(Eqn(convert_p, (v,), narrow, freeze_params({"dtype": dtype})))
            v = Var(aval)
            eqns.append(Eqn(convert_p, (narrow,), v, freeze_params({"dtype": aval.dtype})))
            continue
        t = Var(Aval((), "tuple", (aval,)))
        eqns.append(Eqn(callback_p, (v,), t, freeze_params({
            "fn": _ROUNDINGS[dtype, False], "avals": (aval,), "name": f"round_to_{dtype}",
            "vjp": _ROUNDINGS[dtype, True], "vmap_method": ""})))
        v = Var(aval)
        eqns.append(Eqn(proj_p, (t,), v, freeze_params({"part": 0})))
    return v
