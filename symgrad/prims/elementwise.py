"""The primitive registry: every operation of the IR, each declared once.

A declaration holds all facets of one primitive (see :class:`symgrad.ir.Primitive`):
shape/dtype rule, numpy implementation, VJP rule, Numba emit and SymPy
counterpart. VJP rules take the cotangent ``g`` first, then ``ans`` (the primal
output), then the primal inputs, and return one cotangent per input (``None``
for "no gradient"). They run on tracers, so they are written in plain numpy and
the adjoint they build is IR like any other: printable, optimizable,
compilable and differentiable again. Literal inputs (and the seed 1.0 of a
scalar output) arrive as numpy scalars, so arithmetic on them is IEEE's.

Conventions at kinks and singular points follow the table in
:mod:`symgrad.conventions` (DESIGN.md's, as data) and are versioned by
:data:`CONVENTIONS_VERSION`, which is part of every kernel's cache key.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from .conventions import CONVENTIONS_VERSION as CONVENTIONS_VERSION  # re-exported
from .errors import ShapeError
from .ir import BOOL, FLOAT, Aval, Primitive

if TYPE_CHECKING:  # imported at the end at run time: ops imports this module
    from . import ops  # (mypy cannot type some of its functions in the cycle: has-type)

REGISTRY: dict[str, Primitive] = {}
FACETS = ("shape_rule", "impl", "vjp", "emit", "sympy")


def register(**facets: Any) -> Primitive:
    """Add a primitive to the registry; fail at import if a facet is missing."""
    prim = Primitive(**facets)
    missing = [f for f in FACETS if not callable(getattr(prim, f))]
    if missing:
        raise TypeError(f"primitive {prim.name} lacks facets {missing}")
    if prim.name in REGISTRY:
        raise ValueError(f"primitive {prim.name} is declared twice")
    REGISTRY[prim.name] = prim
    return prim


# ---------------------------------------------------------------------------
# shared rules


def _require(prim: str, avals: tuple[Aval, ...], dtype: str) -> None:
    for a in avals:
        if a.dtype != dtype:
            raise TypeError(f"{prim} takes {dtype} operands, got {a}")


def broadcast_shapes(prim: str, *avals: Aval) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*(a.shape for a in avals)))
    except ValueError:
        shapes = " and ".join(str(a) for a in avals)
        raise ShapeError(f"{prim}: operands of shapes {shapes} cannot be broadcast together "
                         "(numpy broadcasting rules)") from None


def _elementwise_rule(name: str, in_dtype: str = FLOAT, out_dtype: str = FLOAT) -> Callable:
    def rule(*avals: Aval) -> Aval:
        _require(name, avals, in_dtype)
        return Aval(broadcast_shapes(name, *avals), out_dtype)
    return rule


def expression(template: str) -> Callable[..., list[str]]:
    """Numba emit for ``out = <template filled with the operands>``."""
    def emit(out: str, args: list[str], avals: Any, out_aval: Aval, **params: Any) -> list[str]:
        return [f"{out} = {template.format(*args)}"]
    return emit


def unary(name: str, ufunc: np.ufunc, vjp: Callable, sympy: Callable,
          emit: str = "") -> Primitive:
    """An elementwise float64 function, by default spelled np.<ufunc> in Numba too."""
    return register(name=name, kind="elementwise", shape_rule=_elementwise_rule(name),
                    impl=ufunc, vjp=vjp,
                    emit=expression(emit or f"np.{ufunc.__name__}({{0}})"),
                    sympy=sympy, numpy=ufunc)


def binary(name: str, ufunc: np.ufunc, vjp: Callable, sympy: Callable, emit: str,
           out_dtype: str = FLOAT) -> Primitive:
    """An elementwise float64 operation of two broadcasting operands."""
    return register(name=name, kind="elementwise",
                    shape_rule=_elementwise_rule(name, FLOAT, out_dtype),
                    impl=ufunc, vjp=vjp, emit=expression(emit), sympy=sympy, numpy=ufunc)


# ---------------------------------------------------------------------------
# arithmetic

add_p = binary("add", np.add, emit="{0} + {1}",
             vjp=lambda g, ans, x, y: (g, g),
             sympy=lambda sp, x, y: x + y)

sub_p = binary("sub", np.subtract, emit="{0} - {1}",
             vjp=lambda g, ans, x, y: (g, -g),
             sympy=lambda sp, x, y: x - y)

mul_p = binary("mul", np.multiply, emit="{0} * {1}",
             vjp=lambda g, ans, x, y: (g * y, g * x),
             sympy=lambda sp, x, y: x * y)

# d(x/y)/dy = -x/y**2 = -(x/y)/y: dividing twice never overflows where y*y would
div_p = binary("div", np.divide, emit="{0} / {1}",
             vjp=lambda g, ans, x, y: (g / y, -(g * ans) / y),
             sympy=lambda sp, x, y: x / y)


def _pow_vjp(g, ans, x, y):
    # d/dx x**y = y*x**(y-1), and exactly 0 where y == 0 (x**0 is constant)
    dx = np.where(y == 0.0, 0.0, y * x ** (y - 1.0))
    # d/dy x**y = x**y*log(x), and 0 where x == 0 and y >= 0 (PyTorch, JAX)
    dy_log = ans * np.log(x)
    dy = np.where(x == 0.0, np.where(y >= 0.0, 0.0, dy_log), dy_log)
    return g * dx, g * dy


pow_p = binary("pow", np.power, emit="{0} ** {1}", vjp=_pow_vjp,
             sympy=lambda sp, x, y: x ** y)


def _maximum_vjp(g, ans, x, y):
    # a tie splits the cotangent evenly: Heaviside(0) = 1/2, as PyTorch and JAX
    half = 0.5 * g
    return (np.where(x > y, g, np.where(x == y, half, 0.0)),
            np.where(y > x, g, np.where(x == y, half, 0.0)))


maximum_p = binary("maximum", np.maximum, emit="np.maximum({0}, {1})", vjp=_maximum_vjp,
                 sympy=lambda sp, x, y: sp.Max(x, y))


def _minimum_vjp(g, ans, x, y):
    # a tie splits the cotangent evenly, as for maximum
    half = 0.5 * g
    return (np.where(x < y, g, np.where(x == y, half, 0.0)),
            np.where(y < x, g, np.where(x == y, half, 0.0)))


minimum_p = binary("minimum", np.minimum, emit="np.minimum({0}, {1})", vjp=_minimum_vjp,
                 sympy=lambda sp, x, y: sp.Min(x, y))

# ---------------------------------------------------------------------------
# elementwise functions

neg_p = unary("neg", np.negative,
            vjp=lambda g, ans, x: (-g,),
            sympy=lambda sp, x: -x)

exp_p = unary("exp", np.exp,
            vjp=lambda g, ans, x: (g * ans,),
            sympy=lambda sp, x: sp.exp(x))

log_p = unary("log", np.log,
            vjp=lambda g, ans, x: (g / x,),
            sympy=lambda sp, x: sp.log(x))

log1p_p = unary("log1p", np.log1p,
              vjp=lambda g, ans, x: (g / (1.0 + x),),
              sympy=lambda sp, x: sp.log(1 + x))

# exp(x) = expm1(x) + 1 reuses the forward result
expm1_p = unary("expm1", np.expm1,
              vjp=lambda g, ans, x: (g * (ans + 1.0),),
              sympy=lambda sp, x: sp.exp(x) - 1)

# sqrt'(0) = +inf, as numpy arithmetic gives
sqrt_p = unary("sqrt", np.sqrt,
             vjp=lambda g, ans, x: (g / (2.0 * ans),),
             sympy=lambda sp, x: sp.sqrt(x))

sin_p = unary("sin", np.sin,
            vjp=lambda g, ans, x: (g * np.cos(x),),
            sympy=lambda sp, x: sp.sin(x))

cos_p = unary("cos", np.cos,
            vjp=lambda g, ans, x: (-g * np.sin(x),),
            sympy=lambda sp, x: sp.cos(x))

tan_p = unary("tan", np.tan,
            vjp=lambda g, ans, x: (g * (1.0 + np.square(ans)),),
            sympy=lambda sp, x: sp.tan(x))

tanh_p = unary("tanh", np.tanh,
             vjp=lambda g, ans, x: (g * (1.0 - np.square(ans)),),
             sympy=lambda sp, x: sp.tanh(x))

sinh_p = unary("sinh", np.sinh,
             vjp=lambda g, ans, x: (g * np.cosh(x),),
             sympy=lambda sp, x: sp.sinh(x))

cosh_p = unary("cosh", np.cosh,
             vjp=lambda g, ans, x: (g * np.sinh(x),),
             sympy=lambda sp, x: sp.cosh(x))

# 1 - x**2 written (1 - x)(1 + x): no cancellation near |x| = 1
arcsin_p = unary("arcsin", np.arcsin,
               vjp=lambda g, ans, x: (g / np.sqrt((1.0 - x) * (1.0 + x)),),
               sympy=lambda sp, x: sp.asin(x))

arccos_p = unary("arccos", np.arccos,
               vjp=lambda g, ans, x: (-g / np.sqrt((1.0 - x) * (1.0 + x)),),
               sympy=lambda sp, x: sp.acos(x))

arctan_p = unary("arctan", np.arctan,
               vjp=lambda g, ans, x: (g / (1.0 + np.square(x)),),
               sympy=lambda sp, x: sp.atan(x))

# abs'(0) = sign(0) = 0, as PyTorch and SymPy
abs_p = unary("abs", np.absolute,
            vjp=lambda g, ans, x: (g * np.sign(x),),
            sympy=lambda sp, x: sp.Abs(x))

# piecewise constant: zero gradient everywhere, as JAX and PyTorch.
# "+ 0.0": numpy's sign(-0.0) is 0.0, Numba's is -0.0
sign_p = unary("sign", np.sign, emit="np.sign({0}) + 0.0",
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


rint_p = unary("rint", np.rint, vjp=lambda g, ans, x: (None,), sympy=_rint_sympy)

square_p = unary("square", np.square,
               vjp=lambda g, ans, x: (g * (2.0 * x),),
               sympy=lambda sp, x: x ** 2)

reciprocal_p = unary("reciprocal", np.reciprocal,
                   vjp=lambda g, ans, x: (-g * np.square(ans),),
                   sympy=lambda sp, x: 1 / x)

# ---------------------------------------------------------------------------
# selection and numerically stable functions: each computed the way that
# neither overflows nor cancels, with its kink conventions (DESIGN.md table)


def _selection_emit(cond: str, a: str, b: str) -> Callable[..., list[str]]:
    """Numba emit of ``out = a if cond else b`` elementwise, from templates over the operands."""
    def emit(out: str, args: list[str], avals: Any, out_aval: Aval, **params: Any) -> list[str]:
        c, x, y = (t.format(*args, out=out) for t in (cond, a, b))
        if not out_aval.shape:
            return [f"{out} = {x} if {c} else {y}"]
        return [f"{out} = np.where({c}, {x}, {y})"]
    return emit


def _relu(x):
    return np.where(x > 0.0, x, 0.0)[()]


# relu'(0) = 0, as PyTorch: the kink belongs to the flat side. Not maximum(x, 0),
# whose tie rule would give 1/2 there
relu_p = register(
    name="relu", kind="elementwise", shape_rule=_elementwise_rule("relu"), impl=_relu,
    emit=_selection_emit("{0} > 0.0", "{0}", "0.0"),
    vjp=lambda g, ans, x: (np.where(x > 0.0, g, 0.0),),
    sympy=lambda sp, x: sp.Piecewise((x, x > 0), (0, True)))


def _sigmoid(x):
    # exp(-|x|) never overflows: 1/(1+e) for x >= 0, e/(1+e) below, both exact-ish
    e = np.exp(-np.abs(x))
    return np.where(x >= 0.0, 1.0 / (1.0 + e), e / (1.0 + e))[()]


def _sigmoid_emit(out: str, args: list[str], avals: Any, out_aval: Aval) -> list[str]:
    (x,) = args
    select = _selection_emit("{0} >= 0.0", "1.0 / (1.0 + {out})", "{out} / (1.0 + {out})")
    return [f"{out} = np.exp(-np.abs({x}))", *select(out, args, avals, out_aval)]


# sigmoid' = sigmoid(x) * sigmoid(-x): no 1 - sigmoid(x) cancelling to 0 for large x;
# sigmoid(-800) = 0 with gradient 0, sigmoid(800) = 1 with gradient 0
sigmoid_p = register(
    name="sigmoid", kind="elementwise", shape_rule=_elementwise_rule("sigmoid"),
    impl=_sigmoid, emit=_sigmoid_emit,
    vjp=lambda g, ans, x: (g * (ans * ops.sigmoid(-x)),),
    sympy=lambda sp, x: 1 / (1 + sp.exp(-x)))


def _softplus(x):
    return np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0.0)


# log(1 + exp(x)) = log1p(exp(-|x|)) + max(x, 0): no overflow; softplus' = sigmoid,
# so softplus'(800) is exactly 1 (not inf/inf = nan)
softplus_p = register(
    name="softplus", kind="elementwise", shape_rule=_elementwise_rule("softplus"),
    impl=_softplus, emit=expression("np.log1p(np.exp(-np.abs({0}))) + np.maximum({0}, 0.0)"),
    vjp=lambda g, ans, x: (g * ops.sigmoid(x),),
    sympy=lambda sp, x: sp.log(1 + sp.exp(x)))


def _xlogy(x, y):
    with np.errstate(all="ignore"):
        return np.where((x == 0.0) & (y == y), 0.0, x * np.log(y))[()]


def _xlogy_vjp(g, ans, x, y):
    # where x == 0 the function is the constant 0 in y, and we take its x-derivative
    # to be 0 too (PyTorch; SymPy's Piecewise((0, Eq(x, 0)), ...) agrees), so that
    # xlogy(0, 0) has gradient (0, 0) and sum(xlogy(p, q)) with p = 0 stays finite
    zero = x == 0.0
    return (np.where(zero, 0.0, g * np.log(y)), np.where(zero, 0.0, g * x / y))


# x * log(y), and 0 where x == 0 unless y is nan (scipy.special.xlogy)
xlogy_p = register(
    name="xlogy", kind="elementwise", shape_rule=_elementwise_rule("xlogy"), impl=_xlogy,
    emit=_selection_emit("({0} == 0.0) & ({1} == {1})", "0.0", "{0} * np.log({1})"),
    vjp=_xlogy_vjp,
    sympy=lambda sp, x, y: sp.Piecewise((0, sp.Eq(x, 0)), (x * sp.log(y), True)))


def _hypot_vjp(g, ans, x, y):
    # x/hypot and y/hypot are bounded by 1; at the origin they are 0/0, where we give
    # 0, as for a norm at 0 (pytorch #2421)
    origin = ans == 0.0
    return (np.where(origin, 0.0, g * (x / ans)), np.where(origin, 0.0, g * (y / ans)))


hypot_p = binary("hypot", np.hypot, emit="np.hypot({0}, {1})", vjp=_hypot_vjp,
                 sympy=lambda sp, x, y: sp.sqrt(x ** 2 + y ** 2))


def _arctan2_vjp(g, y, x):
    # d/dy = x / (x**2 + y**2), divided by hypot twice: x*x + y*y would overflow.
    # At the origin 0/0 is nan: a singular point, as numpy arithmetic gives
    h = np.hypot(y, x)
    return (g * (x / h) / h, -(g * (y / h)) / h)


arctan2_p = binary("arctan2", np.arctan2, emit="np.arctan2({0}, {1})",
                   vjp=lambda g, ans, y, x: _arctan2_vjp(g, y, x),
                   sympy=lambda sp, y, x: sp.atan2(y, x))


def _logaddexp_vjp(g, ans, x, y):
    # the softmax weight e^x / (e^x + e^y) is sigmoid(x - y): one exp, no overflow,
    # 1 and 0 when one operand is infinitely larger; equal operands share 1/2 (also
    # at -inf or +inf, where x - y is nan). Needs neither ans nor the forward's log
    tie = x == y
    return (g * np.where(tie, 0.5, ops.sigmoid(x - y)),
            g * np.where(tie, 0.5, ops.sigmoid(y - x)))


logaddexp_p = binary("logaddexp", np.logaddexp, emit="np.logaddexp({0}, {1})",
                     vjp=_logaddexp_vjp,
                     sympy=lambda sp, x, y: sp.log(sp.exp(x) + sp.exp(y)))

# ---------------------------------------------------------------------------
# comparisons and selection: booleans carry no gradient


def _comparison(name: str, ufunc: np.ufunc, op: str, sympy: Callable) -> Primitive:
    return binary(name, ufunc, emit=f"{{0}} {op} {{1}}", out_dtype=BOOL,
                  vjp=lambda g, ans, x, y: (None, None), sympy=sympy)


gt_p = _comparison("gt", np.greater, ">", lambda sp, x, y: sp.StrictGreaterThan(x, y))
ge_p = _comparison("ge", np.greater_equal, ">=", lambda sp, x, y: sp.GreaterThan(x, y))
lt_p = _comparison("lt", np.less, "<", lambda sp, x, y: sp.StrictLessThan(x, y))
le_p = _comparison("le", np.less_equal, "<=", lambda sp, x, y: sp.LessThan(x, y))
eq_p = _comparison("eq", np.equal, "==", lambda sp, x, y: sp.Eq(x, y))
ne_p = _comparison("ne", np.not_equal, "!=", lambda sp, x, y: sp.Ne(x, y))


def _where_rule(c: Aval, x: Aval, y: Aval) -> Aval:
    _require("where", (c,), BOOL)
    _require("where", (x, y), FLOAT)
    return Aval(broadcast_shapes("where", c, x, y))


def _where_emit(out: str, args: list[str], avals: list[Aval], out_aval: Aval) -> list[str]:
    c, x, y = args
    if not out_aval.shape:
        return [f"{out} = {x} if {c} else {y}"]
    return [f"{out} = np.where({c}, {x}, {y})"]


# the unselected operand gets an exact 0: the cotangent itself never mixes branches
where_p = register(
    name="where", kind="elementwise", shape_rule=_where_rule, impl=np.where, emit=_where_emit,
    vjp=lambda g, ans, c, x, y: (None, np.where(c, g, 0.0), np.where(c, 0.0, g)),
    sympy=lambda sp, c, x, y: sp.Piecewise((x, c), (y, True)), numpy=np.where)

# ---------------------------------------------------------------------------
# reductions over ``axes`` (sorted, non-negative, unique; keepdims is a reshape)


def _reduction_rule(name: str, identity: bool) -> Callable:
    def rule(x: Aval, *, axes: tuple[int, ...]) -> Aval:
        _require(name, (x,), FLOAT)
        if tuple(sorted(set(axes))) != tuple(axes) or any(not 0 <= a < x.ndim for a in axes):
            raise ShapeError(f"{name}: axes {axes} are not sorted, unique axes of {x}")
        if not identity and any(x.shape[a] == 0 for a in axes):
            raise ShapeError(f"{name} of an empty axis of {x} is undefined (it has no identity); "
                             "reduce over non-empty axes")
        return Aval(tuple(d for i, d in enumerate(x.shape) if i not in axes))
    return rule


def _reduction_emit(whole: str, init: str, update: list[str], finish: bool = False) -> Callable:
    """Numba emit: ``whole`` for a reduction to a scalar, loops otherwise.

    ``update`` lines use ``{acc}`` (the output element) and ``{x}`` (the input
    element); ``finish`` divides by the count (mean).
    """
    def emit(out: str, args: list[str], avals: list[Aval], out_aval: Aval, *, axes) -> list[str]:
        (x,), (aval,) = args, avals
        if not axes:
            return [f"{out} = {x}"]
        if not out_aval.shape:
            return [f"{out} = {whole.format(x)}"]
        kept = [k for k in range(aval.ndim) if k not in axes]
        shape = "".join(f"{x}.shape[{k}], " for k in kept)
        lines = [f"{out} = np.full(({shape}), {init})"]
        for depth in range(aval.ndim):
            lines.append("    " * depth + f"for i{depth} in range({x}.shape[{depth}]):")
        pad = "    " * aval.ndim
        acc = f"{out}[{', '.join(f'i{k}' for k in kept)}]"
        elem = f"{x}[{', '.join(f'i{k}' for k in range(aval.ndim))}]"
        lines += [pad + u.format(acc=acc, x=elem) for u in update]
        if finish:
            count = " * ".join(f"{x}.shape[{k}]" for k in axes)
            lines.append(f"{out} /= {count}")
        return lines
    return emit


def _expand(g, shape: tuple[int, ...], axes: tuple[int, ...]):
    """A reduction's cotangent broadcast back over the reduced ``axes``."""
    kept = tuple(1 if i in axes else d for i, d in enumerate(shape))
    return ops.broadcast_to(ops.reshape(g, kept), shape)


