"""Test-table cases of the matrix decompositions (see cases.py).

``cholesky``, ``pinv`` and ``lstsq`` have SymPy forms (of matrices of full rank);
``eigh``, ``eig``, ``qr`` and ``svd`` are checked against central differences,
with functions of the eigen- and singular vectors that are smooth where the
values are distinct (LAPACK's signs are locally constant). Matrices are kept
well conditioned by adding a multiple of the identity (a constant). A Numba
kernel calling LAPACK takes seconds to compile: one or two cases per primitive
run on both backends, the other forms on the numpy interpreter.
``tests/test_decompositions.py`` adds PyTorch's formulas and the degenerate points.
"""

from __future__ import annotations

import numpy as np

from cases import Case

U = (-1.0, 1.0)
NUMPY_ONLY = ("numpy",)
EYE2, EYE3 = 3.0 * np.eye(2), 3.0 * np.eye(3)
W3 = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [-2.0, 1.0, 0.75]])
# a matrix with real, distinct eigenvalues (2, 4, 7 on the diagonal dominate)
NONSYMMETRIC = [[2.0, 0.5, -0.3], [0.2, 4.0, 0.6], [-0.4, 0.1, 7.0]]


def _psd(a):
    return a @ np.swapaxes(a, -1, -2) + EYE3


CASES: list[Case] = [
    Case("cholesky", ("cholesky",), lambda a: np.linalg.cholesky(_psd(a)), ((3, 3),), (U,)),
    # only the lower triangle is read: the gradient lives there
    Case("cholesky-lower-triangle", ("cholesky",), lambda a: np.linalg.cholesky(a + EYE2),
         ((2, 2),), (U,), backends=NUMPY_ONLY),
    Case("cholesky-upper-stack", ("cholesky",),
         lambda a: np.linalg.cholesky(_psd(a), upper=True), ((2, 3, 3),), (U,),
         backends=NUMPY_ONLY),
    Case("eigh", ("eigh",),
         lambda a: np.linalg.eigh(a)[0] * np.linalg.eigh(a)[1] + np.linalg.eigvalsh(a) ** 2,
         ((3, 3),), (U,), oracle="fd"),
    # (UPLO="U": eigenvectors of signs that may differ from numpy's own: squared here)
    Case("eigh-upper-stack", ("eigh",),
         lambda a: np.linalg.eigh(a, "U").eigenvectors ** 2 * np.linalg.eigh(a, "U")[0][..., None],
         ((2, 3, 3),), (U,), oracle="fd"),
    Case("eig", ("eig",),
         lambda a: np.linalg.eig(a)[1] * W3 + np.linalg.eigvals(a) ** 2, ((3, 3),), (),
         fixed=(NONSYMMETRIC,), oracle="fd"),
    Case("qr-tall", ("qr",), lambda a: np.linalg.qr(a)[0] ** 3 + np.linalg.qr(a).R.sum(),
         ((4, 3),), (U,), oracle="fd"),
    Case("qr-wide-stack", ("qr",), lambda a: np.linalg.qr(a)[0].sum() + np.linalg.qr(a)[1] ** 2,
         ((2, 2, 3),), (U,), oracle="fd"),
    Case("qr-square-r", ("qr",), lambda a: np.linalg.qr(a, mode="r") * W3, ((3, 3),), (U,),
         oracle="fd", backends=NUMPY_ONLY),
    Case("svd-tall", ("svd",),
         lambda a: np.linalg.svd(a, full_matrices=False)[0] ** 3
         + np.linalg.svd(a, full_matrices=False).S.sum(), ((4, 3),), (U,), oracle="fd"),
    Case("svd-wide-stack", ("svd",),
         lambda a: np.linalg.svd(a, full_matrices=False)[2] * np.linalg.svd(a, False)[1][..., None],
         ((2, 2, 3),), (U,), oracle="fd"),
    Case("svd-square-values", ("svd",),
         lambda a: np.linalg.svd(a)[0] @ np.linalg.svd(a)[2] ** 2
         + np.linalg.svd(a, compute_uv=False)[0] + np.linalg.svdvals(a)[2], ((3, 3),), (U,),
         oracle="fd", backends=NUMPY_ONLY),
    Case("pinv-tall", ("pinv",), lambda a: np.linalg.pinv(a), ((3, 2),), (U,)),
    Case("pinv-wide-stack", ("pinv",), lambda a: np.linalg.pinv(a, rcond=1e-10), ((2, 2, 3),),
         (U,), backends=NUMPY_ONLY),
    Case("lstsq", ("lstsq",), lambda a, b: np.linalg.lstsq(a, b)[0], ((4, 2), (4,)), (U, U)),
    Case("lstsq-matrix-wide", ("lstsq",), lambda a, b: np.linalg.lstsq(a, b, rcond=None)[0],
         ((2, 3), (2, 2)), (U, U), backends=NUMPY_ONLY),
    Case("lstsq-residuals-rank-s", ("lstsq", "svd"),
         lambda a, b: np.linalg.lstsq(a, b)[1] + np.linalg.lstsq(a, b)[2]
         + np.linalg.lstsq(a, b)[3].sum(), ((4, 2), (4,)), (U, U), oracle="fd",
         backends=NUMPY_ONLY),
]
