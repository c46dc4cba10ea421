"""How a transformed function takes its arguments and gives its results.

The helpers :class:`symgrad.transforms.api.Transformed` calls on every call, kept apart
from it: argument positions and their checks, which arguments are traced or
static (pytrees, Tensors, numbers), the fast path's keys, plans and entries, cotangents
given as ``gradient=``, what one signature compiled to (:class:`Specialization`), and
which calls hold Dask arrays (they go to :mod:`symgrad.distributed`, which reads their
arguments with these same helpers). Nothing here traces or compiles.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import numpy as np

from ..backend.numba.codegen import KernelSource
from ..core.ir import C64, F32, Aval, Graph
from ..core.pytree import LEAF, Tree, flatten, unflatten
from ..core.tracing import Traced, Tracer
from ..prims.elementwise import as_float
from ..prims.reductions import reshape
from . import pipeline
from .guards import World


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
    world: World | None = None    # what the function read from outside, checked per call
    out_tree: Tree = LEAF         # the structure of what the function returned

    def run(self, *inputs: Any) -> tuple:
        """The kernel's outputs for the traced inputs (and cotangents)."""
        return self.kernel(*inputs, *self.consts)


class Checked(Protocol):
    """What a fast runner falls back on: the transformed function's checked path
    (:class:`symgrad.transforms.api.Transformed`)."""

    def _call_checked(self, args: tuple, gradient: Any, kwargs: dict) -> Any: ...


def _positions(what: str, given: Any, distinct: bool) -> tuple[int, ...]:
    """``argnums`` or ``static_argnums`` as a tuple of ints, or a TypeError that says
    what was expected."""
    items = (given,) if isinstance(given, int) else given
    try:
        items = tuple(items)
    except TypeError:
        items = None
    if (items is None or any(not isinstance(a, int) or isinstance(a, bool) for a in items)
            or distinct and len(set(items)) != len(items)):
        kind = "distinct ints" if distinct else "ints"
        raise TypeError(f"{what} must be an int or a tuple of {kind} (argument positions, "
                        f"counted from 0), not {given!r}")
    return items


def _aux_leaves(out_tree: Tree) -> int:
    return out_tree.children[1].num_leaves


def _is_tree(x: Any) -> bool:
    """Whether an argument is a pytree, whose leaves are traced: a dict, or a tuple or list
    that holds an array (or a traced value). A tuple or list of numbers alone is what it
    was before pytrees: an array where it is differentiated, else a static value."""
    if isinstance(x, dict):
        return True
    if not isinstance(x, (tuple, list)):
        return False
    leaves, _ = flatten(x)
    return any(isinstance(leaf, (np.ndarray, Tracer)) or _is_dask_array(leaf) for leaf in leaves)


def _is_float_numbers(x: Any) -> bool:
    """Whether ``x`` is a tuple or list of real numbers with a float among them (``(1.0,
    2.0)``): :func:`symgrad.vjp` differentiates it, as an array (what ``grad`` makes of it
    by ``argnums``; ``jax.vjp`` too, as a tuple); a tuple of integers alone (a shape, axes)
    stays static."""
    return isinstance(x, (tuple, list)) and all(
        isinstance(v, (float, int, np.floating, np.integer)) and not isinstance(v, bool)
        for v in x) and any(isinstance(v, (float, np.floating)) for v in x)


def _is_dask_array(x: Any) -> bool:
    """Whether ``x`` is a ``dask.array.Array``, told without importing Dask."""
    return type(x).__module__.startswith("dask.array") and hasattr(x, "chunks")


def _any_dask(values: Any) -> bool:
    """Whether any of ``values`` is a Dask array, or a tuple, list or dict holding one (a
    pytree argument, a tuple of cotangents): such a call goes to :mod:`symgrad.distributed`."""
    for x in values:
        if _is_dask_array(x) or isinstance(x, (tuple, list)) and _any_dask(x) \
                or isinstance(x, dict) and _any_dask(x.values()):
            return True
    return False


