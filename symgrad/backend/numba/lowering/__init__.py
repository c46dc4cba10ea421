"""How the Numba backend writes each primitive: one table, filled family by family.

:mod:`.table` holds the :class:`~.table.Lowering` record, the table keyed by
primitive objects, and :func:`~.table.lowering`, which codegen and fusion call (an
elementwise primitive of a numpy ufunc lowers to ``np.<ufunc>(...)`` without an
entry). Importing this package files every family's entries.
"""

# files the entries, one module per family of symgrad.prims
from . import (  # noqa: F401
    bitwise,
    complex,
    control,
    convert,
    custom,
    decompositions,
    elementwise,
    indexing,
    layer_norm,
    linalg,
    loops,
    norms,
    reductions,
    softmax,
    sorting,
    special_functions,
    windows,
)
from .table import (
    COMPLEX_INTERPRETED,
    INTERPRETED,
    TABLE,
    Lowering,
    between,
    expression,
    lower,
    lowering,
)

__all__ = ["COMPLEX_INTERPRETED", "INTERPRETED", "TABLE", "Lowering", "between", "expression",
           "lower", "lowering"]
