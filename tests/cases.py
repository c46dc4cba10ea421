"""The per-primitive test table: every registry primitive, its domain and shapes.

Each :class:`Case` is a small numpy function exercising one primitive (and
the few it needs, such as a comparison for ``where``), the shapes of its
arguments, where to sample them (``domains``: a uniform sampler restricted to
the primitive's domain, or small integers for ties), the tolerances of its
comparison with SymPy, the memory layout of its arguments and the backends it
runs on. ``test_primitives.py`` checks every case against SymPy and plain
numpy; ``test_registry.py`` fails if a registry primitive has no case here.

Shapes: every primitive has 0-d, 1-d and 2-d cases, broadcast pairs where it
takes several operands, cases with size-1 and empty dimensions, and cases
whose arguments are non-contiguous views (``layout``). Budget: a Numba kernel
costs about a second to compile and the generated code depends only on the
rank and the graph, not on the sizes, so size-1/empty variants run on the
numpy backend only, except where they change the generated code (a broadcast
pair's unbroadcasting sums, a reduction's loops, a structural op's shapes).
Non-contiguous variants run on both backends: the kernel takes a contiguous
copy, so they reuse the kernel of the contiguous case of the same shape.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from oracle import ATOL, RTOL, rng_for

Shape = tuple[int, ...]
BACKENDS = ("numba", "numpy")
LAYOUTS = ("C", "F", "strided")


def with_layout(a: np.ndarray, layout: str) -> np.ndarray:
    """``a``'s values in the given memory layout: C order, Fortran order (a transposed
    view), or a strided view of every other element of a larger array."""
    a = np.asarray(a, dtype=float)
    if layout == "C" or a.ndim == 0:
        return a
    if layout == "F":
        return np.asfortranarray(a)
    if layout == "strided":
        big = np.full(a.shape[:-1] + (2 * a.shape[-1],), np.nan)
        view = big[..., ::2]
        view[...] = a
        return view
    raise ValueError(f"unknown layout {layout!r}; one of {LAYOUTS}")


@dataclass(frozen=True)
class Case:
    name: str
    prims: tuple[str, ...]          # the registry primitives this case exercises
    fn: Callable
    shapes: tuple[Shape, ...]
    domains: tuple[tuple[float, float], ...]
    discrete: bool = False          # sample small integers (ties for ==, !=, max)
    fixed: tuple[Any, ...] | None = field(default=None, compare=False)
    rtol: float = RTOL              # tolerances against SymPy's 50-digit answer
    atol: float = ATOL
    layout: str = "C"               # memory layout of array arguments: LAYOUTS
    backends: tuple[str, ...] = BACKENDS
    oracle: str = "sympy"           # or "fd": central differences, where SymPy has no form
    orders: int = 2                 # 1: first derivatives only (a callback's vjp has none)

    def args(self) -> list[Any]:
        if self.fixed is not None:
            return [with_layout(np.array(a, dtype=float), self.layout) for a in self.fixed]
        rng = rng_for(self.name)
        if self.discrete:
            values = [rng.integers(-1, 3, s).astype(float) if s else float(rng.integers(-1, 3))
                      for s in self.shapes]
        else:
            values = [rng.uniform(lo, hi, s) for s, (lo, hi) in zip(self.shapes, self.domains)]
        return [with_layout(v, self.layout) if np.ndim(v) else v for v in values]

    @property
    def smooth(self) -> bool:
        """No argument sits on a kink or tie on purpose (finite differences apply); a
        float32 rounding inside (``convert``) is a staircase at the scale of 1e-7, where
        finite differences and exact linearity of the VJP do not apply."""
        return not self.discrete and self.fixed is None and "convert" not in self.prims

    def __str__(self) -> str:
        return self.name


def _shape_id(*shapes: Shape) -> str:
    return "_".join("x".join(map(str, s)) or "scalar" for s in shapes)


CASES: list[Case] = []

UNARY = [
    ("neg", np.negative, (-2, 2)), ("exp", np.exp, (-2, 2)), ("log", np.log, (0.1, 3)),
    ("log1p", np.log1p, (-0.9, 2)), ("expm1", np.expm1, (-2, 2)), ("sqrt", np.sqrt, (0.1, 3)),
    ("sin", np.sin, (-3, 3)), ("cos", np.cos, (-3, 3)), ("tan", np.tan, (-1.2, 1.2)),
    ("tanh", np.tanh, (-2, 2)), ("sinh", np.sinh, (-2, 2)), ("cosh", np.cosh, (-2, 2)),
    ("arcsin", np.arcsin, (-0.95, 0.95)), ("arccos", np.arccos, (-0.95, 0.95)),
    ("arctan", np.arctan, (-3, 3)), ("abs", np.absolute, (-2, 2)), ("sign", np.sign, (-2, 2)),
    ("square", np.square, (-2, 2)), ("reciprocal", np.reciprocal, (0.2, 2)),
    # issue 18: numpy's other elementwise functions
    ("log2", np.log2, (0.1, 3)), ("log10", np.log10, (0.1, 3)), ("exp2", np.exp2, (-2, 2)),
    ("cbrt", np.cbrt, (-2, 2)), ("arcsinh", np.arcsinh, (-3, 3)),
    ("arccosh", np.arccosh, (1.1, 4)), ("arctanh", np.arctanh, (-0.95, 0.95)),
    ("sinc", np.sinc, (-2, 2)),
]
NUMPY_ONLY = ("numpy",)
for prim, ufunc, domain in UNARY:
    for shape in [(), (3,), (2, 3)]:
        CASES.append(Case(f"{prim}-{_shape_id(shape)}", (prim,),
                          lambda x, u=ufunc: u(x), (shape,), (domain,)))
    # size-1 and empty dims: the same kernel text as (3,) and (2, 3) up to its header
    for shape in [(1,), (0,), (1, 3), (2, 0)]:
        CASES.append(Case(f"{prim}-{_shape_id(shape)}", (prim,), lambda x, u=ufunc: u(x),
                          (shape,), (domain,), backends=NUMPY_ONLY))
    for layout in ["F", "strided"]:
        CASES.append(Case(f"{prim}-2x3-{layout}", (prim,), lambda x, u=ufunc: u(x),
                          ((2, 3),), (domain,), layout=layout))


BINARY = [
    ("add", np.add, (-2, 2), (-2, 2)), ("sub", np.subtract, (-2, 2), (-2, 2)),
    ("mul", np.multiply, (-2, 2), (-2, 2)), ("div", np.divide, (-2, 2), (0.5, 2)),
    ("pow", np.power, (0.5, 2), (-2, 2)), ("maximum", np.maximum, (-2, 2), (-2, 2)),
    ("minimum", np.minimum, (-2, 2), (-2, 2)),
    ("remainder", np.remainder, (-3, 3), (0.4, 2)),
]
BINARY_SHAPES = [((), ()), ((3,), (3,)), ((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)),
                 ((), (2, 3)), ((3,), ())]
# size-1 and empty dims: broadcasting a size-1 dim changes the adjoint (a sum)
BINARY_EDGE_SHAPES = [((1,), (3,)), ((1, 1), (2, 3)), ((0,), (0,)), ((2, 0), (1,)),
                      ((0, 3), (3,))]
for prim, ufunc, dx, dy in BINARY:
    for sx, sy in BINARY_SHAPES + BINARY_EDGE_SHAPES:
        CASES.append(Case(f"{prim}-{_shape_id(sx, sy)}", (prim,),
                          lambda x, y, u=ufunc: u(x, y), (sx, sy), (dx, dy)))
    for layout in ["F", "strided"]:
        CASES.append(Case(f"{prim}-2x3_3-{layout}", (prim,), lambda x, y, u=ufunc: u(x, y),
                          ((2, 3), (3,)), (dx, dy), layout=layout))

CASES += [
    # a literal exponent of a negative base; a literal base
    Case("pow-literal-exponent", ("pow",), lambda x: np.power(x, 3.0), ((2, 3),), ((-2, 2),)),
    Case("pow-literal-base", ("pow",), lambda x: np.power(2.5, x), ((3,),), ((-2, 2),)),
    # each literal exponent's VJP is one branch (0, fractional, negative, 1, 2)
    Case("pow-literal-exponents", ("pow",),
         lambda x: np.power(x, 0.5) + np.power(x, -1.5) + np.power(x, 0.0) * x
         + np.power(x, 1.0) * np.power(x, 2.0) + np.power(x, 2.5), ((3,),), ((0.5, 2),)),
    # ties of maximum/minimum: 1/2 to each side, as SymPy's Heaviside(0)
    Case("maximum-ties", ("maximum",), lambda x, y: np.maximum(x, y), ((2, 3), (3,)), (),
         discrete=True),
    Case("minimum-ties", ("minimum",), lambda x, y: np.minimum(x, y), ((2, 3), (3,)), (),
         discrete=True),
]

def _round_trip(x):
    """A float32 round trip inside a float64 function: convert both ways (x may be a
    Python float where a test evaluates the function itself)."""
    x32 = x.astype(np.float32) if hasattr(x, "astype") else np.float32(x)
    return np.sin(x32).astype(np.float64) * x


CASES += [Case(f"convert-{_shape_id(shape)}", ("convert",), _round_trip, (shape,),
               ((-2, 2),), rtol=1e-5, atol=1e-6,
               backends=("numpy",) if 0 in shape or 1 in shape else BACKENDS)
          for shape in [(), (4,), (2, 3), (1, 3), (0, 3)]]
CASES.append(Case("convert-2x3-F", ("convert",), _round_trip, ((2, 3),), ((-2, 2),),
                  rtol=1e-5, atol=1e-6, layout="F"))

COMPARISONS = [("gt", np.greater), ("ge", np.greater_equal), ("lt", np.less),
               ("le", np.less_equal), ("eq", np.equal), ("ne", np.not_equal)]
for prim, ufunc in COMPARISONS:
    for sx, sy in [((), ()), ((2, 3), (3,)), ((1, 3), (2, 1)), ((0, 3), (1,))]:
        CASES.append(Case(f"{prim}-{_shape_id(sx, sy)}", (prim, "where"),
                          lambda x, y, u=ufunc: np.where(u(x, y), x * y, x - y),
                          (sx, sy), (), discrete=True))
    CASES.append(Case(f"{prim}-2x3_3-F", (prim, "where"),
                      lambda x, y, u=ufunc: np.where(u(x, y), x * y, x - y),
                      ((2, 3), (3,)), (), discrete=True, layout="F"))

for shapes in [((), (), ()), ((2, 3), (3,), (2, 1)), ((3,), (2, 3), ()),
               ((1, 1), (1,), (2, 3)), ((2, 0), (0,), (1,))]:
    CASES.append(Case(f"where-{_shape_id(*shapes)}", ("where", "gt"),
                      lambda c, x, y: np.where(c > 0, np.sin(x), y * y), shapes,
                      ((-1, 1), (-2, 2), (-2, 2))))
CASES.append(Case("where-2x3_3_2x1-strided", ("where", "gt"),
                  lambda c, x, y: np.where(c > 0, np.sin(x), y * y), ((2, 3), (3,), (2, 1)),
                  ((-1, 1), (-2, 2), (-2, 2)), layout="strided"))

REDUCTIONS = [("sum", np.sum, (-2, 2)), ("mean", np.mean, (-2, 2)), ("prod", np.prod, (0.3, 2)),
              ("max", np.max, (-2, 2)), ("min", np.min, (-2, 2))]
REDUCTION_AXES = [((4,), None, False), ((2, 3), None, False), ((2, 3), 0, False),
                  ((2, 3), 1, True), ((2, 3), -1, False), ((2, 3, 2), (0, 2), False),
                  ((2, 3, 2), 1, True), ((2, 3), None, True)]
# size-1 and empty dims (an empty *reduced* axis only where the reduction has an identity)
REDUCTION_EDGE_AXES = [((), None, False), ((1,), None, False), ((1, 3), 0, False),
                       ((2, 1), 1, True), ((0, 3), 1, False), ((3, 0), 0, True)]
EMPTY_REDUCED_AXES = [((0,), None, False), ((0, 3), 0, False), ((2, 0), 1, True)]
for prim, fn, domain in REDUCTIONS:
    edge = REDUCTION_EDGE_AXES + (EMPTY_REDUCED_AXES if prim in ("sum", "prod") else [])
    for shape, axis, keepdims in REDUCTION_AXES + edge:
        CASES.append(Case(f"{prim}-{_shape_id(shape)}-axis{axis}-keepdims{keepdims}", (prim,),
                          lambda x, f=fn, a=axis, k=keepdims: f(x, axis=a, keepdims=k),
                          (shape,), (domain,)))
    for layout, axis in [("F", 0), ("strided", 1)]:
        CASES.append(Case(f"{prim}-2x3-axis{axis}-{layout}", (prim,),
                          lambda x, f=fn, a=axis: f(x, axis=a), ((2, 3),), (domain,),
                          layout=layout))

CASES += [
    # the product of the others where the group has one zero, 0 where it has two
    Case("prod-zeros", ("prod",), lambda x: np.prod(x, axis=1), ((2, 3),), (),
         fixed=([[0.0, 2.0, 3.0], [0.0, 0.0, 1.5]],)),
    # two tied maxima share the cotangent (SymPy: Heaviside(0) = 1/2 each)
    Case("max-tie", ("max",), lambda x: np.max(x, axis=1), ((2, 3),), (),
         fixed=([[1.0, 3.0, 3.0], [2.0, 5.0, 1.0]],)),
    Case("min-tie", ("min",), lambda x: np.min(x, axis=0), ((2, 3),), (),
         fixed=([[1.0, 3.0, -1.0], [1.0, 5.0, 2.0]],)),
    # the gradient of a mean divides by count(x): the length, read from the shape
    Case("count-mean-of-product", ("mean", "count", "mul"),
         lambda x: np.mean(x * x[::-1], axis=(0, 2)), ((2, 3, 4),), ((-2, 2),)),
    Case("count-var-ddof", ("maximum", "count", "sub"),
         lambda x: np.var(x, axis=1, ddof=1), ((3, 4),), ((-2, 2),)),
]

for source, target in [((3,), (2, 3)), ((1, 3), (2, 3)), ((2, 1), (2, 3)), ((), (2, 3)),
                       ((1,), (0,)), ((1, 1), (2, 3)), ((0,), (2, 0))]:
    CASES.append(Case(f"broadcast_to-{_shape_id(source, target)}", ("broadcast_to",),
                      lambda x, t=target: np.broadcast_to(x, t), (source,), ((-2, 2),)))

for source, target in [((2, 3), (3, 2)), ((6,), (2, 3)), ((1,), ()), ((), (1, 1)),
                       ((0, 3), (3, 0)), ((1, 3), (3,))]:
    CASES.append(Case(f"reshape-{_shape_id(source, target)}", ("reshape",),
                      lambda x, t=target: np.reshape(x, t), (source,), ((-2, 2),)))

CASES += [
    Case("transpose-T", ("transpose",), lambda x: x.T, ((2, 3),), ((-2, 2),)),
    Case("transpose-axes", ("transpose",), lambda x: np.transpose(x, (1, 0, 2)),
         ((2, 3, 2),), ((-2, 2),)),
    Case("transpose-method", ("transpose",), lambda x: x.transpose(2, 0, 1),
         ((2, 3, 2),), ((-2, 2),)),
    # the identity (no equation), as numpy's transpose of 0-d and 1-d arrays
    Case("transpose-scalar", (), lambda x: np.transpose(x), ((),), ((-2, 2),)),
    Case("transpose-3", (), lambda x: x.T, ((3,),), ((-2, 2),)),
    Case("transpose-T-0x3", ("transpose",), lambda x: x.T, ((0, 3),), ((-2, 2),)),
    Case("transpose-T-1x3", ("transpose",), lambda x: x.T, ((1, 3),), ((-2, 2),)),
    # non-contiguous inputs to the structural ops
    Case("transpose-T-F", ("transpose",), lambda x: x.T, ((2, 3),), ((-2, 2),), layout="F"),
    Case("reshape-2x3_3x2-strided", ("reshape",), lambda x: np.reshape(x, (3, 2)), ((2, 3),),
         ((-2, 2),), layout="strided"),
    Case("broadcast_to-1x3_2x3-strided", ("broadcast_to",),
         lambda x: np.broadcast_to(x, (2, 3)), ((1, 3),), ((-2, 2),), layout="strided"),
]

# the array (indexing, shape ops), linear-algebra and selection/stable-function
# families keep their cases beside this table, one module each; they import
# Case from here
from cases_array import CASES as ARRAY_CASES  # noqa: E402
from cases_complex import CASES as COMPLEX_CASES  # noqa: E402
from cases_control import CASES as CONTROL_CASES  # noqa: E402
from cases_decompositions import CASES as DECOMPOSITION_CASES  # noqa: E402
from cases_linalg import CASES as LINALG_CASES  # noqa: E402
from cases_numpy import CASES as NUMPY_CASES  # noqa: E402
from cases_stable import CASES as STABLE_CASES  # noqa: E402

CASES += (ARRAY_CASES + LINALG_CASES + STABLE_CASES + NUMPY_CASES + DECOMPOSITION_CASES
          + CONTROL_CASES + COMPLEX_CASES)

assert len({c.name for c in CASES}) == len(CASES), "case names must be unique"

#: The Numba column in CI: each primitive at least once, each case alone on Numba with
#: ``SYMGRAD_FULL=1``; the interpreter runs every case against SymPy either way.
#: A Numba compile costs CPU time per statement of the kernel, not per kernel, except for
#: the smallest kernels (measured, CPU seconds on 2 loaded cores: 16 0-d elementwise cases
#: alone 0.8, as one kernel 0.2; two sets of 16 1-d ones alone 4.8 and 7.5, as one kernel
#: 5.5 and 14.8, in kernels of 4 4.4 and 9.7; 6 reductions alone 7.4, as one kernel 11.3;
#: inv, det and solve alone 12.4, in kernels of 3 15.2). So:
#:
#: - the elementwise primitives run as *family kernels* (:data:`FAMILIES`): one kernel per
#:   slot (a primitive's first, second, ... C-contiguous case) holds one case of each
#:   elementwise primitive (at most :data:`FAMILY_SIZE` of them), and runs again on the
#:   arguments in the other layouts (the same kernel: it takes contiguous copies). CI runs
#:   the first :data:`ELEMENTWISE_SLOTS` slots: 0-d (the scalar code of every formula) and
#:   1-d (the fused loop, where ``vecmath``'s vectorized functions run); the 2-d slot
#:   (the same loop body in a deeper nest) with ``SYMGRAD_FULL=1``;
#: - every other case runs alone: in CI the first case of each primitive (its first in
#:   ``prims``; its first of complex values apart) and a case that exercises a primitive
#:   that no family member and no earlier case exercises, in table order, with their
#:   non-contiguous variants (the same shapes: the same kernel); the other shapes, axes
#:   and values of the same primitives with ``SYMGRAD_FULL=1``.
ELEMENTWISE_SLOTS = 2
FULL = os.environ.get("SYMGRAD_FULL") == "1"
#: the most cases one family kernel holds, by slot: the 0-d kernels are cheap, while
#: an array kernel's compile grows faster than its size (the measurements above)
FAMILY_SIZE = {0: 16}
ARRAY_FAMILY_SIZE = 4


@dataclass(frozen=True)
class Family:
    """Cases of one primitive family that run as one Numba kernel: a scalar function of
    all their arguments, the sum of each case's output weighted by its cotangent
    (``tests/test_primitives.py``), whose gradient with respect to a case's arguments is
    that case's gradient."""
    name: str
    members: tuple[Case, ...]

    def __str__(self) -> str:
        return self.name


