"""Test-table cases of linear algebra (see cases.py).

Matrices that are inverted, solved or differentiated through a determinant
are kept well conditioned by adding a multiple of the identity (a constant,
so SymPy sees it exactly).
"""

from __future__ import annotations

import numpy as np

from symgrad.prims.linalg import linear as _linear

from cases import Case

CASES: list[Case] = []

U = (-1.0, 1.0)

# -- matmul: 1-D and 2-D operands, stacks, broadcast batch axes ----------------
MATMUL = [
    ("2d-2d", (3, 4), (4, 2)), ("1d-2d", (4,), (4, 2)), ("2d-1d", (3, 4), (4,)),
    ("1d-1d", (4,), (4,)), ("1x1", (1, 1), (1, 3)),
    ("batched", (2, 3, 4), (2, 4, 2)),
    ("stack-matrix", (2, 3, 4), (4, 2)),          # (..., m, k) @ (k, n): rows at once
    ("stack-vector", (2, 3, 4), (4,)),
    ("vector-stack", (4,), (2, 4, 3)),
    ("matrix-stack", (3, 4), (2, 4, 2)),
    ("broadcast-batch", (2, 1, 3, 4), (3, 4, 2)),  # batch axes (2, 1) and (3,) -> (2, 3)
]
for name, sx, sy in MATMUL:
    CASES.append(Case(f"matmul-{name}", ("matmul",), lambda x, y: np.matmul(x, y),
                      (sx, sy), (U, U)))

# -- linear (F.linear's product, x @ w.T over x's last axis): rows in 3 axes, 2, 1 ------
CASES += [
    Case("linear-prim-rows-3d", ("linear",), _linear, ((2, 3, 4), (5, 4)), (U, U)),
    Case("linear-prim-2d-F", ("linear",), lambda x, w: _linear(x, w) * 2.0, ((3, 4), (2, 4)),
         (U, U), layout="F"),
    Case("linear-prim-vector", ("linear",), lambda x, w: _linear(x, w) * _linear(x, w),
         ((4,), (3, 4)), (U, U)),
    Case("linear-prim-bias", ("linear",), lambda x, w, b: _linear(x, w, b) ** 2,
         ((2, 3, 4), (5, 4), (5,)), (U, U, U)),
]

CASES += [
    Case("matmul-operator", ("matmul",), lambda x, y: x @ y, ((3, 4), (4, 2)), (U, U)),
    Case("matmul-rmatmul-constant", ("matmul",),
         lambda x: np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]]) @ x, ((3, 2),), (U,)),
    Case("matmul-transposed-operands", ("matmul", "transpose"),
         lambda x, y: x.T @ y.T, ((4, 3), (2, 4)), (U, U)),
    Case("matmul-chain", ("matmul",), lambda a, x: x @ a @ x, ((3, 3), (3,)), (U, U)),
    # np.dot: scalars, 1-D/2-D, and an N-D operand
    Case("dot-2d", ("matmul",), lambda x, y: np.dot(x, y), ((3, 4), (4, 2)), (U, U)),
    Case("dot-vectors", ("matmul",), lambda x, y: np.dot(x, y), ((4,), (4,)), (U, U)),
    Case("dot-scalar", ("mul",), lambda x, y: np.dot(x, y), ((), (2, 3)), (U, U)),
    Case("dot-nd", ("matmul",), lambda x, y: np.dot(x, y), ((2, 3, 4), (2, 4, 3)), (U, U)),
    Case("dot-method", ("matmul",), lambda x, y: x.dot(y), ((3, 4), (4,)), (U, U)),
    Case("inner-vectors", ("matmul",), lambda x, y: np.inner(x, y), ((4,), (4,)), (U, U)),
    Case("inner-nd", ("matmul",), lambda x, y: np.inner(x, y), ((2, 4), (3, 4)), (U, U)),
    Case("outer", ("mul",), lambda x, y: np.outer(x, y), ((3,), (2, 2)), (U, U)),
    Case("trace", ("where", "sum"), lambda x: np.trace(x), ((3, 3),), (U,)),
    Case("trace-offset-axes", ("where", "sum"),
         lambda x: np.trace(x, offset=1, axis1=2, axis2=0), ((3, 2, 4),), (U,)),
]

