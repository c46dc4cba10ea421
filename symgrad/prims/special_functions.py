"""scipy.special's functions as primitives: ``gammaln``, ``gamma``, ``digamma``,
``polygamma`` (order ``n`` a parameter), ``beta``, ``betaln``, ``gammainc``,
``gammaincc`` (differentiable in ``x`` only), ``erfinv``, ``ndtr`` (the
normal distribution's CDF), the modified Bessel functions ``i0``, ``i1``, ``i0e``, ``i1e``,
the Hurwitz ``zeta`` (in ``q``, the exponent ``s`` a parameter), ``loggamma``, ``rgamma``,
``erfi``, ``erfcx``, ``dawsn``, the exponential integrals ``exp1`` and ``expi``, the
dilogarithm ``spence`` and ``log_ndtr`` (both real). The Bessel functions of any order
are in :mod:`.bessel`.

Those scipy computes of complex values (its ufuncs with a ``D->D`` loop: ``gamma``,
``psi``, ``ndtr``, ``loggamma``, ``rgamma``, ``erfi``, ``erfcx``, ``dawsn``, ``exp1``,
``expi``) take complex
operands (``complex=True``), scipy's values; their derivatives are the holomorphic ones
of the same rules, with ``polygamma`` of complex values from
:mod:`.complex_polygamma` (scipy's is real only).

Each is declared in one block with every facet; each VJP is written with these
primitives (``gammaln' = digamma``, ``digamma' = polygamma(1, .)``,
``erfinv' = sqrt(pi)/2 exp(erfinv**2)``, ``i0' = i1``, ``i1' = i0 - i1/x`` with its limit
1/2 at 0, ``zeta(s, q)' = -s zeta(s + 1, q)``), so every order of derivative exists.

Where they run:

- ``gammaln`` and ``gamma`` are libm's ``lgamma`` and ``tgamma`` on both backends (Numba
  calls ``math.lgamma``/``math.gamma``, which are libm's; the interpreter calls libm
  through ctypes), so the backends agree to the bit. libm's ``lgamma`` is the accurate
  one near its zeros 1 and 2 (scipy's ``gammaln(2 - 1e-9)`` is 3e-7 off in relative
  terms, CPython's ``math.lgamma`` 1e-6; glibc's is exact there);
- the others are scipy's (imported on first use: ``import symgrad`` never loads
  scipy.special). Numba cannot call scipy, so they are ``host`` primitives: a compiled
  graph is cut around each of their equations, which runs scipy's ufunc on the arrays
  in between two kernels (:mod:`symgrad.backend.program`). That costs a kernel
  boundary per equation (the arrays go through Python once), never a wrong number.

Domains are scipy's: poles give scipy's inf or nan; ``gammaln`` is ``log|gamma|``,
whose derivative is ``digamma`` for negative arguments too.

    >>> import numpy as np
    >>> float(gammaln(np.float64(5.0))) == float(np.log(24.0))
    True
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.errors import Refused
from ..core.ir import Aval
from ..core.tracing import apply
from .complex import cabs, real
from .complex_polygamma import complex_polygamma
from .elementwise import (
    _recorder,
    absolute,
    as_float,
    cos,
    exp,
    floor,
    log,
    magnitude,
    rint,
    sign,
    sin,
    square,
    where,
)
from .registry import elementwise_rule, register

SQRT_PI_OVER_2 = math.sqrt(math.pi) / 2.0
TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
SQRT_HALF = math.sqrt(0.5)


@functools.cache
def _libm() -> Any:
    name = ctypes.util.find_library("m")
    lib = ctypes.CDLL(name) if name else None
    if lib is not None:
        for fn in (lib.lgamma, lib.tgamma):
            fn.argtypes, fn.restype = [ctypes.c_double], ctypes.c_double
    return lib


def _per_element(fn: Callable[[float], float], x: Any) -> Any:
    """``fn`` of each element of ``x``, as float64 (a numpy scalar for a 0-d ``x``)."""
    out = np.frompyfunc(fn, 1, 1)(np.asarray(x, dtype=np.float64))
    return np.asarray(out, dtype=np.float64)[()]


def _lgamma(x: Any) -> Any:
    """libm's ``lgamma`` of each element (what Numba's ``math.lgamma`` calls)."""
    lib = _libm()
    if lib is None:  # no libm to load (not glibc): scipy's, a few ulp apart
        return _scipy("gammaln")(x)
    return _per_element(lib.lgamma, x)


def _tgamma(x: Any) -> Any:
    """libm's ``tgamma`` of each element (what Numba's ``math.gamma`` calls); scipy's
    ``gamma`` of complex values (both backends: Numba runs it between kernels)."""
    lib = _libm()
    if lib is None or np.iscomplexobj(x):
        return _scipy("gamma")(x)
    return _per_element(lib.tgamma, x)


_lgamma.nin = _tgamma.nin = 1  # type: ignore[attr-defined] (as a ufunc's)


def _scipy(name: str, nin: int = 1) -> Callable[..., Any]:
    """scipy.special.``name`` on arrays, imported when first called, float64 out (of
    complex operands, scipy's complex result: complex64 of complex64, as its loops)."""
    def impl(*args: Any, **params: Any) -> Any:
        import scipy.special as S  # noqa: N812 (slow to import: only when used)
        with np.errstate(all="ignore"):
            if name == "polygamma" and np.iscomplexobj(args[0]):
                out = complex_polygamma(params["n"], *args)  # (scipy's is real only)
            elif name == "polygamma":
                out = S.polygamma(params["n"], *args)
            elif name == "zeta":
                out = S.zeta(params["s"], *args)
            else:
                out = getattr(S, name)(*args)
        out = np.asarray(out)
        return (out if out.dtype.kind == "c" else out.astype(np.float64))[()]
    impl.__name__ = name
    impl.nin = nin  # type: ignore[attr-defined] (as a ufunc's)
    return impl


def _rule(name: str, nin: int = 1) -> Callable[..., Aval]:
    base = elementwise_rule(name)

    def rule(*avals: Aval, **params: Any) -> Aval:
        if len(avals) != nin:
            raise TypeError(f"{name} takes {nin} operand(s), got {len(avals)}")
        return base(*avals)
    return rule


def _special(name: str, vjp: Callable, sympy: Callable, nin: int = 1, **facets: Any) -> Any:
    """A scipy.special function as a host primitive (see the module docstring); the
    scipy.special ufunc ``name`` traces to it unless ``scipy=`` says otherwise."""
    facets.setdefault("scipy", name)
    return register(name=name, kind="elementwise", shape_rule=_rule(name, nin),
                    impl=_scipy(name, nin), vjp=vjp, sympy=sympy,
                    host=True, **facets)


def _log_abs_gamma(sp: Any, x: Any) -> Any:
    # scipy's gammaln is log|gamma(x)|: SymPy's loggamma is that for x > 0 only
    return sp.Piecewise((sp.loggamma(x), x > 0), (sp.log(sp.Abs(sp.gamma(x))), True))


# gammaln' = digamma, also for x < 0 (the derivative of log|gamma|)
gammaln_p = register(name="gammaln", kind="elementwise", shape_rule=_rule("gammaln"),
                     impl=_lgamma,
                     vjp=lambda g, ans, x: (g * digamma(x),), sympy=_log_abs_gamma)
# (no ``scipy`` name: scipy's gammaln is -inf at -inf where libm's lgamma, PyTorch's, is
# inf: numpy_api.scipy_special.COMPOSITES holds it)

# gamma' = gamma * digamma
gamma_p = register(name="gamma", complex=True, kind="elementwise", shape_rule=_rule("gamma"),
                   impl=_tgamma,
                   vjp=lambda g, ans, x: (g * (ans * digamma(x)),),
                   sympy=lambda sp, x: sp.gamma(x), scipy="gamma")

digamma_p = _special("digamma", complex=True,
                     vjp=lambda g, ans, x: (g * polygamma(x, n=1),),
                     sympy=lambda sp, x: sp.polygamma(0, x), scipy="psi")

polygamma_p = _special("polygamma", complex=True,
                       vjp=lambda g, ans, x, n: (g * polygamma(x, n=n + 1),),
                       sympy=lambda sp, x, n: sp.polygamma(n, x),
                       scipy="")  # (a Python function)


def _beta_vjp(g, ans, a, b):
    both = digamma(a + b)
    return (g * (ans * (digamma(a) - both)), g * (ans * (digamma(b) - both)))


def _betaln_vjp(g, ans, a, b):
    both = digamma(a + b)
    return (g * (digamma(a) - both), g * (digamma(b) - both))


beta_p = _special("beta", vjp=_beta_vjp, nin=2,
                  sympy=lambda sp, a, b: sp.gamma(a) * sp.gamma(b) / sp.gamma(a + b))
betaln_p = _special("betaln", vjp=_betaln_vjp, nin=2,
                    sympy=lambda sp, a, b: sp.log(sp.Abs(sp.gamma(a) * sp.gamma(b)
                                                         / sp.gamma(a + b))))

# erfinv' = sqrt(pi)/2 exp(erfinv(x)**2): finite up to x = +-1 (erfinv(1 - 2**-53) = 5.86)
erfinv_p = _special("erfinv", vjp=lambda g, ans, x: (g * (SQRT_PI_OVER_2 * exp(square(ans))),),
                    sympy=lambda sp, x: sp.erfinv(x))


#: i1'(x) = sum_k (2k + 1)/2 (x/2)**(2k) / (k! (k + 1)!), to k = 10: below |x| = 1 the next
#: term is under 1e-20 of the sum
_I1_PRIME = tuple((2 * k + 1) / 2 / (math.factorial(k) * math.factorial(k + 1))
                  for k in range(11))


def _i1_prime(x):
    """``i1'(x) = i0(x) - i1(x)/x``, and below ``|x| = 1`` its Taylor series: the quotient
    is 0/0 at 0, wrong at subnormals (where ``i1(x) = x/2`` rounds) and its derivatives
    cancel near 0 (``i1''`` through ``i1/x**2`` loses 1e-4 at 1e-6). The series carries
    every derivative there (``i1'(0) = 1/2``, ``i1'''(0) = 3/8``)."""
    small = absolute(x) < 1.0
    xs = where(small, 1.0, x)
    u = square(0.5 * where(small, x, 0.0))
    series = _I1_PRIME[-1]
    for c in reversed(_I1_PRIME[:-1]):
        series = c + u * series
    return small, where(small, series, i0(xs) - i1(xs) / xs)


def _i1_vjp(g, ans, x):
    return (g * _i1_prime(x)[1],)


def _i1e_vjp(g, ans, x):
    # i1e = exp(-|x|) i1: i1e' = exp(-|x|) i1' - sign(x) i1e; for |x| >= 1, i0e - i1e/x -
    # sign(x) i1e, whose terms cancel (i1e'(1) = 0.466 - 0.208 - 0.208 = 0.050), and
    # from |x| = 20 on more and more (i0e - i1e ~ i0e/(2x)): the relative error grows
    # as x there (against i1e's own size it stays at an ulp)
    small, prime = _i1_prime(x)
    xs = where(small, 1.0, x)
    scaled = where(small, exp(-magnitude(x)) * prime, i0e(xs) - i1e(xs) / xs)
    return (g * (scaled - sign(x) * ans),)


i0_p = _special("i0", vjp=lambda g, ans, x: (g * i1(x),),
                sympy=lambda sp, x: sp.besseli(0, x))
i1_p = _special("i1", vjp=_i1_vjp, sympy=lambda sp, x: sp.besseli(1, x))
# i0e = exp(-|x|) i0: i0e' = i1e - sign(x) i0e (0 at the kink x = 0, as abs'(0)); the
# difference cancels from |x| = 20 on, as in i1e' (relative error growing as x)
i0e_p = _special("i0e", vjp=lambda g, ans, x: (g * (i1e(x) - sign(x) * ans),),
                 sympy=lambda sp, x: sp.exp(-sp.Abs(x)) * sp.besseli(0, x))
i1e_p = _special("i1e", vjp=_i1e_vjp,
                 sympy=lambda sp, x: sp.exp(-sp.Abs(x)) * sp.besseli(1, x))

# ndtr' = exp(-x**2/2)/sqrt(2 pi), the normal density: x * x overflows to inf past
# |x| = 1.3e154, where the density is 0 (exp(-inf))
ndtr_p = _special("ndtr", complex=True,
                  vjp=lambda g, ans, x: (g * (INV_SQRT_2PI * exp(-0.5 * (x * x))),),
                  sympy=lambda sp, x: (1 + sp.erf(x / sp.sqrt(2))) / 2)

# the regularized incomplete gamma functions P(a, x) (gammainc, torch.igamma) and
# Q(a, x) = 1 - P (gammaincc, torch.igammac): d/dx P = x**(a-1) exp(-x) / gamma(a), written
# as PyTorch's backward writes it; d/da has no closed form and PyTorch raises for it: so
# does the adjoint here, when a depends on what is differentiated (Refused)
IGAMMA_A_ERROR = (
    "the derivative of {name} with respect to its first argument a is not implemented (as in "
    "PyTorch, whose igamma/igammac raise for it): differentiate with respect to x only "
    "(a.detach())")


def _gammainc_density(a: Any, x: Any) -> Any:
    return exp((a - 1.0) * log(x) - x - gammaln(a))


gammainc_p = _special(
    "gammainc", nin=2, sympy=lambda sp, a, x: sp.lowergamma(a, x) / sp.gamma(a),
    vjp=lambda g, ans, a, x: (Refused(NotImplementedError(IGAMMA_A_ERROR.format(
        name="gammainc (igamma)"))), g * _gammainc_density(a, x)))
gammaincc_p = _special(
    "gammaincc", nin=2, sympy=lambda sp, a, x: sp.uppergamma(a, x) / sp.gamma(a),
    vjp=lambda g, ans, a, x: (Refused(NotImplementedError(IGAMMA_A_ERROR.format(
        name="gammaincc (igammac)"))), -(g * _gammainc_density(a, x))))


# the principal branch of log(gamma) (scipy's loggamma: nan for real x < 0, where
# gammaln is log|gamma|); loggamma' = digamma
loggamma_p = _special("loggamma", complex=True, vjp=lambda g, ans, x: (g * digamma(x),),
                      sympy=lambda sp, x: sp.loggamma(x))

def _rgamma_vjp(g, ans, x):
    # rgamma' = -rgamma digamma, but within 1/4 of its zeros 0, -1, -2, ... (digamma's
    # poles: 0 * inf at them, and the second derivative rgamma (digamma**2 -
    # polygamma(1, .)) cancels near them) by the reflection rgamma(x) = gamma(1 - x)
    # sin(pi x)/pi: gamma(1 - x) (cos(pi x) - digamma(1 - x) sin(pi x)/pi), with
    # sin(pi r) and cos(pi r) of r = x - k, k the nearest integer (exact), times (-1)**k.
    # (Only there: at the half-integers cos(pi r) is 6e-17, not 0.)
    cplx = np.dtype(x.dtype).kind == "c"
    k = rint(real(x) if cplx else x)
    near = (cabs(x - k) if cplx else absolute(x - k)) < where(k < 0.5, 0.25, -1.0)
    xl = where(near, x, 0.0)
    k = where(near, k, 0.0)
    turn = 1.0 - 2.0 * (k - 2.0 * floor(0.5 * k))  # (-1)**k
    u = math.pi * (xl - k)
    reflected = gamma(1.0 - xl) * (turn * cos(u) - digamma(1.0 - xl) * (turn * sin(u))
                                   / math.pi)
    return (g * where(near, reflected, -(ans * digamma(where(near, 1.0, x)))),)


# rgamma = 1/gamma (entire)
rgamma_p = _special("rgamma", complex=True, vjp=_rgamma_vjp,
                    sympy=lambda sp, x: 1 / sp.gamma(x))

# erfi(x) = -i erf(ix): erfi' = 2/sqrt(pi) exp(x**2) (inf past |x| = 26.6, as erfi)
erfi_p = _special("erfi", complex=True,
                  vjp=lambda g, ans, x: (g * (TWO_OVER_SQRT_PI * exp(x * x)),),
                  sympy=lambda sp, x: sp.erfi(x))


#: (2k - 1)!! for k = 1..48: the asymptotic series of erfcx' and dawsn' (below)
_DOUBLE_FACTORIALS = tuple(float(math.prod(range(1, 2 * k, 2))) for k in range(1, 49))
ASYMPTOTIC_FROM = 7.0


def _asymptotic_tail(x: Any, far: Any, sign: float) -> Any:
    """``sum_(k=1..48) sign**k (2k-1)!! t**k`` with ``t = 1/(2 x**2)`` where ``far``
    (``|x| >= 7``; elsewhere of x = 7): ``2x erfcx(x)`` and ``2x dawsn(x)`` are ``1 +``
    this sum (times ``2/sqrt(pi)`` for erfcx), so ``erfcx'`` and ``dawsn'``, which cancel
    to ``1/x**2`` in ``2x f(x) - 1``, are the sum itself. At 7 the terms are smallest at
    k = 48, 1e-19 of the first; past 7 they fall faster."""
    xs = where(far, x, ASYMPTOTIC_FROM)
    t = (0.5 / xs) / xs  # (no overflow of x**2 at 1e154)
    total = sign ** 48 * _DOUBLE_FACTORIALS[-1]
    for k in range(47, 0, -1):
        total = sign ** k * _DOUBLE_FACTORIALS[k - 1] + t * total
    return t * total


def _erfcx_vjp(g, ans, x):
    # erfcx' = 2x erfcx(x) - 2/sqrt(pi): for real x >= 7 the series (the difference
    # cancels as x**2: 100 ulp at 7); below -26.6 erfcx overflows to inf, and so does
    # erfcx'; of complex values the difference (holomorphic)
    direct = 2.0 * (x * ans) - TWO_OVER_SQRT_PI
    if np.dtype(x.dtype).kind == "c":
        return (g * direct,)
    far = x >= ASYMPTOTIC_FROM
    return (g * where(far, TWO_OVER_SQRT_PI * _asymptotic_tail(x, far, -1.0), direct),)


def _dawsn_vjp(g, ans, x):
    # dawsn' = 1 - 2x dawsn(x): for real |x| >= 7 the series (the difference cancels as
    # x**2); of complex values the difference (holomorphic)
    direct = 1.0 - 2.0 * (x * ans)
    if np.dtype(x.dtype).kind == "c":
        return (g * direct,)
    far = absolute(x) >= ASYMPTOTIC_FROM
    return (g * where(far, -_asymptotic_tail(x, far, 1.0), direct),)


# erfcx(x) = exp(x**2) erfc(x), the scaled complementary error function
erfcx_p = _special("erfcx", complex=True, vjp=_erfcx_vjp,
                   sympy=lambda sp, x: sp.exp(x ** 2) * sp.erfc(x))
# Dawson's integral sqrt(pi)/2 exp(-x**2) erfi(x)
dawsn_p = _special("dawsn", complex=True, vjp=_dawsn_vjp,
                   sympy=lambda sp, x: sp.sqrt(sp.pi) / 2 * sp.exp(-x ** 2) * sp.erfi(x))


def _log_ndtr_vjp(g, ans, x):
    # log_ndtr' = phi(x)/Phi(x) (the normal density over the CDF), never as the quotient
    # of those below 0, where both underflow: there sqrt(2/pi)/erfcx(-x/sqrt(2)) (the
    # same, exactly; ~ -x far left); at and above 0 the quotient, Phi in [1/2, 1]
    left = x < 0.0
    xl, xr = where(left, x, -1.0), where(left, 0.0, x)
    mills = SQRT_2_OVER_PI / erfcx(-SQRT_HALF * xl)
    density = INV_SQRT_2PI * exp(-0.5 * (xr * xr)) / ndtr(xr)
    return (g * where(left, mills, density),)


# log(ndtr(x)), scipy's (accurate in the far left tail, where ndtr underflows; right of
# 3 up to 33 ulp off: sg.scipy.stats.norm.logcdf keeps its composite, a few ulp); real
log_ndtr_p = _special("log_ndtr", vjp=_log_ndtr_vjp,
                      sympy=lambda sp, x: sp.log(sp.erfc(-x / sp.sqrt(2)) / 2))


# the exponential integrals E1 (exp1; scipy's nan for real x < 0) and Ei (expi):
# exp1' = -exp(-x)/x, expi' = exp(x)/x, the latter as exp(x/2) (exp(x/2)/x), finite
# past exp's overflow (e**710/710 = 3.2e305, which scipy's expi(710) gives as inf)
exp1_p = _special("exp1", complex=True, vjp=lambda g, ans, x: (g * (-exp(-x) / x),),
                  sympy=lambda sp, x: sp.expint(1, x))
expi_p = _special("expi", complex=True,
                  vjp=lambda g, ans, x: (g * (exp(0.5 * x) * (exp(0.5 * x) / x)),),
                  sympy=lambda sp, x: sp.Ei(x))


#: -log1p(u)/u = -sum_k (-u)**k/(k + 1), to k = 30: below |u| = 1/4 the next term is
#: under 1e-19 of the sum
_SPENCE_SERIES = tuple(-((-1.0) ** k) / (k + 1) for k in range(31))


def _spence_vjp(g, ans, x):
    # scipy's spence(x) = int_1^x log(t)/(1 - t) dt (= polylog(2, 1 - x)): spence' =
    # log(x)/(1 - x); within 1/4 of 1 the series of log1p(u)/-u in u = x - 1 (exact
    # there), which carries the limit -1 at 1 and the higher derivatives (the quotient's
    # cancel). (At x = 0 the second derivative is inf - inf: nan, for the exact +inf.)
    u = x - 1.0
    near = absolute(u) < 0.25
    us = where(near, u, 0.0)
    series = _SPENCE_SERIES[-1]
    for c in reversed(_SPENCE_SERIES[:-1]):
        series = c + us * series
    xf = where(near, 2.0, x)
    return (g * where(near, series, log(xf) / (1.0 - xf)),)


# dilogarithm (real x >= 0; scipy's nan below)
spence_p = _special("spence", vjp=_spence_vjp, sympy=lambda sp, x: sp.polylog(2, 1 - x))


# Hurwitz zeta(s, q) = sum_k (k + q)**-s in q, for a constant s: d/dq = -s zeta(s + 1, q)
zeta_p = _special("zeta", vjp=lambda g, ans, q, s: (g * (-s * zeta(q, s=s + 1.0)),),
                  sympy=lambda sp, q, s: sp.zeta(sp.Float(s, 60) if s != int(s) else int(s), q),
                  scipy="")  # (scipy's zeta is a Python function; see numpy_api.scipy_special)


def _with_params(prim: Any) -> Callable[..., Any]:
    def fn(*args: Any, **params: Any) -> Any:
        return apply(prim, *map(as_float, args), **params)
    fn.__name__ = fn.__qualname__ = prim.name
    fn.__doc__ = f"Elementwise ``{prim.name}`` with its parameter (one equation)."
    return fn


gammaln, gamma, digamma, erfinv = map(_recorder, (gammaln_p, gamma_p, digamma_p, erfinv_p))
beta, betaln = map(_recorder, (beta_p, betaln_p))
gammainc, gammaincc = map(_recorder, (gammainc_p, gammaincc_p))
i0, i1, i0e, i1e, ndtr = map(_recorder, (i0_p, i1_p, i0e_p, i1e_p, ndtr_p))
loggamma, rgamma, erfi, erfcx, dawsn = map(_recorder, (loggamma_p, rgamma_p, erfi_p, erfcx_p,
                                                       dawsn_p))
exp1, expi, spence, log_ndtr = map(_recorder, (exp1_p, expi_p, spence_p, log_ndtr_p))
polygamma, zeta = _with_params(polygamma_p), _with_params(zeta_p)

__all__ = ["beta", "beta_p", "betaln", "betaln_p", "dawsn", "dawsn_p", "digamma", "digamma_p",
           "erfcx", "erfcx_p", "erfi", "erfi_p", "erfinv", "erfinv_p", "exp1", "exp1_p", "expi",
           "expi_p", "gamma", "gamma_p", "gammainc", "gammainc_p", "gammaincc", "gammaincc_p",
           "gammaln", "gammaln_p", "i0", "i0_p", "i0e", "i0e_p", "i1", "i1_p", "i1e", "i1e_p",
           "loggamma", "loggamma_p", "ndtr", "ndtr_p", "polygamma", "polygamma_p", "rgamma",
           "rgamma_p", "spence", "spence_p", "zeta", "zeta_p"]
