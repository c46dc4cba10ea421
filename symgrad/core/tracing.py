"""Tracing: run code on tracers and record the IR it performs.

A :class:`Tracer` stands for an array whose value is not known yet. Every
operation on one ends in :func:`apply`, which appends one equation to the
tracer's :class:`Trace` (or, with no traced operand, computes it with numpy).
The operators and numpy's API on tracers are added by the layers above:
:class:`symgrad.prims.operators.PrimTracer` (arithmetic, for VJP rules) and
:class:`symgrad.numpy_api.ArrayTracer` (all of numpy, for user code); a trace makes
tracers of the class it was given. Python control flow runs at trace time,
once; ``bool()`` of a traced value therefore raises
:class:`TracerBoolConversionError`, which points to ``symgrad.where``.

The trace interface is open: any :class:`Traced` value names the trace that
records operations on it. The eager layer's ``Tensor`` is one, whose trace
computes each operation as it records it.

The messages of its errors, and the operands it refuses, are :mod:`.trace_errors`'s.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import (
    EscapedTracerError,
    TracerBoolConversionError,
    TracerConversionError,
    user_location,
)
from .ir import (
    INT,
    Atom,
    Aval,
    Eqn,
    Graph,
    Literal,
    Primitive,
    Var,
    freeze_params,
    usable,
)
from .pytree import LEAF, Tree, flatten
from .trace_errors import (
    BUILD_INSTEAD,
    NUMPY_HOLDS,
    complex_aval,
    escaped,
    inside_numpy,
    refuse_complex,
    refuse_masked,
    subject,
    written_into_numpy,
)


class Trace:
    """The equations recorded so far while tracing one function.

    Traces nest (a transformed function called inside a function being traced):
    ``level`` is the depth of this trace on its thread's stack of recording
    traces. A tracer of an enclosing trace (a lower level) used here is *lifted*:
    it becomes an extra input of this trace (``captured``), which the caller
    feeds with the enclosing tracer when it inlines this trace's graph.
    """

    def __init__(self, eqns: Sequence[Eqn] = (), consts: Sequence[tuple[Var, np.ndarray]] = (),
                 tracer: type[Tracer] | None = None, numbers: frozenset[int] = frozenset(),
                 user: bool = False):
        self.eqns: list[Eqn] = list(eqns)
        self._consts: dict[int, tuple[Var, np.ndarray]] = {id(a): (v, a) for v, a in consts}
        self._sources: list[Any] = []  # user arrays behind consts: their ids stay unique
        #: id(const var) -> the user's object it was made from
        self.const_sources: dict[int, Any] = {}
        #: id(enclosing var) -> (enclosing tracer, the input var standing for it here)
        self.captured: dict[int, tuple[Tracer, Var]] = {}
        self.level = 0  # set by recording(); 0: not on a stack (eager, or not yet recording)
        self.active = True
        #: the class of the tracers this trace makes
        self.tracer: type[Tracer] = tracer or Tracer
        #: set by the adjoint transform to the primal equation whose VJP runs now
        self.origin: Eqn | None = None
        #: ids of the floats the function reads from outside (symgrad.transforms.captured): these
        #: become scalar consts, kernel arguments, not literals in the kernel's source
        self.numbers = numbers
        #: ids of the numbers inlined graphs gave for their literal outputs (kept alive in
        #: ``_sources``): literals still, though they are numpy scalars
        self._literals: set[int] = set()
        #: whether this trace runs the user's code (:func:`stage`), whose numpy numbers
        #: may come from arrays read from outside; a transform's own trace (an adjoint,
        #: a batching) computes on numpy scalars that stand for literals of its graph
        self.user = user

    @property
    def consts(self) -> tuple[tuple[Var, np.ndarray], ...]:
        return tuple(self._consts.values())

    def bind(self, prim: Primitive, inputs: Sequence[Atom], params: dict[str, Any]) -> Var:
        """Append ``prim(*inputs, **params)`` and return its fresh output."""
        if not self.active:
            raise escaped()
        if not prim.complex and any(complex_aval(a.aval) for a in inputs):
            raise refuse_complex(prim.name, inputs)
        out = Var(prim.shape_rule(*(a.aval for a in inputs), **params))
        if not prim.complex and complex_aval(out.aval):
            raise refuse_complex(prim.name, inputs)
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
            other = x._trace
            if other is self:
                return x._var
            if not other.active:
                raise escaped()
            if 0 < other.level < self.level:
                return self._lift(x)
            raise EscapedTracerError(
                f"a traced value of an inner transformed function was used outside of it at "
                f"{user_location()}; return it from that function instead")
        if isinstance(x, np.ndarray) and x.dtype == object:  # numpy's array of traced elements
            return self.atom(self.tracer.assemble(x))
        return self.constant(x)  # numbers, arrays, and eager values (Tensors) as constants

    def _lift(self, x: Tracer) -> Var:
        """The input of this trace that stands for ``x``, a tracer of an enclosing trace."""
        entry = self.captured.get(id(x._var))
        if entry is None:
            entry = self.captured[id(x._var)] = (x, Var(x.aval, x._var.hint))
        return entry[1]

    def constant(self, x: Any, keep: bool = False) -> Atom:
        """A Python number becomes a literal; an array, and a number the kernel takes as
        an argument (:meth:`takes_as_argument`, or any 0-d value with ``keep``: a 0-d
        const of a graph being inlined), a (deduplicated) const. A const made from a
        Python float read from outside is weak in dtype promotion, as the float is
        (``x32 * c`` stays float32, as in numpy)."""
        array = as_constant_array(x)
        if array.ndim == 0 and not (keep or self.takes_as_argument(x, array)):
            value = array[()]
            return Literal(bool(value) if array.dtype == np.bool_ else
                           complex(value) if array.dtype.kind == "c" else float(value))
        key = id(x)  # ``x`` is kept alive in ``_sources``, so its id stays its own
        if key not in self._consts:
            frozen = np.array(array, copy=True, order="C")  # kernels take C-contiguous arrays
            frozen.flags.writeable = False
            weak = type(x) is float and id(x) in self.numbers
            var = Var(Aval(frozen.shape, frozen.dtype.name, weak=weak))
            self._consts[key] = (var, frozen)
            self._sources.append(x)
            self.const_sources[id(var)] = x
        return self._consts[key][0]

    def takes_as_argument(self, x: Any, array: np.ndarray | None = None) -> bool:
        """Whether a number ``x`` used here is a 0-d const, a kernel argument, rather than
        a literal in the kernel's source: a float read from outside (``numbers``); a
        number numpy computed while tracing (a numpy float or integer such as ``W[0]``,
        ``np.sum(W)`` of an array ``W`` the function reads from outside, or a 0-d array)
        in the user's code (``user``), whose value may change with ``W``'s content: as an
        argument, a new content retraces at most and reuses the kernel; a float32 scalar
        (a literal is float64). A literal result of an inlined graph (:func:`inline`)
        stays a literal."""
        if isinstance(x, (bool, np.bool_)) or id(x) in self._literals:
            return False
        if self.user and isinstance(x, (np.ndarray, np.floating, np.integer)):
            return True
        if array is not None and array.dtype in (np.float32, np.complex64):
            return True
        return isinstance(x, float) and id(x) in self.numbers

    def to_graph(self, inputs: Sequence[Var], outputs: Sequence[Any], name: str) -> Graph:
        return Graph(tuple(inputs), tuple(self.eqns), tuple(self.atom(o) for o in outputs),
                     self.consts, name)


def as_constant_array(x: Any, what: str = "") -> np.ndarray:
    """``x`` as a float64, float32, complex128, complex64 (or bool) array: the one place
    that decides which dtypes symgrad accepts. float32 and complex64 stay as they are;
    integers, float16, bfloat16 and longdouble become float64 (as before float32 kernels). Anything
    else is a TypeError about ``what`` (default: ``x`` itself, formatted only then); a
    masked array too (:func:`refuse_masked`)."""
    refuse_masked(x, what)
    if isinstance(x, Tracer):  # (a Tensor is no Tracer: np.asarray gives its value)
        raise TypeError(f"{subject(x, what)} is a traced value of a function being traced: "
                        "its value is known only when the compiled function runs, so it "
                        "cannot be used where a concrete array is needed")
    if type(x) is int and not -2 ** 63 <= x < 2 ** 63:
        return np.asarray(float(x))  # a Python int beyond int64 meets floats as numpy's does
    try:
        array = np.asarray(x)
    except Exception as e:  # ragged lists and the like
        raise TypeError(f"{subject(x, what)} is not array-like: {e}") from None
    kind = array.dtype.kind
    if kind == "b":
        return array
    if array.dtype == np.float32:
        return array
    if kind in "iuf" or array.dtype.name == "bfloat16":  # (ml_dtypes' bfloat16, as float16)
        return array.astype(np.float64, copy=False)  # integers are promoted
    if kind == "c":  # complex64 stays, complex128 and clongdouble are complex128
        return array if array.dtype == np.complex64 else array.astype(np.complex128, copy=False)
    raise TypeError(f"{subject(x, what)} has dtype {array.dtype}, which symgrad cannot "
                    "trace: only numbers, bools and numeric arrays can be mixed with traced "
                    "values")


class _Stack(threading.local):
    """The traces being recorded on this thread, innermost last: operations on
    constants inside a traced function (or a VJP rule) are recorded too, not
    computed eagerly. Per thread, so that threads trace independently."""

    def __init__(self) -> None:
        self.traces: list[Trace] = []


_STACK = _Stack()


@contextmanager
def recording(trace: Trace) -> Iterator[Trace]:
    """Make ``trace`` the one that operations on constants are recorded in."""
    stack = _STACK.traces
    stack.append(trace)
    trace.level = len(stack)
    try:
        yield trace
    finally:
        stack.pop()


def recording_depth() -> int:
    """How many traces are being recorded on this thread (nested transformations)."""
    return len(_STACK.traces)


class _Mode(threading.local):
    """Per thread: the recording depth of forward mode's adjoint (None: none runs)."""

    depth: int | None = None


