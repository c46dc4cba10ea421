"""The backend: an optimized graph becomes Numba kernels (or runs on the interpreter).

:mod:`.fusion` (which equations share a loop), :mod:`.split` (large graphs
as bounded pieces), :mod:`.codegen` (kernel source from a graph and its plan),
:mod:`.compile` (the kernel cache), and :mod:`.program`, whose ``build`` runs
them in that order; :mod:`.entry` finds the compiled overload behind a warm
Numba dispatcher (what symgrad's fast path calls). The backend imports
nothing of symgrad but the core: what it needs to know about a primitive it
reads from the primitive's facets and flags; :mod:`.numpy_source`, the numpy
target of ``sg.export``, imports ``prims`` too, for its table keyed by primitives.
For ``sg.export``: :mod:`.standalone` copies helpers into a module's text,
:mod:`.numba_standalone` makes a Numba kernel standalone, :mod:`.entry_source`
writes the entry function around a kernel.
"""
