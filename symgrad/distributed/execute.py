"""Running a row-split plan (:mod:`symgrad.distributed.plan`) on Dask.

Each pass is one ``dask.array.blockwise`` over the row chunks of the data: a
task per chunk runs the pass's kernel (:class:`ChunkProgram`) and returns its
partial results and row-wise outputs; the partials of each kind are stacked
and combined by Dask's own tree reductions (``sum``, ``prod``, ``max``,
``min`` over the stacked axis), and the row-wise outputs are Dask arrays with
the data's chunks. The driver steps between passes (small values: the
post-reduction part of the function and of its adjoint) run on the numpy
interpreter. With ``compute=True`` each pass is computed before the next is
built, so that a chunk is read once per pass and never held across passes;
with ``compute=False`` the passes chain into one lazy graph (the driver
steps become ``dask.delayed`` tasks).

Kernels reach workers as graphs, not as code objects: a :class:`ChunkProgram`
pickles its chunk graph (primitives by name); a worker retypes it for the
rows of its chunk, generates the kernel source (the same text for every
chunk length, so the same content key) and loads it through
:mod:`symgrad.backend.numba.compile`, once per process. The driver compiles each kernel
first (a signature, no data), so that workers load the machine code from the
disk cache (``SYMGRAD_CACHE_DIR``) instead of compiling it.

Nothing here schedules work: the threads, processes or distributed scheduler
that Dask is configured with runs every task.
"""

from __future__ import annotations

import io
import math
import pickle
import threading
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

import dask
import dask.array as da
import numpy as np
from dask.delayed import Delayed

from ..core.interpreter import interpret
from ..core.ir import BOOL, INT, Eqn, Graph, Literal, Primitive, Var, freeze_params
from ..prims import REGISTRY
from ..transforms import pipeline
from .plan import Pass, Plan
from .rows import Rows, for_rows

if TYPE_CHECKING:
    from ..backend.program import Program

#: how partial results of each kind combine: Dask's tree reductions over the chunks
_REDUCE = {"sum": da.sum, "prod": da.prod, "max": da.max, "min": da.min}
#: a partial result of an empty chunk
_IDENTITY = {"sum": 0.0, "prod": 1.0, "max": -np.inf, "min": np.inf}
_KINDS = tuple(_REDUCE)


# ---------------------------------------------------------------------------
# graphs that pickle: primitives by name, parameters as dicts


class _GraphPickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Primitive):
            return _primitive, (obj.name,)
        if isinstance(obj, MappingProxyType):
            return freeze_params, (dict(obj),)
        return NotImplemented


def _primitive(name: str) -> Primitive:
    return REGISTRY[name]


def _dumps(obj: Any) -> bytes:
    buffer = io.BytesIO()
    _GraphPickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return buffer.getvalue()


class Shipped:
    """A graph (and what goes with it) that travels to workers as bytes; the bytes are
    made once, and a process decodes each shipment once (by its token)."""

    def __init__(self, value: Any):
        self.token = uuid.uuid4().hex
        self.value = value
        self._blob: bytes | None = None

    def __reduce__(self) -> Any:
        if self._blob is None:
            self._blob = _dumps(self.value)
        return _arrive, (type(self), self.token, self._blob)

    def __dask_tokenize__(self) -> str:
        return self.token


_ARRIVED: OrderedDict[str, Any] = OrderedDict()
_PROGRAMS: OrderedDict[tuple[str, int], Program] = OrderedDict()
_LOCK = threading.Lock()
_CACHE_LIMIT = 64


def _arrive(cls: type[Shipped], token: str, blob: bytes) -> Shipped:
    with _LOCK:
        shipped = _ARRIVED.get(token)
    if shipped is None:
        shipped = cls.__new__(cls)
        shipped.token, shipped.value, shipped._blob = token, pickle.loads(blob), blob
        _remember(_ARRIVED, token, shipped)
    return shipped


def _remember(cache: OrderedDict, key: Any, value: Any) -> None:
    with _LOCK:
        cache[key] = value
        while len(cache) > _CACHE_LIMIT:
            cache.popitem(last=False)


