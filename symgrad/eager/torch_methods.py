"""The Tensor methods of round 3's issue 27 in one mixin of
:class:`~symgrad.eager.tensor.Tensor`: linear algebra (:mod:`.linalg_methods`), shapes
(:mod:`.shape_methods`), positions (:mod:`.index_methods`) and statistics
(:mod:`.stat_methods`); their torch-level functions are in :mod:`.shape_functions`."""

from __future__ import annotations

from .index_methods import IndexMethods
from .linalg_methods import LinalgMethods
from .shape_methods import ShapeMethods
from .stat_methods import StatMethods


class TorchMethods(LinalgMethods, ShapeMethods, IndexMethods, StatMethods):
    """See the module docstring."""

    __slots__ = ()
