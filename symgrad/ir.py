"""The IR: an immutable, typed SSA graph.

Grammar (the text form is documented in :mod:`symgrad.pretty`)::

    Graph    = inputs: Var*   consts: (Var, ndarray)*   eqns: Eqn*   outputs: Atom*
    Eqn      = out: Var  "="  prim  "(" Atom* ")"  params
    Atom     = Var | Literal
    Var      = a fresh value with an abstract value (shape, dtype); identity, not name
    Literal  = a Python scalar (float or bool) inlined into the equation

Every equation binds exactly one fresh ``Var``; operands are atoms, so nested
expressions never appear. Nothing here is mutated after construction: passes
build new graphs (``dataclasses.replace``). Array constants (numpy arrays the
user's code mixes in) are ``consts``: variables bound to read-only arrays, passed
to compiled kernels as arguments so that kernel source never embeds data.

The module also holds the checker (:func:`check`) and the numpy reference
interpreter (:func:`interpret`), which every backend is compared against.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Union

import numpy as np

FLOAT = "float64"
BOOL = "bool"
DTYPES = (FLOAT, BOOL)
_SHORT = {FLOAT: "f64", BOOL: "bool"}


class IRError(AssertionError):
    """The checker found a malformed graph (a bug in symgrad, not in user code)."""


@dataclass(frozen=True, slots=True)
class Aval:
    """Abstract value: what the IR knows about a value before it exists."""

    shape: tuple[int, ...]
    dtype: str = FLOAT

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __str__(self) -> str:
        return f"{_SHORT[self.dtype]}[{','.join(map(str, self.shape))}]"


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

    value: float | bool

    def __post_init__(self) -> None:
        if not isinstance(self.value, (float, bool)):
            raise TypeError(f"Literal takes a Python float or bool, not {self.value!r}")

    @property
    def aval(self) -> Aval:
        return Aval((), BOOL if isinstance(self.value, bool) else FLOAT)

    @property
    def shape(self) -> tuple[int, ...]:
        return ()

    @property
    def dtype(self) -> str:
        return self.aval.dtype

    @property
    def key(self) -> tuple[str, Any]:
        v = self.value
        return (BOOL, v) if isinstance(v, bool) else (FLOAT, v.hex())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Literal) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __repr__(self) -> str:
        return f"Literal({self.value!r})"


Atom = Union[Var, Literal]  # noqa: UP007 (a runtime alias: X | Y needs 3.10 types)


@dataclass(frozen=True, slots=True, eq=False)
class Primitive:
    """One operation of the IR, with every facet the pipeline needs.

    Declared once, in :mod:`symgrad.primitives`:

    - ``shape_rule(*avals, **params) -> Aval``: type checking and inference;
    - ``impl(*arrays, **params) -> ndarray``: the numpy reference implementation;
    - ``vjp(g, ans, *inputs, **params) -> tuple``: cotangent of each input (or
      ``None`` for none), written with traced numpy operations so that the
      adjoint is IR again;
    - ``emit(out, args, avals, out_aval, **params) -> list[str]``: Numba source;
    - ``sympy(sp, *args, **params)``: the SymPy counterpart (see
      :mod:`symgrad.sympy_bridge` for how each ``kind`` applies it);
    - ``kind``: ``"elementwise"`` (numpy broadcasting), ``"reduction"`` (over
      ``axes``), ``"structural"`` (moves elements, computes nothing) or
      ``"linalg"`` (whole arrays in, a new array out: matmul, inv, ...);
    - ``numpy``: the numpy function that traces to this primitive, if any;
    - ``view``: its output may be a view of an input (codegen copies such outputs).
    """

    name: str
    kind: str
    shape_rule: Callable[..., Aval]
    impl: Callable[..., Any]
    vjp: Callable[..., tuple]
    emit: Callable[..., list[str]]
    sympy: Callable[..., Any]
    numpy: Any = None
    view: bool = False

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
        from .pretty import pformat

        return pformat(self)

    @property
    def const_vars(self) -> tuple[Var, ...]:
        return tuple(v for v, _ in self.consts)


# ---------------------------------------------------------------------------
# checker


def check(graph: Graph) -> Graph:
    """Raise :class:`IRError` unless ``graph`` is well formed; return it.

    Checks: every variable is defined once before use; literals and values have
    the declared dtypes; each equation's output aval is what its primitive's
    shape rule says; parameters are hashable; constants match their avals.
    """
    defined: set[int] = set()

    def define(v: Var, where: str) -> None:
        if not isinstance(v, Var):
            _fail(graph, None, f"{where} is {v!r}, not a Var")
        if id(v) in defined:
            _fail(graph, None, f"{where} {v!r} is defined twice")
        if v.dtype not in DTYPES:
            _fail(graph, None, f"{where} {v!r} has unknown dtype {v.dtype}")
        defined.add(id(v))

    for v in graph.inputs:
        define(v, "input")
    for v, value in graph.consts:
        define(v, "const")
        if not isinstance(value, np.ndarray) or value.shape != v.shape:
            _fail(graph, None, f"const {v!r} is bound to {type(value).__name__} "
                  f"of shape {getattr(value, 'shape', None)}")
        if value.dtype != np.dtype(v.dtype) or value.flags.writeable:
            _fail(graph, None, f"const {v!r} must be a read-only {v.dtype} array")
    for i, eqn in enumerate(graph.eqns):
        for a in eqn.inputs:
            if isinstance(a, Var) and id(a) not in defined:
                _fail(graph, i, f"input {a!r} is used before it is defined")
            if not isinstance(a, (Var, Literal)):
                _fail(graph, i, f"operand {a!r} is not an atom")
        try:
            hash(tuple(eqn.params.items()))
        except TypeError:
            _fail(graph, i, f"params {dict(eqn.params)} are not hashable")
        try:
            expected = eqn.prim.shape_rule(*(a.aval for a in eqn.inputs), **eqn.params)
        except Exception as e:  # the rule's own message says what is wrong
            _fail(graph, i, f"shape rule of {eqn.prim.name} rejects its inputs: {e}")
        if expected != eqn.out.aval:
            _fail(graph, i, f"output is {eqn.out.aval} but {eqn.prim.name} gives {expected}")
        define(eqn.out, "output of equation")
    for a in graph.outputs:
        if isinstance(a, Var) and id(a) not in defined:
            _fail(graph, None, f"graph output {a!r} is not defined")
    return graph


def _fail(graph: Graph, index: int | None, message: str) -> None:
    from .pretty import pformat_around

    raise IRError(f"{message}\n{pformat_around(graph, index)}")


# ---------------------------------------------------------------------------
# reference interpreter


def interpret(graph: Graph, *args: Any) -> list[Any]:
    """Evaluate ``graph`` with each primitive's numpy implementation.

    Floating-point errors follow numpy's arithmetic silently (``inf``/``nan``),
    as the compiled kernels do with ``error_model="numpy"``.
    """
    if len(args) != len(graph.inputs):
        raise TypeError(f"{graph.name} takes {len(graph.inputs)} inputs, got {len(args)}")
    env: dict[int, Any] = {}
    for v, x in zip(graph.inputs, args):
        env[id(v)] = _as_value(x, v.aval)
    for v, value in graph.consts:
        env[id(v)] = value

    def read(a: Atom) -> Any:
        return a.value if isinstance(a, Literal) else env[id(a)]

    dead = dead_after(graph)
    with np.errstate(all="ignore"):
        for eqn, done in zip(graph.eqns, dead):
            out = eqn.prim.impl(*map(read, eqn.inputs), **eqn.params)
            env[id(eqn.out)] = _as_value(out, eqn.out.aval)
            for key in done:  # the working set is the live values, not every value made
                del env[key]
    return [_owned(read(a), a.aval) for a in graph.outputs]


def dead_after(graph: Graph) -> list[list[int]]:
    """Per equation, the ids of the variables no later equation or output reads
    (the equation's own output included, when nothing reads it)."""
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


def peak_bytes(graph: Graph) -> int:
    """The most bytes :func:`interpret` holds at once in the values of ``graph``:
    its inputs, then each equation's output (and as much again for the
    temporaries of a numpy implementation) while the values still read are alive,
    and at the end the copies of the outputs it returns. Constants are not counted
    (the graph holds them anyway).

        >>> import numpy as np, symgrad as sg
        >>> graph = sg.jit(lambda x: np.sum(np.sin(x) * 2.0)).graph(np.ones(1000))
        >>> peak_bytes(graph)  # x and sin(x) alive while 2 * sin(x) is made
        32000
    """
    def nbytes(a: Atom) -> int:
        return a.aval.size * np.dtype(a.aval.dtype).itemsize

    size = {id(e.out): nbytes(e.out) for e in graph.eqns}  # the caller holds the inputs
    live = sum(nbytes(v) for v in graph.inputs)
    peak = live
    for eqn, done in zip(graph.eqns, dead_after(graph)):
        out = nbytes(eqn.out)
        peak = max(peak, live + 2 * out)
        live += out - sum(size[k] for k in done if k in size)
    outs = sum(nbytes(a) for a in graph.outputs)
    return max(peak, live + outs)


def _as_value(x: Any, aval: Aval) -> Any:
    """0-d values are numpy scalars, the rest arrays of the declared dtype."""
    x = np.asarray(x, dtype=aval.dtype)
    if x.shape != aval.shape:
        raise IRError(f"value of shape {x.shape} where {aval} was declared")
    return x[()] if x.ndim == 0 else x


def _owned(x: Any, aval: Aval) -> Any:
    """A result the caller may keep and mutate: never a view of an input."""
    if aval.ndim == 0:
        return np.dtype(aval.dtype).type(x)
    return np.array(x, dtype=aval.dtype, copy=True)


def eqn_vars(graph: Graph) -> Sequence[Var]:
    """All variables of ``graph`` in definition order."""
    return [*graph.inputs, *graph.const_vars, *(e.out for e in graph.eqns)]