_MODE = _Mode()


@contextmanager
def forward_mode() -> Iterator[None]:
    """Around the double VJP's differentiation in the dummy cotangent
    (:func:`symgrad.transforms.derivatives.jvp`): there a custom_vjp's ``bwd`` must not be
    differentiated in its cotangent. Only that adjoint is forward mode's: it records in
    one trace above the traces recording now, while the adjoints of the pullback it
    traces (reverse mode, such as the inner ``jacrev`` of ``hessian``) record deeper."""
    before = _MODE.depth
    _MODE.depth = recording_depth() + 1
    try:
        yield
    finally:
        _MODE.depth = before


def in_forward_mode() -> bool:
    """Whether the adjoint running a VJP rule now is forward mode's (see above)."""
    return _MODE.depth == recording_depth()


def current_trace() -> Trace | None:
    """The innermost trace being recorded on this thread, if any."""
    stack = _STACK.traces
    return stack[-1] if stack else None


def find_trace(args: Sequence[Any]) -> Trace | None:
    """The innermost trace among the Tracers in ``args``, else that of the first other
    :class:`Traced` value, else the innermost recording one.

    A function being traced wins over eager values (``symgrad.Tensor``), which it
    takes as constants."""
    best = other = None
    for a in args:
        if isinstance(a, Tracer):
            t = a._trace
            if best is None or t.level > best.level:
                best = t
        elif other is None and isinstance(a, Traced):
            other = a._trace
    return best or other or current_trace()


