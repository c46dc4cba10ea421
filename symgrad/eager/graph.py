"""The recorded graph of Tensor operations: ``grad_fn`` nodes, as PyTorch shows them.

A :class:`Node` is one recorded equation; its inputs are other nodes, leaves
(tensors that require grad), data (arrays that do not) or literals. Its class
is named as PyTorch names the backward function (``AddBackward0``): the
name :func:`.torch_facts.node_name` gives the primitive.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from typing import Any

import numpy as np

from ..core.ir import Aval, Literal, Primitive
from ..core.tracing import Traced

#: nodes whose Python-scalar operand torch keeps out of ``next_functions``
_SCALAR_OPERAND_HIDDEN = {"PowBackward0", "PowBackward2", "RsubBackward1", "CloneBackward0",
                          "ZeroBackward0", "FillBackward2"}
_counter = itertools.count()


#: ``next_seq()``: a number above every node made so far (nodes made later have larger
#: ``seq``); the counter's own ``__next__``, no Python frame per call (the in-place
#: updates of a training step ask for two or three)
next_seq = _counter.__next__


_CLASSES: dict[str, type[Node]] = {}
_CLASSES_LOCK = threading.Lock()


def node_class(name: str) -> type[Node]:
    """The node class PyTorch calls ``name`` (``AddBackward0``): one per name, also when
    threads ask for a new one at once."""
    cls = _CLASSES.get(name)
    if cls is None:
        with _CLASSES_LOCK:
            cls = _CLASSES.get(name)
            if cls is None:
                cls = _CLASSES[name] = type(name, (Node,), {"__slots__": ()})
    return cls


#: the cast nodes (``ToCopyBackward0``) between float dtypes, with the narrow dtypes of the
#: cast ("float32", "float16", "bfloat16", or "complex64" for complex casts; the source's
#: first): PyTorch's backward rounds the gradient to them there, so the float64 backward
#: does too (:mod:`symgrad.eager.cast_rounding`).
ROUNDED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class Node:
    """A ``grad_fn``: one recorded equation, whose inputs are other nodes, leaves
    (tensors that require grad), data (arrays that do not) or literals."""

    __slots__ = ("prim", "params", "inputs", "aval", "seq", "freed", "retained", "sig",
                 "versions", "reads", "shown", "made", "unlike_torch", "value", "exposed",
                 "seen", "indices", "copies", "hooked", "composite", "__weakref__")

    def __init__(self, prim: Primitive, params: dict[str, Any], inputs: tuple, aval: Aval,
                 sig: tuple | None = None):
        self.prim, self.params, self.inputs, self.aval = prim, params, inputs, aval
        #: what the structure key holds of this node (the rest is how inputs connect);
        #: ``sig``: that tuple, made once by a caller that knows it (one object for every
        #: node of a training loop's step: the key compares it by identity)
        if sig is None:
            literals = ()
            for a in inputs:  # (a loop: no comprehension per node without a literal)
                if type(a) is Literal:
                    literals = tuple([a.key for a in inputs if type(a) is Literal])
                    break
            sig = (prim.name, tuple(sorted(params.items())) if params else (), literals,
                   aval.dtype)
        self.sig = sig
        self.seq = next(_counter)  # creation order is a topological order
        #: in a gradient's graph (create_graph): the primitive whose derivative rule reads
        #: other tensors than PyTorch's backward saves, when the graph has one (see
        #: symgrad.eager.double.READ_UNLIKE_TORCH)
        self.unlike_torch: str | None = None
        self.freed = False
        self.retained: Any = None  # the tensor that called retain_grad()
        #: (tensor, its _version) for each leaf or data tensor input: backward reads their
        #: values then, so an in-place change in between must be caught
        self.versions: tuple[tuple[Any, int], ...] = ()
        #: (position, tensor, its _version) for each leaf or data input, saved or not: a
        #: backward must not recompute this node's value from one changed since
        #: (:func:`symgrad.eager.replay.refuse_unmatched`)
        self.reads: tuple[tuple[int, Any, int], ...] = ()
        #: for the last node of a composite (``F.mse_loss`` is a mean of squares): the
        #: composite's own inputs, which ``next_functions`` shows as PyTorch's one node does
        self.shown: tuple[Any, ...] | None = None
        #: (weak reference to the Tensor this node made, that Tensor's ``_version`` then):
        #: a gradient's graph replays with that Tensor itself while it is alive and
        #: unchanged, so the new graph depends on it as PyTorch's saved tensors do
        #: (:mod:`.double`); weak, so a node never keeps its result alive
        self.made: tuple[Any, int] | None = None
        #: the value computed, kept for the backward kernel to read (:mod:`.replay`)
        self.value: Any = None
        #: the memory of ``value`` was written in place since: it is not fed any more
        #: (:func:`symgrad.eager.replay.valid`)
        self.exposed = False
        #: a copy of ``value`` taken when its memory was handed to numpy (``numpy()`` of
        #: an alias): ``value`` is fed while it equals the copy (:mod:`.replay`)
        self.seen: Any = None
        #: (tensor, its _version, a copy of its values) for each index tensor PyTorch's
        #: node saves (``gather``, ``x[i]``, ``scatter``): the positions were computed
        #: from them in the forward (:func:`symgrad.eager.views.watch_indices`)
        self.indices: tuple[tuple[Any, int, Any], ...] = ()
        #: copies of leaf or data values handed to numpy that this node read, held while
        #: it may run backward (:func:`symgrad.eager.exposed.read`)
        self.copies: tuple[Any, ...] = ()
        #: the tensor whose hooks (``register_hook``) the backward calls here (:mod:`.hooks`)
        self.hooked: Any = None
        #: for the nodes of a composite (``F.gelu`` is several primitives, one node in
        #: PyTorch): the composite's last node, whose ``shown`` are its operands
        #: (:func:`symgrad.eager.replay.refuse_unmatched`)
        self.composite: Node | None = None

    def name(self) -> str:
        return type(self).__name__

    def rename(self, name: str) -> None:
        """Take PyTorch's name for the method that made the node (``x.t()`` is
        ``TBackward0``, though its primitive is ``transpose``): node classes differ
        only in their names, so the node changes class."""
        self.__class__ = node_class(name)

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        """The functions the cotangent flows to: nodes, ``AccumulateGrad`` for leaves
        that require grad, ``None`` for inputs that need no gradient."""
        return tuple((_function_of(a), 0) for a in self.operands())

    def operands(self) -> tuple[Any, ...]:
        """The inputs PyTorch's node shows (``next_functions``), in its order."""
        if self.shown is not None:
            return self.shown
        inputs = self.inputs
        if type(self).__name__ in _SCALAR_OPERAND_HIDDEN:  # x ** 2, 2 - x, x.clone()
            inputs = tuple(a for a in inputs if not _is_scalar(a))
        elif self.prim.commutative and _is_scalar(inputs[0]):
            inputs = inputs[::-1]  # 2 + x is x.add(2) in torch
        return inputs

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {id(self):#x}>"


def _is_scalar(a: Any) -> bool:
    """A scalar operand: a literal, or a Python scalar that enters the kernel as data."""
    return isinstance(a, Literal) or (isinstance(a, np.ndarray) and a.ndim == 0)


class AccumulateGrad:
    """The ``grad_fn`` slot of a leaf in ``next_functions``: adds into ``variable.grad``."""

    __slots__ = ("variable",)
    next_functions: tuple = ()

    def __init__(self, variable: Any):
        self.variable = variable

    def name(self) -> str:
        return "AccumulateGrad"

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {id(self):#x}>"


def _function_of(a: Any) -> Any:
    if isinstance(a, Node):
        return a
    if isinstance(a, Traced):  # a leaf tensor
        if a._accumulate is None:
            a._accumulate = AccumulateGrad(a)
        return a._accumulate
    return None
