"""The tail points of the per-primitive table: where float64 overflows, underflows or
cancels, checked against SymPy's exact derivative evaluated with mpmath at 400 digits.

Each :class:`Tail` is a numpy function of one primitive (or one composite function:
``softmax``, ``norm``, ``std``, ...), and arguments that hold the primitive's tail
points elementwise: ``±1e±300``, the subnormals ``5e-324`` and ``1e-310``, ``±700``
and ``±710``, the overflow edges of ``exp`` (709.78), ``cosh``/``sinh`` (710.48) and
the underflow edge of ``exp`` (-745.13), ``±40`` where ``tanh`` saturates, ``1e16``
where ``x + log 2 == x`` (softmax), and what else each function's domain makes
extreme. Elementwise functions take one array of points (binary ones a grid of
pairs), reductions one row per point along the last axis.

The reference (:func:`exact`) is SymPy's gradient of the traced forward graph, as
in ``oracle.py``, but evaluated at :data:`DIGITS` (400) digits rather than 50: the exact
derivative of ``tanh`` at 355 is ``1 - tanh(355)**2 = 1.8e-308``, which 50 digits
give as 0. Every reference is computed a second time at 1.5 times the digits, and
the two must agree.

Errors (:func:`error`) are relative, compared as IEEE does: ``|got - exact|`` over
``max(|exact|, 2**-1022)``, so a result in the subnormal range is held to the
absolute accuracy of the smallest normal number (the rounding IEEE itself gives
there), a true value beyond the largest float64 must come out as an infinity of its
sign, and any other difference in kind (nan or inf against a number) is an infinite
error. ``bound`` is the worst error a primitive may have, in units of
``EPS = 2**-52``: a few ulp where the math allows.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.special
import sympy as sp

import symgrad as sg
from symgrad.core.sympy_bridge import (  # noqa: I001
    _at_point,
    _numerically,
    gradient_expressions,
    input_symbols,
    to_sympy,
)

from oracle import forward_graph

EPS = 2.0 ** -52
TINY = 2.0 ** -1022
DIGITS = 400
#: the largest float64 and the bound past which a real number rounds to infinity
MAX = np.finfo(np.float64).max
OVERFLOW = sp.Float(2, 60) ** 1024 * (1 - sp.Float(2, 60) ** -54)

EXP_EDGE = 709.782712893384      # the largest x with a finite exp(x)
EXP_UNDER = -745.1332191019411   # the smallest x with a nonzero exp(x)
COSH_EDGE = 710.4758600739439    # the largest x with a finite cosh(x) and sinh(x)
BELOW_ONE = 0.9999999999999999   # 1 - 2**-53 (rounded up): arcsin/arccos near their ends


@dataclass(frozen=True, eq=False)
class Tail:
    name: str                   # the primitive (or composite function) measured
    fn: Callable
    args: tuple[np.ndarray, ...]
    ct: np.ndarray | None = None  # cotangent of the output (None: ones)
    bound: float = 4.0          # worst relative error allowed, in units of EPS

    def cotangent(self) -> np.ndarray:
        if self.ct is not None:
            return self.ct
        with np.errstate(all="ignore"):
            return np.ones(np.shape(self.fn(*self.args)))

    def __str__(self) -> str:
        return self.name


def _points(*values: float) -> tuple[np.ndarray]:
    return (np.array(values, dtype=float),)


def _grid(xs: list[float], ys: list[float]) -> tuple[np.ndarray, np.ndarray]:
    pairs = list(itertools.product(xs, ys))
    return (np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs]))


def _rows(*rows: list[float]) -> tuple[np.ndarray]:
    return (np.array(rows, dtype=float),)


SMALL = [1e-300, -1e-300, 5e-324, -5e-324, 1e-310, -1e-310]
LARGE = [1e300, -1e300]
#: the tail points of a function defined everywhere
EVERYWHERE = SMALL + LARGE + [700.0, -700.0, 710.0, -710.0, 1e16, -1e16]

# (sign and rounding are piecewise constant: their gradient is 0 everywhere, their
# values exact; tests/cases.py and test_conventions.py have them)
TAILS: list[Tail] = [
    Tail("exp", np.exp, _points(*SMALL, *LARGE, 700.0, -700.0, EXP_EDGE, 710.0, -710.0,
                                EXP_UNDER, -746.0)),
    Tail("expm1", np.expm1, _points(*SMALL, *LARGE, 700.0, EXP_EDGE, 710.0, -30.0, -37.0,
                                    -40.0, -700.0, -710.0, EXP_UNDER)),
    Tail("log", np.log, _points(1e-300, 5e-324, 1e-310, 1e300, MAX, 700.0,
                                1.0 + 2.0 ** -52, 1.0 - 2.0 ** -53)),
    Tail("log1p", np.log1p, _points(*SMALL, 1e300, MAX, 700.0, -BELOW_ONE)),
    Tail("sqrt", np.sqrt, _points(1e-300, 5e-324, 1e-310, 1e300, MAX, 700.0)),
    Tail("sin", np.sin, _points(*EVERYWHERE)),
    Tail("cos", np.cos, _points(*EVERYWHERE)),
    Tail("tan", np.tan, _points(*SMALL, *LARGE, 1e16, 710.0)),
    Tail("tanh", np.tanh, _points(*SMALL, *LARGE, 40.0, -40.0, 355.0, -355.0, 360.0, 700.0,
                                  710.0, -710.0, 20.0, 1e16)),
    Tail("sinh", np.sinh, _points(*SMALL, *LARGE, 700.0, -700.0, 710.0, -710.0, COSH_EDGE,
                                  -COSH_EDGE, 711.0)),
    Tail("cosh", np.cosh, _points(*SMALL, *LARGE, 700.0, -700.0, 710.0, -710.0, COSH_EDGE,
                                  -COSH_EDGE, 711.0)),
    Tail("arcsin", np.arcsin, _points(*SMALL, BELOW_ONE, -BELOW_ONE)),
    Tail("arccos", np.arccos, _points(*SMALL, BELOW_ONE, -BELOW_ONE)),
    Tail("arctan", np.arctan, _points(*EVERYWHERE, 1e154, -1e154, 1.5e154)),
    Tail("neg", np.negative, _points(*EVERYWHERE, MAX)),
    Tail("abs", np.absolute, _points(*EVERYWHERE, MAX)),
    Tail("square", np.square, _points(*SMALL, *LARGE, 1e154, 1.5e154, 1e-160, 700.0)),
    Tail("reciprocal", np.reciprocal, _points(*SMALL, *LARGE, 1e154, -1.5e154, 1e-160, MAX)),
    Tail("relu", sg.relu, _points(*EVERYWHERE)),
    Tail("sigmoid", sg.sigmoid, _points(*EVERYWHERE, 40.0, -40.0, EXP_UNDER, 746.0, -746.0)),
    # erf' = 2/sqrt(pi) exp(-x**2) underflows past |x| = 27.3; erfc(x) underflows past 26.5
    Tail("erf", scipy.special.erf, _points(*EVERYWHERE, 5.0, -5.0, 26.0, -27.0, 28.0)),
    # (mpmath's erfc overflows converting x**2 to a float past |x| = 1e154: the points
    # 1e150 stand for the far tails, where erfc is exactly 0 and 2 as at 1e300)
    Tail("erfc", scipy.special.erfc, _points(*SMALL, 700.0, -700.0, 710.0, -710.0, 1e16, -1e16,
                                             1e150, -1e150, 5.0, -5.0, 26.0, 26.5, -27.0)),
    # scipy.special's functions as primitives (symgrad/prims/special_functions.py): poles,
    # the zeros of lgamma at 1 and 2, subnormal and huge arguments
    Tail("gammaln", scipy.special.gammaln,
         _points(1e-300, 5e-324, 1e-310, 1e300, 1e16, 700.0, 1.0 + 2.0 ** -52, 2.0 - 2.0 ** -51,
                 2.0 + 2.0 ** -51, 1.0 - 2.0 ** -53, -0.5, -2.5, -1e-300, 171.7, 0.5)),
    Tail("gamma", scipy.special.gamma,
         _points(1e-300, 5e-324, 1e-310, 171.0, 171.7, 172.0, 0.5, 1.5, -0.5, -2.5, -1e-300,
                 -170.5, -180.5, 1.0 + 2.0 ** -52)),
    Tail("digamma", scipy.special.psi,
         _points(1e-300, 1e-310, 1e300, 1e16, 700.0, 1.4616321449683622, 0.5, -0.5, -2.5,
                 -1e-300, 30.0)),
    # erfinv' = sqrt(pi)/2 exp(erfinv(x)**2) at 1 - 2**-53: the rounding of erfinv(x) (5.86)
    # is multiplied by 2 erfinv(x)**2 = 69 in the exponential (the formula's condition)
    Tail("erfinv", scipy.special.erfinv,
         _points(*SMALL, BELOW_ONE, -BELOW_ONE, 0.5, 1.0 - 2.0 ** -30, 1e-16), bound=32.0),
    # (not 713: scipy's i0 and i1 overflow there, where the exact values are 6.7e307)
    Tail("i0", scipy.special.i0, _points(*SMALL, 700.0, -700.0, 1e-8, 30.0)),
    Tail("i1", scipy.special.i1, _points(*SMALL, 700.0, -700.0, 1e-8, 30.0, -30.0, 1e-9)),
    # i0e' = i1e - sign(x) i0e and i1e' = i0e - i1e/x - sign(x) i1e are differences of
    # nearby values (i1e'(1) = 0.466 - 0.208 - 0.208 = 0.050): their relative error is the
    # cancellation's, up to 40 ulp here, and growing as |x| beyond 20 (README "scipy.special")
    Tail("i0e", scipy.special.i0e, _points(*SMALL[:4], 1e-310, 1.0, -3.0, 8.0), bound=48.0),
    Tail("i1e", scipy.special.i1e, _points(*SMALL, 1.0, -3.0, 8.0), bound=48.0),
    # loggamma (scipy's principal branch; real for x > 0), rgamma = 1/gamma (its zeros at
    # 0, -1, ... are digamma's poles: nan gradients there, tests/test_complex_special.py),
    # erfi (inf past 26.6), erfcx and dawsn (their derivatives an asymptotic series from
    # |x| = 7 on: below, 2x f(x) - 1 cancels as x**2, 2 x**2 ulp at most)
    # (no subnormals nor 171.7: scipy's loggamma(1e-310) is inf, its rgamma(171.7) 0,
    # where the exact values are 713.8 and 3.8e-309; symgrad's values are scipy's)
    Tail("loggamma", scipy.special.loggamma, _points(1e-300, 1e300, 1e16, 700.0, 0.5, 30.0)),
    Tail("rgamma", scipy.special.rgamma,
         _points(1e-300, -1e-300, 5e-324, 1e-310, 180.0, 0.5, -0.5, -2.5, -170.5, 1e-8)),
    # (mpmath's erfc and erfi overflow past |x| = 1e154, as for erfc above: 1e16 stands
    # for the far tails)
    Tail("erfi", scipy.special.erfi, _points(*SMALL, 5.0, -5.0, 26.0, -26.0, 27.0)),
    Tail("erfcx", scipy.special.erfcx,
         _points(*SMALL, 1e16, 700.0, 50.0, 7.0, -5.0, -26.0, -27.0), bound=16.0),
    Tail("dawsn", scipy.special.dawsn,
         _points(*SMALL, 1e16, -1e16, 700.0, 50.0, 7.0, -7.0), bound=16.0),
    # exp1' = -exp(-x)/x underflows past 740; expi' = exp(x/2) (exp(x/2)/x) is finite
    # past exp's overflow (scipy's expi itself is inf from 709.8 on, and 0 at the float
    # nearest its zero 0.3725..., where the exact value is -5.1e-17: no points there)
    Tail("exp1", scipy.special.exp1, _points(1e-300, 5e-324, 1e-310, 1e16, 700.0, 745.0, 0.5)),
    Tail("expi", scipy.special.expi,
         _points(1e-300, -1e-300, 5e-324, -1e-310, -700.0, -745.0, 700.0, 0.5, -1e16)),
    # the Bessel functions of any order (symgrad/prims/bessel.py), one order each: the
    # recurrences are accurate where scipy's values are; ive' and kve' cancel as |x| grows
    # (as i0e'), kve' is -inf where kve overflows. (No points where scipy's values are
    # off: iv(0, 1e-310) is nan, iv(0.5, 1e-300) 0 (exact 8e-151, so iv(1.5, .)' is 0
    # there), kv(0.5, 700) 0 (exact 4.7e-306), kv(0.5, 1e-310) inf (exact 1.3e155),
    # yv(-2.5, 1e-300) inf (exact 5e-751, i.e. 0); ive(2.5, 1e-100) is 348 ulp off.)
    Tail("iv", lambda x: scipy.special.iv(1.5, x), _points(1e-8, 0.5, 2.0, 30.0, 100.0, 700.0)),
    Tail("ive", lambda x: scipy.special.ive(3.0, x),
         _points(1e-8, 0.5, 2.0, -3.0, 30.0, -30.0), bound=24.0),
    Tail("kv", lambda x: scipy.special.kv(0.5, x),
         _points(1e-300, 1e-100, 1e-8, 0.5, 2.0, 30.0, 100.0)),
    Tail("kve", lambda x: scipy.special.kve(1.5, x),
         _points(1e-300, 1e-100, 1e-8, 0.5, 2.0, 30.0, 100.0), bound=24.0),
    Tail("jv", lambda x: scipy.special.jv(2.0, x),
         _points(1e-8, 0.5, 2.0, 30.0, 100.0, 700.0, -30.0), bound=12.0),
    Tail("yv", lambda x: scipy.special.yv(1.5, x),
         _points(1e-100, 1e-8, 0.5, 2.0, 30.0, 100.0, 700.0)),
    # spence' = log(x)/(1 - x), its series within 1/4 of 1 (-1 at 1); (scipy's own
    # spence(0.5) is 7 ulp off)
    Tail("spence", scipy.special.spence,
         _points(1e-300, 5e-324, 1e-310, 1e300, 1e16, 700.0, 0.5, 1.0, 1.0 + 2.0 ** -52, 2.0),
         bound=8.0),
    # log_ndtr' = phi/Phi: left of 0 sqrt(2/pi)/erfcx(-x/sqrt(2)) (no underflow, ~ -x),
    # right of it the quotient, carrying the rounding of x*x in exp(-x**2/2) (up to x**2/2
    # ulp). scipy's values right of 3 are up to 33 ulp off (the bound), and 511 at 37
    # (-5.72557122252393e-300: no point there)
    Tail("log_ndtr", scipy.special.log_ndtr,
         _points(-1e150, -1e16, -1000.0, -40.0, -20.0, -5.0, 0.0, 1e-300, 5.0, 8.3, 10.0),
         bound=48.0),
    Tail("softplus", sg.softplus, _points(*EVERYWHERE, 40.0, -40.0, 37.0, EXP_UNDER, -746.0)),
]

#: pairs of tail values for the binary functions
PAIRS = [1e300, -1e300, 1e-300, 5e-324, -1e-310, 700.0, -710.0, 1.5]
POSITIVE = [1e300, 1e-300, 5e-324, 1e-310, 700.0, 1.5]
TAILS += [
    Tail("add", np.add, _grid(PAIRS, PAIRS)),
    Tail("sub", np.subtract, _grid(PAIRS, PAIRS)),
    Tail("mul", np.multiply, _grid(PAIRS, PAIRS)),
    Tail("div", np.divide, _grid(PAIRS, PAIRS)),
    Tail("maximum", np.maximum, _grid(PAIRS, PAIRS[1:])),  # no ties: tests/cases.py has them
    Tail("minimum", np.minimum, _grid(PAIRS, PAIRS[1:])),
    Tail("pow", np.power, _grid(POSITIVE, [0.5, 2.0, -1.0, 1.5, -0.5, 1e-300, 300.5])),
    Tail("hypot", np.hypot, _grid(PAIRS, PAIRS)),
    Tail("arctan2", np.arctan2, _grid(PAIRS, PAIRS)),
    Tail("logaddexp", np.logaddexp, _grid(PAIRS, PAIRS[1:])),
    Tail("xlogy", sg.xlogy, _grid(PAIRS, POSITIVE)),
    # complex values in between: |x + iy| is hypot's tails, real(z * conj(z)) a square's
    Tail("cabs", lambda x, y: np.abs(x + 1j * y), _grid(PAIRS, PAIRS)),
    Tail("conj", lambda x, y: np.real((x + 1j * y) * np.conj(x + 0.5j * y)),
         _grid(PAIRS[2:], PAIRS[2:])),
]

#: rows reduced along the last axis
TAILS += [
    Tail("sum", lambda x: np.sum(x, axis=-1), _rows([1e300, 1e300], [5e-324, 5e-324],
                                                    [1e-310, -3e-310], [MAX, -MAX])),
    Tail("mean", lambda x: np.mean(x, axis=-1), _rows([1e300, 1e300], [5e-324, 5e-324],
                                                      [1e-310, -3e-310], [1e-300, 710.0])),
    # (not [1e200, 1e200] nor [1e-300, -1e-300]: the gradient of a product that overflows
    # or underflows is ans / x = inf / 1e200 or -0.0 / 1e-300, as PyTorch's; a product of
    # the others right where the product is not needs an exclusive cumulative product)
    Tail("prod", lambda x: np.prod(x, axis=-1), _rows([1e300, 1e-300], [5e-324, 1e300],
                                                      [700.0, 1e-300], [-3.0, 1e-300])),
    Tail("max", lambda x: np.max(x, axis=-1), _rows([1e300, -1e300], [5e-324, -5e-324],
                                                    [1e-310, 1e-300])),
    Tail("min", lambda x: np.min(x, axis=-1), _rows([1e300, -1e300], [5e-324, -5e-324],
                                                    [1e-310, 1e-300])),
]

#: composite functions: what issue 14 found wrong, and their neighbours
# (not the gradient of log_softmax(x)[0] at x = [0, -40]: 1 - p rounds to 0, where the sum
# of the other probabilities is 4.2e-18; the values there are right: [-40, 0] below)
SOFT = _rows([1e16, 1e16], [1e16, 1e16 + 2.0], [1e15, 1e15], [1000.0, 1000.0], [-40.0, 0.0],
             [-1e300, 0.0], [1e300, 1e300], [EXP_UNDER, EXP_UNDER], [710.0, -710.0],
             [5e-324, -5e-324], [0.0, -800.0])
FIRST = np.tile([1.0, 0.0], (len(SOFT[0]), 1))  # the gradient of softmax(x)[0] per row
TAILS += [
    Tail("logsumexp", lambda x: sg.logsumexp(x, axis=-1), SOFT),
    Tail("softmax", lambda x: sg.softmax(x, axis=-1), SOFT, FIRST),
    Tail("log_softmax", lambda x: sg.log_softmax(x, axis=-1), SOFT, FIRST),
    Tail("norm", lambda x: np.linalg.norm(x, axis=-1),
         _rows([1e-170, 2e-170], [1e200, 1e200], [1e308, 1e308], [1.5e308, 1.5e308],
               [5e-324, 5e-324], [1e-310, 1e-310], [1e300, 1e-300], [3.0, -4.0],
               [3e-320, 4e-320])),
    Tail("std", lambda x: np.std(x, axis=-1),
         _rows([1e-170, 2e-170], [1e300, -1e300], [1e-310, 3e-310], [5e-324, 1.5e-323],
               [1e200, 3e200], [1.0, 3.0])),
    Tail("var", lambda x: np.var(x, axis=-1),
         _rows([1e-170, 2e-170], [1e150, 3e150], [1e200, 3e200], [1e-310, 3e-310])),
]

assert len({t.name for t in TAILS}) == len(TAILS), "one tail case per name"


# ---------------------------------------------------------------------------
# the reference and the error


def _evaluate(exprs: Any, graph: Any, values: list[np.ndarray], digits: int) -> np.ndarray:
    """Expressions over the graph's input symbols at ``values``, as SymPy Floats of
    ``digits`` digits (an object array); inputs enter exactly."""
    subs = {}
    for s, v in zip(input_symbols(graph), values):
        for sym, val in zip(np.ravel(np.asarray(s, dtype=object)), np.ravel(v)):
            subs[sym] = sp.Float(float(val), digits + 10)

    def one(e: Any) -> Any:
        e = sp.sympify(e)
        # chain rules through floor, sign, ...: as sympy_bridge.evaluate does
        substitutions = e.atoms(sp.Subs)
        if substitutions:
            e = e.xreplace({s: _at_point(s, subs, digits) for s in substitutions})
        derivatives = e.atoms(sp.Derivative)
        if derivatives:
            e = e.xreplace({d: _numerically(d, subs, digits) for d in derivatives})
        return sp.N(e.xreplace(subs), digits)

    with np.errstate(all="ignore"):
        return np.frompyfunc(one, 1, 1)(np.asarray(exprs, dtype=object))


def exact(tail: Tail) -> tuple[np.ndarray, list[np.ndarray]]:
    """The exact value and gradients of ``tail`` (object arrays of SymPy numbers: nan
    where the function or its derivative is not a real number there).

    SymPy differentiates the traced graph of one point (one element of each argument,
    or one row): the same expressions serve every point with the same cotangent."""
    args = [np.asarray(a, dtype=float) for a in tail.args]
    ct = np.asarray(tail.cotangent(), dtype=float)
    value = np.empty(ct.shape, dtype=object)
    grads = [np.empty(a.shape, dtype=object) for a in args]
    symbolic: dict[bytes, tuple] = {}
    for i in range(len(args[0])):
        point = [a[i] for a in args]
        key = ct[i].tobytes()
        if key not in symbolic:
            graph = forward_graph(tail.fn, *point)
            symbolic[key] = (graph, to_sympy(graph)[0],
                             gradient_expressions(graph, ct[i] if ct.ndim > 1 else None))
        graph, v_expr, g_exprs = symbolic[key]
        results = [(_evaluate(v_expr, graph, point, digits),
                    [_evaluate(g, graph, point, digits) for g in g_exprs])
                   for digits in (DIGITS, DIGITS * 3 // 2)]
        (v1, g1), (v2, g2) = results
        for a, b in zip([v1, *g1], [v2, *g2]):
            for x, y in zip(np.ravel(a), np.ravel(b)):
                assert _agree(x, y), f"{tail}: the reference moves with the precision: {x} {y}"
        value[i] = v2
        for k, g in enumerate(g2):
            grads[k][i] = g
    return value, grads


def _agree(x: Any, y: Any) -> bool:
    if not (x.is_real and y.is_real) or x.is_infinite or y.is_infinite:
        return (x == y) or (x.is_real is not True and y.is_real is not True)
    if x == 0 or y == 0:
        return abs(x - y) < sp.Float(10, 30) ** -(DIGITS - 50)
    return abs(x - y) <= abs(y) * sp.Float(10, 30) ** -40


def error(got: float, want: Any) -> float:
    """The relative error of ``got`` against the exact ``want``, as IEEE compares
    (see the module docstring); ``nan`` where ``want`` is not a real number."""
    if want is sp.nan or not want.is_real:
        return math.nan
    if want.is_infinite or abs(want) >= OVERFLOW:
        sign = 1 if want > 0 else -1
        return 0.0 if got == sign * math.inf else math.inf
    if not math.isfinite(got):
        return math.inf
    diff = abs(sp.Float(got, 60) - want)
    return float(diff / max(abs(want), sp.Float(TINY, 30)))
