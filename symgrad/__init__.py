"""symgrad: gradients of plain numpy functions, derived symbolically, compiled by Numba.

    >>> import numpy as np, symgrad as sg
    >>> @sg.grad
    ... def f(x):
    ...     return np.mean(3 * (x + 2) ** 2)
    >>> f(np.ones((2, 2)))
    array([[4.5, 4.5],
           [4.5, 4.5]])

Importing symgrad loads numpy only; Numba is imported when a kernel is first
compiled and SymPy only by :mod:`symgrad.sympy_bridge`.
"""

__version__ = "0.1.0"

from .api import grad, jit, value_and_grad, vjp  # noqa: E402
from .errors import (  # noqa: E402
                     EscapedTracerError,
                     ShapeError,
                     TracerBoolConversionError,
                     TracerConversionError,
                     UnsupportedFunctionError,
)
from .ir import Graph  # noqa: E402
from .ops import (  # noqa: E402
    log_softmax,
    logsumexp,
    relu,
    sigmoid,
    softmax,
    softplus,
    where,
    xlogy,
)

__all__ = ["grad", "value_and_grad", "vjp", "jit", "where", "relu", "sigmoid", "softplus",
           "logsumexp", "log_softmax", "softmax", "xlogy", "Graph", "ShapeError",
           "TracerBoolConversionError", "TracerConversionError", "UnsupportedFunctionError",
           "EscapedTracerError", "__version__"]
