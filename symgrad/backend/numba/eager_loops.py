"""Compiled loops for eager operations whose numpy form takes several passes: ``relu``
(:mod:`symgrad.prims.elementwise`), a max pool's choice of each window's maximum
(:mod:`symgrad.nn.pool_choice`) and ``layer_norm`` over one axis
(:mod:`symgrad.prims.layer_norm`: numpy's two row sums, each a pairwise sum, and five
passes over the array, 0.2-0.35 ms for a transformer's (64, 16, 64) float32; the loop
adds each row in numpy's pairwise order, so its bits are numpy's).

Numpy computes a ReLU bit for bit as a mask of the signs and three bitwise passes
(``select``: ``np.where`` mispredicts a branch per element), 0.14 ms for LeNet's first
ReLU (64x6x28x28 float32); one compiled loop takes 0.03. A max pool's mask of the
first maximum of each window (the last NaN where there is one, as PyTorch's kernels
pick) is one loop too, where numpy takes the windows' maximum, a NaN test, a
comparison and bit tricks (0.3 ms for LeNet's first pooling).

Each result is numpy's, bit for bit (-0.0, NaN payloads and all: elements are copied,
never converted), with numpy's memory layout. The loops' source sits in symgrad's
kernel cache (:mod:`.compile`), one compile per dtype and layout, so a new process
loads their machine code from disk. The first call in a process, and every call on
other dtypes than float32 and float64, on fewer than :data:`MIN_SIZE` elements, on an
array whose elements are not one dense block, or with ``SYMGRAD_EAGER_COMPILE=0``,
returns None: the caller's numpy form, the same bits.
"""

from __future__ import annotations

import hashlib
import math
import threading
import warnings
from typing import Any

import numpy as np

from ...core.config import config
from .codegen import KernelSource
from .compile import load

#: arrays of fewer elements are left to numpy (no compile for small arrays)
MIN_SIZE = 4096

