"""Tiered execution: first answers from the numpy interpreter while the kernel compiles.

A kernel that is not in the disk cache takes Numba a second or more to compile (tens of
seconds for a long unrolled graph); the numpy interpreter answers a small problem in
milliseconds. :class:`Tiered` runs the first calls on the interpreter while the kernel
compiles elsewhere, and every call after the kernel is ready on the kernel. A kernel
already in the disk cache is loaded at its first call, on the calling thread, even a
process's first load (Numba's target set-up, 0.4 s or more), so a warm cache's run
computes every call on the kernel. Where a kernel compiles: in the compile worker
process (:mod:`.worker`), for exactly the Numba types of the first call's arguments (no
copies); the kernel's machine code lands in the disk cache and the next call loads it. A
split graph's chain of kernels is driven from one daemon thread: it runs the chain once
with the first call's arguments (its later pieces' input types depend on the earlier
pieces' outputs), each piece compiled in the worker for exactly the arguments it gets
before it runs, then loaded. A kernel with no file in the cache (an unusable cache)
compiles on that thread. Never a thread per call, and nothing waits for it at exit. A
call whose loop runs past ``sg.config.tiered_budget`` seconds (a loop of many steps)
stops interpreting and waits for the kernel
(:class:`symgrad.core.interpreter.OverBudget`; graphs are pure, so nothing is left half
done; the wait is for the job in flight, then a load: the calling thread never compiles
it a second time). A graph without loops is always interpreted until the kernel is
ready: its cost is numpy's for the same operations.
The answer does not depend on the tier beyond rounding: the
interpreter is numpy's arithmetic and the kernel LLVM's, which the test suite
compares (``tests/test_primitives.py::test_backends_agree``). They do differ in the
last bits (float32 rounded after each step against float64 inside a fused loop, a
sum's order, numpy's ``exp`` against vecmath's), so on a cold cache which call first
runs the kernel, a matter of timing, may change a program's bits from run to run (a
warm cache's runs agree with each other and with tiering off); with tiering off
(``sg.use_deterministic_algorithms(True)``) it does not, and a kernel that was
interpreting waits for its compile at its next call.
A graph that calls the user's Python (``callback``: ``sg.pure_callback``, an
``autograd.Function``'s backward, a module's backward hook) is not tiered: it
compiles first, as both of the above would run that Python a second time.

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

import os
import queue
import threading
from collections.abc import Callable
from typing import Any

from ...core.config import config
from ...core.interpreter import OverBudget, deadline, interpret
from ...core.ir import Graph, subgraphs
from ...prims.custom import callback_p
from . import compile as kernels
from . import worker
from .codegen import serial_twin


def _calls_python(graph: Graph) -> bool:
    """Whether ``graph`` (or a graph it holds) calls the user's Python (``callback``)."""
    return any(e.prim is callback_p or any(_calls_python(g) for _, g in subgraphs(e))
               for e in graph.eqns)


class Tiered:
    """Calls of ``graph``: interpreted until ``kernel`` (called with the graph's inputs
    and then ``consts``) has compiled elsewhere, then compiled."""

    def __init__(self, graph: Graph, kernel: Callable[..., tuple], consts: tuple):
        self.graph = graph
        self.kernel = kernel
        self.consts = consts
        self._n = len(graph.inputs)
        self._lock = threading.Lock()
        self._job: worker.Job | None = None
        self._ready = False
        self._failed = False

    def __call__(self, *args: Any) -> tuple:
        if self._ready or self._failed:
            return self.kernel(*args)
        if not config.tiered:  # switched off since (sg.use_deterministic_algorithms)
            return self._compiled(args)
        job = self._job or self._start(args)
        if job.done():
            self._ready, self._failed = job.state == "done", job.state != "done"
            return self.kernel(*args)  # loads the machine code (or compiles: a failed job)
        try:
            with deadline(config.tiered_budget):
                out = tuple(interpret(self.graph, *args[:self._n]))
        except OverBudget:  # a loop of many steps: the kernel is worth the wait
            job.wait()  # for the compile in flight, never a second one on this thread
            self._ready, self._failed = job.state == "done", job.state != "done"
            return self.kernel(*args)
        kernels.count("interpreted_calls")
        return out

    def _compiled(self, args: tuple) -> tuple:
        """The kernel's answer, compiled first: after the compile in flight, if any
        (never a second one on this thread), else on this thread."""
        if self._job is not None:
            self._job.wait()
        out = self.kernel(*args)
        self._ready = True
        return out

    def _start(self, args: tuple) -> worker.Job:
        with self._lock:
            if self._job is None:
                kernel = self.kernel
                if isinstance(kernel, kernels.Kernel) and kernel.path is not None:
                    from numba import typeof

                    self._job = worker.submit(kernel, tuple(typeof(a) for a in args))
                else:
                    self._job = _BACKGROUND.submit(kernel, args)
            return self._job

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the compile; whether the kernel is ready (then the next call loads it)."""
        job = self._job
        return job is not None and job.wait(timeout)

    def dispatcher(self) -> Callable[..., tuple] | None:
        """What a warm call may go straight to: the kernel's dispatcher once it is ready
        and a call has run it, else None (calls keep coming here until then)."""
        if not self._ready:
            return None
        inner = getattr(self.kernel, "dispatcher", None)
        return inner() if inner is not None else self.kernel


class _Background:
    """One daemon thread for what the worker process cannot do alone: kernels with no
    file in the cache (compiled here), chains of a split graph's kernels (run once with
    a first call's arguments, each piece compiled in the worker first). Nothing waits
    for it at exit; an unfinished compile is redone later."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._current: worker.Job | None = None
        self._compiles = 0  # compile jobs queued or running

    def submit(self, kernel: Callable[..., tuple], args: tuple) -> worker.Job:
        """Compile ``kernel`` for ``args``."""
        job = worker.Job(kernel, ())
        with self._lock:
            self._compiles += 1
        self._queue.put((job, args))
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="symgrad-compile",
                                                daemon=True)
                self._thread.start()
        return job

    def pending(self) -> int:
        """Compiles queued or running."""
        return self._compiles

    def _run(self) -> None:
        while True:
            job, args = self._queue.get()
            with _RUNNING:
                self._run_one(job, args)
            del job, args

    def _run_one(self, job: worker.Job, args: tuple) -> None:
        job.state, self._current = "running", job
        try:
            if isinstance(job.kernel, kernels.Kernel):
                from numba import typeof

                job.kernel.compile_signature(tuple(typeof(a) for a in args))
            elif hasattr(job.kernel, "run"):  # a split graph's Chain
                job.kernel.run(args, before=_compile_in_the_worker)
            else:
                job.kernel(*args)
        except Exception:  # noqa: BLE001 -- the calling thread's own call will raise it
            job.state = "failed"
        else:
            job.state = "done"
        self._current = None
        with self._lock:
            self._compiles -= 1

    def _forked(self) -> None:
        """In a forked child (no thread here): the calls waiting compile for themselves."""
        waiting = [self._current]
        while not self._queue.empty():
            waiting.append(self._queue.get_nowait()[0])
        for job in waiting:
            if job is not None:
                job.state = "failed"
        self.__init__()  # type: ignore[misc]


