"""The kink table: smooth functions whose stable formula has a kink (issue 25, part 2).

``logaddexp`` is computed as ``max(a, b) + log1p(exp(-|a - b|))``, ``logsumexp``
and ``log_softmax`` after shifting by the maximum, ``tanh'`` through
``exp(-2|x|)``, ``sigmoid`` and ``softplus`` through ``exp(-|x|)``: each formula
has a kink (a tie of the maximum, ``|x|`` at 0) that the function itself does not
have. There the derivatives must still be the function's own, at every order:
the conventions at kinks (``abs'(0) = 0``, ties of ``maximum`` 1/2 each) belong
to functions with a real kink, never to these.

One row per function and point: the function (symgrad), the same function written
independently for SymPy (``ref`` takes a list of symbols: no ``Max``, no ``Abs``),
and the point, placed on the formula's kink: ties, zeros, ``|x| == |y|``. Some
rows hold a point off the kink too, where the third derivative is not 0. The
columns (tests/test_kinks.py): the Hessian (forward over reverse), ``H v``
(reverse over reverse) and the third derivative contracted with two directions
(reverse over reverse over reverse, and forward over reverse over reverse),
each against SymPy at 50 digits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp

import symgrad as sg


@dataclass(frozen=True)
class Kink:
    name: str
    prims: tuple[str, ...]   # what is audited: the primitive or composite
    fn: Callable             # of one vector x
    ref: Callable[[list[Any]], Any]   # the same function of SymPy symbols, smooth
    at: tuple[float, ...]

    def __str__(self) -> str:
        return self.name


def _lse(xs: list[Any]) -> Any:
    return sp.log(sp.Add(*(sp.exp(x) for x in xs)))


def _sinc_series(x: Any) -> Any:
    u = sp.pi * x
    return sp.Add(*((-1) ** k * u ** (2 * k) / sp.factorial(2 * k + 1) for k in range(21)))


def _softplus(x: Any) -> Any:
    return sp.log(1 + sp.exp(x))


KINKS = [
    # issue 25's example: softplus through logaddexp at 0, where every network starts
    Kink("logaddexp-zero", ("logaddexp",), lambda x: np.sum(np.logaddexp(0.0, x)),
         lambda s: sp.Add(*map(_softplus, s)), (0.0, 0.0, 1.5)),
    Kink("logaddexp-ties", ("logaddexp",), lambda x: np.sum(np.logaddexp(x[:2], x[2:])),
         lambda s: _lse([s[0], s[2]]) + _lse([s[1], s[3]]), (0.5, -2.0, 0.5, -2.0)),
    Kink("logaddexp-near", ("logaddexp",), lambda x: np.logaddexp(x[0], x[1]),
         lambda s: _lse(s), (0.25, -0.5)),   # off the tie: a third derivative that is not 0
    Kink("logaddexp2-ties", ("logaddexp",), lambda x: np.logaddexp2(x[0], x[1]),
         lambda s: sp.log(2 ** s[0] + 2 ** s[1]) / sp.log(2), (1.0, 1.0)),
    Kink("softplus-zero", ("softplus",), lambda x: np.sum(sg.softplus(x)),
         lambda s: sp.Add(*map(_softplus, s)), (0.0, -0.7)),
    Kink("sigmoid-zero", ("sigmoid",), lambda x: np.sum(sg.sigmoid(x)),
         lambda s: sp.Add(*(1 / (1 + sp.exp(-v)) for v in s)), (0.0, 0.7)),
    # tanh' = 4e/(1 + e)**2, e = exp(-2|x|): the third derivative at 0 is -2
    Kink("tanh-zero", ("tanh",), lambda x: np.sum(np.tanh(x)),
         lambda s: sp.Add(*map(sp.tanh, s)), (0.0, -0.3)),
    Kink("logsumexp-ties", ("logsumexp",), lambda x: sg.logsumexp(x),
         _lse, (0.3, 0.3, -1.0)),
    Kink("logsumexp-all-tied", ("logsumexp",), lambda x: sg.logsumexp(x),
         _lse, (2.0, 2.0, 2.0)),
    Kink("logsumexp-axis-ties", ("logsumexp",),
         lambda x: np.sum(sg.logsumexp(x.reshape(2, 2), axis=1) * np.array([1.0, -2.0])),
         lambda s: _lse(s[:2]) - 2 * _lse(s[2:]), (0.5, 0.5, -1.0, 0.25)),
    Kink("log_softmax-ties", ("log_softmax",), lambda x: np.sum(sg.log_softmax(x) * x),
         lambda s: sp.Add(*((v - _lse(s)) * v for v in s)), (0.3, 0.3, -1.0)),
    Kink("softmax-ties", ("softmax",), lambda x: sg.softmax(x)[2] - 2 * sg.softmax(x)[0],
         lambda s: (sp.exp(s[2]) - 2 * sp.exp(s[0])) / sp.Add(*map(sp.exp, s)),
         (0.3, 0.3, -1.0)),
    # x log y is smooth at x == 0 for y > 0: derivatives log(y) and x/y, mixed 1/y
    Kink("xlogy-zero", ("xlogy",), lambda x: sg.xlogy(x[0], x[1]),
         lambda s: s[0] * sp.log(s[1]), (0.0, 2.0)),
    # scaled by max(|x|, |y|): homogeneous, so the scale's kinks cancel at every order
    Kink("hypot-equal", ("hypot",), lambda x: np.hypot(x[0], x[1]),
         lambda s: sp.sqrt(s[0] ** 2 + s[1] ** 2), (0.7, -0.7)),
    Kink("norm-equal", ("norm2",), lambda x: np.linalg.norm(x),
         lambda s: sp.sqrt(sp.Add(*(v ** 2 for v in s))), (0.7, -0.7, 0.2)),
    Kink("std-equal-magnitudes", ("norm2",), lambda x: np.std(x),
         lambda s: sp.sqrt(sp.Add(*((v - sp.Add(*s) / 3) ** 2 for v in s)) / 3),
         (1.0, -1.0, 0.0)),
    Kink("arctan-zero", ("arctan",), lambda x: np.sum(np.arctan(x)),
         lambda s: sp.Add(*map(sp.atan, s)), (0.0, 0.5)),
    # sinc' near 0 is a series in the VJP; SymPy's sinc is a Piecewise at 0, so the
    # reference is sinc's own series, to (pi x)**40: exact to 50 digits here
    Kink("sinc-zero", ("sinc",), lambda x: np.sum(np.sinc(x)),
         lambda s: sp.Add(*(_sinc_series(v) for v in s)), (0.0, 0.1)),
    # a product's derivative is the product of the others, prod / x_i where x_i != 0: at
    # several zeros the product of the other zeros, 0, whose own derivatives are not 0
    Kink("prod-two-zeros", ("prod",), lambda x: np.prod(x),
         lambda s: sp.Mul(*s), (0.0, 0.0, 3.0)),
    Kink("prod-three-zeros", ("prod",), lambda x: np.prod(x),
         lambda s: sp.Mul(*s), (0.0, -2.0, 0.0, 0.0)),
    Kink("cumprod-zeros", ("cumprod",), lambda x: np.sum(np.cumprod(x) * np.arange(1.0, 6.0)),
         lambda s: sp.Add(*((k + 1) * sp.Mul(*s[:k + 1]) for k in range(5))),
         (1.5, 0.0, 0.0, 3.0, 0.0)),
    # x**y at y = 0 (x > 0) is smooth; its VJP's x-derivative is 0 there only where
    # y*x**(y-1) is not a number (x = 0): the mixed derivative is 1/x
    Kink("pow-zero-exponent", ("pow",), lambda x: x[0] ** x[1] + x[2] ** x[1],
         lambda s: s[0] ** s[1] + s[2] ** s[1], (2.0, 0.0, 0.5)),
    # |x|**4 = x**4: smooth, through abs and pow
    Kink("pnorm4-zero", ("abs", "pow"), lambda x: np.linalg.norm(x, 4),
         lambda s: sp.Add(*(v ** 4 for v in s)) ** sp.Rational(1, 4), (0.7, -0.7, 0.0)),
]
