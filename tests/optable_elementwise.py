"""Op table records (tests/optable.py) of the elementwise, comparison, logical and
predicate functions and methods of symgrad/eager/elementwise_methods.py (and their
``torch.*`` functions, symgrad/eager/elementwise_functions.py), with the in-place forms."""

from __future__ import annotations

from optable import ALL, FLOAT, INTS, add

BINARY = (((3, 4), (3, 4)), ((3, 1), (4,)), ((), (2, 3)))
INPLACE = (((3, 4), (3, 4)), ((3, 4), (4,)))  # (in place: the result has x's shape)
COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less",
               "less_equal", "not_equal")
#: PyTorch's trigamma (polygamma(1, x), the gradient of digamma) is off by up to 5e-10
#: relative to mpmath at 30 digits; symgrad's (scipy's) by 2e-16: a looser tolerance there
TRIGAMMA_RTOL = 1e-8
ALIASES = ("greater", "greater_equal", "less", "less_equal", "not_equal")


def _both(name: str) -> tuple[str, str]:
    return (f"Tensor.{name}", f"torch.{name}")


# -- comparisons, logical ops, predicates: bool results ---------------------------------
add("comparison functions", lambda L, x, y: tuple(getattr(L, n)(x, y) for n in COMPARISONS)
    + tuple(getattr(x, n)(y) for n in ALIASES) + (L.gt(x, 0), L.less_equal(x, 1)),
    samples=BINARY, dtypes=ALL, grad=False,
    covers=tuple(f"torch.{n}" for n in COMPARISONS) + tuple(f"Tensor.{n}" for n in ALIASES))
add("comparisons in place", lambda L, x, y: tuple(
    getattr(x.clone() * 1, f"{n}_")(y) for n in COMPARISONS) + (x.clone().eq_(0.5),),
    samples=INPLACE, dtypes=FLOAT + ("int64", "int8"), gradgrad=False,
    covers=tuple(f"Tensor.{n}_" for n in COMPARISONS))
add("isclose", lambda L, x, y: (L.isclose(x, y), x.isclose(y, rtol=0.5, atol=0.5),
                                L.isclose(x, x * 1), x.isclose(y, 0.0, 2.0)),
    samples=BINARY, dtypes=FLOAT + ("int64", "int16"), grad=False, covers=_both("isclose"))
add("isclose(nan, inf)", lambda L, x: (
    L.isclose(x / (x - x), x / (x - x)), L.isclose(x / (x - x), x / (x - x), equal_nan=True)),
    samples=(((3, 4),),), dtypes=FLOAT, grad=False, covers=("torch.isclose",))
_LOGICAL = ("logical_and", "logical_or", "logical_xor")
add("logical ops", lambda L, x, y: tuple(getattr(L, n)(x, y) for n in _LOGICAL)
    + tuple(getattr(x, n)(y) for n in _LOGICAL) + (x.logical_and(x > 0),),
    samples=BINARY, dtypes=ALL, grad=False,
    covers=tuple(f"{p}.{n}" for n in _LOGICAL for p in ("torch", "Tensor")))
add("logical ops in place", lambda L, x, y: tuple(
    getattr(x.clone(), f"{n}_")(y) for n in _LOGICAL) + (x.clone().logical_not_(),),
    samples=INPLACE, dtypes=ALL, grad=False,
    covers=tuple(f"Tensor.{n}_" for n in (*_LOGICAL, "logical_not")))
_PREDICATES = ("isinf", "isposinf", "isneginf", "isreal", "signbit")


def _specials(L, x):
    """x, with ±inf, nan and -0.0 (from x's own values) where x is floating."""
    if not x.is_floating_point():
        return x
    return L.cat([x.reshape(-1), (x / (x - x)).reshape(-1), (-(x.abs() * 0)).reshape(-1)])


add("predicates", lambda L, x: tuple(getattr(L, n)(_specials(L, x)) for n in _PREDICATES)
    + tuple(getattr(x, n)() for n in _PREDICATES),
    dtypes=ALL, grad=False, covers=tuple(f"{p}.{n}" for n in _PREDICATES
                                         for p in ("torch", "Tensor")))
