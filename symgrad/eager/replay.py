"""A training step replayed: the backward kernel reads the forward's values, not recomputes.

A training loop records the same graph of Tensor operations step after step; its
backward (:mod:`.backward`) lowers that structure once and calls one compiled
kernel per step. That kernel used to recompute the whole forward from the
leaves and the data (a second ``X @ W1``, ``exp``, ...), because a node kept only
a weak reference to its result. Here a node also keeps its value (:func:`keep`,
as PyTorch's nodes keep their saved tensors), and the backward kernel of the
structure takes those values as inputs: the forward is computed once, by the
eager operations, and the kernel runs the reverse sweep alone (:func:`lower`).

The guard. A value is fed to the kernel only if nothing can have changed it
since its node computed it (:func:`fed`), else the kernel recomputes it as
before (which node values are fed is part of the structure's cache key):

- it is a fresh float64 or float32 array that owns its memory (not a view of another
  tensor, not one of the operation's inputs returned as it is), so only writes
  into this very array can change it (a float32 value enters a float32 kernel as it
  is, a float64 one converted, as a float32 leaf does: :mod:`.backward`; either way
  the gradient is computed from the float32 values the forward computed, as PyTorch's);
- its memory was not written since (``Node.exposed``): set by ``Tensor._bump`` (in-place
  operations, optimizer updates, ``.data`` writes) on the tensor's own node and those
  of its aliases, and, for a node whose memory was handed out (``detach()``, ``.data``:
  :func:`expose`), by :func:`written` on any write into memory it shares, even after
  its tensor is gone. A handout alone does not stop the feed: the value is the
  forward's until a write happens (a float32 value recomputed in float64 could take
  the other side of a kink). Memory handed to numpy (``alias.numpy()``), whose writes
  count nothing, is compared bit for bit with a copy taken then (:func:`handed_array`).
  So a loop that updates its parameters after ``backward`` (every optimizer) feeds
  everything, and so does a write of a leaf or of an unrelated tensor between forward
  and backward;
- its primitive is a plain one (no bodies, no ``linearized`` facet:
  ``autograd.Function`` and control flow recompute). Of those values, the kernel reads
  the ones that cost more to recompute than to read (not ``RECOMPUTED``: sums,
  products, comparisons, ``where``, reshapes are recomputed in its fused loops), and
  every float32 one: recomputed in float64 it is not the forward's value (nor,
  through a function such as ``exp``, necessarily in a float32 kernel, whose
  ``exp`` is not numpy's), and a ``relu``, ``abs``, ``maximum``, ``sign`` ... of it
  could take the other side of its kink.

Leaves changed between forward and backward. A node watches the version of a leaf
or data input only where PyTorch's node saves it (so the same programs raise
"modified by an inplace operation"); PyTorch's backward then reads its saved values
and never recomputes. When a leaf or data input was changed since the forward (under
``no_grad``, through ``.data``: :func:`changed_inputs`), the kernel reads every valid
kept value, and :func:`refuse_unmatched` raises a RuntimeError where it would still
recompute a needed value from the changed values, or read them by a rule unlike
PyTorch's, instead of returning another gradient. A composite (``F.gelu``,
``F.mse_loss``, ``clamp``: one node in PyTorch, several here, marked by
:func:`.method_args.named`) reads its inputs as they are now in PyTorch, against values
computed from the old ones here: :func:`refuse_composites` raises where a changed input
reaches one of its inner values or masks (PyTorch's version error for a counted change).

Everything else is unchanged: the structure key (nodes, shapes, dtypes, exponents,
retained gradients, the cotangent's shape) still decides which kernel runs, the
version counters still raise PyTorch's "modified by an inplace operation" error
before any kernel runs, and a changed structure (another op sequence, a shape,
``requires_grad``, ``no_grad`` regions) is a new key and a new kernel.
:func:`replay_stats` counts backward runs whose kernel read saved values
(``replayed``), how many values they read, and the runs that recomputed all
(``recomputed``), so a benchmark or a test can see the replay happen.
"""

