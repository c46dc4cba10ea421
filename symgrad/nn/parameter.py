"""``nn.Parameter``: a leaf Tensor that a :class:`~symgrad.nn.Module` registers.

A Parameter is a :class:`symgrad.Tensor` (it takes part in every operation,
and results are plain Tensors) that requires grad by default and that a
Module assigned one as an attribute lists in ``parameters()``.

    >>> import symgrad as torch
    >>> p = torch.nn.Parameter(torch.ones(2))
    >>> p
    Parameter containing:
    tensor([1., 1.], requires_grad=True)
    >>> (p * 2).sum()
    tensor(4., grad_fn=<SumBackward0>)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..eager.tensor import Tensor
from ..eager.views import join


class Parameter(Tensor):
    """A leaf tensor sharing ``data``'s values, ``requires_grad=True`` by default."""

    __slots__ = ()

    def __new__(cls, data: Any = None, requires_grad: bool = True) -> Parameter:
        return object.__new__(cls)

    def __init__(self, data: Any = None, requires_grad: bool = True):
        shared = None if data is None else Tensor._shared(data)
        self._init(np.zeros(0) if shared is None else shared._value, None, False)
        if shared is not None and shared._aliases is not None:
            join(shared, self)  # (data's version counter, as PyTorch's)
        self.requires_grad = requires_grad

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