add("is_* predicates", lambda L, x, y: L.tensor([
    L.is_nonzero(x.reshape(-1)[:1]), x.reshape(-1)[-1:].is_nonzero(), x.is_complex(),
    L.is_complex(x), L.is_signed(x), x.is_signed(), x.is_same_size(y), L.is_same_size(x, x)]),
    samples=BINARY[:2], dtypes=ALL, grad=False,
    covers=_both("is_nonzero") + _both("is_complex") + _both("is_signed")
    + _both("is_same_size"))

# -- aliases of existing ops (each spelling called) --------------------------------------
add("sign and rounding aliases", lambda L, x: (
    L.absolute(x), x.absolute(), L.negative(x), x.negative(), L.positive(x), x.positive(),
    L.sgn(x), x.sgn(), L.fix(x), x.fix()),
    dtypes=FLOAT + ("int64", "int8"),
    covers=_both("absolute") + _both("negative") + _both("positive") + _both("sgn")
    + _both("fix"))
add("multiply, subtract, divide", lambda L, x, y: (
    L.multiply(x, y), x.multiply(y), L.subtract(x, y, alpha=2), x.subtract(y), x.divide(y),
    x.divide(y, rounding_mode="floor")),
    samples=BINARY, domain=("real", "positive"), dtypes=FLOAT + ("int64", "int16"),
    covers=_both("multiply") + _both("subtract") + ("Tensor.divide",))
_UNIT = ("arcsin", "arccos", "arctan", "arctanh", "atanh", "asinh", "arcsinh")
add("inverse trigonometric aliases", lambda L, x: tuple(getattr(L, n)(x) for n in _UNIT)
    + tuple(getattr(x, n)() for n in _UNIT),
    domain="unit", dtypes=FLOAT + ("int64",),
    covers=tuple(f"{p}.{n}" for n in _UNIT for p in ("torch", "Tensor")))
add("acosh", lambda L, x: (L.acosh(x + 1), (x + 1).acosh(), L.arccosh(x + 1),
                           (x + 1).arccosh()),
    domain="positive", covers=_both("acosh") + _both("arccosh"))
add("arctan2", lambda L, x, y: (L.arctan2(x, y), x.arctan2(y)), samples=BINARY,
    dtypes=FLOAT + ("int32",), covers=_both("arctan2"))

# -- math: one record per op -----------------------------------------------------------
_UNARY = {  # name -> (domain, dtypes)
    "frac": ("real", FLOAT), "exp2": ("real", FLOAT + ("int64", "uint8")),
    "erfc": ("real", FLOAT + ("int64",)), "lgamma": ("positive", FLOAT + ("int64",)),
    "digamma": ("positive", FLOAT + ("int32",)), "i0": ("real", FLOAT + ("int64",)),
    "sinc": ("real", FLOAT + ("int16",)), "deg2rad": ("real", FLOAT + ("int64",)),
    "rad2deg": ("real", FLOAT + ("int8",)), "logit": ("prob", FLOAT),
}
for _name, (_domain, _dtypes) in _UNARY.items():
    add(_name, lambda L, x, n=_name: (getattr(x, n)(), getattr(L, n)(x)), domain=_domain,
        dtypes=_dtypes, covers=_both(_name),
        rtol=TRIGAMMA_RTOL if _name in ("lgamma", "digamma") else 1e-10)
add("logit(eps)", lambda L, x: (x.logit(0.2), L.logit(x, eps=0.3)), domain="prob",
    covers=_both("logit"))
add("polygamma", lambda L, x: (L.polygamma(0, x), L.polygamma(1, x), x.polygamma(2),
                               L.polygamma(3, x)),
    domain="positive", dtypes=FLOAT + ("int64",), covers=_both("polygamma"), rtol=TRIGAMMA_RTOL)
add("mvlgamma", lambda L, x: (x.mvlgamma(1), L.mvlgamma(x + 1, 2), (x + 1).mvlgamma(p=3)),
    domain="positive", dtypes=FLOAT + ("int64",), covers=_both("mvlgamma"), rtol=TRIGAMMA_RTOL)