from __future__ import annotations

import collections
import sys
import weakref
from dataclasses import replace
from typing import Any

import numpy as np

from ..core.ir import Aval, Eqn, Graph, Var, freeze_params
from ..core.tracing import Traced
from ..prims import REGISTRY
from ..prims.linalg import linear_p, matmul_p
from ..prims.reductions import transpose_p
from ..transforms import pipeline
from .graph import Node
from .torch_facts import READS_NO_INPUTS, product_saves, saves_nothing, torch_facts

#: the dtypes of the values kept: float64, and float32 (the backward computes from the
#: float32 values the forward computed, as PyTorch's from its saved tensors)
_KEPT = (np.dtype(np.float64), np.dtype(np.float32))
_F32 = np.dtype(np.float32)
#: the nodes whose values' memory was handed out (:func:`expose`), watched by :func:`written`
_HANDED: weakref.WeakSet = weakref.WeakSet()
_STATS = {"replayed": 0, "fed_values": 0, "recomputed": 0}


def replay_stats() -> dict[str, int]:
    """Backward runs whose kernel read the forward's saved values (``replayed``), the
    values read in all (``fed_values``), and runs that recomputed the whole forward."""
    return dict(_STATS)


#: primitives whose values the kernel recomputes rather than reads: a few cycles per
#: element inside the loop it fuses them into, less than reading a saved array (and a
#: Numba argument more to type at every call: the seeds' graph of 1000 values ran
#: slower with its sums and products fed than recomputed)
RECOMPUTED = frozenset(REGISTRY[name] for name in (
    "abs", "add", "sub", "mul", "neg", "div", "square", "maximum", "minimum", "relu",
    "sign", "where", "convert", "to_float", "eq", "ne", "lt", "le", "gt", "ge", "floor",
    "ceil", "trunc", "rint", "reshape", "transpose", "broadcast_to", "slice"))


def keep(node: Any, value: Any, inputs: Any) -> None:
    """Keep ``value`` as ``node``'s saved result if it is a fresh float64 or float32 array
    (owning its memory, none of the operation's ``inputs``; or the only view of a fresh
    array: numpy's reshape of a permuted array copies it and returns a view of the copy)
    of a plain primitive (as PyTorch's nodes keep their saved tensors: which of them a
    backward reads is :func:`fed`'s choice)."""
    if (type(value) is np.ndarray and value.dtype in _KEPT
            and (value.flags.owndata or _sole_view(value))
            and not node.prim.subgraphs and node.prim.linearized is None):
        for v in inputs:
            if v is value:
                return
        node.value = value


def forget(t: Any) -> None:
    """``t``'s node keeps no value: for an intermediate result that no derivative rule
    reads, so that its memory goes back to numpy with ``t`` and the next result reuses it
    while it is in the cache (attention's scores, read by neither ``* scale``, ``+ mask``
    nor ``softmax``, whose rule reads its output: three 0.26 MB arrays per layer of the
    transformer benchmark, kept for nothing). Should the backward need it after all, it
    recomputes it, as any value not kept."""
    node = getattr(t, "_node", None)
    if node is not None:
        node.value = None


def _sole_view(value: np.ndarray) -> bool:
    """``value`` is a view of all of an array that owns its memory and that nothing else
    refers to (so of none of the operation's inputs, nor shared with any other array):
    only writes into ``value`` can change it, as for an array owning its memory."""
    if sys.getrefcount(value.base) != 2:  # (value's reference, and the call's)
        return False
    base = value.base
    return type(base) is np.ndarray and base.flags.owndata and base.nbytes == value.nbytes


