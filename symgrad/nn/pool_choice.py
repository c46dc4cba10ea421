"""Which element of each pooling window is its maximum, as PyTorch's max-pooling kernels
pick it (the first maximum, the last NaN, never the padding), as masks or positions
over the windows' last axis (:func:`symgrad.nn.pooling.max_pool2d` and the
adaptive pools)."""

from __future__ import annotations

import math
import sys

import numpy as np

from ..eager.fastpath import window_first_max as _compiled_first_max


def _first_max_mask_of_four(values: np.ndarray) -> np.ndarray | None:
    """For windows of four floats without NaN (None if one has a NaN), a mask of each
    window's first maximum: each window's four ``== max`` bytes read as one
    little-endian uint32, whose lowest set bit (``b & -b``) is the first maximum's byte
    (numpy's argmax loops over each window of four; an index from these bytes, then
    compared with the positions, took 3-4x as long for LeNet's first pooling)."""
    v = np.ascontiguousarray(values)
    top = np.maximum(np.maximum(v[..., 0], v[..., 1]), np.maximum(v[..., 2], v[..., 3]))
    if np.isnan(top).any():
        return None
    same = (v == top[..., None]).view(np.uint32)
    return (same & (~same + np.uint32(1))).view(np.bool_)


def window_first_max(values: np.ndarray) -> np.ndarray:
    """A mask of each window's maximum (last axis) as :func:`window_argmax` picks it (by
    one compiled loop where it applies, :mod:`symgrad.backend.numba.eager_loops`)."""
    found = _compiled_first_max(values)
    if found is not None:
        return found
    if values.shape[-1] == 4 and values.dtype.kind == "f" and sys.byteorder == "little":
        found = _first_max_mask_of_four(values)
        if found is not None:
            return found
    return window_argmax(values) == np.arange(values.shape[-1])


def negative_zeros(values: np.ndarray) -> np.ndarray | None:
    """A mask of the -0.0 elements of ``values``, None where there is none (one pass over
    the bits for float16, float32 and float64: a test on the values and their sign bits
    took 0.9 ms for LeNet's first pooling, whose windows are mostly 0 after a ReLU)."""
    size = values.dtype.itemsize
    if values.dtype.kind == "f" and size in (2, 4, 8) and values.dtype.isnative and \
            values.flags.c_contiguous:
        found = values.view(f"u{size}") == np.array(1 << (8 * size - 1), f"u{size}")
    else:
        found = (values == 0) & np.signbit(values)
    return found if found.any() else None


def window_argmax(values: np.ndarray) -> np.ndarray:
    """The position of each window's maximum (last axis), kept as a trailing axis: the
    first maximum, or the last NaN where there is one (PyTorch's kernels replace the
    running maximum on ``val > max or isnan(val)``)."""
    choice = np.argmax(values, axis=-1)
    nan = np.isnan(values)
    if nan.any():
        last = values.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1)
        choice = np.where(nan.any(axis=-1), last, choice)
    return choice[..., None]


def first_inside_where_padding_picked(picked: np.ndarray, spatial: tuple, out: list,
                                      kernel: tuple, stride: tuple, padding: tuple,
                                      dilation: tuple) -> np.ndarray:
    """``picked`` with each window that picked a -inf of the padding (its inputs all -inf)
    picking its first position inside the input instead, as PyTorch's kernels start
    from that position and replace it only by a greater value or a NaN."""
    d = len(out)
    inside = np.ones((1,) * 2 * d, dtype=bool)  # (out_0, ..., out_d-1, kernel_0, ...)
    for i in range(d):
        coord = (np.arange(out[i])[:, None] * stride[i] + np.arange(kernel[i]) * dilation[i]
                 - padding[i])
        shape = [1] * 2 * d
        shape[i], shape[d + i] = out[i], kernel[i]
        inside = inside & ((coord >= 0) & (coord < spatial[i])).reshape(shape)
    inside = inside.reshape(*out, math.prod(kernel))
    wrong = (picked & ~inside).any(-1, keepdims=True)
    if not wrong.any():
        return picked
    first_inside = inside & (np.cumsum(inside, axis=-1) == 1)
    return np.where(wrong, first_inside, picked)
