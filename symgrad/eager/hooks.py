"""``Tensor.register_hook``: a function called with a tensor's gradient during ``backward()``,
which may return a replacement (PyTorch's tensor hooks).

On a leaf the hook sees the gradient of this backward (the sum over all paths, once)
before it is added into ``.grad``. On a result, the backward cuts the graph at its node
(as for a value changed behind its node's back, :func:`.views.stale`): the kernel of the
part above computes the tensor's gradient, the hooks run on it, and the backward goes on
through the node with what they returned. So a structure with a hooked result is another
structure to the kernel cache (its plan has the cut), and never replays a kernel compiled
without the hook; a hook on a leaf runs after the kernel, on its output. The handle's
``remove()`` takes the hook away. ``torch.autograd.grad``, ``backward(inputs=)`` and
``create_graph=True`` refuse a graph with hooks (a clear error, not a gradient without
them).

``Tensor.register_post_accumulate_grad_hook(hook)`` (a leaf's only): ``hook(leaf)`` is
called once per ``backward()`` that accumulated into the leaf's ``.grad`` (also with
``inputs=`` naming it, and ``create_graph=True``; never by ``torch.autograd.grad``, which
accumulates nothing), after its register_hook hooks and the accumulation, under
``no_grad`` unless ``create_graph``; it must return None. PyTorch calls it as the
leaf's ``AccumulateGrad`` runs, symgrad once every ``.grad`` of the backward was
accumulated (:func:`post`), leaves used last in the forward first (PyTorch's order for
a chain of layers; not always: of ``(x * z * x).sum()`` PyTorch calls x's first, as its
engine finishes both at ``x * z``, symgrad z's): the same for an optimizer
step per parameter (PyTorch's "optimizer in backward" idiom), since no node of the
graph reads the leaf after its gradient is complete; a hook that reads another leaf's
``.grad`` may see it accumulated already where PyTorch's would not.

    >>> import symgrad as torch
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> y = x * 3
    >>> handle = y.register_hook(lambda g: g * 10)
    >>> y.sum().backward()
    >>> x.grad
    tensor([30., 30.])
    >>> handle.remove()
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from . import grad_mode

_IDS = itertools.count()

GRAPH_ERROR = (
    "this graph has tensor hooks (register_hook), which symgrad applies in backward() "
    "only: torch.autograd.grad, backward(inputs=) and create_graph=True would compute "
    "the gradient without them. Call backward(), or remove the hooks (handle.remove()).")


class RemovableHandle:
    """What ``register_hook`` returns: ``remove()`` takes the hook away."""

    __slots__ = ("_hooks", "id")

    def __init__(self, hooks: dict[int, Any], key: int):
        self._hooks, self.id = hooks, key

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def new_id() -> int:
    """A key no other hook (of a tensor or a module) has."""
    return next(_IDS)


def register(t: Any, hook: Any) -> RemovableHandle:
    """Add ``hook`` to ``t``'s hooks (see the module docstring)."""
    if not t._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if t._value.dtype.kind == "c":
        raise TypeError("register_hook on a complex tensor is not supported in symgrad (the "
                        "hook would see the IR's gradient convention); register it on a real "
                        "tensor, e.g. torch.view_as_real(z)")
    if t._hooks is None:
        t._hooks = {}
    key = next(_IDS)
    t._hooks[key] = hook
    if t._node is not None:
        t._node.hooked = t  # (held: the backward reads its values at the cut)
    return RemovableHandle(t._hooks, key)


def register_post(t: Any, hook: Any) -> RemovableHandle:
    """Add ``hook`` to the leaf ``t``'s post-accumulate-grad hooks (module docstring)."""
    if not t._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if t._node is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                           "tensors")
    if t._post_hooks is None:
        t._post_hooks = {}
    key = next(_IDS)
    t._post_hooks[key] = hook
    return RemovableHandle(t._post_hooks, key)


def post(leaves: Any, create_graph: bool = False) -> None:
    """Call the post-accumulate-grad hooks of ``leaves`` (whose ``.grad`` this backward
    accumulated), each leaf's in order of registration."""
    for t in leaves:
        if not t._post_hooks:
            continue
        with grad_mode.enable_grad() if create_graph else grad_mode.no_grad():
            for hook in list(t._post_hooks.values()):
                ans = hook(t)
                if ans is None:
                    continue
                if hasattr(ans, "_value"):  # (PyTorch's errors, the same types)
                    raise RuntimeError("Tensor post accumulate grad hooks should return None.")
                raise TypeError(
                    f"expected Variable, but hook returned '{type(ans).__name__}': a post "
                    "accumulate grad hook must return None (a lambda such as `lambda p: "
                    "(opt.step(), opt.zero_grad())` returns a tuple; write it as a def)")


def hooked(node: Any) -> Any:
    """The tensor whose hooks the backward must call at ``node``, or None."""
    t = node.hooked
    if t is None or not t._hooks:
        return None
    if t._node is not node:
        raise RuntimeError(
            "a tensor with a hook (register_hook) was changed in place after the hook was "
            "registered; symgrad does not know which of its versions the hook belongs to. "
            "Register the hook after the in-place change, or change a .clone().")
    return t


def apply(t: Any, g: np.ndarray, fired: set[int]) -> np.ndarray:
    """``g`` (``t``'s gradient, as an array) after ``t``'s hooks, in order of registration;
    each is called once per backward (``fired``)."""
    if id(t) in fired:
        raise RuntimeError(
            "a tensor with a hook (register_hook) is reached twice by this backward (through "
            "a result changed behind its node's back, or another hooked result), where "
            "PyTorch calls the hook once with the total; symgrad refuses rather than call it "
            "with a part. Call backward() on a graph without that cut.")
    fired.add(id(t))
    grad = type(t)._make(np.array(np.broadcast_to(g, t.shape), dtype=t._value.dtype))
    with grad_mode.no_grad():
        for hook in list(t._hooks.values()):
            new = hook(grad)
            if new is not None:
                if tuple(new.shape) != tuple(t.shape):
                    raise RuntimeError(f"hook returned a gradient of shape {list(new.shape)} "
                                       f"for a tensor of shape {list(t.shape)}")
                grad = new
    return np.asarray(grad._value)
