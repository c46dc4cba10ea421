"""Grad mode: whether Tensor operations record a graph (``no_grad`` and friends).

The mode is per thread, as PyTorch's: ``with no_grad():`` in one thread leaves the
others recording, and every new thread starts with grad enabled.

    >>> import symgrad as torch
    >>> with torch.no_grad():
    ...     torch.is_grad_enabled()
    False
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any


class _Mode(threading.local):
    """This thread's grad mode (a new thread's is True)."""

    def __init__(self) -> None:
        self.enabled = True
        #: the modes the ``with`` blocks open in this thread replaced, innermost last
        self.stack: list[bool] = []
        #: the inference_mode blocks open in this thread, innermost last
        self.inference: list[bool] = []


_MODE = _Mode()


def is_grad_enabled() -> bool:
    """Whether Tensor operations in this thread record a graph."""
    return _MODE.enabled


class _GradMode:
    """A context manager and decorator that sets the grad mode inside its block.
    Each ``with`` pushes the mode it replaces on a stack of its thread (blocks nest),
    so one instance may be nested, and entered by several threads at once. (Nothing
    per instance: a ``with no_grad():`` in a training loop leaves no garbage.)"""

    _mode = False

    def __new__(cls, *args: Any) -> Any:
        if len(args) == 1 and callable(args[0]) and cls is not set_grad_enabled:
            return cls()(args[0])  # a bare ``@no_grad`` decorator
        return super().__new__(cls)

    def __init__(self, *args: Any) -> None:
        pass

    def __enter__(self) -> None:
        _MODE.stack.append(_MODE.enabled)
        _MODE.enabled = self._mode

    def __exit__(self, *exc: Any) -> None:
        _MODE.enabled = _MODE.stack.pop()

    def __call__(self, fn: Callable) -> Callable:
        mode = self._mode

        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with _mode_class(mode)():
                return fn(*args, **kwargs)
        return wrapped


class no_grad(_GradMode):
    """``with symgrad.no_grad():``, ``@symgrad.no_grad()`` or ``@symgrad.no_grad``:
    results record no graph.

        >>> import symgrad as torch
        >>> x = torch.ones(2, requires_grad=True)
        >>> with torch.no_grad():
        ...     y = x * 2
        >>> y.requires_grad, y.grad_fn
        (False, None)
    """

    _mode = False


class set_grad_enabled(_GradMode):
    """``set_grad_enabled(False)`` disables grad at once, as a function; used as a
    context manager (or decorator), it restores the previous mode when the block ends.

        >>> import symgrad as torch
        >>> with torch.set_grad_enabled(False):
        ...     torch.is_grad_enabled()
        False
        >>> torch.is_grad_enabled()
        True
    """

    def __init__(self, mode: bool) -> None:
        super().__init__()
        self._mode = bool(mode)
        self._restore = _MODE.enabled  # what the block's end restores (in this thread)
        _MODE.enabled = self._mode

    def __enter__(self) -> None:
        pass  # the mode was set when the object was made

    def __exit__(self, *exc: Any) -> None:
        _MODE.enabled = self._restore

    def __call__(self, fn: Callable) -> Callable:
        self.__exit__()  # as a decorator, it only applies inside ``fn``
        return super().__call__(fn)


class enable_grad(no_grad):
    """The opposite of :class:`no_grad`."""

    _mode = True


class inference_mode(_GradMode):
    """``with torch.inference_mode():`` (or as a decorator): no graph is recorded, as under
    :class:`no_grad`; ``inference_mode(False)`` enables grad inside, as PyTorch's. (PyTorch's
    inference tensors, refused later by autograd, are not modelled: such uses compute.)

        >>> import symgrad as torch
        >>> x = torch.ones(2, requires_grad=True)
        >>> with torch.inference_mode():
        ...     (x * 2).requires_grad, torch.is_inference_mode_enabled()
        (False, True)
    """

    def __init__(self, mode: bool = True) -> None:
        super().__init__()
        self._inference = bool(mode)

    def __enter__(self) -> None:
        _MODE.stack.append(_MODE.enabled)
        _MODE.inference.append(self._inference)
        _MODE.enabled = not self._inference  # PyTorch's: (False) enables grad

    def __exit__(self, *exc: Any) -> None:
        _MODE.inference.pop()
        _MODE.enabled = _MODE.stack.pop()

    def __call__(self, fn: Callable) -> Callable:
        inference = self._inference

        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with inference_mode(inference):
                return fn(*args, **kwargs)
        return wrapped


def is_inference_mode_enabled() -> bool:
    """Whether this thread is inside an ``inference_mode()`` block."""
    return bool(_MODE.inference) and _MODE.inference[-1]


def _mode_class(mode: bool) -> type[_GradMode]:
    return enable_grad if mode else no_grad
