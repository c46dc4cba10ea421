"""Forward hooks of a Module, as PyTorch's: ``register_forward_pre_hook`` and
``register_forward_hook`` (with ``prepend``, ``with_kwargs`` and ``always_call``).

A pre-hook ``hook(module, args)`` runs before ``forward`` and may return new
positional arguments (a value that is not a tuple is wrapped in one); with
``with_kwargs=True`` it is ``hook(module, args, kwargs)`` and returns ``None`` or
``(args, kwargs)``. A forward hook ``hook(module, args, output)`` (with
``with_kwargs``: ``hook(module, args, kwargs, output)``) runs after ``forward`` and
may return a new output. Hooks run in the order registered (``prepend=True`` puts
one first); ``always_call=True`` runs a forward hook even when ``forward`` raised,
before the error goes on. The hooks see Tensors, so what they compute is part of
the graph: a hook that scales the output scales its gradient, as in PyTorch. Each
registration returns a handle whose ``remove()`` takes the hook away (also as a
context manager).

Backward hooks (``register_full_backward_hook``, ``register_full_backward_pre_hook``)
are registered here too and set up around ``forward`` by :mod:`.backward_hooks`: the
inputs after the forward pre-hooks, the outputs after the forward hooks, as PyTorch's.

    >>> import symgrad as torch
    >>> from symgrad import nn
    >>> m = nn.Linear(2, 1)
    >>> handle = m.register_forward_hook(lambda mod, args, out: out * 0 + 1)
    >>> m(torch.ones(1, 2)).tolist()
    [[1.0]]
    >>> handle.remove()
"""

from __future__ import annotations

import warnings
from typing import Any

from ..eager import grad_mode
from ..eager.hooks import RemovableHandle, new_id
from .backward_hooks import BACKWARD, BACKWARD_PRE, BackwardHook

#: the attributes a Module keeps its forward hooks in (absent until one is registered); a
#: module with one of them or of BACKWARD, BACKWARD_PRE is called through :func:`call`
PRE, POST = "_forward_pre_hooks", "_forward_hooks"
__all__ = ["BACKWARD", "BACKWARD_PRE", "POST", "PRE", "call", "register"]


def register(module: Any, kind: str, hook: Any, prepend: bool, **flags: bool) -> RemovableHandle:
    """Add ``hook`` (with ``flags``: with_kwargs, always_call) to ``module``'s hooks
    of ``kind`` (:data:`PRE` or :data:`POST`)."""
    if not callable(hook):
        raise TypeError(f"a hook must be callable, got {type(hook).__name__}")
    hooks = module.__dict__.get(kind)
    if hooks is None:
        hooks = {}
        object.__setattr__(module, kind, hooks)
    key = new_id()
    hooks[key] = (hook, flags)
    if prepend:  # rebuilt in place, so every handle keeps the same dict
        items = list(hooks.items())
        hooks.clear()
        hooks.update([items[-1], *items[:-1]])
    return RemovableHandle(hooks, key)


def call(module: Any, args: tuple, kwargs: dict) -> Any:
    """``module(*args, **kwargs)`` with its forward hooks (PyTorch's ``_call_impl``)."""
    output, called, backward = None, set(), None
    try:
        for hook, flags in list(module.__dict__.get(PRE, {}).values()):
            if flags["with_kwargs"]:
                result = hook(module, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {result}.")
                    args, kwargs = result
            else:
                result = hook(module, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        hooks, pre_hooks = (list(module.__dict__.get(k, {}).values())
                            for k in (BACKWARD, BACKWARD_PRE))
        if (hooks or pre_hooks) and grad_mode.is_grad_enabled():
            backward = BackwardHook(module, [h for h, _ in hooks], [h for h, _ in pre_hooks])
            args = backward.setup_input_hook(args)
        output = module.forward(*args, **kwargs)
        # read after forward, as PyTorch: a hook registered by a pre-hook or by forward
        # itself runs in this call
        for key, (hook, flags) in _posts(module):
            if flags["always_call"]:
                called.add(key)
            result = _run(hook, flags, module, args, kwargs, output)
            if result is not None:
                output = result
        if backward is not None:
            output = backward.setup_output_hook(output)
    except Exception:
        for key, (hook, flags) in _posts(module):  # PyTorch's: the first error is raised
            if flags["always_call"] and key not in called:
                try:  # (its result is dropped: the error goes on)
                    _run(hook, flags, module, args, kwargs, output)
                except Exception as e:
                    warnings.warn("module forward hook with ``always_call=True`` raised an "
                                  "exception that was silenced as another error was raised "
                                  f"in forward: {e}", stacklevel=2)
        raise
    return output


def _posts(module: Any) -> list:
    return list(module.__dict__.get(POST, {}).items())


def _run(hook: Any, flags: dict, module: Any, args: tuple, kwargs: dict, output: Any) -> Any:
    if flags["with_kwargs"]:
        return hook(module, args, kwargs, output)
    return hook(module, args, output)