def expose(t: Any) -> None:
    """``t``'s memory was handed to a tensor that may write it (``detach()``, ``.data``,
    ``.data = t``): its node is watched by :func:`written`, which marks it when a write
    into that memory really happens; until then its value is the forward's and is fed
    (a float32 value recomputed in float64 could take the other side of a kink). A node
    that saves its output (``exp``) now holds ``t`` itself rather than a weak reference:
    PyTorch's version counter is shared with the alias, so a write through the alias
    after ``t`` is gone still makes the backward raise "modified by an inplace
    operation"."""
    node = t._node
    if node is None:
        return
    if node.value is not None:
        _HANDED.add(node)
    if any(isinstance(r, weakref.ref) and r() is t for r, _ in node.versions):
        node.versions = tuple((t, v) if isinstance(r, weakref.ref) and r() is t else (r, v)
                              for r, v in node.versions)


def written(array: np.ndarray) -> None:
    """``array``'s memory was written in place (``Tensor._bump``, or a gradient set to a
    tensor that backward will add into): the handed-out nodes whose values share it
    are not fed any more (:func:`valid`). Their own tensor's node is marked by the
    caller."""
    if not _HANDED.data:  # (its references: empty, no node to watch; len() is Python's)
        return
    done = []
    for n in _HANDED:
        v = n.value
        if v is None or n.exposed:  # (freed by a backward, or marked: no more to watch)
            done.append(n)
        elif np.may_share_memory(v, array):
            n.exposed = True
            done.append(n)
    for n in done:
        _HANDED.discard(n)


def handed_array(array: np.ndarray) -> None:
    """``array`` (``alias.numpy()``) was handed to numpy, whose writes count no version:
    each handed-out node sharing its memory keeps a copy of its value, and feeds the
    value only while the two are equal, bit for bit (:func:`valid`)."""
    for n in _HANDED:
        v = n.value
        if (v is not None and not n.exposed and n.seen is None
                and np.may_share_memory(v, array)):
            n.seen = v.copy()


def valid(n: Any) -> bool:
    """``n``'s kept value is still what its forward computed: its memory was not written
    since (``Node.exposed``), nor changed through a numpy array handed out (``Node.seen``,
    compared bit for bit, so -0.0 is not 0.0)."""
    v = n.value
    if v is None or n.exposed:
        return False
    seen = n.seen
    if seen is None:
        return True
    bits = np.dtype(f"u{v.dtype.itemsize}")
    if np.array_equal(seen.view(bits), v.view(bits)):
        return True
    n.exposed = True
    return False


def fed(nodes: list[Any], every: bool = False) -> tuple[int, ...]:
    """The positions of the nodes whose saved values the kernel reads. A value is read
    only if it is :func:`valid` (nothing wrote its memory since the forward). Of those,
    the kernel reads those that cost more to recompute than to
    read (not ``RECOMPUTED``), and every float32 one: a kernel in float64 (a graph not
    all of float32) would recompute another value than the forward's (``W*X - Y``
    exactly 0 in float32 is not 0 in float64, and a ``relu`` or ``abs`` after it would
    take the other side of its kink), a float32 kernel another ``exp`` than numpy's.
    With ``every``, it reads every valid value (a leaf changed since the forward:
    :func:`refuse_unmatched`)."""
    found = []
    for k, n in enumerate(nodes):  # (valid's common case inlined: no call per node)
        v = n.value
        if v is None or n.exposed or (n.seen is not None and not valid(n)):
            continue
        if every or v.dtype is _F32 or n.prim not in RECOMPUTED:
            found.append(k)
    return tuple(found)


def saved_value(node: Any) -> Any:
    """``node``'s kept value if nothing wrote it since (see :func:`fed`), else None."""
    return node.value if valid(node) else None


def changed_inputs(nodes: list[Any], cuts: dict[int, Any] | None = None
                   ) -> dict[int, dict[int, tuple[bool, bool]]]:
    """For each node (by id) with a leaf or data input changed in place since the node was
    made (PyTorch lets a backward through it run when its node did not save that input,
    or when the change went through ``.data``), or an input that is a result whose
    values changed behind its node's back (``cuts``: :func:`.views.stale`, read as
    they are now): those inputs' positions, each with whether a version counted the
    change (an in-place operation, an optimizer's update) and whether the backward
    reads the changed values (a leaf or a cut; data unless the node holds a copy of
    the old ones, as of int64 data, kept converted to float64)."""
    found: dict[int, dict[int, tuple[bool, bool]]] = {}
    for n in nodes:
        if cuts:
            for k, a in enumerate(n.inputs):
                t = cuts.get(id(a))
                if t is not None and abs(t._untracked) > n.seq:  # (changed after n)
                    found.setdefault(id(n), {})[k] = (t._untracked > 0, True)
        for k, t, version in n.reads:
            counted = t._version != version
            if counted or (t._untracked < 0 and -t._untracked > n.seq):
                a = n.inputs[k]
                live = not isinstance(a, np.ndarray) or np.may_share_memory(a, t._value)
                found.setdefault(id(n), {})[k] = (counted, live)
    return found


