"""Reductions over axes, and the shape primitives they are the adjoints of.

Reductions (``sum``, ``mean``, ``prod``, ``max``, ``min``) take sorted, unique,
non-negative ``axes`` (keepdims is a reshape); ``count`` and
``extremum_weights`` are the two values their gradients need. ``broadcast_to``,
``reshape`` and ``transpose`` move elements and compute nothing (their numpy
implementation also works on arrays of SymPy expressions). The two groups live
together because each is the other's adjoint: the VJP of a sum broadcasts, the
VJP of a broadcast sums (:func:`unbroadcast`).

    >>> import numpy as np
    >>> unbroadcast(np.ones((2, 3)), (1, 3))
    array([[2., 2., 2.]])
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.errors import ShapeError
from ..core.ir import FLOAT, Aval, Eqn, Var
from ..core.rewrite import Producer, Rewrite, as_prim, made_by
from ..core.tracing import apply, shape_of
from .complex import cabs
from .elementwise import absolute, sign, where
from .registry import broadcast_shapes, register, require

# ---------------------------------------------------------------------------
# reductions over ``axes`` (sorted, non-negative, unique; keepdims is a reshape)


def _reduction_rule(name: str, identity: bool) -> Callable:
    def rule(x: Aval, *, axes: tuple[int, ...]) -> Aval:
        require(name, (x,), FLOAT)
        if tuple(sorted(set(axes))) != tuple(axes) or any(not 0 <= a < x.ndim for a in axes):
            raise ShapeError(f"{name}: axes {axes} are not sorted, unique axes of {x}")
        if not identity and any(x.shape[a] == 0 for a in axes):
            raise ShapeError(f"{name} of an empty axis of {x} is undefined (it has no identity); "
                             "reduce over non-empty axes")
        return Aval(tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype)
    return rule


def _reduction_simplify(e: Eqn, producer: Producer) -> Rewrite:
    return e.inputs[0] if not e.params["axes"] else None  # sum(x, axes=()) -> x


def _sum(x: Any, axes: tuple[int, ...]) -> Any:
    """``np.sum(x, axis=axes)``, bit for bit. Over trailing axes of 2 to 7 elements in all
    (a pooling window, a max pool's picked element), as that many slices added in order:
    numpy's reduction loop over so short an inner axis costs ten times as much, and below 8
    elements it adds them in that order too (it sums 8 and more pairwise; several axes
    only when C-contiguous, which numpy reads as one)."""
    x = np.asarray(x)
    k = len(axes)
    if k and x.dtype.kind == "f" and x.size >= 4096 and x.ndim > k and \
            axes == tuple(range(x.ndim - k, x.ndim)) and (k == 1 or x.flags.c_contiguous):
        m = math.prod(x.shape[x.ndim - k:])
        if 2 <= m <= 7:
            flat = x.reshape(*x.shape[:x.ndim - k], m)
            total = flat[..., 0] + flat[..., 1]
            for j in range(2, m):
                total += flat[..., j]
            return total
    return np.sum(x, axis=axes)


sum_p = register(
    name="sum", complex=True, kind="reduction", shape_rule=_reduction_rule("sum", True),
    impl=_sum,
    vjp=lambda g, ans, x, axes: (expand(g, x.shape, axes),),
    sympy=lambda sp, xs: sp.Add(*xs), numpy=np.sum,
    simplify=_reduction_simplify, linear=True, accumulate="sum")

def _mean(x: np.ndarray, axes: tuple[int, ...]) -> Any:
    """``np.mean(x, axis=axes)``, bit for bit (the sum, then numpy's division by the count
    as an ``intp``), without its Python layers: 2 µs instead of 8 on 1000 values, which an
    eager Tensor's ``.mean()`` pays at every step."""
    if type(x) is not np.ndarray:
        x = np.asarray(x)
    kind = x.dtype
    if kind.kind != "f" or kind.itemsize == 2:  # (float16: numpy sums it in float32)
        return np.mean(x, axis=axes)
    return mean_of(np.add.reduce(x, axis=axes), x, axes)


def mean_of(total: Any, x: np.ndarray, axes: tuple[int, ...]) -> Any:
    """``np.mean(x, axis=axes)`` from ``total``, ``x``'s sum over ``axes`` (a fresh array
    or a numpy scalar; float32 or float64): numpy's division by the count as an ``intp``,
    in place."""
    n = x.size if len(axes) == x.ndim else math.prod([x.shape[a] for a in axes])
    if type(total) is not np.ndarray and total.dtype is _F64:
        return total / n  # (float64 by a Python int, exact in float64: the same division)
    count = np.intp(n)
    if type(total) is np.ndarray:
        return np.true_divide(total, count, out=total, casting="unsafe")
    quotient = total / count  # (float64: a float32 sum rounded back after, as np.mean)
    return quotient if quotient.dtype is total.dtype else total.dtype.type(quotient)


_F64 = np.dtype(np.float64)


mean_p = register(
    name="mean", complex=True, kind="reduction", shape_rule=_reduction_rule("mean", True),
    impl=_mean,
    vjp=lambda g, ans, x, axes: (expand(g / count(x, axes), x.shape, axes),),
    sympy=lambda sp, xs: sp.Add(*xs) / len(xs), numpy=np.mean,
    simplify=_reduction_simplify, linear=True, accumulate="mean")


def _count_rule(x: Aval, *, axes: tuple[int, ...]) -> Aval:
    if tuple(sorted(set(axes))) != tuple(axes) or any(not 0 <= a < x.ndim for a in axes):
        raise ShapeError(f"count: axes {axes} are not sorted, unique axes of {x}")
    return Aval(())


def _count_simplify(e: Eqn, producer: Producer) -> Rewrite:
    # count(op(x, ...)) -> count(x) for elementwise op and x of the same shape: the
    # count needs only a shape, and op may then be dead (a mean's gradient needs
    # the mean's length, not its operand)
    inner = producer(e.inputs[0])
    if inner is None or inner.prim.kind != "elementwise":
        return None
    for a in inner.inputs:
        if isinstance(a, Var) and a.shape == e.inputs[0].shape:
            return as_prim(e, count_p, a, **e.params)
    return None


# How many elements a reduction over ``axes`` of x combines, as a float: the
# ``n`` of a mean's gradient ``g / n``. A value computed in the kernel from x's
# shape, never a literal, so that one kernel serves every length.
count_p = register(
    name="count", kind="array", complex=True, shape_rule=_count_rule,  # (reads shapes only)
    impl=lambda x, axes: np.float64(math.prod(np.shape(x)[a] for a in axes)),
    vjp=lambda g, ans, x, axes: (None,),
    sympy=lambda sp, x, axes: np.array(sp.Integer(math.prod(x.shape[a] for a in axes)),
                                       dtype=object),
    simplify=_count_simplify,
    # the same count for every example: no batch axis
    batch=lambda b, args, flags, *, axes: (
        b.bind(count_p, args, axes=tuple(a + 1 for a in axes)), False))


def _prod_vjp(g, ans, x, axes):
    # d prod / d x_i is the product of the other elements. For a regular x_i
    # (finite, nonzero) that is prod / x_i. For a special one (0 or +-inf),
    # dividing would give 0/0 or inf/inf, so it is the product of the regular
    # elements times that of the other special ones: 1 if there are none,
    # else 0 (zeros), +-inf (infinities, with their signs) or nan (both).
    def back(v):
        return expand(v, x.shape, axes)

    if x.dtype.kind == "c":  # the zeros by their modulus; no signed infinities
        zero = where(cabs(x) == 0.0, 1.0, 0.0)
        other_zeros = back(reduce(sum_p, zero, axes)) - zero
        factor = where(other_zeros > 0.0, _zeros_product(x, zero, other_zeros, axes), 1.0)
        regular = back(reduce(prod_p, where(zero > 0.0, 1.0, x), axes))
        return (back(g) * where(zero > 0.0, regular * factor, back(ans) / x),)
    zero = where(x == 0.0, 1.0, 0.0)
    inf = where(absolute(x) == np.inf, 1.0, 0.0)
    special = zero + inf > 0.0
    inf_sign = where(inf > 0.0, sign(x), 1.0)
    other_zeros = back(reduce(sum_p, zero, axes)) - zero
    other_infs = back(reduce(sum_p, inf, axes)) - inf
    other_signs = back(reduce(prod_p, inf_sign, axes)) * inf_sign
    factor = where(other_zeros > 0.0, where(other_infs > 0.0, np.nan, _zeros_product(
                       x, zero, other_zeros, axes)),
                   where(other_infs > 0.0, other_signs * np.inf, 1.0))
    regular = back(reduce(prod_p, where(special, 1.0, x), axes))
    others = where(special, regular * factor, back(ans) / x)
    return (back(g) * others,)


def _zeros_product(x, zero, other_zeros, axes):
    """The product of the other zeros of a group, 0, written so that its derivatives
    are the product's: with one other zero x_k it is x_k (derivative 1 in x_k), with
    two x_k x_l (from the sums of the zeros and of their squares), so that the second
    and third derivatives of prod are right where x has several zeros. With three or
    more the product's derivatives up to the second are 0 at the point: the constant 0
    (a fourth derivative of prod there would be lost)."""
    z = where(zero > 0.0, x, 0.0)

    def others(v):
        return expand(reduce(sum_p, v, axes), x.shape, axes) - v

    s1, s2 = others(z), others(z * z)
    return where(other_zeros == 1.0, s1, where(other_zeros == 2.0, 0.5 * (s1 * s1 - s2), 0.0))


prod_p = register(
    name="prod", complex=True, kind="reduction", shape_rule=_reduction_rule("prod", True),
    impl=lambda x, axes: np.prod(x, axis=axes),
    vjp=_prod_vjp, sympy=lambda sp, xs: sp.Mul(*xs), numpy=np.prod,
    simplify=_reduction_simplify)


def _extremum_vjp(largest: bool) -> Callable:
    # k tied extrema share the cotangent: 1/k each (the extremum_ties convention).
    # The weights come from extremum_weights(x), which symgrad.numpy_api's max records
    # in the forward pass beside the value; the VJP asks for the same equation, which
    # CSE merges into the forward one, so a gradient kernel selects the extrema
    # once, in its forward section, and a jit kernel (no VJP) not at all. The
    # old rule compared x with the broadcast output in the backward pass; that
    # gave k = 0 (a cotangent divided by 0) whenever the output was not
    # bit-identical to one of the inputs it came from.
    def vjp(g, ans, x, axes):
        return (expand(g, x.shape, axes) * extremum_weights(x, axes, largest),)
    return vjp


# ``v != v`` keeps a NaN once it is in the accumulator, as numpy's max does
max_p = register(
    name="max", kind="reduction", shape_rule=_reduction_rule("max", False),
    impl=lambda x, axes: np.max(x, axis=axes),
    vjp=_extremum_vjp(largest=True), sympy=lambda sp, xs: sp.Max(*xs), numpy=np.max,
    simplify=_reduction_simplify)

min_p = register(
    name="min", kind="reduction", shape_rule=_reduction_rule("min", False),
    impl=lambda x, axes: np.min(x, axis=axes),
    vjp=_extremum_vjp(largest=False), sympy=lambda sp, xs: sp.Min(*xs), numpy=np.min,
    simplify=_reduction_simplify)


def _extremum_weights_rule(x: Aval, *, axes: tuple[int, ...], largest: bool) -> Aval:
    _reduction_rule("extremum_weights", False)(x, axes=axes)
    return Aval(x.shape, x.dtype)


def _extremum_weights_impl(x, axes, largest):
    x = np.asarray(x, dtype=float)
    best = (np.max if largest else np.min)(x, axis=axes, keepdims=True)
    hit = x == best
    w = np.where(hit, 1.0 / np.sum(hit, axis=axes, keepdims=True), 0.0)
    return np.where(np.isnan(best), np.nan, w)[()]


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
    name="extremum_weights", kind="array", shape_rule=_extremum_weights_rule,
    impl=_extremum_weights_impl,
    vjp=lambda g, ans, x, axes, largest: (None,), sympy=_extremum_weights_sympy,
    batch=lambda b, args, flags, *, axes, largest: (b.bind(
        extremum_weights_p, args, axes=tuple(a + 1 for a in axes), largest=largest), True))

