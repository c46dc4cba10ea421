"""``scipy.special`` functions on traced values: the ufuncs symgrad has a primitive (or an
exact composite of primitives) for.

scipy's special functions are numpy ufuncs, so a call on a traced value reaches
``__array_ufunc__`` (:func:`.dispatch.apply_ufunc`), which asks :func:`lookup` for the
ufunc. The ufunc is matched by identity against ``scipy.special`` *if the user's code
has imported it* (``sys.modules``): ``import symgrad`` never imports SciPy's special
functions, which take a noticeable time to load.

- ``erf``, ``erfc``: primitives (:mod:`symgrad.prims.special`), ``erf'`` =
  2/sqrt(pi) exp(-x**2);
- ``expit``: the ``sigmoid`` primitive (stable in both tails);
- ``logit``: ``log(p) - log1p(-p)`` (the derivative 1/p + 1/(1 - p) follows);
- ``xlogy``: the ``xlogy`` primitive; ``xlog1py``: ``x * log1p(y)``, and 0 where
  ``x == 0`` (both partial derivatives 0 there, as ``xlogy``'s).

The others (``gammaln``, ``digamma``, ``erfinv``, ``i0``, ...) raise an error that
names them and says what to do.

    >>> import numpy as np, scipy.special, symgrad as sg
    >>> float(sg.grad(lambda x: scipy.special.erf(x))(0.0))  # 2/sqrt(pi)
    1.1283791670955126
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from ..prims.elementwise import call, log, log1p, mul, neg, sigmoid_p, sub, where, xlogy_p
from ..prims.special import erf_p, erfc_p


def erf(x: Any) -> Any:
    """``scipy.special.erf`` of traced values and Tensors (``F.gelu``, ``Tensor.erf``)."""
    return call(erf_p, x)


def _xlog1py(x: Any, y: Any) -> Any:
    zero = x == 0.0
    return where(zero, 0.0, mul(x, log1p(where(zero, 0.0, y))))


#: scipy.special name -> the function of traced operands that computes it
SUPPORTED: dict[str, Callable[..., Any]] = {
    "erf": erf,
    "erfc": lambda x: call(erfc_p, x),
    "expit": lambda x: call(sigmoid_p, x),
    "logit": lambda p: sub(log(p), log1p(neg(p))),
    "xlogy": lambda x, y: call(xlogy_p, x, y),
    "xlog1py": _xlog1py,
}


def scipy_name(ufunc: Any) -> str | None:
    """``ufunc``'s name if it is a function of ``scipy.special`` (by identity), else None."""
    special = sys.modules.get("scipy.special")
    name = getattr(ufunc, "__name__", None)
    if special is None or not isinstance(name, str) or getattr(special, name, None) is not ufunc:
        return None
    return name


def lookup(ufunc: Any) -> Callable[..., Any] | None:
    """What computes the ``scipy.special`` ufunc ``ufunc`` on traced values, if symgrad
    has it."""
    name = scipy_name(ufunc)
    return None if name is None else SUPPORTED.get(name)


__all__ = ["SUPPORTED", "erf", "lookup", "scipy_name"]
