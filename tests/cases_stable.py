"""Test-table cases of selection (clip, relu), numerically stable functions and the
scipy.special functions on traced values (see cases.py)."""

from __future__ import annotations

import numpy as np
import scipy.special

import symgrad as sg
from symgrad.prims.layer_norm import layer_norm as _layer_norm
from symgrad.prims.softmax import log_softmax as _log_softmax
from symgrad.prims.softmax import nll_loss as _nll
from symgrad.prims.softmax import softmax as _softmax

from cases import BINARY_SHAPES, Case, _shape_id

CASES: list[Case] = []

UNARY = [("relu", sg.relu, (-2, 2)), ("sigmoid", sg.sigmoid, (-5, 5)),
         ("softplus", sg.softplus, (-5, 5))]
for prim, fn, domain in UNARY:
    for shape in [(), (3,), (2, 3)]:
        CASES.append(Case(f"{prim}-{_shape_id(shape)}", (prim,), lambda x, f=fn: f(x),
                          (shape,), (domain,)))

# far tails: no overflow, no nan; SymPy's 50 digits say what the float64 answer is
EXTREMES = ([-800.0, -40.0, -1e-300, 0.0, 40.0, 800.0],)
CASES += [
    Case("relu-kink", ("relu",), sg.relu, ((3,),), (), fixed=([-1.0, 0.0, 2.0],)),
    Case("sigmoid-tails", ("sigmoid",), sg.sigmoid, ((6,),), (), fixed=EXTREMES),
    Case("softplus-tails", ("softplus",), sg.softplus, ((6,),), (), fixed=EXTREMES),
]

BINARY = [("xlogy", sg.xlogy, (-2, 2), (0.1, 3)), ("hypot", np.hypot, (-2, 2), (-2, 2)),
          ("arctan2", np.arctan2, (-2, 2), (-2, 2)), ("logaddexp", np.logaddexp, (-3, 3), (-3, 3))]
for prim, fn, dx, dy in BINARY:
    for sx, sy in BINARY_SHAPES:
        CASES.append(Case(f"{prim}-{_shape_id(sx, sy)}", (prim,),
                          lambda x, y, f=fn: f(x, y), (sx, sy), (dx, dy)))

CASES += [
    # x == 0: the value is 0 (also at y == 0) and both partial derivatives are 0
    Case("xlogy-zeros", ("xlogy",), sg.xlogy, ((4,), (4,)), (),
         fixed=([0.0, 0.0, 0.0, 1.5], [0.0, 2.0, 0.5, 0.5])),
    # equal operands share the gradient: 1/2 each
    Case("logaddexp-ties", ("logaddexp",), np.logaddexp, ((3,), (3,)), (),
         fixed=([1.0, -2.0, 700.0], [1.0, -2.0, 700.0])),
    # the forward-recorded weights of max/min reductions, over axes that need a transpose
    Case("extremum_weights-max", ("max", "extremum_weights"),
         lambda x: np.max(x, axis=(0, 2)), ((2, 3, 2),), ((-2, 2),)),
    Case("extremum_weights-min-ties", ("min", "extremum_weights"),
         lambda x: np.min(x, axis=0), ((2, 3),), (),
         fixed=([[1.0, 3.0, -1.0], [1.0, 5.0, -1.0]],)),
]

