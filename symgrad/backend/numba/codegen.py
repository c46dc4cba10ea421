"""Graph -> readable Python source of one ``numba.njit`` function.

The plan of :mod:`symgrad.backend.numba.fusion` decides the body: elementwise chains and
the sums that consume them become one loop nest, with scalars for
intermediates and arrays only for what outlives the loop; every other
equation is one statement (or one loop nest), named as in the printed IR, with
the user's argument names. Adjoint statements sit under a ``# grad of:
<primal equation>`` comment. Scalars are Python floats inside the kernel and
arrays are numpy arrays.

Kernels are generic over sizes: every size the graph mentions is written as a
name bound from the inputs' shapes (``n0 = x.shape[0]``, ``n1 = n0 - 1``), so
that graphs of the same structure and ranks at different sizes give the same
source, hence the same cache key and the same compiled kernel. A size that no
input determines stays a number (the kernel is then specific to it), and so
do 0 and 1, which decide broadcasting.

The module is self-contained (imports numpy and numba only); array constants
are extra arguments so that no data is baked into the source. The header
carries the content key, which is the sha256 of everything below it plus the
versions of codegen and of the derivative conventions.

Inside fused loops, primitives that declare a ``vectorized`` function call it
from :mod:`.vecmath` (``vm.exp``), which LLVM vectorizes; loops of at least
``parallel_min`` elements become a ``prange`` over chunks of rows whose sums
are added in chunk order (:mod:`.threads`). Graphs that control-flow equations
hold (loop bodies, branches) are rendered inside the kernel through :mod:`.scope`.
The body of a fused loop is written by :mod:`.elements`, and sizes and literals as
source text (``n0``, ``np.inf``) are :mod:`.sizes`'s.

    >>> import numpy as np, symgrad as sg
    >>> source = sg.jit(lambda x: np.exp(x) * 2.0).source(np.ones(3))
    >>> print(source[source.index("@njit"):].strip())
    @njit(cache=True, error_model="numpy", fastmath=False)
    def f(x):
        n0 = x.shape[0]
        b = np.empty((n0,))
        for i0 in range(n0):
            a = vm.exp(x[i0])
            b[i0] = a * 2.0
        return (b,)
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ...core.conventions import CONVENTIONS_VERSION
from ...core.index_text import loop_nest
from ...core.ir import F32, FLOAT, Atom, Aval, Eqn, Graph, Literal, Printer, Var, origin_changes
from ...core.version import __version__
from . import pool as output_pool
from .elements import Elements, vector_call
from .fusion import Loop, Plan, plan, transposed
from .lowering import lowering
from .scope import Rendered, Scope, rounded_sum, sum_dtype_arg, zero  # noqa: F401 -- Rendered: importable here as before
from .scope import dtype_arg as _dtype_arg
from .scope import shape_text as _tuple
from .sizes import SIZE_PARAMS as SIZE_PARAMS  # importable here as before
from .sizes import Comments, Sizes, numba_literal
from .sizes import Dim as Dim  # importable here as before

#: bump when the generated code for the same IR changes
CODEGEN_VERSION = 6
NJIT_FLAGS = 'cache=True, error_model="numpy", fastmath=False'
#: a parallel kernel's only parallel loops are its ``prange``s over fixed chunks: Numba's
#: other conversions are off. Its ``numpy`` conversion would turn a whole-array
#: ``np.mean``/``np.sum``/``np.dot`` of the kernel into a reduction split among the threads
#: running now, so that ``mean(x)`` in a parallel kernel had other bits at 2 threads than
#: at 1 (106 ulp at 300,001 elements; issue 25); ``reduction`` is the same for
#: ``functools.reduce``. Elementwise conversions would be deterministic, but the
#: kernel's elementwise work is in its fused loops already
PARALLEL_FLAGS = NJIT_FLAGS + ', parallel={"prange": True, "numpy": False, "reduction": False}'
#: a call of :mod:`symgrad.backend.npymath` (numpy's complex functions and FFT, libm's cbrt)
_NPYMATH_CALL = re.compile(r"\bnm\.")
#: elements per chunk of a parallel loop: rows are grouped into chunks of about this many
#: elements, fixed by the shape alone, so sums combine in the same order whatever the
#: number of threads
CHUNK = 32768
#: a loop body with more calls of :mod:`.vecmath` than this calls libm instead: each call
#: is inlined (tens of operations), and a long unrolled body would take Numba minutes to
#: compile (a 400-step recurrence of sin: minutes instead of 13 s); such loops are rare
#: and their transcendental work is spread over many statements anyway
VECTOR_MAX = 32
#: a fused loop over 2+ axes, or one that calls :mod:`.vecmath`, that sums real terms over
#: its innermost axis (a gradient's ``grad_u[i0] += ...`` in a broadcast, ``grad_p += ...``
#: in a loop body's adjoint; the mean((A*u+v)**2) gradient 0.86-2.8 -> 0.4-0.5 ms) stores
#: the terms of each innermost row in a scratch row, by a loop with no dependence between
#: iterations (which LLVM vectorizes), and adds them up after the row by ``vm.row_sum``
#: (8 lanes, in an order fixed by the row's length: 3x faster than a plain loop's chain
#: of additions, and other bits than it from 8 elements on). The scratch is one row of
#: the loop's shape (False: not done, each term added where it is made)
ROW_SUMS = True
INDENT = "    "
#: a fused loop that computes tanh(c) and tanh's derivative (as its VJP writes it) calls
#: ``vm.tanh_sech2`` for both (False: tanh and exp separately, as before issue 31)
TANH_PAIRS = True
#: a float output array that a loop makes, of at least pool.MIN_BYTES, comes from
#: :mod:`.pool` (False: every output by np.empty, as before issue 31's item 4)
OUTPUT_POOL = True
#: the dtypes it applies to: their Numba type and item size
POOLED = {FLOAT: ("float64", 8), F32: ("float32", 4)}


@dataclass(frozen=True)
class KernelSource:
    """A generated kernel module: its content key, function name and text."""

    key: str
    function: str
    text: str
    parallel: bool = False  # compiled with PARALLEL_FLAGS (some loop is a prange)
    #: a parallel kernel's serial twin, below its header (:func:`serial_twin`)
    twin: str = ""



class _Kernel:
    """The body of one kernel (or of a graph a control-flow equation holds, rendered
    inside the kernel: then ``within`` is the enclosing kernel, whose sizes and names
    it shares, and its names avoid every name the kernel has so far)."""

    def __init__(self, graph: Graph, out_names: Mapping[int, str] | None, loops: Plan,
                 parallel_min: int | None = None, vector: bool = True,
                 within: _Kernel | None = None, buffers: Mapping[int, str] | None = None,
                 twin: bool = False, pool: bool = False):
        self.graph = graph
        #: the kernel's outputs that a loop makes may come from the output pool
        self.pool = pool and within is None
        self.uses_pool = False
        self.outputs = {id(v) for v in graph.outputs if isinstance(v, Var)}
        #: id(var) -> an array to write it into instead of a new one (a loop's carry)
        self.buffers = dict(buffers or {})
        self.used_buffers: set[int] = set()
        reserved = frozenset(within.all_names) if within is not None else frozenset()
        self.names = Printer(graph, out_names, reserved)
        self.sizes = within.sizes if within is not None else Sizes(graph, self.names)
        self.comments = Comments(graph, out_names, self.sizes, reserved)
        self.plan = loops
        #: every name the kernel uses (shared with the graphs rendered inside it)
        self.all_names: set[str] = within.all_names if within is not None else set()
        self.all_names.update(self.names.names.values())
        #: the kernel itself, for a graph rendered inside it: the flags and the loop
        #: count below are the kernel's, shared by every graph rendered in it
        self.root: _Kernel = within.root if within is not None else self
        if within is not None:
            parallel_min, vector, twin = within.parallel_min, within.vector, within.twin
        self.parallel_min = parallel_min  # loops of at least this many elements: prange
        self.vector = vector              # fused loops call vecmath where a prim says so
        self.twin = twin                  # the serial twin: chunks only for sums over rows
        self.uses_vecmath = False
        self.uses_vecmath32 = False       # calls symgrad.backend.vecmath32 (as vm32)
        self.uses_lapack = False          # calls symgrad.backend.lapack (as la)
        self.uses_batched = False         # calls symgrad.backend.batched (as bm)
        self.rows: list[str] = []  # scratch rows of serial loops, made once at the start
        self.parallel = False             # some loop is a prange
        self.loops = 0                    # loops numbered so far (names of their helpers)

    def nested(self, graph: Graph, buffers: Mapping[int, str]) -> _Kernel:
        """``graph`` (a loop body, a branch) as a body inside this kernel: its own fusion
        plan, this kernel's sizes, names and flags (:meth:`.scope.Scope.render`)."""
        return _Kernel(graph, None, plan(graph), within=self, buffers=buffers)

    def name(self, v: Var) -> str:
        return self.names.name(v)

    def atom(self, a: Atom) -> str:
        return numba_literal(a.value) if isinstance(a, Literal) else self.name(a)

    def operand(self, e: Eqn, a: Atom) -> str:
        """``a`` as an argument of ``e``; ``c.T`` for a transposed matrix in a product."""
        c = transposed(a, self.plan.producer) if lowering(e.prim).transposed_operands else None
        return f"{self.name(c)}.T" if c is not None else self.atom(a)

    def body(self) -> list[str]:
        return self.items(self.plan.items)

    def items(self, items: list[Eqn | Loop]) -> list[str]:
        """Loops, and runs of standalone statements (one comment per origin in a run)."""
        lines: list[str] = []
        run: list[Eqn] = []
        for item in items:
            if isinstance(item, Loop):
                lines += self.statements(run) + self.loop(item)
                run = []
            else:
                run.append(item)
        return lines + self.statements(run)

    def statements(self, eqns: list[Eqn]) -> list[str]:
        lines: list[str] = []
        # arrays nobody reads as arrays (loops compute or read them through) are not made
        made = [e for e in eqns if not e.out.shape or id(e.out) in self.plan.arrays]
        for cite, e in origin_changes(made):
            if cite is not None:
                lines.append(f"# grad of: {self.comments.eqn(cite)}")
            tools = {"scope": Scope(self)} if e.prim.subgraphs else {}
            lines += lowering(e.prim).emit(self.name(e.out),
                                           [self.operand(e, a) for a in e.inputs],
                                           [self.sizes.aval(a.aval) for a in e.inputs],
                                           self.sizes.aval(e.out.aval),
                                           **self.sizes.params(e.params), **tools)
            if any("la.eigh_upper(" in line for line in lines):  # eigh of an upper triangle
                self.root.uses_lapack = True
            if any("bm.matmul(" in line for line in lines):  # a stack of matrix products
                self.root.uses_batched = True
        return lines

    def loop(self, loop: Loop) -> list[str]:
        arrays = self.plan.arrays
        shape = self.sizes.aval(Aval(loop.shape)).shape
        live = _live(loop, arrays)
        lines = self.items(loop.pre)
        for e in live:
            if e.prim.accumulate:
                continue  # zeroed by _inits, where the loop (or its chunk) starts
            if id(e.out) in self.buffers:  # the array a loop keeps for this carry
                lines.append(f"{self.name(e.out)} = {self.buffers[id(e.out)]}")
                self.used_buffers.add(id(e.out))
            elif id(e.out) in arrays:
                lines += self._new_array(e.out, shape)
        if live:
            k = self.root.loops
            self.root.loops += 1
            accs = [e for e in live if e.prim.accumulate]
            chunked = (self.parallel_min is not None and loop.shape[0] > 1
                       and math.prod(loop.shape) >= self.parallel_min)
            if self.twin and not any(0 in e.params["axes"] for e in accs):
                chunked = False  # the chunks change no sum: one flat loop, the same bits
            calls = sum(1 for e in live if vector_call(e, []))  # about: read-through ones too
            vector = self.vector and calls <= VECTOR_MAX
            rows = (ROW_SUMS and vector and (calls or len(shape) > 1)
                    and not (chunked and len(shape) == 1))
            fast = Elements(self, loop, vector=vector, ok=f"okc{k}" if chunked else f"ok{k}",
                            rows=f"r{k}" if rows else "", pairs=TANH_PAIRS)
            body = fast.body(live, self._partials(accs, k) if chunked else {})
            scratch = [f"{row} = np.empty({shape[-1]})" for row in fast.scratch]
            if chunked:
                self.root.parallel = True
                lines += self._chunked(loop, shape, accs, body, bool(fast.checks), k,
                                       scratch, fast.after)
            else:
                known = {line.split(" = ", 1)[0] for line in self.root.sizes.lines}
                if str(shape[-1]).isdigit() or str(shape[-1]) in known:
                    self.root.rows += scratch  # once per call, not once per step of a loop
                else:
                    lines += scratch  # a size known only here
                lines += self._inits(accs)
                lines += [f"ok{k} = True"] if fast.checks else []
                lines += self._nest(shape, body, after=fast.after)
            if fast.checks:  # an argument out of a vectorized function's range: libm
                exact = Elements(self, loop, vector=False).body(live, {})
                lines.append(f"if not ok{k}:")
                lines += [INDENT + line for line in self._inits(accs) + self._nest(shape, exact)]
        for e in live:  # means: the sums divided by their counts; float32 sums rounded
            if e.prim.accumulate == "mean":
                count = " * ".join(str(shape[k]) for k in e.params["axes"])
                lines.append(f"{self.name(e.out)} /= {count}")
            if e.prim.accumulate:
                lines += rounded_sum(self.name(e.out), e.out.dtype, bool(e.out.shape))
        return lines + self.statements(loop.post)

    def _new_array(self, v: Var, shape: tuple) -> list[str]:
        """``v``'s array, by np.empty; a float output of the kernel of at least
        pool.MIN_BYTES from the output pool (:mod:`.pool`, in objmode: a few µs a call).
        Only where the traced size is that large: the objmode block costs about 0.07 s
        of compile time, which the small kernels of tests and of most calls do not pay."""
        name, empty = self.name(v), f"np.empty({_tuple(shape)}{_dtype_arg(v.dtype)})"
        numba_type, size = POOLED.get(v.dtype, ("", 0))
        if not (self.pool and OUTPUT_POOL and size and id(v) in self.outputs
                and math.prod(v.shape) * size >= output_pool.MIN_BYTES):
            return [f"{name} = {empty}"]  # (traced at a smaller size: a kernel of its own)
        self.uses_pool = True
        layout = ", ".join([":"] * (len(shape) - 1) + ["::1"])
        count = " * ".join(str(d) for d in shape)
        return [f"if {count} >= {output_pool.MIN_BYTES // size}:  # from the output pool",
                INDENT + f'with objmode({name}="{numba_type}[{layout}]"):',
                INDENT * 2 + f'{name} = pool_take({_tuple(shape)}, "{numba_type}")',
                "else:",
                INDENT + f"{name} = {empty}"]

    def _inits(self, accs: list[Eqn]) -> list[str]:
        lines = []
        for e in accs:
            lines.append(f"{self.name(e.out)} = {_zeros(self.sizes.aval(e.out.aval))}")
        return lines

    def _nest(self, shape: tuple, body: list[str], rows: tuple[str, str, str] = ("", "", ""),
              after: Sequence[str] = ()) -> list[str]:
        """``for`` headers over ``shape`` and the body inside; ``rows``: (the first row, the
        number of rows, a counter's name) of a chunk. Without ``rows``, at most
        ``MAX_NESTED`` loops deep for any rank (:func:`loop_nest`). ``after``
        (:attr:`.elements.Elements.after`) runs after the innermost loop, once per row.

        A chunk's rows are counted from 0 (``for jc0 in range(count): i0 = first + jc0``):
        over ``range(first, stop)`` LLVM cannot tell that ``i0`` is not negative, keeps
        Numba's wraparound of negative indices in the loop, and does not vectorize it (the
        seed gradient at 1e6 took 2.4 ms of CPU instead of 0.3; issue 31)."""
        first, count, counter = rows
        if not first:
            nest, depth = loop_nest(shape)
            head: list[str] = []
        else:
            nest = [INDENT * k + f"for i{k} in range({d}):" for k, d in enumerate(shape)]
            nest[0] = f"for {counter} in range({count}):"
            head = [INDENT + f"i0 = {first} + {counter}"]
            depth = len(shape)
        lines = nest[:1] + head + nest[1:] + [INDENT * depth + line for line in body]
        lines += [INDENT * (depth - 1) + line for line in after]  # after the innermost loop
        return lines

    def _partials(self, accs: list[Eqn], k: int) -> dict[int, str]:
        """Where each sum over the outer axis accumulates in a chunk of loop ``k``: a
        scalar of the chunk (``s<k>_<j>``) or its row of a partial array (``p<k>_<j>``)."""
        where: dict[int, str] = {}
        for j, e in enumerate(accs):
            if 0 not in e.params["axes"]:
                continue  # the chunk owns its rows of the result
            kept = ", ".join(f"i{a}" for a in range(len(e.inputs[0].shape))
                             if a not in e.params["axes"])
            where[id(e.out)] = f"p{k}_{j}[ic{k}, {kept}]" if kept else f"s{k}_{j}"
        return where

    def _chunked(self, loop: Loop, shape: tuple, accs: list[Eqn], body: list[str],
                 checked: bool, k: int, scratch: Sequence[str] = (),
                 after: Sequence[str] = ()) -> list[str]:
        """The loop as a ``prange`` over chunks of rows (their number fixed by the shape,
        not by the threads); sums over rows are made per chunk and added in chunk order."""
        inner = " * ".join(str(d) for d in shape[1:]) or "1"
        lines = [f"nr{k} = max(1, {CHUNK} // ({inner}))",
                 f"nc{k} = ({shape[0]} + nr{k} - 1) // nr{k}"]
        combine: list[str] = []
        for j, e in enumerate(accs):
            name = self.name(e.out)
            kept = self.sizes.aval(e.out.aval).shape
            if 0 not in e.params["axes"]:
                lines += self._inits([e])
                continue
            lines.append(f"p{k}_{j} = np.zeros({_tuple((f'nc{k}', *kept))}"
                         f"{sum_dtype_arg(e.out.dtype)})")
            combine += [f"{name} = {_zeros(Aval(kept, e.out.dtype))}",
                        f"for ic{k} in range(nc{k}):",
                        INDENT + f"{name} += p{k}_{j}[ic{k}]"]
        if checked:
            lines.append(f"oka{k} = np.ones(nc{k}, dtype=np.bool_)")
        lines.append(f"for ic{k} in prange(nc{k}):")
        start = []
        for j, e in enumerate(accs):
            if 0 in e.params["axes"] and not self.sizes.aval(e.out.aval).shape:
                start.append(f"s{k}_{j} = {zero(e.out.dtype)}")
        if checked:
            start.append(f"okc{k} = True")
        start += scratch  # each chunk's own rows (the chunks run in parallel)
        # the chunk's first row, through max(..., 0): in the parallel kernel ``ic<k>``
        # comes from OpenMP's schedule, LLVM cannot tell ``i0`` is not negative and keeps
        # Numba's wraparound of negative indices in the loop (:meth:`_nest`): the seed
        # gradient's parallel kernel took 2.4-2.9 ms of CPU at 1e6 on one thread, the
        # serial loop 0.3 (issue 31 item 7)
        start.append(f"fr{k} = max(ic{k} * nr{k}, 0)")
        rows = (f"fr{k}", f"min(nr{k}, {shape[0]} - fr{k})", f"jc{k}")
        end = [f"p{k}_{j}[ic{k}] = s{k}_{j}" for j, e in enumerate(accs)
               if 0 in e.params["axes"] and not self.sizes.aval(e.out.aval).shape]
        end += [f"oka{k}[ic{k}] = okc{k}"] if checked else []
        lines += [INDENT + line for line in start + self._nest(shape, body, rows, after) + end]
        if checked:
            lines.append(f"ok{k} = oka{k}.all()")
        return lines + combine


