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
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from typing import Any

#: loops of at least this many elements run in parallel (benchmarks/parallel_threshold.py)
PARALLEL_MIN = 65536
_LOCK = threading.Lock()


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


def set_num_threads(n: int) -> None:
    """Use ``n`` threads in parallel kernels from now on (at most ``NUMBA_NUM_THREADS``,
    which defaults to the number of cores). Results do not change with it.

        >>> import symgrad as sg
        >>> sg.set_num_threads(1); sg.get_num_threads()
        1
        >>> sg.set_num_threads(sg.max_threads())
    """
    import numba

    numba.set_num_threads(int(n))


def get_num_threads() -> int:
    """The number of threads parallel kernels use now."""
    import numba

    return numba.get_num_threads()


def max_threads() -> int:
    """The most threads :func:`set_num_threads` accepts (``NUMBA_NUM_THREADS``)."""
    import numba

    return numba.config.NUMBA_NUM_THREADS


def serialized(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` (a parallel kernel) called under the one lock of parallel kernels."""
    @functools.wraps(fn)
    def call(*args: Any) -> Any:
        with _LOCK:
            return fn(*args)
    return call