sum_p = register(
    name="sum", kind="reduction", shape_rule=_reduction_rule("sum", True),
    impl=lambda x, axes: np.sum(x, axis=axes),
    emit=_reduction_emit("np.sum({})", "0.0", ["{acc} += {x}"]),
    vjp=lambda g, ans, x, axes: (_expand(g, x.shape, axes),),
    sympy=lambda sp, xs: sp.Add(*xs), numpy=np.sum)

mean_p = register(
    name="mean", kind="reduction", shape_rule=_reduction_rule("mean", True),
    impl=lambda x, axes: np.mean(x, axis=axes),
    emit=_reduction_emit("np.mean({})", "0.0", ["{acc} += {x}"], finish=True),
    vjp=lambda g, ans, x, axes: (_expand(g / ops.count(x, axes), x.shape, axes),),
    sympy=lambda sp, xs: sp.Add(*xs) / len(xs), numpy=np.mean)


def _count_rule(x: Aval, *, axes: tuple[int, ...]) -> Aval:
    if tuple(sorted(set(axes))) != tuple(axes) or any(not 0 <= a < x.ndim for a in axes):
        raise ShapeError(f"count: axes {axes} are not sorted, unique axes of {x}")
    return Aval(())


def _count_emit(out, args, avals, out_aval, *, axes) -> list[str]:
    sizes = " * ".join(str(avals[0].shape[a]) for a in axes) or "1"  # named sizes in kernels
    return [f"{out} = float({sizes})"]


