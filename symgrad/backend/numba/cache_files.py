"""The kernel cache's directory and files, private to this user (:mod:`.compile` keeps its
kernels there).

The directory is ``$SYMGRAD_CACHE_DIR`` if set, else the user cache directory
(``platformdirs.user_cache_dir("symgrad")``), plus ``kernels/``. It is private
(directories 0700, files 0600, whatever the umask), and a cache directory owned by
another user or writable by group or others is not used: symgrad warns once
(:class:`KernelCacheWarning`) and compiles in memory. So it does when the cache cannot be
written (read-only, a regular file in the way, a full disk). Files are read only if this
user's (never through a symlink), written whole or not at all, and moved aside
(``*.quarantined``) when damaged.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import threading
import time
import uuid
import warnings
from pathlib import Path

_WARNED: set[tuple[str, str]] = set()
_LOCK_WARN = threading.Lock()


class KernelCacheWarning(UserWarning):
    """The kernel cache is not used (not private, or not writable): kernels compile in memory."""


class NotPrivateError(PermissionError):
    """A cache directory that someone other than this user could have written to."""


def cache_dir() -> Path:
    """Where kernel sources (and Numba's cache of them) live; created private on demand.

    Raises :class:`NotPrivateError` for a directory that is not private (owned
    by another user, or writable by group or others) and ``OSError`` for one
    that cannot be made.

        >>> d = cache_dir()
        >>> d.name, oct(d.stat().st_mode & 0o777)
        ('kernels', '0o700')
    """
    env = os.environ.get("SYMGRAD_CACHE_DIR")
    if env:
        base = Path(env)
    else:
        import platformdirs

        base = Path(platformdirs.user_cache_dir("symgrad"))
    path = base / "kernels"
    made = make_dirs(path / "__pycache__")
    for d in dict.fromkeys([*made, base, path, path / "__pycache__"]):
        check_private(d, tighten=d in made or d != base)
    return path


def check_private(path: Path, tighten: bool = False) -> None:
    """Raise :class:`NotPrivateError` unless ``path`` is a directory of this user's
    (or root's) that nobody else can write to; with ``tighten``, make it 0700."""
    st = os.stat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(f"{path} is not a directory")
    if os.name != "posix":  # no uids or modes to go by
        return
    if st.st_uid not in (os.geteuid(), 0):
        raise NotPrivateError(f"{path} is owned by uid {st.st_uid}, not by you "
                              f"(uid {os.geteuid()})")
    if st.st_mode & 0o022:
        who = " and ".join(w for w, bit in (("group", 0o020), ("others", 0o002))
                           if st.st_mode & bit)
        raise NotPrivateError(f"{path} is writable by {who} "
                              f"(mode {stat.S_IMODE(st.st_mode):o})")
    if tighten and st.st_mode & 0o077 and st.st_uid == os.geteuid():
        with contextlib.suppress(OSError):  # read by others is no danger; a read-only cache
            os.chmod(path, 0o700)


def make_dirs(path: Path) -> list[Path]:
    """Make ``path`` and its missing parents, each 0700; the ones this call made."""
    missing = []
    while not path.exists() and path.parent != path:
        missing.append(path)
        path = path.parent
    made = []
    for d in reversed(missing):
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:
            continue  # someone else made it: check_private judges it
        os.chmod(d, 0o700)  # whatever the umask
        made.append(d)
    return made


def usable_cache_dir() -> Path | None:
    """The cache directory, or None (after a warning, once) if it must not or cannot be used."""
    try:
        return cache_dir()
    except OSError as e:
        refuse(e)
    return None


def refuse(e: OSError) -> None:
    """Warn, once per problem, that kernels are compiled in memory because of ``e``."""
    if isinstance(e, NotPrivateError):
        warn_once(("not private", str(e)), (
            f"symgrad is not using its kernel cache: {e}, so someone else could "
            "have put code in it (Numba's cache files are pickles, which run code when "
            "loaded). Kernels are compiled in memory. Fix: delete that directory "
            "(symgrad makes it again, private), or set SYMGRAD_CACHE_DIR to a directory "
            "only you can write to."))
    else:
        warn_once(("cannot write", os.environ.get("SYMGRAD_CACHE_DIR", "")), (
            f"symgrad cannot use its kernel cache ({e}); kernels are compiled in memory "
            "and the next process compiles them again. Fix: make the cache directory "
            "writable, free some space, or set SYMGRAD_CACHE_DIR to a writable directory."))


def warn_once(key: tuple[str, str], message: str) -> None:
    with _LOCK_WARN:
        if key in _WARNED:
            return
        _WARNED.add(key)
    # point at the user's line: skip symgrad's frames (and Numba's, for a first call)
    level, frame = 1, sys._getframe()
    while frame.f_back is not None and frame.f_globals.get("__name__", "").startswith(
            ("symgrad", "numba")):
        level, frame = level + 1, frame.f_back
    warnings.warn(message, KernelCacheWarning, stacklevel=level)



def read_own(path: Path) -> bytes:
    """The bytes of the regular file at ``path`` (never through a symlink), if it is
    this user's (or root's) and nobody else could have written it; else OSError."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    with open(os.open(path, flags), "rb") as f:  # O_NONBLOCK: a FIFO does not hang us
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{path} is not a regular file")
        if os.name == "posix" and (st.st_uid not in (os.geteuid(), 0) or st.st_mode & 0o022):
            raise NotPrivateError(f"{path} could have been written by someone else")
        return f.read()


def write_new(path: Path, data: bytes) -> None:
    """Create ``path`` (0600, whatever the umask) holding ``data``; on failure, no file."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o600)
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(fd, 0o600)
        write_all(fd, data)
    except BaseException:
        os.close(fd)
        path.unlink(missing_ok=True)
        raise
    os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def replace(path: Path, data: bytes) -> None:
    """Put ``data`` at ``path`` atomically (a 0600 file), whatever was there."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    write_new(tmp, data)
    try:
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def quarantine(path: Path) -> None:
    """Move ``path`` aside, to a name of its own (so nothing there can be in the way)."""
    aside = path.with_name(f"{path.name}.{int(time.time())}.{uuid.uuid4().hex[:8]}.quarantined")
    try:
        os.replace(path, aside)
    except FileNotFoundError:
        pass


def check_own(path: Path) -> None:
    """Raise ``NotPrivateError`` for a file at ``path`` that someone else could have
    written (absent is fine: Numba treats it as no entry)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(st.st_mode) or (os.name == "posix" and (
            st.st_uid not in (os.geteuid(), 0) or st.st_mode & 0o022)):
        raise NotPrivateError(f"{path} could have been written by someone else")