class _Rebuild:
    """The function of the leaves of pytree arguments: rebuilds the trees, calls ``fun``."""

    def __init__(self, fun: Callable, trees: tuple, groups: tuple, names: list[str]):
        self.fun, self.trees, self.groups = fun, trees, groups
        self.__name__ = getattr(fun, "__name__", "f")
        self.__signature__ = inspect.Signature(
            [inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY) for n in names])

    def __call__(self, *leaves: Any, **kwargs: Any) -> Any:
        args = [leaves[g[0]] if tree is None else unflatten(tree, [leaves[k] for k in g])
                for tree, g in zip(self.trees, self.groups)]
        return self.fun(*args, **kwargs)


class _KeywordTrees:
    """``fun`` with its pytree keyword arguments ``names`` taken as positional arguments
    after the first ``n``: their leaves are traced like a positional pytree's."""

    def __init__(self, fun: Callable, n: int, names: tuple[str, ...], positional: list[str]):
        self.fun, self.n, self.names = fun, n, names
        self.__name__ = getattr(fun, "__name__", "f")
        self.__signature__ = inspect.Signature(
            [inspect.Parameter(p, inspect.Parameter.POSITIONAL_ONLY)
             for p in (*positional, *names)])

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        n = self.n
        return self.fun(*args[:n], **dict(zip(self.names, args[n:])), **kwargs)


# ---------------------------------------------------------------------------
# argument handling


#: how ``_Fast.plan`` passes an argument: as it is, float(x), bool(x), or not (static)
_PASS, _FLOAT, _BOOL, _DROP = range(4)
#: how ``_Fast`` returns the picked outputs: one, a tuple, (value, (grads...)), or a
#: tuple of adjacent outputs none of which is wrapped (a slice of the kernel's tuple)
_ONE, _TUPLE, _VALUE_AND_GRADS, _RUN = range(4)
#: starts the fast key of a call with gradient= (no argument's fact is this object)
_SEEDED = object()
#: traced numbers whose value does not change the specialization: keyed by type alone
_TYPE_KEYED = frozenset({float, *(t for t in np.sctypeDict.values()
                                  if issubclass(t, (np.floating, np.integer)))})
#: traced (or static) values that ``_remember`` accepts keyed by (type, value)
_VALUE_KEYED = frozenset({int, bool, np.bool_})
#: numpy's C_CONTIGUOUS | ALIGNED | WRITEABLE bits of ``ndarray.flags.num``: an array
#: with them all set is what a kernel takes as it is
_READY = 0x1 | 0x100 | 0x400
#: a Python float's facts in the fast key (one shared tuple: nothing is built per call)
_FLOAT_FACTS = (float,)
#: kernel scalars as numpy scalars, like numpy's reductions: np.float64(x) copies the
#: bits (exact); a bool picks numpy's own True_ or False_
_SCALAR_TYPES = {float: np.float64, complex: np.complex128,
                 bool: (np.False_, np.True_).__getitem__}
_FAST_LIMIT = 256
#: signatures a transformed function keeps specialized (a loop over many shapes or
#: static values would otherwise keep every graph and kernel it ever made)
_CACHE_LIMIT = 64


