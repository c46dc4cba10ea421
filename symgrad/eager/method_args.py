"""PyTorch's argument forms, as the Tensor methods read them, and their node names.

``dim=`` as sorted axes (:func:`dim_axes`: an int, a negative int, a tuple; out of
range is PyTorch's IndexError), a size given as ``(2, 3)`` or ``2, 3``
(:func:`size_arg`), Tensors as their arrays (:func:`unwrap`), and PyTorch's name
for the node a method made (:func:`named`); PyTorch's named tuples of
values and indices (:func:`return_type`). Shared by :mod:`.methods` and
:mod:`.reduction_methods`.

    >>> dim_axes(-1, 3), dim_axes((0, -1), 3), size_arg(((2, 3),)), one_dim(-1, 2)
    ((2,), (0, 2), (2, 3), 1)
"""

from __future__ import annotations

import builtins
import collections
import functools
import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.tracing import refuse_masked
from ..prims.reductions import reshape_p
from .graph import Node


def size_arg(size: Sequence[Any]) -> tuple[int, ...]:
    """``(2, 3)``, ``((2, 3),)`` and ``([2, 3],)`` as the shape ``(2, 3)``."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    if len(size) == 1 and hasattr(size[0], "_value") and getattr(size[0], "ndim", 0) == 1:
        size = tuple(size[0].tolist())
    return tuple(operator.index(d) for d in size)


def view_shape(old: tuple[int, ...], shape: Sequence[Any], name: str) -> tuple[int, ...]:
    """The shape ``shape`` (as :func:`size_arg` reads it) of ``view``/``reshape`` (``name``)
    of a tensor of shape ``old``, its one ``-1`` inferred; PyTorch's errors otherwise."""
    new = size_arg(shape)
    size = math.prod(old)
    if math.prod(new) == size and shape and (not new or min(new) >= 0):
        return new
    if not shape:  # (x.view(()) is a 0-d view, x.view() PyTorch's TypeError)
        raise TypeError('reshape() missing 1 required positional arguments: "shape"'
                        if name == "reshape" else "view() received an invalid combination of "
                        "arguments - got (), but expected one of:\n * (torch.dtype dtype)\n"
                        " * (tuple of ints size)\n")
    if new.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for i, d in enumerate(new):
        if d < -1:
            raise RuntimeError(f"invalid shape dimension {d} at index {i} of shape {list(new)}")
    known = -math.prod(new) if -1 in new else math.prod(new)
    if -1 in new and known == 0 and size == 0:
        raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(new)} because "
                           "the unspecified dimension size -1 can be any value and is ambiguous")
    if -1 not in new or known == 0 or size % known:
        raise RuntimeError(f"shape '{list(new)}' is invalid for input of size {size} ({name} "
                           f"of a tensor of shape {list(old)})")
    return tuple(size // known if d == -1 else d for d in new)


def unwrap(x: Any) -> Any:
    """Tensors (also inside lists and tuples) as their arrays; a numpy.ma masked array
    is refused (its mask would be dropped silently)."""
    refuse_masked(x)
    if hasattr(x, "_value") and hasattr(x, "_node"):
        return x._value
    if isinstance(x, (list, tuple)):
        return [unwrap(v) for v in x]
    return x


def new_view(out: Any, x: Any) -> Any:
    """``out``, or a new view of ``x`` where the operation left ``x`` as it was (numpy's
    functions hand a traced value itself back, as it cannot change): PyTorch's
    ``x.squeeze()``, ``x[:]``, ``x.expand(x.shape)`` are tensors of their own, with their
    own ``.grad``, hooks, ``retain_grad``, ``requires_grad`` and ``.data``, sharing
    ``x``'s memory and version (``x`` itself gave, with a hook on it, ``x``'s gradient
    the hook's in every use of ``x``)."""
    if out is not x:
        return out
    return x._trace.unary(reshape_p, x, {"shape": x._value.shape})  # (methods._reshaped's)


def named(result: Any, source: Any, name: str | None, shown: Sequence[Any] = ()) -> Any:
    """Give ``result``'s new node PyTorch's name for the method that made it
    (``x.t()`` is ``TBackward0``, though its primitive is ``transpose``). For a
    composite of several primitives, ``shown`` lists its operands as PyTorch's one
    node has them (``next_functions`` then skips the composite's inner nodes)."""
    node = getattr(result, "_node", None)
    if name is not None and node is not None and node is not getattr(source, "_node", None):
        node.rename(name)
        if shown:
            node.shown = tuple(_shown(a) for a in shown)
            _mark_composite(node)
    return result


def _mark_composite(last: Any) -> None:
    """Mark the nodes of the composite that ends at ``last`` (those made after its
    operands, walking back from ``last`` to them) with ``composite = last``; a single
    node (``softmax``) is no composite."""
    start = builtins.max((a.seq for a in last.shown if isinstance(a, Node)), default=-1)
    stack = [a for a in last.inputs if isinstance(a, Node) and a.seq > start]
    if not stack:  # (a single node: F.nll_loss, a softmax)
        return
    seen = {id(last): last}
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen[id(n)] = n
        stack.extend(a for a in n.inputs if isinstance(a, Node) and a.seq > start)
    for n in seen.values():
        n.composite = last


def _shown(a: Any) -> Any:
    """What ``next_functions`` shows for an operand: its node, a leaf that requires
    grad, or None."""
    node = getattr(a, "_node", None)
    if node is not None:
        return node
    return a if getattr(a, "_requires_grad", False) else None


def same_dtype(name: str, *operands: Any) -> None:
    """The Tensors among ``operands`` have one dtype, as PyTorch's products (``float32 @
    float64``), ``lerp`` and its index writes (``index_add_``, ``scatter_``) require,
    where numpy would promote: else PyTorch's RuntimeError, naming the dtypes."""
    dtypes = [t.dtype for t in operands if hasattr(t, "_value")]
    if any(d != dtypes[0] for d in dtypes[1:]):
        raise RuntimeError(f"{name}: expected the operands to have one dtype, but got "
                           f"{' and '.join(str(d) for d in dtypes)} (PyTorch does not "
                           f"promote here): convert one first, e.g. b.to(a.dtype)")


def dim_axes(dim: Any, ndim: int) -> tuple[int, ...] | None:
    """``dim`` (None, an int, a negative int, a tuple or list) as sorted axes; a bool is
    PyTorch's TypeError (``x.mean(True)``: numpy's too), not the dim 1, and so is a tuple
    that starts with one (``x.sum((True,))``; after its first element PyTorch takes a
    bool as an int: :func:`no_bool_first`)."""
    if dim is None:
        return None
    if isinstance(dim, (bool, np.bool_)):
        raise TypeError(f"argument 'dim' must be an int or a tuple of ints, not bool "
                        f"({dim}): a reduction's positional arguments are (dim, keepdim)")
    dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    no_bool_first(dims, "dim")
    if not dims:
        return None  # PyTorch: dim=() reduces over everything
    n = builtins.max(ndim, 1)
    for d in dims:
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-n}, {n - 1}], but got {d})")
    return tuple(sorted({d % n for d in dims})) if ndim else ()


