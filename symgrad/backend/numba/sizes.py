"""Sizes and literals as kernel source text.

A kernel is generic over sizes (:mod:`.codegen`): every size a graph mentions that
its inputs' shapes determine is a name (``n0 = x.shape[0]``), held by :class:`Dim`,
an int that prints as its name, and bound on demand by :class:`Sizes`. The IR text
in the kernel's comments (:class:`Comments`) says those names too, and literals are
written as Numba source by :func:`numba_literal`.

    >>> numba_literal(float("inf")), numba_literal(-2.0), str(Dim(4, "n0"))
    ('np.inf', '(-2.0)', 'n0')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ...core.ir import Aval, Eqn, Graph, Printer, Var, format_param
from ..numpy_source import literal as numba_literal  # noqa: F401 -- one spelling, both backends

#: parameters that hold sizes (``index`` holds (start, stop, step) triples)
SIZE_PARAMS = ("shape", "size", "index")


class Dim(int):
    """A size in kernel source: computes and compares as its value, prints as its name.

    Shapes and size parameters reach the primitives' ``emit`` as Dims, so the
    text they write says ``n0`` where the graph says 4; arithmetic on a Dim
    gives a plain int (a number in the source, correct but size-specific).
    """

    text: str

    def __new__(cls, value: int, text: str) -> Dim:
        dim = super().__new__(cls, value)
        dim.text = text
        return dim

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return self.text if not spec else format(int(self), spec)


class Sizes:
    """The names of a graph's sizes, bound from the kernel's arguments on demand."""

    def __init__(self, graph: Graph, names: Printer):
        self.lines: list[str] = []
        self._named: dict[int, Dim] = {}
        self._given: list[Dim] = []  # sizes read from an argument's shape
        for v in (*graph.inputs, *graph.const_vars):
            for axis, d in enumerate(v.shape):
                if d > 1 and d not in self._named:
                    self._given.append(self._bind(d, f"{names.name(v)}.shape[{axis}]"))

    def _bind(self, value: int, definition: str) -> Dim:
        dim = self._named[value] = Dim(value, f"n{len(self.lines)}")
        self.lines.append(f"{dim} = {definition}")
        return dim

    def dim(self, value: Any) -> Any:
        """``value`` as a named size if it is one the arguments determine."""
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 1:
            return value
        value = int(value)
        if value in self._named:
            return self._named[value]
        for offset in (1, 2, -1, -2):  # x[1:], x[:-1], np.diff: one or two less or more
            for d in self._given:
                if d - offset == value:
                    sign = "-" if offset > 0 else "+"
                    return self._bind(value, f"{d} {sign} {abs(offset)}")
        for i, d in enumerate(self._given):  # a reshape that merges two axes
            for e in self._given[i:]:
                if d * e == value:
                    return self._bind(value, f"{d} * {e}")
        return value

    def aval(self, a: Aval) -> Aval:
        if a.parts:
            return Aval(a.shape, a.dtype, tuple(map(self.aval, a.parts)))
        return Aval(tuple(self.dim(d) for d in a.shape), a.dtype)

    def params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(params)
        for key in SIZE_PARAMS:
            if key not in out:
                continue
            value = out[key]
            if key == "index":
                out[key] = tuple((self.dim(a), self.dim(b), c) for a, b, c in value)
            elif isinstance(value, tuple):
                out[key] = tuple(self.dim(d) for d in value)
            else:
                out[key] = self.dim(value)
        return out


class Comments(Printer):
    """The IR text of the comments, with sizes by name as in the code."""

    def __init__(self, graph: Graph, out_names: Mapping[int, str] | None, sizes: Sizes,
                 reserved: frozenset[str] = frozenset()):
        super().__init__(graph, out_names, reserved)
        self.sizes = sizes

    def typed(self, v: Var) -> str:
        return f"{self.name(v)}: {self.sizes.aval(v.aval)}"

    def eqn(self, e: Eqn) -> str:
        args = [self.atom(a) for a in e.inputs]
        args += [f"{k}={format_param(v)}" for k, v in self.sizes.params(e.params).items()]
        return f"{self.typed(e.out)} = {e.prim.name}({', '.join(args)})"