def _fast_key(args: tuple, _float: type = float, _ndarray: type = np.ndarray,
              _facts: tuple = _FLOAT_FACTS, _typed: frozenset = _TYPE_KEYED,
              _len: Callable = len, _type: type = type) -> tuple:
    """What the fast path is keyed on: each argument's facts in turn, in one flat tuple.
    An array's are its shape, dtype and flags (the kernel takes it as it is when the
    :data:`_READY` ones are set; they also fix its Numba type, which lets the fast path
    call the compiled overload directly. All of numpy's flags are kept, unmasked, which
    costs 50 ns less per array: a view and an array that owns its data are two keys, each
    filled by one checked call); a float's or numpy number's, its type; anything else's,
    its type and value (so an unhashable argument raises TypeError). The first fact of
    each argument (a shape is a tuple, the others start with a type) says how many
    follow, so different arguments never give one key. (A new fact of an array, such as
    a dtype-dependent one, goes in the ndarray line of the loop and in the lines of one
    to four arrays.)

    One to four arrays, or one to four Python floats, and nothing else (the common calls)
    get the loop's tuple in one expression, without a new tuple per argument: 0.1-0.2 us
    less for 2-4 arrays (``benchmarks/dispatch.py``; ``tests/test_fast_key.py`` checks
    it is the same key). (A Python float's facts are ``(float,)``: :data:`_FLOAT_FACTS`.)
    It runs on every call: the names it reads are bound as defaults (local reads, not a
    global and an attribute lookup per argument); callers pass ``args`` alone."""
    n = _len(args)
    if n == 1:
        a, = args
        ta = _type(a)
        if ta is _ndarray:
            return (a.shape, a.dtype, a.flags.num)
        if ta is _float:
            return _facts
    elif n == 2:
        a, b = args
        ta, tb = _type(a), _type(b)
        if ta is _ndarray and tb is _ndarray:
            return (a.shape, a.dtype, a.flags.num, b.shape, b.dtype, b.flags.num)
        if ta is _float and tb is _float:
            return (_float, _float)
    elif n == 3:
        a, b, c = args
        ta, tb, tc = _type(a), _type(b), _type(c)
        if ta is _ndarray and tb is _ndarray and tc is _ndarray:
            return (a.shape, a.dtype, a.flags.num, b.shape, b.dtype, b.flags.num,
                    c.shape, c.dtype, c.flags.num)
        if ta is _float and tb is _float and tc is _float:
            return (_float, _float, _float)
    elif n == 4:
        a, b, c, d = args
        ta, tb, tc, td = _type(a), _type(b), _type(c), _type(d)
        if ta is _ndarray and tb is _ndarray and tc is _ndarray and td is _ndarray:
            return (a.shape, a.dtype, a.flags.num, b.shape, b.dtype, b.flags.num,
                    c.shape, c.dtype, c.flags.num, d.shape, d.dtype, d.flags.num)
        if ta is _float and tb is _float and tc is _float and td is _float:
            return (_float, _float, _float, _float)
    key: tuple = ()
    for x in args:
        t = _type(x)
        if t is _float:
            key += _facts
        elif t is _ndarray:
            key += (x.shape, x.dtype, x.flags.num)
        elif t in _typed:
            key += (t,)
        else:
            key += (t, x)
    return key


def _seeded_key(args: tuple, gradient: Any) -> tuple:
    """The fast key of a call with ``gradient=``: the arguments' facts, then the gradient's."""
    return (_SEEDED, *_fast_key(args), *_fast_key((gradient,)))


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


class _Fast(NamedTuple):
    """A call signature seen before, ready to run: what ``__call__`` does on a hit
    (:func:`_runner` makes it a function; this record stays on it as ``run.fast``)."""

    kernel: Callable[..., tuple]      # the compiled overload, the warm Numba dispatcher,
                                      # or a Kernel, Chain, interpreter
    consts: tuple                     # its trailing arguments
    plan: tuple[int, ...] | None      # per argument _PASS, _FLOAT, _BOOL or _DROP; None: all pass
    picks: tuple[int, ...]            # the outputs returned, in order
    wraps: tuple[Any, ...]            # per pick: what makes a kernel scalar a numpy one, or None
    form: int                         # _ONE, _TUPLE, _VALUE_AND_GRADS or _RUN
    holds: Callable[[tuple], bool] | None  # the specialization's guards (None: reads nothing)


#: a fast entry: called as ``run(transformed, args, gradient)``, returns the call's result
Runner = Callable[[Checked, tuple, Any], Any]


def _checked(transformed: Checked, args: tuple, gradient: Any) -> Any:
    """The runner of a call that has no fast entry: the checked path (which may add one)."""
    return transformed._call_checked(args, gradient, {})