# ---------------------------------------------------------------------------
# one pass on one chunk


class _ChunkPass(NamedTuple):
    """What a :class:`ChunkProgram` ships: a pass's chunk graph (typed for ``n`` rows),
    its row axes and row-count parameters, and how to return its results."""

    graph: Graph
    axes: list[tuple[Var, int]]       # row axis of each value that has one
    sizes: list[tuple[Eqn, tuple]]    # parameter paths that hold the row count
    n: int
    number: int                       # which pass
    combine: tuple[str, ...]          # per partial result
    n_data: int                       # the graph's first inputs are chunks
    title: str                        # for the kernel's header
    backend: str
    row_axes: tuple[int, ...]         # per row-wise output


class ChunkProgram(Shipped):
    """A pass's chunk graph, its row axes, and how to return its results: what each
    chunk's task runs. ``program(r)`` is the compiled program for ``r`` rows."""

    def __init__(self, p: Pass, rows: Rows, title: str, backend: str):
        graph = p.graph
        axes = [(v, rows.axis[id(v)]) for v in _vars(graph) if id(v) in rows.axis]
        sizes = [(e, rows.sizes[id(e)]) for e in _with_origins(graph.eqns)
                 if id(e) in rows.sizes]
        row_axes = tuple(rows.axis[id(v)] for v in p.rows)
        super().__init__(_ChunkPass(graph, axes, sizes, rows.n, p.number, p.combine,
                                    p.n_data, title, backend, row_axes))

    def program(self, r: int) -> Program:
        key = (self.token, r)
        with _LOCK:
            program = _PROGRAMS.get(key)
        if program is None:
            c: _ChunkPass = self.value
            rows = Rows(c.n, {id(v): k for v, k in c.axes}, {id(e): s for e, s in c.sizes},
                        frozenset())
            chunk = for_rows(c.graph, rows, r)
            description = f"pass {c.number} of {c.title}, per chunk of rows"
            # nogil: Dask's threads run chunks in parallel (kernels hold the GIL otherwise)
            program = pipeline.program(chunk, c.graph.name, description, backend=c.backend,
                                       nogil=True)
            _remember(_PROGRAMS, key, program)
        return program

    def __call__(self, *args: Any) -> np.ndarray:
        """The task of one chunk: the data blocks, then the driver's values."""
        c: _ChunkPass = self.value
        graph, combine, n_data = c.graph, c.combine, c.n_data
        if not n_data:  # a pass that reads no data: its first argument only counts the rows
            r = _only(args[0]).shape[0]
            args = args[1:]
        blocks = [_kernel_array(_only(b), v.dtype) for b, v in zip(args[:n_data], graph.inputs)]
        values = [_kernel_value(x, v) for x, v in zip(args[n_data:], graph.inputs[n_data:])]
        if n_data:
            r = blocks[0].shape[0]
        if r:
            program = self.program(r)
            outs = program.kernel(*blocks, *values, *program.consts)
        else:  # an empty chunk: identities, and empty row outputs
            outs = tuple(np.full(v.shape, _IDENTITY[c]) for v, c in zip(graph.outputs, combine))
            outs += tuple(np.zeros((*v.shape[:k], 0, *v.shape[k + 1:]), dtype=v.dtype)
                          for v, k in zip(graph.outputs[len(combine):], c.row_axes))
        packs = {}
        for kind in _KINDS:
            parts = [np.ravel(o) for o, c in zip(outs, combine) if c == kind]
            if parts:
                packs[kind] = np.concatenate(parts)[None, :]
        cell = np.empty(1, dtype=object)
        cell[0] = (packs, outs[len(combine):])
        return cell

    def warm(self, lengths: Sequence[int]) -> None:
        """Compile the kernel for each chunk length on the driver (a signature, no run),
        so that workers load it from the disk cache."""
        import numba

        graph = self.value.graph
        warmed = self.__dict__.setdefault("_warmed", set())  # on the driver's object only
        for r in sorted(set(lengths) - warmed):
            warmed.add(r)
            if not r:
                continue
            program = self.program(r)
            kernel = getattr(program.kernel, "function", None)
            if kernel is None:  # the interpreter, or a chain of pieces: compiled on first call
                continue
            example = [_kernel_value(np.zeros((1,) * v.aval.ndim), v) for v in graph.inputs]
            try:
                kernel.compile(tuple(numba.typeof(a) for a in (*example, *program.consts)))
            except Exception:  # noqa: BLE001 -- the chunk's own call reports it properly
                pass