# composites: clip of where, logsumexp/softmax of max, exp, log, sum and where
CASES += [
    Case("clip-2x3_3_scalar", ("where", "lt", "gt"), lambda x, lo, hi: np.clip(x, lo, hi),
         ((2, 3), (3,), ()), ((-2, 2), (-1, 0), (0, 1))),
    Case("clip-literal-bounds", ("where",), lambda x: np.clip(x, -0.5, 0.5), ((2, 3),),
         ((-1, 1),)),
    # boundaries belong to the inside: gradient 1 in x at x == a_min and x == a_max
    Case("clip-boundaries", ("where",), lambda x: np.clip(x, -0.5, 0.5), ((4,),), (),
         fixed=([-0.5, 0.5, -1.0, 1.0],)),
    Case("logsumexp-all", ("max", "exp", "log1p", "sum"), lambda x: sg.logsumexp(x),
         ((2, 3),), ((-3, 3),)),
    Case("logsumexp-axis1-keepdims", ("max", "exp", "log1p", "sum"),
         lambda x: sg.logsumexp(x, axis=1, keepdims=True), ((2, 3),), ((-3, 3),)),
    Case("logsumexp-axis02", ("max", "exp", "log1p", "sum"),
         lambda x: sg.logsumexp(x, axis=(0, 2)), ((2, 3, 2),), ((-3, 3),)),
    Case("logsumexp-large", ("max", "exp", "log1p", "sum"), lambda x: sg.logsumexp(x, axis=0),
         ((3,),), (), fixed=([1000.0, 999.0, -1000.0],)),
    Case("softmax-axis-1", ("exp",), lambda x: sg.softmax(x), ((2, 3),), ((-3, 3),)),
    Case("softmax-axis0", ("exp",), lambda x: sg.softmax(x, axis=0), ((2, 3),), ((-3, 3),)),
    Case("log_softmax-axis-1", ("sub",), lambda x: sg.log_softmax(x), ((2, 3),), ((-3, 3),)),
]

# the eager Tensor's log_softmax, one primitive (symgrad.prims.softmax): along each axis,
# a middle one of three, F-ordered, a row ruled by one value, times x (a second derivative
# that reads the VJP's exp(ans) again)
CASES += [
    Case("log_softmax-prim-vector", ("log_softmax",), lambda x: _log_softmax(x, 0) * x, ((4,),),
         ((-3, 3),)),
    Case("log_softmax-prim-axis1", ("log_softmax",), lambda x: _log_softmax(x, 1), ((2, 3),),
         ((-3, 3),)),
    Case("log_softmax-prim-axis0-F", ("log_softmax",), lambda x: _log_softmax(x, 0), ((3, 2),),
         ((-3, 3),), layout="F"),
    Case("log_softmax-prim-middle", ("log_softmax",), lambda x: _log_softmax(x, 1), ((2, 3, 2),),
         ((-3, 3),)),
    Case("log_softmax-prim-large", ("log_softmax",), lambda x: _log_softmax(x, 0), ((3,),), (),
         fixed=([1000.0, 960.0, -1000.0],)),
]

# the eager Tensor's softmax, one primitive: the same axes and layouts; times x, and its
# log (a second derivative reads the VJP's ans twice)
CASES += [
    Case("softmax-prim-vector", ("softmax",), lambda x: _softmax(x, 0) * x, ((4,),), ((-3, 3),)),
    Case("softmax-prim-axis1", ("softmax",), lambda x: _softmax(x, 1), ((2, 3),), ((-3, 3),)),
    Case("softmax-prim-axis0-F", ("softmax",), lambda x: _softmax(x, 0), ((3, 2),), ((-3, 3),),
         layout="F"),
    Case("softmax-prim-middle", ("softmax",), lambda x: sg.log(_softmax(x, 1)), ((2, 3, 2),),
         ((-3, 3),)),
    Case("softmax-prim-large", ("softmax",), lambda x: _softmax(x, 0), ((3,),), (),
         fixed=([1000.0, 960.0, -1000.0],)),
]

# layer_norm (symgrad.prims.layer_norm), F.layer_norm's one node: over the last axis and
# the last two, with a weight and a bias, either, or neither, of a vector; times x (a
# second derivative reads the VJP's rows twice)
CASES += [
    Case("layer_norm-prim-affine", ("layer_norm",),
         lambda x, w, b: _layer_norm(x, w, b, ndim=1, eps=1e-5), ((2, 3), (3,), (3,)),
         ((-3, 3), (-2, 2), (-2, 2))),
    Case("layer_norm-prim-2d-F", ("layer_norm",),
         lambda x: _layer_norm(x, ndim=2, eps=0.25) * x, ((2, 2, 3),), ((-3, 3),), layout="F"),
    Case("layer_norm-prim-vector-weight", ("layer_norm",),
         lambda x, w: _layer_norm(x, w, ndim=1, eps=1e-5) * x, ((4,), (4,)), ((-3, 3), (-2, 2))),
    Case("layer_norm-prim-bias", ("layer_norm",),
         lambda x, b: _layer_norm(x, None, b, ndim=1, eps=1e-3), ((3, 2), (2,)),
         ((-3, 3), (-2, 2))),
]