_BINARY = {  # name -> (domains, dtypes)
    "hypot": (("real", "real"), FLOAT), "logaddexp": (("real", "real"), FLOAT),
    "logaddexp2": (("real", "real"), FLOAT),
    "copysign": (("real", "real"), FLOAT + ("int64", "int8")),
    "float_power": (("positive", "exponent"), FLOAT + ("int64",)),
    "ldexp": (("real", "exponent"), FLOAT + ("int32",)),
}
for _name, (_domain, _dtypes) in _BINARY.items():
    add(_name, lambda L, x, y, n=_name: (getattr(x, n)(y), getattr(L, n)(x, y)),
        samples=BINARY, domain=_domain, dtypes=_dtypes, covers=_both(_name))
add("xlogy(method)", lambda L, x, y: (x.xlogy(y), x.xlogy(2.5)), samples=BINARY,
    domain=("real", "positive"), covers=("Tensor.xlogy",))
# (no double backward: PyTorch's is nan where x is 0, from its result / x; ours is 0)
add("copysign(zero, number)", lambda L, x, y: (
    (x * 0).copysign(y), L.copysign(x, -1.5), x.copysign(-(y.abs() * 0))), samples=BINARY,
    gradgrad=False, covers=_both("copysign"))
add("float_power(number)", lambda L, x: (x.float_power(2), L.float_power(x, 0.5)),
    domain="positive", dtypes=FLOAT + ("int64",), covers=_both("float_power"))
add("heaviside", lambda L, x, y: (x.heaviside(y), L.heaviside(x, y), L.heaviside(x * 0, y)),
    samples=BINARY, domain=("kinks", "real"), dtypes=FLOAT + INTS, grad=False,
    covers=_both("heaviside"))
add("nextafter", lambda L, x, y: (x.nextafter(y), L.nextafter(x, y), L.nextafter(x, x),
                                  x.nextafter((y * 3).long())),
    samples=BINARY, dtypes=FLOAT, grad=False, covers=_both("nextafter"))
for _name in ("gcd", "lcm"):
    add(_name, lambda L, x, y, n=_name: (getattr(x, n)(y), getattr(L, n)(x, y),
                                         getattr(x, n)(y * 2)),
        samples=BINARY, dtypes=INTS, grad=False, covers=_both(_name))
add("hardshrink", lambda L, x: (x.hardshrink(), L.hardshrink(x, 0.3), x.hardshrink(lambd=2.0)),
    samples=(((4, 6),),), domain="wide", gradgrad=False, covers=_both("hardshrink"))
add("prelu", lambda L, x, w: (x.prelu(w), L.prelu(x, w)), samples=(((2, 3, 4), (3,)),
                                                                  ((2, 3), (1,))),
    covers=_both("prelu"))
add("clamp_min, clamp_max", lambda L, x: (L.clamp_min(x, 0.3), L.clamp_max(x, -0.3)),
    dtypes=FLOAT + ("int64",), covers=("torch.clamp_min", "torch.clamp_max"))

# -- in place, on a clone (the op's values, and the gradient through the clone) ---------
_UNARY_INPLACE = {  # name -> (domain, whether torch.name_ exists)
    "absolute": ("real", False), "negative": ("real", True), "sgn": ("real", False),
    "fix": ("real", True), "frac": ("real", True), "exp2": ("real", True),
    "erfc": ("real", True), "i0": ("real", True), "sinc": ("real", True),
    "deg2rad": ("real", True), "rad2deg": ("real", True), "arctan": ("real", True),
    "arccos": ("unit", True), "arcsin": ("unit", True),
    "lgamma": ("positive", False), "digamma": ("positive", False), "logit": ("prob", True),
    "abs": ("real", True), "acos": ("unit", True), "asin": ("unit", True),
    "atan": ("real", True), "ceil": ("real", True), "cos": ("real", True),
    "cosh": ("real", True), "erf": ("real", True), "exp": ("real", True),
    "expm1": ("real", True), "floor": ("real", True), "log": ("positive", True),
    "log10": ("positive", True), "log1p": ("positive", True), "log2": ("positive", True),
    "neg": ("real", True), "reciprocal": ("positive", True), "relu": ("real", True),
    "round": ("real", True), "rsqrt": ("positive", True), "sigmoid": ("real", True),
    "sin": ("real", True), "sinh": ("real", True), "sqrt": ("positive", True),
    "square": ("real", True), "tan": ("unit", True), "tanh": ("real", True),
    "trunc": ("real", True),
}
_OWN = ("absolute negative sgn fix frac exp2 erfc i0 sinc deg2rad rad2deg arctan arccos arcsin "
        "lgamma digamma logit").split()  # (Tensor.name_ is new)
