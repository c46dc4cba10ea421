"""``symgrad.Tensor``: a float64 array with PyTorch's autograd state.

A Tensor has numpy's array API (:class:`symgrad.numpy_api.ArrayMethods`), so
Python operators, ``np.exp(x)``, ``symgrad.exp(x)`` and the methods below run
the same code as a function traced by :func:`symgrad.grad`. The difference is
its trace, :data:`EAGER`: an :class:`EagerTrace` computes each operation at
once with the primitive's numpy ``impl`` and, when an input requires grad,
records a :class:`~symgrad.eager.graph.Node` (the equation and its inputs). So
every primitive the ``grad`` API supports works on Tensors, with no per-op code
here. The methods with PyTorch's names (``dim=``, ``keepdim=``, ``view``,
``t``) are thin wrappers over numpy's.

    >>> import symgrad as torch
    >>> x = torch.ones(2, 2, requires_grad=True)
    >>> out = (3 * (x + 2) ** 2).mean()
    >>> out
    tensor(27., grad_fn=<MeanBackward0>)
    >>> out.backward()
    >>> x.grad
    tensor([[4.5000, 4.5000],
            [4.5000, 4.5000]])

Data is float64 (integers are promoted; comparisons give bool tensors).
"""

from __future__ import annotations

import operator
import warnings
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.ir import Aval, Literal, Primitive
from ..core.tracing import Trace, Traced, as_constant_array, refuse_masked
from ..numpy_api import functions as ops
from ..numpy_api.tracer import ArrayMethods
from . import backward as engine
from . import grad_mode
from .backward import DTYPE_NAMES
from .graph import node_class, torch_name
from .printing import format_tensor

_NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during backward(). If you want the gradient of this "
    "non-leaf Tensor, call .retain_grad() on it before backward(); if you meant the leaf, "
    "access .grad of the leaf Tensor instead.")


def _size_arg(size: Sequence[Any]) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return tuple(operator.index(d) for d in size)


