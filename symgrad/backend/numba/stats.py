"""What compiling kernels cost this process: the counts :func:`compile_stats` reports.

Numba counts the signatures each dispatcher compiled and loaded from its disk
cache; the dispatchers of kernels still loaded are read when asked
(:func:`track` registers one), and the counts of those collected are kept
(:func:`_retire`). Besides, :func:`count` adds up what symgrad measures itself:
the seconds compiles took, calls the numpy interpreter answered while a kernel
compiled, first calls that ran compiled code. :data:`LOG` is the ``"symgrad"``
logger that compiles are logged on (``sg.config.log_compiles``).
:mod:`.compile` loads kernels and feeds these counts; it re-exports the names.

    >>> count("interpreted_calls", 0)
    >>> compile_stats()["interpreted_calls"] >= 0
    True
"""

from __future__ import annotations

import logging
import threading
import weakref
from typing import Any

_DISPATCHERS: weakref.WeakSet[Any] = weakref.WeakSet()  # every kernel still alive
_TOTALS = {"kernels": 0, "compiled": 0, "loaded_from_disk": 0}  # of those collected
#: what compile_stats() reports besides Numba's own counts (under _LOCK_COUNTS)
_COUNTS = {"compile_seconds": 0.0, "interpreted_calls": 0, "compiled_calls": 0,
           "compiled_in_workers": 0}
_LOCK_COUNTS = threading.Lock()
LOG = logging.getLogger("symgrad")


def count(name: str, amount: float = 1) -> None:
    """Add to one of the counters :func:`compile_stats` reports."""
    with _LOCK_COUNTS:
        _COUNTS[name] += amount


def track(function: Any) -> None:
    """Count a kernel's Numba dispatcher in :func:`compile_stats`, alive or collected."""
    _DISPATCHERS.add(function)
    # not at exit: the dispatcher is still counted alive then (compile_stats() from an
    # atexit handler would count it twice)
    weakref.finalize(function, _retire, function.stats).atexit = False


def compile_stats() -> dict[str, Any]:
    """Totals over this process: kernels imported, signatures compiled (here, and for
    this process in its compile worker, :mod:`.worker`, also counted apart as
    ``compiled_in_workers``) and loaded from disk (Numba's counts), the seconds those
    took, calls answered by the numpy interpreter while a kernel compiled (tiered
    execution), and first calls of each
    kernel and signature that ran compiled code. (Later calls of a signature go straight
    to Numba's dispatcher, uncounted, to keep a call's overhead under a microsecond.)

        >>> import symgrad as sg
        >>> sorted(sg.compile_stats())[:3]
        ['compile_seconds', 'compiled', 'compiled_calls']
    """
    totals: dict[str, Any] = dict(_TOTALS)
    alive = list(_DISPATCHERS)
    for function in alive:
        stats = function.stats
        totals["compiled"] += sum(stats.cache_misses.values())
        totals["loaded_from_disk"] += sum(stats.cache_hits.values())
    totals["kernels"] += len(alive)
    with _LOCK_COUNTS:
        counts = dict(_COUNTS)
    totals["compile_seconds"] = round(counts["compile_seconds"], 6)
    totals["interpreted_calls"] = int(counts["interpreted_calls"])
    totals["compiled_calls"] = int(counts["compiled_calls"])
    totals["compiled_in_workers"] = int(counts["compiled_in_workers"])
    totals["compiled"] += totals["compiled_in_workers"]
    return totals


def _retire(stats: Any) -> None:
    """Keep the counts of a kernel's dispatcher that was collected."""
    _TOTALS["kernels"] += 1
    _TOTALS["compiled"] += sum(stats.cache_misses.values())
    _TOTALS["loaded_from_disk"] += sum(stats.cache_hits.values())
