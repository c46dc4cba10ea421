"""The IR: an immutable, typed SSA graph, and its text form.

Grammar::

    Graph    = inputs: Var*   consts: (Var, ndarray)*   eqns: Eqn*   outputs: Atom*
    Eqn      = out: Var  "="  prim  "(" Atom* ")"  params
    Atom     = Var | Literal
    Var      = a fresh value with an abstract value (shape, dtype); identity, not name
    Literal  = a Python scalar (float, complex, int or bool) inlined into the equation

Dtypes: ``float64`` (``f64``), ``float32`` (``f32``: a float32 argument keeps its
dtype, see :func:`promote`), ``bool``, ``int64`` (``i64``: loop counters, trip
counts, integer arguments that are not differentiated) and ``tuple``: the
several results of a control-flow equation (``loop``, ``while``, ``cond``), a
value that only ``proj`` reads (``b = proj(t, part=1)``). Its aval lists the
avals of its parts; a part whose leading size is known only when the kernel
runs (the tape of a loop whose trip count is an argument) has the size
:data:`DYN`, printed ``?``.

Every equation binds exactly one fresh ``Var``; operands are atoms, so nested
expressions never appear. Nothing here is mutated after construction: passes
build new graphs (``dataclasses.replace``). Array constants (numpy arrays the
user's code mixes in) are ``consts``: variables bound to read-only arrays, passed
to compiled kernels as arguments so that kernel source never embeds data.

The text form is what ``print(graph)`` shows and golden tests compare; one line
per equation, Python-like::

    f(x: f64[2,2]) {
      const k: f64[3] = [1.0, 2.0, 3.0]
      a: f64[2,2] = add(x, 2.0)
      b: f64[2,2] = square(a)
      c: f64[] = mean(b, axes=(0, 1))
      # grad of: c: f64[] = mean(b, axes=(0, 1))
      d: f64[2,2] = broadcast_to(0.25, shape=(2, 2))
      return (c, d)
    }

- A value is ``name: dtype[shape]`` where it is defined and ``name`` where it is
  used; ``f64[]`` is a scalar.
- Literals print as Python literals (``2.0``, ``-0.0``, ``inf``, ``True``).
- Parameters follow the operands as ``key=value``, sorted by key.
- Equations made by the adjoint transform are grouped under a
  ``# grad of: <primal equation>`` comment.
- A parameter that holds a graph (the body of a loop, the branches of a
  ``cond``) prints as the graph's name, and the graph itself follows the
  equation, indented, with names that differ from the enclosing graph's::

      t: (f64[8],) = loop(0, n, x0, p, body=step, n_carry=1, n_xs=0, reverse=False, ...)
        step(i: i64[], x: f64[8], p_1: f64[]) {
          a: f64[8] = mul(p_1, x)
          ...
          return (b,)
        }
      c: f64[8] = proj(t, part=0)

Names are deterministic and never collide: inputs keep their argument names
(suffixed ``_1``, ``_2``... if needed), the remaining values get ``a``, ``b``,
..., ``z``, ``aa``, ``ab``... in definition order, skipping any name already
taken, Python keywords, ``l`` and the names generated code reserves.

The checker is :mod:`symgrad.core.check`, the numpy reference interpreter
:mod:`symgrad.core.interpreter`; the dtypes and :class:`Aval` are
:mod:`symgrad.core.avals`' (importable here).
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import count
from types import MappingProxyType
from typing import Any, Union

import numpy as np

from .avals import (  # noqa: F401 -- the IR's dtypes and avals, importable here
    BOOL,
    C64,
    C128,
    COMPLEXES,
    DTYPES,
    DYN,
    F32,
    FLOAT,
    FLOATS,
    INEXACT,
    INT,
    TUPLE,
    Aval,
    complex_of,
    float_of,
    holds_complex,
    is_complex,
    is_float,
    nbytes,
    promote,
    real_of,
    tuple_aval,
)


class IRError(AssertionError):
    """The checker found a malformed graph (a bug in symgrad, not in user code)."""


def has_complex(graph: Graph) -> bool:
    """Whether any value of ``graph`` (or of a graph it holds) is complex."""
    def avals(a: Aval) -> Iterator[Aval]:
        yield a
        for p in a.parts:
            yield from avals(p)
    for v in eqn_vars(graph):
        if any(x.dtype in COMPLEXES for x in avals(v.aval)):
            return True
    return any(has_complex(sub) for e in graph.eqns for _, sub in subgraphs(e))


@dataclass(frozen=True, slots=True, eq=False)
class Var:
    """A value defined once: a graph input, a constant, or an equation's output.

    Identity is the object itself; ``hint`` only helps the printer choose a name.
    """

    aval: Aval
    hint: str = ""

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> str:
        return self.aval.dtype

    def __repr__(self) -> str:
        return f"Var({self.hint or hex(id(self))}: {self.aval})"


@dataclass(frozen=True, slots=True, eq=False)
class Literal:
    """A scalar constant written into the equation that uses it.

    Two literals are equal when they have the same dtype and the same bits, so
    ``0.0`` and ``-0.0`` stay distinct and ``nan`` equals ``nan`` (what CSE needs).
    """

    value: float | bool | int | complex

    def __post_init__(self) -> None:
        if not isinstance(self.value, (float, bool, int, complex)):
            raise TypeError(f"Literal takes a Python float, complex, int or bool, not "
                            f"{self.value!r}")

    @property
    def aval(self) -> Aval:
        v = self.value
        return Aval((), BOOL if isinstance(v, bool) else INT if isinstance(v, int)
                    else C128 if isinstance(v, complex) else FLOAT, weak=True)

    @property
    def shape(self) -> tuple[int, ...]:
        return ()

    @property
    def dtype(self) -> str:
        return self.aval.dtype

    @property
    def key(self) -> tuple[str, Any]:
        v = self.value
        if isinstance(v, bool):
            return (BOOL, v)
        if isinstance(v, complex):
            return (C128, v.real.hex() + v.imag.hex())
        return (INT, v) if isinstance(v, int) else (FLOAT, v.hex())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Literal) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __repr__(self) -> str:
        return f"Literal({self.value!r})"


Atom = Union[Var, Literal]  # noqa: UP007 (a runtime alias: X | Y needs 3.10 types)


@dataclass(frozen=True, slots=True, eq=False)
class Primitive:
    """One operation of the IR: what it means, with every facet and fact that says so.

    Declared once, in a module of :mod:`symgrad.prims`. How a backend writes it is the
    backend's (the Numba backend's lowering table,
    :mod:`symgrad.backend.numba.lowering`: emit, element moves, vectorized math, layout
    facts); the interpreter runs ``impl``. Facets (functions):

    - ``shape_rule(*avals, **params) -> Aval``: type checking and inference;
    - ``impl(*arrays, **params) -> ndarray``: the numpy reference implementation;
    - ``vjp(g, ans, *inputs, **params) -> tuple``: cotangent of each input (or
      ``None`` for none), written with the recording helpers of
      :mod:`symgrad.prims` so that the adjoint is IR again;
    - ``sympy(sp, *args, **params)``: the SymPy counterpart (see
      :mod:`symgrad.core.sympy_bridge` for how each ``kind`` applies it);
    - ``simplify(eqn, producer) -> Rewrite``: exact algebraic rewrites of an
      equation of this primitive (``producer(atom)`` is the equation defining an
      operand), one comment per rule; see :mod:`symgrad.passes.rewrites`;
    - ``accuracy(eqn, producer) -> Rewrite``: rewrites that change rounding on
      purpose (``log(1 + x) -> log1p(x)``);
    - ``batch(bind, args, batched, size, **params) -> (atom, batched)``: the
      equation on operands of which those marked in ``batched`` carry a leading
      batch axis of length ``size`` (``vmap``), recorded with ``bind(prim, atoms,
      params)``; returns the result and whether it has the batch axis. Elementwise
      primitives and reductions over ``axes`` need none: their kind's rule applies
      (:mod:`symgrad.passes.batching`);
    - ``linearized(eqn, active) -> Eqn``: the equation as it stands in the forward
      part of a graph whose adjoint differentiated it, ``active`` flagging its
      differentiated operands (a ``custom_vjp`` call becomes a plain call of the
      user's ``fwd``: what JAX's linearized primal is, so derivatives of that graph
      differentiate ``fwd`` as written; a loop or branch, its bodies so changed).

    Facts (flags) that the adjoint, the passes and the backends read:

    - ``kind``: ``"elementwise"`` (numpy broadcasting), ``"reduction"`` (over
      ``axes``), ``"structural"`` (moves elements, computes nothing: its output
      holds only its inputs' elements and zeros) or ``"array"`` (whole arrays in, a
      new array out: matmul, inv, cumsum, ...);
    - ``numpy``: the numpy function that traces to this primitive, if any;
    - ``scipy``: the name of the ``scipy.special`` ufunc that traces to it, if any (the
      dispatch of :mod:`symgrad.numpy_api.scipy_special` and ``sg.scipy.special`` are
      built from it);
    - ``view``: its output may be a view of an input (codegen copies such outputs);
    - ``linear``: the VJP is linear in the cotangent and reads no primal value
      but shapes and booleans, so a zero cotangent gives exact zeros (the
      adjoint's masks);
    - ``commutative``: swapping the operands changes not a single bit (CSE);
    - ``accumulate``: ``"sum"`` or ``"mean"`` for a reduction a fused loop
      accumulates (a mean divides by the count after the loop);
    - ``integer``: also computes on int64 operands (all of them int64: an int64
      result, or bool for a comparison), as loop counters need;
    - ``subgraphs``: the names of its parameters that hold a :class:`Graph` (a
      loop's ``body``, a ``cond``'s branches). Its kind is ``"control"``, and
      each layer that applies one of its facets hands it what that layer does
      to a graph: the adjoint gives ``vjp`` ``adjoint=`` (the transform
      itself), the Numba backend gives its lowering's ``emit`` ``scope=`` (which
      renders a graph as statements), the SymPy bridge gives ``sympy`` ``evaluate=``;
    - ``host``: it runs Python code no kernel can hold (``sg.pure_callback``): the
      backend cuts a compiled graph around it and calls its ``impl`` in between;
    - ``complex``: it takes complex operands (complex128, complex64), with numpy's
      meaning, and its VJP rule is then the transpose of its JVP under the pairing
      ``Re(sum(a * b))`` (JAX's convention: ``g * f'(x)`` for a holomorphic ``f``, no
      conjugate). A complex operand to any other primitive is a TypeError when traced
      (:meth:`symgrad.core.tracing.Trace.bind`), naming the primitive.
    """

    name: str
    kind: str
    shape_rule: Callable[..., Aval]
    impl: Callable[..., Any]
    vjp: Callable[..., tuple]
    sympy: Callable[..., Any]
    numpy: Any = None
    scipy: str = ""
    simplify: Callable[..., Any] | None = None
    accuracy: Callable[..., Any] | None = None
    batch: Callable[..., Any] | None = None
    linearized: Callable[..., Any] | None = None
    view: bool = False
    linear: bool = False
    commutative: bool = False
    accumulate: str = ""
    integer: bool = False
    subgraphs: tuple[str, ...] = ()
    host: bool = False
    complex: bool = False

    def __repr__(self) -> str:
        return self.name


def freeze_params(params: Mapping[str, Any]) -> Mapping[str, Any]:
    """An immutable, key-sorted view of an equation's parameters."""
    return MappingProxyType(dict(sorted(params.items())))


