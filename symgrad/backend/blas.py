"""numpy's own BLAS for kernels' products ``a.T @ b``: the weight gradients of dense and
convolution layers.

Numba's ``np.dot`` calls the OpenBLAS that scipy bundles (``scipy.linalg.cython_blas``);
numpy's wheels bundle their own (scipy-openblas, its symbols prefixed: ``scipy_cblas_sgemm64_``,
64-bit integers), which may be another release: here numpy 2.4's is OpenBLAS 0.3.31 and
scipy 1.17's 0.3.30, both running their SkylakeX kernels on an AVX-512 Xeon. Their ``gemm``
of a transposed first operand differ: LeNet's second convolution's weight gradient,
``(6400, 16).T @ (6400, 150)`` in float32, took 0.50 ms with numpy's against 0.70 (warm
caches) and 0.70-0.78 against 1.17-1.34 ms (cold), and 0.78 against 1.27-1.53 ms inside the
backward kernel; the other orientations were no faster (``(6400, 16) @ (16, 150)`` equal,
``(6, 50176) @ (25, 50176).T`` 1.2-1.4x slower). So kernels call numpy's ``gemm`` for
``a.T @ b`` only (:func:`sdot_tn`, :func:`ddot_tn`), and ``np.dot`` for every other product.

The symbols are registered for the JIT's linker (as :mod:`.npymath` registers numpy's cbrt
loop) after checking through ctypes that they give ``np.dot(a.T, b)``'s bits on a probe
(numpy calls the same function): :data:`AVAILABLE` is False where numpy has no such
library (another BLAS, another layout of the wheel) or the probe differs, and kernels
then call ``np.dot`` (their source, the cache's key, says which). The file's hash is in
the key of every kernel that imports it.
"""

from __future__ import annotations

import ctypes
import functools
import glob
import os

import numpy as np
from llvmlite import binding as llvm_binding
from numba import njit, types

#: numpy's cblas ?gemm (ILP64, scipy-openblas's prefix) -> the symbol kernels call
SYMBOLS = {"scipy_cblas_sgemm64_": "symgrad_numpy_sgemm",
           "scipy_cblas_dgemm64_": "symgrad_numpy_dgemm"}
_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112


def _library() -> ctypes.CDLL | None:
    """numpy's bundled scipy-openblas (loaded already: the same handle), or None."""
    base = os.path.dirname(np.__file__)
    for folder in (base + ".libs", os.path.join(base, ".dylibs")):
        for path in sorted(glob.glob(os.path.join(folder, "*scipy_openblas64_*"))):
            try:
                return ctypes.CDLL(path)
            except OSError:
                continue
    return None