def changed_input(nodes: list[Any], changed: dict[int, dict[int, tuple[bool, bool]]],
                  only: Any = None) -> str:
    """The first changed input (:func:`changed_inputs`) of ``only`` (else of any node), as
    an error names it: its position, its node and its shape."""
    for n in nodes if only is None else (only, *nodes):
        for k in changed.get(id(n), ()):
            a = n.inputs[k]
            shape = a.aval.shape if isinstance(a, Node) else np.shape(
                a._value if isinstance(a, Traced) else a)
            return f"input {k} of {n.name()}, of shape {list(shape)}"
    return "an input"


def refuse_unmatched(nodes: list[Any], fed_positions: tuple[int, ...],
                     changed: dict[int, dict[int, tuple[bool, bool]]]) -> None:
    """Raise unless the backward, reading the saved values at ``fed_positions``, reads
    the ``changed`` leaves and data (:func:`changed_inputs`) exactly where PyTorch's
    does. PyTorch never recomputes, and reads a leaf it saved as it is now (a change
    through ``.data``: a counted change of a saved tensor raised before). So no value
    the backward needs may be recomputed from changed values, and a changed input may
    be read only by a derivative rule that reads what PyTorch's does
    (``reads_like_torch``), of a node that saved the input, reading its current values.
    Walks the nodes from the output back, marking the values the backward needs (read
    by a rule, or to recompute a needed value that is not fed)."""
    fed_ids = {id(nodes[k]) for k in fed_positions}
    refuse_composites(nodes, fed_ids, changed)
    need: set[int] = set()
    for n in reversed(nodes):
        facts = torch_facts(n.prim)
        if n.prim.linear:
            reads_inputs = reads_output = False
        elif facts.saves_output and facts.reads_like_torch and not facts.mask_of_input:
            # (exp, sqrt: the output; relu's rule reads its input's mask)
            reads_inputs, reads_output = False, True
        else:  # (a rule unlike PyTorch's may read the output too: tanh, sigmoid, div)
            reads_inputs, reads_output = True, not facts.reads_like_torch
        if reads_output:
            need.add(id(n))
        recompute = id(n) in need and id(n) not in fed_ids
        grads = [isinstance(a, (Node, Traced)) for a in n.inputs]
        ins = changed.get(id(n), {})
        for k, a in enumerate(n.inputs):
            by_rule = reads_inputs and (not facts.product or product_saves(grads, k))
            if not (by_rule or recompute):
                continue
            if k in ins:  # a changed leaf or data, or a cut result
                counted, live = ins[k]
                # (linear: PyTorch's MmBackward0 saved x's rows, a reshape that copies a
                # strided x, and weight.t(), views a `.data =` rebinding leaves behind;
                # but a convolution's product reads the live weight's view, as PyTorch's
                # ConvolutionBackward0 reads the weight it saved)
                if (live and recompute) or (by_rule and (
                        counted or not live or facts.saves_output or not facts.reads_like_torch
                        or facts.saves_both and not _shift(n)
                        or n.prim is linear_p and not _convolution(n))):
                    raise RuntimeError(_unmatched(n, recompute and live,
                                                  changed_input(nodes, changed, n)))
            elif isinstance(a, Node):
                need.add(id(a))


def _convolution(n: Any) -> bool:
    """``n`` is inside a convolution (nn/convolution.py: its windows' product)."""
    c = n.composite
    return c is not None and c.name() == "ConvolutionBackward0"


