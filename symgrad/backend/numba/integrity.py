"""Damaged cache files are never trusted: each compiled artifact carries its sha256.

Numba's cache files (the index ``*.nbi`` and the machine code ``*.nbc``) are
pickles holding machine code: one flipped byte can give a wrong number, a
segfault or an LLVM abort in every later process, which then dies before it
can set the file aside. So every file symgrad's Numba cache writes gets a
manifest beside it, ``<file>.sha256`` (the hex digest of its bytes, written
just before the file itself), and a file is read whole and compared with its
manifest *before* anything unpickles it. A file without a manifest, or whose
bytes do not match it, raises :class:`DamagedFile`; the cache sets the entry
aside (``*.quarantined``) and compiles again. A reader that meets a writer
halfway (the manifest replaced, the file not yet) reads again a few times
before it calls the file damaged.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.nbc"
    >>> write(p, b"machine code")
    >>> read(p)
    b'machine code'
    >>> _ = p.write_bytes(b"machine cole")
    >>> read(p)
    Traceback (most recent call last):
    ...
    symgrad.backend.numba.integrity.DamagedFile: ... does not match its sha256 ...
"""

from __future__ import annotations

import hashlib
import os
import time
import uuid
from collections.abc import Callable
from pathlib import Path

SUFFIX = ".sha256"
_RETRIES = 4


class DamagedFile(Exception):
    """A cache file whose bytes are not those its manifest records (or with no manifest)."""


def manifest(path: Path) -> Path:
    """Where the digest of ``path`` is kept."""
    return path.with_name(path.name + SUFFIX)


def write(path: Path, data: bytes, replace: Callable[[Path, bytes], None] | None = None) -> None:
    """Publish ``data`` at ``path`` (and its digest beside it, first), each file atomically
    with ``replace`` (by default a 0600 file written whole, then renamed into place)."""
    replace = replace or _replace
    replace(manifest(path), hashlib.sha256(data).hexdigest().encode("ascii"))
    replace(path, data)


def read(path: Path) -> bytes | None:
    """The bytes at ``path`` if they match its manifest; None when there is no file;
    :class:`DamagedFile` otherwise."""
    for attempt in range(_RETRIES):
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            want = manifest(path).read_bytes().strip().decode("ascii", "replace")
        except FileNotFoundError:
            want = ""
        if hashlib.sha256(data).hexdigest() == want:
            return data
        if attempt + 1 < _RETRIES:
            time.sleep(0.02 * (attempt + 1))  # a writer between the manifest and the file
    what = "has no manifest" if not want else "does not match its sha256 manifest"
    raise DamagedFile(f"{path} {what}: damaged (or written by something else), not loaded")


def _replace(path: Path, data: bytes) -> None:
    """Put ``data`` at ``path`` atomically (a 0600 file); on failure, no file is left."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(tmp, flags, 0o600)
    try:
        try:
            if hasattr(os, "fchmod"):
                os.fchmod(fd, 0o600)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
