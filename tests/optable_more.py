"""Op table records (tests/optable.py) of issue 27's ops: fmod, remainder, floor_divide,
lerp, addmm, the bitwise names, select, diagonal, the in-place index updates and unary
ops, F.cosine_similarity."""

from __future__ import annotations

from optable import FLOAT, INTS, add

BINARY = (((3, 4), (3, 4)), ((3, 1), (4,)), ((), (2, 3)))
INPLACE = (((3, 4), (3, 4)), ((3, 4), (4,)))  # (in place: the result has x's shape)
BITS = ("int64", "bool", "uint8", "int8", "int16", "int32")


def _t(L, value):
    return L.tensor(value)


# -- division: the method, the function, a Python number (integers keep their dtype) ----
for _name, _domain in (("fmod", ("real", "positive")), ("remainder", ("real", "positive"))):
    add(_name, lambda L, x, y, n=_name: (getattr(x, n)(y), getattr(L, n)(x, y),
                                         getattr(L, n)(x, 1.5), getattr(x, n)(-y)),
        samples=BINARY, domain=_domain, dtypes=FLOAT + INTS[:3],
        covers=(f"Tensor.{_name}", f"torch.{_name}"))
add("floor_divide", lambda L, x, y: (x.floor_divide(y), L.floor_divide(x, y),
                                     L.floor_divide(x, 2), x.floor_divide(-y)),
    samples=BINARY, domain=("real", "positive"), dtypes=FLOAT + INTS, grad=False,
    covers=("Tensor.floor_divide", "torch.floor_divide"))
add("lerp", lambda L, x, y, w: (x.lerp(y, 0.3), L.lerp(x, y, 0.8), L.lerp(x, y, w),
                                x.lerp(y, 1.0)),
    samples=(((3, 4), (3, 4), (3, 4)), ((3, 1), (4,), ())), domain=("real", "real", "unit"),
    covers=("Tensor.lerp", "torch.lerp"))
add("addmm", lambda L, b, m1, m2: (b.addmm(m1, m2), L.addmm(b, m1, m2, beta=0.5, alpha=2),
                                   L.addmm(b, m1, m2, beta=0)),
    samples=(((3, 2), (3, 4), (4, 2)), ((2,), (3, 4), (4, 2))),
    covers=("Tensor.addmm", "torch.addmm"))

# -- bitwise names (the operators have their records in tests/optable.py) ------------
add("bitwise functions", lambda L, x, y: (
    L.bitwise_and(x, y), x.bitwise_or(y), L.bitwise_xor(x, y), x.bitwise_and(3),
    L.bitwise_not(x), x.bitwise_not(), x.bitwise_xor(y), L.bitwise_or(x, y)),
    samples=BINARY, dtypes=BITS, grad=False,
    covers=("torch.bitwise_and", "Tensor.bitwise_and", "torch.bitwise_or", "Tensor.bitwise_or",
            "torch.bitwise_xor", "Tensor.bitwise_xor", "torch.bitwise_not", "Tensor.bitwise_not"))
for _name in ("bitwise_and_", "bitwise_or_", "bitwise_xor_", "bitwise_not_"):
    add(f"Tensor.{_name}", lambda L, x, y, n=_name: (
        getattr(x.clone(), n)() if n == "bitwise_not_" else getattr(x.clone(), n)(y)),
        samples=INPLACE, dtypes=BITS, grad=False)
add("bitwise shifts", lambda L, x, y: (
    L.bitwise_left_shift(x, y), x.bitwise_right_shift(y), x.bitwise_left_shift(2),
    L.bitwise_right_shift(x, y)),
    samples=BINARY, domain=("real", "positive"), dtypes=INTS, grad=False,
    covers=("torch.bitwise_left_shift", "Tensor.bitwise_left_shift",
            "torch.bitwise_right_shift", "Tensor.bitwise_right_shift"))
add("bitwise shifts in place", lambda L, x, y: (x.clone().bitwise_left_shift_(y),
                                                x.clone().bitwise_right_shift_(y)),
    samples=INPLACE, domain=("real", "positive"), dtypes=INTS, grad=False,
    covers=("Tensor.bitwise_left_shift_", "Tensor.bitwise_right_shift_"))

# -- views -------------------------------------------------------------------------
add("select", lambda L, x: (x.select(1, 2), L.select(x, 0, -1), x.select(-1, 0)),
    samples=(((2, 3, 4),),), dtypes=FLOAT + ("int64", "bool"),
    covers=("Tensor.select", "torch.select"))
add("diagonal", lambda L, x: (x.diagonal(), L.diagonal(x, 1), x.diagonal(-1, 2, 0),
                              L.diagonal(x, 0, -1, 1), x.diagonal(5)),
    samples=(((3, 4, 5),),), dtypes=FLOAT + ("int64",),
    covers=("Tensor.diagonal", "torch.diagonal"))
add("diagonal(2-d)", lambda L, x: (x.diagonal(), x.diagonal(-2), x.diagonal(1, 1, 0)),
    samples=(((3, 4),),), covers=())