# How many elements a reduction over ``axes`` of x combines, as a float: the
# ``n`` of a mean's gradient ``g / n``. A value computed in the kernel from x's
# shape, never a literal, so that one kernel serves every length.
count_p = register(
    name="count", kind="structural", shape_rule=_count_rule,
    impl=lambda x, axes: np.float64(math.prod(np.shape(x)[a] for a in axes)),
    emit=_count_emit, vjp=lambda g, ans, x, axes: (None,),
    sympy=lambda sp, x, axes: np.array(sp.Integer(math.prod(x.shape[a] for a in axes)),
                                       dtype=object))


def _prod_vjp(g, ans, x, axes):
    # d prod / d x_i is the product of the other elements. For a regular x_i
    # (finite, nonzero) that is prod / x_i. For a special one (0 or +-inf),
    # dividing would give 0/0 or inf/inf, so it is the product of the regular
    # elements times that of the other special ones: 1 if there are none,
    # else 0 (zeros), +-inf (infinities, with their signs) or nan (both).
    def expand(v):
        return _expand(v, x.shape, axes)

    zero = np.where(x == 0.0, 1.0, 0.0)
    inf = np.where(np.abs(x) == np.inf, 1.0, 0.0)
    special = zero + inf > 0.0
    inf_sign = np.where(inf > 0.0, np.sign(x), 1.0)
    other_zeros = expand(np.sum(zero, axis=axes)) - zero
    other_infs = expand(np.sum(inf, axis=axes)) - inf
    other_signs = expand(np.prod(inf_sign, axis=axes)) * inf_sign
    factor = np.where(other_zeros > 0.0, np.where(other_infs > 0.0, np.nan, 0.0),
                      np.where(other_infs > 0.0, other_signs * np.inf, 1.0))
    regular = expand(np.prod(np.where(special, 1.0, x), axis=axes))
    others = np.where(special, regular * factor, expand(ans) / x)
    return (expand(g) * others,)


