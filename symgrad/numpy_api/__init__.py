"""numpy's API on traced values: what user code calls.

:mod:`.tracer` (the traced array and :func:`trace`), :mod:`.dispatch` (how
``np.<ufunc>`` and ``np.<function>`` calls reach symgrad), :mod:`.functions`
(selection, stable functions, reductions, reshapes), :mod:`.shapes` (numpy's
shape functions), :mod:`.indexing` (``x[index]`` and ``sg.at``),
:mod:`.linalg` and :mod:`.control` (``fori_loop``, ``scan``, ``while_loop``,
``cond``). Everything here is composed of the primitives of
:mod:`symgrad.prims`; nothing here declares one.
"""

from . import (  # noqa: F401 (they register)
    arrays,
    decompositions,
    fft,
    matrices,
    positions,
    quantiles,
    signals,
    statistics,
    ufuncs,
)
from .arrays import array
from .control import cond, fori_loop, scan, while_loop
from .dispatch import HANDLED_FUNCTIONS, implements, supported_functions
from .functions import (
    clip,
    log_softmax,
    logsumexp,
    relu,
    sigmoid,
    softmax,
    softplus,
    where,
    xlogy,
)
from .indexing import at
from .traced_array import ArrayMethods, ArrayTracer, stage, trace

__all__ = ["ArrayMethods", "ArrayTracer", "HANDLED_FUNCTIONS", "array", "at", "clip", "cond",
           "fori_loop", "implements", "scan", "while_loop",
           "log_softmax", "logsumexp", "relu", "sigmoid", "softmax", "softplus",
           "stage", "supported_functions", "trace", "where", "xlogy"]
