"""The traced array of user code: all of numpy's API on a tracer.

:class:`ArrayMethods` gives a traced value what a numpy array has: operators
(``@`` too), ``np.<ufunc>(x)`` via ``__array_ufunc__``, public numpy
functions via ``__array_function__``, indexing, ``x.at[...]`` and the array
methods. :class:`ArrayTracer` is the tracer :func:`trace` gives the function
it traces; the eager ``symgrad.Tensor`` has the same methods.

    >>> import numpy as np
    >>> graph, _ = trace(lambda x: np.sum(x.T @ x), [Aval((2, 3))], [None], ["x"])
    >>> [e.prim.name for e in graph.eqns]
    ['transpose', 'matmul', 'sum']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..core import tracing
from ..core.errors import scipy_hint, user_location
from ..core.ir import Aval, Graph
from ..core.tracing import Tracer
from ..prims import special as S
from ..prims.operators import Operators
from . import arrays, indexing, shapes
from . import functions as F
from .dispatch import apply_ufunc, array_function


class ArrayMethods(Operators):
    """numpy's array API on a traced value (see the module docstring)."""

    __slots__ = ()

    # -- numpy protocols ----------------------------------------------------------
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return apply_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Callable, types: Any, args: Any, kwargs: Any) -> Any:
        return array_function(func, args, kwargs)

    # -- indexing ------------------------------------------------------------------
    def __iter__(self) -> Any:
        if not self.shape:
            raise TypeError("iteration over a traced scalar")
        return (self[i] for i in range(self.shape[0]))

    def __getitem__(self, index: Any) -> Any:
        return indexing.getitem(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        raise TypeError(
            f"assignment into a traced array (x[...] = v) at {user_location()}: traced arrays "
            "are immutable, because the gradient needs every intermediate value. Write "
            "x = sg.at(x)[index].set(v) (or .add(v)) instead; it returns the updated array.")

    @property
    def at(self) -> Any:
        """``x.at[index].set(v)``, as ``symgrad.at(x)[index].set(v)``."""
        return indexing.at(self)

    # -- operators beyond arithmetic -----------------------------------------------
    # (the methods that compute go through array_function: an int64 operand enters as
    # numpy's function would take it, refusing what float64 would round)
    def __matmul__(self, o): return array_function(np.matmul, (self, o), {})
    def __rmatmul__(self, o): return array_function(np.matmul, (o, self), {})

    # numpy's floor division and remainder: the quotient has zero gradient, the
    # remainder x - y * (x // y) gradients 1 and -(x // y)
    def __floordiv__(self, o): return S.floor_divide(self, o)
    def __rfloordiv__(self, o): return S.floor_divide(o, self)
    def __mod__(self, o): return S.remainder(self, o)
    def __rmod__(self, o): return S.remainder(o, self)
    def __divmod__(self, o): return S.floor_divide(self, o), S.remainder(self, o)
    def __rdivmod__(self, o): return S.floor_divide(o, self), S.remainder(o, self)

    # -- methods -------------------------------------------------------------------
    def sum(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        return array_function(np.sum, (self, axis, dtype, out, keepdims), kw)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        return array_function(np.mean, (self, axis, dtype, out, keepdims), kw)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        return array_function(np.prod, (self, axis, dtype, out, keepdims), kw)

    def max(self, axis=None, out=None, keepdims=False, **kw):
        return array_function(np.max, (self, axis, out, keepdims), kw)

    def min(self, axis=None, out=None, keepdims=False, **kw):
        return array_function(np.min, (self, axis, out, keepdims), kw)

    @property
    def T(self) -> Any:
        return F.transpose(self)

    def transpose(self, *axes: Any) -> Any:
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            return F.transpose(self, axes[0])
        return F.transpose(self, axes or None)

    def reshape(self, *shape: Any, order: str = "C") -> Any:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return F.reshape(self, shape, order=order)

    def ravel(self, order: str = "C") -> Any:
        return F.reshape(self, (-1,), order=order)

    flatten = ravel

    def squeeze(self, axis: Any = None) -> Any:
        return shapes.squeeze(self, axis)

    def repeat(self, repeats: Any, axis: Any = None) -> Any:
        return array_function(np.repeat, (self, repeats, axis), {})

    def cumsum(self, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
        return array_function(np.cumsum, (self, axis, dtype, out), {})

    def swapaxes(self, axis1: int, axis2: int) -> Any:
        return shapes.swapaxes(self, axis1, axis2)

    def take(self, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise") -> Any:
        return array_function(np.take, (self, indices, axis, out, mode), {})

    def dot(self, b: Any, out: Any = None) -> Any:
        return array_function(np.dot, (self, b, out), {})

    def copy(self) -> Any:
        return self  # traced values are immutable, so a copy is the value itself

    def astype(self, dtype: Any, copy: bool = True) -> Any:
        return F.astype(self, dtype)

    # complex values: np.real, np.imag, np.conj and np.abs (|z| of a complex value)
    @property
    def real(self) -> Any:
        return np.real(self)

    @property
    def imag(self) -> Any:
        return np.imag(self)

    def conj(self) -> Any:
        return np.conjugate(self)

    def __abs__(self) -> Any:
        return np.absolute(self)


class ArrayTracer(ArrayMethods, Tracer):
    """An array value inside a function being traced, with numpy's whole API."""

    __slots__ = ()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """numpy's object array of this array's elements, each a traced scalar: what
        ``np.array([x, y])`` and ``np.r_[x, y]`` hold. A numpy array of numbers cannot
        hold a traced value (``y[i] = x``, ``np.asarray(x, float)``): refused."""
        if (dtype is not None and np.dtype(dtype) != object) or scipy_hint():
            # (scipy's Python functions: their np.asarray of a traced value would give an
            # object array that their ufuncs cannot take; the error names symgrad's version)
            return Tracer.__array__(self, dtype, copy)
        return arrays.elements(self)

    @classmethod
    def assemble(cls, objects: np.ndarray) -> Any:
        return arrays.from_elements(objects)

    # numpy's loops over object arrays call the method named as the ufunc on each element
    # (np.exp(np.array([x, y])) calls x.exp()); conjugate is np.var's
    def conjugate(self) -> Any:
        return np.conjugate(self)

    conj = conjugate  # real values: their own conjugates

    # -- ndarray methods with numpy's signatures: the numpy function of the same name
    # (on ArrayTracer only: the eager Tensor has PyTorch's methods of these names)
    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
        return np.std(self, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, **kw)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
        return np.var(self, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, **kw)

    def clip(self, min=None, max=None, out=None, **kw):
        return np.clip(self, min, max, out=out, **kw)

    def round(self, decimals=0, out=None):
        return np.round(self, decimals, out=out)

    def ptp(self, axis=None, out=None, keepdims=False):
        return np.ptp(self, axis=axis, out=out, keepdims=keepdims)

    def trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
        return np.trace(self, offset, axis1, axis2, dtype, out)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        return np.diagonal(self, offset, axis1, axis2)

    def cumprod(self, axis=None, dtype=None, out=None):
        return np.cumprod(self, axis, dtype, out)

    def any(self, axis=None, out=None, keepdims=False, **kw):
        return np.any(self, axis=axis, out=out, keepdims=keepdims, **kw)

    def all(self, axis=None, out=None, keepdims=False, **kw):
        return np.all(self, axis=axis, out=out, keepdims=keepdims, **kw)

    def argmax(self, axis=None, out=None, **kw):
        return np.argmax(self, axis, out, **kw)

    def argmin(self, axis=None, out=None, **kw):
        return np.argmin(self, axis, out, **kw)

    def argsort(self, axis=-1, kind=None, order=None, **kw):
        return np.argsort(self, axis, kind, order, **kw)

    def sort(self, axis=-1, kind=None, order=None, **kw):
        raise TypeError(
            f"x.sort() sorts x in place (at {user_location()}), and traced arrays are "
            "immutable: write x = np.sort(x) (same arguments) instead")


def _ufunc_method(ufunc: np.ufunc) -> Callable:
    def method(self: Any, *others: Any) -> Any:
        return ufunc(self, *others)
    method.__name__ = ufunc.__name__
    return method


for _ufunc in (np.exp, np.log, np.log1p, np.expm1, np.sqrt, np.sin, np.cos, np.tan, np.tanh,
               np.sinh, np.cosh, np.arcsin, np.arccos, np.arctan, np.arcsinh, np.arccosh,
               np.arctanh, np.log2, np.log10, np.exp2, np.cbrt, np.square, np.reciprocal,
               np.sign, np.floor, np.ceil, np.trunc, np.rint, np.arctan2, np.hypot,
               np.logaddexp, np.logaddexp2, np.deg2rad, np.rad2deg, np.fabs):
    setattr(ArrayTracer, _ufunc.__name__, _ufunc_method(_ufunc))


def stage(fun: Callable, avals: Sequence[Aval | None], args: Sequence[Any],
          names: Sequence[str], kwargs: Mapping[str, Any] | None = None,
          numbers: frozenset[int] | None = None) -> tracing.Staged:
    """Stage the numpy function ``fun``: :func:`symgrad.core.tracing.stage` with
    :class:`ArrayTracer` inputs (its graph, output structure and captured tracers);
    ``numbers``: the ids of the floats it reads from outside (scalar consts)."""
    return tracing.stage(fun, avals, args, names, kwargs, tracer=ArrayTracer, numbers=numbers)


def trace(fun: Callable, avals: Sequence[Aval | None], args: Sequence[Any],
          names: Sequence[str]) -> tuple[Graph, bool]:
    """Trace the numpy function ``fun``: :func:`symgrad.core.tracing.trace` with
    :class:`ArrayTracer` inputs. Returns the graph and whether ``fun`` returned a tuple."""
    return tracing.trace(fun, avals, args, names, tracer=ArrayTracer)
