"""Tracing: run plain numpy code on tracers and record the IR it performs.

A :class:`Tracer` stands for an array whose value is not known yet. Python
operators, ``np.<ufunc>(tracer)`` (via ``__array_ufunc__``), public numpy
functions (via ``__array_function__``) and array methods all end in
:func:`symgrad.ops.apply`, which appends one equation to the current
:class:`Trace`. Python control flow runs at trace time, once; ``bool()`` of a
traced value therefore raises :class:`TracerBoolConversionError`, which points
to ``symgrad.where``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from .errors import (
    EscapedTracerError,
    TracerBoolConversionError,
    TracerConversionError,
    UnsupportedFunctionError,
    user_location,
)
from .ir import Atom, Aval, Eqn, Graph, Literal, Primitive, Var, freeze_params


class Trace:
    """The equations recorded so far while tracing one function."""

    def __init__(self, eqns: Sequence[Eqn] = (), consts: Sequence[tuple[Var, np.ndarray]] = ()):
        self.eqns: list[Eqn] = list(eqns)
        self._consts: dict[int, tuple[Var, np.ndarray]] = {id(a): (v, a) for v, a in consts}
        self._sources: list[Any] = []  # user arrays behind consts: their ids stay unique
        self.active = True
        #: values are computed as operations are recorded (symgrad.autograd's trace)
        self.eager = False
        #: set by the adjoint transform to the primal equation whose VJP runs now
        self.origin: Eqn | None = None

    @property
    def consts(self) -> tuple[tuple[Var, np.ndarray], ...]:
        return tuple(self._consts.values())

    def bind(self, prim: Primitive, inputs: Sequence[Atom], params: dict[str, Any]) -> Var:
        """Append ``prim(*inputs, **params)`` and return its fresh output."""
        if not self.active:
            raise _escaped()
        out = Var(prim.shape_rule(*(a.aval for a in inputs), **params))
        self.eqns.append(Eqn(prim, tuple(inputs), out, freeze_params(params), self.origin))
        return out

    def apply(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        """``prim(*args, **params)`` on operands: record it and return a tracer of the result.

        The one hook for other kinds of trace: :class:`symgrad.autograd.EagerTrace`
        computes the value at once and returns a ``Tensor``.
        """
        return Tracer(self.bind(prim, [self.atom(a) for a in args], params), self)

    def atom(self, x: Any) -> Atom:
        """The IR atom for an operand: a tracer's var, a literal, or a constant."""
        if isinstance(x, (Var, Literal)):
            return x
        if isinstance(x, Tracer):
            if x._trace.eager and not self.eager:  # a symgrad.Tensor: its value is a constant
                return self.constant(np.asarray(x))
            if x._trace is not self:
                if not x._trace.active:
                    raise _escaped()
                raise EscapedTracerError(
                    f"a traced value of another function being traced was used at "
                    f"{user_location()}; nesting symgrad transformations is not supported yet")
            return x._var
        return self.constant(x)

    def constant(self, x: Any) -> Atom:
        """A Python/numpy scalar becomes a literal, an array a (deduplicated) const."""
        array = as_constant_array(x)
        if array.ndim == 0:
            value = array[()]
            return Literal(bool(value) if array.dtype == np.bool_ else float(value))
        key = id(x)  # ``x`` is kept alive in ``_sources``, so its id stays its own
        if key not in self._consts:
            frozen = np.array(array, copy=True, order="C")  # kernels take C-contiguous arrays
            frozen.flags.writeable = False
            self._consts[key] = (Var(Aval(frozen.shape, frozen.dtype.name)), frozen)
            self._sources.append(x)
        return self._consts[key][0]

    def to_graph(self, inputs: Sequence[Var], outputs: Sequence[Any], name: str) -> Graph:
        return Graph(tuple(inputs), tuple(self.eqns), tuple(self.atom(o) for o in outputs),
                     self.consts, name)


def _escaped() -> EscapedTracerError:
    return EscapedTracerError(
        f"a traced value was used after its function returned (at {user_location()}); "
        "do not keep traced values in globals or closures between calls")


def as_constant_array(x: Any, what: str = "") -> np.ndarray:
    """``x`` as a float64 (or bool) array: the one place that decides which dtypes
    symgrad accepts. Anything else is a TypeError about ``what`` (default: ``x``
    itself, formatted only then)."""
    if isinstance(x, Tracer):
        raise TypeError(f"{_subject(x, what)} is a traced value: calling a symgrad-"
                        "transformed function inside another traced function is not "
                        "supported yet")
    try:
        array = np.asarray(x)
    except Exception as e:  # ragged lists and the like
        raise TypeError(f"{_subject(x, what)} is not array-like: {e}") from None
    kind = array.dtype.kind
    if kind == "b":
        return array
    if kind in "iuf":
        return array.astype(np.float64, copy=False)  # integers are promoted
    if kind == "c":
        raise TypeError(f"{_subject(x, what)} is complex ({array.dtype}): symgrad "
                        "differentiates real float64 functions; pass the real and imaginary "
                        "parts separately")
    raise TypeError(f"{_subject(x, what)} has dtype {array.dtype}, which symgrad cannot "
                    "trace: only numbers, bools and numeric arrays can be mixed with traced "
                    "values")