_TEXT = """\
# symgrad kernels: eager loops
# relu(x) = 0 where x < 0, else x (elements copied: -0.0 and NaN payloads kept)
# first_max(w) = a mask of each row's first maximum, or its last NaN
# select(c, x, y) = x where c, else y (y a number); row_sum(w) = each row's sum, in order
# layer_norm(x) = each row's (x - mean) / sqrt(var + eps) * w + b, in numpy's steps
# normalize(e) = each row divided by its sum (numpy's pairwise sum), in place
# shift(x) = each row less its maximum (NaN where the row has one)
# middle_sum(x) = the sum over one axis that is not the last, from 0, in order
import numpy as np
from numba import njit


@njit(cache=True, nogil=True, error_model="numpy", fastmath=False)
def relu(x, out):
    for i in range(x.size):
        v = x[i]
        if v < 0:
            out[i] = 0
        else:
            out[i] = v


@njit(cache=True, nogil=True, error_model="numpy", fastmath=False)
def first_max(w, k, out):
    # (flat indices: a row's elements at constant distances, so that LLVM vectorizes
    # the rows; a 2-d index's runtime row stride kept it a scalar loop, 10x slower)
    if k == 4:
        for r in range(w.size // 4):
            top = w[4 * r]
            best = 0
            v = w[4 * r + 1]
            b = (v > top) | (v != v)
            top = v if b else top
            best = 1 if b else best
            v = w[4 * r + 2]
            b = (v > top) | (v != v)
            top = v if b else top
            best = 2 if b else best
            v = w[4 * r + 3]
            b = (v > top) | (v != v)
            best = 3 if b else best
            out[4 * r] = best == 0
            out[4 * r + 1] = best == 1
            out[4 * r + 2] = best == 2
            out[4 * r + 3] = best == 3
        return
    for r in range(w.size // k):
        best = 0
        top = w[k * r]
        for j in range(1, k):
            v = w[k * r + j]
            b = (v > top) | (v != v)
            top = v if b else top
            best = j if b else best
        for j in range(k):
            out[k * r + j] = j == best


@njit(cache=True, nogil=True, error_model="numpy", fastmath=False)
def select(c, x, y, out):
    v = y[0]  # (read once: a read in the loop, which out might alias, is not vectorized)
    for i in range(x.size):
        out[i] = x[i] if c[i] else v


@njit(cache=True, nogil=True, error_model="numpy", fastmath=False)
def row_sum(w, k, out):
    if k == 4:
        for r in range(out.size):
            out[r] = ((w[4 * r] + w[4 * r + 1]) + w[4 * r + 2]) + w[4 * r + 3]
        return
    for r in range(out.size):
        total = w[k * r] + w[k * r + 1]
        for j in range(2, k):
            total += w[k * r + j]
        out[r] = total


@njit(cache=True, nogil=True, error_model="numpy", fastmath=False)
def middle_sum(x, k, inner, out):
    # out (zeros) of (outer, inner) += each (outer, j, inner) slice, j in order: numpy's
    # reduction over a middle axis adds its rows elementwise so (inner >= 2)
    for o in range(out.size // inner):
        for j in range(k):
            at = (o * k + j) * inner
            for i in range(inner):
                out[o * inner + i] += x[at + i]


@njit(cache=True, nogil=True, error_model="numpy", fastmath=False, inline="always")
def pairwise(v, b, n, zero):
    # numpy's pairwise sum of v[b:b + n], at most 128 elements (PW_BLOCKSIZE): in order
    # below 8, else eight running sums, added as a tree, then the rest in order; from 0
    # (its reduction's identity). Flat indices, inlined: a row's slice and a call per row
    # kept the caller's loops scalar (softmax's division, 0.06 -> 0.02 ms for (64, 4, 16, 16))
    if n < 8:
        total = zero
        for i in range(n):
            total += v[b + i]
        return zero + total
    r0, r1, r2, r3 = v[b], v[b + 1], v[b + 2], v[b + 3]
    r4, r5, r6, r7 = v[b + 4], v[b + 5], v[b + 6], v[b + 7]
    i = 8
    while i < n - n % 8:
        r0 += v[b + i]
        r1 += v[b + i + 1]
        r2 += v[b + i + 2]
        r3 += v[b + i + 3]
        r4 += v[b + i + 4]
        r5 += v[b + i + 5]
        r6 += v[b + i + 6]
        r7 += v[b + i + 7]
        i += 8
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        total += v[b + i]
        i += 1
    return zero + total


@njit(cache=True, nogil=True, error_model="numpy", fastmath=False)
def layer_norm(x, k, numbers, w, b, out):
    # rows of k elements; numbers = (k, eps, 1, 0) in x's dtype; w, b: k elements or
    # none. numpy's steps: mean = sum / k, d = x - mean, var = sum(d * d) / k + eps,
    # d * (1 / sqrt(var)), then * w, + b
    count, eps, one, zero = numbers[0], numbers[1], numbers[2], numbers[3]
    squares = np.empty(k, x.dtype)
    for r in range(x.size // k):
        at = k * r
        mean = pairwise(x, at, k, zero) / count
        for j in range(k):
            d = x[at + j] - mean
            out[at + j] = d
            squares[j] = d * d
        scale = one / np.sqrt(pairwise(squares, 0, k, zero) / count + eps)
        # (one pass, each step rounded in turn: numpy's three)
        if w.size and b.size:
            for j in range(k):
                out[at + j] = out[at + j] * scale * w[j] + b[j]
        elif w.size:
            for j in range(k):
                out[at + j] = out[at + j] * scale * w[j]
        elif b.size:
            for j in range(k):
                out[at + j] = out[at + j] * scale + b[j]
        else:
            for j in range(k):
                out[at + j] *= scale


@njit(cache=True, nogil=True, error_model="numpy", fastmath=False, inline="always")
def pick(a, b):
    # the larger of a and b, or b if it is NaN, else a (a NaN a stays)
    return b if (b > a) | (b != b) else a


@njit(cache=True, nogil=True, error_model="numpy", fastmath=False)
def shift(x, k, out):
    # a row's maximum in order below 16 elements; else eight running maxima (independent:
    # the loop does not wait on each comparison, 45 -> 33 us for (64, 4, 16, 16) float32),
    # taken as a tree, then the rest in order. A row with NaNs gets one of them
    for r in range(x.size // k):
        at = k * r
        if k < 16:
            top = x[at]
            for j in range(1, k):
                top = pick(top, x[at + j])
        else:
            a0, a1, a2, a3 = x[at], x[at + 1], x[at + 2], x[at + 3]
            a4, a5, a6, a7 = x[at + 4], x[at + 5], x[at + 6], x[at + 7]
            i = 8
            while i + 8 <= k:
                a0, a1 = pick(a0, x[at + i]), pick(a1, x[at + i + 1])
                a2, a3 = pick(a2, x[at + i + 2]), pick(a3, x[at + i + 3])
                a4, a5 = pick(a4, x[at + i + 4]), pick(a5, x[at + i + 5])
                a6, a7 = pick(a6, x[at + i + 6]), pick(a7, x[at + i + 7])
                i += 8
            top = pick(pick(pick(a0, a4), pick(a2, a6)), pick(pick(a1, a5), pick(a3, a7)))
            while i < k:
                top = pick(top, x[at + i])
                i += 1
        for j in range(k):
            out[at + j] = x[at + j] - top


@njit(cache=True, nogil=True, error_model="numpy", fastmath=False)
def normalize(e, k, zero):
    for r in range(e.size // k):
        total = pairwise(e, k * r, k, zero[0])
        for j in range(k):
            e[k * r + j] = e[k * r + j] / total
"""