def _runner(fast: _Fast, seeded: bool, total: int) -> Runner:
    """The function a fast call runs, doing only what its signature needs: the guards,
    the kernel (whose ``total`` outputs come as a tuple) and, where needed, the
    conversions and the picking and wrapping of the outputs. A guard that fails sends
    the call to the checked path (which traces again)."""
    call, consts, plan, picks, wraps, form, holds = fast
    first, last, wrap = picks[0], picks[-1] + 1, wraps[0]
    if seeded or plan is not None or form not in (_ONE, _RUN, _TUPLE):
        def run(t: Checked, args: tuple, gradient: Any) -> Any:
            if holds is not None and not holds(args):
                return t._call_checked(args, gradient, {})
            inputs = (*args, gradient) if seeded else args
            if plan is not None:
                inputs = _converted(plan, inputs)
            outs = call(*inputs, *consts)
            if form == _ONE:
                return outs[first] if wrap is None else wrap(outs[first])
            if form == _RUN:
                return outs[first:last]
            return _finish(outs, picks, wraps, form)
    elif form == _ONE:  # (the common case: every argument as it is, one output)
        def run(t: Checked, args: tuple, gradient: Any) -> Any:
            if holds is not None and not holds(args):
                return t._call_checked(args, None, {})
            out = (call(*args, *consts) if consts else call(*args))[first]
            return out if wrap is None else wrap(out)
    else:
        run = _several(call, consts, holds, picks, wraps, form == _RUN, total)
    run.fast = fast  # type: ignore[attr-defined] -- for inspection (tests, benchmarks)
    return run


def _several(call: Callable[..., tuple], consts: tuple, holds: Callable[[tuple], bool] | None,
             picks: tuple[int, ...], wraps: tuple, unwrapped: bool, total: int) -> Runner:
    """The runner of a call that returns a tuple of outputs, all arguments as they are:
    the kernel's own tuple (or a slice of it) when nothing is wrapped; 2 to 4 adjacent
    outputs wrapped alike (numpy scalars) by direct calls, which cost half what
    ``tuple(map(np.float64, outs))`` does; anything else by :func:`_finish`."""
    first, last, wrap = picks[0], picks[-1] + 1, wraps[0]
    whole = first == 0 and last == total
    count = len(picks) if picks == tuple(range(first, last)) and len(set(wraps)) == 1 \
        and 2 <= len(picks) <= 4 and not unwrapped else 0

    def run(t: Checked, args: tuple, gradient: Any) -> Any:
        if holds is not None and not holds(args):
            return t._call_checked(args, None, {})
        outs = call(*args, *consts) if consts else call(*args)
        if unwrapped:
            return outs if whole else outs[first:last]
        if count == 2:
            a, b = outs if whole else outs[first:last]
            return wrap(a), wrap(b)
        if count == 3:
            a, b, c = outs if whole else outs[first:last]
            return wrap(a), wrap(b), wrap(c)
        if count == 4:
            a, b, c, d = outs if whole else outs[first:last]
            return wrap(a), wrap(b), wrap(c), wrap(d)
        return _finish(outs, picks, wraps, _TUPLE)
    return run


