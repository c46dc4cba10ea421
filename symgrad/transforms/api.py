"""``grad``, ``value_and_grad``, ``vjp`` and ``jit``: the decorator front end.

A transformed function specializes on the shapes of its traced arguments and
the values of its static ones: the first call with a new signature traces the
function, builds the adjoint, optimizes, generates and compiles the kernel;
later calls go straight to the kernel.

Arguments: numpy arrays, numpy scalars and Python numbers are traced
(differentiated ones as float64, float32 ones as float32, with lists converted
too; bool arrays that are not differentiated stay bool, and so do integer numbers
as int64, as JAX traces them: a trip count ``n`` in ``sg.fori_loop(0, n, ...)``
is a kernel argument, so a new ``n`` compiles nothing); anything else, and the positions in
``static_argnums``, are static: part of the signature, passed to the function
as they are, so they must be hashable. Keyword arguments are passed through,
never differentiated, traced or static by the same rule (a pytree keyword argument,
a dict or list of arrays, has its leaves traced). ``argnums`` may be given
positionally (``grad(f, 1)``). ``gradient=`` is the cotangent of a non-scalar
output; a function with its own parameter ``gradient`` is refused it (``jit``, which
has no cotangent, passes it to the function).

What the function reads besides its arguments (globals, closure variables,
attributes of a bound method's object, ...) is guarded (:mod:`symgrad.transforms.captured`):
each call checks it still holds what the trace saw, and traces again if not. A
function that reads what cannot be guarded fails closed: it is traced on every
call (the kernel is reused) and warned about once (:class:`symgrad.RetraceWarning`).

Inside a function being traced (``grad(grad(f))``, ``jit(grad(f))``, a
gradient penalty calling ``grad(f)``), a transformed function does not run a
kernel: it traces ``fun``, derives its graph as usual and records that graph
in the enclosing trace (:func:`symgrad.core.tracing.inline`), so the outer
transformation sees, differentiates and compiles it like any other code.

Dispatch: a call whose arguments the kernel takes as they are (float64, float32 or
bool arrays, C-contiguous, aligned and writable; numbers) is looked up by cheap facts
(:func:`_fast_key`) in a second cache of ready-made calls (a runner per
signature, :func:`symgrad.transforms.calls._runner`), which checks the guards of what the
function reads from outside and goes straight to the compiled Numba overload.
Anything else, and the first call of each signature, takes the checked path
(``_prepare``), which fills it.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..backend.numba import fusion
from ..core.ir import COMPLEXES, Aval, Graph
from ..core.pytree import Tree, flatten, paths, unflatten
from ..core.tracing import Tracer, current_trace, inline
from ..numpy_api import stage
from ..prims.convert import convert
from ..prims.elementwise import as_float
from . import pipeline
from .calls import (
    _CACHE_LIMIT,
    _FAST_LIMIT,
    Runner,
    Specialization,
    _any_dask,
    _checked,
    _cotangents,
    _fast_entry,
    _fast_key,
    _is_array_like,
    _is_float_numbers,
    _is_traced,
    _is_tree,
    _KeywordTrees,
    _Rebuild,
    _require_hashable,
    _scalar,
    _seeded_key,
    _static_key,
    _value,
    _values,
)
from .captured import warn_unguarded, world
from .pipeline import kernel_input as _traced_input
from .signature import BACKENDS, Grad, Jit, LinearizedJit, Signature, ValueAndGrad, Vjp

__all__ = ["BACKENDS", "Grad", "Jit", "Signature", "Specialization", "Transformed",
           "ValueAndGrad", "Vjp", "grad", "jit", "value_and_grad", "vjp"]


class Transformed:
    """A function transformed by :func:`grad`, :func:`value_and_grad`, :func:`jit` or
    :func:`vjp`: the call machinery (caches, the fast path, tracing, building) shared by
    all of them. What differs between them is its :attr:`signature`, one
    :class:`~symgrad.transforms.signature.Signature` subclass per transformation."""

    def __init__(self, signature: Signature):
        self.signature = sig = signature
        self.fun = sig.fun  # (the attribute symgrad.transforms.captured follows)
        #: per structure of pytree arguments: the same transformation of the flat function
        self._trees: dict[tuple, Any] = {}  # (and per pytree keyword arguments, below)
        self._cache: dict[tuple, Specialization] = {}
        self._lock = threading.Lock()  # inserts into the caches (lookups need none)
        self._fast: dict[tuple, Runner] = {}  # keyed by _fast_key; filled by _remember
        self._numpy_twin: Transformed | None = None  # expressions() runs on the interpreter
        #: reuse a trace whose reads could not all be guarded (a pullback, a linearization:
        #: their trace belongs to the world of the sg.vjp or sg.linearize call)
        self._pinned = False
        self._own_gradient: bool | None = None  # fun has a parameter `gradient` (lazily)
        # name and docstring only: the wrapped object (maybe another Transformed) keeps
        # its state to itself
        functools.update_wrapper(self, sig.fun, updated=())

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        """As a method (``@sg.grad`` in a class body): bound to ``obj``, which is the
        function's argument 0, as in JAX (count it in ``argnums``)."""
        return self if obj is None else _Bound(self, obj)

    # -- calling -----------------------------------------------------------------
    def __call__(self, *args: Any, gradient: Any = None, **kwargs: Any) -> Any:
        if gradient is not None and self._owns_gradient():
            if self.signature.differentiates:
                raise TypeError(
                    f"{self.signature.title} has its own parameter `gradient`, and "
                    f"{self.signature.name}'s "
                    "gradient= is the cotangent of a non-scalar output (the result is the "
                    "gradient of sum(output * gradient)): pass the function's `gradient` "
                    "positionally, or rename the parameter")
            kwargs["gradient"], gradient = gradient, None  # jit has no cotangent: route it
        if kwargs:
            return self._call_checked(args, gradient, kwargs)
        # (inside a trace, tracers are unhashable: such calls take the checked path,
        # which inlines; a call with constants may run the kernel, and is constant)
        try:  # the fast path: a signature seen before, its arguments ready for the kernel
            run = self._fast[_fast_key(args) if gradient is None
                             else _seeded_key(args, gradient)]
        except Exception:  # noqa: BLE001 -- new (KeyError), unhashable or odd (TypeError):
            run = _checked  # the checked path explains, and fills the fast path
        return run(self, args, gradient)

    def _owns_gradient(self) -> bool:
        """Whether the function has a parameter named ``gradient`` (asked once)."""
        owns = self._own_gradient
        if owns is None:
            try:
                params = inspect.signature(self.fun).parameters
            except (TypeError, ValueError):  # a builtin without a signature
                params = {}
            given = params.get("gradient")
            owns = self._own_gradient = given is not None and given.kind in (
                inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        return owns

    def _call_checked(self, args: tuple, gradient: Any, kwargs: dict) -> Any:
        """A call through every check, which (for a plain call) fills the fast path."""
        args, kwargs = _values(args), {k: _value(v) for k, v in kwargs.items()}
        if isinstance(gradient, (tuple, list)):  # (a named tuple keeps its type: its
            values = tuple(map(_value, gradient))  # structure is compared with the output's)
            gradient = type(gradient)(*values) if hasattr(gradient, "_fields") else values
        elif gradient is not None:
            gradient = _value(gradient)
        trees = tuple(k for k, v in kwargs.items() if _is_tree(v))
        if trees:  # pytree keyword arguments: trailing positional ones of a wrapper
            inner = self._keyword_trees(len(args), trees)
            return inner._call_checked((*args, *(kwargs[k] for k in trees)), gradient,
                                       {k: v for k, v in kwargs.items() if k not in trees})
        flat = self.flattened(args)
        if flat is not None:  # pytree arguments: the flat function's transformation
            inner, leaves, regroup = flat
            return regroup(inner._call_checked(leaves, gradient, kwargs))
        if _any_dask((*args, *kwargs.values(), gradient)):  # data in chunks of rows
            from ..distributed import call  # Dask loads only here (not to break a cycle)
            return call(self.signature, args, gradient, kwargs)
        if current_trace() is not None:
            return self._call_traced(args, gradient, kwargs)
        spec, inputs = self._prepare(args, gradient, kwargs)
        outs = spec.run(*inputs)
        if not kwargs:
            self._remember(args, gradient, spec, inputs, outs)
        return self.signature.result(
            [_scalar(o, a.dtype) for o, a in zip(outs, spec.graph.outputs)], spec.n_primal,
            spec.out_tree)

    def _keyword_trees(self, n: int, trees: tuple[str, ...]) -> Transformed:
        """The same transformation of ``fun`` with the keyword arguments ``trees``
        (pytrees: dicts, lists, tuples of arrays) taken as positional arguments after the
        ``n`` given ones: their leaves are traced (not differentiated), as a positional
        pytree's are, and the gradients are those of ``argnums``, as before."""
        key = (n, trees)
        inner = self._trees.get(key)
        if inner is None:
            sig = self.signature
            static = sig.positions(n)[1]
            argnums = tuple(i % n for i in sig.argnums)
            wrapper = _KeywordTrees(self.fun, n, trees, sig.names(n))
            inner = Transformed(sig.like(
                wrapper, argnums[0] if sig.single and argnums else argnums, tuple(static)))
            inner._pinned, inner._own_gradient = self._pinned, False
            self._trees[key] = inner
        return inner

    def flattened(self, args: tuple) -> tuple[Transformed, tuple, Callable] | None:
        """For a call with pytree arguments (tuples, lists, dicts of arrays; any container
        at a differentiated position): the transformation of the function of their
        leaves, the leaves, and what turns its result back into trees. ``None`` for a
        call without pytrees."""
        n = len(args)
        sig = self.signature
        diff, static = sig.positions(n)
        if not any(i not in static and _is_tree(a) for i, a in enumerate(args)):
            return None
        names = sig.names(n)
        leaves: list[Any] = []
        trees: list[Tree | None] = []  # None: a static argument or a plain leaf
        groups: list[tuple[int, ...]] = []
        for i, a in enumerate(args):
            if i not in static and _is_tree(a):
                ls, tree = flatten(a)
            else:
                ls, tree = [a], None
            groups.append(tuple(range(len(leaves), len(leaves) + len(ls))))
            leaves += ls
            trees.append(tree)
        key = (n, tuple(trees))
        known = self._trees.get(key)
        if known is None:
            flat_names = [name for i, name in enumerate(names) for name in (
                [name] if trees[i] is None else paths(trees[i], name))]
            rebuild = _Rebuild(self.fun, tuple(trees), tuple(groups), flat_names)
            argnums = tuple(k for i in sig.argnums for k in groups[i % n])
            static_leaves = tuple(groups[i % n][0] for i in static)
            inner = Transformed(sig.like(rebuild, argnums, static_leaves))
            inner._pinned = self._pinned
            known = self._trees[key] = (inner, tuple(groups))
        inner, groups = known

        def regroup(result: Any) -> Any:
            return sig.regroup(result, n, trees, groups)

        return inner, tuple(leaves), regroup

    def _call_traced(self, args: tuple, gradient: Any, kwargs: dict) -> Any:
        """Called inside a function being traced: record the transformed graph there."""
        into = current_trace()
        assert into is not None
        values = (*args, *kwargs.values())
        sig = self.signature
        names = [*sig.names(len(args)), *kwargs]
        diff, static = sig.positions(len(args))
        avals: list[Aval | None] = []
        inputs: list[Any] = []
        for i, x in enumerate(values):
            if isinstance(x, Tracer):
                if i in diff and x.dtype == np.bool_:
                    x = as_float(x)
                avals.append(x.aval)
                inputs.append(x)
            elif (_is_traced(i, x, diff, static) if i < len(args) else _is_array_like(x)):
                value, aval = _traced_input(x, f"argument {names[i]}", promote=i in diff,
                                            integers=True)
                avals.append(aval)
                inputs.append(value)
            else:
                avals.append(None)
        staged = stage(self.fun, avals, args, names[:len(args)], kwargs)
        graph = sig.prepare(staged.graph)
        wrt, keep_primal, n_aux = sig.plan(graph, staged.out_tree, avals, len(args),
                                           gradient is not None)
        final = graph if wrt is None else pipeline.differentiate(
            graph, wrt, gradient is not None, keep_primal, n_aux)
        n_primal = len(final.outputs) if wrt is None else int(keep_primal) + n_aux
        primal = tuple(a.aval for a in staged.graph.outputs)
        cts = [] if gradient is None else _cotangents(gradient, primal, staged.out_tree,
                                                      sig.title, sig.has_aux)
        # a real traced cotangent of a complex output enters as complex (as a kernel's does)
        cts = [convert(c, p.dtype) if p.dtype in COMPLEXES and isinstance(c, Tracer)
               and c.aval.dtype not in COMPLEXES else c for c, p in zip(cts, primal)]
        outs = inline(final, [*inputs, *staged.captured, *cts], into, staged.const_sources)
        return sig.result(outs, n_primal, staged.out_tree)

    def graph(self, *args: Any, gradient: Any = None, **kwargs: Any) -> Graph:
        """The optimized IR this call runs: forward, then adjoint (``print`` it)."""
        flat = self.flattened(_values(args))
        if flat is not None:
            return flat[0].graph(*flat[1], gradient=gradient, **kwargs)
        return self._prepare(_values(args), gradient, kwargs)[0].graph

    def source(self, *args: Any, gradient: Any = None, **kwargs: Any) -> str:
        """The generated Numba source for this call."""
        flat = self.flattened(_values(args))
        if flat is not None:
            return flat[0].source(*flat[1], gradient=gradient, **kwargs)
        return self._prepare(_values(args), gradient, kwargs)[0].source.text

    def kernel_bytes(self, *args: Any, gradient: Any = None, **kwargs: Any) -> int:
        """About the most bytes the compiled kernel of this call holds at once: its
        inputs and the arrays it makes (values its loops compute where they read them
        take none). Compiles nothing on ``backend="interpreter"``; what the interpreter
        holds is ``symgrad.core.interpreter.peak_bytes(self.graph(...))``.

            >>> import numpy as np, symgrad as sg
            >>> f = sg.value_and_grad(lambda x: np.sum(np.sin(x)), backend="interpreter")
            >>> f.kernel_bytes(np.ones(1000))  # x, the gradient cos(x), the sum
            16008
        """
        return fusion.kernel_bytes(self.graph(*args, gradient=gradient, **kwargs))

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
        from ..core.sympy_bridge import adjoint_expressions, simplify_all

        sig = self.signature
        if not sig.differentiates:
            raise TypeError("expressions() is for grad and value_and_grad; jit has no gradient")
        twin = self._numpy_twin
        if twin is None:  # the same transformation on the interpreter: no Numba compile
            argnums = sig.argnums[0] if sig.single else sig.argnums
            twin = Transformed(sig.like(self.fun, argnums, sig.static_argnums, "numpy"))
            self._numpy_twin = twin
        spec, inputs = twin._prepare(_values(args), gradient, {})
        n_ct = 0 if gradient is None else 1 if sig.has_aux else len(spec.primal)
        grads = adjoint_expressions(spec.graph, spec.n_primal, len(inputs) - n_ct,
                                    inputs[len(inputs) - n_ct:])
        grads = [simplify_all(g, seconds / len(grads)) for g in grads]
        return grads[0] if sig.single else tuple(grads)

    def _prepare(self, args: tuple, gradient: Any,
                 kwargs: dict | None = None) -> tuple[Specialization, list]:
        kwargs = kwargs or {}
        sig = self.signature
        sig.check_gradient(gradient)
        diff, static = sig.positions(len(args))
        values = (*args, *kwargs.values())
        key: list[Any] = [tuple(kwargs)]
        avals: list[Aval | None] = []
        inputs: list[Any] = []
        for i, x in enumerate(values):
            name = sig.names(len(args))[i] if i < len(args) else list(kwargs)[i - len(args)]
            if _is_traced(i, x, diff, static) if i < len(args) else _is_array_like(x):
                try:
                    value, aval = _traced_input(x, "", promote=i in diff, integers=True)
                except TypeError:  # again, to say which argument (not named on the hot path)
                    _traced_input(x, f"argument {name}", i in diff, integers=True)
                    raise
                key.append((aval, aval.weak))  # (weak is no part of an aval's equality)
                avals.append(aval)
                inputs.append(value)
            else:
                _require_hashable(x, name)
                key.append(("static", _static_key(x)))
                avals.append(None)
        key.append(gradient is not None)
        spec = self._cache.get(tuple(key))
        if spec is None or spec.world is not None and not (
                spec.world.known(values) if self._pinned else spec.world.holds(values)):
            spec = self._specialize(args, kwargs, avals, gradient is not None)
            with self._lock:  # threads may specialize at once; eviction iterates the dict
                if len(self._cache) >= _CACHE_LIMIT:  # the oldest signature goes first
                    self._cache.pop(next(iter(self._cache)))
                self._cache[tuple(key)] = spec
        if gradient is not None:
            inputs += _cotangents(gradient, spec.primal, spec.out_tree, sig.title,
                                  sig.has_aux)
        return spec, inputs

    def _remember(self, args: tuple, gradient: Any, spec: Specialization, inputs: list,
                  outs: tuple) -> None:
        """Put this call's signature on the fast path, if
        :func:`symgrad.transforms.calls._fast_entry` finds that ``_fast_key`` determines
        all that ``_prepare`` did."""
        sig = self.signature
        picks, form = sig.fast_picks(spec.n_primal, len(outs), spec.is_tuple)
        entry = _fast_entry(sig.positions(len(args)), sig.has_aux, picks, form, args, gradient,
                            spec, inputs, outs)
        if entry is None:
            return
        key, run = entry
        with self._lock:
            if len(self._fast) >= _FAST_LIMIT:
                self._fast.clear()  # e.g. a loop over static values: start again
            self._fast[key] = run

    # -- building ------------------------------------------------------------------
    def _specialize(self, args: tuple, kwargs: dict, avals: list[Aval | None],
                    seeded: bool) -> Specialization:
        sig = self.signature
        names = sig.names(len(args))
        guards = world(self.fun, (*args, *kwargs.values()))  # before the trace reads it
        if guards is not None and guards.unguarded is not None and not self._pinned:
            warn_unguarded(self.fun, guards.unguarded)  # fails closed: traced every call
        # floats read from outside enter the kernel as arguments, not literals: closures
        # that differ only in such numbers share one kernel (the guards retrace on change)
        staged = stage(self.fun, avals, args, names, kwargs,
                       guards.numbers if guards is not None else frozenset())
        graph, is_tuple = sig.prepare(staged.graph), staged.is_tuple
        wrt, keep_primal, n_aux = sig.plan(graph, staged.out_tree, avals, len(args), seeded)
        n_primal = len(graph.outputs) if wrt is None else int(keep_primal) + n_aux
        title, out_names = sig.describe(graph.name, len(args), n_primal)
        final, program = pipeline.build(
            graph, wrt=wrt, seeded=seeded, keep_primal=keep_primal, n_aux=n_aux,
            function=graph.name, description=title, out_names=out_names, backend=sig.backend,
            tiered=True)
        primal = tuple(a.aval for a in graph.outputs)
        return Specialization(final, program.kernel, program.consts, program.source, is_tuple,
                              n_primal, primal, program.pieces, guards, staged.out_tree)


class _Bound:
    """A transformed function used as a method, bound to its object (argument 0)."""

    def __init__(self, transformed: Transformed, obj: Any):
        self.transformed, self.obj = transformed, obj
        functools.update_wrapper(self, transformed.fun, updated=())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        t = self.transformed
        sig = t.signature
        if sig.differentiates and 0 in sig.positions(len(args) + 1)[0]:
            name = sig.names(len(args) + 1)[0]
            raise TypeError(
                f"{sig.name} of the method {sig.title} differentiates argument 0, which is "
                f"`{name}` (a {type(self.obj).__name__}): as in JAX, a method's self counts "
                f"in argnums; write @functools.partial(sg.{sig.name}, argnums=1) to "
                "differentiate the first argument after it")
        return t(self.obj, *args, **kwargs)

    def graph(self, *args: Any, **kwargs: Any) -> Graph:
        return self.transformed.graph(self.obj, *args, **kwargs)

    def source(self, *args: Any, **kwargs: Any) -> str:
        return self.transformed.source(self.obj, *args, **kwargs)

    def kernel_bytes(self, *args: Any, **kwargs: Any) -> int:
        return self.transformed.kernel_bytes(self.obj, *args, **kwargs)

    def expressions(self, *args: Any, **kwargs: Any) -> Any:
        return self.transformed.expressions(self.obj, *args, **kwargs)


# ---------------------------------------------------------------------------
# public transformations


_NO_ARGNUMS: Any = object()  # argnums not given: 0, except for jit, which has none


def _transformation(kind: type[Signature], doc: str) -> Callable:
    def transform(fun: Callable | None = None, argnums: int | Sequence[int] = _NO_ARGNUMS, *,
                  static_argnums: Sequence[int] = (), backend: str = "numba",
                  **options: Any) -> Any:
        """(``argnums`` may be given positionally, as ``jax.grad(f, 0)``.)"""
        if not kind.differentiates and argnums is not _NO_ARGNUMS:
            raise TypeError("jit has no argnums (it differentiates nothing); mark arguments "
                            "that are not arrays with static_argnums=")
        argnums = 0 if argnums is _NO_ARGNUMS else argnums

        def make(f: Callable) -> Transformed:
            return Transformed(kind(f, argnums, static_argnums, backend, **options))
        return make if fun is None else make(fun)  # fun None: used as @grad(argnums=...)
    transform.__name__ = transform.__qualname__ = kind.name
    transform.__doc__ = doc
    return transform


grad = _transformation(Grad, """The gradient of a scalar-valued numpy function.

    ``grad(f)`` (or ``@grad``, or ``@grad(argnums=(0, 1))``) returns a function
    with ``f``'s arguments that returns the gradient with respect to argument
    ``argnums`` (a tuple of gradients for a tuple of argnums). For an ``f``
    with a non-scalar output pass ``gradient=`` (an array of the output's
    shape): the result is then the gradient of ``sum(f(...) * gradient)``.
    ``backend="interpreter"`` runs the core interpreter (numpy, one equation at a time)
    instead of a Numba kernel; ``backend="numpy"`` is its older name, kept as an alias.

        >>> import numpy as np, symgrad as sg
        >>> g = sg.grad(lambda x: np.mean(3 * (x + 2) ** 2))
        >>> g(np.ones((2, 2)))
        array([[4.5, 4.5],
               [4.5, 4.5]])
        >>> sg.grad(lambda x: x * x)(np.array([1.0, 2.0, 3.0]), gradient=np.full(3, 5.0))
        array([10., 20., 30.])
    """)

value_and_grad = _transformation(ValueAndGrad, """Like :func:`grad`, returning the value too.

        >>> import numpy as np, symgrad as sg
        >>> sg.value_and_grad(lambda x: np.sum(x ** 2))(np.array([1.0, 2.0]))
        (np.float64(5.0), array([2., 4.]))
    """)

jit = _transformation(Jit, """Compile a numpy function with Numba through symgrad's IR.

        >>> import numpy as np, symgrad as sg
        >>> sg.jit(lambda x: np.sin(x) ** 2 + np.cos(x) ** 2)(np.array([0.3, 1.2]))
        array([1., 1.])
    """)


def vjp(fun: Callable, *args: Any, backend: str = "numba") -> tuple[Any, Callable]:
    """The output of ``fun(*args)`` and its pullback.

    ``pullback(ct)`` returns one cotangent per argument of ``fun`` (``None`` for
    static arguments; a tuple or list of numbers with a float among them is an array, as
    ``grad`` differentiates it, its cotangent an array where ``jax.vjp``'s is a tuple):
    the gradient of ``sum(fun(*args) * ct)``; for a function returning a tuple, ``ct``
    is a tuple with one array per output.

        >>> import numpy as np, symgrad as sg
        >>> y, pullback = sg.vjp(lambda x, y: x * y, np.array([1.0, 2.0]), 3.0)
        >>> y
        array([3., 6.])
        >>> pullback(np.ones(2))
        (array([3., 3.]), np.float64(3.0))
    """
    args = tuple(np.array(x) if _is_float_numbers(x) else x for x in _values(args))
    traced = tuple(i for i, x in enumerate(args)
                   if _is_array_like(x) or isinstance(x, Tracer) or _is_tree(x))
    # traced afresh on every call (kernels themselves are cached by content)
    forward = Transformed(LinearizedJit(fun, backend=backend))  # JAX's primal of a vjp
    back = Transformed(Vjp(fun, argnums=traced, backend=backend))
    back._own_gradient = False  # its gradient= is the pullback's cotangent
    out = forward(*args)
    guards = None
    if current_trace() is None:
        # the pullback belongs to this point: the arguments as they are now (copies, so
        # that a later in-place change cannot move it), and the world as it is now
        args = tuple(np.array(x) if isinstance(x, np.ndarray) else x for x in args)
        guards = world(fun, args)
        if guards is not None and guards.unguarded is not None:
            # reads that cannot be guarded: the pullback's trace is made now, in the world
            # of this call, and kept (its guards, if any, are still checked below)
            back._pinned = True
            leaves, tree = flatten(out)
            try:
                back(*args, gradient=unflatten(tree, [np.zeros(np.shape(a)) for a in leaves]))
            except Exception:  # noqa: BLE001 -- the pullback's own call says what is wrong
                pass

    def pullback(ct: Any) -> tuple:
        if guards is not None and not guards.known(args):
            raise RuntimeError(
                f"a value that {getattr(fun, '__name__', 'the function')} reads from outside "
                "its arguments (a global, a closure variable or an attribute) changed since "
                "sg.vjp was called, so this pullback no longer belongs to the output it "
                "came with; call sg.vjp again")
        grads = iter(back(*args, gradient=ct))
        return tuple(next(grads) if i in traced else None for i in range(len(args)))

    return out, pullback