# ---------------------------------------------------------------------------
# structural: these move elements and compute nothing, so their numpy
# implementation also works on arrays of SymPy expressions


def _broadcast_to_rule(x: Aval, *, shape: tuple[int, ...]) -> Aval:
    if broadcast_shapes("broadcast_to", x, Aval(shape)) != tuple(shape):
        raise ShapeError(f"broadcast_to: {x} cannot be broadcast to shape {shape}")
    return Aval(tuple(shape), x.dtype, weak=x.weak)  # a literal broadcast stays weak


def _broadcast_to_simplify(e: Eqn, producer: Producer) -> Rewrite:
    (x,) = e.inputs
    if x.shape == e.out.shape:
        return x  # broadcast_to(x, x.shape) -> x
    inner = made_by(producer, x, reshape_p)
    if inner is not None and not inner.inputs[0].shape:
        return as_prim(e, broadcast_to_p, inner.inputs[0], **e.params)  # of a reshaped scalar
    return None


broadcast_to_p = register(
    name="broadcast_to", complex=True, kind="structural", shape_rule=_broadcast_to_rule,
    impl=lambda x, shape: np.broadcast_to(x, shape),
    vjp=lambda g, ans, x, shape: (unbroadcast(g, x.shape),),
    sympy=lambda sp, x, shape: np.broadcast_to(x, shape), numpy=np.broadcast_to,
    simplify=_broadcast_to_simplify, view=True, linear=True,
    batch=lambda b, args, flags, *, shape: (
        b.broadcast_to(b.aligned(args[0], True, len(shape)), (b.size, *shape)), True))