prod_p = register(
    name="prod", kind="reduction", shape_rule=_reduction_rule("prod", True),
    impl=lambda x, axes: np.prod(x, axis=axes),
    emit=_reduction_emit("np.prod({})", "1.0", ["{acc} *= {x}"]),
    vjp=_prod_vjp, sympy=lambda sp, xs: sp.Mul(*xs), numpy=np.prod)


def _extremum_vjp(largest: bool) -> Callable:
    # k tied extrema share the cotangent: 1/k each (DESIGN.md conventions). The
    # weights come from extremum_weights(x), which symgrad.ops.max records in the
    # forward pass beside the value; the VJP asks for the same equation, which
    # CSE merges into the forward one, so a gradient kernel selects the extrema
    # once, in its forward section, and a jit kernel (no VJP) not at all. The
    # old rule compared x with the broadcast output in the backward pass; that
    # gave k = 0 (a cotangent divided by 0) whenever the output was not
    # bit-identical to one of the inputs it came from.
    def vjp(g, ans, x, axes):
        return (_expand(g, x.shape, axes) * ops.extremum_weights(x, axes, largest),)
    return vjp


# ``v != v`` keeps a NaN once it is in the accumulator, as numpy's max does
max_p = register(
    name="max", kind="reduction", shape_rule=_reduction_rule("max", False),
    impl=lambda x, axes: np.max(x, axis=axes),
    emit=_reduction_emit("np.max({})", "-np.inf",
                         ["acc = {x}", "if acc > {acc} or acc != acc:", "    {acc} = acc"]),
    vjp=_extremum_vjp(largest=True), sympy=lambda sp, xs: sp.Max(*xs), numpy=np.max)