def no_bool_first(dims: Sequence[Any], name: str) -> None:
    """PyTorch's TypeError for a list of ints whose first element is a bool (its parser
    tells an int list by its first element: ``(0, True)`` passes as ``(0, 1)``)."""
    if len(dims) and isinstance(dims[0], (bool, np.bool_)):
        raise TypeError(f"argument '{name}' must be a tuple of ints, but found element of "
                        f"type bool at pos 0 ({tuple(dims)})")


def ndim_of(x: Any) -> int:
    return len(np.shape(x)) if not hasattr(x, "shape") else len(x.shape)


def one_dim(dim: Any, ndim: int) -> int:
    if isinstance(dim, (bool, np.bool_)):
        dim_axes(dim, ndim)  # raises PyTorch's TypeError
    (d,) = dim_axes(operator.index(dim), ndim) or (0,)
    return d


def keepdim_arg(keepdim: Any, name: str = "keepdim") -> bool:
    """``keepdim`` (or another flag), which PyTorch takes only as a bool (``x.sum(0, 1)``,
    ``x.sort(0, 1)`` are its TypeError)."""
    if type(keepdim) is not bool:
        raise TypeError(f"argument '{name}' must be bool, not {type_name(keepdim)}")
    return keepdim


def type_name(x: Any) -> str:
    """``x``'s type as PyTorch's messages name it: ``int``, ``numpy.bool``."""
    kind = type(x)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"


def int_arg(value: Any, name: str) -> int:
    """An int argument (``k``, ``start_dim``), which PyTorch takes as an int or anything
    with ``__index__`` but a bool (``x.topk(True)`` is its TypeError, not k = 1)."""
    if isinstance(value, (bool, np.bool_)) or getattr(value, "dtype", None) == np.bool_:
        raise TypeError(f"argument '{name}' must be int, not bool")
    return operator.index(value)


def return_type(name: str, fields: tuple[str, str] = ("values", "indices")) -> type:
    """PyTorch's ``torch.return_types.<name>``: a named tuple (values, indices)."""
    base = collections.namedtuple(name, fields)  # type: ignore[misc]

    def __repr__(self: Any) -> str:
        return (f"torch.return_types.{name}(\n{fields[0]}={self[0]},\n"
                f"{fields[1]}={self[1]})")

    return type(name, (base,), {"__slots__": (), "__repr__": __repr__})


def keeps_bool(op: Any) -> Any:
    """A structural method (it moves elements, computes none) that keeps a bool tensor
    bool, as PyTorch's: computed on its 0/1 values as uint8 (exact) and made bool again,
    where numpy's API would make the bools float64."""
    @functools.wraps(op)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        if self._value.dtype != np.bool_:
            return op(self, *args, **kwargs)
        return op(self.byte(), *args, **kwargs).bool()
    return run