def _reshape_rule(x: Aval, *, shape: tuple[int, ...]) -> Aval:
    if any(d < 0 for d in shape) or math.prod(shape) != x.size:
        raise ShapeError(f"reshape: cannot reshape {x} ({x.size} elements) into shape {shape}")
    return Aval(tuple(shape), x.dtype)


def _reshape_simplify(e: Eqn, producer: Producer) -> Rewrite:
    (x,) = e.inputs
    if x.shape == e.out.shape:
        return x  # reshape(x, x.shape) -> x
    inner = made_by(producer, x, reshape_p)
    if inner is not None:  # reshape(reshape(x)) -> reshape(x)
        return as_prim(e, reshape_p, inner.inputs[0], **e.params)
    return None


reshape_p = register(
    name="reshape", complex=True, kind="structural", shape_rule=_reshape_rule,
    impl=lambda x, shape: np.reshape(x, shape),
    vjp=lambda g, ans, x, shape: (reshape(g, x.shape),),
    sympy=lambda sp, x, shape: np.reshape(x, shape), numpy=np.reshape,
    simplify=_reshape_simplify, view=True, linear=True,
    batch=lambda b, args, flags, *, shape: (b.reshape(args[0], (b.size, *shape)), True))


def _transpose_rule(x: Aval, *, perm: tuple[int, ...]) -> Aval:
    if sorted(perm) != list(range(x.ndim)):
        raise ShapeError(f"transpose: axes {perm} are not a permutation of the axes of {x}")
    return Aval(tuple(x.shape[p] for p in perm), x.dtype)


