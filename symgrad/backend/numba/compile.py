"""Kernel cache: generated source on disk, compiled from the verified text, cached by Numba.

Each kernel's source is written once to ``<cache>/k_<key>.py`` (published
atomically with a hard link, so that a file, once there, never changes).
Loading reads that file once, checks that its bytes are the text the key
stands for, and compiles *that text* (``compile`` + ``exec`` into a fresh
module registered in ``sys.modules`` under the key's name): what runs is what
was checked, and no bytecode (``.pyc``) is written or read. The text's
``@njit(cache=True)`` is served by a Numba cache of symgrad's own, kept in
``<cache>/__pycache__`` and nowhere else (not ``~/.cache/numba``, not
``$NUMBA_CACHE_DIR``), so a fresh process loads machine code from disk instead
of compiling.

Trust: Numba's cache files are pickles, and loading a pickle can run any code,
so the cache directory is as trusted as symgrad's own code. It is private
(directories 0700, files 0600, whatever the umask), and a cache directory
owned by another user or writable by group or others is not used: symgrad
warns once (:class:`KernelCacheWarning`) and compiles in memory. So it does
when the cache cannot be written (read-only, a regular file in the way, a
full disk); a failed write leaves no temporary file behind.

Damage is repaired, never a crash: a source file whose bytes are not its
key's text (or a symlink, a directory or someone else's file at its path),
and a Numba cache entry that fails to load or whose bytes do not match the
sha256 manifest written beside each file (:mod:`.integrity`, checked before
anything is unpickled), are moved aside (``*.quarantined``) and rebuilt. Each
compile holds the kernel's lock (:mod:`.keylock`): threads and processes
wanting one kernel at once wait for one compile and load it from disk.

The cache directory (:mod:`.cache_files`) is ``$SYMGRAD_CACHE_DIR`` if set, else the user cache
directory (``platformdirs.user_cache_dir("symgrad")``), plus ``kernels/``.
At most :data:`MAX_LOADED` kernels stay loaded in a process.

Each compile, and each load from the disk cache, takes a measured time that
:func:`compile_stats` sums (:mod:`.stats`) and that is logged on the ``"symgrad"`` logger when
``sg.config.log_compiles`` is on (``SYMGRAD_LOG_COMPILES=1``), the start of a compile too::

    symgrad: compiling k_3f2a... (grad of f with respect to x)...
    symgrad: compiled k_3f2a... (grad of f with respect to x): 41 lines, 2 loops, in 1.21 s
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import glob
import hashlib
import io
import os
import pickle
import sys
import threading
import time
import types
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ...core.config import config
from . import integrity, keylock, vector_width
from .cache_files import (  # noqa: F401 -- KernelCacheWarning, NotPrivateError importable here
    KernelCacheWarning,
    NotPrivateError,
    cache_dir,
    check_own,
    check_private,
    quarantine,
    read_own,
    refuse,
    replace,
    usable_cache_dir,
    warn_once,
    write_new,
)
from .codegen import KernelSource, serial_twin
from .stats import LOG, compile_note, compile_stats, count, in_flight, track  # noqa: F401 -- importable here
from .threads import serialized
from .threads import start as start_threads

#: Kernels kept loaded (in ``_LOADED`` and ``sys.modules``), the least recently
#: loaded dropped first; one dropped and needed again is imported again (from the
#: disk cache: no compile). This bounds symgrad's references only: Numba keeps the
#: machine code of every function it compiled or loaded until the process ends
#: (numba/numba#5976; about 1.3 MB per kernel here), so dropping frees only
#: kernels that never ran. Compiling fewer kernels is what saves memory.
MAX_LOADED = 256

_LOADED: OrderedDict[str, Kernel] = OrderedDict()
_LOCK = threading.Lock()


def _fork_waits_for_a_load() -> None:
    """A fork waits for a kernel load in flight in another thread (its child would wait
    for ``_LOCK`` forever); taken before Numba's compiler lock (:mod:`.keylock`), in
    the order :func:`load` takes them."""
    _LOCK.acquire()


def _release_after_fork() -> None:
    _LOCK.release()  # the forking thread holds it, in the parent and in the child


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_fork_waits_for_a_load, after_in_parent=_release_after_fork,
                        after_in_child=_release_after_fork)


class Kernel:
    """A compiled kernel: call it with the kernel's arguments, get its output tuple.

    The first call compiles, or loads from Numba's disk cache (a damaged entry
    is set aside and compiled, see :func:`_numba_cache`). ``path`` is the
    source file, None for a kernel compiled in memory.
    """

    def __init__(self, source: KernelSource, path: Path | None, function: Any):
        self.source = source
        self.path = path
        self.function = function
        self._warm = False

    def __call__(self, *args: Any) -> tuple:
        if self._warm:
            return self._call(*args)
        self._compile(args)
        self._call = self._locked(self.function)
        result = self._call(*args)
        self._warm = True
        count("compiled_calls")
        return result

    def _compile(self, args: tuple) -> None:
        """Compile (or load from disk) the signature of ``args``: exactly their Numba types
        (a read-only constant stays read-only), never a copy of them."""
        from numba import typeof

        self.compile_signature(tuple(typeof(a) for a in args))

    def compile_signature(self, signature: tuple) -> str:
        """Compile ``signature`` unless this process has it or Numba's disk cache does
        (then load it), timed and logged; "compiled", "loaded" or "had".

        Under the kernel's lock (:mod:`.keylock`): threads and processes that want
        the same kernel at once wait for the one compile, then load it from disk."""
        compiled, loaded = self.compile_stats
        if signature in self.function.overloads:
            return "had"
        directory = self.path.parent if self.path is not None else None
        start = time.perf_counter()
        with keylock.held(directory, self.source.key):
            waited = time.perf_counter() - start
            if config.log_compiles and signature not in self.function.overloads \
                    and not on_disk(self.source):
                LOG.warning("symgrad: compiling k_%s (%s)...", self.source.key, self.what)
            if self.source.parallel:
                start_threads()  # before Numba launches its threads
            text = self.source.text
            with vector_width.compiling(vector_width.wanted(text), vector_width.interleaved(text)):
                self.function.compile(signature)
        seconds = time.perf_counter() - start
        new_compiled, new_loaded = self.compile_stats
        if new_compiled == compiled and new_loaded == loaded:
            return "had"  # compiled before, in this process
        count("compile_seconds", seconds)
        how = "compiled" if new_compiled > compiled else "loaded"
        if config.log_compiles:
            lines = self.source.text.splitlines()
            loops = sum(line.lstrip().startswith(("for ", "while ")) for line in lines)
            wait = f" (after waiting {waited:.2f} s for another compile)" if waited > 0.1 else ""
            LOG.warning("symgrad: %s k_%s (%s): %d lines, %d loops, in %.2f s%s",
                        "compiled" if how == "compiled" else "loaded from the disk cache",
                        self.source.key, self.what, len(lines), loops, seconds, wait)
        return how

    @property
    def what(self) -> str:
        """What the kernel computes, from its source's second line."""
        lines = self.source.text.splitlines()
        return lines[1].removeprefix("# ") if len(lines) > 1 else ""

    def ready(self) -> bool:
        """Whether a call has run (the kernel is compiled for what it was called with)."""
        return self._warm

    def _locked(self, function: Any) -> Any:
        if not self.source.parallel:
            return function
        # the serial twin, loaded on the first call that wants it (threads.Adaptive)
        return serialized(function, twin=lambda: load(serial_twin(self.source)),
                          twin_ready=functools.partial(_twin_ready, self.source, []))

    def dispatcher(self) -> Any:
        """What to call from now on: the Numba dispatcher itself once a call has run
        (no check per call; a parallel kernel under the lock of
        :func:`.threads.serialized`), else this kernel (which times and logs the compile)."""
        return self._call if self._warm else self

    @property
    def compile_stats(self) -> tuple[int, int]:
        """(signatures compiled in this process, signatures loaded from disk)."""
        stats = self.function.stats
        return sum(stats.cache_misses.values()), sum(stats.cache_hits.values())


