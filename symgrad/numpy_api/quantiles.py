"""numpy's quantiles and nan-aware reductions on traced values: ``median``, ``percentile``,
``quantile`` (``method=`` linear, lower, higher, nearest, midpoint: what JAX supports),
their nan-ignoring ``nanmedian``, ``nanpercentile``, ``nanquantile``, ``nansum``,
``nanmean``, ``nanvar``, ``nanstd``, ``nanmax``, ``nanmin``, ``nanprod``, and
``any``/``all``.

Quantiles sort along the axis (:func:`.statistics.sort`) and pick or interpolate the
sorted elements at the static positions ``q * (n - 1)``: the gradient flows to the
selected elements (two, with weights ``1 - f`` and ``f``, for ``linear``), as JAX's.
``q`` must be a number or an array of numbers (a traced ``q`` is refused: its gradient
would be the slope between the two sorted neighbours, which JAX gives and symgrad does
not yet). The nan-ignoring ones count each row's numbers (NaNs sort last) and take
the sorted elements at the traced positions ``q * (count - 1)`` (``take_along``).

The nan-aware reductions replace nan by the reduction's identity (0, 1, -inf, inf)
before reducing, so nan entries get gradient 0; a group of nan only is nan, as
numpy's (which warns).

    >>> import numpy as np, symgrad as sg
    >>> sg.grad(lambda x: np.median(x))(np.array([3.0, 1.0, 2.0, 7.0]))
    array([0.5, 0. , 0.5, 0. ])
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from ..core.errors import UnsupportedFunctionError, user_location
from ..core.tracing import Traced, shape_of
from ..prims import complex as CX
from ..prims import elementwise as E
from ..prims import sorting as P
from ..prims.elementwise import as_float
from .dispatch import implements, normalize_axes, refuse_kwargs
from .functions import max, min, prod, reshape, sum
from .indexing import getitem
from .shapes import moveaxis, stack
from .statistics import sort

METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def _quantile(name: str, a: Any, q: Any, axis: Any, out: Any, overwrite_input: bool,
              method: str, keepdims: bool, interpolation: Any, nan: bool = False) -> Any:
    refuse_kwargs(name, {"out": out}, allowed={})
    if np.iscomplexobj(a) and "median" not in name:  # (a median of complex values sorts them)
        raise TypeError(f"{name} of a complex traced value: a must be an array of real "
                        "numbers (numpy's error; np.median takes complex values)")
    if interpolation is not None:  # numpy's deprecated spelling of method=
        method = interpolation
    if method not in METHODS and not (nan and method == "median"):
        raise UnsupportedFunctionError(
            f"{name}(..., method={method!r}) on a traced value (at {user_location()}): "
            f"symgrad has the methods {', '.join(METHODS)} (those JAX supports)")
    if isinstance(q, Traced):
        raise UnsupportedFunctionError(
            f"{name} with a traced q (at {user_location()}): q must be a number or an "
            "array of numbers")
    qs = np.asarray(q, dtype=np.float64)
    if np.any((qs < 0.0) | (qs > 1.0)) or np.any(np.isnan(qs)):
        raise ValueError("Quantiles must be in the range [0, 1]" if name != "np.percentile"
                         else "Percentiles must be in the range [0, 100]")
    a = as_float(a)
    shape = shape_of(a)
    axes = normalize_axes(axis, len(shape))
    kept = [d for i, d in enumerate(shape) if i not in axes]
    # the reduced axes last, flattened into one, then sorted
    rows = moveaxis(a, axes, tuple(range(len(shape) - len(axes), len(shape)))) if axes else a
    n = math.prod(shape[i] for i in axes)
    rows = reshape(rows, (*kept, n))
    if n == 0:
        raise ValueError(f"{name} of an empty axis")
    ordered = sort(rows, axis=-1)
    if nan:  # NaNs sort last: the first `count` elements of each row are the others
        count = sum(E.where(E.not_equal(rows, rows), 0.0, 1.0), axis=-1, keepdims=True)
        picks = [_nan_pick(ordered, float(v), count, method) for v in qs.ravel()]
    else:  # a row holding a NaN (sorted last) has the quantile nan, as numpy's and JAX's
        last = getitem(ordered, (..., n - 1))
        has_nan = E.not_equal(last, last)
        picks = [E.where(has_nan, np.nan, _pick(ordered, float(v), n, method))
                 for v in qs.ravel()]
    result = picks[0] if qs.ndim == 0 else reshape(stack(picks), (*qs.shape, *kept))
    if keepdims:
        ones = tuple(1 if i in axes else d for i, d in enumerate(shape))
        result = reshape(result, (*qs.shape, *ones))
    return result


def _pick(ordered: Any, q: float, n: int, method: str) -> Any:
    """The quantile ``q`` of each row of ``ordered`` (sorted along its last axis)."""
    position = q * (n - 1)
    lo = min_index = math.floor(position)  # (positions are static: q and n are numbers)
    hi = builtins.min(lo + 1, n - 1)
    frac = position - lo
    if method == "lower" or frac == 0.0:
        return getitem(ordered, (..., min_index))
    if method == "higher":
        return getitem(ordered, (..., hi))
    if method == "nearest":  # numpy rounds the position half to even
        return getitem(ordered, (..., int(np.around(position))))
    below, above = getitem(ordered, (..., lo)), getitem(ordered, (..., hi))
    if method == "midpoint":
        return E.mul(0.5, E.add(below, above))
    # linear, as numpy's _lerp: below + (above - below) * frac, from the nearer end
    diff = E.sub(above, below)
    if frac >= 0.5:
        return E.sub(above, E.mul(diff, 1.0 - frac))
    return E.add(below, E.mul(diff, frac))


def _nan_pick(ordered: Any, q: float, count: Any, method: str) -> Any:
    """``_pick`` at the traced positions ``q * (count - 1)`` of each row's ``count``
    numbers (sorted first); nan for a row of NaNs only, as numpy's (which warns)."""
    last = E.maximum(E.sub(count, 1.0), 0.0)
    position = E.mul(q, last)
    lo = E.floor(position)
    hi = E.minimum(E.add(lo, 1.0), last)
    frac = E.sub(position, lo)

    def at(p: Any) -> Any:
        return reshape(P.take_along(ordered, p), shape_of(ordered)[:-1])
    below, above = at(lo), at(hi)
    frac = reshape(frac, shape_of(below))
    if method == "lower":
        result = below
    elif method == "higher":
        result = E.where(E.equal(frac, 0.0), below, above)
    elif method == "nearest":  # numpy rounds the position half to even
        result = at(E.rint(position))
    elif method in ("midpoint", "median"):  # median: the middle one, or the two's mean
        result = E.where(E.equal(frac, 0.0), below, E.mul(0.5, E.add(below, above)))
    else:  # linear, as numpy's _lerp: from the nearer end
        diff = E.sub(above, below)
        result = E.where(E.greater_equal(frac, 0.5), E.sub(above, E.mul(diff, E.sub(1.0, frac))),
                         E.add(below, E.mul(diff, frac)))
    return E.where(E.equal(reshape(count, shape_of(below)), 0.0), np.nan, result)


