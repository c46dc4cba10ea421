"""How many threads kernels use, and from which size a loop runs on all of them.

A fused loop of at least :func:`parallel_min` elements is generated as a ``prange`` over
chunks of rows (:mod:`.codegen`), in a kernel compiled with ``parallel=`` on for its
prange loops only (``codegen.PARALLEL_FLAGS``); smaller loops stay serial, where waking
threads costs more than it saves. The choice depends on the sizes alone, which a
specialization fixes, so it costs nothing per call, and a parallel kernel's source
(hence its cache entry) differs from the serial one's. Sums over a parallel loop's outer
axis are made per chunk and added in chunk order: the chunks are fixed by the shape, so
the result has the same bits whatever the number of threads. Numba's conversion of
whole-array calls (``np.mean(x)``) into reductions over the threads running is off for
that reason.

The threshold, :data:`PARALLEL_MIN`, is measured by
``python benchmarks/parallel_threshold.py`` (serial against parallel kernels of a
memory-bound and a transcendental-bound loop, on this 2-core machine); the
environment variable ``SYMGRAD_PARALLEL_MIN`` overrides it (``off``: never
parallel). The number of threads is Numba's: ``NUMBA_NUM_THREADS`` at start-up,
or :func:`set_num_threads` (``sg.set_num_threads``) at any time.

Numba's default threading layer without TBB (``workqueue``) aborts the process
when two Python threads run parallel kernels at once, so parallel kernels are
called under one lock (:func:`serialized`): they use every core anyway.

**Parallel or serial, chosen by measurement** (:class:`Adaptive`). A parallel kernel
loses badly when another process keeps a core busy (issue 31, measured with
``benchmarks/threads_under_load.py``): Numba's threading layer here is OpenMP
(``omp``; no TBB), whose team runs each ``prange`` in equal static shares, so the
whole loop waits for the thread that the scheduler has parked behind the busy
process, and the waiting threads spin. On a loaded 2-core machine the seed
gradient at n = 1e6 took 10-22 ms on 2 threads, 2.1-3.0 ms on 1 thread of the same
parallel kernel, and 0.41-0.65 ms as the serial kernel (the handwritten Numba loop:
0.33-0.52 ms). Most of that was the parallel kernel's loop, not OpenMP: its chunks
indexed rows from a first row LLVM could not tell was not negative, so Numba's
wraparound of negative indices stayed in the loop (session 8; :meth:`.codegen._Kernel._chunked`
now bounds it; Rosenbrock's chunked loop, reading ``x[i0 + 1]``, still took 1.9 ms
of CPU on one thread against its flat twin's 0.44, load 9). The one-thread alternative is still not
the parallel kernel at one thread but its **serial twin**: the same source
compiled without ``parallel=`` (``prange`` is ``range`` there), compiled on demand
(:func:`.codegen.serial_twin`; with tiered execution in the compile worker, the parallel
kernel answering until it is on disk: compiled on the calling thread, it stopped a warm
LeNet step for 22-43 s), except that a loop with no sum over its rows is one flat
loop there (the chunks cost Rosenbrock's gradient a third of its time). A loop that sums
over its rows keeps the parallel kernel's chunks and their order of summation, so the
results have the same bits (``tests/test_threads.py``).
Each parallel kernel times its calls: after ``WARMUP`` calls it tries each variant
``PROBE`` times (alternating, the first call of each untimed), keeps the faster by
median time, the parallel kernel only when it is faster by ``GAIN`` (the two errors
do not cost alike: the parallel kernel chosen wrongly took 19-27 ms a call where its twin
took 0.3-0.6, under load, and the twin chosen wrongly costs at most the factor of
the threads; one call preempted by the scheduler, a lottery of several ms at load 12,
must not decide either), and tries the other again once after ``interval`` calls, an interval
that doubles (up to ``MAX_INTERVAL``) while the choice holds and falls back to
``MIN_INTERVAL`` when it flips. Sizes are kept apart (a kernel is generic over
sizes): a power-of-two bucket of the arguments' element count keys the state.
``sg.set_num_threads(n)`` pins the choice (1: the serial twin; more: the parallel
kernel on n threads); ``sg.set_num_threads(None)`` returns to measuring.

**Idle workers sleep** (:func:`start`). libgomp's workers spin after each parallel
region before they sleep: after one 2-thread call of the seed gradient at n = 1e6
(about 0.3 ms of work) the process burnt 2.2-8.4 ms of CPU during the next 200 ms, on
the core the serial twin or anything else then wanted (load 5.4-5.7); the pinned
2-thread Rosenbrock gradient took 7.9 ms of CPU a call, 2.3-2.6 ms with passive waits
(docs/benchmarks.md, issue 31 item 7). So symgrad starts Numba's threading layer itself,
before its first parallel kernel compiles or runs, with ``OMP_WAIT_POLICY=PASSIVE`` in
the environment for that moment only (libgomp reads it once, when it is loaded), unless
``OMP_WAIT_POLICY`` or ``GOMP_SPINCOUNT`` is set. It applies to that libgomp, which
other Numba parallel code in the process shares; a libgomp loaded before (the layer
already started) or loaded later keeps its own policy.
"""