def _zeros(aval: Aval) -> str:
    """Where a sum of ``aval`` starts: 0 of its dtype, an array of zeros for a shape
    (complex sums in complex128, real ones in float64)."""
    if not aval.shape:
        return zero(aval.dtype)
    return f"np.zeros({_tuple(aval.shape)}{sum_dtype_arg(aval.dtype)})"


def _live(loop: Loop, arrays: set[int]) -> list[Eqn]:
    """The body equations whose results are used: stored, accumulated, or read by those."""
    needed = set(arrays)
    live: list[Eqn] = []
    for e in reversed(loop.body):
        if e.prim.accumulate or id(e.out) in needed:
            live.append(e)
            needed.update(id(a) for a in e.inputs if isinstance(a, Var))
    return live[::-1]



def generate(graph: Graph, function: str, description: str,
             out_names: Mapping[int, str] | None = None,
             loops: Plan | None = None, parallel_min: int | None = None,
             vector: bool = True, nogil: bool = False, pool: bool = True) -> KernelSource:
    """The kernel module for ``graph``; ``function`` names the njit function.

    ``loops`` is the fusion plan of ``graph`` (made here if not given). Loops of at
    least ``parallel_min`` elements run as ``prange`` over chunks (``None``: none do);
    ``vector=False`` calls libm where :mod:`.vecmath` would be called. ``nogil``
    compiles it with ``nogil=True``, for callers that run kernels on several threads
    at once (:mod:`symgrad.distributed` on Dask's threads); a kernel of its own key.
    ``pool``: large float outputs may come from :mod:`.pool` (an exported module: not)."""
    loops = plan(graph) if loops is None else loops
    pool = pool and not nogil  # nogil kernels run on several threads: no objmode there
    code, parallel = _module(graph, function, description, out_names, loops, parallel_min,
                             vector, nogil, pool=pool)
    versions = (f"symgrad {__version__}, codegen {CODEGEN_VERSION}, "
                f"conventions {CONVENTIONS_VERSION}")
    key = hashlib.sha256(f"{versions}\n{code}".encode()).hexdigest()[:32]
    header = f"# symgrad kernel k_{key} ({versions}); generated, do not edit\n"
    twin = _module(graph, function, description, out_names, loops, parallel_min, vector,
                   nogil, twin=True, pool=pool)[0] if parallel else ""
    return KernelSource(key, function, header + code, parallel, twin)