min_p = register(
    name="min", kind="reduction", shape_rule=_reduction_rule("min", False),
    impl=lambda x, axes: np.min(x, axis=axes),
    emit=_reduction_emit("np.min({})", "np.inf",
                         ["acc = {x}", "if acc < {acc} or acc != acc:", "    {acc} = acc"]),
    vjp=_extremum_vjp(largest=False), sympy=lambda sp, xs: sp.Min(*xs), numpy=np.min)

def _extremum_weights_rule(x: Aval, *, axes: tuple[int, ...], largest: bool) -> Aval:
    _reduction_rule("extremum_weights", False)(x, axes=axes)
    return Aval(x.shape)


def _extremum_weights_impl(x, axes, largest):
    x = np.asarray(x, dtype=float)
    best = (np.max if largest else np.min)(x, axis=axes, keepdims=True)
    hit = x == best
    w = np.where(hit, 1.0 / np.sum(hit, axis=axes, keepdims=True), 0.0)
    return np.where(np.isnan(best), np.nan, w)[()]


def _extremum_weights_emit(out, args, avals, out_aval, *, axes, largest) -> list[str]:
    """One row per group of the reduced axes: find the extremum (nan sticks, as
    in numpy's max), count its ties, give each 1/k."""
    (x,), (aval,) = args, avals
    if not axes:
        return [f"{out} = np.ones_like({x})" if aval.shape else f"{out} = 1.0"]
    kept = [k for k in range(aval.ndim) if k not in axes]
    perm = (*kept, *axes)
    identity = perm == tuple(range(aval.ndim))
    rows = f"{x}" if identity else f"np.transpose({x}, {perm!r})"
    m = " * ".join(f"{x}.shape[{k}]" for k in kept) or "1"
    n = " * ".join(f"{x}.shape[{k}]" for k in axes)
    better = ">" if largest else "<"
    # temporaries carry the output's name: printer names are letters and digits
    r, w, i, j, k, best = (f"{out}_{t}" for t in ("rows", "w", "i", "j", "k", "best"))
    lines = [
        f"{r} = np.ascontiguousarray({rows}).reshape(({m}, {n}))",
        f"{w} = np.zeros_like({r})",
        f"for {i} in range({r}.shape[0]):",
        f"    {best} = {r}[{i}, 0]",
        f"    for {j} in range(1, {r}.shape[1]):",
        f"        if {r}[{i}, {j}] {better} {best} or {r}[{i}, {j}] != {r}[{i}, {j}]:",
        f"            {best} = {r}[{i}, {j}]",
        f"    {k} = 0",
        f"    for {j} in range({r}.shape[1]):",
        f"        if {r}[{i}, {j}] == {best}:",
        f"            {k} += 1",
        f"    for {j} in range({r}.shape[1]):",
        f"        if {best} != {best}:",
        f"            {w}[{i}, {j}] = np.nan",
        f"        elif {r}[{i}, {j}] == {best}:",
        f"            {w}[{i}, {j}] = 1.0 / {k}",
    ]
    shape = "".join(f"{x}.shape[{k}], " for k in perm)
    grouped = f"{w}.reshape(({shape}))"
    if identity:
        lines.append(f"{out} = {grouped}")
    else:
        inverse = tuple(int(i) for i in np.argsort(perm))
        lines.append(f"{out} = np.ascontiguousarray(np.transpose({grouped}, {inverse!r}))")
    return lines


