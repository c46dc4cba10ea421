"""Graph colouring for compressed Jacobians and Hessians (Curtis, Powell and Reid, 1974).

Two columns of a Jacobian whose patterns share no row are *structurally orthogonal*:
one Jacobian-vector product with the sum of their unit vectors gives both columns, each
in its own rows. :func:`column_colouring` gives every column a colour such that the
columns of one colour are orthogonal (a greedy distance-2 colouring of the column
intersection graph), so ``J`` costs one product per colour; :func:`decompress` reads
``J`` back from those products. A tridiagonal pattern takes 3 colours whatever its
size. For a Hessian the same colouring of its (symmetric) pattern's columns applies,
with Hessian-vector products; star and acyclic colourings would use fewer colours for
some patterns, at the price of a substitution step.

:func:`check_colouring` verifies the defining property (each row sees each colour at
most once) before any product is read back, since a wrong colouring would sum two
entries into one silently.

    >>> import numpy as np, scipy.sparse as sp
    >>> tri = sp.diags([1.0, 1.0, 1.0], [-1, 0, 1], shape=(6, 6), format="csr")
    >>> colours = column_colouring(tri)
    >>> colours
    array([0, 1, 2, 0, 1, 2])
    >>> J = sp.diags([np.arange(1.0, 6), np.arange(6.0), -np.arange(5.0)], [-1, 0, 1])
    >>> products = np.stack([J @ s for s in seeds(colours)])  # one J v per colour
    >>> (decompress(tri, gather_index(tri, colours), products) != J).nnz
    0
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def column_colouring(pattern: sp.csr_matrix) -> np.ndarray:
    """A colour (0, 1, ...) for each column of ``pattern`` (``m × n``) such that no two
    columns of one colour have an entry in the same row; greedy, in column order."""
    p = sp.csr_matrix(pattern, dtype=bool).astype(np.int32)
    conflicts = (p.T @ p).tocsr()  # columns sharing a row
    indptr, indices = conflicts.indptr.tolist(), conflicts.indices.tolist()
    n = pattern.shape[1]
    colours = [-1] * n
    for v in range(n):
        used = {colours[u] for u in indices[indptr[v]:indptr[v + 1]]}
        c = 0
        while c in used:
            c += 1
        colours[v] = c
    return np.asarray(colours, dtype=np.int64)


def row_colouring(pattern: sp.csr_matrix) -> np.ndarray:
    """A colour for each row such that no two rows of one colour share a column (for
    vector-Jacobian products: reverse mode)."""
    return column_colouring(sp.csr_matrix(pattern).T.tocsr())


def check_colouring(pattern: sp.csr_matrix, colours: np.ndarray) -> None:
    """Raise unless each row of ``pattern`` holds each colour at most once."""
    coo = sp.coo_matrix(pattern)
    keys = coo.row.astype(np.int64) * (int(colours.max(initial=0)) + 1) + colours[coo.col]
    keys.sort()  # (np.unique is 100x slower here, numpy 2.4)
    if (keys[1:] == keys[:-1]).any():
        raise AssertionError("the colouring puts two columns of one row in one colour; "
                             "a compressed derivative would add them up")


def seeds(colours: np.ndarray) -> np.ndarray:
    """The seed matrix (``colours × n``): row ``c`` is the sum of the unit vectors of the
    columns of colour ``c``."""
    count = int(colours.max(initial=-1)) + 1
    out = np.zeros((count, colours.size))
    out[colours, np.arange(colours.size)] = 1.0
    return out


def gather_index(pattern: sp.csr_matrix, colours: np.ndarray, by: str = "columns") -> np.ndarray:
    """For each entry of ``pattern`` (CSR order), where it sits in the flattened products:
    ``products[c]`` is ``J @ seeds[c]`` (``by="columns"``: forward mode, Hessians) or
    ``seeds[c] @ J`` (``by="rows"``: reverse mode, ``colours`` of the rows)."""
    m, n = pattern.shape
    rows = np.repeat(np.arange(m), np.diff(pattern.indptr))
    if by == "columns":
        return colours[pattern.indices] * m + rows
    return colours[rows] * n + pattern.indices


def decompress(pattern: sp.csr_matrix, index: np.ndarray, products: np.ndarray) -> sp.csr_matrix:
    """``J`` (CSR, ``pattern``'s entries) from the products, read at :func:`gather_index`."""
    values = np.asarray(products, dtype=np.float64).ravel()[index]
    return sp.csr_matrix((values, pattern.indices.copy(), pattern.indptr.copy()),
                         shape=pattern.shape)