_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
#: name -> the compiled loop (None: not loaded yet, False: failed), and calls seen
_KERNELS: dict[str, Any] = {}
_CALLS: dict[str, int] = {}
_LOCK = threading.Lock()


class EagerLoopFallbackWarning(RuntimeWarning):
    """A compiled eager loop failed; numpy computes that operation from then on."""


def relu(x: Any) -> np.ndarray | None:
    """``relu``'s value (``select(x < 0, 0.0, x)``, bit for bit, in ``x``'s memory
    layout), or None where numpy computes it."""
    if type(x) is not np.ndarray or x.dtype not in _DTYPES or x.size < MIN_SIZE:
        return None
    flat = _dense(x)
    if flat is None:
        return None
    kernel = _kernel("relu")
    if kernel is None:
        return None
    out = np.empty_like(x)  # (numpy's where gives x's layout: empty_like keeps it)
    target = _dense(out)
    if target is None or target.strides != flat.strides or out.strides != x.strides:
        return None
    return out if _run("relu", kernel, flat, target) else None


def first_max(values: np.ndarray) -> np.ndarray | None:
    """A mask of each window's (last axis) first maximum, or its last NaN, as
    :func:`symgrad.nn.pool_choice.window_argmax` picks it; None where numpy does."""
    if type(values) is not np.ndarray or values.dtype not in _DTYPES or \
            values.size < MIN_SIZE or not values.ndim or not values.shape[-1]:
        return None
    kernel = _kernel("first_max")
    if kernel is None:
        return None
    flat = np.ascontiguousarray(values).reshape(-1)
    out = np.empty(flat.shape, dtype=np.bool_)
    return out.reshape(values.shape) if _run("first_max", kernel, flat, values.shape[-1],
                                              out) else None