def _fast_entry(positions: tuple[frozenset[int], frozenset[int]], has_aux: bool,
                picks: tuple[int, ...], form: int, args: tuple, gradient: Any,
                spec: Specialization, inputs: list,
                outs: tuple) -> tuple[tuple, Runner] | None:
    """The fast path's key and runner for a call that ``_prepare`` made into ``spec`` and
    ``inputs`` and ran to ``outs``, of a transformation whose differentiated and static
    positions are ``positions``, that returns the outputs ``picks`` in the ``form``
    (:meth:`symgrad.transforms.signature.Signature.fast_picks`); None unless ``_fast_key``
    determines all that ``_prepare`` did: the arguments need at most a ``float()`` and static ones
    are keyed by value. (Arrays that needed a copy or a cast keep taking the checked path.)
    The runner calls the compiled Numba overload of these inputs directly
    (:func:`symgrad.transforms.pipeline.kernel_entry`): the key fixes the Numba type of
    every input."""
    n = len(args)
    diff, static = positions
    if spec.world is not None and spec.world.unguarded is not None:
        return None  # fails closed: every call traces (checked path)
    if has_aux or spec.out_tree.kind not in ("leaf", "tuple") or any(
            c.kind != "leaf" for c in spec.out_tree.children):
        return None  # nested results are built by _result
    if gradient is not None:
        if spec.is_tuple:
            return None  # a tuple of cotangents: the fast key does not see inside it
        args = (*args, gradient)
    plan: list[int] = []
    given = iter(inputs)
    for i, x in enumerate(args):
        t = type(x)
        if i < n and not _is_traced(i, x, diff, static):
            if t in _TYPE_KEYED or isinstance(x, (float, complex, np.complexfloating, tuple)):
                return None  # a static value the fast key holds only the type of (or -0.0)
            plan.append(_DROP)
            continue
        if t is not np.ndarray and t not in _TYPE_KEYED and t not in _VALUE_KEYED:
            return None  # lists, array-likes: converted on every call
        value = next(given)
        if value is x or t is float or t is np.float32 is type(value):
            plan.append(_PASS)
        elif type(value) is float and not (t is np.ndarray and x.ndim):
            plan.append(_FLOAT)
        elif type(value) is bool:
            plan.append(_BOOL)
        else:
            return None
    ready = getattr(spec.kernel, "dispatcher", None)  # a Kernel, or a Tiered one
    kernel = spec.kernel if ready is None else ready()
    if kernel is None:
        return None  # still compiling in the background: calls stay on the checked path
    kernel = pipeline.kernel_entry(kernel, (*inputs, *spec.consts))
    dtypes = [a.dtype for a in spec.graph.outputs]
    wraps = tuple(_wrap(outs[k], dtypes[k]) for k in picks)
    if form == _TUPLE and wraps == (None,) * len(picks) and picks == tuple(
            range(picks[0], picks[-1] + 1)):
        form = _RUN
    fast = _Fast(kernel, spec.consts, None if all(c == _PASS for c in plan) else tuple(plan),
                 tuple(picks), wraps, form, None if spec.world is None else spec.world.holds)
    seeded = gradient is not None
    key = _seeded_key(args[:n], gradient) if seeded else _fast_key(args)
    return key, _runner(fast, seeded, len(outs))


def _is_traced(i: int, x: Any, diff: frozenset[int], static: frozenset[int]) -> bool:
    """Whether argument ``i`` is a kernel input (else it is static)."""
    return i in diff or (i not in static and _is_array_like(x))


def _value(x: Any) -> Any:
    """A ``symgrad.Tensor`` argument as its value (a numpy array); anything else as it is."""
    if isinstance(x, Traced) and not isinstance(x, Tracer):
        return x._held_value()  # (np.asarray refuses a Tensor that requires grad)
    return x


def _values(args: tuple) -> tuple:
    return tuple(map(_value, args))


def _is_array_like(x: Any) -> bool:
    numeric = isinstance(x, (np.ndarray, np.generic, float, int, complex))  # complex: refused
    return numeric and not isinstance(x, (bool, np.bool_))


def _static_key(x: Any) -> Any:
    """A static value as a cache key that tells 0.0 from -0.0 and finds nan again (each
    part of a complex number, numpy's scalars too: sqrt(-4 - 0j) is -2j)."""
    if isinstance(x, (float, np.floating)):
        return (type(x), float(x).hex())
    if isinstance(x, (complex, np.complexfloating)):
        return (type(x), float(x.real).hex(), float(x.imag).hex())
    if isinstance(x, tuple):
        return (tuple, tuple(map(_static_key, x)))
    return (type(x), x)


def _require_hashable(x: Any, name: str) -> None:
    try:
        hash(x)
    except TypeError:
        raise TypeError(f"argument {name} ({type(x).__name__}) is static (not an array or "
                        f"number), so it must be hashable: pass np.array({name}) to trace it "
                        "(and differentiate it, in grad and vjp), or a tuple to keep it static "
                        "(no gradient)") from None