@dataclass(frozen=True, slots=True, eq=False)
class Eqn:
    """``out = prim(*inputs, **params)``.

    ``origin`` is, for equations made by the adjoint transform, the primal
    equation whose VJP produced them; the printer and codegen cite it.
    """

    prim: Primitive
    inputs: tuple[Atom, ...]
    out: Var
    params: Mapping[str, Any] = field(default_factory=lambda: freeze_params({}))
    origin: Eqn | None = None


@dataclass(frozen=True, slots=True, eq=False)
class Graph:
    """A function in SSA form: ``outputs = f(*inputs)`` with ``consts`` bound."""

    inputs: tuple[Var, ...]
    eqns: tuple[Eqn, ...]
    outputs: tuple[Atom, ...]
    consts: tuple[tuple[Var, np.ndarray], ...] = ()
    name: str = "f"

    def __str__(self) -> str:
        return pformat(self)

    @property
    def const_vars(self) -> tuple[Var, ...]:
        return tuple(v for v, _ in self.consts)


def eqn_vars(graph: Graph) -> Sequence[Var]:
    """All variables of ``graph`` in definition order."""
    return [*graph.inputs, *graph.const_vars, *(e.out for e in graph.eqns)]


def dead_after(graph: Graph) -> list[list[int]]:
    """Per equation, the ids of the variables no later equation or output reads
    (the equation's own output included, when nothing reads it); inputs are among
    them, constants (which the graph holds anyway) and outputs never are.
    :func:`symgrad.core.interpreter.interpret` drops each value there."""
    last: dict[int, int] = {}
    for k, eqn in enumerate(graph.eqns):
        last[id(eqn.out)] = k
        for a in eqn.inputs:
            if isinstance(a, Var):
                last[id(a)] = k
    kept = {id(a) for a in graph.outputs if isinstance(a, Var)}
    kept.update(id(v) for v in graph.const_vars)
    dead: list[list[int]] = [[] for _ in graph.eqns]
    for key, k in last.items():
        if key not in kept:
            dead[k].append(key)
    return dead