def _shift(n: Any) -> bool:
    """``n`` is inside a softmax (the max it subtracts): its cotangent is the sum of the
    cotangents of a softmax's exponents, 0, so which elements it picks is immaterial."""
    c = n.composite
    return c is not None and c.name() in ("SoftmaxBackward0", "LogSoftmaxBackward0")


def _reads_changed(n: Any, dep: list[int], inside: list[int]) -> bool:
    """Whether the derivative of ``n`` (a node of a composite) reads changed values
    otherwise than PyTorch's node would: a value of the composite computed from them
    (``inside``: PyTorch has no such value), a mask (computed from the old values), or
    a changed operand (``dep``) by a rule that does not read it as PyTorch's does."""
    if any(isinstance(a, np.ndarray) and a.dtype == np.bool_ for a in n.inputs):
        return True
    if n.prim.linear:
        return False
    facts = torch_facts(n.prim)
    if facts.product:  # (reads an operand for the gradient of the other, as PyTorch's)
        return any(isinstance(b, (Node, Traced)) for k in inside
                   for j, b in enumerate(n.inputs) if j != k)
    return bool(inside) or not facts.reads_like_torch or facts.saves_output \
        or facts.saves_both


def refuse_composites(nodes: list[Any], fed_ids: set[int],
                      changed: dict[int, dict[int, tuple[bool, bool]]]) -> None:
    """Raise where a changed input enters a composite (``F.gelu``, ``F.mse_loss``,
    ``clamp``: several nodes here, one in PyTorch, marked by ``Node.composite``) ahead of
    a non-linear node of it or a mask computed from the old values. PyTorch's one node
    saved its operands and reads them as they are now (or raises, for a change its
    version counted); here the values inside the composite were computed from the old
    ones and would be read or fed as they are, so the gradient would be another.
    A changed input enters where a node of the composite reads it, or reads a value
    outside the composite that the kernel recomputes from it (one fed is the old value,
    as PyTorch's node saved it)."""
    tainted: set[int] = set()
    inner: set[int] = set()  # nodes of a composite whose values depend on a change
    versions: set[int] = set()  # composites with a change a version counted
    for n in nodes:  # (forward order)
        ins = changed.get(id(n), {})
        c = n.composite
        dep = [k for k, a in enumerate(n.inputs) if k in ins or (isinstance(a, Node) and (
            id(a) in inner and a.composite is c
            or id(a) in tainted and a.composite is not c))]
        if (ins or dep) and id(n) not in fed_ids:  # (recomputed from the new values)
            tainted.add(id(n))
        if c is None or not dep or c.name() in READS_NO_INPUTS or saves_nothing(c):
            continue
        inner.add(id(n))
        if any(counted for counted, _ in ins.values()):
            versions.add(id(c))
        if not _reads_changed(n, dep, [k for k in dep if id(n.inputs[k]) in inner]):
            continue
        if id(c) in versions:
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified "
                f"by an inplace operation: an input of {c.name()}, which PyTorch's node "
                "saves, was changed in place after the forward. Hint: change it after "
                "backward(), or compute with a copy (.clone()) instead.")
        raise RuntimeError(
            f"an input of {c.name()} ({changed_input(nodes, changed, n)}: a leaf, data, or "
            f"a result changed behind its node's back) was {_HOW}, and this backward "
            f"cannot read what PyTorch's would: {c.name()} is one node in PyTorch, which "
            "reads its inputs as they are now, and several here, whose inner values were "
            "computed from the old ones, so symgrad refuses rather than return another "
            f"gradient. {_FIX}")


def _unmatched(n: Any, recomputed: bool, which: str) -> str:
    saved = "its saved output" if torch_facts(n.prim).saves_output else "other values"
    how = ("its value would be recomputed from the changed values, where PyTorch's "
           "backward reads the saved one" if recomputed else
           f"symgrad's derivative of {n.prim.name} reads that input, where PyTorch's "
           f"{n.name()} reads {saved}")
    return (f"an input of {n.name()} ({which}: a leaf, data, or a result changed behind "
            f"its node's back) was {_HOW}, and this backward cannot read "
            f"what PyTorch's would: {how}, so symgrad refuses rather than return another "
            f"gradient. {_FIX}")