def _vars(graph: Graph) -> list[Var]:
    found: dict[int, Var] = {}
    for v in (*graph.inputs, *graph.const_vars):
        found[id(v)] = v
    for e in _with_origins(graph.eqns):
        for a in (*e.inputs, e.out):
            if isinstance(a, Var):
                found[id(a)] = a
    return list(found.values())


def _with_origins(eqns: Sequence) -> list:
    out, seen, stack = [], set(), list(eqns)
    while stack:
        e = stack.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        out.append(e)
        stack.append(e.origin)
    return out


def _only(block: Any) -> Any:
    """The block of a Dask array whose axes other than the rows are one chunk each, as
    ``blockwise`` passes it without ``concatenate``: nested in lists of one."""
    while isinstance(block, list):
        (block,) = block
    return block


def _kernel_array(x: Any, dtype: str) -> np.ndarray:
    """A chunk as the kernel takes it: C-contiguous, writable, of the graph's dtype
    (float64, bool, int64)."""
    array = np.ascontiguousarray(x, dtype=np.dtype(dtype))
    return array if array.flags.writeable else array.copy()


def _kernel_value(x: Any, v: Var) -> Any:
    """A driver value as a kernel argument: a Python number, or an array as above."""
    if not v.shape:
        return bool(x) if v.dtype == BOOL else int(x) if v.dtype == INT else float(x)
    return _kernel_array(x, v.dtype)


# ---------------------------------------------------------------------------
# the driver


def _step(step: Shipped, layout: tuple, n_packs: int, *args: Any) -> tuple:
    """A driver step: unpack the combined partials (``layout``: per total, its kind,
    offset and shape; the packs come in :data:`_KINDS` order, those of no size left
    out), then run the step's graph on the interpreter."""
    graph: Graph = step.value
    kinds = [k for k in _KINDS if any(c == k and math.prod(s) for c, _, s in layout)]
    packs = dict(zip(kinds, args[:n_packs]))
    totals = [np.reshape(packs[kind][start:start + math.prod(shape)], shape)
              if math.prod(shape) else np.zeros(shape) for kind, start, shape in layout]
    return tuple(interpret(graph, *totals, *args[n_packs:]))


def _layout(p: Pass) -> tuple:
    offsets = dict.fromkeys(_KINDS, 0)
    layout = []
    for v, kind in zip(p.totals, p.combine):
        layout.append((kind, offsets[kind], v.shape))
        offsets[kind] += v.aval.size
    return tuple(layout)


