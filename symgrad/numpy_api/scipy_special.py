"""``scipy.special`` functions on traced values: the ufuncs symgrad has a primitive (or an
exact composite of primitives) for.

scipy's special functions are numpy ufuncs, so a call on a traced value reaches
``__array_ufunc__`` (:func:`.dispatch.apply_ufunc`), which asks :func:`lookup` for the
ufunc. The ufunc is matched by identity against ``scipy.special`` *if the user's code
has imported it* (``sys.modules``): ``import symgrad`` never imports SciPy's special
functions, which take a noticeable time to load.

- the primitives that declare a ``scipy`` name (``erf``, ``erfc``, ``expit`` (the
  ``sigmoid`` primitive), ``xlogy``, ``gamma``, ``psi``, ``beta``,
  ``betaln``, ``erfinv``, ``i0``, ``i1``, ``i0e``, ``i1e``, ...): found in the registry
  (:func:`symgrad.prims.registry.of_scipy`), so a new one needs no entry here;
- composites, in :data:`COMPOSITES`: ``logit`` is ``log(p) - log1p(-p)`` (the derivative
  1/p + 1/(1 - p) follows); ``xlog1py`` is ``x * log1p(y)``, and 0 where ``x == 0``
  (both partial derivatives 0 there, as ``xlogy``'s); the Hurwitz ``zeta(s, q)``'s ufunc
  ``_zeta`` is the ``zeta`` primitive in ``q`` with ``s`` a constant; ``gammaln`` is the
  ``gammaln`` primitive (libm's ``lgamma``, PyTorch's) with scipy's -inf at -inf.

scipy's ``polygamma``, ``logsumexp``, ``softmax`` and ``log_softmax`` are Python functions,
not ufuncs, which convert their arguments to numpy arrays: ``sg.scipy.special`` has
them (:mod:`.scipy_namespace`). The other ufuncs raise an error that names them and
says what to do.

    >>> import numpy as np, scipy.special, symgrad as sg
    >>> float(sg.grad(lambda x: scipy.special.erf(x))(0.0))  # 2/sqrt(pi)
    1.1283791670955126
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.errors import UnsupportedFunctionError, user_location
from ..core.ir import Primitive, holds_complex
from ..core.tracing import Traced
from ..prims import special_functions as SF
from ..prims.complex import imag, real
from ..prims.elementwise import (
    absolute,
    call,
    equal,
    greater,
    less_equal,
    log,
    log1p,
    maximum,
    mul,
    neg,
    sub,
    where,
)
from ..prims.registry import of_scipy


def _zeta(s: Any, q: Any) -> Any:
    """The Hurwitz zeta function in ``q`` for a constant exponent ``s`` (scipy's
    ``zeta(x, q)`` calls its ufunc ``_zeta(x, q)``)."""
    if isinstance(s, Traced):
        raise UnsupportedFunctionError(
            f"scipy.special.zeta(x, q) with a traced exponent x (at {user_location()}): "
            "symgrad differentiates zeta in q only; pass x as a number")
    s_value = np.asarray(s, dtype=np.float64)
    if s_value.ndim:
        if not np.all(s_value == s_value.flat[0]):
            raise UnsupportedFunctionError(
                "scipy.special.zeta(x, q) with an array of exponents x on a traced q: "
                "symgrad takes one number x; call it once per exponent")
        s_value = s_value.flat[0]
    return SF.zeta(q, s=float(s_value))


def xlog1py(x: Any, y: Any) -> Any:
    """``x * log1p(y)``, and 0 where ``x == 0`` unless ``y`` is nan (scipy's). As ``xlogy``:
    the constant 0 only where ``log1p(y)`` is infinite or nan (``y <= -1``, ``y == inf``);
    elsewhere ``x * log1p(y)`` itself, so that the x-derivative at ``x == 0`` is
    ``log1p(y)`` (JAX's; ``beta.logpdf``'s b-derivative at ``b == 1`` needs it)."""
    # log1p of a complex y is finite but at -1 and inf
    if holds_complex(y):
        inf = equal(maximum(absolute(real(y)), absolute(imag(y))), np.inf)
        edge = where(equal(y, -1.0), 1.0, where(inf, 1.0, 0.0))
    else:
        edge = where(less_equal(y, -1.0), 1.0, where(equal(y, np.inf), 1.0, 0.0))
    dead = greater(where(equal(x, 0.0), edge, 0.0), 0.0)
    return where(dead, 0.0, mul(x, log1p(where(dead, 0.0, y))))


def recorder(name: str, prim: Primitive) -> Callable[..., Any]:
    """``scipy.special.<name>`` on traced operands: one equation of ``prim``."""
    def fn(*args: Any) -> Any:
        return call(prim, *args)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``scipy.special.{name}`` on traced values: the ``{prim.name}`` primitive."
    return fn


#: scipy.special ufuncs that are no primitive of their own -> what computes them
COMPOSITES: dict[str, Callable[..., Any]] = {
    "logit": lambda p: sub(log(p), log1p(neg(p))),
    "xlog1py": xlog1py,
    "_zeta": _zeta,
    # libm's lgamma(-inf) is inf (PyTorch's lgamma, which shares the primitive), scipy's
    # -inf: a sign, so that the derivative stays the primitive's (digamma(-inf), nan)
    "gammaln": lambda x: mul(SF.gammaln(x), where(equal(x, -np.inf), -1.0, 1.0)),
}


def supported() -> list[str]:
    """The scipy.special ufuncs symgrad traces: the primitives' ``scipy`` names and the
    composites."""
    return sorted({*of_scipy(), *COMPOSITES})


def scipy_name(ufunc: Any) -> str | None:
    """``ufunc``'s name if it is a function of ``scipy.special`` (by identity; or one of
    its private ufuncs that its Python functions call, as ``zeta`` calls ``_zeta``),
    else None."""
    name = getattr(ufunc, "__name__", None)
    if not isinstance(name, str):
        return None
    for module in ("scipy.special", "scipy.special._ufuncs"):
        found = sys.modules.get(module)
        if found is not None and getattr(found, name, None) is ufunc:
            return name
    return None


def lookup(ufunc: Any) -> Callable[..., Any] | None:
    """What computes the ``scipy.special`` ufunc ``ufunc`` on traced values, if symgrad
    has it."""
    name = scipy_name(ufunc)
    if name is None:
        return None
    if name in COMPOSITES:
        return COMPOSITES[name]
    prim = of_scipy().get(name)
    return recorder(name, prim) if prim is not None else None


__all__ = ["COMPOSITES", "lookup", "recorder", "scipy_name", "supported"]
