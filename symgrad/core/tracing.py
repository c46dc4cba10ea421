"""Tracing: run code on tracers and record the IR it performs.

A :class:`Tracer` stands for an array whose value is not known yet. Every
operation on one ends in :func:`apply`, which appends one equation to the
tracer's :class:`Trace` (or, with no traced operand, computes it with numpy).
The operators and numpy's API on tracers are added by the layers above:
:class:`symgrad.prims.tracer.PrimTracer` (arithmetic, for VJP rules) and
:class:`symgrad.numpy_api.ArrayTracer` (all of numpy, for user code); a trace makes
tracers of the class it was given. Python control flow runs at trace time,
once; ``bool()`` of a traced value therefore raises
:class:`TracerBoolConversionError`, which points to ``symgrad.where``.

The trace interface is open: any :class:`Traced` value names the trace that
records operations on it. The eager layer's ``Tensor`` is one, whose trace
computes each operation as it records it.
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
    user_location,
)
from .ir import Atom, Aval, Eqn, Graph, Literal, Primitive, Var, freeze_params, usable


class Trace:
    """The equations recorded so far while tracing one function."""

    def __init__(self, eqns: Sequence[Eqn] = (), consts: Sequence[tuple[Var, np.ndarray]] = (),
                 tracer: type[Tracer] | None = None):
        self.eqns: list[Eqn] = list(eqns)
        self._consts: dict[int, tuple[Var, np.ndarray]] = {id(a): (v, a) for v, a in consts}
        self._sources: list[Any] = []  # user arrays behind consts: their ids stay unique
        self.active = True
        #: the class of the tracers this trace makes
        self.tracer: type[Tracer] = tracer or Tracer
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

        The one hook for other kinds of trace: :class:`symgrad.eager.tensor.EagerTrace`
        computes the value at once and returns a ``Tensor``.
        """
        return self.tracer(self.bind(prim, [self.atom(a) for a in args], params), self)

    def atom(self, x: Any) -> Atom:
        """The IR atom for an operand: a tracer's var, a literal, or a constant."""
        if isinstance(x, (Var, Literal)):
            return x
        if isinstance(x, Tracer):
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
    """The trace of the first Tracer among ``args``, else that of the first other
    :class:`Traced` value, else the innermost recording one.

    A function being traced wins over eager values (``symgrad.Tensor``), which it
    takes as constants."""
    other = None
    for a in args:
        if isinstance(a, Tracer):
            return a._trace
        if other is None and isinstance(a, Traced):
            other = a._trace
    return other or (_ACTIVE[-1] if _ACTIVE else None)


def shape_of(x: Any) -> tuple[int, ...]:
    """The shape of a traced or concrete value."""
    return x.shape if isinstance(x, Traced) else np.shape(x)


def apply(prim: Primitive, *args: Any, **params: Any) -> Any:
    """``prim(*args, **params)``: recorded while tracing, computed with numpy otherwise."""
    trace = find_trace(args)
    if trace is None:
        with np.errstate(all="ignore"):
            return prim.impl(*(as_constant_array(a) for a in args), **params)
    return trace.apply(prim, args, params)


class Traced:
    """A value whose operations a trace records: ``_trace`` is that trace.

    A :class:`Tracer` is the symbolic kind, whose value is a ``Var``; the eager
    layer's ``Tensor`` has its value, and a trace that computes each operation
    as it records it. Both have ``shape``, ``ndim`` and ``dtype``.
    """

    __slots__ = ()
    _trace: Trace


class Tracer(Traced):
    """An array value inside a function being traced; records what is done to it.

    This class knows the value's type and refuses every conversion that would
    need the value; subclasses add the operations (see the module docstring).
    """

    __slots__ = ("_var", "_trace")

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


def trace(fun: Callable, avals: Sequence[Aval | None], args: Sequence[Any],
          names: Sequence[str], tracer: type[Tracer] = Tracer) -> tuple[Graph, bool]:
    """Trace ``fun`` with tracers (of class ``tracer``) where ``avals`` has an aval,
    ``args`` elsewhere.

    Returns the graph and whether ``fun`` returned a tuple (``False``: a single
    value, the graph's only output).
    """
    t = Trace(tracer=tracer)
    inputs: list[Var] = []
    call_args = []
    for aval, arg, name in zip(avals, args, names):
        if aval is None:
            call_args.append(arg)
        else:
            v = Var(aval, name)
            inputs.append(v)
            call_args.append(tracer(v, t))
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


__all__ = ["Trace", "Traced", "Tracer", "apply", "arg_names", "as_constant_array",
           "find_trace", "recording", "shape_of", "trace"]
