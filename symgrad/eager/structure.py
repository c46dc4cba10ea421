"""A recorded graph's structure: its nodes (:func:`collect`), what the backward's cache key
holds of them (:func:`plan`), and the structure the last backward ran, recognized in
one walk (:func:`match`).

A training loop records the same structure at every step: new nodes, new result
tensors, the same operations, leaves, data shapes and connections. The general
backward (:mod:`.backward`) finds it by collecting the nodes, sorting them,
planning each input and hashing the whole plan into the
cache key, which for a small graph costs more than its kernel. :func:`match`
instead walks the new graph from its root against the last structure's plan
(:class:`Template`), node by node from the last position down, and gives the same
nodes, leaves and data in the same order as that general path would, or None
when anything differs or needs the general path's care (a freed, retained,
hooked or index-watching node, a result changed behind its node's back, a
changed leaf or data input, a tensor whose version moved): the general path then
runs, and raises or cuts where it must.

Why the order is the general path's. Every node the plan names is reached from
the root through the inputs the plan says; a node is put at the position its
first consumer's plan names, and any other consumer must name the same position
for the same node (one node per position), and one position per node: the
positions must be in creation order (strictly increasing ``seq``), which is the
general path's sort, so two positions never hold one node. Leaves and data are
matched the same way (one object per position, distinct objects at distinct
positions, as the general path's index by identity gives), with the data's shape
and dtype and each node's signature (operation, parameters, literals, dtype)
equal to the plan's.

    >>> import symgrad as torch
    >>> x = torch.ones(3, dtype=torch.float64, requires_grad=True)
    >>> for _ in range(2):
    ...     (x * 2).sum().backward()
    >>> x.grad
    tensor([4., 4., 4.])
"""

from __future__ import annotations

import operator
import weakref
from typing import Any, NamedTuple

import numpy as np

from ..core.ir import Literal
from ..core.tracing import Traced
from . import hooks, views
from .bf16 import refuse_gradients as refuse_bf16
from .graph import Node

#: the IR's names of the dtypes Tensors hold
DTYPE_NAMES = {np.dtype(np.float64): "float64", np.dtype(np.float32): "float32",
               np.dtype(np.bool_): "bool", np.dtype(np.complex128): "complex128"}


def collect(root: Node, cuts: dict[int, Any] | None = None) -> list[Node]:
    """The nodes ``root`` depends on, in creation (topological) order. With ``cuts``,
    a node whose result's values were changed behind its back (:func:`.views.stale`) is
    not entered: its tensor is put in ``cuts`` (by the node's id), to be read as data."""
    seen: dict[int, Node] = {id(root): root}
    stack = [root]
    while stack:
        for a in stack.pop().inputs:
            if isinstance(a, Node) and id(a) not in seen:
                if cuts is not None and (a.made is not None or a.hooked is not None):
                    ref = a.made  # (views.stale's first tests, inlined: no call per node)
                    t = None if ref is None else ref[0]()
                    if t is not None and t._node is a and (t._untracked or t._seen is not None):
                        t = views.stale(a)
                    else:
                        t = None
                    if t is None and a.hooked is not None:
                        t = hooks.hooked(a)  # a tensor with hooks: its gradient first
                    if t is not None:
                        cuts[id(a)] = t
                        continue
                seen[id(a)] = a
                stack.append(a)
    nodes = [root] if len(seen) == 1 else sorted(seen.values(), key=_SEQ)
    refuse_bf16(nodes)  # (PyTorch rounds each node's gradient to bfloat16: see .bf16)
    return nodes


_SEQ = operator.attrgetter("seq")


def plan(nodes: list[Node], cuts: dict[int, Any] | None = None,
          ) -> tuple[list, list[Any], list[np.ndarray]]:
    """What the structure key holds of each node (its signature and where each input
    comes from: an earlier node, a leaf, data or a literal), the leaves and the data
    arrays in the order the kernel takes them. A cut node (see :func:`collect`) is a
    leaf: its tensor's values enter the kernel, and the kernel gives its gradient."""
    # id(node) -> ("eqn", position); id(tensor or cut node) -> ("leaf", position);
    # id(array) -> ("data", position, shape, dtype)
    # (the ("eqn", k) and ("leaf", k) tuples are made once: no tuples per node and step,
    # and the structure key compares them by identity)
    eqns = _EQN_REFS if len(nodes) <= len(_EQN_REFS) else [("eqn", k) for k in range(len(nodes))]
    index: dict[int, tuple] = dict(zip(map(id, nodes), eqns))
    leaf_tensors: list[Any] = []
    data_values: list[np.ndarray] = []
    plan = []
    for n in nodes:
        refs: list[Any] = []
        for a in n.inputs:
            ref = index.get(id(a))
            if ref is None:
                if isinstance(a, Node):  # a cut
                    ref = index[id(a)] = _leaf_ref(len(leaf_tensors))
                    leaf_tensors.append(cuts[id(a)])
                elif isinstance(a, Traced):  # a leaf tensor
                    ref = index[id(a)] = _leaf_ref(len(leaf_tensors))
                    leaf_tensors.append(a)
                elif isinstance(a, Literal):
                    pass  # its value is in n.sig
                else:
                    ref = index[id(a)] = ("data", len(data_values), a.shape,
                                          DTYPE_NAMES.get(a.dtype))
                    data_values.append(a)
            refs.append(ref)
        plan.append((n.sig, tuple(refs)))
    return plan, leaf_tensors, data_values