def _module(graph: Graph, function: str, description: str,
            out_names: Mapping[int, str] | None, loops: Plan, parallel_min: int | None,
            vector: bool, nogil: bool, twin: bool = False,
            pool: bool = False) -> tuple[str, bool]:
    """The module's text below its header, and whether it is parallel; ``twin``: the
    serial twin's text (:func:`serial_twin`), compiled without ``parallel=``."""
    kernel = _Kernel(graph, out_names, loops, parallel_min, vector, twin=twin, pool=pool)
    args = [kernel.name(v) for v in (*graph.inputs, *graph.const_vars)]
    body = kernel.body()
    body.append(f"return ({_returns(graph, kernel)})")
    imports = ["import numpy as np", "from numba import njit" + (
        ", objmode" if kernel.uses_pool else "") + (", prange" if kernel.parallel else "")]
    if any("math." in line.split("#")[0] for line in body):  # math.erf (prims.special)
        imports.insert(0, "import math")
    if kernel.uses_vecmath:  # the file's hash is in the key: a change there recompiles
        imports.append(f"from symgrad.backend import vecmath as vm  # {vecmath_hash()}")
    if kernel.uses_vecmath32:
        imports.append(f"from symgrad.backend import vecmath32 as vm32  # "
                       f"{vecmath_hash('vecmath32')}")
    if kernel.uses_pool:
        imports.append("from symgrad.backend.numba.pool import take as pool_take")
    if kernel.uses_lapack:
        imports.append(f"from symgrad.backend import lapack as la  # {vecmath_hash('lapack')}")
    if any("= bl." in line.split("#")[0] for line in body):  # numpy's gemm (lowering.linalg)
        imports.append(f"from symgrad.backend import blas as bl  # {vecmath_hash('blas')}")
    if kernel.uses_batched:
        imports.append(f"from symgrad.backend import batched as bm  # "
                       f"{vecmath_hash('batched')}")
    if any(_NPYMATH_CALL.search(line.split("#")[0]) for line in body):  # numpy's complex log...
        imports.append(f"from symgrad.backend import npymath as nm  # {vecmath_hash('npymath')}")
    code = "\n".join([
        f"# {description}",
        f"# {graph.name}({', '.join(kernel.comments.typed(v) for v in graph.inputs)})",
        *imports,
        "",
        "",
        f"@njit({PARALLEL_FLAGS if kernel.parallel and not twin else NJIT_FLAGS}"
        f"{', nogil=True' if nogil else ''})",
        f"def {function}({', '.join(args)}):",
        *(INDENT + line for line in (*kernel.sizes.lines, *_float32_scalars(graph, kernel),
                                     *kernel.rows, *body)),
        "",
    ])
    return code, kernel.parallel


