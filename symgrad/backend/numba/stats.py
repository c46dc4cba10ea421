"""What compiling kernels cost this process: the counts :func:`compile_stats` reports.

Numba counts the signatures each dispatcher compiled and loaded from its disk
cache; the dispatchers of kernels still loaded are read when asked
(:func:`track` registers one), and the counts of those collected are kept
(:func:`_retire`). Besides, :func:`count` adds up what symgrad measures itself:
the seconds compiles took, calls the numpy interpreter answered while a kernel
compiled, first calls that ran compiled code; and the kernels compiling in the
background right now (:func:`in_flight` registers who knows). :func:`compile_note`
says it in one line for a program's user. :data:`LOG` is the ``"symgrad"``
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
from collections.abc import Callable
from typing import Any

_DISPATCHERS: weakref.WeakSet[Any] = weakref.WeakSet()  # every kernel still alive
_TOTALS = {"kernels": 0, "compiled": 0, "loaded_from_disk": 0}  # of those collected
#: what compile_stats() reports besides Numba's own counts (under _LOCK_COUNTS)
_COUNTS = {"compile_seconds": 0.0, "interpreted_calls": 0, "compiled_calls": 0,
           "compiled_in_workers": 0}
_LOCK_COUNTS = threading.Lock()
#: how many kernels wait or compile in the background (the compile worker's queue,
#: the background thread's), each registered by its module with :func:`in_flight`
_IN_FLIGHT: list[Callable[[], int]] = []
LOG = logging.getLogger("symgrad")


def count(name: str, amount: float = 1) -> None:
    """Add to one of the counters :func:`compile_stats` reports."""
    with _LOCK_COUNTS:
        _COUNTS[name] += amount


def in_flight(counter: Callable[[], int]) -> None:
    """Count ``counter()`` in :func:`compile_stats`'s ``compiling``."""
    _IN_FLIGHT.append(counter)


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
    execution), first calls of each kernel and signature that ran compiled code
    (later calls of a signature go straight to Numba's dispatcher, uncounted, to keep a
    call's overhead under a microsecond), and ``compiling``: the kernels queued or
    compiling (or, a process's first, loading) in the background now.

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
    totals["compiling"] = sum(counter() for counter in _IN_FLIGHT)
    return totals


def compile_note() -> str:
    """One line for a program's user on what compiling cost this process, if anything
    compiled or still compiles in the background (else ""): a script prints it at its
    end (on stderr), so that a first run slower than the next, or a process whose
    kernels are still compiling when it ends, is never a mystery.

        >>> compile_note() == "" or compile_note().startswith("symgrad: ")
        True
    """
    stats = compile_stats()
    compiled, compiling = stats["compiled"], stats["compiling"]
    if not compiled and not compiling:
        return ""
    parts = []
    if compiled:
        parts.append(f"{_n(compiled, 'kernel')} compiled ({stats['compile_seconds']:.1f} s)")
    if compiling:
        parts.append(f"{_n(compiling, 'kernel')} still compiling in the background (the next "
                     f"run loads {'it' if compiling == 1 else 'them'} from the disk cache)")
    if stats["interpreted_calls"]:
        parts.append(f"{_n(stats['interpreted_calls'], 'call')} answered by the numpy "
                     "interpreter meanwhile")
    return "symgrad: " + "; ".join(parts)


def _n(count: int, what: str) -> str:
    return f"{count} {what}{'' if count == 1 else 's'}"


def _retire(stats: Any) -> None:
    """Keep the counts of a kernel's dispatcher that was collected."""
    _TOTALS["kernels"] += 1
    _TOTALS["compiled"] += sum(stats.cache_misses.values())
    _TOTALS["loaded_from_disk"] += sum(stats.cache_hits.values())