class EagerTrace(Trace):
    """The trace Tensors belong to: computes each operation now, records it if needed."""

    def apply(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        values = [a._value if isinstance(a, Tensor) else
                  float(a) if type(a) in (float, int) else as_constant_array(a) for a in args]
        aval = _shape_rule(prim, values, params)
        with np.errstate(all="ignore"):  # IEEE results (inf, nan), as the kernels give
            value = prim.impl(*values, **params)
        if type(value) is not np.ndarray or value.dtype != _DTYPES[aval.dtype]:
            value = np.asarray(value, dtype=aval.dtype)
        if not (grad_mode.is_grad_enabled() and aval.dtype == "float64"
                and any(isinstance(a, Tensor) and a._requires_grad for a in args)):
            return Tensor._make(value)
        literal_ok = prim.name in _LITERAL_PRIMS
        inputs = tuple(_operand(a, v, literal_ok) for a, v in zip(args, values))
        node = node_class(torch_name(prim))(prim, params, inputs, aval)
        node.versions = tuple((a, a._version) for a in args
                              if isinstance(a, Tensor) and a._node is None)
        return Tensor._make(value, node)


_DTYPES = {name: dtype for dtype, name in DTYPE_NAMES.items()}
_RULES: dict[tuple, Aval] = {}


def _shape_rule(prim: Primitive, values: list[Any], params: dict[str, Any]) -> Aval:
    """``prim.shape_rule`` on the values' avals (checks shapes, names the output dtype),
    memoized: a training loop asks the same question every step."""
    types = tuple(((), "float64") if type(v) is float else
                  (v.shape, DTYPE_NAMES.get(v.dtype) or v.dtype.name) for v in values)
    try:
        key: tuple | None = (prim.name, types, tuple(params.items()))
        hash(key)
    except TypeError:
        key = None
    aval = _RULES.get(key) if key is not None else None
    if aval is None:
        aval = prim.shape_rule(*(Aval(*t) for t in types), **params)
        if key is not None and len(_RULES) < 100_000:
            _RULES[key] = aval
    return aval


#: primitives whose scalar operands stay literals in the structure: the passes
#: rewrite ``x ** 2``, ``x ** 0.5`` and ``x ** -1`` as numpy computes them
_LITERAL_PRIMS = {"pow"}


def _operand(a: Any, value: Any, literal_ok: bool) -> Any:
    if isinstance(a, Tensor) and a._requires_grad:
        return a._node if a._node is not None else a  # a result's node, or a leaf
    scalar = type(value) is float or (value.ndim == 0 and not isinstance(a, Tensor))
    if scalar and (literal_ok or type(value) is not float and value.dtype != np.float64):
        return Literal(float(value) if type(value) is float else value.item())
    if scalar:  # x * (0.5 + k): a kernel input, so the structure does not change with k
        return np.array(value, dtype=np.float64)
    return value  # data: a kernel input, never a literal


EAGER = EagerTrace()



class Tensor(ArrayMethods, Traced):
    """An n-d float64 array with autograd state: ``data``, ``grad``, ``grad_fn``,
    ``requires_grad``, ``is_leaf``. ``Tensor([[1., 2.]])`` copies data;
    ``Tensor(2, 3)`` is a zero-filled tensor of that shape."""

    __slots__ = ("_value", "_node", "_requires_grad", "_grad", "_accumulate", "_version",
                 "__weakref__")
    __hash__ = object.__hash__  # type: ignore[assignment]  # by identity, as in PyTorch
    _trace = EAGER  # every operation on a Tensor is computed and recorded by it

    def __init__(self, *data: Any):
        if len(data) == 1 and not isinstance(data[0], (int, np.integer)):
            value = np.array(_unwrap(data[0]), dtype=np.float64)
        else:
            value = np.zeros(_size_arg(data))
        self._init(value, None, False)

    def _init(self, value: np.ndarray, node: Any, requires_grad: bool) -> None:
        self._value = value
        self._node = node
        self._requires_grad = requires_grad or node is not None
        self._grad: Tensor | None = None
        self._accumulate: Any = None
        self._version = 0  # bumped by in-place operations; checked by backward

    @classmethod
    def _make(cls, value: np.ndarray, node: Any = None) -> Tensor:
        t = cls.__new__(cls)
        t._init(value, node, False)
        return t

    @classmethod
    def _leaf(cls, data: Any, requires_grad: bool = False) -> Tensor:
        """A leaf sharing ``data``'s values when it is a float64 Tensor or array."""
        value = data._value if isinstance(data, Tensor) else _as_float_array(data)
        t = cls._make(value)
        t.requires_grad = requires_grad
        return t

    # -- what numpy and the ops need ----------------------------------------------
    @property
    def aval(self) -> Aval:
        return Aval(self._value.shape, self._value.dtype.name)

    @property
    def shape(self) -> tuple[int, ...]:
        return self._value.shape

    @property
    def ndim(self) -> int:
        return self._value.ndim

    @property
    def dtype(self) -> np.dtype:
        return self._value.dtype

    def size(self, dim: int | None = None) -> Any:  # type: ignore[override]
        return self.shape if dim is None else self.shape[dim]

    def dim(self) -> int:
        return self.ndim

    def numel(self) -> int:
        return self._value.size

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    # -- autograd state -------------------------------------------------------------
    @property
    def data(self) -> Tensor:
        """The values, as a tensor without history that shares them."""
        return Tensor._make(self._value)

    @data.setter
    def data(self, other: Any) -> None:
        self._value = other._value if isinstance(other, Tensor) else _as_float_array(other)

    @property
    def grad(self) -> Tensor | None:
        if self._node is not None and self._node.retained is None:
            warnings.warn(_NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: Any) -> None:
        if value is not None and np.shape(_unwrap(value)) != self.shape:
            raise RuntimeError(
                f"assigned grad has data of a different size: shape "
                f"{list(np.shape(_unwrap(value)))} for a tensor of shape {list(self.shape)}")
        self._grad = None if value is None else Tensor._leaf(value)

    @property
    def grad_fn(self) -> Any:
        return self._node

    @property
    def is_leaf(self) -> bool:
        return self._node is None

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        if self._node is not None:
            if flag:
                return  # a result that requires grad already; PyTorch allows it
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        if flag and self._value.dtype != np.float64:
            raise RuntimeError("only floating point tensors can require gradients")
        self._requires_grad = bool(flag)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        self.requires_grad = requires_grad
        return self

    def retain_grad(self) -> None:
        """Keep this non-leaf's gradient in ``.grad`` at the next backward."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._node is not None:
            self._node.retained = weakref.ref(self)

    @property
    def retains_grad(self) -> bool:
        return self._node is not None and self._node.retained is not None

    def detach(self) -> Tensor:
        return Tensor._make(self._value)

    def backward(self, gradient: Any = None, retain_graph: bool | None = None) -> None:
        """Add to each leaf's ``.grad`` the gradient of ``sum(self * gradient)``
        (``gradient`` may be omitted for a one-element tensor)."""
        engine.run_backward(self, gradient, retain_graph)

    # -- values ------------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        if self._requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                               "Use tensor.detach().numpy() instead.")
        return self._value

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self._value if dtype is None else self._value.astype(dtype)

    def item(self) -> Any:
        if self._value.size != 1:
            raise RuntimeError(f"a Tensor with {self._value.size} elements cannot be "
                               "converted to Scalar")
        return self._value.reshape(()).item()

    def tolist(self) -> Any:
        return self._value.tolist()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __bool__(self) -> bool:
        return bool(self.item())

    def __repr__(self) -> str:
        suffixes = []
        if self._node is not None:
            suffixes.append(f"grad_fn=<{self._node.name()}>")
        elif self._requires_grad:
            suffixes.append("requires_grad=True")
        return format_tensor(self._value, suffixes)

    __str__ = __repr__

    def __iter__(self) -> Any:
        return (self[i] for i in range(len(self)))

    def __getitem__(self, index: Any) -> Any:
        result = super().__getitem__(index)  # what the traced indexing supports
        return _named(result, self, "SelectBackward0") if _is_int(index) else result

    def __rsub__(self, o: Any) -> Any:
        return _named(super().__rsub__(o), self, "RsubBackward1" if _is_scalar(o) else None)

    def __rpow__(self, o: Any) -> Any:
        return _named(super().__rpow__(o), self, "PowBackward2" if _is_scalar(o) else None)

    # -- in-place ----------------------------------------------------------------------------
    def _inplace(self, fn: Any, other: Any = None, name: str | None = None) -> Tensor:
        """Replace the values by ``fn(self, other)``, in the same memory.

        When grad is enabled and ``self`` or ``other`` requires grad, the operation is
        recorded: ``self`` takes the result's node, as ``y.mul_(3)`` does in PyTorch
        (backward recomputes from the leaves, so an unrecorded change would be lost).
        Every in-place change bumps ``_version``, which backward checks against the
        versions its nodes recorded; writes through ``.data`` are not counted, as in
        PyTorch."""
        records = grad_mode.is_grad_enabled() and (
            self._requires_grad or (isinstance(other, Tensor) and other._requires_grad))
        if records and self._requires_grad and self._node is None:
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation. "
                "Update it inside `with symgrad.no_grad():` or through its .data")
        if records:
            result = fn(self, other)
            if result.shape != self.shape:
                raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the "
                                   f"broadcast shape {list(result.shape)}")
            self._value[...] = result._value
            self._node, self._requires_grad = _named(result, self, name)._node, True
        else:
            self._value[...] = fn(self._value, _unwrap(other))
        self._version += 1
        return self

    def _augmented(self, other: Any, op: Any) -> Tensor:
        """``x -= g`` and friends: in place, recorded when a graph is (see ``_inplace``)."""
        return self._inplace(op, other)

    def __iadd__(self, o): return self._augmented(o, operator.add)
    def __isub__(self, o): return self._augmented(o, operator.sub)
    def __imul__(self, o): return self._augmented(o, operator.mul)
    def __itruediv__(self, o): return self._augmented(o, operator.truediv)

    def zero_(self) -> Tensor:
        return self._inplace(_overwrite, 0.0, "ZeroBackward0")

    def fill_(self, value: Any) -> Tensor:
        return self._inplace(_overwrite, value, "FillBackward2")

    def copy_(self, other: Any) -> Tensor:
        return self._inplace(_overwrite, other, "CopyBackwards")

    def add_(self, other: Any, alpha: float = 1.0) -> Tensor:
        return self._inplace(lambda a, b: a + alpha * b if alpha != 1.0 else a + b, other)

    def sub_(self, other: Any, alpha: float = 1.0) -> Tensor:
        return self._inplace(lambda a, b: a - alpha * b if alpha != 1.0 else a - b, other)

    def mul_(self, other: Any) -> Tensor:
        return self._inplace(operator.mul, other)

    def div_(self, other: Any) -> Tensor:
        return self._inplace(operator.truediv, other)

    # -- torch-style methods (thin wrappers over numpy's) --------------------------------
    def sum(self, dim=None, keepdim=False, **kw):  # type: ignore[override]
        return self._reduce(ops.sum, "Sum", dim, keepdim, kw)

    def mean(self, dim=None, keepdim=False, **kw):  # type: ignore[override]
        return self._reduce(ops.mean, "Mean", dim, keepdim, kw)

    def prod(self, dim=None, keepdim=False, **kw):  # type: ignore[override]
        return self._reduce(ops.prod, "Prod", dim, keepdim, kw)

    def _reduce(self, op: Any, name: str, dim: Any, keepdim: bool, kw: dict) -> Any:
        """``op`` over all elements (torch's ``<name>Backward0``) or over ``dim``
        (``<name>Backward1``); numpy's ``axis=``/``keepdims=`` are accepted too."""
        dim = kw.pop("axis", dim)
        result = op(self, dim, keepdims=kw.pop("keepdims", keepdim), **kw)
        return _named(result, self, None if dim is None else f"{name}Backward1")

    def max(self, dim=None, keepdim=False, **kw):  # type: ignore[override]
        if dim is not None:
            raise NotImplementedError("max(dim) returns values and indices, and symgrad has no "
                                      "indices; use amax(dim) for the values")
        return ops.max(self, kw.pop("axis", None), keepdims=kw.pop("keepdims", False), **kw)

    def min(self, dim=None, keepdim=False, **kw):  # type: ignore[override]
        if dim is not None:
            raise NotImplementedError("min(dim) returns values and indices, and symgrad has no "
                                      "indices; use amin(dim) for the values")
        return ops.min(self, kw.pop("axis", None), keepdims=kw.pop("keepdims", False), **kw)

    def amax(self, dim=None, keepdim=False):
        return _named(ops.max(self, dim, keepdims=keepdim), self, "AmaxBackward0")

    def amin(self, dim=None, keepdim=False):
        return _named(ops.min(self, dim, keepdims=keepdim), self, "AminBackward0")

    def pow(self, exponent): return self ** exponent
    def exp(self): return np.exp(self)
    def log(self): return np.log(self)
    def log1p(self): return np.log1p(self)
    def expm1(self): return np.expm1(self)
    def sqrt(self): return np.sqrt(self)
    def sin(self): return np.sin(self)
    def cos(self): return np.cos(self)
    def tan(self): return np.tan(self)
    def tanh(self): return np.tanh(self)
    def sinh(self): return np.sinh(self)
    def cosh(self): return np.cosh(self)
    def asin(self): return np.arcsin(self)
    def acos(self): return np.arccos(self)
    def atan(self): return np.arctan(self)
    def abs(self): return np.abs(self)
    def neg(self): return -self
    def sign(self): return np.sign(self)
    def square(self): return np.square(self)
    def reciprocal(self): return np.reciprocal(self)
    def add(self, other): return self + other
    def sub(self, other): return self - other
    def mul(self, other): return self * other
    def div(self, other): return self / other
    def matmul(self, other): return self @ other
    def float(self): return self
    def double(self): return self

    def view(self, *shape: Any) -> Any:
        return ops.reshape(self, _size_arg(shape))

    def reshape(self, *shape: Any, order: str = "C") -> Any:  # type: ignore[override]
        return ops.reshape(self, _size_arg(shape), order=order)

    def view_as(self, other: Any) -> Any:
        return self.view(other.shape)

    def flatten(self) -> Any:  # type: ignore[override]
        return ops.reshape(self, (-1,))

    def t(self) -> Any:
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                               f"{self.ndim}D")
        return _named(ops.transpose(self), self, "TBackward0")

    def transpose(self, *dims: Any) -> Any:
        """``x.transpose(0, 1)`` swaps two dimensions, as in PyTorch; ``x.transpose()``
        and ``x.transpose((1, 0))`` permute them as numpy does."""
        if len(dims) == 2 and all(isinstance(d, (int, np.integer)) for d in dims):
            perm = list(range(self.ndim))
            perm[dims[0]], perm[dims[1]] = perm[dims[1]], perm[dims[0]]
            return _named(ops.transpose(self, perm), self, "TransposeBackward0")
        return super().transpose(*dims)

    def permute(self, *dims: Any) -> Any:
        return ops.transpose(self, _size_arg(dims))

    def unsqueeze(self, dim: int) -> Any:
        shape = list(self.shape)
        shape.insert(dim % (self.ndim + 1), 1)
        return _named(ops.reshape(self, tuple(shape)), self, "UnsqueezeBackward0")

    def squeeze(self, dim: int | None = None) -> Any:
        if dim is None:
            return _named(ops.reshape(self, tuple(d for d in self.shape if d != 1)), self,
                          "SqueezeBackward0")
        if self.ndim == 0 or self.shape[dim] != 1:
            return self
        shape = list(self.shape)
        del shape[dim]
        return _named(ops.reshape(self, tuple(shape)), self, "SqueezeBackward1")

    def expand(self, *sizes: Any) -> Any:
        shape = _size_arg(sizes)
        lead = len(shape) - self.ndim
        full = tuple(s if s != -1 else self.shape[i - lead] for i, s in enumerate(shape))
        return ops.broadcast_to(self, full)

    def clone(self) -> Any:
        if self._requires_grad:
            return _named(self * 1.0, self, "CloneBackward0")
        return Tensor._make(self._value.copy())


def _named(result: Any, source: Tensor, name: str | None) -> Any:
    """Give ``result``'s new node PyTorch's name for the method that made it
    (``x.t()`` is ``TBackward0``, though its primitive is ``transpose``)."""
    node = getattr(result, "_node", None)
    if name is not None and node is not None and node is not source._node:
        node.rename(name)
    return result


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _is_scalar(x: Any) -> bool:
    return isinstance(x, (int, float, np.number)) and not isinstance(x, bool)


def _overwrite(a: Any, b: Any) -> Any:
    """``b`` in ``a``'s shape; on Tensors a recorded ``a * 0 + b`` (zero gradient to ``a``)."""
    if isinstance(a, Tensor):
        return a * 0.0 + b
    return np.broadcast_to(np.asarray(b, dtype=a.dtype), a.shape)


def _unwrap(x: Any) -> Any:
    refuse_masked(x)
    if isinstance(x, Tensor):
        return x._value
    if isinstance(x, (list, tuple)):
        return [_unwrap(v) for v in x]
    return x


def _as_float_array(x: Any) -> np.ndarray:
    """Data as a float64 (or bool) array, sharing a float64 numpy array's memory."""
    return as_constant_array(_unwrap(x))
