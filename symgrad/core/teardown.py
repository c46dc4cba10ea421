"""The end of a process symgrad owns: what is alive is left to the operating system.

CPython's exit, after the last ``atexit`` handler, runs full garbage collections over
every object (about four passes while it clears the modules), and their cost grows
with what is imported: with SymPy or Numba loaded (about 80,000 objects) it was
0.3-0.5 s of CPU after the ``symgrad`` command's last line (0.7-1.4 s of waiting on a
loaded 2-core machine), and 0.36-0.45 s after a process's first Numba compile, for
nothing: the memory goes back to the system anyway. :func:`skip_teardown`, called as
such a process ends, freezes what is alive (``gc.freeze``): the collections pass it by
(0.04-0.06 s of CPU left, 0.1-0.2 s of waiting).
``atexit`` handlers still run and buffered output is still flushed; only a finalizer of
an object in a reference cycle found at teardown does not run, and none of symgrad's
does anything (files are closed where they are written, cache files published
atomically as they are written). Only two processes call it: the ``symgrad`` command
(:func:`symgrad.cli.command.main` reading ``sys.argv``; with ``FILE.py:func`` that
holds the user's module too) and the compile worker
(:mod:`symgrad.backend.numba.worker`). A user's program ends as Python ends it: its own
objects' finalizers are its own (``gc.freeze()`` as its last line does the same).
"""

from __future__ import annotations

import gc


def skip_teardown() -> None:
    """Spare this process, which is about to end, the collections of its exit."""
    gc.freeze()
