"""Test-table cases of indexing, functional updates and shape ops (see cases.py)."""

from __future__ import annotations

import numpy as np

import symgrad as sg
from symgrad.prims.windows import unwindows as _unwindows
from symgrad.prims.windows import windows as _windows

from cases import Case

D = (-2.0, 2.0)
MASK = np.array([[True, False, True], [False, False, True]])

CASES: list[Case] = [
    # basic indexing: slice (+ reshape), adjoint unslice
    Case("index-int", ("slice",), lambda x: x[1], ((2, 3),), (D,)),
    Case("index-negative-int", ("slice",), lambda x: x[-1, -2], ((2, 3),), (D,)),
    Case("index-slice", ("slice",), lambda x: x[1:3], ((5,),), (D,)),
    Case("index-negative-step", ("slice",), lambda x: x[::-2, 3:0:-1], ((3, 4),), (D,)),
    Case("index-negative-bounds", ("slice",), lambda x: x[-3:-1, :-1], ((4, 3),), (D,)),
    Case("index-ellipsis-newaxis", ("slice",), lambda x: x[..., None, 1:], ((2, 2, 3),), (D,)),
    Case("index-newaxis", ("slice",), lambda x: x[np.newaxis, :, 0] * x[None, 1], ((2, 2),),
         (D,)),
    Case("index-empty", ("slice",), lambda x: np.sum(x[2:1]) + x[0], ((3,),), (D,)),
    Case("index-batched-broadcast", ("slice",), lambda x, y: x[:, 1:] * y[::-1], ((2, 3), (2,)),
         (D, D)),
    # integer-array and boolean-mask indexing: gather, adjoint scatter_add
    Case("index-fancy-repeated", ("gather",), lambda x: x[[0, 2, 2, -1]] ** 2, ((4,),), (D,)),
    Case("index-fancy-2d", ("gather",), lambda x: x[[1, 0, 1]], ((2, 3),), (D,)),
    Case("index-fancy-pairs", ("gather",), lambda x: x[[0, 1, 1], [2, 0, 2]], ((2, 3),), (D,)),
    Case("index-fancy-mixed", ("gather",), lambda x: x[:, [2, 0, 0]] * x[1, [1, 1, 2]],
         ((2, 3),), (D,)),
    Case("index-fancy-array-shape", ("gather",), lambda x: x[np.array([[0, 3], [3, 3]])],
         ((4,),), (D,)),
    Case("index-mask", ("gather",), lambda x: np.sin(x[MASK]), ((2, 3),), (D,)),
    Case("index-mask-rows", ("gather",), lambda x: x[np.array([True, False, True])] * 2.0,
         ((3, 2),), (D,)),
    # functional updates
    Case("at-set-slice", ("gather", "scatter_add", "where"),
         lambda x, v: sg.at(x)[1:, ::-1].set(v * v), ((3, 2), (2,)), (D, D)),
    Case("at-set-repeated", ("scatter_add", "where"),
         lambda x, v: sg.at(x)[[0, 2, 0]].set(v), ((4,), (3,)), (D, D)),
    Case("at-set-self", ("slice", "scatter_add", "where"),
         lambda x: sg.at(x)[1].set(x[0] ** 2), ((2,),), (D,)),
    Case("at-add-repeated", ("scatter_add",),
         lambda x, v: sg.at(x)[[1, 1, 0], 2].add(np.exp(v)), ((2, 3), (3,)), (D, D)),
    Case("at-add-mask", ("scatter_add",),
         lambda x, v: sg.at(x)[MASK].add(v), ((2, 3), ()), (D, D)),
    # shape ops
    Case("concatenate-axis0", ("concatenate",),
         lambda x, y: np.concatenate([x, y, x * y]), ((2, 3), (2, 3)), (D, D)),
    Case("concatenate-axis1-const", ("concatenate",),
         lambda x, y: np.concatenate((x, np.ones((2, 1)), y), axis=-1), ((2, 3), (2, 2)),
         (D, D)),
    Case("concatenate-axis-none", ("concatenate",),
         lambda x, y: np.concatenate([x, y], axis=None), ((2, 2), (3,)), (D, D)),
    Case("stack", ("concatenate",), lambda x, y: np.stack([x, y, x], axis=1),
         ((2, 3), (2, 3)), (D, D)),
    Case("stack-last", ("concatenate",), lambda x, y: np.stack((x, y), axis=-1), ((3,), (3,)),
         (D, D)),
    Case("cumsum-flat", ("cumsum", "slice"), lambda x: np.cumsum(x), ((2, 3),), (D,)),
    Case("cumsum-axis0", ("cumsum", "slice"), lambda x: np.cumsum(x, axis=0), ((3, 2),), (D,)),
    Case("cumsum-axis1-method", ("cumsum", "slice"), lambda x: x.cumsum(axis=1) ** 2,
         ((2, 3, 2),), (D,)),
    Case("cumsum-scalar", ("cumsum",), lambda x: np.cumsum(x), ((),), (D,)),
    Case("flip", ("slice",), lambda x: np.flip(x), ((2, 3),), (D,)),
    Case("flip-axis", ("slice",), lambda x: np.flip(x, axis=1) * x, ((2, 3),), (D,)),
    Case("diff", ("slice", "sub"), lambda x: np.diff(x), ((4,),), (D,)),
    Case("diff-n2-axis0", ("slice", "sub"), lambda x: np.diff(x, n=2, axis=0), ((4, 2),), (D,)),
    Case("diff-prepend-append", ("slice", "concatenate"),
         lambda x: np.diff(x, prepend=0.0, append=x[:, :1]), ((2, 3),), (D,)),
    Case("repeat", ("gather",), lambda x: np.repeat(x, 2), ((2, 2),), (D,)),
    Case("repeat-axis-counts", ("gather",), lambda x: x.repeat([1, 0, 3], axis=1),
         ((2, 3),), (D,)),
    Case("tile", ("broadcast_to", "reshape"), lambda x: np.tile(x, (2, 3)), ((2, 2),), (D,)),
    Case("tile-more-reps", ("broadcast_to", "reshape"), lambda x: np.tile(x, (2, 1, 2)),
         ((3,),), (D,)),
    Case("take", ("gather",), lambda x: np.take(x, [[0, -1], [1, 1]], axis=1), ((2, 3),), (D,)),
    Case("expand_dims-squeeze", ("reshape",),
         lambda x: np.squeeze(np.expand_dims(x, (0, 2)), axis=0) * x.squeeze()[:, None],
         ((3, 1),), (D,)),
    Case("swapaxes-moveaxis", ("transpose",),
         lambda x: np.swapaxes(x, 1, 2) + np.moveaxis(x, 1, -1), ((2, 3, 2),), (D,)),
    Case("reshape-infer-ravel", ("reshape",),
         lambda x: x.reshape(3, -1) * np.ravel(x)[:2] + x.flatten()[::2, None], ((2, 3),), (D,)),
    Case("iterate-rows", ("slice",), lambda x: sum(r * r for r in x), ((3, 2),), (D,)),
]

