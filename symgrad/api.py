"""``grad``, ``value_and_grad``, ``vjp`` and ``jit``: the decorator front end.

A transformed function specializes on the shapes of its traced arguments and
the values of its static ones: the first call with a new signature traces the
function, builds the adjoint, optimizes, generates and compiles the kernel;
later calls go straight to the kernel.

Arguments: numpy arrays, numpy scalars and Python numbers are traced (as
float64, integers promoted; boolean arrays as bool unless differentiated;
differentiated lists are converted too); anything else, and the positions in
``static_argnums``, are static: part of the signature, passed to the function
as they are, so they must be hashable.

Dispatch: a call whose arguments the kernel takes as they are (float64 or bool
arrays, C-contiguous, aligned and writable; numbers) is looked up by cheap facts
(:func:`_fast_key`) in a second cache of ready-made calls (:class:`_Fast`),
and goes straight to the Numba dispatcher. Anything else, and the first call
of each signature, takes the checked path (``_prepare``), which fills it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from . import pipeline
from .backend import compile as kernels
from .backend.codegen import KernelSource
from .core.errors import SCALAR_OUTPUT_ERROR
from .core.ir import FLOAT, Aval, Graph
from .core.tracing import arg_names
from .numpy_api import trace
from .pipeline import kernel_input as _traced_input

BACKENDS = ("numba", "numpy")


@dataclass(frozen=True)
class Specialization:
    """What one signature of a transformed function compiled to."""

    graph: Graph                  # the optimized graph the backend runs
    kernel: Callable[..., tuple]  # kernel (or interpreter, or chain): traced inputs, consts
    consts: tuple                 # the graph's array constants: the Numba kernel's last args
    source: KernelSource          # the generated kernel module(s)
    is_tuple: bool                # the function returned a tuple
    n_primal: int                 # how many of the outputs are the function's own
    primal: tuple[Aval, ...]      # what the function returns (a gradient= has these avals)
    pieces: tuple[Graph, ...] = ()  # one kernel each: graph, or split.MAX_EQNS-sized parts

    def run(self, *inputs: Any) -> tuple:
        """The kernel's outputs for the traced inputs (and cotangents)."""
        return self.kernel(*inputs, *self.consts)


class _Fast(NamedTuple):
    """A call signature seen before, ready to run: what ``__call__`` does on a hit."""

    kernel: Callable[..., tuple]      # the warm Numba dispatcher, or a Kernel, Chain, interpreter
    consts: tuple                     # its trailing arguments
    plan: tuple[int, ...] | None      # per argument _PASS, _FLOAT, _BOOL or _DROP; None: all pass
    picks: tuple[int, ...]            # the outputs returned, in order
    wraps: tuple[Any, ...]            # per pick: np.float64 or np.bool_ for a scalar, or None
    form: int                         # _ONE, _TUPLE, _VALUE_AND_GRADS or _RUN