# -- einsum: the common one- and two-operand contractions ----------------------
EINSUM = [
    ("ij,jk->ik", (3, 4), (4, 2)), ("ij,ij->", (2, 3), (2, 3)), ("i,i->", (4,), (4,)),
    ("ij,j->i", (3, 4), (4,)), ("bij,bjk->bik", (2, 3, 4), (2, 4, 2)),
    ("i,j->ij", (3,), (2,)), ("ij,ij->ij", (2, 3), (2, 3)), ("ij,jk", (3, 4), (4, 2)),
    ("ijk,ikl->jl", (2, 3, 4), (2, 4, 2)), ("ij,kj->ki", (3, 4), (2, 4)),
    ("ij,k->", (2, 3), (2,)), ("ii,ij->j", (3, 3), (3, 2)),
]
# what each contraction becomes: a matrix product, or products and sums when no
# index is shared (an outer product, a sum of each operand)
ELEMENTWISE_EINSUM = {"i,j->ij": ("mul",), "ij,ij->ij": ("mul",), "ij,k->": ("mul", "sum")}
for spec, sx, sy in EINSUM:
    CASES.append(Case(f"einsum-{spec}", ELEMENTWISE_EINSUM.get(spec, ("matmul",)),
                      lambda x, y, s=spec: np.einsum(s, x, y), (sx, sy), (U, U)))
# "ij" alone is the identity: no primitive at all
for spec, shape, prims in [("ii->", (3, 3), ("sum",)), ("ij->ji", (2, 3), ("transpose",)),
                           ("ii->i", (3, 3), ("sum",)), ("ijk->k", (2, 3, 2), ("sum",)),
                           ("ij", (2, 3), ()), ("ji", (2, 3), ("transpose",))]:
    CASES.append(Case(f"einsum-{spec}", prims, lambda x, s=spec: np.einsum(s, x), (shape,),
                      (U,)))

# -- norms: the scaled norm2 primitive (its VJP takes the max of |x| and norm2 again) --
N2 = ("norm2", "max", "abs")
CASES += [
    Case("norm-vector", N2, lambda x: np.linalg.norm(x), ((4,),), (U,)),
    Case("norm-axis", N2, lambda x: np.linalg.norm(x, axis=1), ((2, 3),), (U,)),
    Case("norm-axis-keepdims", N2, lambda x: np.linalg.norm(x, axis=0, keepdims=True),
         ((2, 3),), (U,)),
    Case("norm-frobenius", N2, lambda x: np.linalg.norm(x), ((2, 3),), (U,)),
    Case("norm-fro-axes", N2, lambda x: np.linalg.norm(x, "fro", axis=(0, 2)),
         ((2, 3, 2),), (U,)),
    Case("norm-axis0-3d", N2, lambda x: np.linalg.norm(x, axis=0), ((3, 2, 2),), (U,)),
    Case("norm-size1", N2, lambda x: np.linalg.norm(x, axis=1), ((2, 1),), (U,)),
    Case("norm-empty-axis", ("norm2",), lambda x: np.linalg.norm(x, axis=0), ((0, 3),), (U,)),
    Case("norm-empty-kept", N2, lambda x: np.linalg.norm(x, axis=1), ((0, 3),), (U,),
         backends=("numpy",)),
    Case("norm-F", N2, lambda x: np.linalg.norm(x, axis=1), ((2, 3),), (U,), layout="F"),
    Case("norm-ord1", ("abs", "sum"), lambda x: np.linalg.norm(x, 1), ((4,),), (U,)),
    Case("norm-ord-inf", ("abs", "max"), lambda x: np.linalg.norm(x, np.inf, axis=1),
         ((2, 3),), (U,)),
    # pytorch issue #2421: the gradient of the 2-norm at 0 is 0, not NaN
    Case("norm-at-zero", N2, lambda x: np.linalg.norm(x, axis=1), ((2, 3),), (),
         fixed=([[0.0, 0.0, 0.0], [3.0, 0.0, -4.0]],)),
    # (tiny and huge values, where numpy's norm underflows or overflows: test_tails.py)
]

