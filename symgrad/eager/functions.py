"""Torch-style functions: ``symgrad.exp``, ``symgrad.cat``, ``symgrad.mm``,
``symgrad.max``, ... (re-exported by :mod:`symgrad`).

The elementwise ones are numpy's ufuncs, so they take Tensors, numpy arrays and
values traced by ``sg.grad`` alike. The others are the Tensor methods of
:mod:`.methods` as functions (``torch.clamp(x, min=0)`` is ``x.clamp(min=0)``),
taking Tensors (a numpy array or a list is made a tensor first), plus the
functions of several tensors: ``cat``, ``stack``, ``where``.

    >>> import symgrad as torch
    >>> a = torch.ones(2, 2, requires_grad=True)
    >>> torch.cat([a, 2 * a], dim=1).sum()
    tensor(12., grad_fn=<SumBackward0>)
    >>> torch.max(torch.tensor([[1, 5], [4, 2]]), dim=0)
    torch.return_types.max(
    values=tensor([4, 5]),
    indices=tensor([1, 0]))
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..numpy_api import functions as ops
from ..numpy_api import shapes as shape_ops
from . import dtypes as dt
from .method_args import same_dtype
from .methods import named
from .tensor import Tensor

exp, log, log1p, expm1, sqrt = np.exp, np.log, np.log1p, np.expm1, np.sqrt
sin, cos, tan, tanh, sinh, cosh = np.sin, np.cos, np.tan, np.tanh, np.sinh, np.cosh
asin, acos, atan, abs, square = np.arcsin, np.arccos, np.arctan, np.abs, np.square


def sign(input: Any) -> Any:
    """``torch.sign``: ``Tensor.sign`` (0 at NaN, PyTorch's), numpy's on other values."""
    return input.sign() if isinstance(input, Tensor) else np.sign(input)


def pow(input: Any, exponent: Any) -> Any:
    """``torch.pow``: ``input ** exponent`` when either is a Tensor (PyTorch's integer
    powers, :func:`.op_dtypes.int_power`), numpy's ``power`` on other values."""
    if isinstance(input, Tensor):
        return input ** exponent
    if isinstance(exponent, Tensor) and not hasattr(input, "_trace"):
        return exponent.__rpow__(input) if np.ndim(input) == 0 else _as_tensor(input) ** exponent
    return np.power(input, exponent)


maximum, minimum = np.maximum, np.minimum


def matmul(input: Any, other: Any) -> Any:
    """``torch.matmul``: ``input @ other``, which refuses two dtypes as PyTorch's does
    (numpy's ``matmul`` of Tensors would promote)."""
    return input @ other if isinstance(input, Tensor) else np.matmul(input, other)


atan2, neg, reciprocal = np.arctan2, np.negative, np.reciprocal
floor, ceil, trunc = np.floor, np.ceil, np.trunc


def _as_tensor(x: Any) -> Any:
    if isinstance(x, Tensor) or hasattr(x, "_trace"):
        return x
    return Tensor._leaf(np.asarray(x))


#: reductions that also take numpy arrays and values traced by ``sg.grad`` as they are
_ARRAY_FORMS = {"sum": ops.sum, "mean": ops.mean, "prod": ops.prod, "amax": ops.max,
                "amin": ops.min, "logsumexp": ops.logsumexp}


def _method(name: str) -> Callable[..., Any]:
    def fn(input: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(input, Tensor):
            if name in _ARRAY_FORMS:
                # torch's dim/keepdim, or numpy's axis/keepdims (sg.logsumexp(x, axis=1))
                axis = kwargs.pop("axis", args[0] if args else None)
                dim = kwargs.pop("dim", axis)
                keepdims = kwargs.pop("keepdims", args[1] if len(args) > 1 else False)
                keepdim = kwargs.pop("keepdim", keepdims)
                return _ARRAY_FORMS[name](input, dim, keepdims=keepdim, **kwargs)
            if name == "t":
                return ops.transpose(input)
            if hasattr(input, "_trace"):
                raise TypeError(f"torch.{name} takes Tensors; on a value traced by sg.grad "
                                "use the numpy function instead")
            if name == "remainder" and len(args) == 1 and isinstance(args[0], Tensor):
                return args[0].__rmod__(input)  # a number % a Tensor: its own overload
        return getattr(_as_tensor(input), name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.{name}(input, ...)``: ``input.{name}(...)``."
    return fn


_METHODS = ("sum mean prod max min amax amin argmax argmin std var norm logsumexp cumsum "
            "clamp clip mm mv dot outer t transpose permute "
            "reshape flatten squeeze unsqueeze flip narrow chunk split unbind gather sort topk "
            "clone detach numel allclose equal rsqrt log2 log10 round isnan isfinite "
            "logical_not all any tril triu roll trace cumprod cummax cummin logcumsumexp erf "
            "erfinv "
            "scatter scatter_add scatter_reduce index_add index_select "
            "fmod remainder floor_divide lerp addmm bitwise_and bitwise_or bitwise_xor "
            "bitwise_not bitwise_left_shift bitwise_right_shift select diagonal index_put "
            "median nanmean nan_to_num fmax fmin argsort index_fill").split()
for _name in _METHODS:
    globals()[_name] = _method(_name)
del _name


def _dual(name: str, numpy_fn: Callable[..., Any]) -> Callable[..., Any]:
    """A function that is PyTorch's on a Tensor and numpy_api's on arrays and traced values
    (``sg.softmax(x, axis=-1)`` inside ``sg.grad``, ``torch.softmax(x, dim=1)`` on Tensors)."""
    def fn(input: Any, dim: Any = None, *args: Any, axis: Any = None, **kwargs: Any) -> Any:
        if isinstance(input, Tensor):
            if name in ("softmax", "log_softmax"):
                dim = -1 if dim is None and axis is None else dim if dim is not None else axis
                return getattr(input, name)(dim, *args, **kwargs)
            return getattr(input, name)()
        if name in ("softmax", "log_softmax"):
            return numpy_fn(input, axis=-1 if dim is None and axis is None else
                            dim if dim is not None else axis)
        return numpy_fn(input)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``{name}``: PyTorch's ``torch.{name}`` on a Tensor, ``symgrad.{name}`` of the "
                  "numpy API on arrays and traced values.\n\n" + (numpy_fn.__doc__ or ""))
    return fn


relu = _dual("relu", ops.relu)
sigmoid = _dual("sigmoid", ops.sigmoid)
softmax = _dual("softmax", ops.softmax)
log_softmax = _dual("log_softmax", ops.log_softmax)


def where(condition: Any, input: Any = None, other: Any = None) -> Any:
    """``torch.where(cond, x, y)``: elementwise selection (the unselected branch gets
    an exact zero gradient); ``torch.where(cond)`` is ``cond.nonzero(as_tuple=True)``."""
    if input is None and other is None:
        return tuple(Tensor._make(i.astype(np.int64))
                     for i in np.nonzero(np.asarray(getattr(condition, "_value", condition))))
    if isinstance(condition, Tensor) and type(input) in (int, float, bool) \
            and type(other) in (int, float, bool):
        # numbers: the tensor PyTorch makes (int64 for ints, the default float for floats)
        kind = dt.result_type([input, other])
        input, other = (Tensor._leaf(np.asarray(v, dtype=kind.numpy)) for v in (input, other))
    # (the condition as a Tensor: the node watches its version, as PyTorch's saves it)
    return named(ops.where(condition, input, other), input, "WhereBackward0")


def div(input: Any, other: Any, *, rounding_mode: str | None = None) -> Any:
    """``torch.div``: true division, or rounded (``'trunc'``, ``'floor'``), integer for
    integer operands."""
    return _as_tensor(input).div(other, rounding_mode)


divide = true_divide = div


def add(input: Any, other: Any, *, alpha: Any = 1) -> Any:
    """``torch.add``: ``input + alpha * other``."""
    return _as_tensor(input).add(other, alpha)


def sub(input: Any, other: Any, *, alpha: Any = 1) -> Any:
    """``torch.sub``: ``input - alpha * other``."""
    return _as_tensor(input).sub(other, alpha)


def mul(input: Any, other: Any) -> Any:
    """``torch.mul``: ``input * other``."""
    return _as_tensor(input).mul(other)


def cat(tensors: Sequence[Any], dim: int = 0, out: Any = None) -> Any:
    """``torch.cat``: joins tensors along an existing dimension (dtypes promoted)."""
    tensors = [_as_tensor(t) for t in tensors]
    result_dtype = dt.result_type([t._value if isinstance(t, Tensor) else t for t in tensors])
    tensors = [t.to(result_dtype) if isinstance(t, Tensor) else t for t in tensors]
    if len(tensors) == 1:
        return tensors[0].clone()
    if result_dtype is dt.bool:  # joined as uint8 (numpy's API would make bools float64)
        return cat([t.byte() for t in tensors], dim).bool()
    return named(shape_ops.concatenate(tensors, axis=dim), tensors[0], "CatBackward0", tensors)


concat = concatenate = cat


def stack(tensors: Sequence[Any], dim: int = 0, out: Any = None) -> Any:
    """``torch.stack``: joins tensors of one shape along a new dimension."""
    tensors = [_as_tensor(t) for t in tensors]
    shapes = {tuple(t.shape) for t in tensors}
    if len(shapes) != 1:
        raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                           f"{[list(t.shape) for t in tensors]}")
    ndim = tensors[0].ndim + 1
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                         f"{ndim - 1}], but got {dim})")
    return named(cat([t.unsqueeze(dim % ndim) for t in tensors], dim % ndim), tensors[0],
                 "StackBackward0", tensors)


