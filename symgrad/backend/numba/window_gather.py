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

A geometry called :data:`OWN_CALLS` times gets loops of its own: the kernel's sizes,
stride and dilation written into the text as numbers (:func:`_own_text`), so that
LLVM unrolls a window's few elements into straight copies with no table to read:
0.18 against 0.33 ms for LeNet's second convolution, 0.07 against 0.12 for its 2x2
max pooling. One compile per kernel, stride and dilation (and dtype and layout),
loaded from the disk cache by the next process; a geometry called once or twice (most
tests') never waits for it. :func:`fill_window_rows` fills a convolution's window
matrix ``(N, C, *kernel, *out)`` (the kernel's axes first) with the same loops.
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
#: a geometry's calls from this one on run loops compiled for its kernel, stride and dilation
OWN_CALLS = 3

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
#: (kernel, stride, dilation, kernel axes first) -> its compiled loops (the last few kept)
_OWN: dict[tuple, Any] = {}
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
        geometry = _remember(_GEOMETRIES, key,
                             [out, _table(size, kernel, stride, dilation, out), 0])
    geometry[2] += 1
    if geometry[2] < 2:  # (the first call of a geometry: numpy's copy)
        return None
    out, index = geometry[0], geometry[1]
    lead = x.shape[:x.ndim - d]
    inner = lead[-1] if lead else 1
    try:
        if geometry[2] >= OWN_CALLS:
            # (a view where it can be, as for the table's planes: any strides will do)
            planes = x.reshape(math.prod(lead) // max(inner, 1), inner, *size)
            result = np.empty((*planes.shape[:2], *out, *kernel), dtype=x.dtype)
            _own(tuple(kernel), tuple(stride), tuple(dilation), False)(planes, result)
            return result.reshape(*lead, *out, *kernel)
        # (a view where the planes are contiguous, as a convolution's result is, whose
        # batch and channel axes its matrix product leaves swapped; else a copy)
        planes = x.reshape(math.prod(lead) // max(inner, 1), inner, math.prod(size))
        result = np.empty((*planes.shape[:2], index.size), dtype=x.dtype)
        _kernel()(planes, index, result)
    except Exception as e:  # noqa: BLE001 -- numpy's copy gives the same values
        _failed(e)
        return None
    return result.reshape(*lead, *out, *kernel)


def fill_window_rows(x: np.ndarray, kernel: tuple, stride: tuple, dilation: tuple,
                     out: tuple, into: np.ndarray) -> bool:
    """Copy the windows of ``x`` ``(N, C, *spatial)`` into the first ``C * prod(kernel)``
    rows of ``into`` ``(N, R, prod(out))`` (a convolution's window matrix: a row per
    element of a window, in the order of the weight's ``(C, *kernel)``, C-ordered) by
    the geometry's own loops, and say whether it did (else the caller copies: the first
    :data:`OWN_CALLS` - 1 calls of a geometry, other dtypes, ``SYMGRAD_EAGER_COMPILE=0``)."""
    if not config.eager_compile or x.dtype not in _DTYPES or into.dtype != x.dtype or \
            _KERNEL[0] is False or into.size < MIN_SIZE or not into.flags.c_contiguous:
        return False
    key = ("rows", tuple(x.shape[1:]), tuple(kernel), tuple(stride), tuple(dilation))
    calls = _GEOMETRIES.get(key) or _remember(_GEOMETRIES, key, [None, None, 0])
    calls[2] += 1
    if calls[2] < OWN_CALLS:
        return False
    try:
        _own(tuple(kernel), tuple(stride), tuple(dilation), True)(x, into, tuple(out))
    except Exception as e:  # noqa: BLE001 -- numpy's copy gives the same values
        _failed(e)
        return False
    return True


def _failed(e: Exception) -> None:
    _KERNEL[0] = False
    warnings.warn(f"symgrad could not compile its gather of windows ({type(e).__name__}: "
                  f"{e}); windows are copied by numpy from now on", GatherFallbackWarning,
                  stacklevel=4)


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


def _own(kernel: tuple, stride: tuple, dilation: tuple, kernel_first: bool) -> Any:
    """The compiled loops of one geometry (loaded from the kernel cache, or compiled)."""
    key = (kernel, stride, dilation, kernel_first)
    found = _OWN.get(key)
    if found is None:
        text = _own_text(kernel, stride, dilation, kernel_first)
        found = _remember(_OWN, key, load(KernelSource(
            hashlib.sha256(text.encode()).hexdigest()[:32], "windows", text)))
    return found


def _remember(cache: dict, key: tuple, value: Any) -> Any:
    """``cache[key]``, set to ``value`` if absent, the oldest entry dropped to keep at most
    :data:`GEOMETRY_LIMIT` (under the lock: another thread may add the same key)."""
    with _LOCK:
        if key not in cache and len(cache) >= GEOMETRY_LIMIT:
            cache.pop(next(iter(cache)))
        return cache.setdefault(key, value)


def _own_text(kernel: tuple, stride: tuple, dilation: tuple, kernel_first: bool) -> str:
    """The loops of one geometry, the kernel's sizes, stride and dilation as numbers,
    the output's elements in their memory order: ``out[a, b, *o, *k] = x[a, b, *(o *
    stride + k * dilation)]``, or with ``kernel_first`` the window matrix ``out[a, (b,
    *k), (*o)]`` of three axes (the output's sizes ``sizes``: its last axis is contiguous
    to Numba, so the loop along it is vectorized, 0.19 against 0.28 ms for LeNet's first
    convolution's windows).

        >>> print(_own_text((2,), (2,), (1,), False).split("\\n\\n\\n")[1])
        @njit(cache=True, nogil=True, error_model="numpy", fastmath=False)
        def windows(x, out):
            for a in range(x.shape[0]):
                for b in range(x.shape[1]):
                    for o0 in range(out.shape[2]):
                        for k0 in range(2):
                            out[a, b, o0, k0] = x[a, b, o0 * 2 + k0]
        <BLANKLINE>
    """
    d = len(kernel)
    o, k = [f"o{i}" for i in range(d)], [f"k{i}" for i in range(d)]
    lines = ["    for a in range(x.shape[0]):", "        for b in range(x.shape[1]):"]
    source = ", ".join(f"{_times(o[i], stride[i])} + {_times(k[i], dilation[i])}"
                       for i in range(d))
    loop = [f"for {k[i]} in range({kernel[i]}):" for i in range(d)]
    if kernel_first:
        loop += [f"for {o[i]} in range(sizes[{i}]):" for i in range(d)]
        row, place = "b", o[0]
        for i in range(d):
            row = f"{_grouped(row)} * {kernel[i]} + {k[i]}" if i else f"b * {kernel[0]} + {k[0]}"
            place = f"{_grouped(place)} * sizes[{i}] + {o[i]}" if i else o[0]
        target, arguments = f"a, {row}, {place}", "x, out, sizes"
    else:
        loop = [f"for {o[i]} in range(out.shape[{2 + i}]):" for i in range(d)] + loop
        target, arguments = f"a, b, {', '.join(o + k)}", "x, out"
    lines += [" " * (12 + 4 * depth) + line for depth, line in enumerate(loop)]
    lines.append(" " * (12 + 8 * d) + f"out[{target}] = x[a, b, {source}]")
    where = "as a window matrix" if kernel_first else "as windows_p"
    return (f"# symgrad kernel: windows {kernel}, stride {stride}, dilation {dilation} "
            f"({where})\n"
            "from numba import njit\n\n\n"
            '@njit(cache=True, nogil=True, error_model="numpy", fastmath=False)\n'
            f"def windows({arguments}):\n" + "\n".join(lines) + "\n")


def _times(name: str, factor: int) -> str:
    return name if factor == 1 else f"{name} * {factor}"


def _grouped(term: str) -> str:
    return f"({term})" if "+" in term else term
