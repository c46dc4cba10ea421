"""numpy's shape functions on traced values, composed of the indexing and shape
primitives: ``concatenate``, ``stack``, ``flip``, ``roll``, ``pad``, ``tile``, ...

    >>> import numpy as np, symgrad as sg
    >>> sg.grad(lambda x: np.sum(np.diff(x) ** 2))(np.array([1.0, 2.0, 4.0]))
    array([-2., -2.,  4.])
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..core.errors import ShapeError, UnsupportedFunctionError, user_location
from ..core.tracing import Traced, apply, as_constant_array, shape_of
from ..prims import windows as W
from ..prims.elementwise import as_float
from ..prims.indexing import along, concatenate_p, cumsum_p, gather, normalize, strided, unslice
from .dispatch import float_dtype, implements, in_dtype, normalize_axes, refuse_kwargs
from .functions import broadcast_to, reshape, transpose


def _ndim(x: Any) -> int:
    return len(shape_of(x))


@implements(np.expand_dims)
def expand_dims(a: Any, axis: Any) -> Any:
    shape = shape_of(a)
    axes = normalize_axes(axis, len(shape) + (len(axis) if isinstance(axis, (tuple, list))
                                                else 1))
    rest = iter(shape)
    return reshape(a, tuple(1 if k in axes else next(rest) for k in range(len(shape) + len(axes))))


@implements(np.squeeze)
def squeeze(a: Any, axis: Any = None) -> Any:
    shape = shape_of(a)
    axes = (tuple(k for k, d in enumerate(shape) if d == 1) if axis is None
            else normalize_axes(axis, len(shape)))
    if any(shape[k] != 1 for k in axes):
        raise ShapeError(f"squeeze: axis {axis} of shape {shape} does not have length 1; "
                         "only axes of length 1 can be squeezed")
    return reshape(a, tuple(d for k, d in enumerate(shape) if k not in axes))


@implements(np.concatenate)
def concatenate(arrays: Any, axis: Any = 0, out: Any = None, dtype: Any = None,
                casting: str = "same_kind") -> Any:
    refuse_kwargs("np.concatenate", {"out": out, "dtype": dtype},
                  allowed={"dtype": float_dtype})
    arrays = [in_dtype(dtype, as_float(a)) for a in arrays]
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        arrays, axis = [reshape(a, (-1,)) for a in arrays], 0
    ndim = _ndim(arrays[0])
    if ndim == 0:
        raise ShapeError("concatenate: zero-dimensional arrays cannot be concatenated; "
                         "use np.stack")
    (axis,) = normalize_axes(axis, ndim)
    if len(arrays) == 1:
        return arrays[0]
    return apply(concatenate_p, *arrays, axis=axis)


@implements(np.stack)
def stack(arrays: Any, axis: int = 0, out: Any = None, **kwargs: Any) -> Any:
    refuse_kwargs("np.stack", {"out": out, **kwargs}, allowed={"dtype": float_dtype})
    arrays = [in_dtype(kwargs.get("dtype"), a) for a in arrays]
    if not arrays:
        raise ValueError("need at least one array to stack")
    shapes = {shape_of(a) for a in arrays}
    if len(shapes) != 1:
        raise ShapeError(f"stack: all input arrays must have the same shape, got {shapes}")
    (axis,) = normalize_axes(axis, _ndim(arrays[0]) + 1)
    return concatenate([expand_dims(a, axis) for a in arrays], axis=axis)


@implements(np.flip)
def flip(m: Any, axis: Any = None) -> Any:
    shape = shape_of(m)
    axes = normalize_axes(axis, len(shape))
    index = tuple(normalize(slice(None, None, -1) if k in axes else slice(None), n)
                  for k, n in enumerate(shape))
    return strided(m, index)


@implements(np.cumsum)
def cumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    refuse_kwargs("np.cumsum", {"dtype": dtype, "out": out},
                  allowed={"dtype": float_dtype})
    a = in_dtype(dtype, as_float(a))
    if axis is None or _ndim(a) == 0:
        a, axis = reshape(a, (-1,)), 0
    (axis,) = normalize_axes(axis, _ndim(a))
    return apply(cumsum_p, a, axis=axis)


def _int_sequence(x: Any, what: str) -> np.ndarray:
    if isinstance(x, Traced):
        raise UnsupportedFunctionError(
            f"{what} is a traced value (at {user_location()}); it must be a constant integer "
            "(or sequence of them), known while tracing")
    array = np.asarray(x)
    if array.dtype.kind not in "iu":
        raise TypeError(f"{what} must be integers, got {array.dtype}: {x!r:.40}")
    return array


def _one_axis(a: Any, axis: Any) -> tuple[Any, int, int]:
    """``a`` as float, the axis numpy's ``axis=`` names (``None``: of ``a`` flattened),
    and that axis's length."""
    a = as_float(a)
    if axis is None:
        a, axis = reshape(a, (-1,)), 0
    (axis,) = normalize_axes(axis, _ndim(a))
    return a, axis, shape_of(a)[axis]