def is_tensor(obj: Any) -> bool:
    return isinstance(obj, Tensor)


def is_floating_point(input: Any) -> bool:
    return input.is_floating_point()


def result_type(tensor1: Any, tensor2: Any) -> dt.dtype:
    """``torch.result_type``: the dtype PyTorch's promotion gives ``tensor1 op tensor2``."""
    return dt.result_type([getattr(a, "_value", a) for a in (tensor1, tensor2)])


def get_default_dtype() -> dt.dtype:
    """float64 unless :func:`set_default_dtype` chose float32 (PyTorch's default is float32)."""
    return dt.DEFAULT


def set_default_dtype(d: Any) -> None:
    """The dtype of new float tensors (``torch.tensor([1.0])``, ``torch.zeros``, layers'
    parameters): float64 (symgrad's default) or float32, for the whole process, as
    PyTorch's."""
    kind = dt.as_dtype(d)
    if kind not in (dt.float64, dt.float32):
        raise TypeError(f"only floating-point types are supported as the default type, "
                        f"not {kind}")
    dt.DEFAULT = kind


def einsum(equation: str, *operands: Any) -> Any:
    """``torch.einsum``: numpy's ``einsum`` on Tensors (operands may also come as one list)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    operands = tuple(_as_tensor(o) for o in operands)
    same_dtype("einsum", *operands)
    if isinstance(equation, str):
        equation, operands = _diagonals(equation, operands)
    return np.einsum(equation, *operands)


def _diagonals(equation: str, operands: tuple) -> tuple[str, tuple]:
    """A subscript repeated in one operand (``"ii->"``) taken as that operand's diagonal
    first, as PyTorch's einsum does: a view (its node saves nothing) instead of a masked
    sum (``where``, whose node saves its mask)."""
    lhs, arrow, out = equation.replace(" ", "").partition("->")
    terms = [_labels(t) for t in lhs.split(",")]
    if len(terms) != len(operands) or builtins.all(
            len(set(t)) == len(t) or t.count("...") > 1 for t in terms):
        return equation, operands
    if not arrow:  # (implicit output: the labels seen once, sorted)
        letters = [c for t in terms for c in t if c != "..."]
        out = ("..." if "..." in lhs else "") + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1))
    new_terms, new = [], []
    for n, (t, x) in enumerate(zip(terms, operands)):
        while rep := next((c for c in t if c != "..." and t.count(c) > 1), None):
            i, j = [k for k, c in enumerate(t) if c == rep][:2]
            e = t.index("...") if "..." in t else len(t)  # (labels after it: from the end)
            d1, d2 = (k if k < e else k - len(t) for k in (i, j))
            if x.ndim != len(t) - ("..." in t) and "..." not in t or x.ndim < len(t) - 1:
                break  # (the wrong number of subscripts: np.einsum says so)
            if x.shape[d1] != x.shape[d2]:
                raise RuntimeError(f"einsum(): subscript {rep} is repeated for operand {n} "
                                   f"but the sizes don't match, {x.shape[d2]} != "
                                   f"{x.shape[d1]}")
            x = x.diagonal(0, d1, d2)
            t = [c for k, c in enumerate(t) if k not in (i, j)] + [rep]
        new_terms.append("".join(t))
        new.append(x)
    return ",".join(new_terms) + "->" + out, tuple(new)


def _labels(term: str) -> list[str]:
    """``"i...j"`` as ``["i", "...", "j"]``."""
    head, dots, tail = term.partition("...")
    return [*head, *([dots] if dots else []), *tail]


__all__ = ["exp", "log", "log1p", "expm1", "sqrt", "sin", "cos", "tan", "tanh", "sinh", "cosh",
           "asin", "acos", "atan", "abs", "sign", "square", "pow", "matmul", "maximum",
           "minimum", "atan2", "neg", "reciprocal", "floor", "ceil", "trunc", *_METHODS,
           "relu", "sigmoid", "softmax", "log_softmax", "where", "cat", "concat", "stack",
           "is_tensor", "is_floating_point", "result_type", "get_default_dtype",
           "set_default_dtype", "einsum", "div", "divide", "true_divide"]


def cdist(x1: Any, x2: Any, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Any:
    """``torch.cdist``: the ``p``-norm distances between the rows of ``x1`` (..., P, M)
    and of ``x2`` (..., R, M), shape (..., P, R). As PyTorch's: a zero distance has
    gradient 0; for ``p=2`` with more than 25 rows (or ``compute_mode=
    'use_mm_for_euclid_dist'``) the distances come from ``|x1|^2 + |x2|^2 - 2 x1 x2``
    (matrix products; rounding near zero as PyTorch's)."""
    x1, x2 = _as_tensor(x1), _as_tensor(x2)
    if x1.ndim < 2 or x2.ndim < 2 or x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"cdist only supports at least 2D tensors with the same number of "
                           f"columns, got X1: {x1.ndim}D, X2: {x2.ndim}D")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    modes = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
             "donot_use_mm_for_euclid_dist")
    if compute_mode not in modes:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    mm = p == 2 and (compute_mode == modes[1] or compute_mode == modes[0] and (
        x1.shape[-2] > 25 or x2.shape[-2] > 25))
    if mm:  # PyTorch's _euclidean_dist
        n1, n2 = (x1 * x1).sum(-1, keepdim=True), (x2 * x2).sum(-1, keepdim=True)
        ones1, ones2 = n1.detach() * 0 + 1, n2.detach() * 0 + 1
        left = cat([x1 * -2, n1, ones1], -1)
        right = cat([x2, ones2, n2], -1)
        squares = left @ right.transpose(-2, -1)
        # sqrt(clamp_min(squares, 0)) with gradient 0 where it is 0 (PyTorch's is 0 where
        # its rounding left the square negative, inf where exactly 0)
        positive = squares._value > 0
        return ops.where(positive, np.sqrt(ops.where(positive, squares, 1.0)), 0.0)
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    if p == 1:
        return diff.abs().sum(-1)
    if p == float("inf"):
        return diff.abs().amax(-1)
    if p == 0:
        return (diff != 0).to(diff.dtype).sum(-1) + diff.sum(-1) * 0  # no gradient
    total = diff.abs() ** p if p != 2 else diff * diff
    total = total.sum(-1)
    zero = total.detach() == 0  # gradient 0 at a zero distance, as PyTorch's
    safe = ops.where(zero._value, 1.0, total)
    root = np.sqrt(safe) if p == 2 else safe ** (1.0 / p)
    return named(ops.where(zero._value, 0.0, root), x1, "CdistBackward0", (x1, x2))


__all__ += ["cdist"]
