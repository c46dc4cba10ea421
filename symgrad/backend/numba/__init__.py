"""The Numba backend: an optimized graph becomes readable Python source compiled by Numba.

:mod:`.fusion` (which equations share a loop), :mod:`.split` (large graphs as bounded
pieces), :mod:`.codegen` (kernel source from a graph and its plan, through the lowering
tables of :mod:`.lowering`), :mod:`.compile` (the kernel cache, with :mod:`.integrity`
and :mod:`.keylock`), :mod:`.tiered` and :mod:`.worker` (first answers from the
interpreter while a worker process compiles), :mod:`.threads` (``prange`` chunks),
:mod:`.scope` (graphs held by control flow, as statements), :mod:`.stats` (compile
counts), :mod:`.entry` (the compiled overload behind a warm dispatcher).

What generated kernels import at run time stays one level up, at the paths their text
names (``from symgrad.backend import vecmath as vm``, ``lapack as la``): that text is
part of every kernel's cache key, so moving those modules would change every kernel.
Importing this package imports no Numba (only compiling does).
"""
