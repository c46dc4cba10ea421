"""Complex parameters updated as PyTorch's optimizers update them: as their real views.

PyTorch's optimizers view a complex parameter, its gradient and its state as real
(``torch.view_as_real``) and update those: every operation acts on the real and
imaginary parts apart, so Adam's ``grad * grad`` is ``(re g)^2`` and ``(im g)^2``,
not the complex square, and ``sqrt`` takes each part's. :func:`update_as_real`
does the same around an optimizer's ``_update``; the state stays complex between
steps (as PyTorch's ``state_dict`` holds it), the same tensors, viewed as real during
the update.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..eager.tensor import Tensor


def as_real(a: np.ndarray) -> np.ndarray:
    """``torch.view_as_real``'s array: the parts along a new last axis of 2, sharing
    ``a``'s memory."""
    return a[..., None].view(a.real.dtype)


def update_as_real(update: Callable[..., None], p: np.ndarray, g: np.ndarray,
                   state: dict[str, Any], group: dict[str, Any]) -> None:
    """``update(p, g, state, group)`` on the real views of a complex parameter, its
    gradient and its complex state tensors (the parameter's shape); the state tensors
    the update makes (real, the view's shape) are kept as complex views of them."""
    views = {}
    for k, v in state.items():
        if isinstance(v, Tensor) and v._value.dtype.kind == "c" and v.shape == p.shape:
            views[k] = v
            state[k] = Tensor._make(as_real(v._value))
    try:
        update(as_real(p), as_real(g), state, group)
    finally:
        shape = p.shape + (2,)
        for k, v in state.items():
            if not (isinstance(v, Tensor) and v._value.dtype.kind == "f"
                    and v._value.shape == shape):
                continue
            kept = views.get(k)
            if kept is not None and np.shares_memory(kept._value, v._value):
                state[k] = kept
            else:
                state[k] = Tensor._make(np.ascontiguousarray(v._value).view(p.dtype)[..., 0])