@implements(np.nanquantile)
def nanquantile(a: Any, q: Any, axis: Any = None, out: Any = None,
                overwrite_input: bool = False, method: str = "linear",
                keepdims: bool = False, *, weights: Any = None,
                interpolation: Any = None) -> Any:
    """``np.nanquantile``: ``np.quantile`` of each row's numbers, NaNs ignored."""
    _no_weights("np.nanquantile", weights)
    return _quantile("np.nanquantile", a, q, axis, out, overwrite_input, method, keepdims,
                     interpolation, nan=True)


@implements(np.nanpercentile)
def nanpercentile(a: Any, q: Any, axis: Any = None, out: Any = None,
                  overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False, *, weights: Any = None,
                  interpolation: Any = None) -> Any:
    """``np.nanpercentile``: ``np.nanquantile`` of ``q / 100``."""
    _no_weights("np.nanpercentile", weights)
    if isinstance(q, Traced) or np.any(np.abs(np.asarray(q, dtype=float) - 50.0) > 50.0):
        raise ValueError("Percentiles must be in the range [0, 100]")
    return _quantile("np.nanpercentile", a, np.asarray(q, dtype=np.float64) / 100.0, axis,
                     out, overwrite_input, method, keepdims, interpolation, nan=True)


@implements(np.nanmedian)
def nanmedian(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Any:
    """``np.nanmedian``: the middle number of each row, or the mean of the two."""
    return _quantile("np.nanmedian", a, 0.5, axis, out, overwrite_input, "median", keepdims,
                     None, nan=True)


@implements(np.quantile)
def quantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False, *, weights: Any = None,
             interpolation: Any = None) -> Any:
    """``np.quantile``: see the module docstring."""
    _no_weights("np.quantile", weights)
    return _quantile("np.quantile", a, q, axis, out, overwrite_input, method, keepdims,
                     interpolation)


