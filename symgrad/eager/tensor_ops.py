"""Torch-style factories and functions: ``symgrad.tensor``, ``symgrad.zeros``,
``symgrad.exp``, ... (re-exported by :mod:`symgrad`).

The functions take Tensors, numpy arrays and values traced by ``sg.grad`` alike.

    >>> import symgrad as torch
    >>> torch.arange(3) * 2
    tensor([0., 2., 4.])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..numpy_api import functions as ops
from .tensor import Tensor, _as_float_array, _size_arg, _unwrap


def _new(value: np.ndarray, requires_grad: bool) -> Tensor:
    return Tensor._leaf(value, requires_grad)


def tensor(data: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A new leaf tensor holding a float64 copy of ``data`` (bools stay bool)."""
    return _new(np.array(_as_float_array(data), copy=True), requires_grad)


def Variable(data: Any, requires_grad: bool = False) -> Tensor:
    """``torch.autograd.Variable``: a leaf tensor sharing ``data``'s values.

        >>> import symgrad as torch
        >>> from symgrad.autograd import Variable
        >>> Variable(torch.ones(2), requires_grad=True)
        tensor([1., 1.], requires_grad=True)
    """
    return Tensor._leaf(data, requires_grad)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing ``array``'s memory (which must be float64; others are copied)."""
    return Tensor._leaf(array)


def zeros(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    return _new(np.zeros(_size_arg(size)), requires_grad)


def ones(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    return _new(np.ones(_size_arg(size)), requires_grad)


def full(size: Any, fill_value: float, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    return _new(np.full(_size_arg((size,)), float(fill_value)), requires_grad)


def zeros_like(x: Any, requires_grad: bool = False) -> Tensor:
    return _new(np.zeros(np.shape(_unwrap(x))), requires_grad)


def ones_like(x: Any, requires_grad: bool = False) -> Tensor:
    return _new(np.ones(np.shape(_unwrap(x))), requires_grad)


_rng = np.random.default_rng()


def manual_seed(seed: int) -> None:
    """Seed the generator behind ``randn`` and ``rand``."""
    global _rng
    _rng = np.random.default_rng(seed)


def randn(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Standard normal samples of shape ``size``."""
    return _new(_rng.standard_normal(_size_arg(size)), requires_grad)


def rand(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Uniform samples in [0, 1) of shape ``size``."""
    return _new(_rng.random(_size_arg(size)), requires_grad)


def arange(start: float, end: float | None = None, step: float = 1, dtype: Any = None,
           requires_grad: bool = False) -> Tensor:
    """``arange(5)`` is ``tensor([0., 1., 2., 3., 4.])`` (float64, unlike PyTorch's int64)."""
    values = np.arange(start, end, step) if end is not None else np.arange(start)
    return _new(values.astype(np.float64), requires_grad)


# ---------------------------------------------------------------------------
# torch-style functions: on Tensors, tracers and plain arrays alike

exp, log, log1p, expm1, sqrt = np.exp, np.log, np.log1p, np.expm1, np.sqrt
sin, cos, tan, tanh, sinh, cosh = np.sin, np.cos, np.tan, np.tanh, np.sinh, np.cosh
asin, acos, atan, abs, sign, square = (np.arcsin, np.arccos, np.arctan, np.abs, np.sign,
                                       np.square)
pow, matmul, maximum, minimum = np.power, np.matmul, np.maximum, np.minimum


def sum(input: Any, dim: Any = None, keepdim: bool = False) -> Any:
    """``torch.sum``: over all elements, or over ``dim`` (keeping it with ``keepdim``)."""
    return ops.sum(input, dim, keepdims=keepdim)


def mean(input: Any, dim: Any = None, keepdim: bool = False) -> Any:
    return ops.mean(input, dim, keepdims=keepdim)


def t(input: Any) -> Any:
    return ops.transpose(input)