def _transpose_simplify(e: Eqn, producer: Producer) -> Rewrite:
    inner = made_by(producer, e.inputs[0], transpose_p)
    if inner is None:
        return None
    perm = tuple(inner.params["perm"][p] for p in e.params["perm"])
    if perm == tuple(range(len(perm))):
        return inner.inputs[0]  # transpose(transpose(x, p), inverse(p)) -> x
    return as_prim(e, transpose_p, inner.inputs[0], perm=perm)  # two transposes -> one


transpose_p = register(
    name="transpose", complex=True, kind="structural", shape_rule=_transpose_rule,
    impl=lambda x, perm: np.transpose(x, perm),
    vjp=lambda g, ans, x, perm: (transpose(g, tuple(int(i) for i in np.argsort(perm))),),
    sympy=lambda sp, x, perm: np.transpose(x, perm), numpy=np.transpose,
    simplify=_transpose_simplify, view=True, linear=True,
    batch=lambda b, args, flags, *, perm: (
        b.transpose(args[0], (0, *(p + 1 for p in perm))), True))

# ---------------------------------------------------------------------------
# recording helpers. They record even on constants while a trace is recording
# (the seed 1.0 of a scalar output broadcast to a shape stays an equation, not
# an array constant), and leave a value alone where nothing would change.


