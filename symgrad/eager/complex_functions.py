"""``torch.view_as_complex``, ``view_as_real``, ``complex``, ``polar``, ``real``, ``imag``,
``conj`` and ``angle`` (re-exported by :mod:`symgrad`); complex Tensors are described in
:mod:`.complex_tensors`.

``view_as_complex(x)`` and ``view_as_real(z)`` share the memory of their operand, as
PyTorch's views do: a write through one shows in the other (under ``no_grad``; a
recorded in-place operation on either is refused, :func:`.complex_tensors.refuse_write`).
Their gradients are those of ``x[..., 0] + 1j * x[..., 1]`` and of ``stack([z.real,
z.imag], -1)``.

    >>> import symgrad as torch
    >>> x = torch.tensor([[1.0, 2.0], [3.0, -1.0]])
    >>> z = torch.view_as_complex(x)
    >>> z
    tensor([1.+2.j, 3.-1.j])
    >>> torch.view_as_real(z * 1j)
    tensor([[-2.,  1.],
            [ 1.,  3.]])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..prims import complex as C
from . import complex_tensors as cx
from . import dtypes as dt
from .method_args import named
from .tensor import Tensor

__all__ = ["view_as_complex", "view_as_real", "complex", "polar", "real", "imag", "conj",
           "angle", "complex64", "complex128", "cfloat", "cdouble"]
complex64, complex128, cfloat, cdouble = dt.complex64, dt.complex128, dt.cfloat, dt.cdouble


def view_as_complex(input: Tensor) -> Tensor:
    """The complex tensor whose elements are the pairs of ``input``'s last dimension (of
    size 2, stride 1; float32 gives complex64, float64 complex128), sharing its memory."""
    v = input._value
    if input.dtype not in (dt.float32, dt.float64):
        raise RuntimeError("view_as_complex is only supported for float and double tensors, "
                           f"but got a tensor of scalar type: {dt.TYPE_NAMES[input.dtype.name]}")
    if v.ndim == 0 or v.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if v.strides[-1] != v.itemsize:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % (2 * v.itemsize) for s in v.strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last "
                           "dimension")
    if _offset(v) % (2 * v.itemsize):
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    value = v.view(np.complex64 if v.dtype == np.float32 else np.complex128)[..., 0]
    if not input._requires_grad:
        return cx.share(input, Tensor._make(value))
    result = named(C.make_complex(input[..., 0], input[..., 1]), input, "ViewAsComplexBackward0")
    result._value = value
    return cx.share(input, result)


def _offset(v: np.ndarray) -> int:
    """The offset in bytes of ``v``'s first element in the memory it views."""
    base = v
    while isinstance(base.base, np.ndarray):
        base = base.base
    return v.__array_interface__["data"][0] - base.__array_interface__["data"][0]


def view_as_real(input: Tensor) -> Tensor:
    """The real tensor of ``input``'s real and imaginary parts along a new last dimension
    of size 2, sharing its memory."""
    v = input._value
    if v.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    value = v[..., None].view(np.float32 if v.dtype == np.complex64 else np.float64)
    if not input._requires_grad:
        return cx.share(input, Tensor._make(value))
    result = named(np.stack([np.real(input), np.imag(input)], -1), input,
                   "ViewAsRealBackward0")
    result._value = value
    return cx.share(input, result)


def complex(real: Tensor, imag: Tensor) -> Tensor:  # noqa: A001 -- torch.complex
    """``real + 1j * imag`` of two floating tensors of one dtype (broadcast)."""
    _same_float("complex", real, imag)
    return named(C.make_complex(real, imag), real, "ComplexBackward0")


def polar(abs: Tensor, angle: Tensor) -> Tensor:  # noqa: A002 -- PyTorch's names
    """``abs * (cos(angle) + 1j * sin(angle))``."""
    _same_float("polar", abs, angle)
    return named(C.make_complex(abs * np.cos(angle), abs * np.sin(angle)), abs, "PolarBackward0")


def _same_float(name: str, a: Any, b: Any) -> None:
    for t in (a, b):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): argument must be a Tensor, not {type(t).__name__}")
        if t.dtype not in (dt.float32, dt.float64):
            raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but "
                               f"got {dt.TYPE_NAMES[a.dtype.name]} and "
                               f"{dt.TYPE_NAMES[b.dtype.name]}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"Expected object of scalar type {dt.TYPE_NAMES[a.dtype.name]} but "
                           f"got scalar type {dt.TYPE_NAMES[b.dtype.name]} for second argument")


def real(input: Tensor) -> Tensor:
    return input.real


def imag(input: Tensor) -> Tensor:
    return input.imag


def conj(input: Tensor) -> Tensor:
    return input.conj()


def angle(input: Tensor) -> Tensor:
    return input.angle()