CASES += [
    # np.pad is unslice in the forward pass (its adjoint is slice)
    Case("pad", ("unslice",), lambda x: np.pad(x, 1) ** 2, ((2, 3),), (D,)),
    Case("pad-widths-values", ("unslice",),
         lambda x: np.pad(x, ((0, 2), (1, 0)), constant_values=1.5) * x[0, 0], ((2, 1),), (D,)),
]

CASES += [
    Case("hstack-vstack", ("concatenate",),
         lambda x, y: np.vstack([np.hstack([x, y]), np.hstack((y, x))]) ** 2, ((2,), (3,)),
         (D, D)),
    Case("append-atleast", ("concatenate", "reshape"),
         lambda x, y: np.append(x, y) * np.append(np.atleast_2d(x), np.atleast_2d(x), axis=0)
         [:, :1].sum(), ((2,), ()), (D, D)),
    Case("roll", ("slice", "concatenate"),
         lambda x: np.roll(x, 1) + np.roll(x, (-1, 2), axis=(0, 1)),
         ((2, 3),), (D,)),
]

CASES += [
    Case("split", ("slice",),
         lambda x: np.split(x, 2, axis=1)[1] * np.array_split(x, [1, -1], axis=1)[2],
         ((1, 4),), (D,)),
    Case("column_stack-flipud", ("concatenate", "slice"),
         lambda x, y: np.flipud(np.column_stack([x, np.fliplr(y)])), ((3,), (3, 2)), (D, D)),
]

# im2col and col2im (convolutions, pooling; symgrad.prims.windows): overlapping, strided
# and dilated windows over the last axes, a size-1 window, and windows of a vector
CASES += [
    Case("windows-2d", ("windows",),
         lambda x: _windows(x, (2, 2), (2, 1), (1, 2)) ** 2, ((2, 5, 5),), ((-2, 2),)),
    Case("windows-1d", ("windows",), lambda x: _windows(x, (3,), (1,), (1,)) ** 2, ((6,),),
         ((-2, 2),)),
    Case("windows-size-1", ("windows",), lambda x: _windows(x, (1, 2), (1, 1), (1, 1)) ** 2,
         ((1, 3),), ((-2, 2),)),
    Case("unwindows-1d", ("unwindows",),
         lambda g: _unwindows(g, (3,), (1,), (1,), (6,)) ** 2, ((2, 4, 3),), ((-2, 2),)),
    Case("unwindows-2d", ("unwindows",),
         lambda g: _unwindows(g, (2, 2), (2, 1), (1, 2), (5, 5)) ** 2, ((2, 2, 3, 2, 2),),
         ((-2, 2),)),
]