def select(c: Any, x: Any, y: Any) -> np.ndarray | None:
    """``np.where(c, x, y)`` for a bool array ``c``, a float array ``x`` and a Python
    float ``y`` of one shape and layout (a max pool's ``where(picked, windows, 0.0)``),
    bit for bit in ``x``'s layout; None where numpy computes it."""
    if type(c) is not np.ndarray or c.dtype != np.bool_ or type(x) is not np.ndarray or \
            x.dtype not in _DTYPES or type(y) is not float or c.shape != x.shape or \
            x.size < MIN_SIZE:
        return None
    flat, cond = _dense(x), _dense(c)
    if flat is None or cond is None or c.strides != tuple(s // x.itemsize for s in x.strides):
        return None
    kernel = _kernel("select")
    if kernel is None:
        return None
    out = np.empty_like(x)
    target = _dense(out)
    if target is None or out.strides != x.strides:
        return None
    number = np.array([y], dtype=x.dtype)  # (y rounded to x's dtype, as numpy's where)
    return out if _run("select", kernel, cond, flat, number, target) else None


def row_sum(x: Any, axes: tuple[int, ...]) -> np.ndarray | None:
    """``sum(x, axes)`` over trailing axes of 2 to 7 elements in all of a C-ordered float
    array, added in order (:func:`symgrad.prims.reductions._sum`'s slices, bit for bit);
    None where numpy computes it."""
    if type(x) is not np.ndarray or x.dtype not in _DTYPES or not x.flags.c_contiguous or \
            x.size < MIN_SIZE or not axes or x.ndim <= len(axes) or \
            tuple(axes) != tuple(range(x.ndim - len(axes), x.ndim)):
        return None
    lead = x.shape[:x.ndim - len(axes)]
    k = math.prod(x.shape[x.ndim - len(axes):])
    if not 2 <= k <= 7:
        return None
    kernel = _kernel("row_sum")
    if kernel is None:
        return None
    out = np.empty(math.prod(lead), dtype=x.dtype)
    return out.reshape(lead) if _run("row_sum", kernel, x.reshape(-1), k, out) else None


def layer_norm(x: Any, affine: tuple, eps: float, weight: bool, bias: bool) -> Any:
    """``layer_norm`` over ``x``'s last axis (of at most 128 elements) as
    :func:`symgrad.prims.layer_norm._layer_norm` computes it, bit for bit (but for which
    payload a NaN result carries, where a row has NaNs of two), for C-ordered float arrays
    of one dtype; None where numpy computes it."""
    if type(x) is not np.ndarray or x.dtype not in _DTYPES or not x.flags.c_contiguous or \
            x.size < MIN_SIZE or not 1 <= x.shape[-1] <= 128:
        return None
    k = x.shape[-1]
    if any(type(a) is not np.ndarray or a.dtype != x.dtype or a.shape != (k,)
           or not a.flags.c_contiguous for a in affine):
        return None
    kernel = _kernel("layer_norm")
    if kernel is None:
        return None
    none = np.empty(0, x.dtype)
    w = affine[0] if weight else none
    b = affine[-1] if bias else none
    numbers = np.array([k, eps, 1, 0], dtype=x.dtype)  # (eps rounded as numpy's x.dtype.type)
    out = np.empty_like(x)
    return out if _run("layer_norm", kernel, x.reshape(-1), k, numbers, w, b,
                       out.reshape(-1)) else None


def shift(x: Any) -> np.ndarray | None:
    """``x - max(x, -1)`` of a C-ordered float array whose rows have at most 128 elements
    (softmax's first step), a fresh array; None where numpy computes it. The maxima are
    numpy's, but of a row whose largest elements are 0.0 and -0.0 either may be taken, so
    a -0.0 element less it may give either zero (whose ``exp`` is 1 either way)."""
    if type(x) is not np.ndarray or x.dtype not in _DTYPES or not x.flags.c_contiguous or \
            x.size < MIN_SIZE or not x.ndim or not 1 <= x.shape[-1] <= 128:
        return None
    kernel = _kernel("shift")
    if kernel is None:
        return None
    out = np.empty_like(x)
    return out if _run("shift", kernel, x.reshape(-1), x.shape[-1], out.reshape(-1)) else None


def middle_sum(x: Any, axes: tuple[int, ...]) -> np.ndarray | None:
    """``np.sum(x, axis)`` over one axis but the last of a C-ordered float array whose
    later axes hold 2 or more elements (``x.mean(1)`` of a transformer's (64, 16, 64)
    float32: numpy's reduction 24 us), bit for bit: numpy adds such an axis's slices
    elementwise, in order, from 0; None where numpy computes it."""
    if type(x) is not np.ndarray or x.dtype not in _DTYPES or not x.flags.c_contiguous or \
            x.size < MIN_SIZE or len(axes) != 1 or not 0 <= axes[0] < x.ndim - 1:
        return None
    a = axes[0]
    inner = math.prod(x.shape[a + 1:])
    if inner < 2:
        return None
    kernel = _kernel("middle_sum")
    if kernel is None:
        return None
    out = np.zeros(x.shape[:a] + x.shape[a + 1:], x.dtype)
    return out if _run("middle_sum", kernel, x.reshape(-1), x.shape[a], inner,
                       out.reshape(-1)) else None


def normalize(e: Any) -> bool:
    """Divide each row (last axis, at most 128 elements) of the C-ordered float array
    ``e`` by its sum, in place, as ``np.divide(e, e.sum(-1, keepdims=True), out=e)`` does
    (softmax's last step), bit for bit; False (``e`` untouched) where numpy must."""
    if type(e) is not np.ndarray or e.dtype not in _DTYPES or not e.flags.c_contiguous or \
            not e.flags.writeable or e.size < MIN_SIZE or not e.ndim or \
            not 1 <= e.shape[-1] <= 128:
        return False
    kernel = _kernel("normalize")
    return kernel is not None and _run("normalize", kernel, e.reshape(-1), e.shape[-1],
                                       np.zeros(1, e.dtype))


def _dense(x: np.ndarray) -> np.ndarray | None:
    """``x``'s elements as a 1-d view in memory order, None unless they are one dense
    block (a C-ordered array, or its transpose as a matrix product leaves it)."""
    order = sorted(range(x.ndim), key=lambda a: -x.strides[a])
    t = x.transpose(order)
    if not t.flags.c_contiguous:
        return None
    return t.reshape(-1)


def _kernel(name: str) -> Any:
    """The compiled loop ``name`` (loaded from the kernel cache, or compiled) from its
    second call in the process on; None before, when off, or after a failure."""
    if not config.eager_compile:
        return None
    kernel = _KERNELS.get(name)
    if kernel is False:
        return None
    if kernel is None:
        with _LOCK:
            _CALLS[name] = calls = _CALLS.get(name, 0) + 1
            if calls < 2:  # (a one-off call never waits for Numba)
                return None
            key = hashlib.sha256(f"{name}\n{_TEXT}".encode()).hexdigest()[:32]
            kernel = _KERNELS[name] = load(KernelSource(key, name, _TEXT))
    return kernel


def _run(name: str, kernel: Any, *args: np.ndarray) -> bool:
    try:
        kernel(*args)
    except Exception as e:  # noqa: BLE001 -- numpy's form gives the same values
        _KERNELS[name] = False
        warnings.warn(f"symgrad could not compile its eager loop {name} ({type(e).__name__}: "
                      f"{e}); numpy computes it from now on", EagerLoopFallbackWarning,
                      stacklevel=3)
        return False
    return True
