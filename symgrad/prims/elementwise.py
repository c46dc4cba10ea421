"""Elementwise primitives: arithmetic, functions, numerically stable functions, and the
recording helpers (comparisons and ``where`` are :mod:`.selection`'s, re-exported here).

Each primitive is declared once, in one block, with all its facets and facts
(see :class:`symgrad.core.ir.Primitive`): shape/dtype rule (numpy
broadcasting), numpy implementation, VJP rule, SymPy counterpart,
its rewrite rules and flags. VJP rules take the cotangent ``g`` first, then
``ans`` (the primal output), then the primal inputs, and return one cotangent
per input (``None`` for "no gradient"). They are written with the recording
helpers at the end of this module (``cos(x)``, ``where(c, a, b)``) and Python
operators, so the adjoint they build is IR like any other: printable,
optimizable, compilable and differentiable again (numpy's promotion of their
operands, and ``to_float_p``, are :mod:`.promotion`'s). Literal inputs (and the seed
1.0 of a scalar output) arrive as numpy scalars, so arithmetic on them is IEEE's.

Conventions at kinks and singular points follow the table in
:mod:`symgrad.core.conventions` and are versioned by
:data:`CONVENTIONS_VERSION`, which is part of every kernel's cache key.

    >>> import numpy as np
    >>> bool(sin(np.float64(0.5)) == np.sin(0.5))   # no trace: computed by numpy
    True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.conventions import CONVENTIONS_VERSION as CONVENTIONS_VERSION  # re-exported
from ..core.ir import Eqn, Literal, Primitive
from ..core.rewrite import Producer, Rewrite, as_prim, lit, made_by, same_aval
from ..core.tracing import Traced, Tracer, apply
from .convert import convert_p
from .overflow import CheckedUfunc
from .promotion import (
    INTEGER_CONSTANTS,
    ON_BOOLS,
    ON_INTEGERS,
    dtype_of,
    integer_result,
    is_integer,
    kind,
    narrow_constants,
    rounded_weak,
    scalar_known_later,
    to_float_p,
)
from .registry import binary, register, unary
from .registry import elementwise_rule as _elementwise_rule
from .selection import (  # noqa: F401 -- re-exported: the recording helpers' operands
    as_bool,
    as_float,
    eq_p,
    ge_p,
    gt_p,
    le_p,
    lt_p,
    ne_p,
    select,
    where_p,
)

# ---------------------------------------------------------------------------
# arithmetic


def _add_simplify(e: Eqn, producer: Producer) -> Rewrite:
    x, y = e.inputs
    if lit(y, -0.0):
        return same_aval(e, x)  # x + -0.0 -> x   (exact, also for x = -0.0)
    if lit(x, -0.0):
        return same_aval(e, y)  # -0.0 + y -> y
    return None


add_p = binary("add", np.add, complex=True,
               vjp=lambda g, ans, x, y: (g, g),
               sympy=lambda sp, x, y: x + y,
               simplify=_add_simplify, linear=True, commutative=True, integer=True)


def _sub_simplify(e: Eqn, producer: Producer) -> Rewrite:
    x, y = e.inputs
    return same_aval(e, x) if lit(y, 0.0) else None  # x - 0.0 -> x


def _sub_accuracy(e: Eqn, producer: Producer) -> Rewrite:
    x, one = e.inputs
    inner = made_by(producer, x, exp_p)
    if lit(one, 1.0) and inner is not None and inner.inputs[0].aval == e.out.aval:
        return as_prim(e, expm1_p, inner.inputs[0])  # exp(x) - 1 -> expm1(x)
    return None


sub_p = binary("sub", np.subtract, complex=True,
               vjp=lambda g, ans, x, y: (g, -g),
               sympy=lambda sp, x, y: x - y,
               simplify=_sub_simplify, accuracy=_sub_accuracy, linear=True, integer=True)


def _mul_simplify(e: Eqn, producer: Producer) -> Rewrite:
    x, y = e.inputs
    for a, b in ((x, y), (y, x)):
        if lit(b, 1.0) and a.aval == e.out.aval:
            return a  # x * 1.0 -> x
    return None


mul_p = binary("mul", np.multiply, complex=True,
               vjp=lambda g, ans, x, y: (g * y, g * x),
               sympy=lambda sp, x, y: x * y,
               simplify=_mul_simplify, commutative=True, integer=True)


def _div_simplify(e: Eqn, producer: Producer) -> Rewrite:
    x, y = e.inputs
    return same_aval(e, x) if lit(y, 1.0) else None  # x / 1.0 -> x


# d(x/y)/dy = -x/y**2 = -(x/y)/y: dividing twice never overflows where y*y would
div_p = binary("div", np.divide, complex=True,
               vjp=lambda g, ans, x, y: (g / y, -(g * ans) / y),
               sympy=lambda sp, x, y: x / y,
               simplify=_div_simplify)


def _pow_vjp(g, ans, x, y):
    # d/dx x**y = y*x**(y-1), and exactly 0 where y == 0 (x**0 is constant). For
    # |y| < 1 see _fractional_power
    if isinstance(y, (float, int, np.floating, np.integer)):  # a literal: choose now
        if dtype_of(x).kind == "c":  # holomorphic in x: the conventions at 0 are real ones
            return (None if y == 0 else g * (y * x ** (y - 1.0))), None
        return _literal_pow_vjp(g, ans, x, float(y)), None
    if dtype_of(x).kind == "c" or dtype_of(y).kind == "c":  # holomorphic in both (JAX's rule)
        # a real x enters log as complex (numpy's power computed it so: log(-2) is not nan)
        lx = log(x if dtype_of(x).kind == "c" else apply(convert_p, x, dtype=ans.dtype.name))
        return g * (y * x ** (y - 1.0)), g * (ans * lx)
    # The 0 is a constant only where y*x**(y-1) is not the number 0 (x = 0, inf or nan):
    # elsewhere that product is 0 and goes in, so that its derivative in y, x**-1,
    # reaches the mixed second derivative (x**y at y = 0 is smooth in both)
    power = y * x ** (y - 1.0)
    derivative = where(absolute(y) < 1.0, _fractional_power(power, ans, x, y), power)
    at_zero = where(x == 0.0, 0.0, where(absolute(x) < np.inf, derivative, 0.0))
    dx = where(y == 0.0, at_zero, derivative)
    # d/dy x**y = x**y*log(x), and 0 where x == 0 and y >= 0 (PyTorch, JAX)
    dy_log = ans * log(x)
    dy = where(x == 0.0, where(y >= 0.0, 0.0, dy_log), dy_log)
    return g * dx, g * dy


def _fractional_power(power, ans, x, y):
    """y*x**(y-1) for |y| < 1 (``power``), which overflows where the derivative does not
    (x = 5e-324, y = 1e-300: x**(y-1) is inf): there (y*x**y)/x, whose x**y = ans is at
    most max(1, x). Not everywhere: where ans is subnormal it has lost the digits the
    quotient needs (x = 5e-324, y = 0.99999: 1.0 instead of 1.00746), and at x = inf it
    is inf/inf. At x == 0 the power (+-inf) itself."""
    return where(x == 0.0, power,
                 where(absolute(power) < np.inf, power, (y * ans) / x))


def _literal_pow_vjp(g, ans, x, y: float):
    """The cotangent of ``x`` in ``x ** y`` for a literal ``y`` (the adjoint passes
    literals as numpy scalars): only the branch that applies is recorded, so a
    second derivative differentiates no ``where`` whose other side is dead, and the
    power is written as the simplifier would (``x ** 2.0`` as ``square(x)``, ``x ** 1.0``
    as ``x``: the same bits). For y == 1 it is ``g * x ** 0.0`` as PyTorch's, which a
    double backward through eager Tensors differentiates (to zeros); the simplifier
    makes it ``g`` in a graph."""
    if y == 0.0:
        return None  # x ** 0 is 1 for every x
    k = y - 1.0
    power = x if k == 1.0 else square(x) if k == 2.0 else x ** k
    if abs(y) < 1.0:
        return g * _fractional_power(y * power, ans, x, y)
    return g * (y * power)


def _pow_simplify(e: Eqn, producer: Producer) -> Rewrite:
    x, y = e.inputs
    if x.aval != e.out.aval:
        return None
    if lit(y, 1.0):
        return x  # x ** 1.0 -> x
    if lit(y, 0.0) or lit(y, -0.0):
        return Literal(1.0)  # x ** 0.0 -> 1.0 for every x, nan and inf too (C99's pow)
    # numpy's power itself takes these three fast paths for a scalar exponent
    if lit(y, 2.0):
        return as_prim(e, square_p, x)  # x ** 2.0 -> square(x)
    if lit(y, 0.5):
        return as_prim(e, sqrt_p, x)  # x ** 0.5 -> sqrt(x)
    if lit(y, -1.0):
        return as_prim(e, reciprocal_p, x)  # x ** -1.0 -> reciprocal(x)
    return None


# fused loops call vecmath.powi for a literal integer exponent in 3..8 (codegen decides per
# equation: vecmath_facts.POWI_EXPONENTS), libm's pow for any other
pow_p = binary("pow", np.power, complex=True, vjp=_pow_vjp,
               sympy=lambda sp, x, y: x ** y,
               simplify=_pow_simplify)


def _maximum_vjp(g, ans, x, y):
    # a tie splits the cotangent evenly: Heaviside(0) = 1/2, as PyTorch and JAX
    half = 0.5 * g
    return (where(x > y, g, where(x == y, half, 0.0)),
            where(y > x, g, where(x == y, half, 0.0)))


# complex operands: numpy's order (the comparisons'), and a nan operand is the result;
# the gradient goes to the operand chosen, split at a tie (JAX's rule)
maximum_p = binary("maximum", np.maximum, vjp=_maximum_vjp,
                   sympy=lambda sp, x, y: sp.Max(x, y), integer=True, complex=True)


def _minimum_vjp(g, ans, x, y):
    # a tie splits the cotangent evenly, as for maximum
    half = 0.5 * g
    return (where(x < y, g, where(x == y, half, 0.0)),
            where(y < x, g, where(x == y, half, 0.0)))


minimum_p = binary("minimum", np.minimum, vjp=_minimum_vjp,
                   sympy=lambda sp, x, y: sp.Min(x, y), integer=True, complex=True)

# ---------------------------------------------------------------------------
# elementwise functions

def _neg_simplify(e: Eqn, producer: Producer) -> Rewrite:
    inner = made_by(producer, e.inputs[0], neg_p)
    return inner.inputs[0] if inner is not None else None  # -(-x) -> x


neg_p = register(name="neg", kind="elementwise", complex=True,
                 shape_rule=_elementwise_rule("neg", integer=True),
                 impl=CheckedUfunc(np.negative), vjp=lambda g, ans, x: (-g,),
                 sympy=lambda sp, x: -x, numpy=np.negative,
                 simplify=_neg_simplify, linear=True,
                 integer=True)

exp_p = unary("exp", np.exp, complex=True,
              vjp=lambda g, ans, x: (g * ans,),
              sympy=lambda sp, x: sp.exp(x))

def _log_accuracy(e: Eqn, producer: Producer) -> Rewrite:
    inner = made_by(producer, e.inputs[0], add_p)
    if inner is not None:
        for one, x in (inner.inputs, reversed(inner.inputs)):
            if lit(one, 1.0) and x.aval == e.out.aval:
                return as_prim(e, log1p_p, x)  # log(1 + x) -> log1p(x)
    return None


log_p = unary("log", np.log, complex=True,
              vjp=lambda g, ans, x: (g / x,),
              sympy=lambda sp, x: sp.log(x),
              accuracy=_log_accuracy)

log1p_p = unary("log1p", np.log1p, complex=True,
                vjp=lambda g, ans, x: (g / (1.0 + x),),
                sympy=lambda sp, x: sp.log(1 + x))

# expm1'(x) = exp(x), computed as such: expm1(x) + 1 loses every digit below x = -37
expm1_p = unary("expm1", np.expm1, complex=True,
                vjp=lambda g, ans, x: (g * exp(x),),
                sympy=lambda sp, x: sp.exp(x) - 1)

# sqrt'(0) = +inf, as numpy arithmetic gives
sqrt_p = unary("sqrt", np.sqrt, complex=True,
               vjp=lambda g, ans, x: (g / (2.0 * ans),),
               sympy=lambda sp, x: sp.sqrt(x))

sin_p = unary("sin", np.sin, complex=True,
              vjp=lambda g, ans, x: (g * cos(x),),
              sympy=lambda sp, x: sp.sin(x))

cos_p = unary("cos", np.cos, complex=True,
              vjp=lambda g, ans, x: (-g * sin(x),),
              sympy=lambda sp, x: sp.cos(x))

tan_p = unary("tan", np.tan, complex=True,
              vjp=lambda g, ans, x: (g * (1.0 + square(ans)),),
              sympy=lambda sp, x: sp.tan(x))

def magnitude(x):
    """``|x|`` as ``where(x >= 0, x, -x)``: abs's value, with derivative +-1 everywhere
    (+1 at 0, where ``abs'(0) = 0`` by convention). For a smooth even function written
    through ``|x|`` for stability, ``h(|x|)``, every derivative order is then right at 0:
    the n-th derivative is ``h^(n)(|x|) * (+-1)**n``, where abs would give
    ``h''(0) * sign(0)**2 = 0`` and lose the even orders (the third derivative of tanh)."""
    return where(x >= 0.0, x, -x)


def _tanh_vjp(g, ans, x):
    if dtype_of(x).kind == "c":  # holomorphic: 1 - tanh**2 (magnitude compares)
        return (g * (1.0 - square(ans)),)
    # tanh' = sech**2 = 4e/(1 + e)**2 with e = exp(-2|x|): accurate in relative terms for
    # every x (1 - tanh(x)**2 is 0 from |x| = 19 on, where sech**2 is 7e-35 at 40).
    # |x| as magnitude(x): tanh's third derivative at 0 is -2, not 0
    e = exp(-2.0 * magnitude(x))
    return (g * (4.0 * e / square(1.0 + e)),)


tanh_p = unary("tanh", np.tanh, complex=True, vjp=_tanh_vjp,
               sympy=lambda sp, x: sp.tanh(x))

sinh_p = unary("sinh", np.sinh, complex=True,
               vjp=lambda g, ans, x: (g * cosh(x),),
               sympy=lambda sp, x: sp.sinh(x))

cosh_p = unary("cosh", np.cosh, complex=True,
               vjp=lambda g, ans, x: (g * sinh(x),),
               sympy=lambda sp, x: sp.cosh(x))

# 1 - x**2 written (1 - x)(1 + x): no cancellation near |x| = 1
arcsin_p = unary("arcsin", np.arcsin, complex=True,
                 vjp=lambda g, ans, x: (g / sqrt((1.0 - x) * (1.0 + x)),),
                 sympy=lambda sp, x: sp.asin(x))

arccos_p = unary("arccos", np.arccos, complex=True,
                 vjp=lambda g, ans, x: (-g / sqrt((1.0 - x) * (1.0 + x)),),
                 sympy=lambda sp, x: sp.acos(x))

def _arctan_vjp(g, ans, x):
    if dtype_of(x).kind == "c":  # holomorphic: 1/(1 + z**2), as JAX's
        return (g / (1.0 + square(x)),)
    # 1/(1 + x**2); beyond |x| = 1e150, where x**2 overflows and 1 + 1/x**2 is 1,
    # (1/x)**2: 4.4e-309 at x = 1.5e154, not 0
    far = absolute(x) > 1e150
    return (where(far, g * square(reciprocal(x)), g / (1.0 + square(x))),)


arctan_p = unary("arctan", np.arctan, complex=True, vjp=_arctan_vjp,
                 sympy=lambda sp, x: sp.atan(x))

# abs'(0) = sign(0) = 0, as PyTorch and SymPy
abs_p = unary("abs", np.absolute,
              vjp=lambda g, ans, x: (g * sign(x),),
              sympy=lambda sp, x: sp.Abs(x))

# piecewise constant: zero gradient everywhere, as JAX and PyTorch. Of a complex value,
# numpy 2's z / |z| (0 at 0), whose gradient JAX also defines as zero
sign_p = unary("sign", np.sign, complex=True,
               vjp=lambda g, ans, x: (None,),
               sympy=lambda sp, x: sp.sign(x))

# rounding is piecewise constant: zero gradient everywhere, as sign (and JAX,
# PyTorch); SymPy's floor/ceiling give the values, and the derivative there is 0
floor_p = unary("floor", np.floor, vjp=lambda g, ans, x: (None,),
                sympy=lambda sp, x: sp.floor(x))

ceil_p = unary("ceil", np.ceil, vjp=lambda g, ans, x: (None,),
               sympy=lambda sp, x: sp.ceiling(x))

trunc_p = unary("trunc", np.trunc, vjp=lambda g, ans, x: (None,),
                sympy=lambda sp, x: sp.Piecewise((sp.floor(x), x >= 0), (sp.ceiling(x), True)))


def _rint_sympy(sp, x):
    # round half to even: floor(x + 1/2), one less where that is an odd tie
    r = sp.floor(x + sp.Rational(1, 2))
    return sp.Piecewise((r - 1, sp.And(sp.Eq(x + sp.Rational(1, 2), r), sp.Eq(sp.Mod(r, 2), 1))),
                        (r, True))


# of a complex value: each part rounded (numpy's), zero gradient (JAX's)
rint_p = unary("rint", np.rint, vjp=lambda g, ans, x: (None,), sympy=_rint_sympy,
               complex=True)

square_p = unary("square", np.square, complex=True,
                 vjp=lambda g, ans, x: (g * (2.0 * x),),
                 sympy=lambda sp, x: x ** 2)

reciprocal_p = unary("reciprocal", np.reciprocal, complex=True,
                     vjp=lambda g, ans, x: (-g * square(ans),),
                     sympy=lambda sp, x: 1 / x)

# ---------------------------------------------------------------------------
# selection and numerically stable functions: each computed the way that
# neither overflows nor cancels, with its kink conventions (symgrad.core.conventions)


def _relu(x):
    return select(x < 0.0, 0.0, x)[()]  # np.where's bits


# relu'(0) = 0, as PyTorch: the kink belongs to the flat side. Not maximum(x, 0),
# whose tie rule would give 1/2 there. A NaN stays NaN (gradient g) and -0.0 stays -0.0,
# as PyTorch's (x < 0 ? 0 : x; its backward: x <= 0 ? 0 : g) and JAX's
relu_p = register(
    name="relu", kind="elementwise", shape_rule=_elementwise_rule("relu"), impl=_relu,
    vjp=lambda g, ans, x: (where(x <= 0.0, 0.0, g),),
    sympy=lambda sp, x: sp.Piecewise((x, x > 0), (0, True)))


def _sigmoid(x):
    # exp(-|x|) never overflows: 1/(1+e) for x >= 0, e/(1+e) below, both exact-ish
    e = np.exp(-np.abs(x))
    return np.where(x >= 0.0, 1.0 / (1.0 + e), e / (1.0 + e))[()]


# sigmoid' = sigmoid(x) * sigmoid(-x): no 1 - sigmoid(x) cancelling to 0 for large x;
# sigmoid(-800) = 0 with gradient 0, sigmoid(800) = 1 with gradient 0
sigmoid_p = register(
    name="sigmoid", kind="elementwise", shape_rule=_elementwise_rule("sigmoid"),
    impl=_sigmoid,
    vjp=lambda g, ans, x: (g * (ans * sigmoid(-x)),),
    sympy=lambda sp, x: 1 / (1 + sp.exp(-x)), scipy="expit")


def _softplus(x):
    return np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0.0)


# log(1 + exp(x)) = log1p(exp(-|x|)) + max(x, 0): no overflow; softplus' = sigmoid,
# so softplus'(800) is exactly 1 (not inf/inf = nan)
softplus_p = register(
    name="softplus", kind="elementwise", shape_rule=_elementwise_rule("softplus"),
    impl=_softplus,
    vjp=lambda g, ans, x: (g * sigmoid(x),),
    sympy=lambda sp, x: sp.log(1 + sp.exp(x)))


def _xlogy(x, y):
    with np.errstate(all="ignore"):
        return np.where((x == 0.0) & (y == y), 0.0, x * np.log(y))[()]


def _xlogy_vjp(g, ans, x, y):
    # where x == 0 and y <= 0 (log y is -inf or nan) we take both derivatives to be 0,
    # so that xlogy(0, 0) has gradient (0, 0) and sum(xlogy(p, q)) with p = 0 stays
    # finite (PyTorch's x-derivative; its y-derivative there is 0/0). Not where y > 0: x
    # log y is smooth there, also at x == 0, with derivatives log(y) and x / y (and the
    # mixed second derivative 1/y), as PyTorch's. Nor where y is nan: the value is nan,
    # and so are both derivatives (PyTorch's, JAX's; they were 0, as xlog1py's are not).
    # Of a complex y, log y is finite but at 0: dead only where y == 0 there (numpy's
    # order of complex values would read y > 0 lexicographically)
    edge = (y == 0.0) if np.dtype(y.dtype).kind == "c" else (y <= 0.0)
    dead = where(x == 0.0, where(edge, 1.0, 0.0), 0.0) > 0.0
    return (where(dead, 0.0, g * log(y)), where(dead, 0.0, g * x / y))


# x * log(y), and 0 where x == 0 unless y is nan (scipy.special.xlogy)
xlogy_p = register(
    name="xlogy", complex=True, kind="elementwise", shape_rule=_elementwise_rule("xlogy"),
    impl=_xlogy,
    vjp=_xlogy_vjp,
    # the constant 0 only where x == 0 and y <= 0: for y > 0 x log y itself, 0 at x == 0
    # and with its derivatives there (log y in x)
    sympy=lambda sp, x, y: sp.Piecewise((0, sp.And(sp.Eq(x, 0), y <= 0)),
                                        (x * sp.log(y), True)),
    scipy="xlogy")


def _hypot_vjp(g, ans, x, y):
    # x/hypot(x, y), computed on x and y divided by the larger magnitude m (as LAPACK
    # scales): right where hypot itself is subnormal (hypot(5e-324, 5e-324) rounds to
    # 5e-324, so x/ans would be 1, not 0.707) or overflows. At the origin it is 0/0,
    # where we give 0, as for a norm at 0 (pytorch #2421)
    m = maximum(absolute(x), absolute(y))
    s = where(m > 0.0, where(m < np.inf, m, 1.0), 1.0)
    xs, ys = x / s, y / s
    h = hypot(xs, ys)
    origin = m == 0.0
    return (where(origin, 0.0, g * (xs / h)), where(origin, 0.0, g * (ys / h)))


hypot_p = binary("hypot", np.hypot, vjp=_hypot_vjp,
                 sympy=lambda sp, x, y: sp.sqrt(x ** 2 + y ** 2))


def _arctan2_vjp(g, y, x):
    # d/dy = x / (x**2 + y**2), divided by hypot twice: x*x + y*y would overflow.
    # At the origin 0/0 is nan: a singular point, as numpy arithmetic gives
    h = hypot(y, x)
    return (g * (x / h) / h, -(g * (y / h)) / h)


arctan2_p = binary("arctan2", np.arctan2,
                   vjp=lambda g, ans, y, x: _arctan2_vjp(g, y, x),
                   sympy=lambda sp, y, x: sp.atan2(y, x))


def _logaddexp_vjp(g, ans, x, y):
    # the softmax weight e^x / (e^x + e^y) is sigmoid(x - y): one exp, no overflow,
    # 1 and 0 when one operand is infinitely larger; equal operands share 1/2, also at
    # -inf or +inf, where x - y is nan and 0 takes its place. Only there: at a finite tie
    # x - y itself goes in, so that its derivative (the curvature, sigmoid'(0) = 1/4)
    # reaches a second derivative. Needs neither ans nor the forward's log
    d = x - y
    d = where(x == y, where(absolute(x) < np.inf, d, 0.0), d)
    return (g * sigmoid(d), g * sigmoid(-d))


logaddexp_p = binary("logaddexp", np.logaddexp,
                     vjp=_logaddexp_vjp,
                     sympy=lambda sp, x, y: sp.log(sp.exp(x) + sp.exp(y)))

# ---------------------------------------------------------------------------
# recording helpers: one per primitive, for VJP rules and the layers above.
# Operands are promoted as numpy promotes them (booleans enter arithmetic as
# 0.0/1.0); with no traced operand the result is computed by numpy.


def call(prim: Primitive, *args: Any) -> Any:
    """``prim`` on ``args``, floats and booleans promoted as numpy does."""
    if (prim in ON_BOOLS or prim in ON_INTEGERS) and any(isinstance(a, Traced) for a in args):
        kinds = "".join(map(kind, args))
        if kinds.strip("b") == "" and prim in ON_BOOLS:
            return ON_BOOLS[prim](*args)  # bool + bool is logical or, as numpy
        if kinds.strip("bi") == "" and prim in ON_INTEGERS:
            return ON_INTEGERS[prim](*args)
    args = INTEGER_CONSTANTS[prim](args) if prim in INTEGER_CONSTANTS else args
    args = narrow_constants(args, first=int(prim is where_p))
    if prim is where_p:
        c, x, y = args
        exact = "np.where" if kind(x) + kind(y) in ("ii", "ib", "bi") else None
        return _as_integer(exact, apply(where_p, as_bool(c), as_float(x, exact),
                                        as_float(y, exact)))
    if prim is pow_p and scalar_known_later(args[1]) and dtype_of(args[0]).kind != "c":
        # numpy's power computes a scalar exponent of 0.5 as sqrt, which differs from pow
        # at -0.0 (-0.0, not 0.0) and -inf (nan, not inf): sqrt there, for an exponent known
        # only when the kernel runs (elsewhere pow, whose gradient in y is the one to keep)
        x, y = map(as_float, args)
        power, root = apply(pow_p, x, y), apply(sqrt_p, x)
        special = apply(where_p, apply(eq_p, x, 0.0), root,
                        apply(where_p, apply(eq_p, x, -np.inf), root, power))
        return apply(where_p, apply(eq_p, y, 0.5), special, power)
    if prim.integer and all(map(is_integer, args)) and any(isinstance(a, Tracer) for a in args):
        # integer arithmetic on a traced counter stays integer: i + 1, n - 1, i < n
        return apply(prim, *(a if isinstance(a, Traced) else Literal(int(a)) for a in args))
    if prim is square_p and is_integer(args[0]) and isinstance(args[0], Tracer):
        return call(mul_p, args[0], args[0])  # int64 x * x, exact (and refusing to wrap)
    exact = integer_result(prim, args)
    return _as_integer(exact, apply(prim, *rounded_weak([as_float(a, exact) for a in args])))


def _as_integer(exact: str | None, result: Any) -> Any:
    """numpy's int64 result (np.abs, np.sign, np.where of traced integers) computed in
    float64: exact, the conversion of the operands having refused what float64 rounds."""
    if exact is None or not isinstance(result, Tracer):
        return result
    from .sorting import to_int  # (sorting's module imports this one)
    return to_int(result)


def _recorder(prim: Primitive) -> Callable[..., Any]:
    def fn(*args: Any) -> Any:
        return call(prim, *args)
    fn.__name__ = fn.__qualname__ = prim.name
    fn.__doc__ = f"Elementwise ``{prim.name}`` with numpy broadcasting (one equation)."
    return fn


add, sub, mul, div, power = map(_recorder, (add_p, sub_p, mul_p, div_p, pow_p))
maximum, minimum, neg = map(_recorder, (maximum_p, minimum_p, neg_p))
exp, log, log1p, expm1, sqrt = map(_recorder, (exp_p, log_p, log1p_p, expm1_p, sqrt_p))
sin, cos, tan, tanh, sinh, cosh = map(_recorder, (sin_p, cos_p, tan_p, tanh_p, sinh_p, cosh_p))
arcsin, arccos, arctan = map(_recorder, (arcsin_p, arccos_p, arctan_p))
absolute, sign, floor, ceil, trunc, rint = map(
    _recorder, (abs_p, sign_p, floor_p, ceil_p, trunc_p, rint_p))
square, reciprocal, relu, sigmoid, softplus = map(
    _recorder, (square_p, reciprocal_p, relu_p, sigmoid_p, softplus_p))
xlogy, hypot, arctan2, logaddexp = map(_recorder, (xlogy_p, hypot_p, arctan2_p, logaddexp_p))
greater, greater_equal, less, less_equal, equal, not_equal = map(
    _recorder, (gt_p, ge_p, lt_p, le_p, eq_p, ne_p))
where = _recorder(where_p)
to_float = _recorder(to_float_p)
