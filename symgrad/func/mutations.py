"""``torch.func.functionalize``: the function, with PyTorch's rules for what its results
alias.

PyTorch's ``functionalize(func)`` replaces ``func``'s in-place operations (and with
``remove='mutations_and_views'`` its views) by out-of-place ones, for tracing; called,
it gives ``func``'s results and applies ``func``'s mutations of its inputs to them at
the end. symgrad's eager Tensor has no graph to rewrite, so the function runs as it is
(its in-place operations change the inputs, as PyTorch's copy at the end does; the
autograd history differs in its nodes, not in its gradients), and what is observable
is made PyTorch's: a result is a new tensor, never a view of an input, except an input
returned unchanged (the same object) and, with ``remove='mutations'``, a view of an
input that ``func`` did not mutate (PyTorch regenerates it from that input: writing
into it writes the input). Refused: inputs that share memory (PyTorch's functionalize
gives each its own copy, so one does not see the other's mutation, which a run of the
function cannot reproduce: pass clones). Not detected: a mutation of a tensor that is
not an argument (a closure's), which PyTorch refuses.

    >>> import symgrad as torch
    >>> def f(x):
    ...     x.mul_(2)
    ...     return x.view(-1)
    >>> x = torch.ones(2, 2)
    >>> y = torch.func.functionalize(f)(x)
    >>> y.add_(1), x
    (tensor([3., 3., 3., 3.]), tensor([[2., 2.],
            [2., 2.]]))
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ..eager.tensor import Tensor
from . import pytree

__all__ = ["functionalize"]

_REMOVE = ("mutations", "mutations_and_views")


def functionalize(func: Callable, *, remove: str = "mutations") -> Callable:
    """``func`` with PyTorch's functionalize semantics (see the module)."""
    if remove not in _REMOVE:
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for "
            f"remove={remove}. Valid options are:\n     remove='mutations': all inplace and "
            "out= operators will be removed from the program, and replaced with their "
            "out-of-place equivalents.\n     remove='mutations_and_views': In addition to the "
            "above, all aliasing operators {view} will be replaced with their non-aliasing "
            "counterparts, {view}_copy.\n")

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        inputs = [t for t in pytree.flatten((args, kwargs))[0] if isinstance(t, Tensor)]
        _refuse_shared(inputs, getattr(func, "__name__", "f"))
        versions = [t._version for t in inputs]
        out = func(*args, **kwargs)
        mutated = [t._version != v for t, v in zip(inputs, versions)]
        leaves, spec = pytree.flatten(out)
        return pytree.unflatten([_result(o, inputs, mutated, remove) for o in leaves], spec)

    return wrapped


def _refuse_shared(inputs: list[Tensor], name: str) -> None:
    for i, a in enumerate(inputs):
        for k in range(i):
            b = inputs[k]
            if a is b or np.shares_memory(a._value, b._value):
                raise NotImplementedError(
                    f"functionalize({name}): inputs {k} and {i} (Tensors of the flattened "
                    "arguments) share memory. PyTorch's functionalize gives each input its own "
                    "copy, so a mutation of one is not seen through the other, which symgrad "
                    "(running the function as it is) cannot reproduce; pass clones "
                    "(x.clone()) instead")


def _result(o: Any, inputs: list[Tensor], mutated: list[bool], remove: str) -> Any:
    """A result as PyTorch's functionalize gives it: a new tensor when it shares memory
    with an input, unless it is that unmutated input itself or (``remove='mutations'``) a
    view of an unmutated input."""
    if not isinstance(o, Tensor):
        return o
    for t, changed in zip(inputs, mutated):
        if o is t and not changed:
            return o
    for t, changed in zip(inputs, mutated):
        if (changed or remove != "mutations") and np.shares_memory(o._value, t._value):
            return o.clone()
    return o