def _extremum_weights_sympy(sp, x, axes, largest):
    # w_i = [x_i is an extremum] / (number of extrema): Heaviside(0, 1) = 1 counts ties
    x = np.asarray(x, dtype=object)
    kept = [i for i in range(x.ndim) if i not in axes]
    perm = (*kept, *axes)
    rows = np.transpose(x, perm).reshape(-1, math.prod(x.shape[a] for a in axes))
    sign = 1 if largest else -1
    w = np.empty(rows.shape, dtype=object)
    for r, row in enumerate(rows):
        hits = [sp.Mul(*(sp.Heaviside(sign * (a - b), 1) for b in row)) for a in row]
        for j, h in enumerate(hits):
            w[r, j] = h / sp.Add(*hits)
    grouped = w.reshape([x.shape[p] for p in perm])
    return np.transpose(grouped, tuple(int(i) for i in np.argsort(perm)))


# the share of a max/min reduction's cotangent each element gets: 1/k for each of
# k tied extrema, 0 elsewhere (nan for a group holding a nan). Piecewise
# constant, so it has no gradient of its own.
extremum_weights_p = register(
    name="extremum_weights", kind="structural", shape_rule=_extremum_weights_rule,
    impl=_extremum_weights_impl, emit=_extremum_weights_emit,
    vjp=lambda g, ans, x, axes, largest: (None,), sympy=_extremum_weights_sympy)

