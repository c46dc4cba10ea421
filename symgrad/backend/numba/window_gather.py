"""The eager ``windows`` (im2col, :mod:`symgrad.prims.windows`) as one compiled gather.

A convolution's or a pooling's windows are a copy: element ``m`` of a window row
reads element ``index[m]`` of its plane, the same ``index`` for every leading
position (batch and channel). Numpy copies them one strided view at a time (one
copy per kernel offset, or a sliding view with the kernel's few elements
innermost); a compiled loop over a table of source positions is 3-4x faster for
LeNet's second convolution (0.26 against 0.9 ms for its 64x6x14x14 input, 5x5
windows) and 1.5-2x for its 2x2 poolings. The table is made once per geometry
(sizes, kernel, stride, dilation; numpy), the kernel once per dtype: its source
sits in symgrad's kernel cache (:mod:`.compile`), so a new process loads its
machine code from disk. The eager Tensor's operations call it
(:mod:`symgrad.eager.fastpath`, through :mod:`symgrad.transforms.pipeline`).

The planes are read where they are when each is contiguous (a convolution's
result, whose batch and channel axes its matrix product leaves swapped, is not
copied first). A geometry's first call in a process copies with numpy (a one-off call never
waits for Numba), and so does every call on other dtypes than float32 and
float64, on fewer than :data:`MIN_SIZE` elements, or with
``SYMGRAD_EAGER_COMPILE=0``. The result is the same array, bit for bit (a copy
changes no bit: -0.0, NaN payloads and all), C-ordered, a fresh one per call.
"""

from __future__ import annotations

import hashlib
import math
import threading
import warnings
from typing import Any

import numpy as np

from ...core.config import config
from ...prims.windows import _out, _windows_impl
from .codegen import KernelSource
from .compile import load

#: windows of fewer elements are copied by numpy (no compile for small arrays)
MIN_SIZE = 4096
#: the geometries kept (their tables), the oldest dropped first
GEOMETRY_LIMIT = 32
#: windows of a plane with more elements than this are copied by numpy (a table of
#: int32 positions takes 4 bytes per element of a plane's windows: 16 MiB at most)
MAX_TABLE = 1 << 22

_TEXT = """\
# symgrad kernel: gather
# the windows of an array (im2col): out[a, b, m] = x[a, b, index[m]]
from numba import njit


@njit(cache=True, nogil=True, error_model="numpy", fastmath=False)
def gather(x, index, out):
    for a in range(out.shape[0]):
        for b in range(out.shape[1]):
            for m in range(index.shape[0]):
                out[a, b, m] = x[a, b, index[m]]
"""

_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
#: geometry -> [window counts, source table, calls seen]
_GEOMETRIES: dict[tuple, list[Any]] = {}
_KERNEL: list[Any] = [None]
_LOCK = threading.Lock()


class GatherFallbackWarning(RuntimeWarning):
    """The compiled gather of windows failed; windows are copied by numpy from then on."""


def windows(x: Any, kernel: tuple, stride: tuple, dilation: tuple) -> np.ndarray:
    """``windows_p``'s value (:func:`symgrad.prims.windows._windows_impl`'s, bit for bit),
    by the compiled gather where it applies."""
    x = np.asarray(x)
    found = _gathered(x, kernel, stride, dilation)
    return found if found is not None else _windows_impl(x, kernel, stride, dilation)


def _gathered(x: np.ndarray, kernel: tuple, stride: tuple, dilation: tuple
              ) -> np.ndarray | None:
    if not config.eager_compile or x.dtype not in _DTYPES or _KERNEL[0] is False:
        return None
    d = len(kernel)
    size = tuple(x.shape[x.ndim - d:])
    key = (size, tuple(kernel), tuple(stride), tuple(dilation))
    geometry = _GEOMETRIES.get(key)
    if geometry is None:
        out = _out(size, kernel, stride, dilation)
        span = math.prod(out) * math.prod(kernel)
        if x.size // max(math.prod(size), 1) * span < MIN_SIZE or span > MAX_TABLE or \
                math.prod(size) >= 2 ** 31:
            return None  # (small or huge: not remembered, numpy's copy every time)
        with _LOCK:
            if len(_GEOMETRIES) >= GEOMETRY_LIMIT:
                _GEOMETRIES.pop(next(iter(_GEOMETRIES)))
            geometry = _GEOMETRIES.setdefault(key, [out, _table(size, kernel, stride,
                                                                dilation, out), 0])
    geometry[2] += 1
    if geometry[2] < 2:  # (the first call of a geometry: numpy's copy)
        return None
    out, index = geometry[0], geometry[1]
    lead = x.shape[:x.ndim - d]
    # (a view where the planes are contiguous, as a convolution's result is, whose
    # batch and channel axes its matrix product leaves swapped; else a copy)
    inner = lead[-1] if lead else 1
    planes = x.reshape(math.prod(lead) // max(inner, 1), inner, math.prod(size))
    result = np.empty((*planes.shape[:2], index.size), dtype=x.dtype)
    try:
        _kernel()(planes, index, result)
    except Exception as e:  # noqa: BLE001 -- numpy's copy gives the same values
        _KERNEL[0] = False
        warnings.warn(f"symgrad could not compile its gather of windows ({type(e).__name__}: "
                      f"{e}); windows are copied by numpy from now on", GatherFallbackWarning,
                      stacklevel=3)
        return None
    return result.reshape(*lead, *out, *kernel)


def _table(size: tuple, kernel: tuple, stride: tuple, dilation: tuple, out: tuple
           ) -> np.ndarray:
    """The flat position in a plane of ``size`` of each element of the windows
    ``(*out, *kernel)``, in their C order."""
    d = len(kernel)
    grid = np.indices((*out, *kernel)).reshape(2 * d, -1)
    flat = np.zeros(grid.shape[1], dtype=np.int64)
    for i in range(d):
        flat = flat * size[i] + grid[i] * stride[i] + grid[d + i] * dilation[i]
    return flat.astype(np.int32)


def _kernel() -> Any:
    """The compiled gather (loaded from the kernel cache, or compiled, on first use)."""
    kernel = _KERNEL[0]
    if kernel is None:
        key = hashlib.sha256(_TEXT.encode()).hexdigest()[:32]
        kernel = _KERNEL[0] = load(KernelSource(key, "gather", _TEXT))
    return kernel
