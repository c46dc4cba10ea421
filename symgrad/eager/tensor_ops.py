"""Torch-style factories: ``symgrad.tensor``, ``zeros``, ``randn``, ``eye``,
``FloatTensor``, ... (re-exported by :mod:`symgrad`); the functions are in
:mod:`.functions`.

Factories take PyTorch's ``dtype=``, ``device=`` (the CPU) and ``requires_grad=``.
``tensor(data)`` infers the dtype as PyTorch does (integers: int64, bools: bool,
floats: the default float64); ``arange`` of integers is int64.

    >>> import symgrad as torch
    >>> torch.arange(3) * 2
    tensor([0, 2, 4])
    >>> torch.tensor([1.0, 2.0], dtype=torch.float32, requires_grad=True)
    tensor([1., 2.], dtype=torch.float32, requires_grad=True)
    >>> torch.FloatTensor([1, 2]).dtype, torch.LongTensor([1, 2]).dtype
    (torch.float32, torch.int64)
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from . import dtypes as dt
from .dtypes import as_device
from .methods import size_arg
from .random import Generator, numpy_generator
from .tensor import Tensor, _unwrap


def _new(value: np.ndarray, dtype: Any, requires_grad: bool, device: Any = None,
         default: dt.dtype | None = None) -> Tensor:
    """A new leaf holding ``value`` in ``dtype`` (or ``default``, or ``value``'s own)."""
    if device is not None:
        as_device(device)
    target = dt.as_dtype(dtype) if dtype is not None else default
    if target is not None and value.dtype != target.numpy:
        value = dt.cast(value, target)
    if requires_grad and not (dt.of_array(value).is_floating_point
                              or dt.of_array(value).is_complex):
        raise RuntimeError(f"Only Tensors of floating point and complex dtype can require "
                           f"gradients (this one would be {dt.of_array(value)}); pass float "
                           "data or dtype=torch.float64")
    return Tensor._leaf(value, requires_grad)


def tensor(data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """A new leaf holding a copy of ``data``; the dtype is inferred as PyTorch does."""
    value = np.array(_unwrap(data), copy=True)
    if dtype is not None and isinstance(data, (int, list, tuple)) and value.dtype.kind in "iu":
        _fits(value, dt.as_dtype(dtype))
    return _new(value, dtype, requires_grad, device, dt.infer(value))


def _fits(value: np.ndarray, target: dt.dtype) -> None:
    """PyTorch's check of Python integers made a narrower integer dtype (no wrapping)."""
    if target.is_floating_point or target.is_complex or target is dt.bool or not value.size:
        return
    info = np.iinfo(target.numpy)
    if value.min() < info.min or value.max() > info.max:
        raise RuntimeError(f"value cannot be converted to type {np.dtype(target.numpy).name} "
                           "without overflow")


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """PyTorch's ``as_tensor``: a Tensor is returned itself (its graph kept), or ``.to(dtype)``
    (a differentiable cast); a numpy array of a tensor dtype shares its memory, as
    ``from_numpy``; other data is copied, as by ``tensor``.

        >>> import symgrad as torch
        >>> x = torch.ones(2, requires_grad=True)
        >>> torch.as_tensor(x * 2).requires_grad
        True
    """
    if device is not None:
        as_device(device)
    if isinstance(data, Tensor):
        return data if dtype is None else data.to(dtype)
    if isinstance(data, np.ndarray) and data.dtype.kind != "c" and dt.as_array(data) is data \
            and (dtype is None or dt.as_dtype(dtype).numpy == data.dtype):
        return from_numpy(data)
    return tensor(data, dtype=dtype)


def Variable(data: Any, requires_grad: bool = False) -> Tensor:
    """``torch.autograd.Variable``: a leaf tensor sharing ``data``'s values.

        >>> import symgrad as torch
        >>> from symgrad.autograd import Variable
        >>> Variable(torch.ones(2), requires_grad=True)
        tensor([1., 1.], requires_grad=True)
    """
    return Tensor._shared(data, requires_grad)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing ``array``'s memory (float64, float32, int64 or bool; others are
    converted; complex64 and complex128 arrays are shared too). Writes into ``array``
    between a forward and its backward are seen (:mod:`.exposed`)."""
    return Tensor._shared(array)


def _filled(fill: Any, size: Any, dtype: Any, requires_grad: bool, device: Any) -> Tensor:
    shape = size_arg(size)
    target = dt.as_dtype(dtype) if dtype is not None else dt.DEFAULT
    if type(fill) is int:
        _fits(np.asarray(fill, dtype=object if abs(fill) >= 2**63 else None), target)
    return _new(dt.cast(np.full(shape, fill), target), None, requires_grad, device)


def zeros(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
          out: Any = None) -> Tensor:
    return _filled(0, size, dtype, requires_grad, device)


def ones(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
         out: Any = None) -> Tensor:
    return _filled(1, size, dtype, requires_grad, device)


empty = zeros  # uninitialized memory in PyTorch; zeros here


def full(size: Any, fill_value: Any, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """``full((2, 3), 7.0)``; the dtype follows ``fill_value`` (int: int64, bool: bool)."""
    if dtype is None:
        dtype = dt.infer(fill_value)
    return _filled(fill_value, (size,), dtype, requires_grad, device)


def eye(n: int, m: int | None = None, dtype: Any = None, device: Any = None,
        requires_grad: bool = False) -> Tensor:
    return _new(np.eye(n, m), dtype, requires_grad, device, dt.DEFAULT)


def _like(x: Any, dtype: Any) -> tuple[tuple[int, ...], Any]:
    value = np.asarray(_unwrap(x))
    return value.shape, dtype if dtype is not None else dt.of_array(dt.as_array(value))


def zeros_like(input: Any, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
    shape, dtype = _like(input, dtype)
    return _filled(0, (shape,), dtype, requires_grad, device)


def ones_like(input: Any, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    shape, dtype = _like(input, dtype)
    return _filled(1, (shape,), dtype, requires_grad, device)


def full_like(input: Any, fill_value: Any, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    shape, dtype = _like(input, dtype)
    return _filled(fill_value, (shape,), dtype, requires_grad, device)


empty_like = zeros_like


def _floating(dtype: Any) -> dt.dtype:
    target = dt.as_dtype(dtype) if dtype is not None else dt.DEFAULT
    if not target.is_floating_point:
        raise RuntimeError(f"random floating-point numbers need a floating dtype, not {target}")
    return target


def randn(*size: Any, generator: Generator | None = None, dtype: Any = None,
          device: Any = None, requires_grad: bool = False) -> Tensor:
    """Standard normal samples of shape ``size``."""
    values = numpy_generator(generator).standard_normal(size_arg(size))
    return _new(values, _floating(dtype), requires_grad, device)


def rand(*size: Any, generator: Generator | None = None, dtype: Any = None,
         device: Any = None, requires_grad: bool = False) -> Tensor:
    """Uniform samples in [0, 1) of shape ``size``."""
    values = numpy_generator(generator).random(size_arg(size))
    return _new(values, _floating(dtype), requires_grad, device)


def randint(low: int, high: int | None = None, size: Any = (), generator: Any = None,
            dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Integers in ``[low, high)`` (``randint(high, size)`` from 0), int64 by default."""
    if high is None:
        low, high = 0, low
    values = numpy_generator(generator).integers(low, high, size_arg((size,)))
    return _new(values, dtype, requires_grad, device, dt.int64)


def randperm(n: int, generator: Any = None, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    return _new(numpy_generator(generator).permutation(n), dtype, requires_grad, device,
                dt.int64)


def randn_like(input: Any, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
    shape, dtype = _like(input, dtype)
    return randn(shape, dtype=dtype, requires_grad=requires_grad)


def rand_like(input: Any, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    shape, dtype = _like(input, dtype)
    return rand(shape, dtype=dtype, requires_grad=requires_grad)


def arange(start: Any, end: Any = None, step: Any = 1, dtype: Any = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """``arange(5)`` is ``tensor([0, 1, 2, 3, 4])`` (int64, as PyTorch's); with a float
    bound or step, the default float dtype."""
    values = np.arange(start, end, step) if end is not None else np.arange(start)
    integral = builtins.all(isinstance(v, (int, np.integer)) for v in (start, end, step)
                            if v is not None)
    return _new(values, dtype, requires_grad, device, dt.int64 if integral else dt.DEFAULT)


def linspace(start: float, end: float, steps: int, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    return _new(np.linspace(start, end, steps), dtype, requires_grad, device, dt.DEFAULT)


class _TensorType(type):
    """``isinstance(x, torch.FloatTensor)`` is true for float32 tensors, as in PyTorch."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls._default  # type: ignore[attr-defined]

    def __repr__(cls) -> str:
        return f"<class 'torch.{cls.__name__}'>"


class _TypedTensor(metaclass=_TensorType):
    """``FloatTensor([1, 2])`` holds float32 data (a float32 numpy array's memory, shared as
    PyTorch's); ``FloatTensor(2, 3)`` is zeros."""

    _default: dt.dtype = dt.DEFAULT

    def __new__(cls, *data: Any) -> Tensor:  # type: ignore[misc]
        if len(data) == 1 and type(data[0]) is np.ndarray and \
                data[0].dtype == cls._default.numpy:  # (PyTorch's: shared, as from_numpy)
            return from_numpy(data[0])
        t = Tensor(*data)
        return t if cls._default is dt.DEFAULT else t._cast(cls._default)


class FloatTensor(_TypedTensor):
    _default = dt.float32


class DoubleTensor(_TypedTensor):
    _default = dt.float64


class LongTensor(_TypedTensor):
    _default = dt.int64


class BoolTensor(_TypedTensor):
    _default = dt.bool