# ---------------------------------------------------------------------------
# structural: these move elements and compute nothing, so their numpy
# implementation also works on arrays of SymPy expressions


def _broadcast_to_rule(x: Aval, *, shape: tuple[int, ...]) -> Aval:
    if broadcast_shapes("broadcast_to", x, Aval(shape)) != tuple(shape):
        raise ShapeError(f"broadcast_to: {x} cannot be broadcast to shape {shape}")
    return Aval(tuple(shape), x.dtype)


def _broadcast_to_emit(out, args, avals, out_aval, *, shape) -> list[str]:
    (x,), (aval,) = args, avals
    if not aval.shape:
        return [f"{out} = np.full({shape!r}, {x})"]
    return [f"{out} = np.broadcast_to({x}, {shape!r})"]


broadcast_to_p = register(
    name="broadcast_to", kind="structural", shape_rule=_broadcast_to_rule,
    impl=lambda x, shape: np.broadcast_to(x, shape),
    emit=_broadcast_to_emit,
    vjp=lambda g, ans, x, shape: (ops.unbroadcast(g, x.shape),),
    sympy=lambda sp, x, shape: np.broadcast_to(x, shape), numpy=np.broadcast_to, view=True)


def _reshape_rule(x: Aval, *, shape: tuple[int, ...]) -> Aval:
    if any(d < 0 for d in shape) or math.prod(shape) != x.size:
        raise ShapeError(f"reshape: cannot reshape {x} ({x.size} elements) into shape {shape}")
    return Aval(tuple(shape), x.dtype)