def _cotangents(gradient: Any, outs: tuple[Aval, ...], out_tree: Tree,
                name: str, has_aux: bool = False) -> list[Any]:
    """``gradient=`` as kernel arguments (or tracers, when traced), one per output,
    checked against the outputs' avals ``outs`` and their structure ``out_tree``."""
    given = _cotangent_leaves(gradient, outs, out_tree, name, has_aux)
    return [_traced_cotangent(g, out, name) if isinstance(g, Tracer)
            else pipeline.cotangent(g, out, f"{name} returns") for g, out in zip(given, outs)]


def _cotangent_leaves(gradient: Any, outs: tuple[Aval, ...], out_tree: Tree,
                      name: str, has_aux: bool = False) -> list[Any]:
    """``gradient=`` as one value per output, as given (numpy, traced or Dask), checked
    to have the structure ``out_tree`` of ``name``'s output (whose avals are ``outs``);
    with ``has_aux``, of its value only (aux passes through, with no cotangent)."""
    if has_aux and out_tree.kind in ("tuple", "list") and len(out_tree.children) == 2:
        outs, out_tree = outs[:1], out_tree.children[0]
    given = [gradient]
    if out_tree.kind != "leaf":
        given, tree = flatten(gradient)
        if tree != out_tree and out_tree.kind in ("tuple", "list", "namedtuple") and all(
                c.kind == "leaf" for c in out_tree.children) and tree.kind in ("tuple", "list") \
                and len(tree.children) == len(out_tree.children):
            tree = out_tree  # a list for a tuple of arrays (or a named tuple's), or back
        if tree != out_tree:
            raise ValueError(f"gradient must have the structure of {name}'s output, "
                             f"{out_tree}, not {tree}")
    if len(given) != len(outs):
        raise ValueError(f"gradient must have one array per output of {name} ({len(outs)}), "
                         f"got {len(given)}")
    return given


def _traced_cotangent(g: Tracer, out: Aval, name: str) -> Any:
    """A traced ``gradient=`` (a transformed function called inside a trace), checked
    as :func:`symgrad.transforms.pipeline.cotangent` checks a concrete one."""
    g = as_float(g) if g.dtype == np.bool_ else g
    if g.shape == out.shape:
        return g
    if g.size == 1 and out.size == 1:
        return reshape(g, out.shape)
    raise ValueError(f"gradient has shape {g.shape} but {name} returns shape {out.shape}: pass "
                     "a gradient of the output's shape (the result is the gradient of "
                     "sum(output * gradient))")


def _scalar(x: Any, dtype: str = "") -> Any:
    """Kernel scalars (Python floats/bools/complex numbers) as numpy scalars, like numpy's
    reductions; an output of a float32 or complex64 aval (``dtype``) in that dtype (Numba
    boxes a float32 as a Python float; a sum accumulates in float64, or complex128, and is
    rounded here, once)."""
    if isinstance(x, bool):
        return np.bool_(x)
    if dtype == F32:
        return _to_f32(x)
    if dtype == C64:
        return _to_c64(x)
    return _SCALAR_TYPES[type(x)](x) if type(x) in (float, complex) else x


def _narrowed(x: Any, dtype: type) -> Any:
    """An output as ``dtype``: an array (a copy only if it is not of it), or a scalar."""
    if isinstance(x, np.ndarray):
        return x if x.dtype == dtype else x.astype(dtype)
    return dtype(x)


def _to_f32(x: Any) -> Any:
    """A float32 output as float32: an array (a copy only if it is not float32), or a
    ``np.float32`` scalar."""
    return _narrowed(x, np.float32)


def _to_c64(x: Any) -> Any:
    """A complex64 output as complex64 (a kernel computes complex64 sums in complex128)."""
    return _narrowed(x, np.complex64)


def _wrap(x: Any, dtype: str) -> Any:
    """How the fast path finishes an output the kernel gave as ``x`` for an aval of
    ``dtype``: None (as it is), a numpy scalar type, :func:`_to_f32` or :func:`_to_c64`."""
    narrow = {F32: (_to_f32, np.float32), C64: (_to_c64, np.complex64)}.get(dtype)
    if narrow is not None and not (isinstance(x, np.ndarray) and x.dtype == narrow[1]):
        return narrow[0]
    return _SCALAR_TYPES.get(type(x))
