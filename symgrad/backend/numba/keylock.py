"""One compile of a kernel at a time, across the threads and processes of a machine.

Identical kernels requested at once (six fresh lambdas with one body, 24 threads
calling ``sg.hvp``, four processes started on one empty cache) must compile once:
the first holds the kernel's lock while it compiles and publishes; the others wait
for it and then find the machine code on disk (Numba looks there before it
compiles), as ccache and sccache dedupe a compile with a lock per key.

:func:`held` takes two locks, in this order: a ``threading.Lock`` per key (the
threads of this process), then ``flock`` on ``<cache>/k_<key>.lock`` (other
processes sharing the cache directory). ``flock`` belongs to the open file, so a
process killed while it compiles releases it with its files: there are no stale
locks to detect or break (the empty lock file stays, harmless). Without
``fcntl`` (Windows) only the threads are serialized.

A fork (a ``multiprocessing`` pool with the fork start method) waits for a compile
in flight in another thread, so that no child starts with Numba's compiler lock
held by a thread it does not have; the child starts with no lock of this module held.

    >>> import tempfile, pathlib
    >>> with held(pathlib.Path(tempfile.mkdtemp()), "abc"):
    ...     pass
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover -- Windows
    fcntl = None  # type: ignore[assignment]

_LOCKS: dict[str, threading.Lock] = {}
_GUARD = threading.Lock()


def _thread_lock(key: str) -> threading.Lock:
    with _GUARD:
        lock = _LOCKS.get(key)
        if lock is None:
            lock = _LOCKS[key] = threading.Lock()
        return lock


def lock_path(directory: Path, key: str) -> Path:
    return directory / f"k_{key}.lock"


@contextlib.contextmanager
def held(directory: Path | None, key: str) -> Iterator[None]:
    """Hold the lock of kernel ``key`` (in ``directory``, the cache; None: threads only)."""
    with _thread_lock(key):
        if directory is None or fcntl is None:
            yield
            return
        try:
            flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
            fd = os.open(lock_path(directory, key), flags, 0o600)
        except OSError:  # a cache we cannot write: no one else compiles into it either
            yield
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the flock


def _numba_lock() -> Any:
    """Numba's compiler lock if Numba is imported (never imported here), else None."""
    module = sys.modules.get("numba.core.compiler_lock")
    lock = getattr(getattr(module, "global_compiler_lock", None), "_lock", None)
    return lock if hasattr(lock, "acquire") and hasattr(lock, "release") else None


_HELD: list[Any] = []


def _before_fork() -> None:
    """A fork waits for a compile (or load) in flight in another thread of this process:
    a child born while Numba's compiler lock was held would wait for it forever."""
    lock = _numba_lock()
    if lock is not None:
        lock.acquire()
        _HELD.append(lock)


def _after_fork_parent() -> None:
    while _HELD:
        _HELD.pop().release()


def _after_fork_child() -> None:
    """In a forked child: locks a parent's thread held at the fork would never be released."""
    global _GUARD
    _GUARD = threading.Lock()
    _LOCKS.clear()
    _after_fork_parent()  # the forking thread goes on in the child: it owns the lock


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_parent,
                        after_in_child=_after_fork_child)