def _reshape_emit(out, args, avals, out_aval, *, shape) -> list[str]:
    (x,), (aval,) = args, avals
    if not aval.shape:
        return [f"{out} = np.full({shape!r}, {x})"]
    if not shape:
        return [f"{out} = {x}.ravel()[0]"]
    return [f"{out} = np.ascontiguousarray({x}).reshape({shape!r})"]


reshape_p = register(
    name="reshape", kind="structural", shape_rule=_reshape_rule,
    impl=lambda x, shape: np.reshape(x, shape), emit=_reshape_emit,
    vjp=lambda g, ans, x, shape: (ops.reshape(g, x.shape),),  # type: ignore[has-type]
    sympy=lambda sp, x, shape: np.reshape(x, shape), numpy=np.reshape, view=True)


def _transpose_rule(x: Aval, *, perm: tuple[int, ...]) -> Aval:
    if sorted(perm) != list(range(x.ndim)):
        raise ShapeError(f"transpose: axes {perm} are not a permutation of the axes of {x}")
    return Aval(tuple(x.shape[p] for p in perm), x.dtype)


transpose_p = register(
    name="transpose", kind="structural", shape_rule=_transpose_rule,
    impl=lambda x, perm: np.transpose(x, perm),
    emit=lambda out, args, avals, out_aval, *, perm: [f"{out} = np.transpose({args[0]}, {perm!r})"],
    vjp=lambda g, ans, x, perm: (
        ops.transpose(g, tuple(int(i) for i in np.argsort(perm))),),  # type: ignore[has-type]
    sympy=lambda sp, x, perm: np.transpose(x, perm), numpy=np.transpose, view=True)

# VJP rules that build arrays from constants (the seed 1.0 of a scalar output)
# use ops.* rather than np.*: numpy would compute those eagerly, while ops records
# them in the trace. ops imports this module, so it comes last.
from . import ops  # noqa: E402
