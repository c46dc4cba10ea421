"""Stacks of matrix products for kernels: ``bm.matmul(x, y, out)``, ``out[b] = x[b] @ y[b]``.

A kernel's ``matmul`` of 3+ axes (attention's scores and their gradients) is one BLAS
product per matrix. Written in each kernel, each product took a C-ordered copy of both
slices, a fresh result and a copy of it into the output (a transformer's backward: 256
products of 16x16 matrices per call site, 8 call sites). Here one function, compiled
once per process for each dtype and layout and linked into the kernels that call it,
hands BLAS (``?gemm``) each slice where it lies: a slice whose rows or columns are
contiguous is read through its leading dimension (and ``transa``), only another one
(a broadcast, a stride that is not a whole row) is copied, into one buffer reused for
every matrix; each product is written into ``out[b]`` directly. Real float32 and
float64 only (kernels write other dtypes as before).

Numba loads when a kernel first reads an attribute here (module ``__getattr__``), as
:mod:`.lapack`; the file's hash is in the key of every kernel that calls it, so a
change here recompiles them. A kernel read from the disk cache holds its own copy of
the machine code: the function compiles only in a process that compiles a kernel.

    >>> import numpy as np
    >>> from symgrad.backend import batched as bm
    >>> x = np.arange(24.0).reshape(2, 3, 4); y = np.arange(40.0).reshape(2, 5, 4)
    >>> out = np.empty((2, 3, 5))
    >>> bm.matmul(x, y.transpose(0, 2, 1), out)
    >>> bool(np.array_equal(out, x @ y.transpose(0, 2, 1)))
    True
"""

from __future__ import annotations

import functools
from typing import Any


@functools.cache
def _matmul() -> Any:
    import numpy as np
    from numba import njit
    from numba.extending import overload
    from numba.np.linalg import _BLAS, ensure_blas, get_blas_kind

    ensure_blas()

    def gemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, one, zero):  # a stub: Numba compiles
        raise NotImplementedError                                 # the overload below

    @overload(gemm)
    def _gemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, one, zero):
        """BLAS ``?gemm`` in Fortran order, ``c = op(a) @ op(b)`` (``c``: m x n), by
        ``c``'s dtype (sgemm, dgemm)."""
        xxgemm = _BLAS().numba_xxgemm(c.dtype)
        kind = ord(get_blas_kind(c.dtype, "matmul"))

        def impl(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, one, zero):
            status = xxgemm(kind, ta, tb, m, n, k, one.ctypes, a.ctypes, lda, b.ctypes, ldb,
                            zero.ctypes, c.ctypes, ldc)
            if status != 0:
                raise RuntimeError("BLAS ?gemm is not available (scipy's cython_blas)")
        return impl

    @njit(error_model="numpy", nogil=True)
    def leading(s0, s1, rows, cols, size):
        """(transposed, leading dimension) under which BLAS reads a rows x cols matrix of
        byte strides (s0, s1) as it lies in memory, or (False, 0): it must be copied."""
        if s0 % size or s1 % size:
            return False, 0
        s0, s1 = s0 // size, s1 // size
        if s1 == 1 and s0 >= max(1, cols):
            return False, s0  # rows of contiguous elements
        if s0 == 1 and s1 >= max(1, rows):
            return True, s1  # columns of contiguous elements
        return False, 0

    @njit(error_model="numpy", nogil=True)
    def matmul(x, y, out):
        """``out[b] = x[b] @ y[b]`` for x (B, m, k), y (B, k, n) and a C-ordered out
        (B, m, n), all of one real dtype."""
        nb, m, k = x.shape
        n = y.shape[2]
        if nb == 0 or m == 0 or n == 0:
            return
        if k == 0:
            out[:, :, :] = 0
            return
        size = out.itemsize
        one, zero = np.ones(1, out.dtype), np.zeros(1, out.dtype)
        # Fortran order: out[b].T (n x m) = y[b].T (n x k) @ x[b].T (k x m); a C-ordered
        # matrix is its transpose in Fortran order, so an untransposed operand is "N"
        y_t, y_ld = leading(y.strides[1], y.strides[2], k, n, size)
        x_t, x_ld = leading(x.strides[1], x.strides[2], m, k, size)
        y_copy, x_copy = y_ld == 0, x_ld == 0
        y_buffer = np.empty((k if y_copy else 0, n), out.dtype)
        x_buffer = np.empty((m if x_copy else 0, k), out.dtype)
        ta = ord("T") if y_t else ord("N")
        tb = ord("T") if x_t else ord("N")
        for b in range(nb):
            yb = y[b]
            if y_copy:
                y_buffer[:, :] = yb
                yb = y_buffer
                y_ld = n
            xb = x[b]
            if x_copy:
                x_buffer[:, :] = xb
                xb = x_buffer
                x_ld = k
            gemm(ta, tb, n, m, k, yb, y_ld, xb, x_ld, out[b], n, one, zero)

    return matmul


def __getattr__(name: str) -> Any:
    if name == "matmul":
        return _matmul()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