@implements(np.percentile)
def percentile(a: Any, q: Any, axis: Any = None, out: Any = None,
               overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
               *, weights: Any = None, interpolation: Any = None) -> Any:
    """``np.percentile``: ``np.quantile`` of ``q / 100``."""
    _no_weights("np.percentile", weights)
    if isinstance(q, Traced):
        return _quantile("np.percentile", a, q, axis, out, overwrite_input, method, keepdims,
                         interpolation)
    qs = np.asarray(q, dtype=np.float64)
    if np.any((qs < 0.0) | (qs > 100.0)):
        raise ValueError("Percentiles must be in the range [0, 100]")
    return _quantile("np.percentile", a, qs / 100.0, axis, out, overwrite_input, method,
                     keepdims, interpolation)


@implements(np.median)
def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Any:
    """``np.median``: the mean of the two middle elements for an even count."""
    return _quantile("np.median", a, 0.5, axis, out, overwrite_input, "midpoint"
                     if _count(a, axis) % 2 == 0 else "linear", keepdims, None)


def _count(a: Any, axis: Any) -> int:
    shape = shape_of(as_float(a))
    return math.prod(shape[i] for i in normalize_axes(axis, len(shape)))


def _no_weights(name: str, weights: Any) -> None:
    if weights is not None:
        raise UnsupportedFunctionError(f"{name}(..., weights=...) on a traced value is not "
                                       "supported")


# ---------------------------------------------------------------------------
# nan-aware reductions


def _nan_filled(a: Any, fill: float) -> tuple[Any, Any]:
    a = as_float(a)
    nan = E.not_equal(a, a)
    return E.where(nan, fill, a), nan


@implements(np.nansum)
def nansum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
           keepdims: bool = False, **kwargs: Any) -> Any:
    """``np.nansum``: nan entries count as 0 (and get gradient 0)."""
    filled, _ = _nan_filled(a, 0.0)
    return sum(filled, axis, dtype, out, keepdims, **kwargs)


@implements(np.nanprod)
def nanprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False, **kwargs: Any) -> Any:
    """``np.nanprod``: nan entries count as 1."""
    filled, _ = _nan_filled(a, 1.0)
    return prod(filled, axis, dtype, out, keepdims, **kwargs)


def _nan_count(nan: Any, axis: Any, keepdims: bool) -> Any:
    return sum(E.where(nan, 0.0, 1.0), axis=axis, keepdims=keepdims)


@implements(np.nanmean)
def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False, **kwargs: Any) -> Any:
    """``np.nanmean``: the mean of the entries that are not nan (nan if there are none)."""
    refuse_kwargs("np.nanmean", {"dtype": dtype, "out": out, **kwargs},
                  allowed={"dtype": lambda d: d is None or np.dtype(d) == np.float64})
    filled, nan = _nan_filled(a, 0.0)
    return E.div(sum(filled, axis, keepdims=keepdims), _nan_count(nan, axis, keepdims))