@implements(np.repeat)
def repeat(a: Any, repeats: Any, axis: Any = None) -> Any:
    """``np.repeat``: a gather along ``axis`` (each index repeated)."""
    counts = _int_sequence(repeats, "np.repeat's repeats")
    a, axis, n = _one_axis(a, axis)
    try:
        indices = np.repeat(np.arange(n), counts)
    except ValueError as e:
        raise ShapeError(f"repeat: {e} (repeats {counts.tolist()} for an axis of length {n})"
                         ) from None
    if indices.size == n:  # every count is 1
        return a
    return gather(a, indices, axis)


@implements(np.tile)
def tile(A: Any, reps: Any) -> Any:
    """``np.tile``: broadcast a new axis in front of each axis, then merge the pairs."""
    reps_t = tuple(int(r) for r in np.atleast_1d(_int_sequence(reps, "np.tile's reps")))
    A = as_float(A)
    shape = shape_of(A)
    ndim = max(len(shape), len(reps_t))
    shape = (1,) * (ndim - len(shape)) + tuple(shape)
    reps_t = (1,) * (ndim - len(reps_t)) + reps_t
    paired = tuple(d for n in shape for d in (1, n))
    spread = tuple(d for r, n in zip(reps_t, shape) for d in (r, n))
    tiled = broadcast_to(reshape(A, paired), spread)
    return reshape(tiled, tuple(r * n for r, n in zip(reps_t, shape)))


@implements(np.diff)
def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = np._NoValue,
         append: Any = np._NoValue) -> Any:
    """``np.diff``: differences of neighbours along ``axis``, ``n`` times (two slices each);
    of bools (with bool ends), numpy's ``!=`` of neighbours, a bool (it was the float
    difference: -1 where numpy says True)."""
    boolean = all(getattr(v, "dtype", None) == np.bool_ if hasattr(v, "dtype")
                  else np.asarray(v).dtype == np.bool_
                  for v in (a, prepend, append) if v is not np._NoValue)
    a = a if boolean else as_float(a)
    if _ndim(a) == 0:
        raise ShapeError("diff requires input that is at least one dimensional")
    (axis,) = normalize_axes(axis, _ndim(a))
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if n == 0:
        return a  # numpy neither prepends nor appends then
    ends = []
    for value, where in ((prepend, 0), (append, 1)):
        if value is not np._NoValue:
            value = value if boolean else as_float(value)
            if _ndim(value) == 0:
                value = broadcast_to(value, shape_of(a)[:axis] + (1,)
                                         + shape_of(a)[axis + 1:])
            ends.append((where, value))
    if ends:
        parts = [v for w, v in ends if w == 0] + [a] + [v for w, v in ends if w == 1]
        a = concatenate(parts, axis=axis)
    for _ in range(n):
        m = shape_of(a)[axis]
        if m == 0:
            break
        later, earlier = along(a, axis, 1, m), along(a, axis, 0, m - 1)
        a = later != earlier if boolean else later - earlier
    return a


