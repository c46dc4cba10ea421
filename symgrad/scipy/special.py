"""``sg.scipy.special``: see :mod:`symgrad.numpy_api.scipy_namespace`. A primitive
registered later with a ``scipy`` fact appears here too (the module's ``__getattr__``)."""

from ..numpy_api.scipy_namespace import *  # noqa: F403
from ..numpy_api.scipy_namespace import __all__ as __all__
from ..numpy_api.scipy_namespace import registered_later as __getattr__  # noqa: F401
