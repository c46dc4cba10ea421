"""``torch.func.vmap``, honestly: a loop over the batch.

``vmap(func, in_dims, out_dims)(*args)`` calls ``func`` once per batch element, on
each mapped argument's slice ``x.select(in_dim, b)`` (a view, as PyTorch's batched
tensor is: an in-place change of it writes the input, as PyTorch's does), and
stacks each output along its ``out_dims`` entry. ``in_dims``/``out_dims`` are an
int, None, or a tree matching the top of the arguments (outputs); keyword
arguments are not mapped. It composes with the derivative transforms of
:mod:`.transforms` (``vmap(grad(loss))`` is a gradient per sample) and with itself.

What the loop changes: the batch costs ``func``'s time once per element (no
batched kernels; ``chunk_size`` is accepted and changes nothing), and ``func`` sees
ordinary tensors, so it may do what PyTorch's vmap refuses (``.item()``, Python
control flow on values). What symgrad refuses: an empty batch (the loop cannot size
the outputs), and an in-place change of an argument with ``in_dims`` None (PyTorch
refuses writing a batched value into an unbatched tensor; a closure's tensor
changed in place is not detected, so do not). An output with ``out_dims`` None
must be the same for every element (checked by value; PyTorch checks that it does
not depend on the batch). Randomness: ``'error'`` raises at a random draw,
``'same'`` replays the first element's draws for every element, ``'different'``
draws anew per element (independent draws, from symgrad's numpy streams: never
PyTorch's numbers).

    >>> import symgrad as torch
    >>> from symgrad.func import vmap
    >>> vmap(torch.dot)(torch.ones(2, 3), torch.arange(6.).reshape(2, 3))
    tensor([ 3., 12.])
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ..eager import random
from ..eager.functions import stack
from ..eager.tensor import Tensor
from . import pytree

__all__ = ["vmap"]

RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please "
                "either use the 'same' or 'different' randomness flags on vmap or perform the "
                "randomness operation out of vmap")


def _is_dim(d: Any) -> bool:
    return d is None or (isinstance(d, int) and not isinstance(d, bool))


def vmap(func: Callable, in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:
    """``func`` mapped over a batch dimension of its arguments (a loop; see the module)."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    name = getattr(func, "__name__", repr(func))

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        where = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
        leaves, spec = pytree.flatten(args)
        dims = _in_dims(in_dims, args, where)
        sizes = []
        for x, d in zip(leaves, dims):
            if d is None:
                continue
            if not isinstance(x, Tensor):
                raise ValueError(f"{where}: Got in_dim={d} for an input but the input is of "
                                 f"type {type(x)}. We cannot vmap over non-Tensor arguments, "
                                 "please use None as the respective in_dim")
            if not -x.dim() <= d < x.dim():
                raise ValueError(f"{where}: Got in_dim={d} for some input, but that input is "
                                 f"a Tensor of dimensionality {x.dim()} so expected in_dim to "
                                 f"satisfy -{x.dim()} <= in_dim < {x.dim()}.")
            sizes.append(x.shape[d])
        if not sizes:
            raise ValueError("vmap: Expected at least one Tensor to vmap over")
        if len(set(sizes)) > 1:
            raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                             f"dimension, got sizes {sizes} for the mapped dimension")
        if sizes[0] == 0:
            raise NotImplementedError(
                "vmap over an empty batch is not supported by symgrad: its vmap calls the "
                "function once per batch element, so it cannot know the outputs' shapes")
        fixed = [(x, x._version) for x, d in zip(leaves, dims)
                 if d is None and isinstance(x, Tensor)]
        outputs = []
        with _Randomness(randomness) as draws:
            for b in range(sizes[0]):
                draws.next_element()
                items = [x if d is None else x.select(d, b) for x, d in zip(leaves, dims)]
                outputs.append(func(*pytree.unflatten(items, spec), **kwargs))
        for x, version in fixed:
            if x._version != version:
                raise RuntimeError(
                    f"vmap({name}): an argument with in_dims None was changed in place inside "
                    "the mapped function; PyTorch refuses writing batched values into an "
                    "unbatched tensor, and symgrad's loop would have written each element's "
                    "in turn. Map that argument too, or return the values instead")
        return _stack_outputs(outputs, out_dims, name)

    return wrapper


def _in_dims(in_dims: Any, args: tuple, where: str) -> list[Any]:
    if not _is_dim(in_dims) and not isinstance(in_dims, tuple):
        raise ValueError(f"{where}: expected `in_dims` to be int or a (potentially nested) "
                         "tuple matching the structure of inputs, got: "
                         f"{type(in_dims)}.")
    dims = pytree.broadcast_prefix(in_dims, args, _is_dim)
    if dims is None:
        raise ValueError(f"{where}: in_dims is not compatible with the structure of `inputs`. "
                         f"in_dims has structure {pytree.describe(pytree.flatten(in_dims)[1])} "
                         f"but inputs has structure {pytree.describe(pytree.flatten(args)[1])}.")
    return dims


def _stack_outputs(outputs: list[Any], out_dims: Any, name: str) -> Any:
    first, spec = pytree.flatten(outputs[0])
    dims = pytree.broadcast_prefix(out_dims, outputs[0], _is_dim)
    if dims is None:
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
                         "compatible with the structure of `outputs`. out_dims has structure "
                         f"{pytree.describe(pytree.flatten(out_dims)[1])} but outputs has "
                         f"structure {pytree.describe(spec)}.")
    columns = []
    for o in outputs:
        leaves, other = pytree.flatten(o)
        if other != spec:
            raise ValueError(f"vmap({name}, ...): `{name}` returned outputs of different "
                             f"structures for different batch elements: "
                             f"{pytree.describe(spec)} and {pytree.describe(other)}")
        columns.append(leaves)
    stacked = []
    for k, (value, d) in enumerate(zip(first, dims)):
        values = [c[k] for c in columns]
        if d is None:
            if not all(_same(value, v) for v in values):
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor "
                                 "when out_dim is None")
            stacked.append(value)
            continue
        if not isinstance(value, Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(value)}. Did you mean to set out_dims= to None for output?")
        if not -value.dim() - 1 <= d <= value.dim():
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-value.dim() - 1}, {value.dim()}], but got {d})")
        stacked.append(stack(values, dim=d))
    return pytree.unflatten(stacked, spec)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        return a.shape == b.shape and bool(np.array_equal(a._value, b._value, equal_nan=True))
    return a is b or a == b


class _Randomness:
    """The random-draw guard of one vmap call (see the module docstring)."""

    def __init__(self, mode: str):
        self.mode = mode
        self.saved: dict[int, tuple[Any, Any]] = {}  # generator id -> (generator, state)
        self.used: set[int] = set()

    def __enter__(self) -> _Randomness:
        random.draw_guards.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        random.draw_guards.remove(self)

    def next_element(self) -> None:
        self.used = set()

    def __call__(self, generator: Any) -> None:
        if self.mode == "error":
            raise RuntimeError(RANDOM_ERROR)
        if self.mode == "same" and id(generator) not in self.used:
            self.used.add(id(generator))
            if id(generator) in self.saved:
                generator.set_state(self.saved[id(generator)][1])
            else:
                self.saved[id(generator)] = (generator, generator.get_state())
