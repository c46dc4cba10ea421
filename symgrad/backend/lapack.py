"""LAPACK as numpy calls it, where Numba's ``np.linalg`` cannot: ``eigh(a, UPLO="U")``.

Numba's ``np.linalg.eigh`` has no ``UPLO``: it always reduces the lower triangle.
LAPACK's dsyevd reduces the upper triangle otherwise than the lower one, so the
eigenvectors of ``eigh(a, "U")`` are not those of ``eigh(a.T)`` (their signs differ,
and a gradient of numpy's function through them with them). Kernels of an ``eigh``
of the upper triangle import this module (``la.eigh_upper``) and call dsyevd as
numpy's ``eigh`` does: on a column-major copy, with UPLO='U'.

Numba loads when a kernel first reads an attribute here (module ``__getattr__``), not
when the module is imported; the file's hash is in the key of every kernel that
imports it, so a change here recompiles them.

    >>> import numpy as np
    >>> from symgrad.backend import lapack as la
    >>> a = np.array([[2.0, 1.0], [7.0, 3.0]])
    >>> bool(np.array_equal(la.eigh_upper(a)[1], np.linalg.eigh(a, "U")[1]))
    True
"""

from __future__ import annotations

import functools
from typing import Any


@functools.cache
def _eigh_upper() -> Any:
    import numpy as np
    from numba import njit, types
    from numba.np.linalg import _LAPACK, _copy_to_fortran_order, ensure_lapack

    ensure_lapack()
    syevd = _LAPACK().numba_ez_xxxevd(types.float64)

    @njit(cache=False, error_model="numpy")
    def eigh_upper(a):
        """numpy's ``np.linalg.eigh(a, UPLO="U")`` of one float64 matrix: (w, v)."""
        n = a.shape[-1]
        if a.shape[-2] != n:
            raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square.")
        acpy = _copy_to_fortran_order(a)
        w = np.empty(n)
        if n == 0:
            return w, acpy
        info = syevd(ord("d"), ord("V"), ord("U"), n, acpy.ctypes, n, w.ctypes)
        if info != 0:
            raise np.linalg.LinAlgError("Eigenvalues did not converge")
        return w, acpy
    return eigh_upper


def __getattr__(name: str) -> Any:
    if name == "eigh_upper":
        return _eigh_upper()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