#: whether a parallel kernel's serial twin may run now without compiling on the calling
#: thread, called with (its source, a list for a job, a call's arguments): registered
#: by :mod:`.tiered` (the twin compiles in the worker); without it, always
_TWIN_READY: list[Callable[[KernelSource, list, tuple], bool]] = []


def twin_ready(check: Callable[[KernelSource, list, tuple], bool]) -> None:
    """Register the check of :data:`_TWIN_READY` (:func:`.tiered.twin_compiled`)."""
    _TWIN_READY[:] = [check]


def _twin_ready(source: KernelSource, job: list, args: tuple) -> bool:
    return not _TWIN_READY or _TWIN_READY[0](source, job, args)


def load(source: KernelSource) -> Kernel:
    """The kernel for ``source``, imported once per process (while it stays among
    the :data:`MAX_LOADED` most recently loaded).

        >>> text = "from numba import njit\\n@njit(cache=True)\\ndef f(x):\\n    return (x + 1,)\\n"
        >>> load(KernelSource("doctest_load", "f", text))(1.0)
        (2.0,)
    """
    with _LOCK:
        kernel = _LOADED.get(source.key)
        if kernel is not None:
            _LOADED.move_to_end(source.key)
            return kernel
        directory = usable_cache_dir()
        path = None
        if directory is not None:
            try:
                path = publish(source, directory)
            except OSError as e:
                refuse(e)
        kernel = Kernel(source, path, _import(source, path))
        _LOADED[source.key] = kernel
        while len(_LOADED) > max(MAX_LOADED, 1):
            _, old = _LOADED.popitem(last=False)
            name = _module_name(old.source)
            if getattr(sys.modules.get(name), old.source.function, None) is old.function:
                del sys.modules[name]
    return kernel


