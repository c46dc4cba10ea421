"""``vmap``: a function of one example, mapped over a batch, as one compiled kernel.

``vmap(f, in_axes=0, out_axes=0)`` traces ``f`` once, on one example (the
batched arguments without their batch axis), and rewrites the graph so that
every value that depends on a batched argument carries a leading batch axis
(:func:`symgrad.passes.batching.batch`). The result is compiled like any
other graph, and composes: ``vmap(grad(loss), in_axes=(None, 0, 0))`` gives
per-example gradients, ``grad`` of a function that calls ``vmap`` differentiates
the batched graph, and Jacobians (:mod:`symgrad.transforms.derivatives`) map a pullback or
a pushforward over a basis.

    >>> import numpy as np, symgrad as sg
    >>> sg.vmap(lambda x, w: np.dot(x, w), in_axes=(0, None))(np.eye(3), np.arange(3.0))
    array([0., 1., 2.])
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..core.ir import Aval
from ..core.pytree import Tree, flatten, unflatten
from ..core.tracing import Tracer, current_trace, inline, shape_of
from ..numpy_api import stage
from ..numpy_api.control import PER_EXAMPLE_FIX, BoundError
from ..passes.batching import batch
from .api import Jit, Transformed
from .pipeline import kernel_input


def vmap(fun: Callable, in_axes: int | None | Sequence[int | None] = 0,
         out_axes: int | None | Sequence[int | None] = 0, backend: str = "numba") -> Any:
    """``fun`` mapped over a batch axis of its arguments.

    ``in_axes``: the batch axis of every argument (an int), or one entry per
    positional argument (an int, ``None`` for an argument that is the same for
    every example, or for a pytree argument a pytree prefix of it: ``{"w": None,
    "x": 0}``, nested tuples, lists and dicts, as JAX's). ``out_axes``: where the
    batch axis goes in each output, the same way (an int, or a pytree prefix of the
    output).
    Called on its own, the mapped function compiles to one kernel; called inside a
    transformed function, it records the batched graph there.
    """
    if not callable(fun):
        raise TypeError(f"vmap needs a function, got {type(fun).__name__}")
    return Transformed(Jit(_Mapped(fun, in_axes, out_axes), backend=backend))


class _Mapped:
    """The function a ``vmap`` compiles: called with tracers, it records ``fun``'s graph
    batched. (``fun`` is the attribute :mod:`symgrad.transforms.captured` follows.)"""

    def __init__(self, fun: Callable, in_axes: Any, out_axes: Any):
        self.fun, self.in_axes, self.out_axes = fun, in_axes, out_axes
        functools.update_wrapper(self, fun, updated=())

    def __call__(self, *args: Any) -> Any:
        into = current_trace()
        if into is None:  # (vmap always calls it inside jit's trace)
            raise RuntimeError("vmap's mapped function runs inside a trace")
        axes = _per_argument(self.in_axes, len(args), "in_axes")
        leaves: list[Any] = []
        trees, flags = [], []
        for k, (x, axis) in enumerate(zip(args, axes)):
            ls, tree = flatten(x)
            trees.append((tree, len(ls)))
            leaves += ls
            flags += _leaf_axes(axis, tree, f"in_axes of argument {k}")
        size = _batch_size(leaves, flags)
        avals: list[Aval | None] = []
        values: list[Any] = []
        for leaf, axis in zip(leaves, flags):
            if axis is None and not _is_array(leaf):
                avals.append(None)  # static: passed to fun as it is
                continue
            if axis is not None:
                leaf = np.moveaxis(leaf, axis, 0)  # a tracer's is recorded, an array's computed
            aval = leaf.aval if isinstance(leaf, Tracer) else kernel_input(leaf)[1]
            avals.append(Aval(aval.shape[1:], aval.dtype) if axis is not None else aval)
            values.append(leaf)
        try:
            staged = stage(_Rebuilt(self.fun, trees), avals, leaves, _names(len(leaves)))
        except BoundError as e:
            arg = _batched_argument(e.value, trees, flags)
            if arg is None:
                raise
            raise NotImplementedError(
                f"vmap: the fori_loop at {e.where} has a bound that is the batched argument "
                f"{arg}: a trip count that differs from example to example is not supported "
                f"(the batch runs one loop). Instead {PER_EXAMPLE_FIX}") from None
        batched_flags = [a is not None for a, av in zip(flags, avals) if av is not None]
        graph, out_flags = batch(staged.graph, [*batched_flags, *(False,) * len(staged.captured)],
                                 size)
        outs = inline(graph, [*values, *staged.captured], into, staged.const_sources)
        out_axes = _out_axes(self.out_axes, staged.out_tree, len(outs))
        result = []
        for out, batched, axis in zip(outs, out_flags, out_axes):
            if axis is None:
                if batched:
                    raise ValueError("vmap: out_axes=None for an output that depends on the "
                                     "batched arguments; give it an axis")
                result.append(out)
                continue
            if not batched:
                out = np.broadcast_to(out, (size, *shape_of(out)))
            result.append(np.moveaxis(out, 0, axis) if axis != 0 else out)
        return unflatten(staged.out_tree, result)


class _Rebuilt:
    """``fun`` of the leaves of its arguments (the arguments' pytrees rebuilt)."""

    def __init__(self, fun: Callable, trees: list):
        self.fun, self.trees = fun, trees
        self.__name__ = getattr(fun, "__name__", "f")

    def __call__(self, *leaves: Any) -> Any:
        args, k = [], 0
        for tree, n in self.trees:
            args.append(unflatten(tree, leaves[k:k + n]))
            k += n
        return self.fun(*args)


def _batched_argument(value: Any, trees: list, flags: list) -> int | None:
    """The position of the argument whose batched leaf ``value`` (a tracer) is, if any."""
    hint = getattr(getattr(value, "_var", None), "hint", None)
    names = _names(len(flags))
    if hint not in names or flags[names.index(hint)] is None:
        return None
    leaf, first = names.index(hint), 0
    for arg, (_, n) in enumerate(trees):
        if first <= leaf < first + n:
            return arg
        first += n
    return None


def _names(n: int) -> list[str]:
    return [f"x{k}" for k in range(n)]


def _is_array(x: Any) -> bool:
    return isinstance(x, (Tracer, np.ndarray, np.generic, float, int)) and not isinstance(
        x, (bool, np.bool_))


def _is_axis(a: Any) -> bool:
    return a is None or isinstance(a, int) and not isinstance(a, bool)


def _per_argument(axes: Any, n: int, what: str) -> list[Any]:
    """``in_axes`` as one entry per positional argument: an int or None for all of them,
    or a tuple (list) of one entry each, an int, None or a pytree prefix of the argument
    (as JAX's). A dict alone stands for the one argument of a one-argument call (JAX
    wants ``({...},)``; a dict cannot mean anything else)."""
    if _is_axis(axes):
        return [axes] * n
    if isinstance(axes, dict) and n == 1:
        return [axes]
    if isinstance(axes, (tuple, list)) and len(axes) == n:
        return list(axes)
    raise ValueError(f"vmap: {what} must be an int, None, or a tuple of one entry (an int, "
                     f"None or a pytree of them) per argument ({n}), not {axes!r}")


def _leaf_axes(axes: Any, tree: Tree, what: str) -> list[int | None]:
    """The axis of each leaf of a pytree of structure ``tree``, from ``axes``: an int or
    None for the whole subtree, or a pytree prefix of it (dicts by key, tuples and lists
    by position), as JAX reads ``in_axes``/``out_axes``."""
    if _is_axis(axes):
        return [axes] * tree.num_leaves
    if isinstance(axes, dict) and tree.kind == "dict" and set(axes) == set(tree.meta):
        return [a for key, child in zip(tree.meta, tree.children)
                for a in _leaf_axes(axes[key], child, f"{what}[{key!r}]")]
    if (isinstance(axes, (tuple, list)) and tree.kind in ("tuple", "list", "namedtuple")
            and len(axes) == len(tree.children)):
        return [a for k, (sub, child) in enumerate(zip(axes, tree.children))
                for a in _leaf_axes(sub, child, f"{what}[{k}]")]
    raise ValueError(f"vmap: {what} is {axes!r}, which does not match the structure {tree} "
                     "it maps: give an int or None for a whole part, or a dict, tuple or list "
                     "of the same keys or length (a pytree prefix, as JAX's)")


def _out_axes(axes: Any, tree: Tree, n: int) -> list[int | None]:
    """``out_axes`` as one entry per output leaf: a pytree prefix of the output (or, as
    before pytrees, a flat tuple of one entry per leaf)."""
    if not _is_axis(axes) and isinstance(axes, (tuple, list)) and len(axes) == n and all(
            map(_is_axis, axes)) and tree.kind not in ("tuple", "list", "namedtuple"):
        return list(axes)
    try:
        return _leaf_axes(axes, tree, "out_axes")
    except ValueError:
        if isinstance(axes, (tuple, list)) and len(axes) == n and all(map(_is_axis, axes)):
            return list(axes)
        raise


def _batch_size(leaves: list[Any], axes: list[int | None]) -> int:
    sizes = set()
    for leaf, axis in zip(leaves, axes):
        if axis is None:
            continue
        shape = np.shape(leaf) if not isinstance(leaf, Tracer) else leaf.shape
        if not -len(shape) <= axis < len(shape):
            raise ValueError(f"vmap: in_axes {axis} is out of range for an argument of shape "
                             f"{tuple(shape)}")
        sizes.add(shape[axis])
    if not sizes:
        raise ValueError("vmap: no argument is batched (every in_axes entry is None)")
    if len(sizes) > 1:
        raise ValueError(f"vmap: the batched arguments have different batch sizes "
                         f"{sorted(sizes)} along their in_axes")
    return sizes.pop()


__all__ = ["vmap"]
