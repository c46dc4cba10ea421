"""The Tensor methods with PyTorch's names, signatures and return types.

:class:`TensorMethods` is a mixin of :class:`symgrad.Tensor`: each method is a
composition of the numpy API on traced values (:mod:`symgrad.numpy_api`), so
it runs eagerly, records its primitives when a graph is being built and is
differentiated by the same adjoint as ``sg.grad``. PyTorch's argument forms are
accepted: ``dim=`` (an int, a negative int or a tuple), ``keepdim=``, numpy's
``axis=``/``keepdims=`` too, ``x.view(2, 3)`` and ``x.view((2, 3))``.
The reductions are its base's, :class:`.reduction_methods.ReductionMethods`, and
the argument forms are read by :mod:`.method_args`.

    >>> import symgrad as torch
    >>> x = torch.tensor([[1.0, 5.0], [4.0, 2.0]], requires_grad=True)
    >>> values, indices = x.max(dim=1)
    >>> values, indices
    (tensor([5., 4.], grad_fn=<MaxBackward0>), tensor([1, 0]))
    >>> x.mm(x).clamp(min=10.0).sum()
    tensor(72., grad_fn=<SumBackward0>)

Return types follow PyTorch: ``max(dim)``, ``min(dim)``, ``sort``, ``topk`` give
named tuples (``values``, ``indices``), indices are int64 tensors, ``argmax``
an int64 tensor. The gradient of ``max(dim)`` goes to the element its index
names (PyTorch's), while ``amax``/``max()`` share it among ties (1/k each).
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ..numpy_api import functions as ops
from ..numpy_api import linalg
from ..numpy_api import shapes as shape_ops
from ..prims import softmax as softmax_prims
from ..prims.elementwise import relu_p
from ..prims.indexing import slice_p
from ..prims.reductions import reshape_p, transpose_p
from . import dtypes as dt
from . import grad_mode
from .bf16 import add_tensors, half_in_float32, in_float32, opmath_scalar
from .fastpath import apply_f64, unary_f64
from .fused_values import half_log_softmax, with_value
from .graph import Node, node_class
from .method_args import dim_axes as _dims
from .method_args import int_arg, keeps_bool, named, new_view, no_bool_first, size_arg, view_shape
from .method_args import ndim_of as _ndim
from .method_args import one_dim as _one_dim
from .method_args import unwrap as unwrap  # importable here as before (Tensor's modules)
from .op_dtypes import wrapped_int
from .operand_rules import floor_quotient, no_bools
from .reduction_methods import (  # noqa: F401 -- PyTorch's return types, importable here
    ReductionMethods,
    max_result,
    min_result,
    sort_result,
    topk_result,
)
from .select_methods import no_gradient_at_nan
from .tensors_path import addmm_rows, layer_norm_rows, linear_rows, nll_loss_rows  # noqa: F401 -- nn's


def _reshaped(x: Any, shape: tuple[int, ...], name: str) -> Any:
    """A view of ``x`` in ``shape`` (its -1 inferred), by the trace's unary path
    (:func:`.fastpath.unary_f64`, no numpy dispatch), its node named ``name``; a new view
    for ``x``'s own shape too, as PyTorch's ``x.view(x.shape)``."""
    return named(x._trace.unary(reshape_p, x, {"shape": shape}), x, name)


def _transposed(x: Any, perm: tuple[int, ...], name: str) -> Any:
    """A view of ``x``'s axes in the order ``perm`` (non-negative), as :func:`_reshaped`
    (a new view for their own order too, as PyTorch's ``x.permute(0, 1)``)."""
    return named(x._trace.unary(transpose_p, x, {"perm": perm}), x, name)


#: the dtypes whose ``softmax``, ``log_softmax``, ``nll_loss`` and ``layer_norm`` are one
#: primitive each (:mod:`symgrad.prims.softmax`, :mod:`symgrad.prims.layer_norm`; others:
#: composites, which know complex values and the rounding of float16 and bfloat16)
PRIMITIVE_FLOATS = (np.dtype(np.float64), np.dtype(np.float32))


class TensorMethods(ReductionMethods):
    """PyTorch's Tensor methods (the mixin of :class:`symgrad.Tensor`)."""

    __slots__ = ()

    # -- elementwise -------------------------------------------------------------------
    def pow(self, exponent): return self ** exponent
    def exp(self): return np.exp(self)
    def log(self): return np.log(self)
    def log2(self): return np.log(self) * (1.0 / np.log(2.0))
    def log10(self): return np.log(self) * (1.0 / np.log(10.0))
    def log1p(self): return np.log1p(self)
    def expm1(self): return np.expm1(self)
    def sqrt(self): return np.sqrt(self)
    @in_float32
    def rsqrt(self): return named(1.0 / np.sqrt(self), self, "RsqrtBackward0", (self,))
    def sin(self): return np.sin(self)
    def cos(self): return np.cos(self)
    def tan(self): return np.tan(self)
    def tanh(self): return np.tanh(self)
    def sinh(self): return np.sinh(self)
    def cosh(self): return np.cosh(self)
    def asin(self): return np.arcsin(self)
    def acos(self): return np.arccos(self)
    def atan(self): return np.arctan(self)
    def abs(self): return np.abs(self)  # (Tensor.__array_ufunc__: no gradient at NaN)
    def neg(self): return -self
    def sign(self):
        if self.dtype is dt.bool:  # (PyTorch's: the values)
            return self.clone()
        out = np.sign(self)
        if self.dtype.is_floating_point and np.isnan(self._value).any():  # PyTorch's 0
            out = named(ops.where(self != self, 0.0, out), self, "SignBackward0")
        return out
    def square(self): return np.square(self)
    def reciprocal(self): return np.reciprocal(self)
    def floor(self): return np.floor(self) if self.dtype.is_floating_point else self.clone()
    def ceil(self): return np.ceil(self) if self.dtype.is_floating_point else self.clone()
    def trunc(self): return np.trunc(self) if self.dtype.is_floating_point else self.clone()
    def round(self, decimals: int | None = None) -> Any:
        """Halves to even; with ``decimals``, PyTorch's ``rint(x * 10**d) / 10**d`` (or
        ``rint(x / 10**-d) * 10**-d``) in the tensor's dtype (integers refuse ``decimals``,
        as PyTorch's ``round.decimals`` kernel)."""
        if not self.dtype.is_floating_point:
            if decimals is not None and self.dtype is not dt.bool:
                kernel = "round_vml_cpu" if decimals == 0 else "round_cpu"  # (PyTorch's)
                raise NotImplementedError(
                    f'"{kernel}" not implemented for \'{dt.TYPE_NAMES[self.dtype.name]}\'')
            return self.clone()
        if not decimals:
            return np.rint(self)
        ten = 10.0 ** abs(decimals)
        return np.rint(self * ten) / ten if decimals > 0 else np.rint(self / ten) * ten
    def relu(self):
        # float64 or float32: the fast path at once (the node and value ops.relu's five
        # calls reach), as mean(); anything else: numpy's function
        result = unary_f64(relu_p, self, {}, self._make)
        if result is None:
            result = apply_f64(relu_p, (self,), {}, self._make)
        if result is None:
            if self._value.dtype == np.bool_:  # (numpy's function gave float64)
                raise RuntimeError("Boolean inputs not supported for relu")
            result = ops.relu(self)
        return named(result, self, "ReluBackward0")
    @half_in_float32
    def sigmoid(self): return named(ops.sigmoid(self), self, "SigmoidBackward0")
    def maximum(self, other): return np.maximum(self, other)
    def minimum(self, other): return np.minimum(self, other)
    def add(self, other, alpha=1):
        alpha = checked_alpha(self, other, alpha)
        if alpha == 1:
            return self + other
        if alpha is False:  # a bool result: a or (False and b), broadcast
            return self + (other & False)
        def formula(): return self + _alpha_times(self, other, alpha)
        return _fused_add(self, other, alpha, formula, "AddBackward0")
    def sub(self, other, alpha=1):
        alpha = checked_alpha(self, other, alpha)
        if alpha == 1:
            return self - other
        def formula(): return self - _alpha_times(self, other, alpha)
        return _fused_add(self, other, -alpha, formula, "SubBackward0")
    def mul(self, other): return self * other
    def div(self, other, rounding_mode=None):
        if rounding_mode is not None and not dt.result_type([self, other]).is_floating_point:
            return _integer_division(self, other, rounding_mode)
        if rounding_mode == "floor":  # from fmod, as PyTorch: not floor of the rounded a / b
            return floor_quotient(*no_bools(self, other))  # (gradient 0: PyTorch's; `//`
            # has no derivative there)
        if rounding_mode == "trunc" and self.dtype in (dt.bfloat16, dt.float16) and \
                opmath_scalar(getattr(other, "_value", other), 1, "div"):
            # PyTorch's kernel divides by the number in float32, then truncates, rounds once
            other = other.float() if hasattr(other, "_value") else other
            return (self.float() / other).trunc().to(self.dtype)
        return _rounded(self / other, rounding_mode)
    def true_divide(self, other): return self / other
    def matmul(self, other): return self @ other
    def gt(self, other): return self > other
    def ge(self, other): return self >= other
    def lt(self, other): return self < other
    def le(self, other): return self <= other
    def eq(self, other): return self == other
    def ne(self, other): return self != other
    def logical_not(self): return type(self)._make(np.logical_not(self._value))
    def isnan(self): return type(self)._make(np.isnan(self._value))
    def isfinite(self): return type(self)._make(np.isfinite(self._value))

    def equal(self, other) -> bool:
        return self.shape == other.shape and bool(np.array_equal(self._value, other._value))

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
        return bool(np.allclose(self._value, getattr(other, "_value", other), rtol, atol,
                                equal_nan))

    def clamp(self, min=None, max=None):  # noqa: A002 -- PyTorch's names
        """``clamp(min, max)``: the gradient is 1 on the closed interval, bounds included
        (PyTorch's), 0 outside; tensor bounds get the gradient where they win. A NaN of
        ``self`` or of a bound gives NaN with no gradient to anything, as PyTorch's."""
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        out = self
        if min is not None:
            out = ops.where(out < min, min, out)
        if max is not None:
            out = ops.where(out > max, max, out)
        if out is self:
            return out
        out = no_gradient_at_nan(out, self, min, max, value=np.nan)  # PyTorch's 0 and NaN
        if hasattr(min, "_value") or hasattr(max, "_value"):  # PyTorch's clamp.Tensor
            return named(out, self, "ClampBackward0", (self, min, max))
        name = ("ClampBackward1" if min is not None and max is not None else
                "ClampMinBackward0" if min is not None else "ClampMaxBackward0")
        return named(out, self, name, (self,))

    clip = clamp

    def masked_fill(self, mask, value):
        """``value`` where ``mask`` is true (those elements get no gradient), else ``self``.
        A Tensor ``mask`` enters the node as a Tensor, as ``torch.where``'s condition: its
        node watches its version and reads it as it is at backward (PyTorch's
        ``MaskedFillBackward0`` saves the mask itself)."""
        kind = getattr(getattr(mask, "_value", mask), "dtype", None)
        if kind is not None and kind != np.bool_:
            raise RuntimeError(f"masked_fill only supports boolean masks, but got mask with "
                               f"dtype {getattr(mask, 'dtype', kind)}: pass mask.bool() or a "
                               "comparison (mask != 0)")
        fill = value if hasattr(value, "_value") else (
            np.asarray(value, self._value.dtype) if self.dtype is not dt.bfloat16
            else dt.cast(np.asarray(value), self.dtype))  # (through float32, as PyTorch's)
        if hasattr(value, "_value"):  # PyTorch's masked_fill.Tensor: value's gradient too
            return named(ops.where(mask, fill, self), self, "MaskedFillBackward1",
                         (self, value))
        return named(ops.where(mask, fill, self), self, "MaskedFillBackward0", (self,))

    # -- new tensors like this one ----------------------------------------------------
    def new_tensor(self, data, dtype=None, requires_grad=False):
        value = dt.cast(np.array(getattr(data, "_value", data)), dt.as_dtype(dtype or self.dtype))
        return type(self)._make(value).requires_grad_(requires_grad)

    def new_zeros(self, *size, dtype=None, requires_grad=False):
        return self.new_full(size_arg(size), 0, dtype=dtype, requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, requires_grad=False):
        return self.new_full(size_arg(size), 1, dtype=dtype, requires_grad=requires_grad)

    def new_full(self, size, fill_value, dtype=None, requires_grad=False):
        if type(fill_value) is int:  # PyTorch's check: no wrapping of a fill
            wrapped_int(fill_value, dt.as_dtype(dtype or self.dtype), "fill")
        value = dt.cast(np.full(size_arg((size,)), fill_value), dt.as_dtype(dtype or self.dtype))
        return type(self)._make(value).requires_grad_(requires_grad)

    def clamp_min(self, min): return self.clamp(min=min)  # noqa: A002
    def clamp_max(self, max): return self.clamp(max=max)  # noqa: A002

    @half_in_float32
    @in_float32
    def softmax(self, dim, dtype=None):
        x = _softmax_input(self, dtype, "softmax")
        if x.ndim == 0:  # one element: 1 (nan at ±inf and nan), gradient 0
            _one_dim(dim, 1)
            return named(x - x + 1, x, "SoftmaxBackward0", (x,))
        axis = _one_dim(dim, x.ndim)
        if x._value.dtype in PRIMITIVE_FLOATS:  # one node (PyTorch's), one numpy computation
            # (the fast path at once, memoized per shape: the node and value of the primitive's)
            fast = unary_f64(softmax_prims.softmax_p, x, {"axis": int(axis)}, x._make)
            return softmax_prims.softmax(x, axis) if fast is None else fast
        return named(ops.softmax(x, axis), x, "SoftmaxBackward0", (x,))

    def log_softmax(self, dim, dtype=None):
        x = _softmax_input(self, dtype, "log_softmax")
        if x.ndim == 0:
            _one_dim(dim, 1)
            return named(x - x, x, "LogSoftmaxBackward0", (x,))
        axis = _one_dim(dim, x.ndim)
        if x.dtype is dt.float16:
            return named(half_log_softmax(x, axis), x, "LogSoftmaxBackward0", (x,))
        if x._value.dtype in PRIMITIVE_FLOATS:  # one node (PyTorch's), one numpy computation
            # (float64: the fast path at once, the node and value the primitive's call reaches)
            fast = unary_f64(softmax_prims.log_softmax_p, x, {"axis": int(axis)}, x._make)
            return softmax_prims.log_softmax(x, axis) if fast is None else fast
        return named(ops.log_softmax(x, axis), x, "LogSoftmaxBackward0", (x,))

    # -- linear algebra ------------------------------------------------------------------
    def mm(self, mat2):
        if self.ndim != 2 or _ndim(mat2) != 2:
            raise RuntimeError(f"mm: both arguments must be matrices, got {self.ndim}-D and "
                               f"{_ndim(mat2)}-D tensors (use matmul or @ for others)")
        return named(self @ mat2, self, "MmBackward0")

    def mv(self, vec):
        if self.ndim != 2 or _ndim(vec) != 1:
            raise RuntimeError("mv: expected a matrix and a vector")
        return named(self @ vec, self, "MvBackward0")

    def dot(self, other):  # type: ignore[override]
        """PyTorch's ``dot`` of two vectors; of other operands, numpy's ``dot``."""
        if self.ndim != 1 or _ndim(other) != 1:
            return linalg.dot(self, other)
        return named(self @ other, self, "DotBackward0")

    def outer(self, vec2): return linalg.outer(self, vec2)

    # -- shapes ------------------------------------------------------------------------
    def view(self, *shape: Any) -> Any:
        if len(shape) == 1 and isinstance(shape[0], dt.dtype):
            raise NotImplementedError("view(dtype) reinterprets bits; use .to(dtype)")
        out = _reshaped(self, view_shape(self._value.shape, shape, "view"), "ViewBackward0")
        if self._value.size and not np.shares_memory(out._value, self._value):
            raise RuntimeError(  # (numpy copied: a view's writes would not reach self)
                "view size is not compatible with input tensor's size and stride (at least "
                "one dimension spans across two contiguous subspaces). Use .reshape(...) "
                "instead.")
        return out

    def reshape(self, *shape: Any, order: str = "C") -> Any:  # type: ignore[override]
        if order != "C":
            return named(ops.reshape(self, size_arg(shape), order=order), self, "ViewBackward0")
        return _reshaped(self, view_shape(self._value.shape, shape, "reshape"), "ViewBackward0")

    def view_as(self, other: Any) -> Any:
        return self.view(other.shape)

    def reshape_as(self, other: Any) -> Any:
        return self.reshape(other.shape)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Any:  # type: ignore[override]
        start_dim, end_dim = int_arg(start_dim, "start_dim"), int_arg(end_dim, "end_dim")
        n = builtins.max(self.ndim, 1)  # (a 0-d tensor's dims are -1 and 0, as PyTorch's)
        s, e = _one_dim(start_dim, n), _one_dim(end_dim, n)  # (IndexError out of range)
        if s > e:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
        if self.ndim == 0:
            return self.reshape(1)
        shape = (*self.shape[:s], -1, *self.shape[e + 1:])
        return self.reshape(shape) if s < e else self  # (PyTorch's: itself for s == e)

    def t(self) -> Any:
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                               f"{self.ndim}D")
        if self._value.ndim == 2:  # (np.transpose's primitive, without numpy's dispatch)
            swapped = self._trace.unary(transpose_p, self, {"perm": (1, 0)})
            return named(swapped, self, "TBackward0")
        return named(new_view(ops.transpose(self), self), self, "TBackward0")

    @property
    def T(self) -> Any:  # noqa: N802 -- PyTorch's name: the dims reversed, a new view
        return _transposed(self, tuple(range(self._value.ndim))[::-1], "PermuteBackward0")

    @property
    def mT(self) -> Any:  # noqa: N802 -- PyTorch's name
        return self.transpose(-2, -1)

    def transpose(self, *dims: Any) -> Any:
        """``x.transpose(0, 1)`` swaps two dimensions, as in PyTorch; ``x.transpose()``
        and ``x.transpose((1, 0))`` permute them as numpy does."""
        if len(dims) == 2 and builtins.all(isinstance(d, (int, np.integer)) for d in dims):
            perm = list(range(self.ndim))
            a, b = _one_dim(dims[0], self.ndim), _one_dim(dims[1], self.ndim)
            perm[a], perm[b] = perm[b], perm[a]
            return _transposed(self, tuple(perm), "TransposeBackward0")
        return super().transpose(*dims)  # type: ignore[misc]

    def swapdims(self, dim0, dim1): return self.transpose(dim0, dim1)
    def swapaxes(self, axis0, axis1): return self.transpose(axis0, axis1)  # (a new view)
    def ravel(self): return self.reshape(-1)  # type: ignore[override] -- (a new view)

    def permute(self, *dims: Any) -> Any:
        n = builtins.max(self.ndim, 1)
        return _transposed(self, tuple([d % n for d in size_arg(dims)]), "PermuteBackward0")

    def unsqueeze(self, dim: int) -> Any:
        shape = list(self.shape)
        shape.insert(_one_dim(dim, self.ndim + 1), 1)
        return named(ops.reshape(self, tuple(shape)), self, "UnsqueezeBackward0")

    def squeeze(self, dim: Any = None) -> Any:  # type: ignore[override]
        if dim is None:
            return named(new_view(ops.reshape(self, tuple(d for d in self.shape if d != 1)),
                                  self), self, "SqueezeBackward0")
        dims = [d for d in (_dims(dim, self.ndim) or ()) if self.shape[d] == 1]
        if not dims:
            return named(new_view(self, self), self, "SqueezeBackward1")
        shape = tuple(n for k, n in enumerate(self.shape) if k not in dims)
        return named(ops.reshape(self, shape), self, "SqueezeBackward1")

    def expand(self, *sizes: Any) -> Any:
        shape = size_arg(sizes)
        lead = len(shape) - self.ndim
        full = tuple(s if s != -1 else self.shape[i - lead] for i, s in enumerate(shape))
        return named(new_view(ops.broadcast_to(self, full), self), self, "ExpandBackward0")

    def expand_as(self, other: Any) -> Any:
        return self.expand(other.shape)

    @keeps_bool
    def repeat(self, *sizes: Any, axis: Any = None) -> Any:  # type: ignore[override]
        """PyTorch's ``repeat``: tiles the tensor (numpy's ``tile``); with ``axis=``, numpy's
        ``repeat`` (each element ``sizes`` times along ``axis``)."""
        if axis is not None:
            return shape_ops.repeat(self, sizes[0], axis)
        return named(shape_ops.tile(self, size_arg(sizes)), self, "RepeatBackward0")

    def flip(self, *dims: Any, **kwargs: Any) -> Any:
        # a copy, as PyTorch's (numpy's flip is a view: writes to it would reach self)
        if "dims" in kwargs:  # torch.flip(x, dims=...), PyTorch's own spelling
            dims = (kwargs.pop("dims"),)
        if kwargs or not dims:
            raise TypeError(f"flip() takes dims, not {sorted(kwargs) or 'nothing'}")
        if len(dims) == 1 and not isinstance(dims[0], (tuple, list)):
            int_arg(dims[0], "dims")  # (a bool: PyTorch's TypeError; in a tuple, an int)
        no_bool_first(dims[0] if len(dims) == 1 and isinstance(dims[0], (tuple, list))
                      else dims, "dims")  # (flip((True,)), flip(True, 0))
        return named(shape_ops.flip(self, size_arg(dims)).clone(), self, "FlipBackward0")

    def narrow(self, dim: int, start: int, length: int) -> Any:
        d = _one_dim(dim, self.ndim)
        index = (slice(None),) * d + (slice(start, start + length),)
        return self[index]

    def chunk(self, chunks: int, dim: int = 0) -> tuple[Any, ...]:
        d = _one_dim(dim, self.ndim)
        step = -(-self.shape[d] // chunks)
        return self.split(step, d)

    def split(self, split_size: Any, dim: int = 0) -> tuple[Any, ...]:
        d = _one_dim(dim, self.ndim)
        n = self.shape[d]
        sizes = ([split_size] * (-(-n // split_size)) if isinstance(split_size, int)
                 else list(split_size))
        starts = np.cumsum([0, *sizes])
        return _several(tuple(self[(slice(None),) * d + (slice(int(a), int(b)),)]
                              for a, b in zip(starts[:-1], starts[1:]) if a < n or n == 0),
                        "Split" if isinstance(split_size, int) else "SplitWithSizes")

    def unbind(self, dim: int = 0) -> tuple[Any, ...]:
        """``self[:, ..., i]`` along ``dim`` for each ``i``: each a slice and a reshape,
        as ``getitem`` makes them, without parsing an index per part (attention's q, k,
        v: 0.11 -> 0.07 ms for the three of a transformer's layer); ``grad_fn`` PyTorch's
        ``UnbindBackward0``."""
        d = _one_dim(dim, self.ndim)
        shape = self._value.shape
        whole = tuple((0, n, 1) for n in shape)
        rest = shape[:d] + shape[d + 1:]
        if shape[d] == 1:  # (a full slice records nothing: strided's rule)
            return _several((_reshaped(self, rest, "UnbindBackward0"),), "Unbind")
        unary = self._trace.unary  # (the fast path's memoized slice and reshape per part)
        parts = tuple(unary(reshape_p, unary(slice_p, self, {"index": (
            *whole[:d], (i, i + 1, 1), *whole[d + 1:])}), {"shape": rest})
            for i in range(shape[d]))
        return _several(tuple(_part_of(p, self) for p in parts), "Unbind")

    def contiguous(self) -> Any:  # (a copy of a strided view, whose writes stay in it)
        if self.is_contiguous():
            return self
        if self._requires_grad:  # C-ordered, as PyTorch's (clone's product by 1 keeps a
            # dense strided layout, numpy's and PyTorch's: x.t().clone() is not contiguous)
            flat = ops.reshape(self, (-1,))  # (numpy's reshape copies in C order)
            return named(ops.reshape(flat, tuple(self.shape)), self, "CloneBackward0")
        return self.clone()

    def cpu(self) -> Any:
        return self

    def is_contiguous(self) -> bool:
        return bool(self._value.flags.c_contiguous)

    def stride(self, dim: Any = None) -> Any:
        """The steps in elements between neighbours along each dim, PyTorch's ``stride()``
        (numpy's in bytes, divided by the item size): C-ordered for a contiguous tensor,
        where numpy may give a dim of size 1 another step than PyTorch's."""
        a = self._value
        if a.flags.c_contiguous:
            steps = np.cumprod([1, *(builtins.max(n, 1) for n in a.shape[:0:-1])])[::-1]
        else:
            steps = [s // a.itemsize for s in a.strides]
        steps = tuple(int(s) for s in steps) if a.ndim else ()
        return steps if dim is None else steps[_one_dim(dim, self.ndim)]


def _softmax_input(x: Any, dtype: Any, name: str) -> Any:
    """``x`` in ``dtype``; a floating one, as PyTorch's (numpy's rules gave an integer's
    softmax in float64, or its 0-d one as an integer)."""
    x = x.to(dtype) if dtype is not None else x
    if not x.dtype.is_floating_point:
        raise NotImplementedError(
            f'"{name}_lastdim_kernel_impl" not implemented for {x.dtype}: convert it first '
            f"(x.float()) or pass dtype=")
    return x


def _integer_division(a: Any, b: Any, mode: str) -> Any:
    """``div(rounding_mode=...)`` of integer operands: an integer result, as PyTorch's
    (``trunc`` rounds toward zero, ``floor`` down); division by zero raises."""
    if mode not in ("floor", "trunc"):
        _rounded(a, mode)  # raises PyTorch's message
    out = dt.result_type([a, b])
    # each operand in the result's dtype first, as PyTorch's kernel takes them: a Python
    # int wrapped as + and // wrap it (uint8 by 300 is by 44), a 0-d int64 tensor cast
    # (by -3 is by 253); it divided by the exact values, then wrapped the quotient
    x, y = (np.asarray(wrapped_int(v, out, "floordiv") if type(v) is int
                       else getattr(v, "_value", v)).astype(out.numpy) for v in (a, b))
    if np.any(y == 0):
        raise RuntimeError("ZeroDivisionError")
    with np.errstate(all="ignore"):
        q = np.floor_divide(x, y)
        if mode == "trunc":  # floor rounds down; toward zero differs where signs differ
            q = q + ((np.remainder(x, y) != 0) & ((x < 0) != (y < 0)))
    return type(a)._make(np.asarray(q, dtype=out.numpy)) if hasattr(a, "_value") \
        else np.asarray(q, dtype=out.numpy)


def _rounded(q: Any, mode: Any) -> Any:
    if mode is None:
        return q
    if mode == "floor":
        return np.floor(q)
    if mode == "trunc":
        return np.trunc(q)
    raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                     f"found '{mode}'")


def _part_of(part: Any, whole: Any) -> Any:
    """``part`` (a reshape of a slice of ``whole``) named ``UnbindBackward0`` with
    ``whole`` shown, as :func:`.method_args.named` names it, without its walk back: the
    composite is the two nodes (attention's three parts: 0.042 -> 0.036 ms)."""
    node = part._node
    if node is None or node is whole._node:
        return part
    node.__class__ = _UNBIND
    node.shown = (whole._node if whole._node is not None else whole,)
    node.composite = node
    if isinstance(node.inputs[0], Node):  # (the slice)
        node.inputs[0].composite = node
    return part


_UNBIND = node_class("UnbindBackward0")


def _several(views: tuple[Any, ...], name: str) -> tuple[Any, ...]:
    """The views one function returned together: PyTorch refuses a recorded in-place
    change of one of them ("Output 1 of Unbind is a view..."), see :mod:`.inplace`."""
    for k, v in enumerate(views):
        if v._node is not None:
            v._multi = f"Output {k} of {name}"
    return views


def checked_alpha(a: Any, b: Any, alpha: Any) -> Any:
    """``alpha`` as PyTorch's add/sub take it (its ``alpha_check``): a bool for a bool
    result (``a + alpha * b`` is ``a or (alpha and b)``: it was int64 ``a + 2 * b``); a
    float alpha of an integer result and a bool alpha of another are PyTorch's errors."""
    out = dt.result_type([getattr(a, "_value", a), getattr(b, "_value", b)])
    if type(alpha) is bool and out is not dt.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, float) and not out.is_floating_point:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    return bool(alpha) if out is dt.bool else alpha


def _fused_add(self: Any, other: Any, alpha: Any, formula: Any, name: str) -> Any:
    """``self + alpha * other`` rounded once as PyTorch's kernel (:func:`.bf16.add_tensors`),
    recorded or not, with the gradient of ``formula()`` (:func:`.fused_values.with_value`);
    ``formula()`` itself where that kernel is not emulated."""
    value = add_tensors(self, other, alpha)
    if value is None:
        return formula()
    records = grad_mode.is_grad_enabled() and (
        self._requires_grad or getattr(other, "_requires_grad", False))
    return named(with_value(value, formula, self, records), self, name)


def _alpha_times(self: Any, other: Any, alpha: Any) -> Any:
    """``alpha * other`` in ``self.add(other, alpha=alpha)``: a recorded ``other`` broadcast
    to the result's shape first, so that its gradient is multiplied by ``alpha`` before it
    is summed over the broadcast dimensions, as PyTorch's AddBackward0/SubBackward0."""
    other = promoted(self, other)
    if getattr(other, "_requires_grad", False):
        shape = np.broadcast_shapes(np.shape(self._value), tuple(other.shape))
        if tuple(other.shape) != shape:
            other = other.expand(shape)
    return other * alpha


def promoted(self: Any, other: Any) -> Any:
    """``other`` (a Tensor or an array; ``self`` too) in the dtype of ``self + other``, where
    PyTorch computes ``alpha * other`` (int8 + 2 * uint8 is int16 arithmetic: 2 * uint8
    wrapped in uint8 before)."""
    value = getattr(other, "_value", other)
    if type(value) is not np.ndarray:
        return other  # a number: PyTorch's promotion keeps it weak
    dtype = dt.result_type([getattr(self, "_value", self), value])
    if value.dtype == dtype.numpy:
        return other
    return other.to(dtype) if hasattr(other, "_value") else value.astype(dtype.numpy)