class Transformed:
    """A function transformed by :func:`grad`, :func:`value_and_grad` or :func:`jit`."""

    def __init__(self, fun: Callable, mode: str, argnums: int | Sequence[int] = 0,
                 static_argnums: Sequence[int] = (), backend: str = "numba"):
        if not callable(fun):
            raise TypeError(f"{mode} needs a function, got {type(fun).__name__}")
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, not {backend!r}")
        self.fun = fun
        self.mode = mode
        self.single = isinstance(argnums, int)
        self.argnums: tuple[int, ...] = (
            () if mode == "jit" else (argnums,) if isinstance(argnums, int) else tuple(argnums))
        distinct = len(set(self.argnums)) == len(self.argnums)
        if not distinct or any(not isinstance(a, int) for a in self.argnums):
            raise TypeError(f"argnums must be an int or a tuple of distinct ints, not {argnums!r}")
        self.static_argnums = tuple(static_argnums)
        self.backend = backend
        self._title = getattr(fun, "__name__", "the function")  # for messages: "<lambda>"
        self._cache: dict[tuple, Specialization] = {}
        self._fast: dict[tuple, _Fast] = {}  # keyed by _fast_key; filled by _remember
        self._positions_by_arity: dict[int, tuple[frozenset[int], frozenset[int]]] = {}
        self._names = functools.cache(functools.partial(arg_names, fun))
        self._numpy_twin: Transformed | None = None  # expressions() runs on the interpreter
        functools.update_wrapper(self, fun)

    # -- calling -----------------------------------------------------------------
    def __call__(self, *args: Any, gradient: Any = None) -> Any:
        try:  # the fast path: a signature seen before, its arguments ready for the kernel
            fast = self._fast.get(_fast_key(args) if gradient is None
                                  else (*_fast_key((*args, gradient)), _SEEDED))
        except Exception:  # noqa: BLE001 -- unhashable or odd: the checked path explains
            fast = None
        if fast is None:
            return self._call_checked(args, gradient)
        if gradient is not None:
            args = (*args, gradient)
        kernel, consts, plan, picks, wraps, form = fast
        inputs = args if plan is None else _converted(plan, args)
        outs = kernel(*inputs, *consts) if consts else kernel(*inputs)
        if form == _ONE:
            out, wrap = outs[picks[0]], wraps[0]
            return out if wrap is None else wrap(out)
        if form == _RUN:
            return outs[picks[0]:picks[-1] + 1]
        return _finish(outs, picks, wraps, form)

    def _call_checked(self, args: tuple, gradient: Any) -> Any:
        """A call through every check, which (for a plain call) fills the fast path."""
        spec, inputs = self._prepare(args, gradient)
        outs = spec.run(*inputs)
        self._remember(args, gradient, spec, inputs, outs)
        primal = [_scalar(o) for o in outs[:spec.n_primal]]
        grads = [_scalar(o) for o in outs[spec.n_primal:]]
        if self.mode == "jit":
            return tuple(primal) if spec.is_tuple else primal[0]
        g = grads[0] if self.single else tuple(grads)
        return (primal[0], g) if self.mode == "value_and_grad" else g

    def graph(self, *args: Any, gradient: Any = None) -> Graph:
        """The optimized IR this call runs: forward, then adjoint (``print`` it)."""
        return self._prepare(args, gradient)[0].graph

    def source(self, *args: Any, gradient: Any = None) -> str:
        """The generated Numba source for this call."""
        return self._prepare(args, gradient)[0].source.text

    def expressions(self, *args: Any, gradient: Any = None, seconds: float = 2.0) -> Any:
        """The derived gradient as SymPy expressions, shaped like the gradient itself.

        symgrad's own adjoint of this call, as SymPy over element symbols
        (``x[0, 1]``, or ``x`` for a scalar), simplified within ``seconds`` in
        all; a given ``gradient=`` enters as numbers. Numbers are exact, except
        that the float64 rounding of a small fraction reads as the fraction
        (``1/3``; see ``sympy_bridge.nice_numbers``). Needs SymPy; compiles nothing.

            >>> import numpy as np, symgrad as sg
            >>> sg.grad(lambda x: np.mean(3 * (x + 2) ** 2)).expressions(np.ones(2))
            array([3*(x[0] + 2), 3*(x[1] + 2)], dtype=object)
        """
        from .sympy_bridge import adjoint_expressions, simplify_all

        if self.mode == "jit":
            raise TypeError("expressions() is for grad and value_and_grad; jit has no gradient")
        twin = self._numpy_twin
        if twin is None:  # the same transformation on the interpreter: no Numba compile
            argnums = self.argnums[0] if self.single else self.argnums
            twin = Transformed(self.fun, self.mode, argnums, self.static_argnums, "numpy")
            self._numpy_twin = twin
        spec, inputs = twin._prepare(args, gradient)
        n_ct = 0 if gradient is None else len(spec.primal)
        grads = adjoint_expressions(spec.graph, spec.n_primal, len(inputs) - n_ct,
                                    inputs[len(inputs) - n_ct:])
        grads = [simplify_all(g, seconds / len(grads)) for g in grads]
        return grads[0] if self.single else tuple(grads)

    def _prepare(self, args: Sequence[Any], gradient: Any) -> tuple[Specialization, list]:
        if self.mode == "jit" and gradient is not None:
            raise TypeError("jit functions take no gradient=; use grad or vjp")
        diff, static = self._positions(len(args))
        key: list[Any] = []
        avals: list[Aval | None] = []
        inputs: list[Any] = []
        for i, x in enumerate(args):
            if _is_traced(i, x, diff, static):
                try:
                    value, aval = _traced_input(x, "", promote=i in diff)
                except TypeError:  # again, to say which argument (not named on the hot path)
                    _traced_input(x, f"argument {self._names(len(args))[i]}", i in diff)
                    raise
                key.append(aval)
                avals.append(aval)
                inputs.append(value)
            else:
                _require_hashable(x, self._names(len(args))[i])
                key.append(("static", _static_key(x)))
                avals.append(None)
        key.append(gradient is not None)
        spec = self._cache.get(tuple(key))
        if spec is None:
            spec = self._specialize(args, avals, gradient is not None)
            self._cache[tuple(key)] = spec
        if gradient is not None:
            inputs += _cotangents(gradient, spec, self._title)
        return spec, inputs

    def _positions(self, n: int) -> tuple[frozenset[int], frozenset[int]]:
        """The differentiated and the static positions among ``n`` arguments."""
        known = self._positions_by_arity.get(n)
        if known is not None:
            return known
        for i in self.argnums:
            if not -n <= i < n:
                raise ValueError(f"argnums {i} is out of range for {n} arguments")
        diff = frozenset(i % n for i in self.argnums)
        static = frozenset(i % n for i in self.static_argnums if -n <= i < n)
        if diff & static:
            raise ValueError("an argument cannot be both differentiated and static")
        self._positions_by_arity[n] = diff, static
        return diff, static

    def _remember(self, args: tuple, gradient: Any, spec: Specialization, inputs: list,
                  outs: tuple) -> None:
        """Put this call's signature on the fast path if ``_fast_key`` determines all that
        ``_prepare`` did: the arguments need at most a ``float()`` and static ones are keyed
        by value. (Arrays that needed a copy or a cast keep taking the checked path.)"""
        n = len(args)
        diff, static = self._positions(n)
        if gradient is not None:
            if spec.is_tuple:
                return  # a tuple of cotangents: the fast key does not see inside it
            args = (*args, gradient)
        plan: list[int] = []
        given = iter(inputs)
        for i, x in enumerate(args):
            t = type(x)
            if i < n and not _is_traced(i, x, diff, static):
                if t in _TYPE_KEYED or isinstance(x, (float, tuple)):
                    return  # a static value the fast key holds only the type of (or -0.0)
                plan.append(_DROP)
                continue
            if t is not np.ndarray and t not in _TYPE_KEYED and t not in _VALUE_KEYED:
                return  # lists, array-likes: converted on every call
            value = next(given)
            if value is x or t is float:
                plan.append(_PASS)
            elif type(value) is float and not (t is np.ndarray and x.ndim):
                plan.append(_FLOAT)
            elif type(value) is bool:
                plan.append(_BOOL)
            else:
                return
        if isinstance(spec.kernel, kernels.Kernel):
            kernel = spec.kernel.dispatcher()
        else:
            kernel = spec.kernel
        if self.mode == "jit":
            picks = tuple(range(spec.n_primal))
            form = _TUPLE if spec.is_tuple else _ONE
        else:
            picks = tuple(range(spec.n_primal, len(outs)))
            form = _ONE if self.single else _TUPLE
            if self.mode == "value_and_grad":  # one primal output, then the gradients
                picks = (0, *picks)
                form = _TUPLE if self.single else _VALUE_AND_GRADS
        wraps = tuple(_SCALAR_TYPES.get(type(outs[k])) for k in picks)
        if form == _TUPLE and wraps == (None,) * len(picks) and picks == tuple(
                range(picks[0], picks[-1] + 1)):
            form = _RUN
        if len(self._fast) >= _FAST_LIMIT:
            self._fast.clear()  # e.g. a loop over static values: start again
        key = _fast_key(args) if gradient is None else (*_fast_key(args), _SEEDED)
        self._fast[key] = _Fast(kernel, spec.consts, None if all(
            c == _PASS for c in plan) else tuple(plan), tuple(picks), wraps, form)

    # -- building ------------------------------------------------------------------
    def _specialize(self, args: Sequence[Any], avals: list[Aval | None],
                    seeded: bool) -> Specialization:
        names = self._names(len(args))
        graph, is_tuple = trace(self.fun, avals, args, names)
        n_primal = len(graph.outputs)
        if self.mode == "jit":
            wrt = None
            title, out_names = f"jit of {graph.name}", {}
        else:
            _check_differentiable(graph, is_tuple, seeded, self.mode, self._title)
            # gradients come out in argnums order: wrt is the graph inputs in that order
            position = {i: k for k, i in enumerate(i for i, a in enumerate(avals) if a is not None)}
            wrt = [position[i % len(args)] for i in self.argnums]
            if self.mode != "value_and_grad":  # the value is not returned: not computed either
                n_primal = 0
            wrt_names = [names[i % len(args)] for i in self.argnums]
            title = f"{self.mode} of {graph.name} with respect to {', '.join(wrt_names)}"
            out_names = {n_primal + k: f"grad_{name}" for k, name in enumerate(wrt_names)}
        final, program = pipeline.build(
            graph, wrt=wrt, seeded=seeded, keep_primal=n_primal > 0, function=graph.name,
            description=title, out_names=out_names, backend=self.backend)
        primal = tuple(a.aval for a in graph.outputs)
        return Specialization(final, program.kernel, program.consts, program.source, is_tuple,
                              n_primal, primal, program.pieces)


