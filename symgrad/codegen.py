"""Graph -> readable Python source of one ``numba.njit`` function.

One statement (or one loop nest, for reductions over some axes) per
equation, named as in the printed IR, with the user's argument names; adjoint
statements sit under a ``# grad of: <primal equation>`` comment. Scalars are
Python floats inside the kernel and arrays are numpy arrays. The module is
self-contained (imports numpy and numba only); array constants are extra
arguments so that no data is baked into the source. The header carries the
content key, which is the sha256 of everything below it plus the versions of
codegen and of the derivative conventions.

    >>> import numpy as np, symgrad as sg
    >>> source = sg.jit(lambda x: np.exp(x) * 2.0).source(np.ones(3))
    >>> print(source[source.index("@njit"):].strip())
    @njit(cache=True, error_model="numpy", fastmath=False)
    def f(x):
        a = np.exp(x)
        b = a * 2.0
        return (b,)
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass

from . import __version__
from .ir import Atom, Graph, Literal, Var
from .pretty import Printer, origin_changes
from .primitives import CONVENTIONS_VERSION

#: bump when the generated code for the same IR changes
CODEGEN_VERSION = 1
NJIT_FLAGS = 'cache=True, error_model="numpy", fastmath=False'
INDENT = "    "


@dataclass(frozen=True)
class KernelSource:
    """A generated kernel module: its content key, function name and text."""

    key: str
    function: str
    text: str


def numba_literal(value: float | bool) -> str:
    """A literal as Numba source: ``np.inf``/``np.nan`` where repr would say inf/nan,
    negative values parenthesized (``-2.0 ** y`` would mean ``-(2.0 ** y)``)."""
    if isinstance(value, bool):
        return repr(value)
    if math.isnan(value):
        return "np.nan"
    text = ("np.inf" if value > 0 else "-np.inf") if math.isinf(value) else repr(float(value))
    return f"({text})" if text.startswith("-") else text


class _KernelPrinter(Printer):
    def atom(self, a: Atom) -> str:
        return numba_literal(a.value) if isinstance(a, Literal) else self.name(a)


def generate(graph: Graph, function: str, description: str,
             out_names: Mapping[int, str] | None = None) -> KernelSource:
    """The kernel module for ``graph``; ``function`` names the njit function."""
    p = _KernelPrinter(graph, out_names)
    ir_text = Printer(graph, out_names)  # comments show the IR as ``print(graph)`` does
    args = [p.name(v) for v in (*graph.inputs, *graph.const_vars)]
    body: list[str] = []
    for cite, eqn in origin_changes(graph.eqns):
        if cite is not None:
            body.append(f"# grad of: {ir_text.eqn(cite)}")
        body += eqn.prim.emit(p.name(eqn.out), [p.atom(a) for a in eqn.inputs],
                              [a.aval for a in eqn.inputs], eqn.out.aval, **eqn.params)
    body.append(f"return ({_returns(graph, p)})")

    code = "\n".join([
        f"# {description}",
        f"# {graph.name}({', '.join(ir_text.typed(v) for v in graph.inputs)})",
        "import numpy as np",
        "from numba import njit",
        "",
        "",
        f"@njit({NJIT_FLAGS})",
        f"def {function}({', '.join(args)}):",
        *(INDENT + line for line in body),
        "",
    ])
    versions = (f"symgrad {__version__}, codegen {CODEGEN_VERSION}, "
                f"conventions {CONVENTIONS_VERSION}")
    key = hashlib.sha256(f"{versions}\n{code}".encode()).hexdigest()[:32]
    header = f"# symgrad kernel k_{key} ({versions}); generated, do not edit\n"
    return KernelSource(key, function, header + code)


def _returns(graph: Graph, p: _KernelPrinter) -> str:
    """The return tuple; outputs that could alias an input, a view or each other are copied."""
    produced_by = {id(e.out): e.prim for e in graph.eqns}
    borrowed = {id(v) for v in (*graph.inputs, *graph.const_vars)}
    seen: set[int] = set()
    parts = []
    for a in graph.outputs:
        text = p.atom(a)
        prim = produced_by.get(id(a))
        if isinstance(a, Var) and a.shape and (
                id(a) in borrowed or (prim is not None and prim.view) or id(a) in seen):
            text = f"{text}.copy()"
        if isinstance(a, Var):
            seen.add(id(a))
        parts.append(text)
    return ", ".join(parts) + ("," if len(parts) == 1 else "")
