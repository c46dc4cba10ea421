"""numpy's order of complex values in its functions that are not one ufunc: ``np.sort``,
``argsort``, ``argmax``/``argmin``, ``np.clip``, and ``np.isnan``/``isinf``/``isfinite``
(of real values too), ``np.round`` of complex values.

numpy orders complex numbers by real part, then by imaginary part (the comparison
primitives compute its ufuncs, :mod:`symgrad.prims.selection`). Its sort puts
``R + Rj`` first, then ``R + nan j``, then ``nan + Rj``, then ``nan + nan j``
(``numpy.sort``'s documentation): here three stable passes of the real ``argsort``
(imaginary part, real part, that class), each ordering ties as the previous pass
left them. ``np.clip`` of complex values is numpy's ``clip`` loop (``clip.cpp``): the
bound where ``a`` is not strictly beyond it (a lexicographic order with no nan test:
``0j`` clips ``-0j`` to ``0j``), ``a`` itself where a part is nan. The positions
and comparisons have no gradient; a clip or sort moves the cotangent with the value.

    >>> import numpy as np, symgrad as sg
    >>> z = np.array([1 + 2j, 1 - 1j, -3 + 0j])
    >>> sg.jit(np.sort, backend="numpy")(z)
    array([-3.+0.j,  1.-1.j,  1.+2.j])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.ir import complex_of, holds_complex
from ..core.tracing import Traced
from ..prims import complex as C
from ..prims import elementwise as E
from ..prims import sorting as P
from ..prims.convert import convert
from ..prims.elementwise import as_float
from ..prims.integers import logical_and, logical_not, logical_or
from .dispatch import implements, refuse_kwargs

is_complex = holds_complex  # (the one home: core.avals)


def _nan(x: Any) -> Any:
    return E.not_equal(x, x)  # of a complex value: a nan part (numpy's isnan)


@implements(np.isnan)
def isnan(x: Any, /, **kwargs: Any) -> Any:
    """``np.isnan``: of a complex value, whether a part is nan."""
    refuse_kwargs("np.isnan", kwargs, allowed={})
    return _nan(x)


def _inf(x: Any) -> Any:
    return E.equal(E.absolute(x), np.inf)


@implements(np.isinf)
def isinf(x: Any, /, **kwargs: Any) -> Any:
    """``np.isinf``: of a complex value, whether a part is infinite."""
    refuse_kwargs("np.isinf", kwargs, allowed={})
    if is_complex(x):
        return logical_or(_inf(C.real(x)), _inf(C.imag(x)))
    return _inf(x)


def _finite(x: Any) -> Any:
    return E.less(E.absolute(x), np.inf)


@implements(np.isfinite)
def isfinite(x: Any, /, **kwargs: Any) -> Any:
    """``np.isfinite``: of a complex value, whether both parts are finite."""
    refuse_kwargs("np.isfinite", kwargs, allowed={})
    if is_complex(x):
        return logical_and(_finite(C.real(x)), _finite(C.imag(x)))
    return _finite(x)


def order(z: Any) -> Any:
    """The float positions that sort complex ``z`` along its last axis as numpy does,
    ties in their order (the real ``argsort`` is stable)."""
    re, im = C.real(z), C.imag(z)
    rank = E.where(_nan(re), 2.0, E.where(_nan(im), 1.0, 0.0))
    perm = P.argsort(im)
    for key in (re, rank):
        perm = P.take_along(perm, P.argsort(P.take_along(key, perm)))
    return perm


def extreme_hits(z: Any, largest: bool, reduce: Any) -> Any:
    """Where complex ``z`` holds its extreme along the axis ``reduce`` (a function
    ``x -> extreme of x along it, kept``) in numpy's order, nan parts aside."""
    re, im = C.real(z), C.imag(z)
    tied = E.equal(re, reduce(re))
    fill = -np.inf if largest else np.inf
    return logical_and(tied, E.equal(im, reduce(E.where(tied, im, fill))))


def _parts(x: Any) -> tuple[Any, Any]:
    if not isinstance(x, Traced):
        return np.real(x), np.imag(x)
    return (C.real(x), C.imag(x)) if is_complex(x) else (x, 0.0)


def _beyond(a: Any, bound: Any, above: bool) -> Any:
    # clip.cpp's PyArray_CGT / PyArray_CLT: the imaginary parts decide a tie of real parts
    (ar, ai), (br, bi) = _parts(a), _parts(bound)
    cmp = E.greater if above else E.less
    tie = E.equal(ar, br)
    return logical_or(logical_and(tie, cmp(ai, bi)), logical_and(logical_not(tie), cmp(ar, br)))


def clip(a: Any, a_min: Any, a_max: Any) -> Any:
    """``np.clip`` of complex ``a`` (or bounds), numpy's loop: ``max`` then ``min``, each
    keeping ``a`` where a part of it is nan. One bound only: numpy's ``np.maximum``
    (``np.minimum``) ufunc, as numpy calls."""
    if a_min is None or a_max is None:
        return E.maximum(a, a_min) if a_max is None else E.minimum(a, a_max)
    if not is_complex(a):  # complex bounds: a complex result
        a = convert(as_float(a), complex_of(np.dtype(as_float(a).dtype).name))
    kept = E.where(logical_or(_nan(a), _beyond(a, a_min, above=True)), a, a_min)
    return E.where(logical_or(_nan(kept), _beyond(kept, a_max, above=False)), kept, a_max)

