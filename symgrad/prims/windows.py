"""Sliding windows over the last axes (im2col) and their adjoint (col2im).

``windows(x, kernel, stride, dilation)`` takes, over the last ``d = len(kernel)``
axes of ``x`` (sizes ``L``), every window of ``kernel`` elements spaced by
``dilation``, at starts spaced by ``stride``: a result of shape
``(*lead, *out, *kernel)`` with ``out = (L - dilation·(kernel - 1) - 1) // stride + 1``.
A convolution is these windows contracted with its weight, pooling a reduction
over their last axes. ``unwindows(g, ..., size=L)`` adds each window back where
it came from: the transpose, so each is the other's VJP. Both move elements only
and are linear; their parameters are a few small tuples, whatever the sizes (an
index set per element would make the graph as large as the data).

    >>> import numpy as np
    >>> windows(np.arange(5.0), (2,), (2,), (1,)).tolist()
    [[0.0, 1.0], [2.0, 3.0]]
    >>> unwindows(np.ones((2, 2)), (2,), (2,), (1,), (5,)).tolist()
    [1.0, 1.0, 1.0, 1.0, 0.0]
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from ..core.errors import ShapeError
from ..core.ir import Aval
from ..core.tracing import apply
from .registry import register


def _out(size: tuple[int, ...], kernel: tuple[int, ...], stride: tuple[int, ...],
         dilation: tuple[int, ...]) -> tuple[int, ...]:
    return tuple((n - dil * (k - 1) - 1) // s + 1
                 for n, k, s, dil in zip(size, kernel, stride, dilation))


def _check(name: str, ndim: int, kernel: tuple, stride: tuple, dilation: tuple) -> int:
    d = len(kernel)
    if not (len(stride) == len(dilation) == d and 0 < d <= ndim) or \
            min(*kernel, *stride, *dilation) < 1:
        raise ShapeError(f"{name}: kernel {kernel}, stride {stride} and dilation {dilation} "
                         f"must be positive tuples of one length, at most the rank {ndim}")
    return d


def _windows_rule(x: Aval, *, kernel: tuple, stride: tuple, dilation: tuple) -> Aval:
    d = _check("windows", x.ndim, kernel, stride, dilation)
    out = _out(x.shape[x.ndim - d:], kernel, stride, dilation)
    if min(out) < 1:
        raise ShapeError(f"windows: a window of {kernel} (dilation {dilation}) does not fit "
                         f"in {x}")
    return Aval((*x.shape[:x.ndim - d], *out, *kernel), x.dtype)


#: windows of at most this many elements are copied one kernel offset at a time
SMALL_KERNEL = 9


def _windows_impl(x: Any, kernel: tuple, stride: tuple, dilation: tuple) -> np.ndarray:
    x = np.asarray(x)
    d = len(kernel)
    size = x.shape[x.ndim - d:]
    out = _out(size, kernel, stride, dilation)
    if math.prod(kernel) <= SMALL_KERNEL:
        # one copy per kernel offset: numpy copies a strided view with the kernel's few
        # elements innermost one short row at a time (5x slower for a 2x2 pool's
        # windows, 2.7x for a 3x3 kernel's)
        result = np.empty((*x.shape[:x.ndim - d], *out, *kernel), dtype=x.dtype)
        for offset in itertools.product(*(range(k) for k in kernel)):
            source = tuple(slice(o * dil, o * dil + (n - 1) * s + 1, s)
                           for o, dil, n, s in zip(offset, dilation, out, stride))
            result[(..., *(slice(None),) * d, *offset)] = x[(..., *source)]
        return result
    span = tuple(dil * (k - 1) + 1 for k, dil in zip(kernel, dilation))
    view = np.lib.stride_tricks.sliding_window_view(x, span, axis=tuple(range(x.ndim - d,
                                                                               x.ndim)))
    picked = view[(..., *(slice(0, (o - 1) * s + 1, s) for o, s in zip(out, stride)),
                   *(slice(None, None, dil) for dil in dilation))]
    # a C-ordered copy: values are never views of one another, and numpy's default
    # order ('K', the view's strides) would leave the windows scattered, so that the
    # reshape of a convolution's matrix product copies them a second time
    return np.array(picked, order="C")


def _unwindows_rule(g: Aval, *, kernel: tuple, stride: tuple, dilation: tuple,
                    size: tuple) -> Aval:
    d = _check("unwindows", g.ndim // 2 if g.ndim >= 2 * len(kernel) else 0, kernel, stride,
               dilation)
    lead = g.ndim - 2 * d
    if tuple(g.shape[g.ndim - d:]) != tuple(kernel) or len(size) != d or \
            tuple(g.shape[lead:lead + d]) != _out(size, kernel, stride, dilation):
        raise ShapeError(f"unwindows: {g} is not the windows {kernel} (stride {stride}, "
                         f"dilation {dilation}) of size {size}")
    return Aval((*g.shape[:lead], *size), g.dtype)


def _unwindows_impl(g: Any, kernel: tuple, stride: tuple, dilation: tuple,
                    size: tuple) -> np.ndarray:
    g = np.asarray(g)
    d = len(kernel)
    lead = g.shape[:g.ndim - 2 * d]
    out_shape = g.shape[len(lead):len(lead) + d]
    # the sums in the memory order of g's leading and window axes (a convolution's
    # gradient comes transposed from its matrix product), so that the reads of each
    # offset run along g's memory: 2.7x faster for LeNet's second convolution; the
    # result is C-ordered at the end
    order = sorted(range(g.ndim - d), key=lambda a: -abs(g.strides[a]))
    full = (*lead, *size)
    result = np.zeros([full[a] for a in order], dtype=g.dtype).transpose(np.argsort(order))
    # kernel offsets in order, as the kernel's loops add them: the same bits
    for offset in itertools.product(*(range(k) for k in kernel)):
        target = tuple(slice(o * dil, o * dil + (n - 1) * s + 1, s)
                       for o, dil, n, s in zip(offset, dilation, out_shape, stride))
        result[(..., *target)] += g[(..., *(slice(None),) * d, *offset)]
    return np.ascontiguousarray(result)


windows_p = register(
    name="windows", complex=True, kind="structural", shape_rule=_windows_rule, impl=_windows_impl,
    vjp=lambda g, ans, x, kernel, stride, dilation: (
        apply(unwindows_p, g, kernel=kernel, stride=stride, dilation=dilation,
              size=tuple(x.shape[x.ndim - len(kernel):])),),
    sympy=lambda sp, x, kernel, stride, dilation: _windows_impl(x, kernel, stride, dilation),
    linear=True,
    # a leading batch axis is one more leading axis: the windows are over the last ones
    batch=lambda b, args, flags, **params: (b.bind(windows_p, args, **params), True))

# overlapping windows add up, so an array primitive (not structural), though linear
unwindows_p = register(
    name="unwindows", complex=True, kind="array", shape_rule=_unwindows_rule, impl=_unwindows_impl,
    vjp=lambda g, ans, x, kernel, stride, dilation, size: (
        apply(windows_p, g, kernel=kernel, stride=stride, dilation=dilation),),
    sympy=lambda sp, g, kernel, stride, dilation, size: _unwindows_impl(g, kernel, stride,
                                                                        dilation, size),
    linear=True,
    batch=lambda b, args, flags, **params: (b.bind(unwindows_p, args, **params), True))


def windows(x: Any, kernel: tuple, stride: tuple, dilation: tuple) -> Any:
    """The sliding windows of ``x``'s last ``len(kernel)`` axes: ``(*lead, *out, *kernel)``."""
    params = dict(kernel=tuple(map(int, kernel)), stride=tuple(map(int, stride)),
                  dilation=tuple(map(int, dilation)))
    return apply(windows_p, x, **params)


def unwindows(g: Any, kernel: tuple, stride: tuple, dilation: tuple, size: tuple) -> Any:
    """The windows ``g`` added back into an array of the last sizes ``size``."""
    return apply(unwindows_p, g, kernel=tuple(map(int, kernel)), stride=tuple(map(int, stride)),
                 dilation=tuple(map(int, dilation)), size=tuple(map(int, size)))


__all__ = ["windows", "unwindows", "windows_p", "unwindows_p"]
