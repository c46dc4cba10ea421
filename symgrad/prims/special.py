"""More elementwise primitives: logarithms and powers of 2 and 10, the cube root,
inverse hyperbolic functions, ``sinc``, ``remainder``, ``floor_divide`` and the error
functions ``erf``, ``erfc`` (``scipy.special.erf``/``erfc`` on traced values; kernels
call libm's ``math.erf``/``math.erfc``, the interpreter too, so both agree).

Declared as the primitives of :mod:`.elementwise` are (one block each, with
every facet), so that the kernel calls numpy's own function (``np.log2``, not
``log(x) / log(2)``) and values agree with numpy to the last bit. Conventions
(rows of :mod:`symgrad.core.conventions`):

- ``cbrt'(0) = +inf``, as ``sqrt'(0)``;
- ``sinc'(0) = 0`` (the derivative there; near 0 a series, free of cancellation);
- ``remainder(x, y)`` has gradient 1 in ``x`` and ``-floor_divide(x, y)`` in
  ``y``: the jumps, where the quotient changes, are ignored (as PyTorch);
- ``floor_divide`` is piecewise constant: zero gradient, as ``floor``.

    >>> import numpy as np
    >>> float(log2(np.float64(8.0))), float(remainder(np.float64(-1.0), np.float64(3.0)))
    (3.0, 2.0)
"""

from __future__ import annotations

import math

import numpy as np

from .complex import cabs
from .elementwise import (
    _elementwise_rule,
    _recorder,
    absolute,
    binary,
    cos,
    exp,
    hypot,
    sqrt,
    square,
    unary,
    where,
)
from .registry import register

LN2, LN10 = math.log(2.0), math.log(10.0)

log2_p = unary("log2", np.log2, complex=True,
               vjp=lambda g, ans, x: (g / (x * LN2),),
               sympy=lambda sp, x: sp.log(x) / sp.log(2))

log10_p = unary("log10", np.log10, complex=True,
                vjp=lambda g, ans, x: (g / (x * LN10),),
                sympy=lambda sp, x: sp.log(x) / sp.log(10))

exp2_p = unary("exp2", np.exp2, complex=True,
               vjp=lambda g, ans, x: (g * (ans * LN2),),
               sympy=lambda sp, x: 2 ** x)


def _cbrt_sympy(sp, x):
    third = sp.Rational(1, 3)
    return sp.Piecewise((x ** third, x >= 0), (-((-x) ** third), True))


# cbrt'(x) = 1 / (3 cbrt(x)^2): +inf at 0, as sqrt'(0)
cbrt_p = unary("cbrt", np.cbrt,
               vjp=lambda g, ans, x: (g / (3.0 * square(ans)),),
               sympy=_cbrt_sympy)

# 1 / sqrt(1 + x^2) as 1 / hypot(1, x): no overflow for |x| > 1e154
arcsinh_p = unary("arcsinh", np.arcsinh, complex=True,
                  vjp=lambda g, ans, x: (g / (sqrt(1.0 + square(x)) if x.dtype.kind == "c"
                                             else hypot(1.0, x)),),
                  sympy=lambda sp, x: sp.asinh(x))

# 1 / sqrt(x^2 - 1) as 1 / (sqrt(x - 1) sqrt(x + 1)): no cancellation near 1, no overflow
arccosh_p = unary("arccosh", np.arccosh, complex=True,
                  vjp=lambda g, ans, x: (g / (sqrt(x - 1.0) * sqrt(x + 1.0)),),
                  sympy=lambda sp, x: sp.acosh(x))



arctanh_p = unary("arctanh", np.arctanh, complex=True,
                  vjp=lambda g, ans, x: (g / ((1.0 - x) * (1.0 + x)),),
                  sympy=lambda sp, x: sp.atanh(x))

# sinc'(x) = (cos(pi x) - sinc(x)) / x cancels for small x; below |pi x| = 0.5 the
# Taylor series of d/du sin(u)/u = sum_k (-1)^k 2k u^(2k-1) / (2k+1)!, to u^11
# (the next term is below 1e-14 of the sum there)
_SINC_SERIES = (-1 / 3, 1 / 30, -1 / 840, 1 / 45360, -1 / 3991680, 1 / 518918400)


