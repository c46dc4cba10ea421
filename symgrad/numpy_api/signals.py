"""numpy's polynomial, convolution and interpolation functions on traced values:
``polyval``, ``convolve``, ``correlate`` (modes ``full``, ``same``, ``valid``), ``interp``
and ``np.linalg.matrix_power``, as compositions of elementwise operations, slices and
matrix products.

- ``polyval``: Horner's rule, as numpy's;
- ``convolve``: the sum over the shorter operand of its products with the longer one,
  shifted (zero-padded after the product, so a nan or inf meets only numpy's terms),
  then numpy's window for the mode; ``correlate(a, v)`` is ``convolve(a, v[::-1])`` for
  real values, with numpy's order when ``v`` is the longer one;
- ``interp``: the piecewise-linear function of ``(xp, fp)`` as a sum over the intervals
  of a selected linear piece (no value-dependent index: ``x`` against every knot, so
  ``O(len(x) len(xp))`` work), with numpy's ``left``/``right`` and its value ``fp[i]``
  at a knot; the gradient in ``x`` is the slope of the interval to the right of a knot,
  0 outside ``[xp[0], xp[-1]]``; gradients in ``fp`` and ``xp`` too;
- ``matrix_power``: repeated squaring (``inv`` first for a negative power).

    >>> import numpy as np, symgrad as sg
    >>> float(sg.grad(lambda x: np.polyval(np.array([1.0, 0.0, 2.0]), x))(3.0))
    6.0
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..core.errors import UnsupportedFunctionError, user_location
from ..core.tracing import shape_of
from ..prims import complex as CX
from ..prims import elementwise as E
from ..prims.elementwise import as_float
from .dispatch import implements
from .functions import reshape, sum
from .indexing import getitem
from .linalg import inv, matmul
from .shapes import concatenate

MODES = ("full", "same", "valid")


@implements(np.polyval)
def polyval(p: Any, x: Any) -> Any:
    """``p[0] * x**(n-1) + ... + p[n-1]`` by Horner's rule."""
    coefficients = [as_float(c) for c in (p if isinstance(p, (list, tuple)) else
                                          [getitem(as_float(p), k)
                                           for k in range(shape_of(as_float(p))[0])])]
    x = as_float(x)
    y: Any = 0.0
    for c in coefficients:  # numpy's own arithmetic: y = zeros_like(x); y = y * x + c
        y = E.add(E.mul(y, x), c)
    return E.add(E.mul(x, 0.0), y) if not coefficients else y


def _one_d(name: str, a: Any) -> Any:
    a = as_float(a)
    if len(shape_of(a)) != 1:
        a = reshape(a, (-1,)) if len(shape_of(a)) == 0 else a
    if len(shape_of(a)) != 1:
        raise ValueError(f"{name}: object too deep for desired array")
    if shape_of(a)[0] == 0:
        raise ValueError(f"{name}: v cannot be empty" if name.endswith("correlate")
                         else f"{name}: a cannot be empty")
    return a


def _full(long: Any, short: Any) -> Any:
    """The full convolution, ``len(long) + len(short) - 1`` values."""
    n, m = shape_of(long)[0], shape_of(short)[0]
    total = None
    for j in range(m):  # zeros padded after the product: nan * 0 is not numpy's term
        product = E.mul(getitem(short, j), long)
        parts = [p for p in (np.zeros(j), product, np.zeros(m - 1 - j)) if np.shape(p) != (0,)]
        term = concatenate(parts) if len(parts) > 1 else parts[0]
        total = term if total is None else E.add(total, term)
    assert shape_of(total) == (n + m - 1,)
    return total


def _window(full: Any, n: int, m: int, mode: str) -> Any:
    """numpy's part of the full convolution of lengths ``n >= m`` for ``mode``."""
    if mode == "full":
        return full
    if mode == "same":
        start = (m - 1) // 2
        return getitem(full, slice(start, start + n))
    return getitem(full, slice(m - 1, n))


def _mode(name: str, mode: Any) -> str:
    if mode not in MODES:
        raise ValueError(f"{name}: mode must be one of {MODES}, not {mode!r}")
    return mode


@implements(np.convolve)
def convolve(a: Any, v: Any, mode: str = "full") -> Any:
    """``np.convolve`` of two 1-d arrays (modes full, same, valid)."""
    mode = _mode("np.convolve", mode)
    a, v = _one_d("np.convolve", a), _one_d("np.convolve", v)
    if shape_of(v)[0] > shape_of(a)[0]:
        a, v = v, a  # numpy swaps too: the window is the longer one's
    n, m = shape_of(a)[0], shape_of(v)[0]
    return _window(_full(a, v), n, m, mode)


