"""Keeping freed memory in the process, so a loop of calls does not page-fault.

A kernel returns fresh arrays and frees its temporaries when it returns. glibc's
``malloc`` maps a block of at least its *mmap threshold* afresh and unmaps it when it
is freed, so the next call touches every page afresh: a page fault per 4 KiB page
(6 µs each on the 2-core benchmark machine under a load of 10, docs/benchmarks.md).
The threshold starts at 128 KiB and is dynamic: when a mapped block is freed it rises to
that block's size, up to :data:`DYNAMIC_MAX` (32 MiB on 64-bit), with the trim threshold
at twice it (more free at the heap's top is given back). So in a process that never
calls ``mallopt``, a loop of compiled calls whose arrays are at most 32 MiB reuses the
heap's pages after its first calls (measured 2026-12-02: 0 faults per call for the
seed and Rosenbrock gradients and Rosenbrock's ``hvp`` at n = 1e6, 1680 for the
interpreter's Rosenbrock gradient, whose temporaries are trimmed), and each call on
larger arrays faults all of them (the seed gradient at n = 5e6, 40 MB: 9766 faults and
15 ms per call, against 0 and 3.1 ms at n = 4e6).

:func:`reuse_memory` tells ``malloc`` to keep freed blocks of any size in the
process heap (``mallopt(M_MMAP_THRESHOLD)`` and ``mallopt(M_TRIM_THRESHOLD)``
raised to :data:`KEEP`, 2 GiB), so the next call's arrays reuse pages that are
already mapped. The price: the process does not give memory back to the system while
it runs (its resident size stays at its peak), and a large block freed in the
middle of the heap can only be reused by blocks that fit in it. It is process-
wide (numpy's and every other library's ``malloc`` calls too), so it is off
unless asked for: ``sg.reuse_memory()`` or ``SYMGRAD_REUSE_MEMORY=1`` at start.

Any ``mallopt`` call switches glibc's dynamic threshold off for good, so
``sg.reuse_memory(False)`` cannot restore it: it sets the thresholds where the dynamic
ones end (:data:`DYNAMIC_MAX`, trim at twice it) and trims the heap. Setting glibc's
starting values instead (128 KiB, as before session 5) pinned them there: every later
block over 128 KiB was fresh pages (the interpreter's Rosenbrock gradient at n = 1e6:
6736 faults per call, against 1680 in a process that never called ``mallopt`` and 0
with these values).

Only glibc has ``mallopt``; elsewhere (macOS, Windows, musl) :func:`reuse_memory`
raises a RuntimeError rather than pretending.

:func:`raise_dynamic_threshold` is what the eager ``backward()`` does once without being
asked: it lets glibc's *own* dynamic thresholds reach their maximum (32 MiB, trim at
64 MiB) by one ``malloc`` and ``free`` of a block just under it, the state any process
reaches after freeing one numpy array of 32 MiB. No ``mallopt``: the thresholds stay
glibc's, and :func:`reuse_memory` works as before. Why: a training step allocates
about 20 MB of arrays of at most 5 MB (LeNet-5, batch 64) that live until its backward
frees them; with the threshold where those blocks left it (5 MB, trim at 10 MB), each
backward gave the heap's top back to the system and the next forward faulted it in
again (2,900-3,100 faults a step, 2026-12-03; docs/benchmarks.md, session 8). The price:
the process keeps up to 64 MiB of freed heap top instead of giving it back, and blocks
of 128 KiB-32 MiB come from the heap rather than fresh mappings. A no-op without glibc,
and without effect where glibc's dynamic thresholds are off: after a ``mallopt``
(:func:`reuse_memory`) or in a process started with a threshold set in its environment
(``MALLOC_TRIM_THRESHOLD_``, ``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TOP_PAD_``,
``MALLOC_MMAP_MAX_``, ``GLIBC_TUNABLES``): that setting is someone's choice and stands
(Dask's workers: ``MALLOC_TRIM_THRESHOLD_=65536``, to give memory back; there each step
faults its arrays in again, 5,862 times a step in the test's loop, unless
:func:`reuse_memory` is called). distributed's Nanny also leaves its workers' variables
in the environment of the process that started a ``LocalCluster``, so that process's
later subprocesses start with them (``tests/test_dask.py`` restores it).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

#: blocks up to this size are kept when freed (2 GiB: mallopt takes a C int)
KEEP = 2**31 - 1
#: the most glibc's dynamic mmap threshold grows to (its DEFAULT_MMAP_THRESHOLD_MAX:
#: 4 MiB per byte of a C long, 32 MiB on 64-bit); off, the trim threshold is twice it
DYNAMIC_MAX = 4 * 1024 * 1024 * ctypes.sizeof(ctypes.c_long)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
    except OSError:
        return None
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


def reuse_memory(on: bool = True) -> None:
    """Keep freed memory in the process (``on``) so repeated calls on large arrays do
    not page-fault fresh memory each time, or (``on=False``) give it back now and later
    keep only blocks of at most 32 MiB, as glibc's dynamic threshold does by default.
    Process-wide; see the module docstring for what it costs.

        >>> import symgrad as sg
        >>> sg.reuse_memory(); sg.reuse_memory(False)
    """
    libc = _libc()
    if libc is None:
        raise RuntimeError("sg.reuse_memory needs glibc's mallopt (Linux with glibc); "
                           "this platform's allocator has no such setting")
    mmap, trim = (KEEP, KEEP) if on else (DYNAMIC_MAX, 2 * DYNAMIC_MAX)
    ok = libc.mallopt(_M_MMAP_THRESHOLD, ctypes.c_int(mmap)) and \
        libc.mallopt(_M_TRIM_THRESHOLD, ctypes.c_int(trim))
    if not ok:
        raise RuntimeError(f"glibc refused mallopt(..., {mmap}): memory reuse is unchanged")
    if not on:
        libc.malloc_trim(ctypes.c_size_t(0))


#: the block :func:`raise_dynamic_threshold` frees: under :data:`DYNAMIC_MAX` by two pages, as
#: glibc compares the mapped chunk's size with its flag bits (a page over what is asked)
_RAISE_BLOCK = DYNAMIC_MAX - 8192
_raised = False


def raise_dynamic_threshold() -> None:
    """Once per process: ``free(malloc(32 MiB - 8 KiB))``, which raises glibc's dynamic
    mmap threshold to 32 MiB and its trim threshold to 64 MiB (see the module docstring);
    a no-op after the first call and without glibc.

        >>> from symgrad.core.memory import raise_dynamic_threshold
        >>> raise_dynamic_threshold()
    """
    global _raised
    if _raised:
        return
    _raised = True
    libc = _libc()
    if libc is None:
        return
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    libc.free(libc.malloc(_RAISE_BLOCK))  # (a mapped block, never touched: no faults)


def _from_environment() -> None:
    """``SYMGRAD_REUSE_MEMORY=1`` at import: :func:`reuse_memory`."""
    value = os.environ.get("SYMGRAD_REUSE_MEMORY", "").strip().lower()
    if value and value not in ("0", "false", "no", "off"):
        reuse_memory(True)