class Run:
    """One call of a plan: the driver's values, pass after pass."""

    def __init__(self, plan: Plan, programs: Sequence[ChunkProgram], steps: Sequence[Shipped],
                 before: Shipped, compute: bool):
        self.plan, self.programs, self.steps, self.before = plan, programs, steps, before
        self.lazy = not compute
        self.env: dict[int, Any] = {}
        self.rows: dict[int, Any] = {}

    def start(self, values: dict[int, Any], data: dict[int, da.Array]) -> None:
        plan = self.plan
        self.env.update(values)
        self.env.update((id(v), np.float64(c)) for v, c in plan.counts)
        self.data = data
        self._run_step(self.before, (), [], plan.before)

    def _run_step(self, shipped: Shipped, layout: tuple, packs: list, graph: Graph) -> None:
        args = [self.env[id(v)] for v in graph.inputs[len(layout):]]
        if not graph.outputs:
            return
        if self.lazy:
            outs = dask.delayed(_step, nout=len(graph.outputs), pure=True)(
                shipped, layout, len(packs), *packs, *args)
            outs = tuple(outs)  # nout delayed values, one per output
        else:
            outs = _step(shipped, layout, len(packs), *packs, *args)
        self.env.update(zip(map(id, graph.outputs), outs))

    def run_pass(self, p: Pass, program: ChunkProgram, step: Shipped) -> None:
        graph = p.graph
        first = self.data[id(self.plan.data[0])]
        row_chunks = first.chunks[0]
        args: list[Any] = []
        letters = iter(f"a{k}" for k in range(10_000))
        # a pass that reads no data (the gradient of mean(X * w) in X: w / n on every
        # row) still runs per chunk: the first data array gives it its chunks of rows
        for x in [self.data[id(v)] for v in graph.inputs[:p.n_data]] or [first]:
            args += [x, ("rows", *(next(letters) for _ in range(x.ndim - 1)))]
        values = [self.env[id(v)] for v in graph.inputs[p.n_data:]]
        for x in values:
            args += [x, None]
        program.warm(row_chunks)
        nb = len(row_chunks)
        # the other axes are single chunks: the blocks come as lists of one, not concatenated
        # (dask's concatenate=True would copy each block)
        cells = da.blockwise(program, ("rows",), *args, dtype=object, concatenate=False,
                             adjust_chunks={"rows": 1}, meta=np.empty((0,), dtype=object),
                             name=f"symgrad-pass-{p.number}-{uuid.uuid4().hex}")
        for k, v in enumerate(p.rows):
            axis = self.plan.rows.axis[id(v)]
            chunks = tuple(row_chunks if a == axis else (d,) for a, d in enumerate(v.shape))
            self.rows[id(v)] = cells.map_blocks(
                _row_output, k, chunks=chunks, dtype=np.dtype(v.dtype),
                new_axis=[a for a in range(v.aval.ndim) if a != axis] or None,
                meta=np.empty((0,) * v.aval.ndim, dtype=v.dtype))
        layout = _layout(p)
        reduced = []
        for kind in _KINDS:
            size = sum(v.aval.size for v, c in zip(p.totals, p.combine) if c == kind)
            if size:
                stacked = cells.map_blocks(_pack, kind, chunks=((1,) * nb, (size,)),
                                           new_axis=1, dtype=np.float64,
                                           meta=np.empty((0, 0)))
                reduced.append(_REDUCE[kind](stacked, axis=0))
        if not self.lazy and reduced:
            reduced = list(dask.compute(*reduced))
        self._run_step(step, layout, reduced, p.after)

    def result(self, outputs: Sequence[Any]) -> list[Any]:
        out = []
        for a in outputs:
            if isinstance(a, Literal):
                value: Any = np.asarray(a.value, dtype=a.dtype)[()]
                out.append(da.from_array(np.asarray(value)) if self.lazy else value)
            elif id(a) in self.rows:
                out.append(self.rows[id(a)])
            elif id(a) in self.data:
                out.append(self.data[id(a)])
            else:
                value = self.env[id(a)]
                if self.lazy and not isinstance(value, da.Array):
                    if isinstance(value, Delayed):
                        value = da.from_delayed(value, a.shape, dtype=a.dtype)
                    else:
                        value = da.from_array(np.asarray(value, dtype=a.dtype))
                out.append(value)
        return out


def _row_output(cell: np.ndarray, k: int) -> np.ndarray:
    return cell[0][1][k]


def _pack(cell: np.ndarray, kind: str) -> np.ndarray:
    return cell[0][0][kind]


def run(plan: Plan, programs: Sequence[ChunkProgram], steps: Sequence[Shipped],
        before: Shipped, values: dict[int, Any], data: dict[int, da.Array],
        compute: bool) -> list[Any]:
    """The outputs of ``plan.graph`` for parameter ``values`` and Dask ``data`` (both
    by id of the graph's input), as numpy values (lazy: Dask objects) and Dask arrays."""
    r = Run(plan, programs, steps, before, compute)
    r.start(values, data)
    for p, program, step in zip(plan.passes, programs, steps):
        r.run_pass(p, program, step)
    return r.result(plan.graph.outputs)