def _reversed(a: Any) -> Any:
    return getitem(a, slice(None, None, -1))


@implements(np.correlate)
def correlate(a: Any, v: Any, mode: str = "valid") -> Any:
    """``np.correlate`` of two 1-d arrays: ``sum_n a[n + k] conj(v[n])`` (modes as
    ``convolve``'s; numpy's order of the output when ``v`` is longer: the conjugate of
    ``correlate(v, a)`` reversed)."""
    mode = _mode("np.correlate", mode)
    a, v = _one_d("np.correlate", a), _one_d("np.correlate", v)
    complex_ = np.iscomplexobj(a) or np.iscomplexobj(v)
    if shape_of(v)[0] > shape_of(a)[0]:
        swapped = _reversed(correlate(v, a, mode))
        return CX.conj(swapped) if complex_ else swapped
    n, m = shape_of(a)[0], shape_of(v)[0]
    return _window(_full(a, _reversed(CX.conj(v) if np.iscomplexobj(v) else v)), n, m, mode)


@implements(np.interp)
def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None,
           period: Any = None) -> Any:
    """``np.interp``: see the module docstring (``period`` is refused)."""
    if period is not None:
        raise UnsupportedFunctionError(
            f"np.interp(..., period=...) on traced values (at {user_location()}): reduce x "
            "modulo the period first (np.remainder) and extend xp, fp by one period")
    x, xp, fp = as_float(x), as_float(xp), as_float(fp)
    if np.iscomplexobj(x) or np.iscomplexobj(xp):
        raise TypeError("np.interp of complex x or xp: numpy cannot cast them to float64 "
                        "(complex fp, the values, are numpy's and symgrad's)")
    if len(shape_of(xp)) != 1 or shape_of(xp) != shape_of(fp):
        raise ValueError("fp and xp are not of the same length.")
    k = shape_of(xp)[0]
    first, last = getitem(fp, 0), getitem(fp, k - 1)
    lo_x, hi_x = getitem(xp, 0), getitem(xp, k - 1)
    xs = reshape(x, (*shape_of(x), 1))  # against every interval along a last axis
    if k > 1:
        x0, x1 = getitem(xp, slice(0, k - 1)), getitem(xp, slice(1, k))
        f0, f1 = getitem(fp, slice(0, k - 1)), getitem(fp, slice(1, k))
        inside = E.where(E.greater_equal(xs, x0), E.less(xs, x1), False)
        slope = E.div(E.sub(f1, f0), E.sub(x1, x0))
        piece = E.add(f0, E.mul(E.sub(xs, x0), slope))
        value = sum(E.where(inside, piece, 0.0), axis=-1)
        # at the last point exactly numpy's fp[-1], with the last segment's slope as the
        # derivative (JAX's; the first point already has its segment's)
        at_end = E.add(last, E.mul(E.sub(x, hi_x), getitem(slope, k - 2)))
    else:
        value = E.mul(x, 0.0)
        at_end = last
    value = E.where(E.equal(x, hi_x), at_end, value)
    value = E.where(E.greater(x, hi_x), last if right is None else as_float(right), value)
    value = E.where(E.less(x, lo_x), first if left is None else as_float(left), value)
    return E.where(E.not_equal(x, x), np.nan, value)


@implements(np.linalg.matrix_power)
def matrix_power(a: Any, n: Any) -> Any:
    """``np.linalg.matrix_power`` for an integer ``n`` (a number): repeated squaring."""
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError("exponent must be an integer") from None
    a = as_float(a)
    shape = shape_of(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise np.linalg.LinAlgError(f"{len(shape)}-dimensional array given. Array must be at "
                                    "least two-dimensional" if len(shape) < 2 else
                                    "Last 2 dimensions of the array must be square")
    if n == 0:
        return E.add(E.mul(a, 0.0), np.eye(shape[-1]))
    if n < 0:
        a, n = inv(a), -n
    result, power = None, a
    while n:
        if n & 1:
            result = power if result is None else matmul(result, power)
        n >>= 1
        if n:
            power = matmul(power, power)
    return result


__all__ = ["convolve", "correlate", "interp", "matrix_power", "polyval"]
