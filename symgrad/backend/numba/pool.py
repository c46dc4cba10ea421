"""Output buffers reused across calls (issue 31, item 4): what a kernel returns comes back.

A kernel's output array of at least :data:`MIN_BYTES` is taken from here (the kernel
calls :func:`take` in ``objmode``) instead of ``np.empty``. glibc maps every block over
its threshold (32 MiB at most) afresh, so each call page-faults its whole output (the
seed gradient at n = 5e6: 9,766 faults and 15 ms a call); a buffer from here is pages
already touched.

A buffer is handed out again only when nothing but this pool holds it: its reference
count (``sys.getrefcount``) is the pool's own, measured at import on a buffer that
nothing else holds. An array the caller keeps (a result, a view of it, a
memoryview) holds a reference, so it is never handed out and never overwritten;
the buffers are numpy arrays the caller owns like any other. A free buffer leaves the
pool (dies, as an np.empty result would) instead of being handed out when a weak
reference to it exists (``weakref.ref`` counts nothing in getrefcount: it would see a
later call's numbers) or when its last holder set its shape, strides, dtype or flags in
place (``r.shape = (m, n)``; ``del r``). A raw address (``r.ctypes.data``, a kept
``__array_interface__`` dict) keeps nothing alive, with or without the pool. Taking is
safe under threads without a lock: a thread that looks at a buffer holds a reference
to it while it looks, so two threads never both see it free; the pool's lists change under a lock.

At most :data:`PER_SHAPE` buffers are kept per (shape, dtype) (a loop ``r = g(x)``
holds the last result while the next call runs: two per output), :data:`MAX_BYTES` in
all; :func:`clear` drops them (memory the pool keeps is not returned to the system
until then). Kernels traced at smaller sizes, ``nogil`` kernels (Dask's threads) and
exported modules make every output by ``np.empty`` (:func:`.codegen.generate`).
"""

from __future__ import annotations

import sys
import threading
import weakref

import numpy as np

#: outputs of at least this many bytes come from the pool (smaller ones: np.empty, whose
#: blocks glibc's heap keeps anyway)
MIN_BYTES = 1 << 20
#: buffers kept per (shape, dtype)
PER_SHAPE = 4
#: bytes kept in all; beyond, a new buffer is handed out without being kept
MAX_BYTES = 1 << 28

_kept: dict[tuple, list[np.ndarray]] = {}
_bytes = 0
_lock = threading.Lock()


def _first_free(kept: list[np.ndarray], base: int) -> np.ndarray | None:
    for buf in kept:
        if sys.getrefcount(buf) == base:
            return buf
    return None


def _own_count() -> int:
    """The count :func:`_first_free` sees for a buffer only its list holds (3 on
    CPython 3.11: the list, the loop variable, getrefcount's argument)."""
    probe = [np.empty(0)]
    for base in range(1, 16):
        if _first_free(probe, base) is not None:
            return base
    raise RuntimeError("symgrad's output pool could not measure a reference count")


_BASE = _own_count()


def take(shape: tuple, dtype: str) -> np.ndarray:
    """A C-contiguous array of ``shape`` and ``dtype`` that nothing else holds: a kept one
    if one is free, else a new one (kept if there is room)."""
    global _bytes
    key = (shape, dtype)
    kept = _kept.get(key)
    if kept is not None:
        buf = _first_free(kept, _BASE)
        if buf is not None:
            if _intact(buf, shape, dtype) and not weakref.getweakrefcount(buf):
                return buf
            _drop(key, buf)  # weakly held, or reshaped in place: released
        buf = None
    buf = np.empty(shape, dtype)
    with _lock:
        kept = _kept.setdefault(key, [])
        if len(kept) < PER_SHAPE and _bytes + buf.nbytes <= MAX_BYTES:
            kept.append(buf)
            _bytes += buf.nbytes
    return buf


def _intact(buf: np.ndarray, shape: tuple, dtype: str) -> bool:
    """Whether ``buf`` is still as it was made: the caller owned it, and may have set its
    ``shape``, ``strides``, ``dtype`` or flags in place (``r.shape = (m, n)``) before
    dropping it; the kernel writes ``shape`` C-contiguous into whatever it gets."""
    return (buf.shape == tuple(shape) and buf.dtype == np.dtype(dtype)
            and buf.flags.c_contiguous and buf.flags.writeable and buf.flags.aligned)


def _drop(key: tuple, buf: np.ndarray) -> None:
    global _bytes
    with _lock:  # (after a clear(), key's list is gone or another: nothing to drop)
        for i, b in enumerate(_kept.get(key, ())):
            if b is buf:
                del _kept[key][i]
                _bytes -= buf.nbytes
                break


def clear() -> None:
    """Drop every kept buffer (arrays the caller still holds stay theirs)."""
    global _bytes
    with _lock:
        _kept.clear()
        _bytes = 0


def kept_bytes() -> int:
    """Bytes the pool keeps now."""
    return _bytes
