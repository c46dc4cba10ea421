"""Gradients over Dask arrays: ``sg.grad``, ``sg.value_and_grad`` and ``sg.jit`` called
with ``dask.array.Array`` arguments (data, chunked along their rows on axis 0)
beside numpy ones (parameters).

:func:`call` is what a transformed function does when an argument is a Dask
array (:mod:`symgrad.transforms.api` hands such calls here; Dask is imported only then).
The function is traced with the data's full shapes, differentiated and
optimized as usual; :mod:`.plan` splits the resulting graph at the row axis
into passes over the chunks and driver steps between them, and
:mod:`.execute` runs them on whatever Dask scheduler is configured (threads,
processes, or a ``dask.distributed`` client).

Contract:

- parameters (numpy) get numpy gradients; ``compute=False`` (a keyword of the
  call, taken by symgrad whenever a Dask argument is present) returns lazy
  Dask objects instead, to be computed together with others;
- a value with one entry per row (a gradient with respect to a Dask argument,
  or a row-wise output of ``sg.jit``) is a Dask array with the data's row
  chunks, never gathered on the driver;
- all Dask arguments must have the same number of rows; they are rechunked to
  the row chunks of the first one (and to one chunk along their other axes);
- an operation that mixes rows across chunks raises :class:`RowSplitError`
  naming it; nothing computes a whole Dask array on the driver.

    >>> import numpy as np, dask.array as da, symgrad as sg
    >>> X = da.from_array(np.arange(12.0).reshape(6, 2), chunks=(4, 2))
    >>> sg.grad(lambda w, X: np.mean((X @ w - 1.0) ** 2))(np.zeros(2), X)
    array([-10., -12.])
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

import numpy as np

from ..core.ir import BOOL, F32, FLOAT, Aval, Graph
from ..core.pytree import Tree, flatten
from ..core.tracing import current_trace
from ..numpy_api import stage
from ..transforms import pipeline
from ..transforms.calls import (
    _cotangent_leaves,
    _is_array_like,
    _is_dask_array,
    _is_traced,
    _require_hashable,
    _static_key,
)
from ..transforms.captured import world
from ..transforms.signature import Signature
from .plan import Plan, make_plan
from .rows import RowSplitError

__all__ = ["RowSplitError", "call", "plan_of"]


class _Prepared:
    """A plan for one signature, with its kernels and driver steps ready to ship."""

    def __init__(self, plan: Plan, title: str, backend: str, guards: Any, out_tree: Tree,
                 n_primal: int, primal: tuple):
        from .execute import ChunkProgram, Shipped

        self.plan, self.guards, self.out_tree, self.n_primal = plan, guards, out_tree, n_primal
        self.primal = primal  # the avals of what the function returns
        self.programs = [ChunkProgram(p, plan.rows, title, backend) for p in plan.passes]
        self.steps = [Shipped(p.after) for p in plan.passes]
        self.before = Shipped(plan.before)


#: per transformed function, its prepared plans by signature (bounded per function)
_PLANS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()
_PER_FUNCTION = 32


def call(t: Signature, args: tuple, gradient: Any, kwargs: dict) -> Any:
    """The call ``f(*args, gradient=gradient, **kwargs)`` of the transformation whose
    signature is ``t``, where some arguments are Dask arrays (pytree arguments come
    flattened: :class:`symgrad.transforms.api.Transformed` hands the call of their leaves)."""
    from . import execute

    compute = kwargs.pop("compute", True)
    if not isinstance(compute, bool):
        raise TypeError(f"compute must be True or False, not {compute!r}")
    prepared, values, data = _prepare(t, args, gradient, kwargs)
    outs = execute.run(prepared.plan, prepared.programs, prepared.steps, prepared.before,
                       values, data, compute)
    return t.result(outs, prepared.n_primal, prepared.out_tree)


def plan_of(f: Any, *args: Any, gradient: Any = None, **kwargs: Any) -> Plan:
    """The plan that ``f(*args, **kwargs)`` runs when some arguments are Dask arrays, for
    a transformed function ``f`` (``sg.grad(g)``, ...; to inspect it: ``len(plan.passes)``
    is the number of passes over the data)."""
    flat = f.flattened(args)
    if flat is not None:
        return plan_of(flat[0], *flat[1], gradient=gradient, **kwargs)
    kwargs.pop("compute", None)
    return _prepare(f.signature, args, gradient, kwargs)[0].plan


def _prepare(t: Signature, args: tuple, gradient: Any,
             kwargs: dict) -> tuple[_Prepared, dict[int, Any], dict[int, Any]]:
    """The prepared plan of this signature, and the values of the graph's inputs: numpy
    ones and Dask ones (rechunked to common row chunks), by id of the graph's input."""
    t.check_gradient(gradient)
    if current_trace() is not None:
        raise TypeError(f"{t.title} got a Dask array inside a function being traced; "
                        "call it with Dask arrays from plain Python code")
    diff, static = t.positions(len(args))
    values = (*args, *kwargs.values())
    names = [*t.names(len(args)), *kwargs]
    key: list[Any] = [tuple(kwargs)]
    avals: list[Any] = []   # per value: its aval, None if static
    traced: list[Any] = []  # per traced value: the kernel's numpy value, or the Dask array
    for i, x in enumerate(values):
        if _is_dask_array(x):
            if i in static:
                raise TypeError(f"argument {names[i]} is static, so it cannot be a Dask array")
            aval = _dask_aval(x, names[i], promote=i in diff)
            key.append(("dask", aval))
            avals.append(aval)
            traced.append(x)
        elif _is_traced(i, x, diff, static) if i < len(args) else _is_array_like(x):
            value, aval = pipeline.kernel_input(x, f"argument {names[i]}", promote=i in diff,
                                                integers=True)
            key.append((aval, aval.weak))  # (weak is no part of an aval's equality)
            avals.append(aval)
            traced.append(value)
        else:
            _require_hashable(x, names[i])
            key.append(("static", _static_key(x)))
            avals.append(None)
    cts = [] if gradient is None else flatten(gradient)[0]  # checked once the plan is known
    key.append(None if gradient is None else
               tuple(_dask_aval(g, "gradient", True) if _is_dask_array(g) else None
                     for g in cts))
    data = [k for k, x in enumerate([*traced, *cts]) if _is_dask_array(x)]
    if not data:
        raise TypeError("symgrad.distributed.call needs a Dask array argument")
    dask_values = [x for x in [*traced, *cts] if _is_dask_array(x)]
    n_rows = sorted({int(x.shape[0]) for x in dask_values})
    if len(n_rows) != 1:
        raise ValueError(f"the Dask arguments of {t.title} have different numbers of rows "
                         f"({n_rows}); each must have one row per observation")

    cache = _cache_of(t)
    prepared = cache.get(tuple(key))
    if prepared is None or prepared.guards is not None and not prepared.guards.holds(values):
        prepared = _build(t, args, kwargs, avals, data, gradient is not None, n_rows[0])
        with _LOCK:
            cache[tuple(key)] = prepared
            while len(cache) > _PER_FUNCTION:
                cache.pop(next(iter(cache)))
    if gradient is not None:  # numpy cotangents checked and converted as for a numpy call
        cts = _cotangent_leaves(gradient, prepared.primal, prepared.out_tree, t.title,
                                t.has_aux)
        for j, (g, out) in enumerate(zip(cts, prepared.primal)):
            if _is_dask_array(g):
                if tuple(g.shape) != out.shape:
                    raise ValueError(f"gradient has shape {g.shape} but {t.title} returns "
                                     f"shape {out.shape}")
            else:
                cts[j] = pipeline.cotangent(g, out, f"{t.title} returns")
    chunks = dask_values[0].chunks[0]
    values_by_id: dict[int, Any] = {}
    data_by_id: dict[int, Any] = {}
    for v, x in zip(prepared.plan.graph.inputs, [*traced, *cts], strict=True):
        if _is_dask_array(x):
            data_by_id[id(v)] = x.rechunk({0: chunks, **{a: -1 for a in range(1, x.ndim)}})
        else:
            values_by_id[id(v)] = x
    return prepared, values_by_id, data_by_id


