"""scipy.special's Bessel functions of any real order ``v``, as host primitives (scipy's
ufuncs between kernels, as the others of :mod:`.special_functions`): ``iv`` and ``ive``
(the modified ones of the first kind, ``ive = exp(-|x|) iv``), ``kv`` and ``kve`` (of the
second kind, ``kve = exp(x) kv``), ``jv`` and ``yv`` (Bessel's of the first and second
kind).

The order ``v`` is the first operand, differentiable in nothing: the derivative with
respect to it has no closed form, and JAX and PyTorch have none either; the adjoint
refuses it (:class:`~symgrad.core.errors.Refused`) when ``v`` depends on what is
differentiated. In ``x`` the derivatives are the recurrences (DLMF 10.6.1, 10.29.1),
written with the same primitives, so every order of derivative exists:

- ``iv' = (iv(v-1) + iv(v+1))/2``, ``kv' = -(kv(v-1) + kv(v+1))/2``,
  ``jv' = (jv(v-1) - jv(v+1))/2``, ``yv' = (yv(v-1) - yv(v+1))/2``;
- ``ive' = (ive(v-1) + ive(v+1))/2 - sign(x) ive`` (0 for the kink at ``x = 0``, as
  ``abs'(0)``), ``kve' = kve - (kve(v-1) + kve(v+1))/2``: differences of nearby values
  for large ``|x|``, whose relative error grows as ``|x|`` (as ``i0e'``); ``kve'`` is
  ``-inf`` where ``kve`` overflows (near 0).

scipy has complex loops for all six; ``iv``, ``kv``, ``kve``, ``jv`` and ``yv`` take a
complex ``x`` (``complex=True``: holomorphic in ``x``, the same recurrences; ``kve =
exp(z) kv`` is holomorphic too). ``ive`` of complex values is ``exp(-|Re z|) iv(z)``,
which is not holomorphic: it is refused for complex ``x``. Domains are scipy's (nan
for real ``x < 0`` and a non-integer order, ...).

    >>> import numpy as np
    >>> float(iv(np.float64(0.0), np.float64(0.0)))
    1.0
"""

from __future__ import annotations

import numpy as np

from ..core.errors import Refused
from .elementwise import _recorder, equal, sign, where
from .special_functions import _special

ORDER_ERROR = (
    "the derivative of scipy.special.{name}(v, x) with respect to its order v is not "
    "implemented (as in JAX and PyTorch): differentiate with respect to x only (pass v as "
    "a number or a constant array, or stop its gradient)")


def _refused(name: str) -> Refused:
    return Refused(NotImplementedError(ORDER_ERROR.format(name=name)))


def _iv_vjp(g, ans, v, x):
    return (_refused("iv"), g * (0.5 * (iv(v - 1.0, x) + iv(v + 1.0, x))))


def _ive_vjp(g, ans, v, x):
    return (_refused("ive"), g * (0.5 * (ive(v - 1.0, x) + ive(v + 1.0, x)) - sign(x) * ans))


def _kv_vjp(g, ans, v, x):
    return (_refused("kv"), g * (-0.5 * (kv(v - 1.0, x) + kv(v + 1.0, x))))


def _kve_vjp(g, ans, v, x):
    # where kve(v, x) overflows (real x near 0) so does kve(v + 1, x): the difference is
    # inf - inf there, the derivative -inf (kve decreases as x**-|v|, or -log x, near 0)
    prime = ans - 0.5 * (kve(v - 1.0, x) + kve(v + 1.0, x))
    if np.dtype(x.dtype).kind == "c":
        return (_refused("kve"), g * prime)
    return (_refused("kve"), g * where(equal(ans, np.inf), -np.inf, prime))


def _jv_vjp(g, ans, v, x):
    return (_refused("jv"), g * (0.5 * (jv(v - 1.0, x) - jv(v + 1.0, x))))


def _yv_vjp(g, ans, v, x):
    return (_refused("yv"), g * (0.5 * (yv(v - 1.0, x) - yv(v + 1.0, x))))


iv_p = _special("iv", complex=True, nin=2, vjp=_iv_vjp,
                sympy=lambda sp, v, x: sp.besseli(v, x))
ive_p = _special("ive", nin=2, vjp=_ive_vjp,
                 sympy=lambda sp, v, x: sp.exp(-sp.Abs(x)) * sp.besseli(v, x))
kv_p = _special("kv", complex=True, nin=2, vjp=_kv_vjp,
                sympy=lambda sp, v, x: sp.besselk(v, x))
kve_p = _special("kve", complex=True, nin=2, vjp=_kve_vjp,
                 sympy=lambda sp, v, x: sp.exp(x) * sp.besselk(v, x))
jv_p = _special("jv", complex=True, nin=2, vjp=_jv_vjp,
                sympy=lambda sp, v, x: sp.besselj(v, x))
yv_p = _special("yv", complex=True, nin=2, vjp=_yv_vjp,
                sympy=lambda sp, v, x: sp.bessely(v, x))

iv, ive, kv, kve, jv, yv = map(_recorder, (iv_p, ive_p, kv_p, kve_p, jv_p, yv_p))

#: the primitives of this module (the Numba backend runs each between kernels)
PRIMITIVES = (iv_p, ive_p, kv_p, kve_p, jv_p, yv_p)

__all__ = ["PRIMITIVES", "iv", "iv_p", "ive", "ive_p", "jv", "jv_p", "kv", "kv_p", "kve",
           "kve_p", "yv", "yv_p"]
