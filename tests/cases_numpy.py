"""Test-table cases of numpy's functions added for issue 18 (see cases.py).

Compositions of primitives: checked against SymPy like the primitives
themselves, except sorts and singular values, which have no SymPy form
(``oracle="fd"``: central differences). Each function has a case on both
backends; variants of argument forms run on the numpy interpreter (the kernel
text depends only on the graph, which the two-backend case already compiles).
"""

from __future__ import annotations

import numpy as np

import symgrad as sg

from cases import Case

D = (-2.0, 2.0)
U = (-1.0, 1.0)
POS = (0.5, 2.0)
NUMPY_ONLY = ("numpy",)

CASES: list[Case] = [
    # floor division and remainder (also as operators and np.divmod)
    Case("floor_divide-2x3_3", ("floor_divide", "mul"), lambda x, y: np.floor_divide(x, y) * x,
         ((2, 3), (3,)), ((-3, 3), POS)),
    Case("floor_divide-operators", ("floor_divide", "remainder"),
         lambda x, y: (x // y) * y + x % y, ((2, 3), ()), ((-3, 3), POS)),
    Case("remainder-mod-rmod", ("remainder",), lambda x: np.mod(x, 1.5) + 2.0 % x,
         ((3,),), (POS,), backends=NUMPY_ONLY),
    Case("divmod", ("floor_divide", "remainder"),
         lambda x, y: np.divmod(x, y)[1] * np.divmod(x, y)[0] + divmod(x, y)[1],
         ((3,), (3,)), ((-3, 3), POS), backends=NUMPY_ONLY),
    # ufuncs composed of primitives
    Case("fabs-deg2rad-rad2deg", ("abs", "mul"),
         lambda x: np.fabs(x) + np.deg2rad(x) * np.rad2deg(x) + np.radians(x) - np.degrees(x),
         ((2, 3),), (D,)),
    Case("fmax-fmin", ("maximum", "minimum", "where"),
         lambda x, y: np.fmax(x, y) * np.fmin(x, y), ((2, 3), (3,)), (D, D)),
    Case("fmax-fmin-nan", ("maximum", "where"),
         lambda x, y: np.fmax(x, y) + 2.0 * np.fmin(y, x), ((3,), (3,)), (),
         fixed=([np.nan, 1.0, 2.0], [0.5, np.nan, -1.0]), oracle="fd", backends=NUMPY_ONLY),
    Case("logaddexp2", ("logaddexp",), np.logaddexp2, ((2, 3), (3,)), ((-3, 3), (-3, 3))),
    Case("nan_to_num", ("where",), lambda x: np.nan_to_num(x * 2.0, posinf=5.0), ((2, 3),), (D,)),
    Case("real-imag-conj-angle", ("where",),
         lambda x: np.real(x) * np.conj(x) + np.imag(x) + np.angle(x) + np.real_if_close(x),
         ((2, 3),), (D,), backends=NUMPY_ONLY),
    Case("sinc-at-zero", ("sinc",), np.sinc, ((4,),), (), fixed=([0.0, 1e-9, -0.1, 0.16],)),
    # making arrays
    Case("zeros_like-ones_like-full_like", ("mul",),
         lambda x: np.zeros_like(x) + np.ones_like(x) * x + np.full_like(x, 2.0) * x
         + np.empty_like(x) * 0.0, ((2, 3),), (D,)),
    Case("full_like-traced-fill", ("broadcast_to",), lambda x, v: np.full_like(x, v) * x,
         ((2, 3), ()), (D, D)),
    Case("linspace", ("concatenate",), lambda a, b: np.linspace(a, b, 5) ** 2,
         ((), ()), (D, D)),
    Case("linspace-arrays-axis", ("concatenate",),
         lambda a, b: np.linspace(a, b, 4, axis=1) * np.linspace(b, a, 3, endpoint=False,
                                                                 retstep=True)[1][:, None],
         ((2,), (2,)), (D, D), backends=NUMPY_ONLY),
    Case("ndim-shape-size", ("mul",),
         lambda x: x * np.ndim(x) + np.size(x) * x + np.shape(x)[0] + np.size(x, 1),
         ((2, 3),), (D,), backends=NUMPY_ONLY),
    Case("select", ("where",),
         lambda x, y: np.select([x > 0, y > 0], [x * y, x - y], default=1.0),
         ((2, 3), (3,)), (D, D)),
    Case("rollaxis-atleast_3d", ("transpose", "reshape"),
         lambda x: np.rollaxis(x, 2) * 2.0 + np.atleast_3d(x[0, :2, 0]), ((2, 3, 4),), (D,)),
    Case("hsplit-vsplit-dsplit", ("slice",),
         lambda x: np.hsplit(x, 2)[1] * np.vsplit(x, [1])[1] + np.dsplit(x, 2)[0],
         ((2, 2, 2),), (D,), backends=NUMPY_ONLY),
    Case("hsplit-1d", ("slice",), lambda x: np.hsplit(x, [1])[1] ** 2, ((3,),), (D,),
         backends=NUMPY_ONLY),
    Case("gradient-1d", ("slice", "concatenate"), lambda f: np.gradient(f) ** 2,
         ((5,),), (D,)),
    Case("gradient-2d-spacing-edge2", ("slice", "concatenate"),
         lambda f: np.gradient(f, 0.5, np.array([0.0, 1.0, 3.0, 3.5]), edge_order=2)[1]
         * np.gradient(f, axis=0, edge_order=2), ((3, 4),), (D,), backends=NUMPY_ONLY),
    Case("gradient-traced-spacing", ("slice", "concatenate", "div"),
         lambda f, dx: np.gradient(f, dx), ((4,), ()), (D, POS), backends=NUMPY_ONLY),
    Case("gradient-traced-coordinates", ("slice", "concatenate", "div"),
         lambda f, x: np.gradient(f, np.cumsum(x)), ((4,), (4,)), (D, POS),
         backends=NUMPY_ONLY),
    # arrays of traced values: np.array (numpy's object array, assembled), sg.array, r_, c_
    Case("array-of-scalars", ("concatenate",),
         lambda x: np.array([x, x * 1.0, x + 2.5]) ** 2, ((),), (D,)),
    Case("array-nested-fanout", ("concatenate",),
         lambda x: (lambda a: a + a)(np.array([[x[0], x[1]], [x[1] ** 2, 1.0]])),
         ((2,),), (D,), backends=NUMPY_ONLY),
    Case("array-of-arrays-sum-dot", ("concatenate", "matmul"),
         lambda x: np.sum(np.array([x, x])) + np.dot(np.array(x), x), ((3,),), (D,),
         backends=NUMPY_ONLY),
    Case("sg-array", ("concatenate",),
         lambda x, y: sg.array([[x, 2.0 * y], (1.0, x * y)]) * sg.array([x, y]), ((), ()),
         (D, D)),
    Case("sg-array-of-arrays", ("concatenate",), lambda x: sg.array([x, x ** 2, [1.0, 2.0]]),
         ((2,),), (D,), backends=NUMPY_ONLY),
    Case("r_-c_", ("concatenate",),
         lambda x: np.r_[x, 2.0 * x, 3.0] ** 2 + np.sum(np.c_[x, x ** 2]), ((2,),), (D,),
         backends=NUMPY_ONLY),
    # matrices
    Case("diag-vector", ("unslice", "reshape"), lambda v: np.diag(v) + np.diag(v[:2], 1)[:3, :3]
         + np.diag(v[:2], -1)[:3, :3], ((3,),), (D,)),
    Case("diag-matrix-diagflat", ("slice",),
         lambda a: np.diag(a) * np.diag(a, 1).sum() + np.diag(a, -2) + np.diagflat(a[0, :3])[0],
         ((3, 3),), (D,), backends=NUMPY_ONLY),
    Case("diagonal-axes-offset", ("slice", "transpose"),
         lambda a: np.diagonal(a, 1, 2, 0) ** 2, ((3, 2, 4),), (D,)),
    Case("diagonal-method-free", ("slice",), lambda a: np.diagonal(a, -1), ((3, 4),), (D,),
         backends=NUMPY_ONLY),
    Case("triu-tril", ("where",), lambda a: np.triu(a) * 2.0 + np.tril(a, -1) ** 2,
         ((3, 4),), (D,)),
    Case("triu-tril-stack-k", ("where",), lambda a: np.triu(a, 1) + np.tril(a, 1) * a,
         ((2, 3, 3),), (D,), backends=NUMPY_ONLY),
    Case("triu-1d", ("where",), lambda v: np.triu(v), ((3,),), (D,), backends=NUMPY_ONLY),
    Case("kron", ("mul", "reshape"), lambda a, b: np.kron(a, b), ((2, 3), (2, 2)), (D, D)),
    Case("kron-ranks", ("mul", "reshape"), lambda a, b: np.kron(a, b) + np.kron(b[0], 2.0).sum(),
         ((3,), (2, 2)), (D, D), backends=NUMPY_ONLY),
    Case("tensordot", ("matmul",), lambda a, b: np.tensordot(a, b), ((2, 3, 4), (3, 4, 2)),
         (D, D)),
    Case("tensordot-axes", ("matmul",),
         lambda a, b: np.tensordot(a, b, axes=([0, 2], [2, 1])) + np.tensordot(a, b, 0).sum(),
         ((2, 3, 4), (3, 4, 2)), (D, D), backends=NUMPY_ONLY),
    Case("cross-3", ("mul", "sub", "concatenate"), lambda a, b: np.cross(a, b),
         ((2, 3), (3,)), (D, D)),
    Case("cross-axes", ("mul", "sub"),
         lambda a, b: np.cross(a, b, axisc=0).T + np.cross(a.T, b, axisa=0)
         + np.cross(a[:, None, :], a[None], axis=-1).sum(axis=0), ((2, 3), (3,)), (D, D),
         backends=NUMPY_ONLY),
    Case("rot90", ("slice", "transpose"),
         lambda m: np.rot90(m) * 1.0 + np.rot90(m, 2).T + np.rot90(m, 3, axes=(1, 0)),
         ((3, 3),), (D,)),
    # order statistics and running products
    Case("sort", ("argsort", "take_along", "scatter_along"), lambda x: np.sort(x) ** 2,
         ((5,),), (D,), oracle="fd"),
    Case("sort-axis0-stack", ("argsort", "take_along", "scatter_along"),
         lambda x: np.sort(x, axis=0) * np.arange(1.0, 4.0), ((2, 2, 3),), (D,), oracle="fd"),
    Case("sort-flat-method-free", ("argsort", "take_along"),
         lambda x: np.sort(x, axis=None) * np.arange(6.0), ((2, 3),), (D,), oracle="fd",
         backends=NUMPY_ONLY),
    Case("partition", ("argsort", "take_along"),
         lambda x: np.partition(x, 2)[2] + np.partition(x, (0, 4), axis=-1)[0] ** 2,
         ((5,),), (D,), oracle="fd", backends=NUMPY_ONLY),
    Case("argsort-argmax-gather", ("to_int", "argsort", "take_along", "scatter_along"),
         lambda x: np.take_along_axis(x, np.argsort(x), -1) ** 2
         * x[np.argmax(np.sum(x, axis=1))] + x.T[np.argmin(x, axis=1)].sum(),
         ((2, 3),), (D,), oracle="fd"),
    Case("cumprod", ("cumprod", "cumsum"), lambda x: np.cumprod(x), ((4,),), (D,)),
    Case("cumprod-axis-zeros", ("cumprod",), lambda x: np.cumprod(x, axis=1), ((2, 5),), (),
         fixed=([[2.0, 0.0, 3.0, 0.0, 5.0], [0.5, -1.5, 0.0, 2.0, -3.0]],)),
    Case("cumprod-flat-scalar", ("cumprod",), lambda x: np.cumprod(x) * np.cumprod(x[0, 0]),
         ((2, 2),), (D,), backends=NUMPY_ONLY),
    Case("average", ("mean", "sum", "div"),
         lambda x, w: np.average(x) + np.average(x, axis=1, weights=w)[0]
         + np.average(x, axis=0, weights=np.ones(2) + w[:2], returned=True)[1].sum(),
         ((2, 3), (3,)), (D, POS)),
    Case("average-keepdims", ("sum", "div"),
         lambda x: np.average(x, axis=(0, 1), weights=np.arange(1.0, 7.0).reshape(2, 3),
                              keepdims=True), ((2, 3),), (D,), backends=NUMPY_ONLY),
    Case("ptp", ("max", "min", "sub"), lambda x: np.ptp(x, axis=0) + np.ptp(x),
         ((3, 2),), (D,)),
    # einsum: ellipsis, sublists, three operands
    Case("einsum-ellipsis-matmul", ("matmul",), lambda a, b: np.einsum("...ij,...jk->...ik", a, b),
         ((2, 3, 4), (4, 2)), (U, U)),
    Case("einsum-ellipsis-broadcast", ("matmul",),
         lambda a, b: np.einsum("...ij,...jk", a, b), ((2, 1, 3, 4), (3, 4, 2)), (U, U),
         backends=NUMPY_ONLY),
    Case("einsum-ellipsis-tail-center", ("matmul",),
         lambda a, b: np.einsum("jk...,lj...->lk...", a, b)
         + np.einsum("j...k,lj...->lk...", a.transpose(0, 2, 1), b).sum(),
         ((3, 4, 2), (2, 3, 2)), (U, U), backends=NUMPY_ONLY),
    Case("einsum-naked-sum-ellipsis", ("sum",), lambda a, b: np.einsum("...k,...nk->...", a, b),
         ((3, 4), (3, 2, 4)), (U, U), backends=NUMPY_ONLY),
    Case("einsum-sublists", ("matmul",),
         lambda a, b: np.einsum(a, [0, 1], b, [1, 2]) + np.einsum(a, [0, 1], b, [1, 2], [2, 0]).T,
         ((3, 4), (4, 3)), (U, U)),
    Case("einsum-sublist-ellipsis", ("matmul",),
         lambda a, b: np.einsum(a, [Ellipsis, 0, 1], b, [1, 2], [Ellipsis, 2, 0]),
         ((2, 3, 4), (4, 2)), (U, U), backends=NUMPY_ONLY),
    Case("einsum-three-operands", ("matmul",),
         lambda a, b, c: np.einsum("ijk,lji,lli->lki", a, b, c),
         ((2, 3, 4), (5, 3, 2), (5, 5, 2)), (U, U, U)),
    Case("einsum-three-implicit", ("matmul",), lambda a, b, c: np.einsum("ij,jk,kl", a, b, c),
         ((2, 3), (3, 4), (4, 2)), (U, U, U), backends=NUMPY_ONLY),
    # norms of other orders
    Case("norm-vector-ord3", ("pow", "sum"), lambda x: np.linalg.norm(x, 3, axis=1),
         ((2, 3),), (D,)),
    Case("norm-vector-orders", ("pow", "sum"),
         lambda x: np.linalg.norm(x, 4) + np.linalg.norm(x, -1) + np.linalg.norm(x, 0.5)
         + np.linalg.norm(x, 0) * x[0], ((4,),), (D,), backends=NUMPY_ONLY),
    Case("norm-vector-ord3-at-zero", ("pow", "where"), lambda x: np.linalg.norm(x, 3, axis=1),
         ((2, 3),), (), fixed=([[0.0, 0.0, 0.0], [1.0, -2.0, 0.5]],), backends=NUMPY_ONLY),
    Case("norm-matrix-1-inf", ("abs", "sum", "max", "min"),
         lambda x: np.linalg.norm(x, 1) + np.linalg.norm(x, -np.inf)
         + np.linalg.norm(x, np.inf, axis=(1, 0), keepdims=True), ((3, 4),), (D,)),
    Case("norm-matrix-axes-stack", ("abs", "sum", "min"),
         lambda x: np.linalg.norm(x, -1, axis=(2, 0)), ((3, 2, 4),), (D,), backends=NUMPY_ONLY),
    Case("norm-nuclear", ("svd", "sum"), lambda x: np.linalg.norm(x, "nuc"), ((3, 4),), (D,),
         oracle="fd"),
    Case("norm-2-and-nuclear-axes", ("svd", "max", "min"),
         lambda x: np.linalg.norm(x, 2, axis=(0, 2)).sum() + np.linalg.norm(x, -2, axis=(2, 1))
         + np.linalg.norm(x, "nuc", axis=(1, 2), keepdims=True)[:, 0, 0],
         ((2, 3, 4),), (D,), oracle="fd", backends=NUMPY_ONLY),
]
