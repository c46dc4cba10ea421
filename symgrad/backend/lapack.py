"""LAPACK as numpy calls it, where Numba's ``np.linalg`` cannot: ``eigh(a, UPLO="U")``.

Numba's ``np.linalg.eigh`` has no ``UPLO``: it always reduces the lower triangle.
LAPACK's dsyevd reduces the upper triangle otherwise than the lower one, so the
eigenvectors of ``eigh(a, "U")`` are not those of ``eigh(a.T)`` (their signs differ,
and a gradient of numpy's function through them with them; for a complex Hermitian
matrix the upper triangle is the conjugate of the lower one's transpose). Kernels of an
``eigh`` of the upper triangle import this module (``la.eigh_upper``) and call LAPACK as
numpy's ``eigh`` does: on a column-major copy, with UPLO='U' (dsyevd, ssyevd, zheevd or
cheevd by the matrix's dtype).

Numba loads when a kernel first reads an attribute here (module ``__getattr__``), not
when the module is imported; the file's hash is in the key of every kernel that
imports it, so a change here recompiles them.

    >>> import numpy as np
    >>> from symgrad.backend import lapack as la
    >>> a = np.array([[2.0, 1.0], [7.0, 3.0]])
    >>> bool(np.array_equal(la.eigh_upper(a)[1], np.linalg.eigh(a, "U")[1]))
    True
    >>> c = np.array([[2.0, 1.0 - 1j], [7.0 + 5j, 3.0]])
    >>> bool(np.allclose(la.eigh_upper(c)[0], np.linalg.eigh(c, "U")[0], rtol=1e-14))
    True
"""

from __future__ import annotations

import functools
from typing import Any


@functools.cache
def _eigh_upper() -> Any:
    import numpy as np
    from numba import njit
    from numba.extending import overload
    from numba.np import numpy_support
    from numba.np.linalg import _LAPACK, _copy_to_fortran_order, ensure_lapack, get_blas_kind

    ensure_lapack()

    def evd_upper(a: Any) -> Any:  # a stub: Numba compiles the overload below
        raise NotImplementedError

    @overload(evd_upper)
    def _evd_upper(a: Any) -> Any:
        """LAPACK's ?syevd (float64, float32) or ?heevd (complex128, complex64), by
        ``a``'s dtype, as Numba's own eigh picks them; real eigenvalues."""
        evd = _LAPACK().numba_ez_xxxevd(a.dtype)
        kind = ord(get_blas_kind(a.dtype, "eigh"))
        w_dtype = numpy_support.as_dtype(getattr(a.dtype, "underlying_float", a.dtype))

        def impl(a: Any) -> Any:
            n = a.shape[-1]
            if a.shape[-2] != n:
                raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square.")
            acpy = _copy_to_fortran_order(a)
            w = np.empty(n, dtype=w_dtype)
            if n == 0:
                return w, acpy
            info = evd(kind, ord("V"), ord("U"), n, acpy.ctypes, n, w.ctypes)
            if info != 0:
                raise np.linalg.LinAlgError("Eigenvalues did not converge")
            return w, acpy
        return impl

    @njit(cache=False, error_model="numpy")
    def eigh_upper(a):
        """numpy's ``np.linalg.eigh(a, UPLO="U")`` of one real or complex matrix: (w, v)."""
        return evd_upper(a)
    return eigh_upper


def __getattr__(name: str) -> Any:
    if name == "eigh_upper":
        return _eigh_upper()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
