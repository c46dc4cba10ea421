"""``symgrad.vmap``: JAX's ``vmap`` on arrays, PyTorch's ``torch.vmap`` on Tensors.

``import symgrad as torch; torch.vmap(f)(x)`` is PyTorch's (:func:`symgrad.func.vmap`,
a loop over the batch giving Tensors) and ``sg.vmap(f)(array)`` is JAX's
(:func:`symgrad.transforms.vectorize.vmap`, one compiled kernel giving arrays). Which
one runs is decided by the arguments of each call: Tensors anywhere in them (pytrees
included) make it PyTorch's, arrays, tracers and numbers alone JAX's. The keywords
may fix it instead: ``in_dims``, ``out_dims``, ``randomness`` or ``chunk_size``
are PyTorch's, ``in_axes`` or ``out_axes`` JAX's (the second and third positional
arguments mean the same in both; ``backend``, the numpy side's compiler, fixes
nothing, but not with PyTorch's keywords). Never a guess: Tensors mixed with numpy
arrays or tracers in one call, keywords of both, or arguments of the other kind than
the keywords raise a TypeError that says which to use.

    >>> import numpy as np, symgrad as torch
    >>> torch.vmap(torch.dot)(torch.ones(2, 3), torch.arange(6.).reshape(2, 3))
    tensor([ 3., 12.])
    >>> torch.vmap(lambda x, w: np.dot(x, w), (0, None), backend="numpy")(np.eye(2),
    ...                                                                   np.arange(2.0))
    array([0., 1.])
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from .core.pytree import flatten
from .core.tracing import Tracer
from .eager.tensor import Tensor
from .func.vmap import vmap as torch_vmap
from .transforms import vectorize

__all__ = ["vmap"]

_TORCH = ("in_dims", "out_dims", "randomness", "chunk_size")
_JAX = ("in_axes", "out_axes")
_UNSET: Any = object()
_PLAIN = frozenset((np.ndarray, float, int))  # a top-level argument needing no pytree walk


def vmap(fun: Callable, in_axes: Any = _UNSET, out_axes: Any = _UNSET, fourth: Any = _UNSET,
         /, **options: Any) -> Any:
    """``fun`` mapped over a batch axis: PyTorch's on Tensors, JAX's on arrays (see the
    module). The fourth positional argument is PyTorch's ``randomness`` or JAX's
    ``backend``, told apart by its value."""
    unknown = set(options) - {*_TORCH, *_JAX, "backend"}
    if unknown:
        raise TypeError(f"vmap() got unexpected keyword arguments {sorted(unknown)}; PyTorch's "
                        f"are {list(_TORCH)}, JAX's {[*_JAX, 'backend']}")
    if fourth is not _UNSET:
        key = "randomness" if fourth in ("error", "same", "different") else "backend"
        if key in options:
            raise TypeError(f"vmap() got multiple values for argument {key!r}")
        options[key] = fourth
    backend = options.pop("backend", _UNSET)  # (the numpy side's compiler: either side)
    torch_keys = sorted(k for k in options if k in _TORCH)
    jax_keys = sorted(k for k in options if k in _JAX)
    if torch_keys and backend is not _UNSET:
        jax_keys.append("backend")
    if torch_keys and jax_keys:
        raise TypeError(f"vmap: {torch_keys} are torch.vmap's keywords and {jax_keys} JAX's; "
                        "use one kind: torch.vmap(f, in_dims, out_dims, randomness) on Tensors, "
                        "sg.vmap(f, in_axes, out_axes, backend) on numpy arrays (or both kinds)")
    dims = _positional(in_axes, out_axes, options, "in_dims" if torch_keys else "in_axes",
                       "out_dims" if torch_keys else "out_axes")
    side = "torch" if torch_keys else "jax" if jax_keys else None
    return _EitherVmap(fun, dims, options, side, "numba" if backend is _UNSET else backend)


def _positional(in_axes: Any, out_axes: Any, options: dict, in_name: str,
                out_name: str) -> tuple[Any, Any]:
    for value, name in ((in_axes, in_name), (out_axes, out_name)):
        if value is not _UNSET and name in options:
            raise TypeError(f"vmap() got multiple values for argument {name!r}")
    return (options.pop(in_name, 0 if in_axes is _UNSET else in_axes),
            options.pop(out_name, 0 if out_axes is _UNSET else out_axes))


class _EitherVmap:
    """The mapped function; both sides are built up front (neither traces until called)."""

    def __init__(self, fun: Callable, dims: tuple[Any, Any], options: dict,
                 side: str | None, backend: str):
        self.side = side
        self._torch = self._jax = None
        if side != "jax":
            self._torch = torch_vmap(fun, *dims, **options)
        if side != "torch":
            self._jax = vectorize.vmap(fun, *dims, backend=backend)
        # (captured.py follows .fun into the numpy side's Transformed; a torch-only one has
        # the plain function)
        self.fun = self._jax if self._jax is not None else fun
        functools.update_wrapper(self, fun, updated=())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        jax = self._jax
        if jax is not None and not kwargs:  # the common call: arrays (no pytree walk)
            for a in args:
                if type(a) not in _PLAIN:
                    break
            else:
                return jax(*args)
        tensors, arrays = _kinds((args, kwargs))
        if tensors and arrays:
            raise TypeError(
                f"vmap: the arguments mix Tensors and {arrays[0]}s; symgrad.vmap is "
                "torch.vmap on Tensors and JAX's vmap on numpy arrays (decided by the "
                "arguments): convert the arrays with torch.as_tensor, or the Tensors "
                "with .numpy()")
        if tensors:
            if self._torch is None:
                raise TypeError("vmap: called on Tensors, but in_axes=/out_axes= made it "
                                "JAX's numpy vmap; write in_dims=/out_dims= for torch.vmap, "
                                "or pass numpy arrays")
            return self._torch(*args, **kwargs)
        if jax is None:
            raise TypeError("vmap: called without Tensors, but in_dims=/out_dims=/randomness=/"
                            "chunk_size= made it torch.vmap; pass Tensors, or write in_axes=/"
                            "out_axes= for JAX's vmap over numpy arrays")
        return jax(*args, **kwargs)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        """As a method (``@sg.vmap`` in a class body): bound to ``obj``, argument 0 (as
        the numpy side's and PyTorch's)."""
        return self if obj is None else _BoundEither(self, obj)

    def __getattr__(self, name: str) -> Any:  # (.graph, .lower, ...: the numpy side's)
        jax = self.__dict__.get("_jax")
        if jax is None:
            raise AttributeError(name)
        return getattr(jax, name)


class _BoundEither:
    """A ``vmap`` used as a method, bound to its object (argument 0); the numpy side's
    attributes (``.graph``, ...) bound too."""

    def __init__(self, either: _EitherVmap, obj: Any):
        self.either, self.obj = either, obj
        functools.update_wrapper(self, either, updated=())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.either(self.obj, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        jax = self.__dict__["either"].__dict__.get("_jax")
        if jax is None:
            raise AttributeError(name)
        return getattr(jax.__get__(self.__dict__["obj"]), name)


def _kinds(tree: Any) -> tuple[bool, list[str]]:
    """Whether ``tree`` holds a Tensor, and the kinds of numpy values it holds."""
    leaves, _ = flatten(tree)  # (JAX's pytrees: registered nodes too)
    tensors = any(isinstance(x, Tensor) for x in leaves)
    arrays = [("tracer" if isinstance(x, Tracer) else "numpy array") for x in leaves
              if isinstance(x, (np.ndarray, Tracer))]  # (numbers, numpy's too, go either way)
    return tensors, arrays
