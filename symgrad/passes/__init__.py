"""Graph -> graph passes: what the compiler does to a traced graph before the backend.

:mod:`.adjoint` (reverse mode, whose VJP rules come from :mod:`symgrad.prims`),
:mod:`.batching` (the batching rules applied to a graph, for ``vmap``),
:mod:`.rewrites` (exact rewrites to a fixed point, and the accuracy rewrites),
:mod:`.loops` and :mod:`.reroll` (control flow), :mod:`.structure` (one-hot products).

The folder was called ``transforms/`` until issue 30; it is named for what it
holds, compiler passes over :class:`symgrad.core.ir.Graph`, so that the name
``transforms`` is left to what users call transformations (``sg.grad``, ``sg.vmap``,
..., :mod:`symgrad.transforms`). A pass takes a graph and returns a graph; none
traces a user's function or reads a call's arguments.
"""
