"""Kernel cache: generated source on disk, imported as a module, compiled by Numba.

Each kernel's source is written once to ``<cache>/k_<key>.py`` (published
atomically with a hard link, so that a file, once there, never changes and
Numba's on-disk cache for it stays valid), imported under a unique module
name registered in ``sys.modules``, and compiled by ``numba.njit(cache=True)``
on first call. A fresh process therefore loads machine code from disk instead
of compiling. A source file whose text is not what its key says, or a Numba
cache entry that fails to load, is moved aside (``*.quarantined``) and rebuilt
once, never a crash.

The cache directory is ``$SYMGRAD_CACHE_DIR`` if set, else the user cache
directory (``platformdirs.user_cache_dir("symgrad")``), plus ``kernels/``.

Each compile, and each load from the disk cache, takes a measured time that
:func:`compile_stats` sums and that is logged on the ``"symgrad"`` logger when
``sg.config.log_compiles`` is on (``SYMGRAD_LOG_COMPILES=1``)::

    symgrad: compiled k_3f2a... (grad of f with respect to x): 41 lines, 2 loops, in 1.21 s
"""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from ..core.config import config
from .codegen import KernelSource

_LOADED: dict[str, Kernel] = {}
_LOCK = threading.Lock()
#: what compile_stats() reports besides Numba's own counts (under _LOCK)
_COUNTS = {"compile_seconds": 0.0, "interpreted_calls": 0, "compiled_calls": 0}
LOG = logging.getLogger("symgrad")


def count(name: str, amount: float = 1) -> None:
    """Add to one of the counters :func:`compile_stats` reports."""
    with _LOCK:
        _COUNTS[name] += amount


def cache_dir() -> Path:
    """Where kernel sources (and Numba's cache of them) live; created on demand."""
    env = os.environ.get("SYMGRAD_CACHE_DIR")
    if env:
        base = Path(env)
    else:
        import platformdirs

        base = Path(platformdirs.user_cache_dir("symgrad"))
    path = base / "kernels"
    path.mkdir(parents=True, exist_ok=True)
    return path


class Kernel:
    """A compiled kernel: call it with the kernel's arguments, get its output tuple.

    The first call compiles (or loads from Numba's disk cache); if loading a
    corrupt cache entry fails, the entry is quarantined and the call retried.
    """

    def __init__(self, source: KernelSource, path: Path, function: Any):
        self.source = source
        self.path = path
        self.function = function
        self._warm = False

    def __call__(self, *args: Any) -> tuple:
        if self._warm:
            return self.function(*args)
        try:
            self._compile(args)
            result = self.function(*args)
        except Exception:
            if not _quarantine_numba_cache(self.path):
                raise
            self.function = _import(self.path, self.source)  # a fresh dispatcher
            self._compile(args)
            result = self.function(*args)
        self._warm = True
        count("compiled_calls")
        return result

    def _compile(self, args: tuple) -> None:
        """Compile (or load from disk) the signature of ``args``, timed and logged."""
        from numba import typeof

        compiled, loaded = self.compile_stats
        start = time.perf_counter()
        self.function.compile(tuple(typeof(a) for a in args))
        seconds = time.perf_counter() - start
        new_compiled, new_loaded = self.compile_stats
        if new_compiled == compiled and new_loaded == loaded:
            return  # compiled before, in this process
        count("compile_seconds", seconds)
        if config.log_compiles:
            lines = self.source.text.splitlines()
            what = lines[1].removeprefix("# ") if len(lines) > 1 else ""
            loops = sum(line.lstrip().startswith(("for ", "while ")) for line in lines)
            how = "compiled" if new_compiled > compiled else "loaded from the disk cache"
            LOG.warning("symgrad: %s k_%s (%s): %d lines, %d loops, in %.2f s", how,
                        self.source.key, what, len(lines), loops, seconds)

    def ready(self) -> bool:
        """Whether a call has run (the kernel is compiled for what it was called with)."""
        return self._warm

    def dispatcher(self) -> Any:
        """What to call from now on: the Numba dispatcher itself once a call has
        succeeded (no check per call), else this kernel (which can still quarantine)."""
        return self.function if self._warm else self

    @property
    def compile_stats(self) -> tuple[int, int]:
        """(signatures compiled in this process, signatures loaded from disk)."""
        stats = self.function.stats
        return sum(stats.cache_misses.values()), sum(stats.cache_hits.values())


