"""Grad mode: whether Tensor operations record a graph (``no_grad`` and friends).

    >>> import symgrad as torch
    >>> with torch.no_grad():
    ...     torch.is_grad_enabled()
    False
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

_grad_enabled = True


def is_grad_enabled() -> bool:
    return _grad_enabled


class _GradMode:
    """A context manager and decorator that sets the grad mode inside its block.
    Each ``with`` pushes the mode it replaces, so one instance may be nested."""

    _mode = False

    def __new__(cls, *args: Any) -> Any:
        if len(args) == 1 and callable(args[0]) and cls is not set_grad_enabled:
            return cls()(args[0])  # a bare ``@no_grad`` decorator
        return super().__new__(cls)

    def __init__(self, *args: Any) -> None:
        self._previous: list[bool] = []

    def __enter__(self) -> None:
        global _grad_enabled
        self._previous.append(_grad_enabled)
        _grad_enabled = self._mode

    def __exit__(self, *exc: Any) -> None:
        global _grad_enabled
        _grad_enabled = self._previous.pop()

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
        global _grad_enabled
        super().__init__()
        self._mode = bool(mode)
        self._previous.append(_grad_enabled)  # what the block's end restores
        _grad_enabled = self._mode

    def __enter__(self) -> None:
        pass  # the mode was set when the object was made

    def __call__(self, fn: Callable) -> Callable:
        _GradMode.__exit__(self)  # as a decorator, it only applies inside ``fn``
        return super().__call__(fn)


class enable_grad(no_grad):
    """The opposite of :class:`no_grad`."""

    _mode = True


def _mode_class(mode: bool) -> type[_GradMode]:
    return enable_grad if mode else no_grad