def subgraphs(eqn: Eqn) -> list[tuple[str, Graph]]:
    """The graphs ``eqn`` holds as parameters (a loop's body, a cond's branches)."""
    return [(k, eqn.params[k]) for k in eqn.prim.subgraphs if isinstance(eqn.params.get(k), Graph)]


def map_subgraphs(graph: Graph, fn: Callable[[Graph], Graph]) -> Graph:
    """``graph`` with ``fn`` applied to every graph its equations hold as parameters
    (one level deep; ``fn`` may recurse). ``graph`` itself if nothing changes; a
    graph held twice is mapped once."""
    done: dict[int, Graph] = {}
    eqns = []
    changed = False
    for e in graph.eqns:
        held = subgraphs(e)
        if held:
            new = {}
            for k, g in held:
                if id(g) not in done:
                    done[id(g)] = fn(g)
                new[k] = done[id(g)]
            if any(new[k] is not g for k, g in held):
                e = Eqn(e.prim, e.inputs, e.out, freeze_params({**e.params, **new}), e.origin)
                changed = True
        eqns.append(e)
    return Graph(graph.inputs, tuple(eqns), graph.outputs, graph.consts,
                 graph.name) if changed else graph


# ---------------------------------------------------------------------------
# the text form

#: names that generated kernels use for themselves
RESERVED = frozenset({"np", "njit", "math", "inf", "nan", "True", "False", "None", "vm", "bl",
                      "prange", "numba",
                      # symgrad's helper modules as kernels import them (a value named bm
                      # hid symgrad.backend.batched in a transformer's backward)
                      "vm32", "la", "nm", "bm", "pool_take", "objmode",
                      "acc", "value", "kernel",
                      # builtins kernels call (a parameter named range would shadow it)
                      "range", "float", "int", "bool", "enumerate", "len", "abs", "min",
                      "max", "zip",
                      "l", "O", "I"})  # and names that read like 1 and 0