_EQN_REFS = [("eqn", k) for k in range(256)]
_LEAF_REFS = [("leaf", k) for k in range(64)]


def _leaf_ref(k: int) -> tuple[str, int]:
    return _LEAF_REFS[k] if k < len(_LEAF_REFS) else ("leaf", k)


class Template(NamedTuple):
    """The last structure a backward ran without cuts, retained gradients or changed
    inputs: its cache key (``key[0]`` is its plan) and entry, and the shape and dtype
    of each of its leaves' values and of its data arrays (``values``: the two tuples).
    A match has them all (so its leaves' values have the dtypes the key's float32 flag
    was found from). ``walk``: where the compiled walk of the entry's structure is kept,
    with the ``values`` it checks (:func:`match`; one holder per cache entry, so a loop
    alternating structures compiles each walk once)."""

    key: tuple
    entry: Any
    values: tuple[tuple, tuple]
    walk: list


def match(root: Node, template: Template) -> tuple[list, list, list] | None:
    """The nodes, leaf tensors and data arrays of ``root``'s graph in the general path's
    order when it has ``template``'s plan and needs no check that the general path makes
    (the module docstring), else None. The walk is Python code written for the plan
    (:func:`_walk_source`), compiled on the first match of a structure: 3.5 -> 1.2 us for
    the seeds' 4 nodes; compiling takes ~0.2 ms a node, so a plan of more than
    ``WRITTEN_WALKS`` nodes is walked by a loop (:func:`_loop_walk`)."""
    if len(template.key[0]) > WRITTEN_WALKS:
        return _loop_walk(root, template)
    held = template.walk  # [values, their walk, {values: walk} of every values seen]
    values = template.values
    if held[0] is not values:  # (a new template: the walk by its values, then by identity)
        walk = held[2].get(values)
        if walk is None:
            walk = held[2][values] = compile_walk(template.key[0], *values)
        held[0], held[1] = values, walk
    return held[1](root)


#: the largest plan whose walk is written out and compiled (about 40 ms to compile)
WRITTEN_WALKS = 200


def compile_walk(plan: list, leaves: tuple, data: tuple) -> Any:
    """:func:`match`'s walk of ``plan`` as one function of the root (no loop over the
    plan, no unpacking of its references: one test per fact)."""
    consts: dict[str, Any] = {"Node": Node, "Traced": Traced, "Literal": Literal,
                              "ndarray": np.ndarray, "weakref_ref": weakref.ref}
    source = _walk_source(plan, leaves, data, consts)
    code = compile(source, f"<symgrad structure walk of {len(plan)} nodes>", "exec")
    exec(code, consts)  # noqa: S102 -- the source is ours, made from the plan's positions
    return consts["walk"]


