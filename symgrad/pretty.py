"""The text form of the IR: what ``print(graph)`` shows and golden tests compare.

Format (one line per equation, Python-like)::

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

Names are deterministic and never collide: inputs keep their argument names
(suffixed ``_1``, ``_2``... if needed), the remaining values get ``a``, ``b``,
..., ``z``, ``aa``, ``ab``... in definition order, skipping any name already
taken, Python keywords, ``l`` and the names generated code reserves.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterable, Iterator, Mapping
from itertools import count

import numpy as np

from .ir import Atom, Eqn, Graph, Literal, Var, eqn_vars

#: names that generated kernels use for themselves
RESERVED = frozenset({"np", "njit", "math", "inf", "nan", "True", "False", "None",
                      "acc", "value", "kernel",
                      # builtins kernels call (a parameter named range would shadow it)
                      "range", "float", "int", "bool", "enumerate", "len", "abs", "min",
                      "max", "zip",
                      "l", "O", "I"})  # and names that read like 1 and 0
_INDEX_NAME = re.compile(r"[in]\d+$")  # loop indices and sizes (n0 = x.shape[0]) in kernels


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


def assign_names(graph: Graph, out_names: Mapping[int, str] | None = None) -> dict[int, str]:
    """Map ``id(var)`` to a unique, valid Python name for every var of ``graph``.

    ``out_names`` optionally names outputs by position (e.g. ``{1: "ct_x"}``);
    an output that is also an input keeps the input's name.
    """
    names: dict[int, str] = {}
    taken: set[str] = set()

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


def format_literal(value: float | bool) -> str:
    """A literal as Python source would spell it."""
    if isinstance(value, (bool, np.bool_)):
        return repr(bool(value))
    return repr(float(value))


def format_param(value: object) -> str:
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
    """Formats atoms and equations of one graph with one naming."""

    def __init__(self, graph: Graph, out_names: Mapping[int, str] | None = None):
        self.graph = graph
        self.names = assign_names(graph, out_names)
        self._taken = set(self.names.values())
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