def on_disk(source: KernelSource) -> bool:
    """Whether Numba's disk cache has machine code for ``source`` (some signature of it):
    then a first call loads it quickly, and tiered execution is not worth it."""
    kernel = _LOADED.get(source.key)
    if kernel is not None and kernel.ready():
        return True
    try:
        return any((cache_dir() / "__pycache__").glob(f"k_{source.key}.*.nbi"))
    except OSError:  # no usable cache: kernels compile in memory
        return False


def publish(source: KernelSource, directory: Path) -> Path:
    """Write ``source`` to ``directory/k_<key>.py`` unless it is there intact.

    Reads the file at most once when it is intact, and not at all after
    writing it; anything else at the path is set aside. Raises ``OSError``
    when the file cannot be written.
    """
    path = directory / f"k_{source.key}.py"
    text = source.text.encode("utf-8")
    for _ in range(3):
        try:
            if read_own(path) == text:
                return path
            quarantine(path)  # truncated, garbled or edited: set it aside
        except FileNotFoundError:
            pass
        except OSError:  # a symlink, a directory, someone else's file
            quarantine(path)
        tmp = directory / f".k_{source.key}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"
        write_new(tmp, text)
        try:
            os.link(tmp, path)  # atomic, and never replaces what another process published
            return path
        except FileExistsError:
            pass  # someone else won the race; verify their copy on the next round
        except OSError:
            os.replace(tmp, path)  # a file system without hard links
            return path
        finally:
            tmp.unlink(missing_ok=True)
    raise OSError(f"{path} changed under symgrad three times in a row")


def _module_name(source: KernelSource) -> str:
    # The name is the key: machine code that Numba loads from its disk cache
    # imports its module by name, so a fresh process must use the same one.
    return f"symgrad_kernel_{source.key}"


def _import(source: KernelSource, path: Path | None) -> Any:
    """The kernel's Numba dispatcher, from ``source.text`` (the verified bytes of
    ``path``, or no file at all) run as a module named after its key."""
    name = _module_name(source)
    module = types.ModuleType(name)
    filename = f"<symgrad kernel k_{source.key}>"
    numba_dir = stamp = None
    if path is not None:
        module.__file__ = filename = str(path)  # Numba names its cache files after it
        numba_dir = path.parent / "__pycache__"
        stamp = hashlib.sha256(source.text.encode("utf-8")).digest()
    # ``from numba import njit`` in the text gets an njit whose cache=True means
    # symgrad's private cache (see _Numba); no import machinery, so no .pyc.
    module.__dict__["__builtins__"] = {**builtins.__dict__,
                                       "__import__": _importer(numba_dir, stamp)}
    code = compile(source.text, filename, "exec", dont_inherit=True)
    sys.modules[name] = module
    exec(code, module.__dict__)
    function = getattr(module, source.function)
    track(function)
    return function


def _importer(numba_dir: Path | None, stamp: bytes | None) -> Any:
    """``__import__`` for a kernel module: ``numba`` is :class:`_Numba`, the rest as usual."""
    numba_view = _Numba(numba_dir, stamp)

    def import_(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (),
                level: int = 0) -> Any:
        if name == "numba" and level == 0:
            return numba_view
        return builtins.__import__(name, globals, locals, fromlist, level)

    return import_


class _Numba:
    """``numba`` as a kernel module sees it: the same, but ``njit(cache=True)``
    caches in ``numba_dir`` through :func:`_numba_cache`, or (None) not at all."""

    def __init__(self, numba_dir: Path | None, stamp: bytes | None):
        self._numba_dir = numba_dir
        self._stamp = stamp

    def __getattr__(self, name: str) -> Any:
        import numba

        return getattr(numba, name)

    def njit(self, *args: Any, cache: bool = False, **flags: Any) -> Any:
        import numba

        def decorate(fn: Any) -> Any:
            dispatcher = numba.njit(**flags)(fn)
            if cache and self._numba_dir is not None:
                try:
                    dispatcher._cache = _numba_cache()(fn, self._numba_dir, self._stamp)
                except Exception as e:  # noqa: BLE001 -- a Numba whose internals moved
                    warn_once(("numba", type(e).__name__), (
                        f"symgrad cannot keep Numba's cache of its kernels ({type(e).__name__}: "
                        f"{e}); kernels are compiled in every process. Fix: install a "
                        "Numba version symgrad supports (see pyproject.toml)."))
            return dispatcher

        return decorate(args[0]) if args and callable(args[0]) else decorate