for _domain in ("real", "unit", "positive", "prob"):
    _names = [n for n, (d, _) in _UNARY_INPLACE.items() if d == _domain]
    _torch = [n for n in _names if _UNARY_INPLACE[n][1]]
    add(f"elementwise in place ({_domain})", lambda L, x, ns=_names, ts=_torch: tuple(
        getattr(x.clone() * 1.0, f"{n}_")() for n in ns if n in _OWN)
        + tuple(getattr(L, f"{n}_")(x.clone() * 1.0) for n in ts),
        samples=(((3, 4),),), domain=_domain, full_only=("gradgrad",),
        rtol=TRIGAMMA_RTOL if _domain == "positive" else 1e-10,
        covers=tuple(f"Tensor.{n}_" for n in _names if n in _OWN)
        + tuple(f"torch.{n}_" for n in _torch))
_HYPERBOLIC = ("asinh", "arcsinh", "atanh", "arctanh", "acosh", "arccosh")
# values only: PyTorch has no derivative of the in-place inverse hyperbolic functions
add("inverse hyperbolic in place", lambda L, x: tuple(
    getattr(x.clone() + (n.endswith("cosh")), f"{n}_")() for n in _HYPERBOLIC)
    + tuple(getattr(L, f"{n}_")(x.clone() + (n.endswith("cosh"))) for n in _HYPERBOLIC),
    domain="prob", grad=False,
    covers=tuple(f"{p}.{n}_" for n in _HYPERBOLIC for p in ("Tensor", "torch")))
add("special functions in place", lambda L, x: (
    (x.clone() + 1).polygamma_(1), (x.clone() + 1).mvlgamma_(2), x.clone().logit_(0.2),
    L.logit_(x.clone() * 1, eps=0.25)),
    domain="prob", full_only=("gradgrad",), rtol=TRIGAMMA_RTOL,
    covers=("Tensor.polygamma_", "Tensor.mvlgamma_", "Tensor.logit_", "torch.logit_"))
_BINARY_INPLACE = ("arctan2", "atan2", "hypot", "xlogy", "copysign", "ldexp", "multiply",
                   "subtract", "divide", "true_divide")
add("binary in place", lambda L, x, y: tuple(
    getattr(x.clone() * 1.0, f"{n}_")(y.abs() + 0.5) for n in _BINARY_INPLACE)
    + (x.clone().subtract_(y, alpha=2), L.xlogy_(x.clone() * 1.0, y.abs() + 1),
       L.ldexp_(x.clone() * 1.0, y)),
    samples=INPLACE, full_only=("gradgrad",),
    covers=tuple(f"Tensor.{n}_" for n in _BINARY_INPLACE) + ("torch.xlogy_", "torch.ldexp_"))
add("float_power_", lambda L, x, y: (x.clone().float_power_(y), x.clone().float_power_(2)),
    samples=INPLACE, domain=("positive", "exponent"), dtypes=("float64",),
    full_only=("gradgrad",), covers=("Tensor.float_power_",))
add("clamp in place", lambda L, x: (
    (x.clone() * 1).clamp_min_(0.3), (x.clone() * 1).clamp_max_(-0.3), (x.clone() * 1).clip_(
        -0.5, 0.5), L.clamp_(x.clone() * 1, max=0.2), L.clamp_min_(x.clone() * 1, 0.1),
    L.clamp_max_(x.clone() * 1, 0.1), L.clip_(x.clone() * 1, min=-0.2)),
    full_only=("gradgrad",),
    covers=("Tensor.clamp_min_", "Tensor.clamp_max_", "Tensor.clip_", "torch.clamp_",
            "torch.clamp_min_", "torch.clamp_max_", "torch.clip_"))
