"""``sg.scipy.stats``: log-densities, densities and distribution functions of the common
distributions on traced values, differentiable in the data and in the parameters (as
``jax.scipy.stats``).

scipy.stats's ``rv_continuous`` methods are Python code that converts its arguments
with ``np.asarray`` and branches on their values, so they cannot take traced values;
called with one, they fail with an error that names the function here (see
:mod:`symgrad.core.errors`). Each function here is a traced composition of the
special functions (``gammaln``, ``betaln``, ``xlogy``, ``erfc``, ...) with scipy's
signature and parametrization (``loc``, ``scale``; ``a``, ``b``; ``df``; ``mu``; ``n``,
``p``) and scipy's values outside the support (``-inf`` log-density, 0 density).

- ``norm``: ``logpdf``, ``pdf``, ``logcdf`` (scipy's ``log_ndtr``: an asymptotic series
  below ``z = -20``, where ``log(erfc)`` underflows), ``cdf``, ``sf``, ``logsf``;
- ``t``, ``gamma``, ``beta``: ``logpdf``, ``pdf`` (their distribution functions need the
  incomplete beta and gamma functions, which symgrad does not have: refused);
- ``poisson``, ``binom``: ``logpmf``, ``pmf`` (``-inf``/0 off the integers of the support);
- ``multivariate_normal``: ``logpdf``, ``pdf`` (``mean``, ``cov`` a matrix, a vector of
  variances or a number; the dimension and the shapes as scipy infers them), through a
  Cholesky-free ``solve`` and ``slogdet``;
- ``dirichlet``: ``logpdf``, ``pdf`` (components along the first axis, as scipy's).

    >>> import numpy as np, symgrad as sg
    >>> float(sg.scipy.stats.norm.logpdf(0.0))
    -0.9189385332046727
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.errors import SCIPY_EQUIVALENTS, UnsupportedFunctionError
from ..core.tracing import shape_of
from ..prims import elementwise as E
from ..prims import special_functions as SF
from ..prims.elementwise import as_float
from ..prims.special import erfc
from . import functions as F
from . import linalg as L
from .scipy_special import xlog1py

LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
SQRT_HALF = math.sqrt(0.5)
NEG_INF = -np.inf


def _z(x: Any, loc: Any, scale: Any) -> Any:
    return E.div(E.sub(as_float(x), as_float(loc)), as_float(scale))


def _nan_unless(value: Any, *valid: Any) -> Any:
    """``value`` where every condition on the parameters holds, else nan, as scipy gives
    for parameters outside a distribution's domain (a negative scale, ``mu < 0``, ...)."""
    for ok in valid:
        value = E.where(ok, value, np.nan)
    return value


def _positive(x: Any) -> Any:
    return E.greater(as_float(x), 0.0)


def _refuse(dist: str, method: str, why: str) -> Any:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise UnsupportedFunctionError(f"sg.scipy.stats.{dist}.{method} is not available: "
                                       f"{why}; logpdf/pdf are")
    refuse.refused = True  # type: ignore[attr-defined]
    return refuse


class _Distribution:
    """A namespace of functions with scipy's names; ``pdf`` is ``exp(logpdf)``."""

    name = ""

    def __repr__(self) -> str:
        return f"<sg.scipy.stats.{self.name}>"