@implements(np.take)
def take(a: Any, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise") -> Any:
    """``np.take`` at constant integer indices (negative ones count from the end)."""
    refuse_kwargs("np.take", {"out": out}, allowed={})
    if mode != "raise":
        raise UnsupportedFunctionError(f"np.take(..., mode={mode!r}): only mode='raise' is "
                                       "supported; clip or wrap the indices with numpy first")
    idx = _int_sequence(indices, "np.take's indices")
    a, axis, n = _one_axis(a, axis)
    if np.any((idx < -n) | (idx >= n)):
        raise IndexError(f"np.take at {user_location()}: indices {idx.tolist()} are out of "
                         f"bounds for an axis of length {n}; use indices in [{-n}, {n})")
    shape = shape_of(a)
    taken = gather(a, idx % n if n else idx, axis)
    return reshape(taken, (*shape[:axis], *idx.shape, *shape[axis + 1:]))


@implements(np.swapaxes)
def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    ndim = _ndim(a)
    (i,), (j,) = normalize_axes(axis1, ndim), normalize_axes(axis2, ndim)
    perm = list(range(ndim))
    perm[i], perm[j] = j, i
    return transpose(a, tuple(perm))


@implements(np.moveaxis)
def moveaxis(a: Any, source: Any, destination: Any) -> Any:
    ndim = _ndim(a)
    src = [normalize_axes(s, ndim)[0] for s in np.atleast_1d(source)]
    dst = [normalize_axes(d, ndim)[0] for d in np.atleast_1d(destination)]
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number "
                         "of elements")
    order = [k for k in range(ndim) if k not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, tuple(order))


@implements(np.pad)
def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Any:
    """``np.pad`` in ``mode="constant"``: ``array`` placed in zeros (``unslice``), plus
    the constant border."""
    if mode != "constant":
        raise UnsupportedFunctionError(
            f"np.pad(..., mode={mode!r}) on a traced value (at {user_location()}): only "
            "mode='constant' is supported; build other borders with np.concatenate and slices")
    values = kwargs.pop("constant_values", 0.0)
    refuse_kwargs("np.pad", kwargs, allowed={})
    array = as_float(array)
    shape = shape_of(array)
    widths = np.broadcast_to(_int_sequence(pad_width, "np.pad's pad_width"), (len(shape), 2))
    if np.any(widths < 0):
        raise ValueError(f"np.pad: pad_width {pad_width!r} has negative widths")
    padded = tuple(int(n + lo + hi) for n, (lo, hi) in zip(shape, widths))
    index = tuple(normalize(slice(int(lo), int(lo) + n), m)
                  for n, (lo, _), m in zip(shape, widths, padded))
    placed = unslice(array, padded, index) if padded != shape else array
    border = np.pad(np.zeros(shape), widths, constant_values=as_constant_array(values))
    return placed + border if np.any(border) else placed


@implements(np.hstack)
def hstack(tup: Any, **kwargs: Any) -> Any:
    arrays = [atleast_1d(a) for a in tup]
    return concatenate(arrays, axis=0 if arrays and _ndim(arrays[0]) == 1 else 1, **kwargs)


@implements(np.vstack)
def vstack(tup: Any, **kwargs: Any) -> Any:
    return concatenate([atleast_2d(a) for a in tup], axis=0, **kwargs)


@implements(np.append)
def append(arr: Any, values: Any, axis: Any = None) -> Any:
    return concatenate([arr, values], axis=axis)


def _atleast(a: Any, ndim: int) -> Any:
    shape = shape_of(a)
    if len(shape) >= ndim:
        return a
    # numpy's rules: a scalar becomes (1, 1), a vector (1, n); 3-d adds a trailing 1
    new = {0: (1,) * ndim, 1: (1, *shape) if ndim == 2 else (1, *shape, 1),
           2: (*shape, 1)}[len(shape)]
    return reshape(as_float(a), new)


@implements(np.column_stack)
def column_stack(tup: Any) -> Any:
    arrays = [a if _ndim(a) >= 2 else reshape(as_float(a), (-1, 1)) for a in tup]
    return concatenate(arrays, axis=1)