@functools.cache
def _numba_cache() -> type:
    """Numba's ``FunctionCache`` for one kernel, kept in symgrad's directory only.

    Numba would pick ``$NUMBA_CACHE_DIR``, the source's ``__pycache__``, or
    ``~/.cache/numba`` when that is not writable, and would read the source
    again for its stamp. This one is given the directory and the stamp (the
    sha256 of the verified text, which changes exactly when the text does); checks
    that the directory is still private before each load and save; loads
    only files that nobody else could have written; writes each file whole,
    0600; sets aside an entry that fails to load and compiles instead; and on
    a failed write warns once and stops caching that kernel.
    (Defined on first use: importing Numba takes half a second.)
    """
    from numba.core import caching

    class Locator(caching._CacheLocator):
        def __init__(self, py_func: Any, directory: Path, stamp: bytes):
            self._py_file = py_func.__code__.co_filename  # for Numba's warnings
            self._lineno = py_func.__code__.co_firstlineno
            self._directory = directory
            self._stamp = stamp

        def ensure_cache_path(self) -> None:  # before every save
            check_private(self._directory)

        def get_cache_path(self) -> str:
            return str(self._directory)

        def get_source_stamp(self) -> bytes:
            return self._stamp

        def get_disambiguator(self) -> str:
            return str(self._lineno)

    class Impl(caching.CompileResultCacheImpl):
        def __init__(self, py_func: Any, locator: Locator):  # no search for a locator
            self._lineno = locator._lineno
            self._locator = locator
            fullname = f"{Path(locator._py_file).stem}.{py_func.__qualname__}"
            self._filename_base = self.get_filename_base(fullname, getattr(sys, "abiflags", ""))

    class IndexFile(caching.IndexDataCacheFile):
        # Each file is read whole and checked against its sha256 manifest before
        # anything unpickles it (:mod:`.integrity`); Numba's own logic otherwise.
        def _load_index(self) -> Any:
            path = Path(self._index_path)
            check_own(path)
            data = integrity.read(path)
            if data is None:
                return {}
            stream = io.BytesIO(data)
            if pickle.load(stream) != self._version:
                return {}  # another Numba version's index: not read further
            stamp, overloads = pickle.loads(stream.read())
            return overloads if stamp == self._source_stamp else {}

        def _load_data(self, name: str) -> Any:
            path = Path(self._data_path(name))
            check_own(path)
            data = integrity.read(path)
            if data is None:
                raise FileNotFoundError(path)  # Numba: no entry
            return pickle.loads(data)

        @contextlib.contextmanager
        def _open_for_write(self, filepath: str) -> Iterator[io.BytesIO]:
            buffer = io.BytesIO()
            yield buffer
            integrity.write(Path(filepath), buffer.getvalue(), replace)

    class PrivateCache(caching.FunctionCache):
        def __init__(self, py_func: Any, directory: Path, stamp: bytes):
            # Cache.__init__, with the locator and the index file given
            self._name = repr(py_func)
            self._py_func = py_func
            self._impl = Impl(py_func, Locator(py_func, directory, stamp))
            self._cache_path = str(directory)
            self._cache_file = IndexFile(cache_path=self._cache_path,
                                         filename_base=self._impl.filename_base,
                                         source_stamp=stamp)
            self._directory = directory
            self.enable()

        def load_overload(self, sig: Any, target_context: Any) -> Any:
            if not self._enabled:
                return None
            try:
                check_private(self._directory)  # still, at the first call
            except OSError as e:
                refuse(e)
                self.disable()
                return None
            try:
                return super().load_overload(sig, target_context)
            except Exception:  # noqa: BLE001 -- damaged or not ours: set aside, compile
                self._set_aside()
                return None

        def _index_key(self, sig: Any, codegen: Any) -> Any:
            # (a kernel compiled at another vector width or interleave count is not
            # loaded: .vector_width)
            return super()._index_key(sig, codegen), vector_width.key()

        def save_overload(self, sig: Any, data: Any) -> None:
            try:
                try:
                    super().save_overload(sig, data)
                except integrity.DamagedFile:  # the index it adds to: set aside, start anew
                    self._set_aside()
                    super().save_overload(sig, data)
            except OSError as e:
                refuse(e)
                self.disable()

        def _set_aside(self) -> None:
            base = self._impl.filename_base
            index = Path(self._cache_file._index_path)
            for f in [index, integrity.manifest(index),
                      *self._directory.glob(f"{glob.escape(base)}.*.nbc"),
                      *self._directory.glob(f"{glob.escape(base)}.*.nbc{integrity.SUFFIX}")]:
                quarantine(f)

    return PrivateCache