from __future__ import annotations

import functools
import os
import statistics
import threading
import time
from collections.abc import Callable
from typing import Any

#: loops of at least this many elements run in parallel (benchmarks/parallel_threshold.py)
PARALLEL_MIN = 65536
_LOCK = threading.Lock()
#: calls of a parallel kernel before it measures anything (a kernel called once or twice,
#: as in most tests, never compiles its serial twin)
WARMUP = 2
#: timed calls of each variant in a probe
PROBE = 3
#: the parallel kernel is kept only when its median time is below this share of the twin's
GAIN = 0.9
MIN_INTERVAL, MAX_INTERVAL = 16, 1024
#: the thread count pinned by :func:`set_num_threads` (None: measured per kernel)
_PINNED: list[int | None] = [None]
#: whether :func:`start` ran (under its lock)
_STARTED = [False]
_START_LOCK = threading.Lock()


def start() -> None:
    """Start Numba's threading layer once, its OpenMP workers waiting passively unless
    the environment chooses (module docstring). Safe to call from any thread."""
    if _STARTED[0]:
        return
    import numba

    with _START_LOCK:
        if _STARTED[0]:
            return
        chosen = any(k in os.environ for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT"))
        if not chosen:
            os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
        try:
            numba.get_num_threads()  # launches the layer: libgomp reads its environment
        finally:
            if not chosen:
                del os.environ["OMP_WAIT_POLICY"]
        _STARTED[0] = True


def parallel_min() -> int | None:
    """The threshold in force: ``SYMGRAD_PARALLEL_MIN`` if set (``off``: None), else
    :data:`PARALLEL_MIN`."""
    env = os.environ.get("SYMGRAD_PARALLEL_MIN", "").strip().lower()
    if not env:
        return PARALLEL_MIN
    if env in ("off", "none", "0", "no"):
        return None
    try:
        return max(2, int(float(env)))
    except ValueError:
        raise ValueError(f"SYMGRAD_PARALLEL_MIN must be a number of elements or 'off', "
                         f"not {env!r}") from None


def set_num_threads(n: int | None) -> None:
    """Use ``n`` threads in parallel kernels from now on (at most ``NUMBA_NUM_THREADS``,
    which defaults to the number of cores; 1: each kernel's serial twin), and in the
    matrix products of numpy's and scipy's OpenBLAS, as ``torch.set_num_threads`` bounds
    PyTorch's (:func:`symgrad.backend.blas.set_threads`). Kernels' results do not change
    with it. ``None``: all threads, each kernel choosing between them and its serial
    twin by timing its calls (the default), and OpenBLAS's counts as they were.

        >>> import symgrad as sg
        >>> sg.set_num_threads(1); sg.get_num_threads()
        1
        >>> sg.set_num_threads(None)
    """
    import numba

    from .. import blas

    start()
    blas.set_threads(n)
    if n is None:
        _PINNED[0] = None
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        return
    numba.set_num_threads(int(n))
    _PINNED[0] = int(n)


def get_num_threads() -> int:
    """The number of threads parallel kernels use now."""
    import numba

    start()
    return numba.get_num_threads()


def max_threads() -> int:
    """The most threads :func:`set_num_threads` accepts (``NUMBA_NUM_THREADS``)."""
    import numba

    return numba.config.NUMBA_NUM_THREADS


def serialized(fn: Callable[..., Any],
               twin: Callable[[], Callable[..., Any]] | None = None,
               twin_ready: Callable[[tuple], bool] | None = None) -> Callable[..., Any]:
    """``fn`` (a parallel kernel) called under the one lock of parallel kernels; with
    ``twin`` (which makes its serial twin), an :class:`Adaptive` choice between them."""
    if twin is not None:
        return Adaptive(fn, twin, twin_ready)

    @functools.wraps(fn)
    def call(*args: Any) -> Any:
        with _LOCK:
            return fn(*args)
    return call


class _State:
    """What one kernel has measured at one size bucket."""

    __slots__ = ("calls", "choice", "interval", "need", "next_probe", "times")

    def __init__(self) -> None:
        self.calls = 0
        self.choice = "parallel"
        self.interval = MIN_INTERVAL
        self.next_probe = WARMUP
        self.need = PROBE  # timed calls of each variant before deciding
        self.times: dict[str, list[float]] = {"parallel": [], "serial": []}


class Adaptive:
    """A parallel kernel and its serial twin, the faster one called (module docstring).

    Both give the same bits, so the choice changes only the time. ``choices()`` says
    what each size bucket uses now (for benchmarks and tests)."""

    def __init__(self, parallel: Callable[..., Any], twin: Callable[[], Callable[..., Any]],
                 twin_ready: Callable[[tuple], bool] | None = None):
        self.parallel = parallel
        self._make_twin = twin
        #: whether the twin may run now without compiling on the calling thread (called
        #: with a call's arguments; it may start its compile elsewhere, :mod:`.compile`)
        self._twin_ready = twin_ready or (lambda args: True)
        self._serial: Callable[..., Any] | None = None
        self._warm = {"parallel": True, "serial": False}  # the first call of each ran
        self.states: dict[int, _State] = {}
        functools.update_wrapper(self, parallel)

    def serial(self) -> Callable[..., Any]:
        """The serial twin, made (compiled, or loaded from the disk cache) on first use."""
        if self._serial is None:
            self._serial = self._make_twin()
        return self._serial

    def _run(self, which: str, args: tuple) -> Any:
        return (self.parallel if which == "parallel" else self.serial())(*args)

    def __call__(self, *args: Any) -> Any:
        with _LOCK:
            pinned = _PINNED[0]
            if pinned is not None:
                return self._run("serial" if pinned <= 1 else "parallel", args)
            size = 0
            for a in args:
                size += getattr(a, "size", 1)
            state = self.states.get(size.bit_length())
            if state is None:
                state = self.states[size.bit_length()] = _State()
            state.calls += 1
            if state.calls < state.next_probe:
                return self._run(state.choice, args)
            p, s = (len(state.times[k]) for k in ("parallel", "serial"))
            which = "serial" if s <= p else "parallel"  # alternate, serial first
            if not self._warm[which] and which == "serial" and not self._twin_ready(args):
                return self._run("parallel", args)  # the twin compiles elsewhere: not yet
            if not self._warm[which]:  # a first call compiles or loads: not timed
                self._warm[which] = True
                self._run(which, args)
            start = time.perf_counter()
            result = self._run(which, args)
            state.times[which].append(time.perf_counter() - start)
            self._decide(state)
            return result

    @staticmethod
    def _decide(state: _State) -> None:
        """After ``need`` timed calls of each: keep the faster (by median time, the parallel
        kernel only by ``GAIN``). A single-call recheck that disagrees with the choice is
        not trusted: it starts a full probe."""
        p, s = state.times["parallel"], state.times["serial"]
        if len(p) < state.need or len(s) < state.need:
            return
        choice = "parallel" if statistics.median(p) < GAIN * statistics.median(s) else "serial"
        full = state.need >= PROBE
        state.times = {"parallel": [], "serial": []}
        if not full and choice != state.choice:
            state.need = PROBE  # probe again, now, with more calls
            return
        state.interval = (min(2 * state.interval, MAX_INTERVAL) if choice == state.choice
                          else MIN_INTERVAL)
        state.choice = choice
        state.need = 1
        state.next_probe = state.calls + state.interval

    def choices(self) -> dict[int, str]:
        """size bucket (bit length of the element count) -> the variant in use."""
        return {bucket: st.choice for bucket, st in self.states.items()}
