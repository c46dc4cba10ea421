"""The text around an exported kernel: the public entry function and its checks.

:func:`entry_text` writes the function an exported module offers (``sg.export``): it
takes the user's arguments by their names, checks each leaf's shape and dtype
(:func:`check_input`, copied into the module, raises ValueError naming the expected
ones) and the structure of pytree arguments (dicts, tuples, lists), calls the kernel
with the module's constants, and returns the outputs in the structure the function
returned (:func:`rebuild_text`), as numpy scalars or arrays of their own
(:func:`owned_output`). :func:`require_standalone` refuses a module text that would
import symgrad or read a name it does not define.
"""

from __future__ import annotations

import builtins
import re
import symtable
from typing import Any

import numpy as np

from ..core.ir import Graph
from ..core.pytree import LEAF, Tree
from .numpy_source import is_view


def check_input(value, what, shape, dtype, expected):
    """An argument as the kernel takes it: of ``shape`` exactly, a dtype that converts to
    ``dtype`` without loss; else a ValueError that names the expected arguments."""
    array = np.asarray(value)
    if array.shape != tuple(shape):
        raise ValueError(f"{what} has shape {array.shape}, but this module was exported for "
                         f"{expected}; export again from symgrad for other shapes")
    if array.dtype == object or not np.can_cast(array.dtype, dtype, "safe"):
        raise ValueError(f"{what} has dtype {array.dtype}, which numpy does not cast safely "
                         f"to {dtype} (np.can_cast(..., 'safe')); this module was exported "
                         f"for {expected}: pass a {dtype} value")
    if not array.shape:
        return np.dtype(dtype).type(array)  # a numpy scalar, as the interpreter has it
    return np.ascontiguousarray(array, dtype=dtype)


def owned_output(value, dtype, copy):
    """An output as symgrad returns it: a numpy scalar, or an array of its own."""
    if np.ndim(value) == 0:
        return np.dtype(dtype).type(value)
    return np.array(value, dtype=dtype, copy=True) if copy else np.asarray(value, dtype=dtype)


def entry_text(entry: str, kernel: str, names: list[str], trees: list, leaf_names: list[str],
           expected: list, graph: Graph, out_tree: Tree, consts: list[str], checks: str,
           owned: str, signature: str, what: str, target: str) -> str:
    """The public function: checks and converts the arguments, calls the kernel (with the
    module's constants), returns the outputs in ``fn``'s structure."""
    lines = [f"_EXPECTED = {signature!r}", "", "",
             f"def {entry}({', '.join(names)}):",
             f'    """{what[:1].upper() + what[1:]}.',
             "",
             f"    For {signature} only: other shapes or dtypes raise ValueError.",
             '    """']
    k = 0
    for n, tree in zip(names, trees):
        if tree is not None:
            lines += _structure_checks(tree, n)
        for access, _ in _accesses(tree or LEAF, n):
            shape, dtype = expected[k]
            lines.append(f"    {leaf_names[k]} = {checks}({access}, {access!r}, {shape!r}, "
                         f"{dtype!r}, _EXPECTED)")
            k += 1
    # floating-point errors follow numpy's arithmetic silently, as symgrad's do
    lines.append("    with np.errstate(all='ignore'):")
    lines.append(f"        outs = {kernel}({', '.join([*leaf_names, *consts])})")
    producer = {id(e.out): e for e in graph.eqns}
    leaves = []
    seen: set[int] = set()
    for i, a in enumerate(graph.outputs):
        dtype = str(np.dtype(a.aval.dtype))
        copy = target == "numpy" and (is_view(producer.get(id(a)), graph, a)
                                      or id(a) in seen)
        seen.add(id(a))
        leaves.append(f"{owned}(outs[{i}], {dtype!r}, {copy})")
    lines.append(f"    return {rebuild_text(out_tree, iter(leaves))}")
    return "\n".join(lines)


def _accesses(tree: Tree, root: str) -> list[tuple[str, Tree]]:
    """Python expressions reaching each leaf of an argument of structure ``tree``."""
    if tree.kind == "leaf":
        return [(root, tree)]
    keys = tree.meta if tree.kind == "dict" else range(len(tree.children))
    out: list[tuple[str, Tree]] = []
    for key, child in zip(keys, tree.children):
        out += _accesses(child, f"{root}[{key!r}]")
    return out


def _structure_checks(tree: Tree, root: str) -> list[str]:
    """Lines that raise ValueError unless the argument ``root`` has structure ``tree``."""
    lines = []
    if tree.kind == "leaf":
        return lines
    if tree.kind == "dict":
        keys = sorted(tree.meta)
        lines.append(f"    if not isinstance({root}, dict) or sorted({root}) != {keys!r}:")
        message = f"{root} must be a dict with the keys {keys}"
        lines.append(f"        raise ValueError({message!r})")
    else:
        kind = "tuple" if tree.kind == "tuple" else "list"
        n = len(tree.children)
        lines.append(f"    if not isinstance({root}, (tuple, list)) or len({root}) != {n}:")
        message = f"{root} must be a {kind} of {n} values"
        lines.append(f"        raise ValueError({message!r})")
    keys = tree.meta if tree.kind == "dict" else range(len(tree.children))
    for key, child in zip(keys, tree.children):
        lines += _structure_checks(child, f"{root}[{key!r}]")
    return lines


def rebuild_text(tree: Tree, leaves: Any) -> str:
    """The expression building an output of structure ``tree`` from leaf expressions."""
    if tree.kind == "leaf":
        return next(leaves)
    if tree.kind == "none":
        return "None"
    items = [rebuild_text(c, leaves) for c in tree.children]
    if tree.kind == "dict":
        return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(tree.meta, items)) + "}"
    if tree.kind == "list":
        return "[" + ", ".join(items) + "]"
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def require_standalone(code: str) -> None:
    """Refuse a module that imports symgrad or reads a global name it does not define."""
    if re.search(r"^\s*(import|from)\s+symgrad\b", code, re.MULTILINE):
        raise NotImplementedError("export: the generated module would import symgrad")
    table = symtable.symtable(code, "<export>", "exec")
    defined = {s.get_name() for s in table.get_symbols() if s.is_assigned() or s.is_imported()}
    missing = set()
    stack = [table]
    while stack:
        t = stack.pop()
        stack += t.get_children()
        for s in t.get_symbols():
            name = s.get_name()
            if (s.is_global() or t is table) and s.is_referenced() and name not in defined \
                    and not hasattr(builtins, name):
                missing.add(name)
    if missing:
        raise NotImplementedError(f"export: the generated module reads {sorted(missing)}, "
                                  "which it does not define (a helper export cannot copy)")


__all__ = ["check_input", "entry_text", "owned_output", "rebuild_text", "require_standalone"]