# nll_loss (symgrad.prims.softmax): the target class of each sample along the axis (a float;
# -1: ignored, weight 0), a weight per sample, the total weight; of a log_softmax (a cross
# entropy), along each axis, and each reduction
_ROWS = np.array([1.0, -1.0, 3.0])
_COLUMNS = np.array([0.0, 2.0])
_K = np.array([[0.0, 2.0], [1.0, 0.0]])
CASES += [
    Case("nll_loss-prim-cross-entropy", ("nll_loss", "log_softmax"),
         lambda x: _nll(_log_softmax(x, 0), np.array(2.0), np.array(1.5), np.array(1.5), 0, "mean"),
         ((4,),), ((-3, 3),)),
    Case("nll_loss-prim-none", ("nll_loss",),
         lambda x: _nll(x, _ROWS, np.array([1.0, 0.0, 2.0]), np.array(3.0), 1, "none"),
         ((3, 4),), ((-3, 3),)),
    Case("nll_loss-prim-sum-axis0", ("nll_loss",),
         lambda x: _nll(x, _COLUMNS, np.array([0.5, 2.0]), np.array(2.5), 0, "sum"),
         ((3, 2),), ((-3, 3),)),
    Case("nll_loss-prim-kdim-mean", ("nll_loss", "log_softmax"),
         lambda x: _nll(_log_softmax(x, 1), _K, np.array([[1.0, 2.0], [0.5, 1.0]]),
                        np.array(4.5), 1, "mean"), ((2, 3, 2),), ((-3, 3),), layout="F"),
]

# rounding: piecewise constant, zero gradient; multiplied by x so the gradient is
# the rounded value itself (SymPy: floor, ceiling, round half to even)
ROUNDING = [("floor", np.floor), ("ceil", np.ceil), ("trunc", np.trunc), ("rint", np.rint)]
for prim, fn in ROUNDING:
    for shape in [(), (3,), (2, 3)]:
        CASES.append(Case(f"{prim}-{_shape_id(shape)}", (prim, "mul"),
                          lambda x, f=fn: f(x) * x, (shape,), ((-3, 3),)))
CASES += [
    Case("round-decimals", ("rint", "mul", "div"), lambda x: np.round(x, 1) * x
         + np.around(x * 100.0, -1), ((2, 3),), ((-3, 3),)),
    # var and std (ddof, axis, keepdims) are compositions of mean, sub, square, sum, div;
    # std takes the scaled norm2 of the centered values
    Case("var-all", ("mean", "square", "sum"), lambda x: np.var(x), ((2, 3),), ((-2, 2),)),
    Case("var-axis0-ddof1-keepdims", ("mean", "square", "sum"),
         lambda x: np.var(x, axis=0, ddof=1, keepdims=True), ((3, 2),), ((-2, 2),)),
    Case("std-axis1", ("norm2", "mean", "sqrt"), lambda x: np.std(x, axis=1), ((2, 3),),
         ((-2, 2),)),
    Case("std-all-ddof1-keepdims", ("norm2", "mean"),
         lambda x: np.std(x, ddof=1, keepdims=True), ((3, 2),), ((-2, 2),)),
]