def _walk_source(plan: list, leaves: tuple, data: tuple, consts: dict[str, Any]) -> str:
    """The source of ``walk(root)``: the plan's positions from the last down, each
    node's checks in the order of the general path's (see the module docstring), its
    inputs bound to the positions, leaves and data the plan names (the first consumer
    binds, the others must give the same object); a plan no graph can match (a position
    no consumer names) gives a walk that matches nothing."""
    never = "def walk(root):\n    return None\n"
    count = len(plan)
    last = count - 1
    lines = ["def walk(root):", f"    n{last} = root", f"    s{count} = root.seq + 1"]
    bound: set[str] = {f"n{last}"}
    for k in range(last, -1, -1):
        if f"n{k}" not in bound:  # (no consumer names this position)
            return never
        sig, refs = plan[k]
        consts[f"S{k}"] = sig
        n = f"n{k}"
        lines += [
            f"    s{k} = {n}.seq",  # (positions in creation order: the general path's sort)
            f"    if s{k} >= s{k + 1}: return None",
            f"    i = {n}.inputs",
            f"    if (({n}.sig is not S{k} and {n}.sig != S{k}) or len(i) != {len(refs)}"
            f" or {n}.freed or {n}.retained is not None or {n}.indices): return None"]
        if k != last:  # (the general path cuts a hooked node or a changed result)
            lines += [
                f"    if {n}.hooked is not None: return None",
                f"    m = {n}.made",
                "    if m is not None:",
                "        t = m[0]()",
                f"        if t is not None and t._node is {n} and"
                " (t._untracked or t._seen is not None): return None"]
        lines += [
            f"    for r, v in {n}.versions:",
            "        t = r() if type(r) is weakref_ref or isinstance(r, weakref_ref) else r",
            "        if t is not None and t._version != v: return None",
            f"    for _, t, v in {n}.reads:",
            f"        if t._version != v or (t._untracked < 0 and -t._untracked > s{k}):"
            " return None"]
        for x, r in enumerate(refs):
            a = f"i[{x}]"
            if r is None:  # a literal (its value is in the node's signature)
                lines.append(f"    if type({a}) is not Literal: return None")
                continue
            kind, j = r[0], r[1]
            name = {"eqn": "n", "leaf": "l"}.get(kind, "d") + str(j)
            if kind == "eqn" and j >= k:  # (never from a plan of sorted nodes)
                return never
            if name in bound:
                lines.append(f"    if {a} is not {name}: return None")
                continue
            bound.add(name)
            lines.append(f"    {name} = {a}")
            if kind == "eqn":
                lines.append(f"    if not isinstance({name}, Node): return None")
            elif kind == "leaf":
                consts[f"LS{j}"], consts[f"LD{j}"] = leaves[j]
                lines += [f"    if isinstance({name}, Node) or not isinstance({name}, "
                          "Traced): return None",
                          f"    v = {name}._value",
                          f"    if v.shape != LS{j} or (v.dtype is not LD{j} and v.dtype != "
                          f"LD{j}): return None"]
            else:
                consts[f"DS{j}"], consts[f"DD{j}"] = data[j]
                lines.append(f"    if (type({name}) is not ndarray or {name}.shape != DS{j}"
                             f" or ({name}.dtype is not DD{j} and {name}.dtype != DD{j})):"
                             " return None")
    leaf_names = [f"l{j}" for j in range(len(leaves))]
    data_names = [f"d{j}" for j in range(len(data))]
    for names in (leaf_names, data_names):
        if not bound.issuperset(names):  # (a leaf or data position no node names)
            return never
        if len(names) == 2:  # distinct objects at distinct positions
            lines.append(f"    if {names[0]} is {names[1]}: return None")
        elif len(names) > 2:
            lines.append(f"    if len({{{', '.join(f'id({a})' for a in names)}}}) != "
                         f"{len(names)}: return None")
    lines.append(f"    return [{', '.join(f'n{k}' for k in range(count))}], "
                 f"[{', '.join(leaf_names)}], [{', '.join(data_names)}]")
    return "\n".join(lines) + "\n"


def _loop_walk(root: Node, template: Template) -> tuple[list, list, list] | None:
    """:func:`match` of a plan of more than ``WRITTEN_WALKS`` nodes: one loop over the
    plan, testing what :func:`_walk_source` writes out (the same facts in the same order)."""
    plan = template.key[0]
    count = len(plan)
    nodes: list[Any] = [None] * count
    nodes[-1] = root
    kinds, shapes = template.values
    leaves: list[Any] = [None] * len(kinds)
    data: list[Any] = [None] * len(shapes)
    later = root.seq + 1  # (the seq of the node at the next position)
    for k in range(count - 1, -1, -1):
        n = nodes[k]
        # (a position found by no consumer, or positions not in creation order: the
        # general path's sort, one node per position)
        if n is None or n.seq >= later:
            return None
        later = n.seq
        sig, refs = plan[k]
        inputs = n.inputs
        if ((n.sig is not sig and n.sig != sig) or len(inputs) != len(refs) or n.freed
                or n.retained is not None or n.indices):
            return None
        if n is not root:  # (the general path cuts a hooked node or a changed result)
            if n.hooked is not None:
                return None
            made = n.made
            t = made[0]() if made is not None else None
            if t is not None and t._node is n and (t._untracked or t._seen is not None):
                return None
        for ref, version in n.versions:
            t = ref() if type(ref) is _REF or isinstance(ref, weakref.ref) else ref
            if t is not None and t._version != version:
                return None
        for _, t, version in n.reads:
            if t._version != version or (t._untracked < 0 and -t._untracked > n.seq):
                return None
        for a, r in zip(inputs, refs):
            if r is None:  # a literal (its value is in the node's signature)
                if type(a) is not Literal:
                    return None
                continue
            kind, j = r[0], r[1]
            if kind == "eqn":
                b = nodes[j]
                if b is None:
                    if not isinstance(a, Node):
                        return None
                    nodes[j] = a
                elif b is not a:
                    return None
            elif kind == "leaf":
                b = leaves[j]
                if b is None:
                    if isinstance(a, Node) or not isinstance(a, Traced):
                        return None
                    shape, dtype = kinds[j]
                    v = a._value
                    if v.shape != shape or (v.dtype is not dtype and v.dtype != dtype):
                        return None
                    leaves[j] = a
                elif b is not a:
                    return None
            else:
                b = data[j]
                if b is None:
                    shape, dtype = shapes[j]
                    if (type(a) is not np.ndarray or a.shape != shape
                            or (a.dtype is not dtype and a.dtype != dtype)):
                        return None
                    data[j] = a
                elif b is not a:
                    return None
    if not (_distinct(leaves) and _distinct(data)):
        return None
    return nodes, leaves, data


_REF = weakref.ref


def _distinct(objects: list[Any]) -> bool:
    if len(objects) < 2:
        return True
    if len(objects) == 2:
        return objects[0] is not objects[1]
    return len(set(map(id, objects))) == len(objects)
