"""Keeping freed memory in the process, so a loop of calls does not page-fault.

A kernel returns fresh arrays and frees its temporaries when it returns. glibc's
``malloc`` gives a large block (over 128 KiB, or the size of the last large
block freed) back to the system when it is freed, so the next call maps it
again and touches every page afresh: a page fault per 4 KiB page. ``hvp`` of
Rosenbrock at n = 1e6 took 6 fresh 8 MB arrays per call, about 11,700 page
faults; on the idle 2-core machine of ``docs/benchmarks.md`` they cost 3% of
the call (8.76 ms against 8.49 ms), under a load of 4-7 they took 80% (132 ms
against 27 ms; ``python benchmarks/higher_order.py --only hvp`` with and without
``SYMGRAD_REUSE_MEMORY=1``). Since it is one loop making only its result, about
1,600 faults per call, which under a load of about 2 still cost 93 ms against
9.9 ms (2026-12-01, the README's measurement; idle, 2.9 ms per call in all).
numpy code has the same cost; JAX and PyTorch keep
their own pools.

:func:`reuse_memory` tells ``malloc`` to keep freed blocks of any size in the
process heap (``mallopt(M_MMAP_THRESHOLD)`` and ``mallopt(M_TRIM_THRESHOLD)``
raised to :data:`KEEP`, 2 GiB), so the next call's arrays reuse pages that are
already mapped. The price: the process does not give memory back to the system while
it runs (its resident size stays at its peak), and a large block freed in the
middle of the heap can only be reused by blocks that fit in it. It is process-
wide (numpy's and every other library's ``malloc`` calls too), so it is off
unless asked for: ``sg.reuse_memory()`` or ``SYMGRAD_REUSE_MEMORY=1`` at start.
``sg.reuse_memory(False)`` restores glibc's defaults and trims the heap.

Only glibc has ``mallopt``; elsewhere (macOS, Windows, musl) :func:`reuse_memory`
raises a RuntimeError rather than pretending.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

#: blocks up to this size are kept when freed (2 GiB: mallopt takes a C int)
KEEP = 2**31 - 1
#: glibc's default threshold for both settings (128 KiB)
DEFAULT = 128 * 1024
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
    except OSError:
        return None
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


def reuse_memory(on: bool = True) -> None:
    """Keep freed memory in the process (``on``) so repeated calls on large arrays do
    not page-fault fresh memory each time, or give it back as glibc does by default
    (``on=False``). Process-wide; see the module docstring for what it costs.

        >>> import symgrad as sg
        >>> sg.reuse_memory(); sg.reuse_memory(False)
    """
    libc = _libc()
    if libc is None:
        raise RuntimeError("sg.reuse_memory needs glibc's mallopt (Linux with glibc); "
                           "this platform's allocator has no such setting")
    value = KEEP if on else DEFAULT
    ok = libc.mallopt(_M_MMAP_THRESHOLD, ctypes.c_int(value)) and \
        libc.mallopt(_M_TRIM_THRESHOLD, ctypes.c_int(value))
    if not ok:
        raise RuntimeError(f"glibc refused mallopt(..., {value}): memory reuse is unchanged")
    if not on:
        libc.malloc_trim(ctypes.c_size_t(0))


def _from_environment() -> None:
    """``SYMGRAD_REUSE_MEMORY=1`` at import: :func:`reuse_memory`."""
    value = os.environ.get("SYMGRAD_REUSE_MEMORY", "").strip().lower()
    if value and value not in ("0", "false", "no", "off"):
        reuse_memory(True)