def _check_differentiable(graph: Graph, is_tuple: bool, seeded: bool, mode: str,
                          name: str) -> None:
    if is_tuple and mode != "vjp":
        raise TypeError(f"{mode} needs {name} to return one array, but it returns a tuple of "
                        f"{len(graph.outputs)}; use symgrad.vjp for several outputs")
    for out in graph.outputs:
        if out.dtype != FLOAT:
            raise TypeError(f"{name} returns a {out.aval} value, which has no gradient; "
                            "return a float array")
    if not seeded and graph.outputs[0].shape != ():
        raise ValueError(
            f"{SCALAR_OUTPUT_ERROR}: {name} returns {graph.outputs[0].aval}. Pass gradient= "
            "(an array of the output's shape) to get the gradient of sum(output * gradient), "
            "or reduce the output to a scalar (np.sum, np.mean) in the function.")


# ---------------------------------------------------------------------------
# argument handling


#: how ``_Fast.plan`` passes an argument: as it is, float(x), bool(x), or not (static)
_PASS, _FLOAT, _BOOL, _DROP = range(4)
#: how ``_Fast`` returns the picked outputs: one, a tuple, (value, (grads...)), or a
#: tuple of adjacent outputs none of which is wrapped (a slice of the kernel's tuple)
_ONE, _TUPLE, _VALUE_AND_GRADS, _RUN = range(4)
#: ends the fast key of a call with gradient= (no argument's fact is this object)
_SEEDED = object()
#: traced numbers whose value does not change the specialization: keyed by type alone
_TYPE_KEYED = frozenset({float, *(t for t in np.sctypeDict.values()
                                  if issubclass(t, (np.floating, np.integer)))})
