"""The numpy reference interpreter: every backend is compared against it.

It also answers the first calls of a function whose kernel is still compiling
(tiered execution, :mod:`symgrad.backend.tiered`): within :func:`deadline` it
stops with :class:`OverBudget` once the time is up (between two equations, also
inside loops), so that a long computation waits for the kernel instead.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from .ir import DYN, TUPLE, Atom, Aval, Graph, IRError, Literal


class OverBudget(Exception):
    """The interpreter ran past the :func:`deadline` it was given."""


class _Deadline(threading.local):
    at: float | None = None


_DEADLINE = _Deadline()


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Within this block, :func:`interpret` raises :class:`OverBudget` after ``seconds``
    (on this thread; graphs are pure, so nothing is left half done)."""
    old = _DEADLINE.at
    _DEADLINE.at = time.perf_counter() + seconds
    try:
        yield
    finally:
        _DEADLINE.at = old


def interpret(graph: Graph, *args: Any) -> list[Any]:
    """Evaluate ``graph`` with each primitive's numpy implementation.

    Floating-point errors follow numpy's arithmetic silently (``inf``/``nan``),
    as the compiled kernels do with ``error_model="numpy"``.
    """
    if len(args) != len(graph.inputs):
        raise TypeError(f"{graph.name} takes {len(graph.inputs)} inputs, got {len(args)}")
    env: dict[int, Any] = {}
    for v, x in zip(graph.inputs, args):
        env[id(v)] = _as_value(x, v.aval)
    for v, value in graph.consts:
        env[id(v)] = value

    def read(a: Atom) -> Any:
        return a.value if isinstance(a, Literal) else env[id(a)]

    at = _DEADLINE.at
    with np.errstate(all="ignore"):
        for eqn in graph.eqns:
            if at is not None and time.perf_counter() > at:
                raise OverBudget(f"interpreting {graph.name} took longer than its budget")
            out = eqn.prim.impl(*map(read, eqn.inputs), **eqn.params)
            env[id(eqn.out)] = _as_value(out, eqn.out.aval)
    return [_owned(read(a), a.aval) for a in graph.outputs]


def _as_value(x: Any, aval: Aval) -> Any:
    """0-d values are numpy scalars, the rest arrays of the declared dtype; a tuple
    is a tuple of its parts' values. A size :data:`DYN` matches any size."""
    if aval.dtype == TUPLE:
        if not isinstance(x, tuple) or len(x) != len(aval.parts):
            raise IRError(f"value {type(x).__name__} where {aval} was declared")
        return tuple(_as_value(v, a) for v, a in zip(x, aval.parts))
    x = np.asarray(x, dtype=aval.dtype)
    if x.shape != aval.shape and not (
            x.ndim == aval.ndim and all(d == s or s == DYN for d, s in zip(x.shape, aval.shape))):
        raise IRError(f"value of shape {x.shape} where {aval} was declared")
    return x[()] if x.ndim == 0 else x


def _owned(x: Any, aval: Aval) -> Any:
    """A result the caller may keep and mutate: never a view of an input."""
    if aval.dtype == TUPLE:
        return tuple(_owned(v, a) for v, a in zip(x, aval.parts))
    if aval.ndim == 0:
        return np.dtype(aval.dtype).type(x)
    return np.array(x, dtype=aval.dtype, copy=True)
