"""Graphs held by control-flow equations, rendered as statements inside a kernel.

A control-flow primitive (:mod:`symgrad.prims.loops`, :mod:`symgrad.prims.control`)
holds graphs: a loop's body, a branch. Its ``emit`` facet gets a :class:`Scope`
(``scope=``), through which it names new variables without clashing with the
kernel's (:meth:`Scope.fresh`) and renders a held graph as statements
(:meth:`Scope.render`, giving a :class:`Rendered`): with the enclosing kernel's
size names, fused loops and flags, so a loop body reads like the rest of the
kernel. The kernel itself is :mod:`.codegen`'s; this module sees it only
through :class:`Host` (what a Scope needs of it), so it imports nothing of
codegen and codegen imports it.

    >>> shape_text(("n0",)), shape_text(("n0", 3))
    ('(n0,)', '(n0, 3)')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ...core.index_text import INDENT
from ...core.ir import (
    BOOL,
    C64,
    C128,
    COMPLEXES,
    F32,
    INT,
    Atom,
    Aval,
    Graph,
    Literal,
    Var,
    usable,
)


class Host(Protocol):
    """What a :class:`Scope` needs of the kernel it renders into (codegen's ``_Kernel``)."""

    all_names: set[str]      # every name the kernel uses (shared with nested graphs)
    sizes: Any               # codegen's Sizes: ``sizes.aval(aval)`` names its sizes
    used_buffers: set[int]   # outputs written into a caller's array

    def nested(self, graph: Graph, buffers: Mapping[int, str]) -> Host:
        """``graph`` as a kernel body inside this one (same sizes, names, flags)."""
        ...

    def body(self) -> list[str]: ...

    def name(self, v: Var) -> str: ...

    def atom(self, a: Atom) -> str: ...


def shape_text(shape: tuple[Any, ...]) -> str:
    """A shape (or any names) as a tuple in source: ``(n0,)``, ``(n0, 3)``."""
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def dtype_arg(dtype: str) -> str:
    """The ``dtype=`` argument of ``np.empty`` for a dtype of the IR (none for float64)."""
    return {BOOL: ", dtype=np.bool_", INT: ", dtype=np.int64",
            F32: ", dtype=np.float32", C128: ", dtype=np.complex128",
            C64: ", dtype=np.complex64"}.get(dtype, "")


def complex_arg(dtype: str) -> str:
    """The ``dtype=`` argument of a new array of a complex dtype; none for a real one (the
    arrays of LAPACK's results, float64 whatever the operands were)."""
    return dtype_arg(dtype) if dtype in COMPLEXES else ""


def zero(dtype: str) -> str:
    """A 0 of ``dtype`` as kernel source: ``0j`` for a complex value, so that Numba types
    a scalar that starts at 0 and takes complex values later as complex."""
    return "0j" if dtype in COMPLEXES else "0.0"


def sum_dtype_arg(dtype: str) -> str:
    """The ``dtype=`` of ``np.zeros`` for a sum of ``dtype`` values: complex128 for both
    complex dtypes (a complex64 sum accumulates in complex128 and is rounded once, as a
    float32 one in float64), else float64 (none)."""
    return ", dtype=np.complex128" if dtype in COMPLEXES else ""


def rounded_sum(name: str, dtype: str, shaped: bool) -> list[str]:
    """The statement rounding ``name``, a sum of ``dtype`` values accumulated as
    :func:`sum_dtype_arg` says, back to ``dtype`` once it is complete (none for float64 and
    complex128): a float32 sum is float32 for what reads it, as in the IR (np.dot of a
    float64 sum and a float32 matrix does not compile; elementwise math would go on in
    float64)."""
    kind = {F32: "np.float32", C64: "np.complex64"}.get(dtype)
    if kind is None:
        return []
    return [f"{name} = {name}.astype({kind})" if shaped else f"{name} = {kind}({name})"]


@dataclass(frozen=True)
class Rendered:
    """A graph rendered as statements inside a kernel: the names its inputs must be bound
    to before ``lines`` run, and then the text of each output. ``used``: the inputs it
    reads; ``fresh``: per output, whether it is a new value (not an input or a view of
    one), which a loop may keep as its carry without a copy."""

    inputs: list[str]
    lines: list[str]
    outputs: list[str]
    used: set[int]
    fresh: list[bool]
    buffers: dict[int, str] = field(default_factory=dict)  # output -> the array it fills


class Scope:
    """What the ``emit`` facet of a control-flow primitive gets (``scope=``): names that
    no other part of the kernel uses, and graphs (loop bodies, branches) rendered as
    statements with the kernel's sizes and fusion."""

    def __init__(self, kernel: Host):
        self.kernel = kernel

    def fresh(self, hint: str) -> str:
        """A new name, ``hint`` or ``hint_1``, ``hint_2``..."""
        name, k = hint, 0
        while name in self.kernel.all_names or not usable(name):
            k += 1
            name = f"{hint}_{k}"
        self.kernel.all_names.add(name)
        return name

    def render(self, graph: Graph, reuse: Sequence[int] = ()) -> Rendered:
        """``graph`` as statements. An output in ``reuse`` that a fused loop computes is
        written into an array the caller provides (``buffers``), which a loop allocates
        once and swaps with the carry, instead of a new array each step."""
        made = {id(e.out) for e in graph.eqns}
        wanted = {id(graph.outputs[k]): k for k in reuse
                  if isinstance(graph.outputs[k], Var) and id(graph.outputs[k]) in made
                  and graph.outputs[k].shape and graph.outputs.count(graph.outputs[k]) == 1}
        names = {key: self.fresh("buffer") for key in wanted}
        inner = self.kernel.nested(graph, names)
        lines = inner.body()
        made_by = {id(e.out): e.prim for e in graph.eqns}
        read = {id(a) for e in graph.eqns for a in e.inputs if isinstance(a, Var)}
        read |= {id(a) for a in graph.outputs if isinstance(a, Var)}
        fresh = [isinstance(a, Literal) or not a.shape or (
            id(a) in made_by and not made_by[id(a)].view) for a in graph.outputs]
        return Rendered([inner.name(v) for v in graph.inputs], lines,
                        [inner.atom(a) for a in graph.outputs],
                        {k for k, v in enumerate(graph.inputs) if id(v) in read}, fresh,
                        {wanted[key]: names[key] for key in inner.used_buffers})

    def init(self, text: str, aval: Aval) -> str:
        """A carry's first value: arrays copied (the loop rebinds the name to arrays the
        body makes, which Numba must type alike: writable and C-contiguous)."""
        return f"{text}.copy()" if aval.shape else text

    def owned(self, r: Rendered, k: int) -> str:
        """Output ``k`` of ``r`` as a value a loop or branch may keep."""
        return r.outputs[k] if r.fresh[k] else f"{r.outputs[k]}.copy()"

    def update(self, names: list[str], r: Rendered, n: int) -> list[str]:
        """``names`` (a loop's carries, the first ``n`` inputs of a body) take the body's
        first ``n`` outputs, all at once."""
        pairs = [(name, r.outputs[k] if r.outputs[k] in names else self.owned(r, k))
                 for k, name in enumerate(names[:n]) if r.outputs[k] != name]
        pairs += [(buffer, names[k]) for k, buffer in r.buffers.items() if k < n]
        if not pairs:
            return []
        return [f"{', '.join(a for a, _ in pairs)} = {', '.join(b for _, b in pairs)}"]

    def empty(self, lead: str, aval: Aval) -> str:
        """``np.empty`` of ``lead`` values of ``aval``, stacked."""
        dims = [lead, *map(str, self.kernel.sizes.aval(aval).shape)]
        return f"np.empty({shape_text(tuple(dims))}{dtype_arg(aval.dtype)})"

    @staticmethod
    def indent(lines: list[str]) -> list[str]:
        """``lines`` as a block (``pass`` for none: a loop whose body does nothing)."""
        return [INDENT + line for line in lines] or [INDENT + "pass"]

    @staticmethod
    def tuple(names: list[str]) -> str:
        return shape_text(tuple(names))