#: loop indices and sizes (n0 = x.shape[0]) in kernels, and what parallel loops add: chunk
#: indices, counts, rows and first rows (ic0, nc0, nr0, fr0), range flags (ok0, okc0,
#: oka0), partial sums (p0_1, s0_1)
_INDEX_NAME = re.compile(r"([in]c?\d+|[nf]r\d+|ok[ac]?\d+|[ps]\d+_\d+)$")


def _letters() -> Iterator[str]:
    """a, b, ..., z, aa, ab, ...: bijective base 26."""
    alphabet = "abcdefghijklmnopqrstuvwxyz"
    for n in count(1):
        s = ""
        while n:
            n, r = divmod(n - 1, 26)
            s = alphabet[r] + s
        yield s


def usable(name: str) -> bool:
    return (name.isidentifier() and not keyword.iskeyword(name)
            and name not in RESERVED and not _INDEX_NAME.match(name))


def assign_names(graph: Graph, out_names: Mapping[int, str] | None = None,
                 reserved: Iterable[str] = ()) -> dict[int, str]:
    """Map ``id(var)`` to a unique, valid Python name for every var of ``graph``.

    ``out_names`` optionally names outputs by position (e.g. ``{1: "ct_x"}``);
    an output that is also an input keeps the input's name. Names in
    ``reserved`` (those of an enclosing graph) are not used.
    """
    names: dict[int, str] = {}
    taken: set[str] = set(reserved)

    def claim(v: Var, base: str) -> None:
        if id(v) in names:
            return
        base = base if usable(base) else (base + "_" if base.isidentifier() else "v")
        name, k = base, 0
        while name in taken or not usable(name):
            k += 1
            name = f"{base}_{k}"
        names[id(v)] = name
        taken.add(name)

    for v in graph.inputs:
        claim(v, v.hint or "x")
    for i, name in (out_names or {}).items():
        out = graph.outputs[i]
        if isinstance(out, Var):
            claim(out, name)
    for v in graph.const_vars:
        claim(v, v.hint or "k")
    letters = _letters()
    for v in eqn_vars(graph):
        if id(v) not in names:
            if v.hint:
                claim(v, v.hint)
                continue
            name = next(letters)
            while name in taken or not usable(name):
                name = next(letters)
            claim(v, name)
    return names


