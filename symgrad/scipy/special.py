"""``sg.scipy.special``: see :mod:`symgrad.numpy_api.scipy_namespace`."""

from ..numpy_api.scipy_namespace import *  # noqa: F403
from ..numpy_api.scipy_namespace import __all__ as __all__