@implements(np.array_split)
def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """``np.array_split``: one slice per piece (a list, as numpy returns)."""
    (axis,) = normalize_axes(axis, _ndim(ary))
    n = shape_of(ary)[axis]
    if isinstance(indices_or_sections, Traced):
        raise UnsupportedFunctionError(
            f"split points are a traced value (at {user_location()}); they must be constant")
    if np.ndim(indices_or_sections) == 0:
        sections = operator.index(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        bounds = np.concatenate([[0], np.cumsum(sizes)]).tolist()
    else:
        cuts = [min(max(c + n if c < 0 else c, 0), n)
                for c in map(operator.index, indices_or_sections)]
        bounds = [0, *cuts, n]
    return [along(ary, axis, lo, max(lo, hi)) for lo, hi in zip(bounds, bounds[1:])]


@implements(np.split)
def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    if np.ndim(indices_or_sections) == 0 and not isinstance(indices_or_sections, Traced):
        n = shape_of(ary)[normalize_axes(axis, _ndim(ary))[0]]
        if n % operator.index(indices_or_sections):
            raise ValueError("array split does not result in an equal division")
    return array_split(ary, indices_or_sections, axis)


@implements(np.fliplr)
def fliplr(m: Any) -> Any:
    return flip(m, 1)


@implements(np.flipud)
def flipud(m: Any) -> Any:
    return flip(m, 0)


@implements(np.atleast_1d)
def atleast_1d(*arys: Any) -> Any:
    out = [_atleast(a, 1) for a in arys]
    return out[0] if len(out) == 1 else tuple(out)


@implements(np.atleast_2d)
def atleast_2d(*arys: Any) -> Any:
    out = [_atleast(a, 2) for a in arys]
    return out[0] if len(out) == 1 else tuple(out)


@implements(np.roll)
def roll(a: Any, shift: Any, axis: Any = None) -> Any:
    """``np.roll``: the two parts of each rolled axis, swapped (slices: no size in the kernel)."""
    a = as_float(a)
    if axis is None:
        return reshape(roll(reshape(a, (-1,)), shift, 0), shape_of(a))
    shifts = np.atleast_1d(_int_sequence(shift, "np.roll's shift"))
    axes = np.atleast_1d(axis)
    shifts, axes = np.broadcast_arrays(shifts, axes)
    for s, ax in zip(shifts.tolist(), axes.tolist()):
        (ax,) = normalize_axes(ax, _ndim(a))
        n = shape_of(a)[ax]
        if n and s % n:
            k = n - s % n  # the element that comes first
            a = apply(concatenate_p, along(a, ax, k, n), along(a, ax, 0, k), axis=ax)
    return a


@implements(np.lib.stride_tricks.sliding_window_view)
def sliding_window_view(x: Any, window_shape: Any, axis: Any = None, *, subok: bool = False,
                        writeable: bool = False) -> Any:
    """numpy's windows of ``window_shape`` over ``axis`` (every axis when None), their
    sizes appended in ``axis``'s order: a copy (numpy's is a read-only view; a traced
    value is never written), whose gradient adds the overlapping windows back."""
    if writeable:
        raise ValueError("np.lib.stride_tricks.sliding_window_view(..., writeable=True): a "
                         "traced value cannot be written; use the windows as they are")
    ndim, shape = _ndim(x), tuple(np.atleast_1d(window_shape).tolist())
    if axis is None:
        if len(shape) != ndim:
            raise ValueError(f"Since axis is `None`, must provide window_shape for all "
                             f"dimensions of `x`; got {len(shape)} window_shape elements "
                             f"and `x.ndim` is {ndim}.")
        axis = tuple(range(ndim))
    axes = [normalize_axes(a, ndim)[0] for a in np.atleast_1d(axis).tolist()]
    if len(axes) != len(shape):
        raise ValueError(f"Must provide matching length window_shape and axis; got "
                         f"{len(shape)} window_shape elements and {len(axes)} axes elements.")
    if len(set(axes)) != len(axes):
        raise ValueError(f"np.lib.stride_tricks.sliding_window_view: axis {axis!r} repeats "
                         "an axis, which symgrad does not support; take the windows of one "
                         "axis at a time")
    for a, w in zip(axes, shape):
        if not 0 < w <= shape_of(x)[a]:
            raise ValueError("window shape cannot be larger than input array shape"
                             if w > 0 else f"window_shape {window_shape!r}: symgrad needs "
                             "windows of at least one element")
    d = len(axes)
    last = list(range(ndim - d, ndim))
    windows = W.windows(moveaxis(x, axes, last), shape, (1,) * d, (1,) * d)
    return moveaxis(windows, last, axes)


def sliding_windows(x: Any, kernel: tuple[int, ...], stride: tuple[int, ...],
                    dilation: tuple[int, ...]) -> Any:
    """The windows of ``kernel`` elements (spaced by ``dilation``, starting every
    ``stride``) over the last ``len(kernel)`` axes: shape ``(*lead, *out, *kernel)``
    (im2col; :mod:`symgrad.prims.windows`)."""
    return W.windows(as_float(x), kernel, stride, dilation)


def add_windows(g: Any, kernel: tuple[int, ...], stride: tuple[int, ...],
                dilation: tuple[int, ...], size: tuple[int, ...]) -> Any:
    """Windows added back into an array whose last sizes are ``size`` (col2im): the
    transpose of :func:`sliding_windows`."""
    return W.unwindows(as_float(g), kernel, stride, dilation, size)