def _gemm_tn(function, dtype: type, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a.T @ b`` by ``function`` through ctypes (the probe)."""
    (k, m), n = a.shape, b.shape[1]
    out = np.empty((m, n), dtype=dtype)
    real = ctypes.c_float if dtype == np.float32 else ctypes.c_double
    i64 = ctypes.c_int64
    function(_ROW_MAJOR, _TRANS, _NO_TRANS, i64(m), i64(n), i64(k), real(1.0),
             ctypes.c_void_p(a.ctypes.data), i64(m), ctypes.c_void_p(b.ctypes.data), i64(n),
             real(0.0), ctypes.c_void_p(out.ctypes.data), i64(n))
    return out


def _register() -> bool:
    """Register :data:`SYMBOLS` where numpy's gemm gives ``np.dot(a.T, b)``'s bits."""
    library = _library()
    if library is None:
        return False
    rng = np.random.default_rng(0)
    found = {}
    for (name, symbol), dtype in zip(SYMBOLS.items(), (np.float32, np.float64)):
        function = getattr(library, name, None)
        if function is None:
            return False
        function.restype = None
        a, b = (rng.standard_normal(s).astype(dtype) for s in ((37, 19), (37, 23)))
        if not np.array_equal(_gemm_tn(function, dtype, a, b).view(np.uint8),
                              np.dot(a.T, b).view(np.uint8)):
            return False
        found[symbol] = ctypes.cast(function, ctypes.c_void_p).value
    for symbol, address in found.items():
        llvm_binding.add_symbol(symbol, address)
    return True


#: whether kernels call numpy's gemm for ``a.T @ b`` (else ``np.dot``)
AVAILABLE = _register()


def _external(symbol: str, real: types.Float) -> types.ExternalFunction:
    i32, i64, pointer = types.int32, types.int64, types.CPointer(real)
    return types.ExternalFunction(symbol, types.void(
        i32, i32, i32, i64, i64, i64, real, pointer, i64, pointer, i64, real, pointer, i64))


_SGEMM = _external("symgrad_numpy_sgemm", types.float32)
_DGEMM = _external("symgrad_numpy_dgemm", types.float64)
_JIT = {"error_model": "numpy", "cache": False}


def _dot_tn(gemm: types.ExternalFunction, dtype: type, name: str):
    one, zero = dtype(1.0), dtype(0.0)

    @njit(**_JIT)
    def dot_tn(a, b):
        a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
        (k, m), n = a.shape, b.shape[1]
        out = np.empty((m, n), dtype=dtype)
        if k == 0:
            out[:] = 0
        elif m and n:
            gemm(_ROW_MAJOR, _TRANS, _NO_TRANS, m, n, k, one, a.ctypes, m, b.ctypes, n, zero,
                 out.ctypes, n)
        return out
    dot_tn.__doc__ = (f"``a.T @ b`` of {dtype.__name__} matrices ``a`` (k, m) and ``b`` (k, n) "
                      f"by numpy's {name}.")
    return dot_tn


sdot_tn = _dot_tn(_SGEMM, np.float32, "sgemm")
ddot_tn = _dot_tn(_DGEMM, np.float64, "dgemm")


#: each bundle's thread count before :func:`set_threads` first changed it
_BEFORE: list[int] = []


@functools.cache
def _controls() -> tuple[tuple[object, object], ...]:
    """The thread setters and getters of the OpenBLAS bundles of numpy and scipy (ILP64,
    prefixed ``scipy_openblas_..64_``, and scipy's own)."""
    import scipy

    libraries = [(_library(), "64_")]
    folder = os.path.join(os.path.dirname(os.path.dirname(scipy.__file__)), "scipy.libs")
    for path in sorted(glob.glob(os.path.join(folder, "*scipy_openblas-*"))):
        try:
            libraries.append((ctypes.CDLL(path), ""))
        except OSError:
            continue
    controls = []
    for library, suffix in libraries:
        setter = getattr(library, f"scipy_openblas_set_num_threads{suffix}", None)
        getter = getattr(library, f"scipy_openblas_get_num_threads{suffix}", None)
        if setter is not None and getter is not None:
            setter.restype, getter.restype = None, ctypes.c_int
            setter.argtypes = [ctypes.c_int]
            controls.append((setter, getter))
    return tuple(controls)


def threads() -> list[int]:
    """The thread counts of numpy's and scipy's bundled OpenBLAS (empty where there is
    none: another BLAS)."""
    return [getter() for _, getter in _controls()]


def set_threads(n: int | None) -> None:
    """Run the products of numpy's and scipy's bundled OpenBLAS on ``n`` threads, as
    ``torch.set_num_threads`` bounds MKL's (``None``: the counts they had before). A
    small product on two threads waits for a core another process keeps busy: LeNet's
    ``(4096, 72) @ (72, 16)`` in float32 took 8.0 ms against 0.10 on one thread, under
    load. Another BLAS (MKL, Accelerate) is left alone."""
    controls = _controls()
    if not _BEFORE:
        _BEFORE.extend(threads())
    for (setter, _), before in zip(controls, _BEFORE):
        setter(before if n is None else max(1, int(n)))
