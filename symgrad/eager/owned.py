"""Whether a backward's gradient array may become a leaf's ``.grad`` without a copy.

PyTorch's AccumulateGrad takes a leaf's first gradient as it is when nothing else holds
it; :func:`sole` says when a symgrad backward's gradient is such an array: fresh, held
only by the backward's list of gradients, sharing its memory with nothing else (not a
kernel input nor a view of one, not a constant, not another gradient). Copying it
instead (a 784x256 float64 gradient, 1.6 MB, at every step after ``zero_grad()``) cost
the MLP classifier of ``benchmarks/replay.py``, run alone, a third of its step when
glibc maps the copy's pages afresh each time (its default thresholds), little on a
warm heap (``MALLOC_MMAP_THRESHOLD_`` raised).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np


def _refs(grads: list[Any], k: int) -> int:
    g = grads[k]
    return sys.getrefcount(g)


def _base_refs(a: np.ndarray) -> int:
    base = a.base
    return sys.getrefcount(base)


#: what :func:`_refs` counts for an array that only its list holds, and
#: :func:`_base_refs` for an array that only its view holds
_SOLE_REFS = _refs([np.empty(1)], 0)
_SOLE_BASE_REFS = _base_refs(np.empty(2)[:])


def sole(grads: list[Any], k: int) -> bool:
    """Whether ``grads[k]`` is a fresh C-contiguous writeable array that nothing but the
    list holds and whose memory nothing else shares: it owns its memory (numpy made it),
    or is a view of arrays only it holds down to memory it owns, or that Numba allocated
    and nothing else holds (its owner wraps no Python array: not a kernel input, nor a
    view of one, nor of another output). Such a gradient may become a leaf's ``.grad``
    without a copy."""
    if _refs(grads, k) != _SOLE_REFS or type(grads[k]) is not np.ndarray:
        return False
    g = grads[k]
    flags = g.flags
    if not (flags.c_contiguous and flags.writeable):
        return False
    while type(g.base) is np.ndarray:  # (Numba returns its arrays as such views)
        if _base_refs(g) != _SOLE_BASE_REFS:
            return False
        g = g.base
    if g.base is None:
        return g.flags.owndata
    nrt = sys.modules.get("numba.core.runtime._nrt_python")  # (loaded with the kernels)
    base = g.base
    return (nrt is not None and type(base) is getattr(nrt, "_MemInfo", None)
            and base.refcount == 1 and base.parent is None)