def serial_twin(source: KernelSource) -> KernelSource:
    """The serial twin of a parallel kernel (:mod:`.threads`): the same source compiled
    without ``parallel=``, where ``prange`` is ``range``, except that a loop with no sum
    over its rows is one flat loop instead of chunks (each element is computed by the
    same statements either way; the chunked loop took 0.65 ms of CPU for Rosenbrock's
    gradient at 1e6 where the flat one took 0.48, issue 31). A loop that sums over its rows
    keeps the chunks, and their sums are added in the parallel kernel's order: the same
    bits. A key of its own (the parallel key and the twin's text), so both sit in the
    disk cache."""
    if not source.parallel:
        return source
    body = source.twin or source.text.split("\n", 1)[1].replace(
        f"@njit({PARALLEL_FLAGS}", f"@njit({NJIT_FLAGS}")
    key = hashlib.sha256(f"{source.key} serial twin\n{body}".encode()).hexdigest()[:32]
    header = source.text.split("\n", 1)[0].replace(f"k_{source.key}", f"k_{key}")
    return KernelSource(key, source.function, f"{header}\n{body}", False)


def _float32_scalars(graph: Graph, kernel: _Kernel) -> list[str]:
    """``k = np.float32(k)`` for each 0-d float32 argument: a caller may pass a Python or
    float64 number (a constant of the graph is), and Numba would carry it in float64
    through every loop that reads it (``k * d``: float64 arithmetic in a float32 loop; in
    kernels without vecmath32 too: a float32 backward's seed 1.0 made ``1 * c * b * a``
    one float64 product rounded once, not PyTorch's float32 steps)."""
    return [f"{kernel.name(v)} = np.float32({kernel.name(v)})"
            for v in (*graph.inputs, *graph.const_vars) if v.dtype == F32 and not v.shape]


@functools.cache
def vecmath_hash(module: str = "vecmath") -> str:
    """A hash of :mod:`.vecmath`'s source (or :mod:`.lapack`'s: read, not imported, which
    would import Numba)."""
    text = (Path(__file__).parent.parent / f"{module}.py").read_bytes()
    return f"{module} " + hashlib.sha256(text).hexdigest()[:12]


def _returns(graph: Graph, p: _Kernel) -> str:
    """The return tuple; outputs that could alias an input, a view or each other are copied."""
    produced_by = {id(e.out): e.prim for e in graph.eqns}
    borrowed = {id(v) for v in (*graph.inputs, *graph.const_vars)}
    seen: set[int] = set()
    parts = []
    for a in graph.outputs:
        text = p.atom(a)
        prim = produced_by.get(id(a))
        if isinstance(a, Var) and a.shape and (
                id(a) in borrowed or (prim is not None and prim.view) or id(a) in seen):
            text = f"{text}.copy()"
        if isinstance(a, Var):
            seen.add(id(a))
        parts.append(text)
    return ", ".join(parts) + ("," if len(parts) == 1 else "")