def _dask_aval(x: Any, name: str, promote: bool) -> Aval:
    if x.ndim == 0:
        raise TypeError(f"argument {name} is a 0-d Dask array; pass a number or a numpy array")
    if any(np.isnan(c) for chunks in x.chunks for c in chunks):
        raise ValueError(f"argument {name} has chunks of unknown size; call "
                         f"{name}.compute_chunk_sizes() first")
    kind = np.dtype(x.dtype).kind
    if kind not in "biuf":
        raise TypeError(f"argument {name} is a Dask array of dtype {x.dtype}; symgrad takes "
                        "numbers and bools")
    dtype = (BOOL if kind == "b" and not promote
             else F32 if np.dtype(x.dtype) == np.float32 else FLOAT)
    return Aval(tuple(int(d) for d in x.shape), dtype)


def _cache_of(t: Signature) -> dict:
    with _LOCK:
        cache = _PLANS.get(t)
        if cache is None:
            cache = _PLANS[t] = {}
    return cache


def _build(t: Signature, args: tuple, kwargs: dict, avals: list, data: list[int],
           seeded: bool, n: int) -> _Prepared:
    """Trace at ``n`` rows and at a probe count, differentiate, optimize, plan.

    ``data``: the positions of the Dask values among the graph's inputs (the traced
    values, then the cotangents)."""
    guards = world(t.fun, (*args, *kwargs.values()))  # before the trace reads it
    traced_at = [k for k, a in enumerate(avals) if a is not None]
    n_probe = 2 * n + 3
    graphs = []
    for rows in (n, n_probe):
        at = list(avals)
        for position, k in enumerate(traced_at):
            if position in data:
                at[k] = Aval((rows, *avals[k].shape[1:]), avals[k].dtype)
        try:
            graph, out_tree, n_primal, primal = _derive(t, args, kwargs, at, seeded)
        except Exception as e:
            if rows == n or isinstance(e, RowSplitError):
                raise
            raise RowSplitError(
                f"symgrad traces {t.title} a second time with {n_probe} rows instead of "
                f"{n}, to tell which values run over the rows, and that trace failed "
                f"({type(e).__name__}: {e}). Either the function has the number of rows "
                "written into it (write X.shape[0], or -1 in a reshape), or it combines the "
                "Dask data row by row with a numpy array of one entry per row (pass that as a "
                "Dask array with the data's row chunks)") from e
        graphs.append(graph)
        if rows == n:
            first = (out_tree, n_primal, primal)
    plan = make_plan(graphs[0], graphs[1], data, n, n_probe)
    wrt = ", ".join(t.wrt(len(args)))
    title = f"{t.name} with respect to {wrt}" if t.differentiates else t.name
    return _Prepared(plan, f"{title} of {graphs[0].name}", t.backend, guards, *first)


