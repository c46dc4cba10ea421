"""The backend's one entry: a graph becomes a :class:`Program`, something to call.

:func:`build` runs the backend's stages in order, each taking what the one
before produced: the fusion plan of the graph (:mod:`.fusion`, made once),
the split into pieces when the whole would be slow to compile (:mod:`.split`,
each piece planned once), the kernel source of each piece from its plan
(:mod:`.codegen`), and the loaded kernel of each source (:mod:`.compile`), or
the numpy interpreter for ``backend="numpy"``. A split graph runs as a
:class:`Chain` of its pieces' kernels, passing values along, and returns what
the whole graph would.

    >>> import numpy as np, symgrad as sg
    >>> graph = sg.jit(lambda x: np.sin(x) * 2.0, backend="numpy").graph(np.ones(2))
    >>> program = build(graph, "f", "doctest", backend="numpy")
    >>> program.kernel(np.array([0.0, np.pi / 2]))[0]
    array([0., 2.])
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.interpreter import interpret
from ..core.ir import Graph, Literal, Var
from .numba import compile as kernels
from .numba import split as splitting
from .numba.codegen import KernelSource, generate
from .numba.fusion import plan
from .numba.lowering import between
from .numba.threads import parallel_min
from .numba.tiered import tiered as tiered_kernel
from .registry import backend as registered


class Chain:
    """Runs ``steps`` (one callable per piece, taking its inputs) in order and
    returns the outputs of ``graph``, as one kernel of the whole graph would:
    arrays the caller owns (copies of inputs, constants and repeated outputs).
    ``kernels``: each step's kernel and the constants it takes after the piece's inputs
    (for :meth:`run`)."""

    def __init__(self, graph: Graph, pieces: Sequence[Graph],
                 steps: Sequence[Callable[..., tuple]],
                 kernels: Sequence[tuple[Callable[..., tuple], tuple]] = ()):
        self.pieces = tuple(pieces)
        self._kernels = tuple(kernels)
        slot: dict[int, int] = {id(v): k for k, v in enumerate(graph.inputs)}
        for piece in pieces:
            for v in piece.outputs:
                if isinstance(v, Var):
                    slot.setdefault(id(v), len(slot))
        scratch = len(slot)  # where literal outputs of a piece go (only a whole graph has them)
        self._size = scratch + 1
        self._steps = [(step, [slot[id(v)] for v in piece.inputs],
                        [slot.get(id(v), scratch) for v in piece.outputs])
                       for piece, step in zip(pieces, steps)]
        consts = {id(v): value for v, value in graph.consts}
        borrowed = {id(v) for v in graph.inputs} | set(consts)
        seen: set[int] = set()
        self._outputs: list[tuple[str, Any]] = []
        for a in graph.outputs:
            if isinstance(a, Literal):
                self._outputs.append(("value", a.value))
            elif id(a) in consts:
                value = consts[id(a)]
                self._outputs.append(("value", _number(value)) if value.ndim == 0
                                     else ("copy", value))
            elif a.shape and (id(a) in borrowed or id(a) in seen):
                self._outputs.append(("copy slot", slot[id(a)]))
            else:
                self._outputs.append(("slot", slot[id(a)]))
            seen.add(id(a))

    def __call__(self, *args: Any) -> tuple:
        return self.run(args)

    def run(self, args: tuple, before: Callable[[Any, tuple], None] | None = None) -> tuple:
        """The outputs for ``args``; ``before(kernel, arguments)`` is called before each
        step runs its kernel (tiered execution has each piece compiled in the compile
        worker, for exactly the arguments it gets, before it runs)."""
        env: list[Any] = [*args, *[None] * (self._size - len(args))]
        for n, (step, ins, outs) in enumerate(self._steps):
            inputs = [env[i] for i in ins]
            if before is not None and n < len(self._kernels):
                kernel, consts = self._kernels[n]
                before(kernel, (*inputs, *consts))
            for k, value in zip(outs, step(*inputs)):
                env[k] = value
        return tuple(x if how == "value" else x.copy() if how == "copy"
                     else env[x] if how == "slot" else env[x].copy()
                     for how, x in self._outputs)


@dataclass(frozen=True)
class Program:
    """What :func:`build` made of a graph: the pieces (one, the graph itself, when
    it fits), their kernel sources, and the kernel, which takes the graph's inputs
    and then ``consts``."""

    pieces: tuple[Graph, ...]
    sources: tuple[KernelSource, ...]
    kernel: Callable[..., tuple]  # the Numba kernel, the interpreter, or a Chain of pieces
    consts: tuple                 # the kernel's arguments after the graph's inputs

    @property
    def source(self) -> KernelSource:
        """The kernel source, or for several pieces all of them under one key."""
        if len(self.sources) == 1:
            return self.sources[0]
        keys = "\n".join(s.key for s in self.sources)
        key = hashlib.sha256(keys.encode()).hexdigest()[:32]
        n = len(self.sources)
        text = "\n".join(f"# ---- piece {k + 1} of {n}: k_{s.key} ----\n{s.text}"
                         for k, s in enumerate(self.sources))
        return KernelSource(key, self.sources[0].function, text)


def build(graph: Graph, function: str, description: str,
          out_names: Mapping[int, str] | None = None, backend: str = "numba",
          max_eqns: int | None = None, tiered: bool = False, nogil: bool = False) -> Program:
    """Generate (and for ``backend="numba"``, load) the kernels of ``graph``,
    split into pieces of at most ``max_eqns`` equations (by default, pieces of
    :data:`~symgrad.backend.numba.split.MAX_EQNS` when
    :func:`~symgrad.backend.numba.split.slow_to_compile` says so).

    Kernels compile on their first call; with ``tiered`` (and ``sg.config.tiered``),
    the first calls of a kernel not on disk yet run on the interpreter while it
    compiles (:mod:`.tiered`). ``nogil``: kernels that release the GIL (see
    :func:`~symgrad.backend.numba.codegen.generate`)."""
    registered(backend)  # a ValueError naming the backends there are
    whole = plan(graph)
    if max_eqns is None:  # the defaults: split only graphs slow to compile whole
        slow = splitting.slow_to_compile(graph, whole)
        pieces = splitting.split(graph, splitting.MAX_EQNS) if slow else [graph]
    else:
        pieces = splitting.split(graph, max_eqns)
    if any(map(splitting.hosted, graph.eqns)):  # Python callbacks run between kernels
        pieces = [p for piece in pieces for p in splitting.split_at(
            piece, splitting.host_cuts(piece))]
    names = out_names or {}
    sources: tuple[KernelSource, ...]
    # chunk kernels on Dask's threads (nogil) are parallel already: no prange inside
    threshold = parallel_min() if backend == "numba" and not nogil else None
    if len(pieces) == 1 and not _is_host(pieces[0]):
        sources = (generate(graph, function, description, out_names, whole, threshold,
                            nogil=nogil),)
    else:
        # one description for all pieces, so that pieces of the same structure share a kernel
        where = {id(a): i for i, a in enumerate(graph.outputs)}
        sources = tuple(
            _host_source(piece, function) if _is_host(piece) else
            generate(piece, function, f"{description} (one piece of a split graph)",
                     {k: names[where[id(v)]] for k, v in enumerate(piece.outputs)
                      if where.get(id(v)) in names}, plan(piece), threshold, nogil=nogil)
            for piece in pieces)
    loaded = [(_host_step(piece), ()) if _is_host(piece) else _kernel(piece, source, backend)
              for piece, source in zip(pieces, sources)]
    if len(pieces) == 1:
        kernel, consts = loaded[0]
    else:
        steps = [(lambda *a, k=k, c=c: k(*a, *c)) if c else k for k, c in loaded]
        kernel, consts = Chain(graph, pieces, steps, loaded), ()
    if tiered and backend == "numba":
        kernel = tiered_kernel(graph, kernel, consts,
                               tuple(s for s, p in zip(sources, pieces) if not _is_host(p)))
    return Program(tuple(pieces), sources, kernel, consts)


def _is_host(piece: Graph) -> bool:
    return len(piece.eqns) == 1 and splitting.hosted(piece.eqns[0])


def _host_step(piece: Graph) -> Callable[..., tuple]:
    """A callback's piece: its primitive's ``impl`` on the piece's inputs, called
    directly (the interpreter's bookkeeping would cost more than the call)."""
    e = piece.eqns[0]
    where = {id(v): k for k, v in enumerate(piece.inputs)}
    consts = {id(v): value for v, value in piece.consts}  # arrays the callback reads
    reads = [(where[id(a)], None) if isinstance(a, Var) and id(a) in where else
             (-1, consts[id(a)]) if isinstance(a, Var) else (-1, a.value) for a in e.inputs]
    impl, params, keep = e.prim.impl, dict(e.params), bool(piece.outputs)

    def step(*args: Any) -> tuple:
        out = impl(*[args[k] if k >= 0 else value for k, value in reads], **params)
        if type(out) is tuple:  # (a callback's 0-d results: the next kernel's scalars)
            out = tuple(_scalar(v) for v in out)
        return (_scalar(out),) if keep else ()
    return step


def _scalar(v: Any) -> Any:
    """A 0-d array as the numpy scalar of its dtype (a kernel's 0-d values are scalars:
    Numba cannot convert a 0-d array, ``np.float32(a)``); anything else as it is."""
    return v[()] if type(v) is np.ndarray and not v.ndim else v


def _host_source(piece: Graph, function: str) -> KernelSource:
    """What stands for a callback's piece in the kernel source: a comment (it runs in
    Python, on the interpreter, between the kernels before and after it)."""
    e = piece.eqns[0]
    what = between(e) or "a loop or branch whose body calls Python"
    if e.prim.host:
        params = e.params.get("name", "")
    else:
        params = "(" + ", ".join(f"{k}={v!r}" for k, v in e.params.items()) + ")"
    text = (f"# {e.prim.name} {params}: runs in Python between the kernels before and after "
            f"it ({what})\n")
    return KernelSource(hashlib.sha256(text.encode()).hexdigest()[:32], function, text)


def _number(c: Any) -> float | complex:
    """A 0-d constant as a kernel's scalar argument: a Python float, or complex."""
    return complex(c) if c.dtype.kind == "c" else float(c)


class KernelSourceWarning(RuntimeWarning):
    """Python could not compile a generated kernel; its graph runs on the numpy interpreter."""


_WARNED: set[str] = set()


def _kernel(piece: Graph, source: KernelSource, backend: str) -> tuple[Callable[..., tuple],
                                                                        tuple]:
    """The piece's kernel (or interpreter, which reads the constants from the piece) and
    the constants it takes after the piece's inputs; it returns the outputs as a tuple.

    A kernel source that Python itself refuses (a limit of the language, such as its 20
    nested blocks, which :func:`~symgrad.core.index_text.loop_nest` keeps kernels under)
    runs on the interpreter, with a warning once per kernel: slower, never an error."""
    if backend == "numba":
        try:
            kernel = kernels.load(source)
        except SyntaxError as e:
            if source.key not in _WARNED:
                _WARNED.add(source.key)
                warnings.warn(f"symgrad could not compile kernel k_{source.key} ({e.msg}); "
                              "its graph runs on the numpy interpreter instead",
                              KernelSourceWarning, stacklevel=2)
        else:
            # a 0-d const (a number the function read from outside) is a scalar argument
            return kernel, tuple(_number(c) if c.ndim == 0 else c for _, c in piece.consts)
    return (lambda *args: tuple(interpret(piece, *args))), ()
