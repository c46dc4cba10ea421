"""Pytrees: nested tuples, lists, dicts and namedtuples of arrays, as JAX has them.

A transformed function may take and return pytrees; symgrad flattens them at
the API boundary into their leaves (the arrays and numbers, in a fixed order),
traces and compiles the flat function, and builds the results back in the
same structure. A list of arrays is a pytree, never stacked into one array.

    >>> leaves, tree = flatten({"w": [1.0, 2.0], "b": (3.0, None)})
    >>> leaves
    [3.0, 1.0, 2.0]
    >>> unflatten(tree, [30.0, 10.0, 20.0])
    {'b': (30.0, None), 'w': [10.0, 20.0]}

Dict keys are sorted (as JAX sorts them), so ``{"w": .., "b": ..}`` and
``{"b": .., "w": ..}`` have the same structure; the rebuilt dict has its keys
in that sorted order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Tree:
    """A pytree's structure without its leaves: hashable, comparable, printable.

    ``kind`` is ``"leaf"``, ``"none"``, ``"tuple"``, ``"list"``, ``"dict"`` or
    ``"namedtuple"``; ``meta`` the dict's keys or the namedtuple's class.
    """

    kind: str
    children: tuple[Tree, ...] = ()
    meta: Any = None

    @property
    def num_leaves(self) -> int:
        if self.kind == "leaf":
            return 1
        return sum(c.num_leaves for c in self.children)

    def __str__(self) -> str:
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        inner = ", ".join(map(str, self.children))
        if self.kind == "dict":
            inner = ", ".join(f"{k!r}: {c}" for k, c in zip(self.meta, self.children))
            return "{" + inner + "}"
        if self.kind == "list":
            return f"[{inner}]"
        if self.kind == "namedtuple":
            return f"{self.meta.__name__}({inner})"
        return f"({inner}{',' if len(self.children) == 1 else ''})"


LEAF = Tree("leaf")


def is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def is_node(x: Any) -> bool:
    """Whether ``x`` is a container that pytrees look into (not a leaf)."""
    return x is None or isinstance(x, (tuple, list, dict))


def flatten(x: Any) -> tuple[list[Any], Tree]:
    """The leaves of ``x`` in order, and its structure."""
    leaves: list[Any] = []
    return leaves, _flatten(x, leaves)


def _flatten(x: Any, leaves: list[Any]) -> Tree:
    if x is None:
        return Tree("none")
    if isinstance(x, dict):
        try:
            keys = tuple(sorted(x))
        except TypeError:
            raise TypeError(f"a dict in a pytree needs sortable keys, got {list(x)!r}") from None
        return Tree("dict", tuple(_flatten(x[k], leaves) for k in keys), keys)
    if is_namedtuple(x):
        return Tree("namedtuple", tuple(_flatten(c, leaves) for c in x), type(x))
    if isinstance(x, (tuple, list)):
        kind = "tuple" if isinstance(x, tuple) else "list"
        return Tree(kind, tuple(_flatten(c, leaves) for c in x))
    leaves.append(x)
    return LEAF


def unflatten(tree: Tree, leaves: Any) -> Any:
    """The pytree of structure ``tree`` with ``leaves`` (an iterable) in order."""
    it = iter(leaves)
    result = _build(tree, it)
    if next(it, _END) is not _END:
        raise ValueError(f"too many leaves for the structure {tree}")
    return result


_END = object()


def _build(tree: Tree, it: Any) -> Any:
    kind = tree.kind
    if kind == "leaf":
        leaf = next(it, _END)
        if leaf is _END:
            raise ValueError("too few leaves for the structure")
        return leaf
    if kind == "none":
        return None
    children = [_build(c, it) for c in tree.children]
    if kind == "dict":
        return dict(zip(tree.meta, children))
    if kind == "namedtuple":
        return tree.meta(*children)
    return tuple(children) if kind == "tuple" else children


def paths(tree: Tree, prefix: str) -> list[str]:
    """A name for each leaf, from the keys and positions that lead to it
    (``params_w``, ``params_b_0``): the kernel's argument names."""
    if tree.kind == "leaf":
        return [prefix]
    if tree.kind == "dict":
        keys = tree.meta
    elif tree.kind == "namedtuple":
        keys = tree.meta._fields
    else:
        keys = range(len(tree.children))
    names: list[str] = []
    for key, child in zip(keys, tree.children):
        names += paths(child, f"{prefix}_{key}")
    return names
