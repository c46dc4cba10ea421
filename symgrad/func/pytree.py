"""Pytrees as ``torch.func`` reads them: tuples (namedtuples too), lists and dicts of
leaves, nested; ``None`` is an empty node. Dict keys keep their insertion order, as
PyTorch's pytrees do (:mod:`symgrad.core.pytree` sorts them, as JAX does: a separate home
for a different rule). A spec rebuilds the structure around new
leaves (:func:`unflatten`); two specs are equal when the structures are."""

from __future__ import annotations

from typing import Any

#: a leaf's spec
LEAF = ("*",)


def flatten(tree: Any) -> tuple[list[Any], Any]:
    """(the leaves in order, the structure's spec)."""
    leaves: list[Any] = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree: Any, leaves: list[Any]) -> Any:
    if tree is None:
        return ("None",)
    if isinstance(tree, (tuple, list)):
        return (type(tree), tuple(_flatten(t, leaves) for t in tree))
    if isinstance(tree, dict):
        keys = tuple(tree)
        return (type(tree), tuple(_flatten(tree[k], leaves) for k in keys), keys)
    leaves.append(tree)
    return LEAF


def unflatten(leaves: list[Any], spec: Any) -> Any:
    it = iter(leaves)
    return _build(spec, it)


def _build(spec: Any, it: Any) -> Any:
    if spec == LEAF:
        return next(it)
    if spec == ("None",):
        return None
    kind, children = spec[0], [_build(s, it) for s in spec[1]]
    if issubclass(kind, dict):
        return kind(zip(spec[2], children))
    if issubclass(kind, tuple) and hasattr(kind, "_fields"):  # a namedtuple
        return kind(*children)
    return kind(children)


def has_none(spec: Any) -> bool:
    """Whether the structure holds a None."""
    if spec == ("None",):
        return True
    return spec != LEAF and any(has_none(s) for s in spec[1])


def leaves_count(spec: Any) -> int:
    if spec == LEAF:
        return 1
    if spec == ("None",):
        return 0
    return sum(leaves_count(s) for s in spec[1])


def describe(spec: Any, indent: int = 0) -> str:
    """The structure in a message, as PyTorch's ``TreeSpec`` prints it (``*``: a leaf)."""
    if spec == LEAF:
        return "*"
    kind = type(None) if spec == ("None",) else spec[0]
    children = [] if spec == ("None",) else list(spec[1])
    context = list(spec[2]) if len(spec) > 2 else None
    text = ""
    if children:
        indent += 2
        text = describe(children[0], indent) + ("," if len(children) > 1 else "")
        text += ",".join("\n" + " " * indent + describe(c, indent) for c in children[1:])
    return f"TreeSpec({kind.__name__}, {context}, [{text}])"


def broadcast_prefix(prefix: Any, tree: Any, is_leaf_value: Any) -> list[Any] | None:
    """``prefix`` (``in_dims``/``out_dims``: a value or a tree matching the top of
    ``tree``) as one value per leaf of ``tree``; None when the structures differ."""
    if is_leaf_value(prefix):
        return [prefix] * len(flatten(tree)[0])
    if isinstance(prefix, (tuple, list)) and isinstance(tree, (tuple, list)):
        if len(prefix) != len(tree):
            return None
        out: list[Any] = []
        for p, t in zip(prefix, tree):
            sub = broadcast_prefix(p, t, is_leaf_value)
            if sub is None:
                return None
            out += sub
        return out
    if isinstance(prefix, dict) and isinstance(tree, dict):
        if set(prefix) != set(tree):
            return None
        out = []
        for k in tree:
            sub = broadcast_prefix(prefix[k], tree[k], is_leaf_value)
            if sub is None:
                return None
            out += sub
        return out
    return None
