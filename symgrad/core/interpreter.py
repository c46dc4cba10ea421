"""The numpy reference interpreter: every backend is compared against it.

It holds only the values still to be read (each is dropped after its last
use, :func:`symgrad.core.ir.dead_after`); :func:`peak_bytes` estimates that
working set from the graph, before anything runs.

It also answers the first calls of a function whose kernel is still compiling
(tiered execution, :mod:`symgrad.backend.numba.tiered`): within :func:`deadline` a
loop's body stops with :class:`OverBudget` once the time is up, so that a loop of
many steps waits for the kernel instead. A graph without loops is never stopped: it
costs what numpy's eager evaluation of the same operations costs, bounded by the
graph's size (examples/lenet.py trains on the interpreter while its backward kernel
compiles for one to two minutes under load).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from .ir import DYN, TUPLE, Atom, Aval, Graph, IRError, Literal, dead_after
from .ir import nbytes as aval_nbytes


class OverBudget(Exception):
    """The interpreter ran past the :func:`deadline` it was given."""


class _Deadline(threading.local):
    at: float | None = None


_DEADLINE = _Deadline()


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Within this block, a loop body run by :func:`runner` raises :class:`OverBudget`
    after ``seconds`` (on this thread; graphs are pure, so nothing is left half done)."""
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

    dead = dead_after(graph)
    with np.errstate(all="ignore"):
        for eqn, done in zip(graph.eqns, dead):
            out = eqn.prim.impl(*map(read, eqn.inputs), **eqn.params)
            env[id(eqn.out)] = _as_value(out, eqn.out.aval)
            for key in done:  # the working set is the live values, not every value made
                del env[key]
    return [_owned(read(a), a.aval) for a in graph.outputs]


def peak_bytes(graph: Graph) -> int:
    """The most bytes :func:`interpret` holds at once in the values of ``graph``:
    its inputs, then each equation's output (and as much again for the
    temporaries of a numpy implementation) while the values still read are alive,
    and at the end the copies of the outputs it returns. Constants are not counted
    (the graph holds them anyway).

        >>> import numpy as np, symgrad as sg
        >>> graph = sg.jit(lambda x: np.sum(np.sin(x) * 2.0)).graph(np.ones(1000))
        >>> peak_bytes(graph)  # x and sin(x) alive while 2 * sin(x) is made
        32000
    """
    def nbytes(a: Atom) -> int:
        return aval_nbytes(a.aval)

    size = {id(e.out): nbytes(e.out) for e in graph.eqns}  # the caller holds the inputs
    live = sum(nbytes(v) for v in graph.inputs)
    peak = live
    for eqn, done in zip(graph.eqns, dead_after(graph)):
        out = nbytes(eqn.out)
        peak = max(peak, live + 2 * out)
        live += out - sum(size[k] for k in done if k in size)
    outs = sum(nbytes(a) for a in graph.outputs)
    return max(peak, live + outs)


_RUNNERS: dict[int, tuple[Graph, Callable[..., list]]] = {}
_RUNNERS_LOCK = threading.Lock()


def runner(graph: Graph) -> Callable[..., list]:
    """``interpret(graph, ...)`` for a graph run many times (a loop's body): the equations
    resolved once into a list of steps. Its arguments are taken as they are (values the
    enclosing interpreter made). Kept for the last 256 graphs."""
    hit = _RUNNERS.get(id(graph))
    if hit is not None and hit[0] is graph:
        return hit[1]
    slots: dict[int, int] = {id(v): k for k, v in enumerate(graph.inputs)}
    for v, _ in graph.consts:
        slots[id(v)] = len(slots)
    steps = []
    for e in graph.eqns:
        operands = tuple((True, a.value) if isinstance(a, Literal) else (False, slots[id(a)])
                         for a in e.inputs)
        steps.append((e.prim.impl, operands, dict(e.params), e.out.aval, len(slots)))
        slots[id(e.out)] = len(slots)
    outputs = [(True, a.value) if isinstance(a, Literal) else (False, slots[id(a)])
               for a in graph.outputs]
    consts = [value for _, value in graph.consts]
    size, name = len(slots), graph.name

    def run(*args: Any) -> list:
        env: list[Any] = [*args, *consts]
        env += [None] * (size - len(env))
        at = _DEADLINE.at
        with np.errstate(all="ignore"):
            for impl, operands, params, aval, slot in steps:
                if at is not None and time.perf_counter() > at:
                    raise OverBudget(f"interpreting {name} took longer than its budget")
                out = impl(*[v if lit else env[v] for lit, v in operands], **params)
                env[slot] = _as_value(out, aval)
        return [v if lit else env[v] for lit, v in outputs]

    with _RUNNERS_LOCK:
        if len(_RUNNERS) >= 256:
            _RUNNERS.clear()
        _RUNNERS[id(graph)] = (graph, run)
    return run


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
