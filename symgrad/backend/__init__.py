"""Backends: an optimized graph becomes something to call.

:mod:`.program` is the one entry (``build``): it hands a graph to the backend the
caller names. :mod:`.numba` is the compiling backend (fusion, codegen through its
lowering tables, the kernel cache, tiers); ``"numpy"`` is the interpreter of
:mod:`symgrad.core.interpreter`, whose lowering of each primitive is the primitive's
``impl``. :mod:`.memory` keeps freed memory in the process (any backend). The modules
generated kernels import by name (:mod:`.vecmath`, :mod:`.vecmath_facts`,
:mod:`.lapack`) stay here, at the paths kernel text and cache keys name.
For ``sg.export``: :mod:`.numpy_source` (the numpy target's lowering table, keyed by
primitives), :mod:`.standalone` (copies helpers into a module's text),
:mod:`.numba.standalone` (makes a Numba kernel standalone) and :mod:`.entry_source`
(the entry function around a kernel).
"""