def format_literal(value: float | bool | int | complex) -> str:
    """A literal as Python source would spell it."""
    if isinstance(value, (bool, np.bool_)):
        return repr(bool(value))
    if isinstance(value, (int, np.integer)):
        return repr(int(value))
    if isinstance(value, (complex, np.complexfloating)):
        return repr(complex(value))
    return repr(float(value))


def format_param(value: object) -> str:
    if isinstance(value, Graph):
        return value.name  # the graph itself is printed below the equation
    if isinstance(value, tuple):
        return "(" + ", ".join(map(format_param, value)) + ("," if len(value) == 1 else "") + ")"
    return repr(value)


def origin_changes(eqns: Iterable[Eqn]) -> Iterator[tuple[Eqn | None, Eqn]]:
    """Each equation with the primal equation to cite before it: its origin where
    that changes from the previous equation's, else None (one comment per group)."""
    current = None
    for e in eqns:
        cite = e.origin if e.origin is not current and e.origin is not None else None
        current = e.origin
        yield cite, e


class Printer:
    """Formats atoms and equations of one graph with one naming (avoiding ``reserved``)."""

    def __init__(self, graph: Graph, out_names: Mapping[int, str] | None = None,
                 reserved: Iterable[str] = ()):
        self.graph = graph
        self.reserved = frozenset(reserved)
        self.names = assign_names(graph, out_names, self.reserved)
        self._taken = set(self.names.values()) | self.reserved
        self._spare = _letters()

    def name(self, v: Var) -> str:
        if id(v) not in self.names:  # e.g. in the origin of an equation a pass removed
            name = next(self._spare)
            while name in self._taken or not usable(name):
                name = next(self._spare)
            self.names[id(v)] = name
            self._taken.add(name)
        return self.names[id(v)]

    def atom(self, a: Atom) -> str:
        return format_literal(a.value) if isinstance(a, Literal) else self.name(a)

    def typed(self, v: Var) -> str:
        return f"{self.name(v)}: {v.aval}"

    def eqn(self, e: Eqn) -> str:
        args = [self.atom(a) for a in e.inputs]
        args += [f"{k}={format_param(v)}" for k, v in e.params.items()]
        return f"{self.typed(e.out)} = {e.prim.name}({', '.join(args)})"

    def const(self, v: Var, value: np.ndarray) -> str:
        if value.ndim == 0:  # a number the function read from outside
            return f"const {self.typed(v)} = {format_literal(value.item())}"
        flat = value.ravel()
        shown = ", ".join(format_literal(x) for x in flat[:6])
        more = ", ..." if flat.size > 6 else ""
        return f"const {self.typed(v)} = [{shown}{more}]"

    def lines(self) -> list[str]:
        g = self.graph
        head = f"{g.name}({', '.join(self.typed(v) for v in g.inputs)}) {{"
        body = [self.const(v, value) for v, value in g.consts]
        for cite, e in origin_changes(g.eqns):
            if cite is not None:
                body.append(f"# grad of: {self.eqn(cite)}")
            body.append(self.eqn(e))
            for _, sub in subgraphs(e):  # a body: indented, its names apart from ours
                inner = Printer(sub, reserved=self._taken)
                body += ["  " + line for line in inner.lines()]
        outs = ", ".join(self.atom(a) for a in g.outputs)
        body.append(f"return ({outs}{',' if len(g.outputs) == 1 else ''})")
        return [head, *("  " + line for line in body), "}"]


def pformat(graph: Graph, out_names: Mapping[int, str] | None = None) -> str:
    """The documented text form of ``graph``."""
    return "\n".join(Printer(graph, out_names).lines())


def pformat_around(graph: Graph, index: int | None, context: int = 3) -> str:
    """Equations near ``index`` (all of a short graph), the bad one marked ``>>``."""
    p = Printer(graph)
    if index is None:
        return "\n".join(p.lines())
    lo, hi = max(0, index - context), min(len(graph.eqns), index + context + 1)
    rows = []
    for i in range(lo, hi):
        try:
            text = p.eqn(graph.eqns[i])
        except Exception as e:  # a malformed equation must not hide the report
            text = f"<unprintable equation: {e}>"
        rows.append(f"{'>>' if i == index else '  '} {i:4d}  {text}")
    return "\n".join([f"in {graph.name}, equations {lo}..{hi - 1}:", *rows])