# scipy.special on traced values (symgrad/numpy_api/scipy_special.py): erf and erfc are
# primitives, expit is sigmoid, logit and xlog1py composites of primitives
SPECIAL = [("erf", scipy.special.erf, (-3, 3)), ("erfc", scipy.special.erfc, (-3, 3))]
for prim, fn, domain in SPECIAL:
    for shape in [(), (3,), (2, 3)]:
        CASES.append(Case(f"{prim}-{_shape_id(shape)}", (prim,), lambda x, f=fn: f(x),
                          (shape,), (domain,)))
CASES += [
    Case("erf-tails", ("erf",), scipy.special.erf, ((6,),), (), fixed=EXTREMES),
    Case("erfc-tails", ("erfc",), scipy.special.erfc, ((6,),), (), fixed=EXTREMES),
    Case("scipy-expit", ("sigmoid",), scipy.special.expit, ((3,),), ((-5, 5),)),
    Case("scipy-logit", ("log", "log1p"), scipy.special.logit, ((2, 3),), ((0.05, 0.95),)),
    Case("scipy-xlogy", ("xlogy",), scipy.special.xlogy, ((3,), (3,)), ((-2, 2), (0.1, 3))),
    Case("scipy-xlog1py", ("where", "log1p"), scipy.special.xlog1py, ((2, 3), (3,)),
         ((-2, 2), (-0.9, 3))),
    # x == 0: the value is 0 and both partial derivatives are 0, as xlogy's
    Case("scipy-xlog1py-zeros", ("where",), scipy.special.xlog1py, ((3,), (3,)), (),
         fixed=([0.0, 0.0, 1.5], [-1.0, 2.0, 0.5])),
]

# scipy.special's functions as primitives (symgrad/prims/special_functions.py); each but
# gammaln and gamma is a host primitive (scipy's ufunc between kernels): 2-d cases on both
# backends, the others on the interpreter (a kernel cut per equation costs compiles)
GAMMA_FAMILY = [
    ("gammaln", scipy.special.gammaln, (0.2, 5)), ("gamma", scipy.special.gamma, (0.2, 4)),
    ("digamma", scipy.special.psi, (0.2, 5)), ("erfinv", scipy.special.erfinv, (-0.95, 0.95)),
    ("i0", scipy.special.i0, (-4, 4)), ("i1", scipy.special.i1, (-4, 4)),
    ("i0e", scipy.special.i0e, (-4, 4)), ("i1e", scipy.special.i1e, (-4, 4)),
    ("ndtr", scipy.special.ndtr, (-4, 4)),
    # scipy's loggamma (the principal branch), rgamma = 1/gamma, erfi, erfcx (its derivative
    # an asymptotic series from 7 on) and Dawson's integral (the same from |x| = 7 on)
    ("loggamma", scipy.special.loggamma, (0.2, 5)), ("rgamma", scipy.special.rgamma, (-2.9, 4)),
    ("erfi", scipy.special.erfi, (-3, 3)), ("erfcx", scipy.special.erfcx, (-3, 12)),
    ("dawsn", scipy.special.dawsn, (-12, 12)),
    ("exp1", scipy.special.exp1, (0.1, 5)), ("expi", scipy.special.expi, (-4, 6)),
    ("spence", scipy.special.spence, (0.05, 3)), ("log_ndtr", scipy.special.log_ndtr, (-8, 5)),
]
for prim, fn, domain in GAMMA_FAMILY:
    for shape in [(), (3,), (2, 3)]:
        CASES.append(Case(f"{prim}-{_shape_id(shape)}", (prim,), lambda x, f=fn: f(x),
                          (shape,), (domain,),
                          backends=("numba", "numpy") if len(shape) == 2 else ("numpy",)))