#: held while the background thread runs a job: a fork waits for it (a child born while
#: that thread held an import lock or Numba's would wait for them forever); registered
#: after the locks of :mod:`.compile` and :mod:`.keylock`, so taken before them
_RUNNING = threading.Lock()
_BACKGROUND = _Background()
kernels.in_flight(_BACKGROUND.pending)


def _compile_in_the_worker(kernel: Any, args: tuple) -> None:
    """Before a split graph's piece runs on the background thread: have the compile worker
    compile its kernel for exactly ``args`` (unless this process or the disk cache has
    it), and wait without holding :data:`_RUNNING` (a fork need not wait for the
    worker). The piece's call then loads the machine code; a failed job leaves the
    compile to that call."""
    if not isinstance(kernel, kernels.Kernel) or kernel.path is None \
            or kernels.on_disk(kernel.source):
        return
    from numba import typeof

    signature = tuple(typeof(a) for a in args)
    if signature in kernel.function.overloads:
        return
    job = worker.submit(kernel, signature)
    _RUNNING.release()
    try:
        job.wait()
    finally:
        _RUNNING.acquire()


def twin_compiled(source: Any, job: list, args: tuple) -> bool:
    """Whether the serial twin of the parallel kernel ``source`` may run now without
    compiling on the calling thread (:class:`.threads.Adaptive` asks before its first
    call of the twin): with tiered execution off (it compiles there, as every kernel
    does), once it is on disk, or once the compile worker, asked by the first call that
    wants it (``job``), is done with it (failed: the call compiles it). Compiled on the
    calling thread, it stopped a warm LeNet step for 22-43 s under load."""
    if job:
        return job[0].done()
    if not config.tiered:
        return True
    twin = serial_twin(source)
    if kernels.on_disk(twin):
        return True
    kernel = kernels.load(twin)
    if kernel.path is None:  # no usable cache: nothing the worker could hand over
        return True
    from numba import typeof

    job.append(worker.submit(kernel, tuple(typeof(a) for a in args)))
    return False


kernels.twin_ready(twin_compiled)


def _after_fork_in_child() -> None:
    _RUNNING.release()
    _BACKGROUND._forked()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_RUNNING.acquire, after_in_parent=_RUNNING.release,
                        after_in_child=_after_fork_in_child)


def tiered(graph: Graph, kernel: Callable[..., tuple], consts: tuple,
           sources: tuple) -> Callable[..., tuple]:
    """``kernel`` itself when tiered execution is off or its code is on disk, else a
    :class:`Tiered` of it, compiling in the worker."""
    if not config.tiered or _calls_python(graph):
        # (a graph that calls the user's Python, an autograd.Function's backward, a module
        # hook, sg.pure_callback, runs it once per call: tiers would run it again, on the
        # background thread that runs a chain to compile it, or after an interpretation
        # abandoned over the budget; a module's backward hook fired twice in a step)
        return kernel
    if all(kernels.on_disk(s) for s in sources):
        # loaded on this thread, even a process's first load (Numba's target set-up,
        # 0.4 s or more): interpreting meanwhile made a warm run's bits depend on when
        # the load finished (the tiers round differently), so reruns of a program
        # differed
        return kernel
    return Tiered(graph, kernel, consts)
