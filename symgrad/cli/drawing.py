"""Pictures of the computational graph, drawn as the seed tutorials draw them.

Leaves (the variables a user creates: graph inputs, array constants, literal
numbers) are boxes; results of operations are ellipses with the operation that
made them (their ``grad_fn``). ``requires_grad`` is marked on every value:
true for the differentiated inputs and everything computed from them. With
the adjoint, symgrad's optimized forward + adjoint graph is drawn beside the
forward one, adjoint equations shaded and labelled with the primal equation
whose VJP produced them.

:func:`to_dot` writes DOT text itself, so ``.dot`` output needs nothing else;
:func:`render` hands the text to the ``graphviz`` package (the ``graph``
extra), which runs Graphviz's ``dot`` program.

    >>> import numpy as np, symgrad as sg
    >>> graph = sg.jit(lambda x: np.sum(x * 2.0)).graph(np.ones(3))
    >>> print(to_dot(graph, {0}).splitlines()[0])
    digraph symgrad {
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path

from ..core.ir import Graph, Literal, Printer, Var

FORMATS = ("svg", "png", "pdf", "dot")

_LEAF = 'shape=box, style="rounded,filled", fillcolor="#dbeafe"'
_CONST = 'shape=box, style="rounded,filled", fillcolor="#e5e7eb"'
_LITERAL = 'shape=plaintext, fontsize=10'
_RESULT = 'shape=ellipse, style=filled, fillcolor="#fef3c7"'
_ADJOINT = 'shape=ellipse, style=filled, fillcolor="#fecaca"'


class RenderError(RuntimeError):
    """Rendering needs something that is missing (the graphviz package or ``dot``)."""


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _cluster(graph: Graph, prefix: str, requires: set[int], title: str,
             out_names: Mapping[int, str] | None = None) -> list[str]:
    """DOT lines of one graph; ``requires`` holds the indices of inputs needing a gradient."""
    p = Printer(graph, out_names)
    node: dict[int, str] = {}
    needs: set[int] = set()
    lines = [f"  subgraph cluster_{prefix} {{", f"    label={_quote(title)};",
             '    fontname="Helvetica"; color="#9ca3af";']
    for k, v in enumerate(graph.inputs):
        node[id(v)] = f"{prefix}{len(node)}"
        flag = k in requires
        if flag:
            needs.add(id(v))
        label = f"{p.name(v)}\n{v.aval}\nleaf, requires_grad={flag}"
        lines.append(f"    {node[id(v)]} [{_LEAF}, label={_quote(label)}];")
    for v, _ in graph.consts:
        node[id(v)] = f"{prefix}{len(node)}"
        label = f"{p.name(v)}\nconst {v.aval}\nleaf, requires_grad=False"
        lines.append(f"    {node[id(v)]} [{_CONST}, label={_quote(label)}];")
    outputs = {id(a): k for k, a in enumerate(graph.outputs) if isinstance(a, Var)}
    literals = 0
    for eqn in graph.eqns:
        ident = f"{prefix}{len(node)}"
        node[id(eqn.out)] = ident
        flag = any(isinstance(a, Var) and id(a) in needs for a in eqn.inputs)
        if flag:
            needs.add(id(eqn.out))
        args = ", ".join(p.atom(a) for a in eqn.inputs)
        params = "".join(f", {k}={v}" for k, v in eqn.params.items())
        label = f"{p.name(eqn.out)} = {eqn.prim.name}({args}{params})\n{eqn.out.aval}\n"
        if eqn.origin is None:  # as the seeds print a result: its grad_fn and requires_grad
            grad_fn = f"<{eqn.prim.name.capitalize()}Backward>" if flag else "None"
            label += f"grad_fn={grad_fn}, requires_grad={flag}"
        else:
            label += f"grad of {p.name(eqn.origin.out)} = {eqn.origin.prim.name}(...)"
        style = _ADJOINT if eqn.origin is not None else _RESULT
        extra = ""
        if id(eqn.out) in outputs:
            extra = ", peripheries=2, penwidth=1.5"
            label = f"output: {label}"
        lines.append(f"    {ident} [{style}{extra}, label={_quote(label)}];")
        for a in eqn.inputs:
            if isinstance(a, Literal):
                lit = f"{prefix}lit{literals}"
                literals += 1
                lines.append(f"    {lit} [{_LITERAL}, label={_quote(p.atom(a))}];")
                lines.append(f"    {lit} -> {ident};")
            else:
                lines.append(f"    {node[id(a)]} -> {ident};")
    lines.append("  }")
    return lines


def to_dot(forward: Graph, wrt: set[int], adjoint: Graph | None = None,
           n_primal: int = 1, wrt_names: tuple[str, ...] = ()) -> str:
    """DOT text of ``forward`` (and ``adjoint``, the forward + adjoint graph, beside it)."""
    lines = ["digraph symgrad {", "  rankdir=TB;", '  node [fontname="Helvetica"];',
             '  edge [color="#4b5563"];']
    lines += _cluster(forward, "f", wrt, f"forward: {forward.name}")
    if adjoint is not None:
        names = {n_primal + k: f"grad_{n}" for k, n in enumerate(wrt_names)}
        # the adjoint graph's inputs: the primal inputs, then the cotangents
        lines += _cluster(adjoint, "a", set(range(len(forward.inputs))) & wrt,
                          f"forward + adjoint (optimized): gradient of {forward.name}", names)
    lines.append("}")
    return "\n".join(lines) + "\n"


def render(dot: str, path: Path) -> None:
    """Write ``dot`` to ``path`` as DOT text or, by suffix, rendered by Graphviz.

    The file appears whole or not at all: the bytes go to a temporary file
    beside it, renamed over ``path`` once written (and removed if writing fails).
    """
    fmt = path.suffix.lstrip(".").lower()
    if fmt not in FORMATS:
        raise ValueError(f"cannot write {path.name}: the output must end in "
                         f"{', '.join('.' + f for f in FORMATS)}")
    if fmt == "dot":
        write_whole(path, dot.encode())
        return
    try:
        import graphviz
    except ImportError:
        raise RenderError(f"writing .{fmt} needs the graphviz Python package "
                          "(pip install 'symgrad[graph]') and Graphviz's dot program; "
                          "or write a .dot file") from None
    try:
        data = graphviz.Source(dot).pipe(format=fmt)
    except graphviz.ExecutableNotFound:
        raise RenderError(f"writing .{fmt} needs Graphviz's dot program on PATH "
                          "(e.g. apt install graphviz); or write a .dot file") from None
    write_whole(path, data)


def write_whole(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same directory, so
    that a failed write leaves neither a partial ``path`` nor the temporary file."""
    import os
    import tempfile

    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp",
                                     dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        os.chmod(temporary, 0o666 & ~_umask())  # as open() would have made it
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _umask() -> int:
    import os

    mask = os.umask(0)
    os.umask(mask)
    return mask


__all__ = ["to_dot", "render", "write_whole", "RenderError", "FORMATS"]