#: how an input changed uncounted, and the fixes (:func:`_unmatched`, :func:`refuse_composites`)
_HOW = ("changed in place (under no_grad, through .data, or by a write through numpy into "
        "its memory: an array given to from_numpy() or got from numpy()) after the forward "
        "computed it")
_FIX = ("Change it after backward(), run the forward again, or give the tensor a copy "
        "(torch.tensor(a) rather than torch.from_numpy(a)).")


def count(fed_positions: tuple[int, ...]) -> None:
    if fed_positions:
        _STATS["replayed"] += 1
        _STATS["fed_values"] += len(fed_positions)
    else:
        _STATS["recomputed"] += 1


def lower(graph: Graph, own: list[Var], wrt: list[int], seeded: bool,
          fed_positions: tuple[int, ...]) -> tuple[Graph, tuple[int, ...]]:
    """The optimized adjoint of the recorded ``graph`` (:func:`.lowering.forward_graph`,
    whose node variables are ``own``) in which the nodes at ``fed_positions`` are inputs,
    after the graph's own (and the cotangent): the equations that made them are gone,
    so the reverse sweep reads the values the forward computed. Those the optimized
    adjoint does not read (a sum's value, the loss) are dropped from its inputs; also
    returned: the positions of the nodes whose values it reads, in input order."""
    full = pipeline.differentiate(graph, wrt, seeded, keep_primal=False)
    values = [own[k] for k in fed_positions]
    gone = {id(v) for v in values}
    eqns = tuple(e for e in full.eqns if id(e.out) not in gone)
    final = pipeline.derive(transposed_products(
        replace(full, inputs=(*full.inputs, *values), eqns=eqns)))
    read = {id(a) for e in final.eqns for a in e.inputs}
    read.update(id(a) for a in final.outputs)
    unread = {id(v) for v in values if id(v) not in read}
    used = tuple(k for k, v in zip(fed_positions, values) if id(v) not in unread)
    if unread:
        final = replace(final, inputs=tuple(v for v in final.inputs if id(v) not in unread))
    return final, used


_T = freeze_params({"perm": (1, 0)})


def transposed_products(graph: Graph) -> Graph:
    """``transpose(matmul(a, b))`` of matrices, where nothing else reads the product, as
    ``matmul(transpose(b), transpose(a))`` (the passes fold a transpose of a transpose).

    The gradient of a weight used as ``x @ W.t()`` (``nn.Linear``) comes out of the
    adjoint as the transpose of ``x.T @ g``; a kernel returns it C-contiguous, and
    copying a transposed 784x256 matrix costs Numba more than the product itself. The
    product of the transposes is the same sums, written in the output's own order."""
    made = {id(e.out): e for e in graph.eqns}
    uses = collections.Counter(id(a) for e in graph.eqns for a in e.inputs)
    uses.update(id(a) for a in graph.outputs)
    eqns: list[Eqn] = []
    changed = False
    for e in graph.eqns:
        inner = made.get(id(e.inputs[0])) if e.prim is transpose_p and e.inputs else None
        if (inner is not None and inner.prim is matmul_p and e.params == _T
                and uses[id(inner.out)] == 1 and len(inner.inputs) == 2
                and all(isinstance(a, Var) and len(a.shape) == 2 for a in inner.inputs)):
            flipped = []
            for a in inner.inputs[::-1]:
                t = Var(Aval(a.shape[::-1], a.dtype))
                eqns.append(Eqn(transpose_p, (a,), t, _T, e.origin))
                flipped.append(t)
            eqns.append(Eqn(matmul_p, tuple(flipped), e.out, inner.params, e.origin))
            changed = True
        else:
            eqns.append(e)
    return replace(graph, eqns=tuple(eqns)) if changed else graph