def shape_of(x: Any) -> tuple[int, ...]:
    """The shape of a traced or concrete value."""
    return x.shape if isinstance(x, Traced) else np.shape(x)


def apply(prim: Primitive, *args: Any, **params: Any) -> Any:
    """``prim(*args, **params)``: recorded while tracing, computed with numpy otherwise."""
    trace = find_trace(args)
    if trace is None:
        arrays = [as_constant_array(a) for a in args]
        if not prim.complex and any(a.dtype.kind == "c" for a in arrays):
            # (a trace refuses it in bind: sg.sigmoid(z) of a plain complex array took
            # the real part)
            raise refuse_complex(prim.name, [Var(Aval(a.shape, a.dtype.name)) for a in arrays])
        with np.errstate(all="ignore"):
            return prim.impl(*_weak_numbers(args, arrays), **params)
    return trace.apply(prim, args, params)


_NUMBERS = (int, float, complex)


def _weak_numbers(args: Sequence[Any], arrays: list[np.ndarray]) -> list[np.ndarray]:
    """Python numbers next to float32 or complex64 arrays (and no wider ones) in their
    precision, as numpy 2 promotes them (NEP 50): ``x32 - 1.0`` is float32, and so is
    ``sg.logsumexp(x32)`` computed without a trace."""
    strong = {a.dtype for x, a in zip(args, arrays) if type(x) not in (*_NUMBERS, bool)}
    if not strong or not strong <= {np.dtype(np.float32), np.dtype(np.complex64),
                                    np.dtype(np.bool_)} or strong == {np.dtype(np.bool_)}:
        return arrays
    return [a.astype(np.complex64 if a.dtype.kind == "c" else np.float32)
            if type(x) in _NUMBERS else a for x, a in zip(args, arrays)]