class _Norm(_Distribution):
    name = "norm"

    def logpdf(self, x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
        z = _z(x, loc, scale)
        return _nan_unless(E.sub(E.mul(-0.5, E.square(z)),
                                 E.add(LOG_SQRT_2PI, E.log(as_float(scale)))), _positive(scale))

    def pdf(self, x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
        return E.exp(self.logpdf(x, loc, scale))

    def cdf(self, x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
        # ndtr(z) = erfc(-z/sqrt(2))/2: accurate in relative terms in the lower tail
        return _nan_unless(E.mul(0.5, erfc(E.mul(-SQRT_HALF, _z(x, loc, scale)))),
                           _positive(scale))

    def sf(self, x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
        return _nan_unless(E.mul(0.5, erfc(E.mul(SQRT_HALF, _z(x, loc, scale)))),
                           _positive(scale))

    def logcdf(self, x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
        return _nan_unless(log_ndtr(_z(x, loc, scale)), _positive(scale))

    def logsf(self, x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
        return _nan_unless(log_ndtr(E.neg(_z(x, loc, scale))), _positive(scale))


def log_ndtr(z: Any) -> Any:
    """``log(ndtr(z))``, as scipy's ``log_ndtr``: ``log1p(-ndtr(-z))`` above 0 (where
    ``log`` of a value near 1 would cancel), ``log(ndtr(z))`` down to ``z = -20`` and
    below that the asymptotic series
    ``-z**2/2 - log(-z) - log(2 pi)/2 + log(1 - 1/z**2 + 3/z**4 - ...)`` (where erfc
    underflows from ``z = -38`` on, the series holds to a few ulp from ``z = -20``)."""
    z = as_float(z)
    # float32's erfc underflows from z = -13 on: its series starts at -10 (to 4e-11 there)
    edge = -10.0 if str(getattr(z, "dtype", "float64")) in ("float32", "float16") else -20.0
    upper = E.greater(z, 0.0)
    lower = E.less(z, edge)
    zu = E.where(upper, z, 1.0)
    zm = E.where(lower, edge, E.where(upper, 0.0, z))
    zl = E.where(lower, z, edge)
    high = E.log1p(E.mul(-0.5, erfc(E.mul(SQRT_HALF, zu))))
    middle = E.log(E.mul(0.5, erfc(E.mul(-SQRT_HALF, zm))))
    r = E.reciprocal(E.square(zl))
    series, term = 1.0, 1.0
    for k in range(1, 10):  # (2k - 1)!! (-1/z**2)**k: the 10th term is below 1e-17 at -20
        term = E.mul(term, E.mul(-(2.0 * k - 1.0), r))
        series = E.add(series, term)
    tail = E.sub(E.sub(E.mul(-0.5, E.square(zl)), E.log(E.neg(zl))),
                 E.sub(LOG_SQRT_2PI, E.log(series)))
    return E.where(upper, high, E.where(lower, tail, middle))


class _T(_Distribution):
    name = "t"

    def logpdf(self, x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
        df = as_float(df)
        z = _z(x, loc, scale)
        half = E.mul(0.5, df)
        # gammaln(df/2 + 1/2) - gammaln(df/2) - log(pi df)/2 = -betaln(df/2, 1/2) - log(df)/2:
        # no cancellation at large df (scipy's log(poch(df/2, 1/2)); the difference of
        # gammaln was +1.9 for -1.16 at df = 1e15)
        norm = E.sub(E.neg(SF.betaln(half, 0.5)), E.mul(0.5, E.log(df)))
        kernel = E.mul(E.add(half, 0.5), E.log1p(E.div(E.square(z), df)))
        return _nan_unless(E.sub(E.sub(norm, kernel), E.log(as_float(scale))),
                           _positive(df), _positive(scale))

    def pdf(self, *args: Any, **kwargs: Any) -> Any:
        return E.exp(self.logpdf(*args, **kwargs))

    cdf = logcdf = staticmethod(_refuse("t", "cdf", "it needs the incomplete beta function"))


class _Gamma(_Distribution):
    name = "gamma"

    def logpdf(self, x: Any, a: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
        a = as_float(a)
        z = _z(x, loc, scale)
        inside = E.greater_equal(z, 0.0)
        zs = E.where(inside, z, 1.0)
        value = E.sub(E.sub(E.xlogy(E.sub(a, 1.0), zs), zs),
                      E.add(SF.gammaln(a), E.log(as_float(scale))))
        return _nan_unless(E.where(inside, value, NEG_INF), _positive(a), _positive(scale))

    def pdf(self, *args: Any, **kwargs: Any) -> Any:
        return E.exp(self.logpdf(*args, **kwargs))

    cdf = logcdf = staticmethod(_refuse("gamma", "cdf",
                                        "it needs the incomplete gamma function"))


class _Beta(_Distribution):
    name = "beta"

    def logpdf(self, x: Any, a: Any, b: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
        a, b = as_float(a), as_float(b)
        z = _z(x, loc, scale)
        inside = E.where(E.greater_equal(z, 0.0), E.less_equal(z, 1.0), False)
        zs = E.where(inside, z, 0.5)
        value = E.add(E.xlogy(E.sub(a, 1.0), zs), xlog1py(E.sub(b, 1.0), E.neg(zs)))
        value = E.sub(value, E.add(SF.betaln(a, b), E.log(as_float(scale))))
        return _nan_unless(E.where(inside, value, NEG_INF), _positive(a), _positive(b),
                           _positive(scale))

    def pdf(self, *args: Any, **kwargs: Any) -> Any:
        return E.exp(self.logpdf(*args, **kwargs))

    cdf = logcdf = staticmethod(_refuse("beta", "cdf", "it needs the incomplete beta function"))


def _on_integers(k: Any, low: Any, high: Any | None) -> Any:
    """Whether ``k`` is an integer in ``[low, high]`` (``high`` None: no upper end)."""
    ok = E.where(E.equal(E.floor(k), k), E.greater_equal(k, low), False)
    return ok if high is None else E.where(ok, E.less_equal(k, high), False)


class _Poisson(_Distribution):
    name = "poisson"

    def logpmf(self, k: Any, mu: Any, loc: Any = 0.0) -> Any:
        k, mu = E.sub(as_float(k), as_float(loc)), as_float(mu)
        inside = _on_integers(k, 0.0, None)
        ks = E.where(inside, k, 0.0)
        value = E.sub(E.sub(E.xlogy(ks, mu), SF.gammaln(E.add(ks, 1.0))), mu)
        return _nan_unless(E.where(inside, value, NEG_INF), E.greater_equal(mu, 0.0))

    def pmf(self, *args: Any, **kwargs: Any) -> Any:
        return E.exp(self.logpmf(*args, **kwargs))

    cdf = logcdf = staticmethod(_refuse("poisson", "cdf",
                                        "it needs the incomplete gamma function"))


class _Binom(_Distribution):
    name = "binom"

    def logpmf(self, k: Any, n: Any, p: Any, loc: Any = 0.0) -> Any:
        k, n, p = E.sub(as_float(k), as_float(loc)), as_float(n), as_float(p)
        inside = _on_integers(k, 0.0, n)
        ks = E.where(inside, k, 0.0)
        # log C(n, k) = -log(n + 1) - betaln(n - k + 1, k + 1): scipy's betaln has no
        # cancellation where gammaln(n + 1) - gammaln(n - k + 1) loses all digits (n = 1e15)
        comb = E.sub(E.neg(E.log1p(n)), SF.betaln(E.add(E.sub(n, ks), 1.0), E.add(ks, 1.0)))
        value = E.add(comb, E.add(E.xlogy(ks, p), xlog1py(E.sub(n, ks), E.neg(p))))
        return _nan_unless(E.where(inside, value, NEG_INF), _on_integers(n, 0.0, None),
                           E.greater_equal(p, 0.0), E.less_equal(p, 1.0))

    def pmf(self, *args: Any, **kwargs: Any) -> Any:
        return E.exp(self.logpmf(*args, **kwargs))

    cdf = logcdf = staticmethod(_refuse("binom", "cdf", "it needs the incomplete beta function"))


class _MultivariateNormal(_Distribution):
    name = "multivariate_normal"

    def logpdf(self, x: Any, mean: Any = None, cov: Any = 1.0) -> Any:
        """scipy's rules (``_process_parameters_psd``, ``_process_quantiles``): the dimension
        is ``mean``'s size, else ``cov``'s rows (1 for a number or a vector); a 1-d ``x`` is
        one point, or with dimension 1 that many points; the result's axes of length 1
        are squeezed."""
        x = as_float(x)
        cov = as_float(1.0 if cov is None else cov)
        if mean is None:
            d = shape_of(cov)[0] if len(shape_of(cov)) >= 2 else 1
        else:
            mean = as_float(mean)
            d = math.prod(shape_of(mean))
        if d == 1:
            if mean is not None:
                mean = F.reshape(mean, (1,))
            cov = F.reshape(cov, (1, 1))
        if mean is not None and shape_of(mean) != (d,):
            raise ValueError(f"Array 'mean' must be a vector of length {d}.")
        if not shape_of(cov):
            cov = E.mul(np.eye(d), cov)
        elif len(shape_of(cov)) == 1:
            if shape_of(cov) != (d,):
                raise ValueError(f"Array 'cov' must be a vector of length {d}.")
            cov = E.mul(np.eye(d), F.reshape(cov, (1, d)))
        elif shape_of(cov) != (d, d):
            raise ValueError(f"Dimension mismatch: array 'cov' is of shape {shape_of(cov)}, "
                             f"but 'mean' is a vector of length {d}.")
        if len(shape_of(x)) <= 1:
            x = F.reshape(x, (-1, 1) if d == 1 else (1, -1))
        if shape_of(x)[-1] != d:
            raise ValueError(f"multivariate_normal.logpdf: x's last axis has length "
                             f"{shape_of(x)[-1]}, the distribution's dimension is {d}")
        diff = x if mean is None else E.sub(x, mean)
        rows = F.reshape(diff, (-1, d))
        solved = L.solve(cov, F.transpose(rows))  # (d, n)
        maha = F.sum(E.mul(rows, F.transpose(solved)), axis=-1)
        _, logdet = L.slogdet(cov)
        value = E.mul(-0.5, E.add(maha, E.add(logdet, d * math.log(2.0 * math.pi))))
        return F.reshape(value, tuple(n for n in shape_of(diff)[:-1] if n != 1))

    def pdf(self, *args: Any, **kwargs: Any) -> Any:
        return E.exp(self.logpdf(*args, **kwargs))


class _Dirichlet(_Distribution):
    name = "dirichlet"

    def logpdf(self, x: Any, alpha: Any) -> Any:
        x, alpha = as_float(x), as_float(alpha)
        if len(shape_of(alpha)) != 1:
            raise ValueError("Parameter vector 'a' must be one dimensional")
        col = F.reshape(alpha, (-1,) + (1,) * (len(shape_of(x)) - 1))
        norm = E.sub(F.sum(SF.gammaln(alpha)), SF.gammaln(F.sum(alpha)))
        return E.sub(F.sum(E.xlogy(E.sub(col, 1.0), x), axis=0), norm)

    def pdf(self, *args: Any, **kwargs: Any) -> Any:
        return E.exp(self.logpdf(*args, **kwargs))


norm, t, gamma, beta = _Norm(), _T(), _Gamma(), _Beta()
poisson, binom = _Poisson(), _Binom()
multivariate_normal, dirichlet = _MultivariateNormal(), _Dirichlet()

__all__ = ["beta", "binom", "dirichlet", "gamma", "log_ndtr", "multivariate_normal", "norm",
           "poisson", "t"]

for _dist in (norm, t, gamma, beta, poisson, binom, multivariate_normal, dirichlet):
    for _method in ("logpdf", "pdf", "logcdf", "cdf", "sf", "logsf", "logpmf", "pmf"):
        if callable(getattr(_dist, _method, None)) and not getattr(
                getattr(_dist, _method), "refused", False):
            SCIPY_EQUIVALENTS[f"scipy.stats.{_dist.name}.{_method}"] = (
                f"sg.scipy.stats.{_dist.name}.{_method}")
