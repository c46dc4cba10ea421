"""The levels of nested ``torch.func`` transforms over the eager autograd.

Each ``grad``/``vjp``/``jvp``/``jacrev``/``jacfwd`` call is a *level*: its inputs
enter as private leaves (a fresh leaf that requires grad, or, for an input that
already requires grad at an outer level, a recorded copy ``x * 1.0`` so the
results stay differentiable in it), the function runs with grad enabled and the
derivatives are taken with :func:`symgrad.autograd.grad`. Gradients are taken with
``create_graph`` only when the differentiated outputs reach a tensor of an outer
level (a tensor that requires grad and is not a private leaf of this level or of
a finished one): the caller's tensors, a closure's parameters, an enclosing
transform's inputs. A result is handed back with its graph when it reaches such
a tensor, else detached, so a transform's outputs require grad exactly when they
depend on something the caller can differentiate (PyTorch's "transforms are
functional": ``grad(f)(x)`` does not require grad for a plain ``x``).

Nesting is then ordinary double backward: ``grad(grad(f))(x)`` differentiates the
inner gradient (recorded, since it reaches the outer level's leaf) in the outer
leaf. Not thread-safe: a level is a frame of the calling thread's stack, shared by
every thread.
"""

from __future__ import annotations

import math
import weakref
from typing import Any

import numpy as np

from ..eager.double import grad as autograd_grad
from ..eager.grad_mode import enable_grad, is_grad_enabled
from ..eager.graph import Node
from ..eager.tensor import Tensor

#: id of each private leaf -> (weak reference, its level; ``inf`` once the level ended)
_PRIVATE: dict[int, tuple[Any, float]] = {}
#: the levels entered and not yet left, outermost first
_STACK: list[Level] = []


def depth() -> int:
    return len(_STACK)


def _outer_leaf(t: Any, level: float) -> bool:
    entry = _PRIVATE.get(id(t))
    if entry is None or entry[0]() is not t:
        return True
    return entry[1] < level


def reaches_outer(t: Any, level: float) -> bool:
    """Whether ``t``'s graph reaches a tensor that requires grad at a level below ``level``
    (one not private to ``level`` or to a level inside it or finished)."""
    if not isinstance(t, Tensor) or not t._requires_grad:
        return False
    if t._node is None:
        return _outer_leaf(t, level)
    seen = {id(t._node)}
    todo = [t._node]
    while todo:
        for a in todo.pop().inputs:
            if isinstance(a, Node):
                if id(a) not in seen:
                    seen.add(id(a))
                    todo.append(a)
            elif isinstance(a, Tensor) and a._requires_grad and _outer_leaf(a, level):
                return True
    return False


def depends_on(t: Any, targets: list[Any]) -> bool:
    """Whether ``t``'s graph reaches one of ``targets`` (leaves or recorded tensors)."""
    if not isinstance(t, Tensor) or not t._requires_grad:
        return False
    leaves = {id(x) for x in targets if x._node is None}
    nodes = {id(x._node) for x in targets if x._node is not None}
    if id(t) in leaves or (t._node is not None and id(t._node) in nodes):
        return True
    todo, seen = ([t._node] if t._node is not None else []), set()
    while todo:
        for a in todo.pop().inputs:
            if isinstance(a, Node):
                if id(a) in nodes:
                    return True
                if id(a) not in seen:
                    seen.add(id(a))
                    todo.append(a)
            elif id(a) in leaves:
                return True
    return False


def _zeros_like(t: Any) -> Tensor:
    return Tensor._make(np.zeros(t.shape, dtype=t._value.dtype))


class Level:
    """One transform call: ``with Level() as level:`` then ``level.enter(x)`` for each
    differentiated input and :meth:`grads` for the derivatives."""

    def __enter__(self) -> Level:
        self.number: float = len(_STACK)
        #: whether the caller records: under its no_grad nothing leaves with a graph (a
        #: transform runs its function with grad enabled all the same, as PyTorch's)
        self.recording = is_grad_enabled()
        self.leaves: list[Any] = []
        _STACK.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _STACK.remove(self)
        for ref in self.leaves:
            t = ref()
            if t is not None and _PRIVATE.get(id(t), (None,))[0] is ref:
                _PRIVATE[id(t)] = (ref, math.inf)
        self.number = math.inf

    def private(self, t: Tensor) -> Tensor:
        """A fresh leaf with ``t``'s values that requires grad, private to this level."""
        leaf = t.detach().requires_grad_(True)
        key = id(leaf)
        ref = weakref.ref(leaf, lambda r, key=key: _drop(key, r))
        _PRIVATE[key] = (ref, self.number)
        self.leaves.append(ref)
        return leaf

    def enter(self, t: Any) -> Tensor:
        """An input of this level: a private leaf, or a recorded copy of a tensor that
        requires grad (its results stay differentiable in it)."""
        if not isinstance(t, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(t)}")
        if t._requires_grad:
            with enable_grad():
                return t * 1.0
        return self.private(t)

    def grads(self, outputs: list[Any], inputs: list[Any], cotangents: list[Any] | None,
              keep_graph: bool = False) -> list[Any]:
        """``sum <outputs[i], cotangents[i]>`` differentiated in each input (zeros where
        unused); recorded when the outputs or cotangents reach an outer level (or
        ``keep_graph``), and then handed back by :func:`unwrap`."""
        cts = cotangents if cotangents is not None else [None] * len(outputs)
        pairs = [(o, c) for o, c in zip(outputs, cts) if o._requires_grad]
        if not pairs or not inputs:
            return [_zeros_like(t) for t in inputs]
        outs, cts = [p[0] for p in pairs], [p[1] for p in pairs]
        graph = keep_graph or any(self.connected(t) for t in outs + cts)
        with enable_grad():
            found = autograd_grad(outs, inputs, None if cotangents is None else cts,
                                  retain_graph=True, create_graph=graph, allow_unused=True)
        result = [_zeros_like(t) if g is None else g for g, t in zip(found, inputs)]
        return result if keep_graph else [self.unwrap(g) for g in result]

    def connected(self, t: Any) -> bool:
        """Whether ``t`` depends on a tensor the caller differentiates."""
        return self.recording and reaches_outer(t, self.number)

    def unwrap(self, t: Any) -> Any:
        """``t`` as this level hands it back: with its graph if it is :meth:`connected`."""
        if isinstance(t, Tensor) and t._requires_grad and not self.connected(t):
            return t.detach()
        return t


def _drop(key: int, ref: Any) -> None:
    if _PRIVATE.get(key, (None,))[0] is ref:
        del _PRIVATE[key]