def _subject(x: Any, what: str) -> str:
    """How error messages name ``x``: its repr is formatted only when one is raised."""
    return what or f"{type(x).__name__} {x!r:.60}"


#: traces being recorded, innermost last: operations on constants inside a
#: traced function (or a VJP rule) are recorded too, not computed eagerly
_ACTIVE: list[Trace] = []


@contextmanager
def recording(trace: Trace) -> Iterator[Trace]:
    """Make ``trace`` the one that operations on constants are recorded in."""
    _ACTIVE.append(trace)
    try:
        yield trace
    finally:
        _ACTIVE.pop()


def find_trace(args: Sequence[Any]) -> Trace | None:
    """The trace of the first traced argument, else the innermost recording one.

    A function being traced wins over eager values (``symgrad.Tensor``), which it
    takes as constants."""
    eager = None
    for a in args:
        if isinstance(a, Tracer):
            if not a._trace.eager:
                return a._trace
            eager = eager or a._trace
    return eager or (_ACTIVE[-1] if _ACTIVE else None)


class Tracer:
    """An array value inside a function being traced; records what is done to it."""

    __slots__ = ("_var", "_trace")
    __array_priority__ = 1000

    def __init__(self, var: Var, trace: Trace):
        self._var = var
        self._trace = trace

    # -- what is known before the value exists -------------------------------
    @property
    def aval(self) -> Aval:
        return self._var.aval

    @property
    def shape(self) -> tuple[int, ...]:
        return self._var.shape

    @property
    def ndim(self) -> int:
        return len(self._var.shape)

    @property
    def size(self) -> int:
        return self._var.aval.size

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self._var.dtype)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a traced scalar")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"Traced<{self.aval}>"

    # -- numpy protocols ----------------------------------------------------------
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        from . import ops

        return ops.apply_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Callable, types: Any, args: Any, kwargs: Any) -> Any:
        from . import ops

        impl = ops.HANDLED_FUNCTIONS.get(func)
        if impl is None:
            raise UnsupportedFunctionError(
                f"np.{_qualname(func)} is not supported on traced values (at {user_location()}); "
                "symgrad.ops.supported_functions() lists what is")
        return impl(*args, **kwargs)

    # -- conversions that would need the value --------------------------------
    def __bool__(self) -> bool:
        raise TracerBoolConversionError(
            f"Python control flow on a traced value at {user_location()}: `if`, `while`, "
            f"`and`, `or`, `not` and bool() need a concrete truth value, but this {self.aval} "
            "value is only known when the compiled function runs. symgrad traces your "
            "function once for all inputs; select values elementwise with "
            "symgrad.where(condition, a, b) (or np.where) instead.")

    def _concrete(self, what: str) -> Any:
        raise TracerConversionError(
            f"{what} of a traced value at {user_location()}: the value of this {self.aval} "
            "array is not known while symgrad traces your function. Use numpy functions "
            "(np.exp, not math.exp) and keep the value an array.")

    def __float__(self) -> float:
        return self._concrete("float()")

    def __int__(self) -> int:
        return self._concrete("int()")

    def __index__(self) -> int:
        return self._concrete("using as an index or int")

    def __complex__(self) -> complex:
        return self._concrete("complex()")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self._concrete("converting to a numpy array (np.asarray)")

    def tolist(self) -> list:
        return self._concrete("tolist()")

    def item(self) -> float:
        return self._concrete("item()")

    def __iter__(self) -> Any:
        if not self.shape:
            raise TypeError("iteration over a traced scalar")
        return (self[i] for i in range(self.shape[0]))

    def __getitem__(self, index: Any) -> Any:
        return _array().getitem(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        raise TypeError(
            f"assignment into a traced array (x[...] = v) at {user_location()}: traced arrays "
            "are immutable, because the gradient needs every intermediate value. Write "
            "x = sg.at(x)[index].set(v) (or .add(v)) instead; it returns the updated array.")

    @property
    def at(self) -> Any:
        """``x.at[index].set(v)``, as ``symgrad.at(x)[index].set(v)``."""
        return _array().at(self)

    # -- operators -----------------------------------------------------------------
    def __add__(self, o): return _ops().add(self, o)
    def __radd__(self, o): return _ops().add(o, self)
    def __sub__(self, o): return _ops().subtract(self, o)
    def __rsub__(self, o): return _ops().subtract(o, self)
    def __mul__(self, o): return _ops().multiply(self, o)
    def __rmul__(self, o): return _ops().multiply(o, self)
    def __truediv__(self, o): return _ops().divide(self, o)
    def __rtruediv__(self, o): return _ops().divide(o, self)
    def __pow__(self, o): return _ops().power(self, o)  # numpy's fast paths: passes.simplify
    def __rpow__(self, o): return _ops().power(o, self)
    def __neg__(self): return _ops().negative(self)
    def __pos__(self): return self
    def __abs__(self): return _ops().absolute(self)
    def __lt__(self, o): return _ops().less(self, o)
    def __le__(self, o): return _ops().less_equal(self, o)
    def __gt__(self, o): return _ops().greater(self, o)
    def __ge__(self, o): return _ops().greater_equal(self, o)
    def __eq__(self, o): return _ops().equal(self, o)  # type: ignore[override]
    def __ne__(self, o): return _ops().not_equal(self, o)  # type: ignore[override]
    __hash__ = None  # type: ignore[assignment]  # elementwise ==, as numpy arrays

    def __matmul__(self, o): return _ops().linalg.matmul(self, o)
    def __rmatmul__(self, o): return _ops().linalg.matmul(o, self)

    def __floordiv__(self, o: Any) -> Any:
        raise UnsupportedFunctionError(f"floor division (//) at {user_location()} is not supported")

    __rfloordiv__ = __mod__ = __rmod__ = __floordiv__

    # -- methods -------------------------------------------------------------------
    def sum(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        return _ops().sum(self, axis, dtype, out, keepdims, **kw)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        return _ops().mean(self, axis, dtype, out, keepdims, **kw)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        return _ops().prod(self, axis, dtype, out, keepdims, **kw)

    def max(self, axis=None, out=None, keepdims=False, **kw):
        return _ops().max(self, axis, out, keepdims, **kw)

    def min(self, axis=None, out=None, keepdims=False, **kw):
        return _ops().min(self, axis, out, keepdims, **kw)

    @property
    def T(self) -> Any:
        return _ops().transpose(self)

    def transpose(self, *axes: Any) -> Any:
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            return _ops().transpose(self, axes[0])
        return _ops().transpose(self, axes or None)

    def reshape(self, *shape: Any, order: str = "C") -> Any:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return _ops().reshape(self, shape, order=order)

    def ravel(self, order: str = "C") -> Any:
        return _ops().reshape(self, (-1,), order=order)

    flatten = ravel

    def squeeze(self, axis: Any = None) -> Any:
        return _array().squeeze(self, axis)

    def repeat(self, repeats: Any, axis: Any = None) -> Any:
        return _array().repeat(self, repeats, axis)

    def cumsum(self, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
        return _array().cumsum(self, axis, dtype, out)

    def swapaxes(self, axis1: int, axis2: int) -> Any:
        return _array().swapaxes(self, axis1, axis2)

    def take(self, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise") -> Any:
        return _array().take(self, indices, axis, out, mode)

    def dot(self, b: Any, out: Any = None) -> Any:
        return _ops().linalg.dot(self, b, out)

    def copy(self) -> Tracer:
        return self  # traced values are immutable, so a copy is the value itself

    def astype(self, dtype: Any, copy: bool = True) -> Any:
        return _ops().astype(self, dtype)


def _ops():  # ops imports this module; resolve it when an operator first runs
    from . import ops

    return ops


def _array():  # the array family imports ops, which imports this module
    from . import array

    return array


def _qualname(func: Callable) -> str:
    """``sum`` for ``np.sum``, ``linalg.svd`` for ``np.linalg.svd``."""
    module = (getattr(func, "__module__", None) or "").removeprefix("numpy").lstrip(".")
    name = getattr(func, "__name__", repr(func))
    return f"{module}.{name}" if module else name


def trace(fun: Callable, avals: Sequence[Aval | None], args: Sequence[Any],
          names: Sequence[str]) -> tuple[Graph, bool]:
    """Trace ``fun`` with tracers where ``avals`` has an aval, ``args`` elsewhere.

    Returns the graph and whether ``fun`` returned a tuple (``False``: a single
    value, the graph's only output).
    """
    t = Trace()
    inputs: list[Var] = []
    call_args = []
    for aval, arg, name in zip(avals, args, names):
        if aval is None:
            call_args.append(arg)
        else:
            v = Var(aval, name)
            inputs.append(v)
            call_args.append(Tracer(v, t))
    try:
        with recording(t):
            result = fun(*call_args)
    finally:
        t.active = False
    is_tuple = isinstance(result, (tuple, list))
    outputs = list(result) if is_tuple else [result]
    for o in outputs:
        if o is None:
            raise TypeError(f"{_fun_name(fun)} returned None; return the value to differentiate")
    return t.to_graph(inputs, outputs, _fun_name(fun)), is_tuple


def _fun_name(fun: Callable) -> str:
    """The function's name, for the graph and its kernel; ``f`` where that name would
    not work as a kernel's (a keyword, ``np``, ``range``, ...)."""
    from .pretty import usable

    name = getattr(fun, "__name__", "f")
    return name if isinstance(name, str) and usable(name) else "f"


def arg_names(fun: Callable, count: int) -> list[str]:
    """Names of the first ``count`` positional parameters (``arg3`` where unknown)."""
    try:
        params = [p for p in inspect.signature(fun).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params[:count]]
    return names + [f"arg{i}" for i in range(len(names), count)]


__all__ = ["Trace", "Tracer", "arg_names", "as_constant_array", "find_trace", "recording",
           "trace"]