add("clamp in place (int64)", lambda L, x: ((x.clone() * 1).clamp_min_(1),
                                            L.clip_(x.clone(), -1, 2)),
    dtypes=("int64",), grad=False, covers=("Tensor.clamp_min_", "torch.clip_"))
add("integer ops in place", lambda L, x, y: (
    x.clone().gcd_(y), x.clone().lcm_(y), L.gcd_(x.clone(), y), L.lcm_(x.clone(), y)),
    samples=INPLACE, dtypes=INTS, grad=False,
    covers=("Tensor.gcd_", "Tensor.lcm_", "torch.gcd_", "torch.lcm_"))
add("heaviside_, nextafter_", lambda L, x, y: (x.clone().heaviside_(y), x.clone().nextafter_(y)),
    samples=INPLACE, domain=("kinks", "real"), grad=False,
    covers=("Tensor.heaviside_", "Tensor.nextafter_"))
add("fill_, zero_ functions", lambda L, x: (L.fill_(x.clone() * 1, 2.5), L.zero_(x.clone() * 1)),
    dtypes=FLOAT + ("int64",), full_only=("gradgrad",), covers=("torch.fill_", "torch.zero_"))
# (ldexp's exponent >= 0 here: PyTorch 2.13's gradient of ldexp(x, e) for a negative
# integer e is 0, from 2 ** e in integers; symgrad's is 2.0 ** e, test_torch_semantics.py)
add("integer and bool operands", lambda L, x, y: (
    x.hypot(y > 0), x.logaddexp((y * 3).long()), x.atan2(y > 0), x.arctan2((y * 3).to(L.int8)),
    x.xlogy(y > 0), L.xlogy(x, (y * 3).long()), x.ldexp((x * 2).long().abs()), x * (y > 0),
    (y > 0) * x, (y > 0) + (y * 3).to(L.int8), L.logaddexp2(x, (y * 3).long()), x.copysign(y > 0)),
    samples=BINARY, dtypes=FLOAT, gradgrad=False,
    covers=("Tensor.hypot", "Tensor.logaddexp", "Tensor.atan2", "Tensor.arctan2",
            "Tensor.xlogy", "torch.xlogy", "Tensor.ldexp", "Tensor.__mul__", "Tensor.__rmul__",
            "Tensor.__add__", "torch.logaddexp2", "Tensor.copysign"))
add("hardshrink(nan)", lambda L, x: ((x / (x - x)).hardshrink(), L.hardshrink(x / (x - x), 0.1),
                                     L.sign(x > 0), (x > 0).sgn()),
    grad=False, covers=("Tensor.hardshrink", "torch.hardshrink", "torch.sign", "Tensor.sgn"))
add("addcmul, addcdiv", lambda L, x, a, b: (
    x.addcmul(a, b), L.addcmul(x, a, b, value=0.5), x.addcdiv(a, b), L.addcdiv(x, a, b, value=-2)),
    samples=(((3, 4), (3, 4), (3, 4)), ((3, 1), (4,), ())), domain=("real", "real", "positive"),
    covers=_both("addcmul") + _both("addcdiv"))
add("addcmul (integers)", lambda L, x, a, b: (x.addcmul(a, b), L.addcmul(x, a, b, value=3)),
    samples=(((3, 4), (3, 4), (3, 4)),), dtypes=INTS, grad=False, covers=_both("addcmul"))
add("Tensor.where, type_as", lambda L, x, y: (
    x.where(y > 0, y), x.where(x > 0, 0.5), x.type_as(y > 0), (y > 0).type_as(x)),
    samples=BINARY, dtypes=FLOAT + ("int64",), covers=("Tensor.where", "Tensor.type_as"))
add("frexp", lambda L, x: (*x.frexp(), *L.frexp(x * 1000), L.frexp(x / x.abs() * 1e-310).mantissa),
    covers=_both("frexp"))