def reshape(x: Any, shape: tuple[int, ...]) -> Any:
    """``x`` with ``shape`` (the same number of elements, C order)."""
    shape = tuple(shape)
    return x if shape_of(x) == shape else apply(reshape_p, x, shape=shape)


def broadcast_to(x: Any, shape: tuple[int, ...]) -> Any:
    """``x`` broadcast to ``shape`` (numpy's rules)."""
    shape = tuple(shape)
    return x if shape_of(x) == shape else apply(broadcast_to_p, x, shape=shape)


def transpose(x: Any, perm: tuple[int, ...]) -> Any:
    """``x`` with its axes permuted by ``perm``."""
    perm = tuple(perm)
    return x if perm == tuple(range(len(perm))) else apply(transpose_p, x, perm=perm)


def reduce(prim: Any, x: Any, axes: tuple[int, ...]) -> Any:
    """The reduction ``prim`` (sum_p, prod_p, ...) of ``x`` over sorted ``axes``."""
    return apply(prim, x, axes=tuple(axes))


def count(x: Any, axes: tuple[int, ...]) -> Any:
    """How many elements of ``x`` a reduction over ``axes`` combines, as a float value
    of the program (not a literal), so that kernels do not depend on the length."""
    return apply(count_p, x, axes=tuple(axes))


def extremum_weights(x: Any, axes: tuple[int, ...], largest: bool) -> Any:
    """The share of a max (``largest``) or min reduction's cotangent each element of
    ``x`` gets: 1/k for each of k tied extrema, 0 for the others."""
    return apply(extremum_weights_p, x, axes=tuple(axes), largest=largest)


def expand(g: Any, shape: tuple[int, ...], axes: tuple[int, ...]) -> Any:
    """A reduction's cotangent broadcast back over the reduced ``axes``."""
    kept = tuple(1 if i in axes else d for i, d in enumerate(shape))
    return broadcast_to(reshape(g, kept), shape)


def unbroadcast(g: Any, shape: tuple[int, ...]) -> Any:
    """Sum ``g`` over the axes numpy broadcasting added to reach ``shape``.

    The adjoint of broadcasting: a value used at shape ``g.shape`` receives the
    sum of the cotangents of all the places it was copied to.
    """
    gshape = shape_of(g)
    shape = tuple(shape)
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    if lead < 0 or any(d != 1 and d != gd for d, gd in zip(shape, gshape[lead:])):
        return broadcast_to(g, shape)  # a scalar cotangent of a value that was not broadcast
    axes = tuple(range(lead)) + tuple(
        lead + i for i, d in enumerate(shape) if d == 1 and gshape[lead + i] != 1)
    return reshape(reduce(sum_p, g, axes), shape)
