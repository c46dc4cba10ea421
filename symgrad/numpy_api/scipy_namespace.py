"""``sg.scipy.special``: scipy.special's functions for traced values, with scipy's
signatures (as ``jax.scipy.special``).

scipy's ufuncs (``gammaln``, ``erf``, ``psi``, ...) need none of this: called on a traced
value they reach symgrad through ``__array_ufunc__`` (:mod:`.scipy_special`). scipy's
*Python* functions do not: ``polygamma``, ``logsumexp``, ``softmax`` and ``log_softmax``
first convert their arguments with ``np.asarray``, which a traced value refuses (the
error names the function here, see :mod:`symgrad.core.errors`). Write
``sg.scipy.special.logsumexp(x)`` instead of ``scipy.special.logsumexp(x)``; on
numbers it computes what scipy's does.

    >>> import numpy as np, symgrad as sg
    >>> float(sg.grad(lambda x: sg.scipy.special.logsumexp(x))(np.zeros(2))[0])
    0.5
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import SCIPY_EQUIVALENTS, UnsupportedFunctionError, user_location
from ..core.tracing import Traced, shape_of
from ..prims import elementwise as E
from ..prims import special_functions as SF
from ..prims.elementwise import as_float
from ..prims.registry import of_scipy
from . import functions as F
from .complex_order import is_complex
from .dispatch import normalize_axes
from .scipy_special import COMPOSITES, _zeta, recorder

#: scipy.special's ufuncs that are primitives (each declares its ``scipy`` name: a new one
#: appears here with no edit), and the composites logit, xlog1py and gammaln
UFUNCS = {name: recorder(name, prim) for name, prim in of_scipy().items()}
UFUNCS.update({name: fn for name, fn in COMPOSITES.items() if not name.startswith("_")})
globals().update(UFUNCS)
digamma = UFUNCS["psi"]  # (scipy's alias)


def polygamma(n: Any, x: Any) -> Any:
    """``scipy.special.polygamma(n, x)`` for an integer order ``n >= 0`` (a number, not a
    traced value): the n-th derivative of ``digamma``."""
    if isinstance(n, Traced):
        raise UnsupportedFunctionError(
            f"scipy.special.polygamma(n, x) with a traced order n (at {user_location()}): the "
            "order must be a number (the function is not differentiable in n)")
    orders = np.unique(np.asarray(n))
    if orders.size != 1 or orders[0] != int(orders[0]) or orders[0] < 0:
        raise UnsupportedFunctionError(
            f"polygamma(n, x): n must be one integer >= 0, got {n!r}; call it once per order")
    order = int(orders[0])
    if is_complex(x):
        raise TypeError(
            "scipy.special.polygamma(n, x) of complex x: scipy's refuses it (its zeta is real "
            "only), and so does symgrad; scipy.special.psi of complex values is "
            "differentiable to every order (its derivatives are complex polygammas)")
    return SF.digamma(x) if order == 0 else SF.polygamma(x, n=order)


def zeta(x: Any, q: Any = None) -> Any:
    """``scipy.special.zeta(x, q)``: the Hurwitz zeta function, differentiable in ``q``
    (``x`` a number). The Riemann zeta (``q=None``) is refused for a traced ``x``."""
    if q is None:
        raise UnsupportedFunctionError(
            "scipy.special.zeta(x) (Riemann's) is not differentiable in symgrad; "
            "zeta(x, q) (Hurwitz's, in q) is")
    return _zeta(x, q)


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False,
              return_sign: bool = False) -> Any:
    """``scipy.special.logsumexp``: ``log(sum(b * exp(a)))`` over ``axis``, shifted by the
    maximum (no overflow). With ``b``, differentiable in ``b`` too, also where ``b == 0``
    (gradient ``exp(a - result)``); ``return_sign`` gives ``(log|s|, sign(s))`` for
    weights of either sign (scipy's convention), else a negative sum is nan as scipy's."""
    a = as_float(a)
    if b is None and not return_sign:
        return F.logsumexp(a, axis=axis, keepdims=keepdims)
    if is_complex(a) or (b is not None and is_complex(b)):
        raise TypeError("scipy.special.logsumexp of complex values with b= or return_sign="
                        " is not supported in symgrad; without them it is (scipy's value)")
    weights = as_float(1.0 if b is None else b)
    shape = tuple(np.broadcast_shapes(shape_of(a), shape_of(weights)))
    a = F.broadcast_to(a, shape) if shape_of(a) != shape else a  # scipy's broadcast
    axes = normalize_axes(axis, len(shape))
    # shifted by the largest entry of nonzero weight (scipy's): an entry of weight 0 may
    # be larger by any amount (inf too), so its shift is capped where exp stays finite:
    # its term is 0 either way, its weight's gradient exp(a - result) exact below the cap
    if b is None:
        top = F.max(a, axis=axes, keepdims=True)
    else:
        top = F.max(E.where(E.not_equal(weights, 0.0), a, -np.inf), axis=axes, keepdims=True)
    top = E.where(E.less(E.absolute(top), np.inf), top, 0.0)
    shifted = E.minimum(E.sub(a, top), 709.0)
    total = F.sum(E.mul(weights, E.exp(shifted)), axis=axes, keepdims=True)
    if return_sign:
        value = E.add(E.log(E.absolute(total)), top)
        sign = E.sign(total)
    else:
        value, sign = E.add(E.log(total), top), None
    if not keepdims:
        kept = tuple(d for i, d in enumerate(shape) if i not in axes)
        value = F.reshape(value, kept)
        sign = None if sign is None else F.reshape(sign, kept)
    return (value, sign) if return_sign else value


def _axis(x: Any, axis: Any) -> Any:
    """scipy's ``axis=None`` of softmax: over all elements (sg.softmax's default is -1)."""
    return tuple(range(len(shape_of(x)))) if axis is None else axis


def softmax(x: Any, axis: Any = None) -> Any:
    """``scipy.special.softmax`` (over every element by default, as scipy's)."""
    x = as_float(x)
    return F.softmax(x, axis=_axis(x, axis))


def log_softmax(x: Any, axis: Any = None) -> Any:
    """``scipy.special.log_softmax`` (over every element by default, as scipy's)."""
    x = as_float(x)
    return F.log_softmax(x, axis=_axis(x, axis))


def registered_later(name: str) -> Any:
    """The recorder of a scipy.special ufunc whose primitive was registered after this
    module was imported (``sg.scipy.special``'s module ``__getattr__``)."""
    prim = of_scipy().get(name)
    if prim is None:
        raise AttributeError(f"module 'symgrad.scipy.special' has no attribute {name!r}")
    return recorder(name, prim)


__all__ = sorted([*UFUNCS, "digamma", "log_softmax", "logsumexp", "polygamma", "softmax",
                  "zeta"])

SCIPY_EQUIVALENTS.update({f"scipy.special.{name}": f"sg.scipy.special.{name}"
                          for name in ("polygamma", "logsumexp", "softmax", "log_softmax",
                                       "zeta")})