class Traced:
    """A value whose operations a trace records: ``_trace`` is that trace.

    A :class:`Tracer` is the symbolic kind, whose value is a ``Var``; the eager
    layer's ``Tensor`` has its value, and a trace that computes each operation
    as it records it. Both have ``shape``, ``ndim`` and ``dtype``.
    """

    __slots__ = ()
    _trace: Trace

    def _held_value(self) -> np.ndarray:
        """The value, where it exists now (a Tensor's), for a transformed function that
        takes this as an argument: it computes with the value, as of a numpy array."""
        raise NotImplementedError

    @classmethod
    def _holding(cls, value: np.ndarray) -> Traced:
        """A value of this kind that holds ``value`` and has no history (a Tensor)."""
        raise NotImplementedError


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
            "symgrad.where(condition, a, b) (or np.where), run one of two functions with "
            "sg.cond(pred, true_fun, false_fun, *operands), and loop while a traced "
            "condition holds with sg.while_loop(cond_fun, body_fun, init)." + inside_numpy())

    def _concrete(self, what: str) -> Any:
        raise TracerConversionError(
            f"{what} of a traced value at {user_location()}: the value of this {self.aval} "
            "array is not known while symgrad traces your function. Use numpy functions "
            "(np.exp, not math.exp) and keep the value an array." + inside_numpy())

    @classmethod
    def assemble(cls, objects: np.ndarray) -> Any:
        """One traced array from numpy's object array of traced elements (what
        ``np.array([x, y])`` makes); tracers of this class cannot."""
        raise TypeError(f"a numpy object array {objects!r:.60} is not something symgrad can "
                        "trace here; build arrays of traced values with np.stack")

    def __float__(self) -> float:
        return self._concrete("float()")

    def __int__(self) -> int:
        return self._concrete("int()")

    def __index__(self) -> int:
        if self._var.dtype == "int64":  # range(n), x[i] with a traced integer
            raise TracerConversionError(
                f"a traced integer was used as a Python int (range(n), x[i]) at "
                f"{user_location()}: its value is known only when the compiled function "
                "runs. Loop over it with sg.fori_loop(0, n, body_fun, init), read one row of "
                "xs per step with sg.scan(f, init, xs), or make the argument static "
                "(static_argnums=...)")
        return self._concrete("using as an index or int")

    def __complex__(self) -> complex:
        return self._concrete("complex()")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        # numpy asks for this in np.array([x, y]), np.asarray(x) and y[...] = x
        raise TracerConversionError(
            f"a traced value was converted to a numpy array (by np.array, np.asarray, or "
            f"y[i] = x into a numpy array) at {user_location()}: {NUMPY_HOLDS} this "
            f"{self.aval} value is known only when the compiled function runs. {BUILD_INSTEAD}"
            + inside_numpy())


    def tolist(self) -> list:
        return self._concrete("tolist()")

    def item(self) -> float:
        return self._concrete("item()")


@dataclass(frozen=True)
class Staged:
    """A traced function: its graph and what the caller needs to run or inline it.

    ``graph.inputs`` are the traced arguments in order, then one input per
    enclosing tracer the function captured (``captured``, in the same order);
    ``const_sources`` maps ``id`` of a const var to the user object it came from.
    """

    graph: Graph
    is_tuple: bool                 # the function returned a container (out_tree not a leaf)
    captured: tuple[Tracer, ...]
    const_sources: Mapping[int, Any]
    out_tree: Tree = LEAF          # the structure of what the function returned