def _derive(t: Signature, args: tuple, kwargs: dict, avals: list,
            seeded: bool) -> tuple[Graph, Tree, int, tuple[Aval, ...]]:
    """The optimized graph of ``t`` at these input avals (what ``_specialize`` makes
    before it compiles: the one :func:`symgrad.transforms.pipeline.derive`), the structure of what
    the function returns, how many outputs of the graph are its own (the value, aux),
    and their avals. Refuses to compute any Dask array during the trace."""
    import dask

    def refuse_compute(*_: Any, **__: Any) -> Any:
        raise TypeError(
            f"{t.title} reads a Dask array that is not one of its arguments (a global or a "
            "closure variable, say): symgrad would have to compute all of it into memory. "
            "Pass it as an argument")

    names = t.names(len(args))
    with dask.config.set(scheduler=refuse_compute):
        staged = stage(t.fun, avals, args, names, kwargs)
    wrt, keep_primal, n_aux = t.plan(staged.graph, staged.out_tree, avals, len(args), seeded)
    final = pipeline.derive(staged.graph, wrt, seeded, keep_primal, n_aux)
    n_primal = len(final.outputs) if wrt is None else int(keep_primal) + n_aux
    return final, staged.out_tree, n_primal, tuple(a.aval for a in staged.graph.outputs)
