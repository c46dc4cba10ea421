"""Nodes whose value and gradient come from Python: ``callback`` equations
(:mod:`symgrad.prims.custom`) that name their per-call state by a *handle*, a number
passed as a 0-d data operand and looked up in a table of live states.

``autograd.Function`` (:mod:`.function`) keeps its ``ctx`` so; :func:`host_node` does
the same for an op of symgrad's own whose derivative is PyTorch's formula computed in
numpy (``F.ctc_loss``), and :func:`no_derivative` makes PyTorch's results of an op
without one (``unique``'s ``Unique2Backward0``: they require grad and only a backward
through them raises). The callbacks' functions are fixed objects and the state comes
in through the handle, so the structure of a training step's graph does not change
from one call to the next and its backward compiles once. Nothing here imports the
Tensor class (a mixin of it makes these nodes)."""

from __future__ import annotations

import itertools
import weakref
from typing import Any

import numpy as np

from ..core.ir import FLOAT, Aval, tuple_aval
from ..prims.control import proj_p
from ..prims.custom import Host, callback_p
from .graph import node_class

_CONTEXTS: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()
_HANDLES = itertools.count(1)


class _Handle(np.ndarray):
    """The number that names a call's state, as a 0-d data operand; it keeps the state
    alive as long as the node holding it."""

    ctx: Any


def _handle(ctx: Any) -> _Handle:
    key = next(_HANDLES)
    _CONTEXTS[key] = ctx
    h = np.array(float(key)).view(_Handle)
    h.ctx = ctx
    return h


def _ctx(handle: Any) -> Any:
    ctx = _CONTEXTS.get(int(np.asarray(getattr(handle, "_value", handle))))
    if ctx is None:
        raise RuntimeError("Trying to backward through the graph a second time (or directly "
                           "access saved tensors after they have already been freed)")
    return ctx


def _operand(a: Any) -> Any:
    """What the node keeps of a Tensor argument: its node, the leaf, or float64 data."""
    if a._requires_grad:
        return a._node if a._node is not None else a
    return np.asarray(a._value, dtype=np.float64)


class Held:
    """What a node made by :func:`host_node` computed, kept for its callbacks."""

    def __init__(self, **values: Any):
        self.__dict__.update(values)


def held(handle: Any) -> Any:
    """The state (a :class:`Held`, a Function's ctx) a callback's handle operand names."""
    return _ctx(handle)


def host_node(node: str, state: Any, inputs: tuple, aval: Aval, fn: Host, vjp: Any) -> Any:
    """The node (``proj`` of a ``callback``) named ``node`` of the Tensors ``inputs``:
    ``fn(handle, *inputs)`` gives its value, ``vjp(handle, *inputs, ct)`` the gradients
    (zeros for the handle first; an exception instead: its backward raises it); ``state``
    is what ``held(handle)`` returns to them."""
    ops = (_handle(state), *(_operand(t) for t in inputs))
    call = node_class(node)(callback_p, dict(fn=fn, avals=(aval,), name=node, vjp=vjp), ops,
                            tuple_aval([aval]))
    return node_class(node)(proj_p, {"part": 0}, (call,), aval)


_HELD_VALUE = Host(lambda handle, *inputs: [held(handle).value], "held value")


#: one error per message: the graph's structure holds it, and stays the same from one call
#: to the next (the adjoint raises a copy: symgrad.passes.adjoint)
_ERRORS: dict[str, RuntimeError] = {}


def no_derivative(value: np.ndarray, inputs: tuple, node: str, message: str) -> Any:
    """``value`` as the result (a Tensor of the inputs' class) of a node named ``node``
    of the Tensors ``inputs``, whose backward raises ``RuntimeError(message)``."""
    aval = Aval(value.shape, FLOAT)  # (a callback's values are float64, as a Function's)
    error = _ERRORS.get(message) or _ERRORS.setdefault(message, RuntimeError(message))
    state = Held(value=np.asarray(value, dtype=np.float64))
    part = host_node(node, state, inputs, aval, _HELD_VALUE, error)
    return type(inputs[0])._make(value, part)


__all__ = ["Held", "Host", "held", "host_node", "no_derivative"]  # Host: for nn (no prims there)
