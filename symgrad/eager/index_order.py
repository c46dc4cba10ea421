"""PyTorch's order of an index that mixes integers with advanced (array) indices.

PyTorch selects the integers' dims first and indexes what is left by numpy's rules; numpy
counts integers among the advanced indices, which moves the result's dims when a slice
separates them: of a (3, 4, 5) tensor, ``x[1, :, [4, 0]]`` is (4, 2) in PyTorch and
(2, 4) in numpy. ``Tensor.__getitem__``/``__setitem__`` index in two steps then.

    >>> import symgrad as torch
    >>> torch.zeros(3, 4, 5)[1, :, [4, 0]].shape
    torch.Size([4, 2])
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _part(p: Any) -> Any:
    """An index part as numpy sees it (a Tensor's values; a 0-d int64 one an integer)."""
    if hasattr(p, "_value") and hasattr(p, "_version"):
        v = p._value
        return int(v) if v.ndim == 0 and v.dtype == np.int64 else v
    return p


def _is_int(k: Any) -> bool:
    return isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_))


def ints_first(index: Any) -> tuple[Any, Any] | None:
    """``index`` as two steps (the integers with every other dim kept, then the rest)
    when it mixes integers with advanced indices; None when numpy's rule is PyTorch's."""
    if not isinstance(index, tuple):  # one part mixes nothing
        return None
    parts = index
    kinds = [_part(p) for p in parts]
    ints = [_is_int(k) for k in kinds]
    if not any(ints) or not any(isinstance(k, (list, np.ndarray)) and np.ndim(k) > 0
                                for k in kinds):
        return None
    first: list[Any] = []
    for p, k, is_int in zip(parts, kinds, ints):
        if is_int or k is Ellipsis:
            first.append(p)
        elif isinstance(k, np.ndarray) and k.dtype == np.bool_ and k.ndim:
            first.extend([slice(None)] * k.ndim)  # a mask covers its dims
        elif k is not None and not isinstance(k, (bool, np.bool_)):
            first.append(slice(None))  # (None and a bool scalar add a dim: not here)
    return tuple(first), tuple(p for p, is_int in zip(parts, ints) if not is_int)
