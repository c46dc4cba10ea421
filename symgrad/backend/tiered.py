"""Tiered execution: first answers from the numpy interpreter while Numba compiles.

A kernel that is not in the disk cache takes Numba a second or more to compile
(tens of seconds for a long unrolled graph); the numpy interpreter answers a
small problem in milliseconds. :class:`Tiered` runs the first calls on the
interpreter while a background thread compiles the kernel (by calling it once
with the same arguments), and every call after the kernel is ready on the
kernel. A call whose interpretation runs past ``sg.config.tiered_budget``
seconds (a loop of many steps) stops interpreting and waits for the kernel
(:class:`symgrad.core.interpreter.OverBudget`; graphs are pure, so nothing is
left half done). The answer does not depend on the tier beyond rounding: the
interpreter is numpy's arithmetic and the kernel LLVM's, which the test suite
compares (``tests/test_primitives.py::test_backends_agree``).

``sg.config.tiered = False`` (``SYMGRAD_TIERED=0``) compiles first, on the
calling thread, as benchmarks measure it.

    >>> import numpy as np
    >>> from symgrad.core.ir import Aval
    >>> from symgrad.numpy_api import trace
    >>> graph, _ = trace(lambda x: np.sin(x) * 2.0, [Aval((3,))], [None], ["x"])
    >>> calls = []
    >>> t = Tiered(graph, lambda *a: calls.append(a) or (np.sin(a[0]) * 2.0,), ())
    >>> t(np.zeros(3))[0]
    array([0., 0., 0.])
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ..core.config import config
from ..core.interpreter import OverBudget, deadline, interpret
from ..core.ir import Graph
from . import compile as kernels

#: the compile thread of each kernel (by id) while it runs: one per kernel
_IN_FLIGHT: dict[int, threading.Thread] = {}
_IN_FLIGHT_LOCK = threading.Lock()


class Tiered:
    """Calls of ``graph``: interpreted until ``kernel`` (called with the graph's inputs
    and then ``consts``) has compiled in a background thread, then compiled."""

    def __init__(self, graph: Graph, kernel: Callable[..., tuple], consts: tuple):
        self.graph = graph
        self.kernel = kernel
        self.consts = consts
        self._n = len(graph.inputs)
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._failed = False

    def __call__(self, *args: Any) -> tuple:
        if self._ready.is_set() or self._failed or self._warm():
            return self.kernel(*args)
        self._start(args)
        try:
            with deadline(config.tiered_budget):
                out = tuple(interpret(self.graph, *args[:self._n]))
        except OverBudget:  # a long computation: the kernel is worth the wait
            return self.kernel(*args)
        kernels.count("interpreted_calls")
        return out

    def _warm(self) -> bool:
        """Whether the kernel has run (compiled by another Tiered of the same kernel: a
        function traced on every call makes a Tiered per call)."""
        ready = getattr(self.kernel, "ready", None)
        return ready is not None and ready()

    def _start(self, args: tuple) -> None:
        with self._lock, _IN_FLIGHT_LOCK:
            if self._thread is not None:
                return
            running = _IN_FLIGHT.get(id(self.kernel))
            if running is not None and running.is_alive():
                self._thread = running  # one compile per kernel: this one waits on it
                return
            copies = tuple(a.copy() if hasattr(a, "copy") else a for a in args)
            # not a daemon: a process that ends early waits for the compile (Python joins
            # such threads before it shuts down), which leaves the kernel on disk for the
            # next process, instead of stopping Numba halfway
            self._thread = threading.Thread(target=self._compile, args=(copies,),
                                            name="symgrad-compile", daemon=False)
            for key in [k for k, t in _IN_FLIGHT.items() if not t.is_alive()]:
                del _IN_FLIGHT[key]
            _IN_FLIGHT[id(self.kernel)] = self._thread
            self._thread.start()

    def _compile(self, args: tuple) -> None:
        try:
            self.kernel(*args)
        except Exception:  # noqa: BLE001 -- the calling thread's own call will raise it
            self._failed = True
            return
        self._ready.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the background compile; whether the kernel is ready."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return self._ready.is_set() or self._warm()

    def dispatcher(self) -> Callable[..., tuple] | None:
        """What a warm call may go straight to: the kernel's dispatcher once it is ready,
        else None (calls keep coming here until then)."""
        if not (self._ready.is_set() or self._warm()):
            return None
        inner = getattr(self.kernel, "dispatcher", None)
        return inner() if inner is not None else self.kernel


def tiered(graph: Graph, kernel: Callable[..., tuple], consts: tuple,
           sources: tuple) -> Callable[..., tuple]:
    """``kernel`` itself when tiered execution is off or its code is on disk (a load is
    fast), else a :class:`Tiered` of it."""
    if not config.tiered or all(kernels.on_disk(s) for s in sources):
        return kernel
    return Tiered(graph, kernel, consts)
