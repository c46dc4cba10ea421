"""``sg.scipy.linalg``: see :mod:`symgrad.numpy_api.scipy_linalg`."""

from ..numpy_api.scipy_linalg import *  # noqa: F403
from ..numpy_api.scipy_linalg import __all__ as __all__
