"""``sg.scipy``: scipy's functions for traced values, with scipy's signatures (as
``jax.scipy``): :mod:`.special` and :mod:`.stats`. Importing it never imports scipy.

    >>> import numpy as np, symgrad as sg
    >>> float(sg.grad(lambda x: sg.scipy.stats.norm.logpdf(x, 0.0, 1.0))(1.5))
    -1.5
"""

from . import special, stats

__all__ = ["special", "stats"]