def stage(fun: Callable, avals: Sequence[Aval | None], args: Sequence[Any],
          names: Sequence[str], kwargs: Mapping[str, Any] | None = None,
          tracer: type[Tracer] = Tracer, numbers: frozenset[int] | None = None) -> Staged:
    """Trace ``fun`` with tracers (of class ``tracer``) where ``avals`` has an aval,
    ``args`` elsewhere.

    ``kwargs`` are passed by name: those with an aval in ``avals`` (which then lists
    the positional arguments, then the keyword ones in ``kwargs`` order) are traced.
    Called while another function is traced, the new trace nests inside it.

    ``numbers`` are the ids of the floats ``fun`` reads from outside (from
    :func:`symgrad.transforms.captured.world`), which become scalar consts; a nested trace
    inherits those of the trace it nests in.
    """
    if numbers is None:
        outer = current_trace()
        numbers = outer.numbers if outer is not None else frozenset()
    t = Trace(tracer=tracer, numbers=numbers, user=True)
    inputs: list[Var] = []
    call_args = []
    kwargs = kwargs or {}
    values = [*args, *kwargs.values()]
    for aval, arg, name in zip(avals, values, [*names, *kwargs]):
        if aval is None:
            call_args.append(arg)
        else:
            v = Var(aval, name)
            inputs.append(v)
            call_args.append(tracer(v, t))
    call_kwargs = dict(zip(kwargs, call_args[len(args):]))
    try:
        with recording(t):
            result = fun(*call_args[:len(args)], **call_kwargs)
            outputs, out_tree = flatten(result)  # a tuple, list or dict: several outputs
            outputs = [t.atom(o) if isinstance(o, np.ndarray) and o.dtype == object else o
                       for o in outputs]  # np.array([x, y]) returned: one traced array
    except ValueError as e:
        written = written_into_numpy(e)
        if written is None:
            raise
        raise written.with_traceback(e.__traceback__) from None  # the traceback of y[i] = x
    finally:
        t.active = False
    if not outputs:
        raise TypeError(f"{_fun_name(fun)} returned {result!r}, which holds no value; return "
                        "the value to differentiate")
    graph = t.to_graph(inputs, outputs, _fun_name(fun))  # before reading captured: atoms lift
    lifted = tuple(t.captured.values())
    graph = Graph((*graph.inputs, *(v for _, v in lifted)), graph.eqns, graph.outputs,
                  graph.consts, graph.name)
    return Staged(graph, out_tree.kind != "leaf", tuple(x for x, _ in lifted),
                  dict(t.const_sources), out_tree)


def inline(graph: Graph, inputs: Sequence[Any], into: Trace,
           const_sources: Mapping[int, Any] = {}) -> list[Any]:  # noqa: B006 -- read only
    """Record ``graph``'s equations in the trace ``into``, fed with ``inputs`` (tracers
    or values, one per graph input); its outputs, as tracers (numbers for literals).

    A const of ``graph`` made from a user's object (``const_sources``) becomes a
    const of ``into`` made from the same object, so ``into`` sees where it came from.
    """
    env: dict[int, Atom] = {id(v): into.atom(_integer(x) if v.dtype == INT else x)
                            for v, x in zip(graph.inputs, inputs, strict=True)}
    for var, frozen in graph.consts:  # a 0-d const stays one (a kernel argument)
        env[id(var)] = into.constant(const_sources.get(id(var), frozen), keep=True)
    for e in graph.eqns:
        ins = [env[id(a)] if isinstance(a, Var) else a for a in e.inputs]
        env[id(e.out)] = into.bind(e.prim, ins, dict(e.params))
    return [into.tracer(env[id(o)], into) if isinstance(o, Var) else _literal(o, into)
            for o in graph.outputs]


def _literal(o: Literal, into: Trace) -> Any:
    """A literal output of an inlined graph as a numpy scalar, which ``into`` takes as a
    literal again (not as a number numpy computed, see :meth:`Trace.takes_as_argument`)."""
    value = np.asarray(o.value)[()]
    into._literals.add(id(value))
    into._sources.append(value)  # alive: its id stays its own
    return value


def _integer(x: Any) -> Any:
    """An integer number fed to an int64 input (a trip count) stays an integer literal
    (:meth:`Trace.constant` makes numbers float)."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        return Literal(int(x))
    return x


def trace(fun: Callable, avals: Sequence[Aval | None], args: Sequence[Any],
          names: Sequence[str], tracer: type[Tracer] = Tracer) -> tuple[Graph, bool]:
    """Trace ``fun`` (see :func:`stage`); the graph and whether ``fun`` returned a
    tuple (``False``: a single value, the graph's only output)."""
    staged = stage(fun, avals, args, names, tracer=tracer)
    return staged.graph, staged.is_tuple


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


__all__ = ["Staged", "Trace", "Traced", "Tracer", "apply", "arg_names", "as_constant_array",
           "current_trace", "find_trace", "inline", "recording", "refuse_masked", "shape_of",
           "stage", "trace", "recording_depth", "forward_mode", "in_forward_mode"]
