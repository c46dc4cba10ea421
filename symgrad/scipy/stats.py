"""``sg.scipy.stats``: see :mod:`symgrad.numpy_api.scipy_stats`."""

from ..numpy_api.scipy_stats import *  # noqa: F403
from ..numpy_api.scipy_stats import __all__ as __all__