@implements(np.nanvar)
def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
           keepdims: bool = False, **kwargs: Any) -> Any:
    """``np.nanvar``: the variance of the entries that are not nan, over ``n - ddof``."""
    refuse_kwargs("np.nanvar", {"dtype": dtype, "out": out, **kwargs},
                  allowed={"dtype": lambda d: d is None or np.dtype(d) == np.float64})
    filled, nan = _nan_filled(a, 0.0)
    count = _nan_count(nan, axis, True)
    centered = E.where(nan, 0.0, E.sub(filled, E.div(sum(filled, axis, keepdims=True), count)))
    dof = E.maximum(E.sub(_nan_count(nan, axis, keepdims), float(ddof)), 0.0)
    if np.iscomplexobj(centered):  # numpy's: the mean of |a - mean(a)|**2, a real value
        squares = E.add(E.square(CX.real(centered)), E.square(CX.imag(centered)))
    else:
        squares = E.square(centered)
    return E.div(sum(squares, axis, keepdims=keepdims), dof)


@implements(np.nanstd)
def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
           keepdims: bool = False, **kwargs: Any) -> Any:
    """``np.nanstd``: the square root of ``np.nanvar`` (gradient 0 where it is 0, as std's)."""
    variance = nanvar(a, axis, dtype, out, ddof, keepdims, **kwargs)
    positive = E.greater(variance, 0.0)
    return E.where(positive, E.sqrt(E.where(positive, variance, 1.0)), variance)


@implements(np.nanmax)
def nanmax(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
           **kwargs: Any) -> Any:
    """``np.nanmax``: the maximum of the entries that are not nan (nan if none)."""
    return _nan_extremum(max, a, axis, out, keepdims, kwargs, -np.inf)


def _nan_extremum(pick: Any, a: Any, axis: Any, out: Any, keepdims: bool, kwargs: dict,
                  fill: float) -> Any:
    # numpy's fmax.reduce (fmin): of complex values, the least (greatest) complex number
    # stands for a nan element, and a row of nan elements only gives its first, as numpy's
    complex_ = np.iscomplexobj(a)
    filled, nan = _nan_filled(a, complex(fill, fill) if complex_ else fill)
    result = pick(filled, axis, out, keepdims, **kwargs)
    empty = pick(a, axis, out, keepdims, **kwargs) if complex_ else np.nan
    return E.where(E.equal(_nan_count(nan, axis, keepdims), 0.0), empty, result)


@implements(np.nanmin)
def nanmin(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
           **kwargs: Any) -> Any:
    """``np.nanmin``: the minimum of the entries that are not nan (nan if none)."""
    return _nan_extremum(min, a, axis, out, keepdims, kwargs, np.inf)


# ---------------------------------------------------------------------------
# truth reductions: booleans, no gradient


@implements(np.any)
def any(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, *,
        where: Any = None) -> Any:
    """``np.any``: whether some entry is nonzero (nan counts as true, as numpy's)."""
    refuse_kwargs("np.any", {"out": out, "where": where} if where is not None else {"out": out},
                  allowed={})
    nonzero = E.where(E.not_equal(as_float(a), 0.0), 1.0, 0.0)
    return E.greater(max(nonzero, axis, None, keepdims), 0.0)


@implements(np.all)
def all(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, *,
        where: Any = None) -> Any:
    """``np.all``: whether every entry is nonzero."""
    refuse_kwargs("np.all", {"out": out, "where": where} if where is not None else {"out": out},
                  allowed={})
    nonzero = E.where(E.not_equal(as_float(a), 0.0), 1.0, 0.0)
    return E.greater(min(nonzero, axis, None, keepdims), 0.0)


__all__ = ["all", "any", "median", "nanmax", "nanmean", "nanmin", "nanprod", "nanstd",
           "nansum", "nanvar", "percentile", "quantile"]