#: traced (or static) values that ``_remember`` accepts keyed by (type, value)
_VALUE_KEYED = frozenset({int, bool, np.bool_})
#: numpy's C_CONTIGUOUS | ALIGNED | WRITEABLE bits of ``ndarray.flags.num``
_READY = 0x1 | 0x100 | 0x400
#: kernel scalars as numpy scalars, like numpy's reductions
_SCALAR_TYPES = {float: np.float64, bool: np.bool_}
_FAST_LIMIT = 256


def _fast_key(args: tuple) -> tuple:
    """What the fast path is keyed on, per argument: an array's shape, dtype and readiness
    flags (the kernel takes it as it is when they are right); a float's type; else the
    argument's type and value (so an unhashable argument raises TypeError)."""
    key: list[Any] = []
    for x in args:
        t = type(x)
        if t is np.ndarray:
            key.append((x.shape, x.dtype, x.flags.num & _READY))
        elif t in _TYPE_KEYED:
            key.append(t)
        else:
            key.append((t, x))
    return tuple(key)


def _converted(plan: tuple[int, ...], args: tuple) -> list:
    """The kernel's inputs from the arguments, by a ``_Fast.plan``."""
    inputs = []
    for code, x in zip(plan, args):
        if code == _PASS:
            inputs.append(x)
        elif code == _FLOAT:
            inputs.append(float(x))
        elif code == _BOOL:
            inputs.append(bool(x))
    return inputs


def _finish(outs: tuple, picks: tuple[int, ...], wraps: tuple, form: int) -> tuple:
    """The result of a fast call that returns several outputs."""
    result = []
    for k, wrap in zip(picks, wraps):
        result.append(outs[k] if wrap is None else wrap(outs[k]))
    if form == _VALUE_AND_GRADS:
        return result[0], tuple(result[1:])
    return tuple(result)


def _is_traced(i: int, x: Any, diff: frozenset[int], static: frozenset[int]) -> bool:
    """Whether argument ``i`` is a kernel input (else it is static)."""
    return i in diff or (i not in static and _is_array_like(x))


def _is_array_like(x: Any) -> bool:
    numeric = isinstance(x, (np.ndarray, np.generic, float, int))
    return numeric and not isinstance(x, (bool, np.bool_))


def _static_key(x: Any) -> Any:
    """A static value as a cache key that tells 0.0 from -0.0 and finds nan again."""
    if isinstance(x, float):
        return (type(x), x.hex())
    if isinstance(x, tuple):
        return (tuple, tuple(map(_static_key, x)))
    return (type(x), x)


