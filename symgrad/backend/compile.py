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
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from .codegen import KernelSource
from .threads import serialized

_LOADED: dict[str, Kernel] = {}
_LOCK = threading.Lock()


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
            return self._call(*args)
        try:
            result = self._locked(self.function)(*args)
        except Exception:
            if not _quarantine_numba_cache(self.path):
                raise
            self.function = _import(self.path, self.source)  # a fresh dispatcher
            result = self._locked(self.function)(*args)
        self._call = self._locked(self.function)
        self._warm = True
        return result

    def _locked(self, function: Any) -> Any:
        return serialized(function) if self.source.parallel else function

    def dispatcher(self) -> Any:
        """What to call from now on: the Numba dispatcher itself once a call has
        succeeded (no check per call; a parallel kernel under the lock of
        :func:`.threads.serialized`), else this kernel (which can still quarantine)."""
        return self._call if self._warm else self

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


def compile_stats() -> dict[str, int]:
    """Totals over this process: kernels imported, signatures compiled, loaded from disk."""
    compiled = loaded = 0
    for k in list(_LOADED.values()):
        c, h = k.compile_stats
        compiled, loaded = compiled + c, loaded + h
    return {"kernels": len(_LOADED), "compiled": compiled, "loaded_from_disk": loaded}


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
