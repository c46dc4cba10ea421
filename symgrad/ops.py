"""``symgrad.ops``: numpy's API on traced values, under the name earlier code imported.

The implementation is :mod:`symgrad.numpy_api`; this module re-exports its
public functions (``symgrad.ops.supported_functions()`` lists what traces).

    >>> import symgrad as sg
    >>> "np.linalg.solve" in sg.ops.supported_functions()
    True
"""

from .numpy_api import (
    at,
    clip,
    log_softmax,
    logsumexp,
    relu,
    sigmoid,
    softmax,
    softplus,
    supported_functions,
    where,
    xlogy,
)

__all__ = ["at", "clip", "log_softmax", "logsumexp", "relu", "sigmoid", "softmax", "softplus",
           "supported_functions", "where", "xlogy"]