CASES += [
    # log|gamma| and its derivative digamma left of 0 too (scipy's gammaln is log|gamma|)
    Case("gammaln-negative", ("gammaln",), scipy.special.gammaln, ((4,),), (),
         fixed=([-0.5, -1.3, -2.7, 1e-8],), backends=("numpy",)),
    Case("gamma-negative", ("gamma",), scipy.special.gamma, ((3,),), (),
         fixed=([-0.5, -1.3, -2.7],), backends=("numpy",)),
    # ndtr's tails: 0 and 1 to the last bit far out, its density 0 past |x| = 38.6
    Case("ndtr-tails", ("ndtr",), scipy.special.ndtr, ((6,),), (), fixed=EXTREMES,
         backends=("numpy",)),
    # i1' = i0 - i1/x has the limit 1/2 at 0
    Case("i1-zero", ("i1",), scipy.special.i1, ((3,),), (), fixed=([0.0, 1e-9, -2.0],),
         backends=("numpy",)),
    # log_ndtr far out: its derivative sqrt(2/pi)/erfcx(-x/sqrt(2)) left of 0 (~ -x)
    Case("log_ndtr-tails", ("log_ndtr",), scipy.special.log_ndtr, ((6,),), (), fixed=EXTREMES,
         backends=("numpy",)),
    # spence' = log(x)/(1 - x) has the limit -1 at 1: its series within 1/4 of 1
    Case("spence-near-one", ("spence",), scipy.special.spence, ((4,),), (),
         fixed=([1.0 - 2.0 ** -30, 0.8, 1.2, 1e-8],), backends=("numpy",)),
    Case("polygamma-1", ("polygamma",), lambda x: sg.scipy.special.polygamma(1, x), ((3,),),
         ((0.3, 4),), backends=("numpy",)),
    Case("polygamma-3-2x3", ("polygamma",), lambda x: sg.scipy.special.polygamma(3, x),
         ((2, 3),), ((0.3, 4),)),
    Case("beta-2x3_3", ("beta", "digamma"), scipy.special.beta, ((2, 3), (3,)),
         ((0.3, 3), (0.3, 3))),
    Case("beta-scalar", ("beta",), scipy.special.beta, ((), ()), ((0.3, 3), (0.3, 3)),
         backends=("numpy",)),
    Case("betaln-3_3", ("betaln", "digamma"), scipy.special.betaln, ((3,), (3,)),
         ((0.3, 5), (0.3, 5)), backends=("numpy",)),
    Case("betaln-2x3_scalar", ("betaln",), scipy.special.betaln, ((2, 3), ()),
         ((0.3, 5), (0.3, 5))),
    Case("zeta-3", ("zeta",), lambda q: scipy.special.zeta(2.5, q), ((3,),), ((0.5, 4),),
         backends=("numpy",)),
    Case("zeta-2x3", ("zeta",), lambda q: scipy.special.zeta(3.0, q), ((2, 3),), ((0.5, 4),)),
    # differentiable in x only (a's derivative raises: tests/test_igamma.py)
    Case("gammainc-3", ("gammainc",),
         lambda x: scipy.special.gammainc(np.array([0.4, 2.0, 5.5]), x), ((3,),), ((0.2, 6),),
         backends=("numpy",)),
    Case("gammaincc-2x3", ("gammaincc",), lambda x: scipy.special.gammaincc(1.7, x), ((2, 3),),
         ((0.2, 6),)),
]
# the Bessel functions of any order (symgrad/prims/bessel.py), differentiable in x (the
# order's derivative raises: tests/test_bessel.py): integer, half-integer, negative and
# elementwise orders
BESSEL = [("iv", scipy.special.iv, (-3, 3), 1.5), ("ive", scipy.special.ive, (-4, 4), 0.0),
          ("kv", scipy.special.kv, (0.2, 4), -0.7), ("kve", scipy.special.kve, (0.2, 6), 2.0),
          ("jv", scipy.special.jv, (-4, 4), 3.0), ("yv", scipy.special.yv, (0.3, 5), 0.5)]
for prim, fn, domain, order in BESSEL:
    CASES += [
        Case(f"{prim}-3", (prim,), lambda x, f=fn, v=order: f(v, x), ((3,),), (domain,),
             backends=("numpy",)),
        Case(f"{prim}-2x3", (prim,), lambda x, f=fn: f(np.array([0.0, 1.0, -2.5]), x),
             ((2, 3),), ((max(domain[0], 0.2), domain[1]),)),
    ]
