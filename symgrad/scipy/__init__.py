"""``sg.scipy``: scipy's functions for traced values, with scipy's signatures (as
``jax.scipy``): :mod:`.special`, :mod:`.stats` and :mod:`.linalg` (``expm``).
Importing it never imports scipy.

    >>> import numpy as np, symgrad as sg
    >>> float(sg.grad(lambda x: sg.scipy.stats.norm.logpdf(x, 0.0, 1.0))(1.5))
    -1.5
"""

from . import linalg, special, stats

__all__ = ["linalg", "special", "stats"]