def _sinc_vjp(g, ans, x):
    # (holomorphic: the same series and quotient of a complex x, JAX's g * sinc'(x))
    u = math.pi * x
    small = (cabs(u) if np.dtype(x.dtype).kind == "c" else absolute(u)) < 0.5
    us = where(small, u, 0.0)
    u2 = square(us)
    poly = _SINC_SERIES[-1]
    for c in reversed(_SINC_SERIES[:-1]):
        poly = c + u2 * poly
    series = math.pi * (us * poly)
    direct = (cos(u) - ans) / where(small, 1.0, x)
    return (g * where(small, series, direct),)


sinc_p = register(
    name="sinc", complex=True, kind="elementwise", shape_rule=_elementwise_rule("sinc"),
    impl=np.sinc,
    vjp=_sinc_vjp,
    sympy=lambda sp, x: sp.Piecewise((1, sp.Eq(x, 0)), (sp.sin(sp.pi * x) / (sp.pi * x), True)),
    numpy=np.sinc)


# the quotient is piecewise constant: zero gradient, as floor
floor_divide_p = binary("floor_divide", np.floor_divide,
                        vjp=lambda g, ans, x, y: (None, None),
                        sympy=lambda sp, x, y: sp.floor(x / y))


# x - y * q with q = floor_divide(x, y) held constant: numpy's divmod pair, so q is
# the quotient numpy's remainder subtracts (the jumps of q carry no gradient)
remainder_p = binary("remainder", np.remainder,
                     vjp=lambda g, ans, x, y: (g, -(g * floor_divide(x, y))),
                     sympy=lambda sp, x, y: x - y * sp.floor(x / y))


# the error functions, as libm computes them (``math.erf``: what Numba calls too); the
# interpreter applies it per element, so the two backends agree to the bit
_ERF, _ERFC = np.frompyfunc(math.erf, 1, 1), np.frompyfunc(math.erfc, 1, 1)
TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _complex_scipy(name: str, x):
    """scipy.special's ``name`` of complex values (Faddeeva's algorithm, which libm and
    Numba do not have: these run on the interpreter, between kernels)."""
    import scipy.special  # (only a complex operand needs SciPy)
    x = np.asarray(x)
    return getattr(scipy.special, name)(x).astype(x.dtype)[()]


def _erf_impl(x):
    if np.iscomplexobj(x):
        return _complex_scipy("erf", x)
    return np.asarray(_ERF(x), dtype=np.float64)[()]


def _erfc_impl(x):
    if np.iscomplexobj(x):
        return _complex_scipy("erfc", x)
    return np.asarray(_ERFC(x), dtype=np.float64)[()]


# erf'(x) = 2/sqrt(pi) exp(-x**2): x * x overflows to inf for |x| > 1.3e154, where the
# derivative is 0 (exp(-inf)); erfc' = -erf'; holomorphic, the same of a complex x
erf_p = register(name="erf", complex=True, kind="elementwise", shape_rule=_elementwise_rule("erf"),
                 impl=_erf_impl,
                 vjp=lambda g, ans, x: (g * (TWO_OVER_SQRT_PI * exp(-(x * x))),),
                 sympy=lambda sp, x: sp.erf(x), scipy="erf")
erfc_p = register(name="erfc", complex=True, kind="elementwise",
                  shape_rule=_elementwise_rule("erfc"), impl=_erfc_impl,
                  vjp=lambda g, ans, x: (g * (-TWO_OVER_SQRT_PI * exp(-(x * x))),),
                  sympy=lambda sp, x: sp.erfc(x), scipy="erfc")


log2, log10, exp2, cbrt = map(_recorder, (log2_p, log10_p, exp2_p, cbrt_p))
erf, erfc = map(_recorder, (erf_p, erfc_p))
arcsinh, arccosh, arctanh, sinc = map(_recorder, (arcsinh_p, arccosh_p, arctanh_p, sinc_p))
floor_divide, remainder = map(_recorder, (floor_divide_p, remainder_p))