def _require_hashable(x: Any, name: str) -> None:
    try:
        hash(x)
    except TypeError:
        raise TypeError(f"argument {name} ({type(x).__name__}) is static (not an array or "
                        "number), so it must be hashable; pass a numpy array or a tuple") from None


def _cotangents(gradient: Any, spec: Specialization, name: str) -> list[Any]:
    """``gradient=`` as kernel arguments, one per output, checked against the outputs."""
    outs = spec.primal
    given = list(gradient) if spec.is_tuple else [gradient]
    if len(given) != len(outs):
        raise ValueError(f"gradient must have one array per output of {name} ({len(outs)}), "
                         f"got {len(given)}")
    return [pipeline.cotangent(g, out, f"{name} returns") for g, out in zip(given, outs)]


def _scalar(x: Any) -> Any:
    """Kernel scalars (Python floats/bools) as numpy scalars, like numpy's reductions."""
    if isinstance(x, bool):
        return np.bool_(x)
    if isinstance(x, float):
        return np.float64(x)
    return x


# ---------------------------------------------------------------------------
# public transformations


def _transformation(mode: str, doc: str) -> Callable:
    def transform(fun: Callable | None = None, *, argnums: int | Sequence[int] = 0,
                  static_argnums: Sequence[int] = (), backend: str = "numba") -> Any:
        if fun is None:  # used as @grad(argnums=...)
            return lambda f: Transformed(f, mode, argnums, static_argnums, backend)
        return Transformed(fun, mode, argnums, static_argnums, backend)
    transform.__name__ = transform.__qualname__ = mode
    transform.__doc__ = doc
    return transform


grad = _transformation("grad", """The gradient of a scalar-valued numpy function.

    ``grad(f)`` (or ``@grad``, or ``@grad(argnums=(0, 1))``) returns a function
    with ``f``'s arguments that returns the gradient with respect to argument
    ``argnums`` (a tuple of gradients for a tuple of argnums). For an ``f``
    with a non-scalar output pass ``gradient=`` (an array of the output's
    shape): the result is then the gradient of ``sum(f(...) * gradient)``.
    ``backend="numpy"`` runs the numpy interpreter instead of a Numba kernel.

        >>> import numpy as np, symgrad as sg
        >>> g = sg.grad(lambda x: np.mean(3 * (x + 2) ** 2))
        >>> g(np.ones((2, 2)))
        array([[4.5, 4.5],
               [4.5, 4.5]])
        >>> sg.grad(lambda x: x * x)(np.array([1.0, 2.0, 3.0]), gradient=np.full(3, 5.0))
        array([10., 20., 30.])
    """)

value_and_grad = _transformation("value_and_grad", """Like :func:`grad`, returning the value too.

        >>> import numpy as np, symgrad as sg
        >>> sg.value_and_grad(lambda x: np.sum(x ** 2))(np.array([1.0, 2.0]))
        (np.float64(5.0), array([2., 4.]))
    """)

jit = _transformation("jit", """Compile a numpy function with Numba through symgrad's IR.

        >>> import numpy as np, symgrad as sg
        >>> sg.jit(lambda x: np.sin(x) ** 2 + np.cos(x) ** 2)(np.array([0.3, 1.2]))
        array([1., 1.])
    """)


def vjp(fun: Callable, *args: Any, backend: str = "numba") -> tuple[Any, Callable]:
    """The output of ``fun(*args)`` and its pullback.

    ``pullback(ct)`` returns one cotangent per argument of ``fun`` (``None`` for
    static arguments): the gradient of ``sum(fun(*args) * ct)``; for a function
    returning a tuple, ``ct`` is a tuple with one array per output.

        >>> import numpy as np, symgrad as sg
        >>> y, pullback = sg.vjp(lambda x, y: x * y, np.array([1.0, 2.0]), 3.0)
        >>> y
        array([3., 6.])
        >>> pullback(np.ones(2))
        (array([3., 3.]), np.float64(3.0))
    """
    traced = tuple(i for i, x in enumerate(args) if _is_array_like(x))
    # traced afresh on every call (kernels themselves are cached by content)
    forward = Transformed(fun, "jit", backend=backend)
    back = Transformed(fun, "vjp", argnums=traced, backend=backend)
    out = forward(*args)

    def pullback(ct: Any) -> tuple:
        grads = iter(back(*args, gradient=ct))
        return tuple(next(grads) if i in traced else None for i in range(len(args)))

    return out, pullback