# -- inv, det, slogdet, solve ----------------------------------------------------
EYE2, EYE3 = 3.0 * np.eye(2), 3.0 * np.eye(3)
CASES += [
    Case("inv-2x2", ("inv",), lambda a: np.linalg.inv(a + EYE2), ((2, 2),), (U,)),
    Case("inv-3x3", ("inv",), lambda a: np.linalg.inv(a + EYE3), ((3, 3),), (U,)),
    Case("inv-1x1", ("inv",), lambda a: np.linalg.inv(a), ((1, 1),), ((0.5, 2.0),)),
    Case("inv-times-matrix", ("inv", "matmul"), lambda a, b: np.linalg.inv(a + EYE2) @ b,
         ((2, 2), (2, 3)), (U, U)),
    Case("det-2x2", ("det",), lambda a: np.linalg.det(a), ((2, 2),), (U,)),
    Case("det-3x3", ("det",), lambda a: np.linalg.det(a + EYE3), ((3, 3),), (U,)),
    Case("det-negative", ("det",), lambda a: np.linalg.det(a), ((3, 3),), (),
         fixed=([[0.0, 2.0, 1.0], [1.0, 0.5, 0.0], [0.5, 1.0, 3.0]],)),
    Case("slogdet-logabsdet", ("slogdet",), lambda a: np.linalg.slogdet(a + EYE3)[1],
         ((3, 3),), (U,)),
    # sign * log|det| with a negative determinant: the sign carries no gradient
    Case("slogdet-sign", ("slogdet",),
         lambda a: np.linalg.slogdet(a)[0] * np.linalg.slogdet(a)[1], ((3, 3),), (),
         fixed=([[0.0, 2.0, 1.0], [1.0, 0.5, 0.0], [0.5, 1.0, 3.0]],)),
    Case("solve-vector", ("solve",), lambda a, b: np.linalg.solve(a + EYE2, b),
         ((2, 2), (2,)), (U, U)),
    Case("solve-matrix", ("solve",), lambda a, b: np.linalg.solve(a + EYE2, b),
         ((2, 2), (2, 3)), (U, U)),
    Case("solve-constant-matrix", ("solve",),
         lambda b: np.linalg.solve(np.array([[2.0, 1.0], [0.5, 3.0]]), b), ((2,),), (U,)),
]

# -- stacks of matrices: a loop over the batch axes in the kernel -------------------
EYE_STACK = 3.0 * np.eye(2)  # broadcasts over the batch axes
CASES += [
    Case("inv-stack", ("inv",), lambda a: np.linalg.inv(a + EYE_STACK), ((3, 2, 2),), (U,)),
    Case("det-stack", ("det",), lambda a: np.linalg.det(a), ((2, 2, 2),), (U,)),
    Case("slogdet-stack", ("slogdet",), lambda a: np.linalg.slogdet(a + EYE_STACK)[1],
         ((2, 1, 2, 2),), (U,)),
    Case("solve-stack", ("solve",), lambda a, b: np.linalg.solve(a + EYE_STACK, b),
         ((2, 2, 2), (2, 2, 3)), (U, U)),
    # numpy 2: a 1-D b is one vector for every matrix; (n, k) broadcasts as a stack
    Case("solve-stack-vector", ("solve",), lambda a, b: np.linalg.solve(a + EYE_STACK, b),
         ((3, 2, 2), (2,)), (U, U)),
    Case("solve-stack-broadcast", ("solve",), lambda a, b: np.linalg.solve(a + EYE_STACK, b),
         ((2, 2, 2), (2, 1)), (U, U)),
]