def _elementwise(case: Case) -> bool:
    from symgrad import prims

    return all(prims.REGISTRY[p].kind == "elementwise" for p in case.prims)


def _budgeted(cases: list[Case]) -> tuple[list[Case], list[Family]]:
    """The cases with the Numba column cut to the budget above, and the family kernels
    that run the kept ones."""
    def member(case: Case) -> bool:
        return bool(case.prims) and _elementwise(case)

    numba = [c for c in cases if "numba" in c.backends and c.layout == "C"]
    slots = ELEMENTWISE_SLOTS + 1 if FULL else ELEMENTWISE_SLOTS
    count: dict[tuple[str, ...], int] = {}
    slot_of: dict[tuple, int] = {}  # (prims, shapes) -> the slot of its first case
    groups: dict[int, list[Case]] = {}
    for case in filter(member, numba):  # (a later case of the same shapes: the same slot)
        key = (case.prims, case.shapes)
        if key not in slot_of:
            count[case.prims] = count.get(case.prims, 0) + 1
            if count[case.prims] <= slots:
                slot_of[key] = count[case.prims] - 1
        if key in slot_of:
            groups.setdefault(slot_of[key], []).append(case)
    complex_values = {c.name for c in COMPLEX_CASES}  # a primitive's complex kernels: apart

    def subject(case: Case) -> tuple:
        return case.prims[:1], case.name in complex_values

    members = [case for group in groups.values() for case in group]
    covered = {p for case in members for p in case.prims}  # the primitives run on Numba
    subjects = {subject(case) for case in members}  # and those run as a case's first
    alone_names, alone_shapes = set(), set()  # the cases run alone; their variants' keys
    for case in numba:
        if not member(case) and (case.prims and subject(case) not in subjects
                                 or not set(case.prims) <= covered):
            covered |= set(case.prims)
            subjects.add(subject(case))
            alone_names.add(case.name)
            alone_shapes.add((case.prims, case.shapes))
    out = []
    for case in cases:
        on_numba = case.name in alone_names or (
            case.layout != "C" and (case.prims, case.shapes) in alone_shapes)
        if "numba" in case.backends and not FULL and (member(case) or not on_numba):
            case = replace(case, backends=tuple(b for b in case.backends if b != "numba"))
        out.append(case)
    families = []
    for slot, group in groups.items():
        size = FAMILY_SIZE.get(slot, ARRAY_FAMILY_SIZE)
        for k in range(0, len(group), size):
            chunk = f"-{k // size}" if len(group) > size else ""
            families.append(Family(f"elementwise-{slot}{chunk}", tuple(group[k:k + size])))
    return out, families


#: the table as written, every case on the backends it names
TABLE = CASES
CASES, FAMILIES = _budgeted(TABLE)
