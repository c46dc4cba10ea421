"""The Tensor methods of round 3's issue 27 in one mixin of
:class:`~symgrad.eager.tensor.Tensor`: elementwise, comparison and predicate methods
(:mod:`.elementwise_methods`), linear algebra (:mod:`.linalg_methods`), shapes
(:mod:`.shape_methods`), positions (:mod:`.index_methods`), statistics
(:mod:`.stat_methods`) and the ``*_scatter`` ops (:mod:`.scatter_views`); their
torch-level functions are in :mod:`.shape_functions` and :mod:`.elementwise_functions`."""

from __future__ import annotations

from .elementwise_methods import ElementwiseMethods
from .index_methods import IndexMethods
from .linalg_methods import LinalgMethods
from .scatter_views import ScatterViewMethods
from .shape_methods import ShapeMethods
from .stat_methods import StatMethods


class TorchMethods(ElementwiseMethods, LinalgMethods, ShapeMethods, IndexMethods, StatMethods,
                   ScatterViewMethods):
    """See the module docstring."""

    __slots__ = ()
