"""The op table of the Tensor API, in the spirit of PyTorch's OpInfo: one record per op.

A record names the public op(s) it covers, a call written once as a function of the
module (``lambda L, x, y: L.atan2(x, y)``: ``L`` is ``symgrad`` or real ``torch``;
``ref`` when PyTorch spells it differently), its sample inputs (shapes per input, with
broadcasting and 0-d ones; the input domain), the dtypes it takes, whether its
gradient and its double backward (``create_graph``) are compared, and tolerances.
tests/test_optable.py runs every record against real PyTorch and checks that every
public op is here or in ``EXCLUDED`` with a reason (tests/optable_exclusions.py).
Records that need structured inputs (convolutions, linalg, indices) are in
tests/optable_nn.py and tests/optable_shapes.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

FLOAT = ("float64", "float32")
INTS = ("int64", "int32", "int16", "int8", "uint8")
ALL = FLOAT + INTS + ("bool",)


@dataclass(frozen=True, eq=False)
class OpInfo:
    """One op: ``op(L, *inputs)`` with ``L`` symgrad or torch; ``ref`` for torch if it differs."""

    name: str
    op: Callable[..., Any]
    samples: tuple[tuple[tuple[int, ...], ...], ...] = (((3, 4),), ((),))
    domain: str | tuple[str, ...] = "real"  # per input: see ``make_input``
    dtypes: tuple[str, ...] = FLOAT  # the first is the one whose gradients are compared
    grad: bool = True
    gradgrad: bool = True  # double backward where PyTorch has it
    rtol: float = 1e-10
    covers: tuple[str, ...] | None = None  # the public names it exercises (None: ``name``)
    ref: Callable[..., Any] | None = None
    #: disagreements with PyTorch found and not yet fixed: "check:dtype" or "dtype" -> the
    #: bug; the test requires them to still fail (a fix must remove them)
    known: dict[str, str] = field(default_factory=dict)
    #: checks run with SYMGRAD_FULL=1 only (CI time), e.g. ("gradgrad",) where another
    #: record checks the same double backward in CI
    full_only: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.name

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name,) if self.covers is None else self.covers

    def domains(self, n: int) -> tuple[str, ...]:
        return (self.domain,) * n if isinstance(self.domain, str) else self.domain


def make_input(shape: tuple[int, ...], domain: str, dtype: str, rng: np.random.Generator):
    """A numpy array of ``shape`` in ``domain`` (values away from an op's kinks and poles),
    in ``dtype``."""
    if domain == "index":  # int64 indices into a dim of size 3
        return rng.integers(0, 3, shape)
    if domain == "bool" or dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype in INTS:
        low = 0 if dtype == "uint8" or domain in ("positive", "prob", "unit", "exponent") else -5
        return rng.integers(low + (domain == "positive"), 6, shape).astype(dtype)
    if domain == "real":  # distinct values: no ties in max, sort, cummax
        n = int(np.prod(shape))
        values = (rng.permutation(n) + rng.uniform(0.1, 0.9, n)) * (3.0 / max(n, 1)) - 1.4
        a = values.reshape(shape)
    elif domain == "positive":
        a = rng.uniform(0.5, 2.0, shape)
    elif domain == "unit":
        a = rng.uniform(-0.9, 0.9, shape)
    elif domain == "prob":
        a = rng.uniform(0.05, 0.95, shape)
    elif domain in ("matrix", "spd"):  # well conditioned; symmetric positive definite
        a = rng.standard_normal(shape)
        if domain == "spd":
            a = a @ np.swapaxes(a, -1, -2)
        if len(shape) >= 2 and shape[-1] == shape[-2]:
            a = a + shape[-1] * np.eye(shape[-1])
    elif domain in ("wide", "kinks"):  # both sides of activation breakpoints (+-3, +-1, 6)
        a = rng.uniform(-7.0, 7.0, shape)
        if domain == "kinks":  # and on them: PyTorch's one-sided gradients there
            a.flat[:6] = [-3.0, 3.0, 0.0, -1.0, 1.0, 6.0][:a.size]
    elif domain == "exponent":
        a = rng.uniform(-2.0, 2.0, shape)
    elif domain == "normal3":
        a = 3 * rng.standard_normal(shape)
    else:
        raise ValueError(domain)
    return np.asarray(a, dtype=dtype)


RECORDS: list[OpInfo] = []


def add(name: str, op: Callable[..., Any], **kw: Any) -> None:
    RECORDS.append(OpInfo(name, op, **kw))


def known(name: str, reason: str, *keys: str) -> None:
    """Record ``name`` disagrees with PyTorch in ``keys``: "dtype", "check:dtype" or
    "dtype:sample" (check ``values`` or ``gradgrad``; sample an index of ``samples``)."""
    (r,) = [r for r in RECORDS if r.name == name]
    r.known.update(dict.fromkeys(keys, reason))


UNARY = (((3, 4),), ((),))
BINARY = (((3, 4), (3, 4)), ((3, 1), (4,)), ((), (2, 3)))
MATRIX = (((3, 4),),)

# -- elementwise: the method and the function in one call ----------------------------
#: name -> (domain, dtypes, double backward)
_UNARY = {
    "abs": ("real", FLOAT + INTS[:2], True), "neg": ("real", FLOAT + INTS, True),
    "exp": ("real", FLOAT + ("int64",), True), "expm1": ("real", FLOAT, True),
    "log": ("positive", FLOAT + ("int32",), True), "log1p": ("positive", FLOAT, True),
    "log2": ("positive", FLOAT, True), "log10": ("positive", FLOAT, True),
    "sqrt": ("positive", FLOAT + ("int64",), True), "rsqrt": ("positive", FLOAT, True),
    "reciprocal": ("positive", FLOAT, True), "square": ("real", FLOAT + INTS[:2], True),
    "sin": ("real", FLOAT + ("int16",), True), "cos": ("real", FLOAT, True),
    "tan": ("unit", FLOAT, True), "asin": ("unit", FLOAT, True), "acos": ("unit", FLOAT, True),
    "atan": ("real", FLOAT, True), "sinh": ("real", FLOAT, True), "cosh": ("real", FLOAT, True),
    "tanh": ("real", FLOAT, True), "sigmoid": ("real", FLOAT + ("uint8",), True),
    "relu": ("real", FLOAT + ("int64",), True), "erf": ("real", FLOAT, True),
    "erfinv": ("unit", FLOAT, True), "sign": ("real", FLOAT + INTS[:2], True),
    "floor": ("real", FLOAT + ("int64",), True), "ceil": ("real", FLOAT + ("int32",), True),
    "round": ("real", FLOAT + ("int64",), True), "trunc": ("real", FLOAT + ("int8",), True),
    "isnan": ("real", FLOAT + ("int64",), False), "isfinite": ("real", FLOAT + ("int64",), False),
    "logical_not": ("real", ALL, False),
}
for _name, (_domain, _dtypes, _gg) in _UNARY.items():
    add(_name, lambda L, x, n=_name: (getattr(x, n)(), getattr(L, n)(x)), domain=_domain,
        dtypes=_dtypes, gradgrad=_gg, covers=(f"Tensor.{_name}", f"torch.{_name}"))

_BINARY = {  # name -> (domain of x, of y; dtypes; gradgrad)
    "add": (("real", "real"), FLOAT + INTS, True), "sub": (("real", "real"), FLOAT + INTS, True),
    "mul": (("real", "real"), FLOAT + INTS + ("bool",), True),
    "div": (("real", "positive"), FLOAT + ("int64", "uint8"), True),
    "pow": (("positive", "exponent"), FLOAT + ("int64",), True),
    "atan2": (("real", "real"), FLOAT, True),
    "maximum": (("real", "real"), FLOAT + ("int32",), True),
    "minimum": (("real", "real"), FLOAT + ("int8",), True),
}
for _name, (_domain, _dtypes, _gg) in _BINARY.items():
    add(_name, lambda L, x, y, n=_name: (getattr(x, n)(y), getattr(L, n)(x, y)),
        samples=BINARY, domain=_domain, dtypes=_dtypes, gradgrad=_gg,
        covers=(f"Tensor.{_name}", f"torch.{_name}"))
add("add(alpha)", lambda L, x, y: (x.add(y, alpha=2), L.sub(x, y, alpha=0.5), x.sub(y, alpha=3)),
    samples=BINARY, covers=("Tensor.add", "torch.sub", "Tensor.sub"))
add("true_divide", lambda L, x, y: (x.true_divide(y), L.divide(x, y), L.true_divide(x, y)),
    samples=BINARY,
    domain=("real", "positive"), dtypes=FLOAT + ("int32",),
    covers=("Tensor.true_divide", "torch.divide", "torch.true_divide"))
add("div(rounding_mode)", lambda L, x, y: (x.div(y, rounding_mode="floor"),
                                           L.div(x, y, rounding_mode="trunc")),
    samples=BINARY, domain=("real", "positive"), dtypes=FLOAT + INTS, grad=False,
    covers=("Tensor.div", "torch.div"))
add("xlogy", lambda L, x, y: L.xlogy(x, y), samples=BINARY, domain=("real", "positive"),
    covers=("torch.xlogy",))
for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    add(_name, lambda L, x, y, n=_name: getattr(x, n)(y), samples=BINARY, dtypes=ALL,
        grad=False, covers=(f"Tensor.{_name}",))
add("comparison operators", lambda L, x, y: (x == y, x != y, x < y, x <= y, x > y, x >= y),
    samples=BINARY, dtypes=FLOAT + ("int64",), grad=False,
    covers=("Tensor.__eq__", "Tensor.__ne__", "Tensor.__lt__", "Tensor.__le__",
            "Tensor.__gt__", "Tensor.__ge__"))
add("arithmetic operators", lambda L, x, y: (x + y, x - y, x * y, x / y, -x, +x, abs(x)),
    samples=BINARY, domain=("real", "positive"), dtypes=FLOAT + INTS,
    covers=("Tensor.__add__", "Tensor.__sub__", "Tensor.__mul__", "Tensor.__truediv__",
            "Tensor.__neg__", "Tensor.__pos__", "Tensor.__abs__"))
add("reflected operators", lambda L, x: (2 + x, 2.5 - x, 3 * x, 1.5 / x, 2 ** x, 0.5 ** x),
    domain="positive", dtypes=FLOAT + ("int64",),
    covers=("Tensor.__radd__", "Tensor.__rsub__", "Tensor.__rmul__", "Tensor.__rtruediv__",
            "Tensor.__rpow__"))
add("__pow__", lambda L, x, y: (x ** y, x ** 2, x ** 0.5), samples=BINARY,
    domain=("positive", "exponent"), dtypes=FLOAT + ("int64",), covers=("Tensor.__pow__",))
add("floor division and modulo", lambda L, x, y: (x // y, x % y, 7.5 // y, 7 % y),
    samples=BINARY, domain=("real", "positive"), dtypes=FLOAT + INTS, grad=False,
    covers=("Tensor.__floordiv__", "Tensor.__mod__", "Tensor.__rfloordiv__", "Tensor.__rmod__"))
add("bitwise operators", lambda L, x, y: (x & y, x | y, x ^ y, ~x, 3 & x, 5 | x, 6 ^ x),
    samples=BINARY, domain="real", dtypes=("int64", "bool", "uint8", "int8", "int16", "int32"),
    grad=False, covers=("Tensor.__and__", "Tensor.__or__", "Tensor.__xor__", "Tensor.__invert__",
            "Tensor.__rand__", "Tensor.__ror__", "Tensor.__rxor__"))
add("shift operators", lambda L, x, y: (x << y, x >> y, 1 << y, 64 >> y), samples=BINARY,
    domain=("real", "positive"), dtypes=INTS, grad=False,
    covers=("Tensor.__lshift__", "Tensor.__rshift__", "Tensor.__rlshift__",
            "Tensor.__rrshift__"))


def _bitwise_inplace(L, x, y, ops=("__iand__", "__ior__", "__ixor__")):
    """Each in-place operator on a clone of ``x``, and the clone itself (the same object)."""
    outs = []
    for op in ops:
        a = x.clone()
        b = getattr(a, op)(y)
        outs += [a, L.tensor(b is a)]
    return outs


add("bitwise in place", _bitwise_inplace, samples=(((3, 4), (3, 4)), ((3, 4), (4,))),
    domain="real", dtypes=("int64", "bool", "uint8", "int8", "int16", "int32"), grad=False,
    covers=("Tensor.__iand__", "Tensor.__ior__", "Tensor.__ixor__"))
add("shift in place", lambda L, x, y: _bitwise_inplace(L, x, y, ("__ilshift__", "__irshift__")),
    samples=(((3, 4), (3, 4)), ((3, 4), (4,))), domain=("real", "positive"), dtypes=INTS,
    grad=False, covers=("Tensor.__ilshift__", "Tensor.__irshift__"))
add("where", lambda L, x, y: (L.where(x > 0, x, y), L.where(x > 0, x, 2.0),
                              L.where(y > 0, 1.0, y)),
    samples=BINARY, dtypes=FLOAT + ("int64",), covers=("torch.where",))
add("clamp", lambda L, x: (x.clamp(-0.5, 0.5), L.clamp(x, min=0.2), x.clip(max=0.1),
                           L.clip(x, -1, 1), x.clamp_min(0.3), x.clamp_max(-0.3)),
    dtypes=FLOAT + ("int64",),
    covers=("Tensor.clamp", "torch.clamp", "Tensor.clip", "torch.clip", "Tensor.clamp_min",
            "Tensor.clamp_max"))
add("clamp(tensor)", lambda L, x, y: x.clamp(min=y, max=y + 1), samples=BINARY,
    covers=("Tensor.clamp",))
add("masked_fill", lambda L, x, y: x.masked_fill(y > 0, -2.0), samples=BINARY[:2],
    dtypes=FLOAT + ("int64",), covers=("Tensor.masked_fill",))
add("softplus", lambda L, x: L.softplus(x), ref=lambda L, x: L.nn.functional.softplus(x),
    covers=("torch.softplus",))  # PyTorch has it in torch.nn.functional only

# -- in place, on a clone (the op's values and its gradient through the clone) --------
_INPLACE = {
    "abs_": lambda x, y: x.abs_(), "neg_": lambda x, y: x.neg_(),
    "exp_": lambda x, y: x.exp_(), "log_": lambda x, y: x.abs().add_(0.5).log_(),
    "sqrt_": lambda x, y: x.abs_().sqrt_(), "relu_": lambda x, y: x.relu_(),
    "sigmoid_": lambda x, y: x.sigmoid_(), "tanh_": lambda x, y: x.tanh_(),
    "add_": lambda x, y: x.add_(y, alpha=3), "sub_": lambda x, y: x.sub_(y),
    "mul_": lambda x, y: x.mul_(y), "div_": lambda x, y: x.div_(y.abs() + 1),
    "pow_": lambda x, y: x.abs_().add_(1).pow_(y), "clamp_": lambda x, y: x.clamp_(-0.3, 0.4),
    "addcmul_": lambda x, y: x.addcmul_(y, y, value=0.5),
    "addcdiv_": lambda x, y: x.addcdiv_(y, y.abs() + 1, value=2),
    "lerp_": lambda x, y: x.lerp_(y, 0.3), "masked_fill_": lambda x, y: x.masked_fill_(y > 0, 1.5),
    "copy_": lambda x, y: x.copy_(y * 2), "fill_": lambda x, y: x.fill_(2.5) * y,
    "zero_": lambda x, y: x.zero_() + y,
    "__iadd__": lambda x, y: x.__iadd__(y), "__isub__": lambda x, y: x.__isub__(y),
    "__imul__": lambda x, y: x.__imul__(y), "__itruediv__": lambda x, y: x.__itruediv__(y + 3),
    "__imod__": lambda x, y: x.__imod__(y.abs() + 0.5),
    "__ipow__": lambda x, y: x.abs_().add_(1).__ipow__(y),
}
for _name, _fn in _INPLACE.items():
    add(_name, lambda L, x, y, fn=_fn: fn(x.clone() * 1.0, y),
        samples=(((3, 4), (3, 4)), ((3, 4), (4,))), covers=(f"Tensor.{_name}",),
        full_only=("gradgrad",))  # the out-of-place op's double backward: in CI

# -- activations and losses (torch.nn.functional) ------------------------------------
_ACT = {
    "gelu": {}, "gelu(tanh)": dict(approximate="tanh"), "silu": {}, "mish": {}, "selu": {},
    "celu": {}, "celu(alpha)": dict(alpha=0.5), "elu": dict(alpha=1.3), "softsign": {},
    "hardswish": {}, "hardsigmoid": {}, "logsigmoid": {}, "tanhshrink": {},
    "softshrink": dict(lambd=0.3), "hardshrink": dict(lambd=0.3), "leaky_relu": {},
    "leaky_relu(slope)": dict(negative_slope=0.2), "hardtanh": dict(min_val=-2.0, max_val=3.0),
    "relu6": {}, "relu": {}, "sigmoid": {}, "tanh": {}, "softplus": dict(beta=0.5),
    "threshold": dict(threshold=0.1, value=2.0), "normalize": {},
    "normalize(p=1)": dict(p=1.0, dim=0), "glu": {}, "softmax": dict(dim=1),
    "log_softmax": dict(dim=-1), "softmin": dict(dim=1),
}
# no double backward: piecewise linear (zero), or PyTorch has none (hardsigmoid)
_PIECEWISE_LINEAR = {"softshrink", "hardshrink", "leaky_relu", "hardtanh", "relu6", "relu",
                     "threshold"}
for _label, _kw in _ACT.items():
    _f = _label.partition("(")[0]
    add(f"F.{_label}", lambda L, x, f=_f, kw=_kw: getattr(L.nn.functional, f)(x, **kw),
        samples=(((4, 6),),),
        domain="kinks" if _f in ("hardswish", "hardsigmoid", "hardtanh", "relu6") else "wide",
        covers=(f"F.{_f}",), gradgrad=_f not in _PIECEWISE_LINEAR | {"hardsigmoid"},
        # PyTorch's hardsigmoid multiplies by the float32 constant 1/6f
        rtol=1e-7 if _f == "hardsigmoid" else 1e-10)
add("F.prelu", lambda L, x, w: L.nn.functional.prelu(x, w), samples=(((2, 3, 4), (3,)),))
add("F.linear", lambda L, x, w, b: L.nn.functional.linear(x, w, b),
    samples=(((2, 3, 4), (5, 4), (5,)), ((4,), (2, 4), (2,))))
add("F.l1_loss", lambda L, x, y: L.nn.functional.l1_loss(x, y, reduction="sum"),
    samples=BINARY[:2], gradgrad=False)
add("F.mse_loss", lambda L, x, y: (L.nn.functional.mse_loss(x, y),
                                   L.nn.functional.mse_loss(x, y, reduction="none")),
    samples=BINARY[:1])
add("F.smooth_l1_loss", lambda L, x, y: L.nn.functional.smooth_l1_loss(x, y, beta=0.5),
    samples=BINARY[:1])
add("F.binary_cross_entropy", lambda L, p, y: L.nn.functional.binary_cross_entropy(p, y),
    samples=BINARY[:1], domain="prob", grad=True)
add("F.binary_cross_entropy_with_logits",
    lambda L, x, y, w: L.nn.functional.binary_cross_entropy_with_logits(x, y, weight=w.detach(),
                                                                         pos_weight=w[0].detach()),
    samples=(((3, 4), (3, 4), (3, 4)),), domain=("real", "prob", "positive"))