def load(source: KernelSource) -> Kernel:
    """The kernel for ``source``, imported once per process."""
    kernel = _LOADED.get(source.key)
    if kernel is None:
        with _LOCK:
            kernel = _LOADED.get(source.key)
            if kernel is None:
                path = publish(source, cache_dir())
                kernel = _LOADED[source.key] = Kernel(source, path, _import(path, source))
    return kernel


def compile_stats() -> dict[str, Any]:
    """Totals over this process: kernels imported, signatures compiled and loaded from
    disk (Numba's counts), the seconds those took, calls answered by the numpy
    interpreter while a kernel compiled (tiered execution), and first calls of each
    kernel and signature that ran compiled code. (Later calls of a signature go straight
    to Numba's dispatcher, uncounted, to keep a call's overhead under a microsecond.)

        >>> import symgrad as sg
        >>> sorted(sg.compile_stats())[:4]
        ['compile_seconds', 'compiled', 'compiled_calls', 'interpreted_calls']
    """
    compiled = loaded = 0
    for k in list(_LOADED.values()):
        c, h = k.compile_stats
        compiled, loaded = compiled + c, loaded + h
    with _LOCK:
        counts = dict(_COUNTS)
    return {"kernels": len(_LOADED), "compiled": compiled, "loaded_from_disk": loaded,
            "compile_seconds": round(counts["compile_seconds"], 6),
            "interpreted_calls": int(counts["interpreted_calls"]),
            "compiled_calls": int(counts["compiled_calls"])}


def on_disk(source: KernelSource) -> bool:
    """Whether Numba's disk cache has machine code for ``source`` (some signature of it):
    then a first call loads it quickly, and tiered execution is not worth it."""
    kernel = _LOADED.get(source.key)
    if kernel is not None and kernel.ready():
        return True
    numba_dir = os.environ.get("NUMBA_CACHE_DIR")
    if numba_dir:  # Numba mirrors the source's directory under it
        return any(Path(numba_dir).rglob(f"k_{source.key}.*.nbi"))
    return any((cache_dir() / "__pycache__").glob(f"k_{source.key}.*.nbi"))


def publish(source: KernelSource, directory: Path) -> Path:
    """Write ``source`` to ``directory/k_<key>.py`` unless it is there intact."""
    path = directory / f"k_{source.key}.py"
    for _ in range(3):
        try:
            if path.read_text(encoding="utf-8") == source.text:
                return path
            _quarantine(path)  # truncated, garbled or edited: set it aside
        except FileNotFoundError:
            pass
        except (UnicodeDecodeError, OSError):
            _quarantine(path)
        tmp = directory / f".k_{source.key}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"
        tmp.write_text(source.text, encoding="utf-8")
        try:
            os.link(tmp, path)  # atomic, and never replaces what another process published
        except FileExistsError:
            pass  # someone else won the race; verify their copy on the next round
        except OSError:
            os.replace(tmp, path)  # a file system without hard links
        finally:
            tmp.unlink(missing_ok=True)
    return path


def _import(path: Path, source: KernelSource) -> Any:
    """The kernel's Numba dispatcher, from its module imported under its key's name."""
    # The name is the key: machine code that Numba loads from its disk cache
    # imports its module by name, so a fresh process must use the same one.
    name = f"symgrad_kernel_{source.key}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return getattr(module, source.function)


def _quarantine(path: Path) -> None:
    try:
        os.replace(path, path.with_name(f"{path.name}.{int(time.time())}.quarantined"))
    except FileNotFoundError:
        pass


def _quarantine_numba_cache(path: Path) -> bool:
    """Move Numba's cache files for the kernel at ``path`` aside; False if there were none."""
    numba_dir = Path(os.environ.get("NUMBA_CACHE_DIR") or path.parent / "__pycache__")
    files = list(numba_dir.rglob(f"{path.stem}.*.nb[ic]")) if numba_dir.exists() else []
    for f in files:
        _quarantine(f)
    return bool(files)