def _diagonal_written(L, x):
    """A write through the diagonal view reaches the tensor (PyTorch's view)."""
    y = x * 1
    y.diagonal(1).mul_(3)
    z = x.detach().clone()
    z.diagonal().zero_()
    return y, z


add("diagonal written", _diagonal_written, samples=(((3, 4),),), covers=())

# -- in place on a clone: the values, and the gradient through the clone -------------
_INDEXED_INPLACE = {
    "index_add_": lambda L, x, y: x.index_add_(1, _t(L, [3, 0]), y[:, :2], alpha=2),
    "scatter_add_": lambda L, x, y: x.scatter_add_(1, _t(L, [[0, 0], [1, 3], [2, 2]]), y[:, :2]),
    "scatter_": lambda L, x, y: x.scatter_(1, _t(L, [[0, 2], [1, 3], [2, 0]]), y[:, :2]),
    "scatter_reduce_": lambda L, x, y: x.scatter_reduce_(
        1, _t(L, [[0, 0], [1, 3], [2, 2]]), y[:, :2], "amax", include_self=False),
    "index_put_": lambda L, x, y: x.index_put_((_t(L, [0, 2]), _t(L, [1, 1])), y[0, :2]),
    "index_put(accumulate)": lambda L, x, y: (
        x.index_put_((_t(L, [0, 0, 2]),), y[:3], accumulate=True),
        L.index_put(y, (_t(L, [1]), _t(L, [3])), x[0, :1] * 5)),
}
for _label, _fn in _INDEXED_INPLACE.items():
    _name = _label.partition("(")[0]
    add(_label, lambda L, x, y, fn=_fn: fn(L, x.clone() * 1.0, y),
        samples=(((3, 4), (3, 4)),),
        covers=(f"Tensor.{_name}",) + (("torch.index_put",) if "accumulate" in _label else ()),
        full_only=("gradgrad",))
add("scatter_(value)", lambda L, x: x.clone().scatter_(0, _t(L, [[2, 0, 1, 1]]), value=0.5),
    samples=(((3, 4),),), covers=("Tensor.scatter_",))
add("Tensor.index_put", lambda L, x, y: x.index_put((_t(L, [1, 2]),), y[:2]),
    samples=(((3, 4), (3, 4)),), covers=("Tensor.index_put",))
add("division in place", lambda L, x, y: (x.clone().fmod_(y), x.clone().remainder_(y),
                                          x.clone().floor_divide_(y)),
    samples=(((3, 4), (3, 4)), ((3, 4), (4,))), domain=("real", "positive"),
    dtypes=FLOAT + ("int64",), grad=False,
    covers=("Tensor.fmod_", "Tensor.remainder_", "Tensor.floor_divide_"))

#: unary in-place methods: name -> domain
_UNARY_INPLACE = {
    "sin": "real", "cos": "real", "tan": "unit", "asin": "unit", "acos": "unit",
    "atan": "real", "sinh": "real", "cosh": "real", "expm1": "real", "log1p": "positive",
    "log2": "positive", "log10": "positive", "rsqrt": "positive", "reciprocal": "positive",
    "square": "real", "sign": "real", "floor": "real", "ceil": "real", "trunc": "real",
    "round": "real", "erf": "real", "erfinv": "unit",
}
add("unary in place", lambda L, x: tuple(getattr(x.clone() * 1.0, f"{n}_")()
                                         for n in _UNARY_INPLACE if _UNARY_INPLACE[n] == "real"),
    samples=(((3, 4),),), full_only=("gradgrad",),
    covers=tuple(f"Tensor.{n}_" for n in _UNARY_INPLACE if _UNARY_INPLACE[n] == "real"))
add("unary in place (unit)", lambda L, x: tuple(
    getattr(x.clone() * 1.0, f"{n}_")() for n in _UNARY_INPLACE if _UNARY_INPLACE[n] == "unit"),
    samples=(((3, 4),),), domain="unit", full_only=("gradgrad",),
    covers=tuple(f"Tensor.{n}_" for n in _UNARY_INPLACE if _UNARY_INPLACE[n] == "unit"))
add("unary in place (positive)", lambda L, x: tuple(
    getattr(x.clone() * 1.0, f"{n}_")() for n in _UNARY_INPLACE
    if _UNARY_INPLACE[n] == "positive"),
    samples=(((3, 4),),), domain="positive", full_only=("gradgrad",),
    covers=tuple(f"Tensor.{n}_" for n in _UNARY_INPLACE if _UNARY_INPLACE[n] == "positive"))

add("F.cosine_similarity", lambda L, x, y: (L.nn.functional.cosine_similarity(x, y),
                                            L.nn.functional.cosine_similarity(x, y, dim=0),
                                            L.nn.functional.cosine_similarity(x, y, -1, 0.5)),
    samples=(((3, 4), (3, 4)), ((3, 4), (1, 4))))
