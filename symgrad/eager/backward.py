"""``Tensor.backward``: the recorded graph, lowered to the IR and run through the pipeline.

``backward`` lowers the nodes a result depends on (:mod:`symgrad.eager.graph`)
to a :class:`~symgrad.core.ir.Graph` and hands it to :func:`symgrad.transforms.pipeline.derive`
(the adjoint and the passes, as for ``sg.grad``, IR-checked under
``SYMGRAD_CHECK_IR=1``). All tensor data (leaves, tensors that need no grad,
numpy arrays) enter as inputs, and so do Python scalars (``x * (0.5 + k)``),
except exponents (``x ** 2``: the passes rewrite 2, 0.5 and -1 as numpy computes
them), which are literals. So the kernel depends on the graph's structure, its
shapes and its exponents, and is cached by them; the cache keeps the
``CACHE_LIMIT`` structures used last.

Execution policy: the first backward of a structure runs the optimized adjoint
on the numpy interpreter (:func:`symgrad.core.interpreter.interpret`); when the
same structure recurs, :func:`symgrad.transforms.pipeline.program` compiles it with Numba
and every later backward calls the kernel. So a one-off graph never waits for
Numba, and a training loop compiles exactly once, on its second step
(``benchmarks/train_loop.py``; the times are in ``docs/benchmarks.md``).
``backward_stats()`` counts the interpreted and compiled runs;
``symgrad.backend.numba.compile.compile_stats()`` counts Numba compiles. The kernel reads
the values the forward computed (kept on the nodes) instead of recomputing them,
wherever no in-place write can have changed them since (:mod:`.replay`).

dtypes: a graph all of float32 (every node computed a float32 result and every
leaf holds float32 values: :func:`all_float32`) is differentiated in float32, as
PyTorch's backward computes it: leaves, data (each node converted its operands to
float32 before computing, and keeps them as they are) and the
forward's saved values enter the kernel as float32, and the gradients are float32
arithmetic (PyTorch's to float32 rounding, not bit for bit). Any other graph (a
float64 tensor or a cast anywhere, an ``autograd.Function``, bfloat16) runs in
float64: its float32 tensors enter converted to float64 at the kernel's boundary
(leaves and data alike, int64 data too), and each gradient is converted back to
its leaf's dtype (a float32 leaf gets a float32 ``.grad``, rounded from the float64
computation). Which of the two is part of the structure's key. A cast such as
``x.float()`` is the identity in the IR.

A backward without ``retain_graph=True`` frees the nodes it passed through that save
tensors in PyTorch (:func:`.torch_facts.saves_nothing` tells the others, which stay usable), so a
second backward through one of them raises, as PyTorch's (a composite's inner nodes as
PyTorch's one node: ``F.pad``'s, ``F.interpolate``'s, ``addmm``'s of constant matrices
run again). Changing a leaf, data or a result in place between a node's creation and backward
raises where PyTorch's node saved it (:mod:`.inplace`; ``.data`` writes are not
counted, as in PyTorch); otherwise the
kernel reads the forward's saved values, and refuses where it would recompute from
the changed values (:mod:`.replay`). An in-place operation on a result is recorded: the
tensor takes the new node (``y.mul_(3)`` is ``y = y * 3`` for the gradient). A
result whose values were changed without a new node (``y.data.mul_(2)``: see
:mod:`.views`) is not recomputed: the graph is cut there, its values enter the
kernel as a leaf's do, and its gradient goes on through its own node by another
backward of the part below (the chain rule, in two passes), as PyTorch's backward
reads the changed tensor.
"""

from __future__ import annotations

import collections
import dataclasses
import threading
import warnings
import weakref
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..core.config import config
from ..core.errors import SCALAR_OUTPUT_ERROR
from ..core.interpreter import interpret
from ..core.ir import C128, F32, Aval, Graph
from ..core.memory import raise_dynamic_threshold
from ..transforms import pipeline
from . import complex_tensors as cx
from . import exposed, hooks, replay, views
from .bf16 import refuse_gradients as refuse_bf16
from .graph import Node
from .lowering import lower_structure as _lower
from .owned import sole
from .saved_indices import check_indices
from .structure import Template, match
from .structure import collect as _collect
from .structure import plan as _plan
from .torch_facts import SAVES_FACTORS, SAVES_NOTHING, saves_nothing

FREED_ERROR = (
    "Trying to backward through the graph a second time: its nodes were freed by the "
    "previous backward(). Pass retain_graph=True to the first backward() to keep the graph "
    "for another one (or rebuild the graph by running the forward computation again).")

# ---------------------------------------------------------------------------
# backward


@dataclasses.dataclass
class _Entry:
    """What one graph structure lowers to: the optimized adjoint and how to run it."""

    graph: Graph
    runs: int = 0
    kernel: Callable[..., tuple] | None = None  # the compiled program's, once there is one
    fast: Callable[[], Any] | None = None  # the kernel's dispatcher, when it is ready
    #: the positions of the nodes whose kept values the graph reads (:mod:`.replay`)
    fed: tuple[int, ...] = ()
    #: the structure's compiled walks, by its leaves' and data's shapes and dtypes
    #: (:func:`.structure.match`)
    walk: list = dataclasses.field(default_factory=lambda: [None, None, {}])


#: the graph structures kept, least recently used first
_CACHE: collections.OrderedDict[tuple, _Entry] = collections.OrderedDict()
CACHE_LIMIT = 256
#: the run of a structure that compiles it (the ones before interpret it)
COMPILE_AT_RUN = 2
_LOCK = threading.Lock()
_STATS = {"interpreted": 0, "compiled_runs": 0}


def backward_stats() -> dict[str, int]:
    """Backward calls run on the numpy interpreter, on a compiled kernel, and the
    number of graph structures in the cache (at most ``CACHE_LIMIT``)."""
    return {**_STATS, "structures": len(_CACHE)}


def run_backward(out: Any, gradient: Any, retain_graph: bool | None) -> None:
    """``out.backward(gradient, retain_graph)``: fill ``.grad`` of the leaves."""
    if not out._requires_grad:
        raise RuntimeError("element 0 of tensors does not require grad and does not have a "
                           "grad_fn: set requires_grad=True on a leaf the output depends on")
    raise_dynamic_threshold()  # (once: a step's arrays stay in the heap, core.memory)
    if exposed.KEEPING:  # (leaves and data written through numpy since the forward)
        exposed.check()
    ct = _seed(out, gradient)
    root = out._node
    if root is not None and root.hooked is None:  # (with hooks: a cut, the general path)
        ready = _matched(root, ct)  # the structure the last backward ran: no planning
        if ready is not None and _replayed(out, ct, ready, retain_graph):
            return
    fired: set[int] = set()  # tensors whose hooks ran
    if root is None:  # backward on a leaf itself
        g = np.broadcast_to(1.0 if ct is None else ct, out.shape)
        _accumulate(out, hooks.apply(out, g, fired) if out._hooks else g)
        if out._post_hooks:
            hooks.post((out,))
        return
    passed: dict[int, Node] = {}
    pending: dict[int, tuple[Any, Any]] = {}  # leaves with hooks: their total gradient
    _backward(out, ct, passed, fired, pending)
    for t, g in pending.values():
        _accumulate(t, hooks.apply(t, g, fired) if t._hooks else
                    cx.torch_grad(g) if g.dtype.kind == "c" else g)
    if not retain_graph:
        _free(passed.values())
    if pending:  # (after every kernel: a hook may change its leaf, a step of an optimizer)
        hooks.post([t for t, _ in pending.values()][::-1])


def _replayed(out: Any, ct: Any, ready: tuple, retain_graph: bool | None) -> bool:
    """:func:`_backward` of a matched structure (:func:`_matched`: no cut, retained
    gradient or changed input) whose root and leaves have no hooks, in fewer steps:
    its kernel's gradients added into the leaves' ``.grad``, then its nodes freed
    (without ``retain_graph``). False, having done nothing, for a leaf with hooks."""
    nodes, leaf_tensors, data_values, f32, entry = ready
    for t in leaf_tensors:
        if t._hooks or t._post_hooks:
            return False
    root = out._node
    if views.stale(root) is not None:
        views.refuse_saved_output(root, out)
    grads = _run(entry, _kernel_args(leaf_tensors, data_values, (), ct, entry, nodes, f32), f32)
    for k, t in enumerate(leaf_tensors):
        if t._node is None and not t._requires_grad:
            continue  # requires_grad_(False) after the forward: PyTorch's AccumulateGrad skips it
        owned = t._grad is None and sole(grads, k)  # (before g: a reference more)
        g = grads[k]
        _accumulate(t, cx.torch_grad(g) if g.dtype.kind == "c" else g, owned)
    if not retain_graph:
        _free(nodes)
    return True


def _kernel_args(leaf_tensors: list[Any], data_values: list[Any], retained: list[int],
                 ct: Any, entry: Any, nodes: list[Node], f32: bool) -> list[Any]:
    """The backward kernel's arguments: the leaves' and data values, zeros for the
    retained results' cotangents, the seed ``ct`` (None: an implicit 1) and the forward
    values the entry is fed (:mod:`.replay`)."""
    arg = _kernel_arg32 if f32 else _kernel_arg
    args: list[Any] = []
    for t in leaf_tensors:  # (loops: a comprehension is a call, for a few items each)
        args.append(arg(t._value))
    for v in data_values:
        args.append(arg(v))
    for k in retained:
        args.append(arg(np.zeros(nodes[k].aval.shape, nodes[k].aval.dtype)))
    if ct is not None:
        args.append(arg(np.asarray(ct)))
    fed = entry.fed
    for k in fed:
        args.append(arg(nodes[k].value))
    replay.count(fed)
    return args


def _backward(out: Any, ct: Any, passed: dict[int, Node], fired: set[int],
              pending: dict[int, tuple[Any, Any]]) -> None:
    """Add to the leaves' ``.grad`` the gradient of ``sum(out * ct)`` (``ct`` None: an
    implicit 1). A result whose values were changed without a new node (through ``.data``
    and the like) is read as it is, as PyTorch's saved tensors are, and its cotangent
    goes on through its own node by another call of this function (the chain rule, cut
    there); ``passed`` collects the nodes gone through. A tensor with hooks is such a
    cut too (:mod:`.hooks`): ``fired`` holds those whose hooks ran, ``pending`` the
    gradients of leaves with hooks (and of those with post-accumulate-grad hooks that
    a gradient reaches), added into ``.grad`` by the caller."""
    root = out._node
    if root.hooked is not None and hooks.hooked(root) is out:
        ct = hooks.apply(out, np.ones(out.shape) if ct is None else ct, fired)
    ready = _matched(root, ct)  # the structure the last backward ran: no planning
    if ready is not None:
        nodes, leaf_tensors, data_values, f32, entry = ready
        retained: list[int] = []
        cuts: dict[int, Any] = {}
        if views.stale(root) is not None:
            views.refuse_saved_output(root, out)
    else:
        nodes, leaf_tensors, data_values, retained, cuts, f32, entry = _prepare(root, out, ct)
    grads = _run(entry, _kernel_args(leaf_tensors, data_values, retained, ct, entry, nodes, f32),
                 f32)
    owned = [False] * len(grads)  # (the first gradients that may be taken as they are)
    for k, t in enumerate(leaf_tensors):
        if t._grad is None:
            owned[k] = sole(grads, k)
    for k in range(len(leaf_tensors), len(grads)):
        owned[k] = sole(grads, k)
    passed.update(zip(map(id, nodes), nodes))
    later = []
    # (a matched graph has no autograd.Function node: its ctx handle is no plain array)
    reached = None if ready is not None else _reached(root, nodes)
    for k, (t, g) in enumerate(zip(leaf_tensors, grads)):
        if t._node is not None and id(t._node) in cuts:  # a cut: on through its node
            later.append((t, g))
        elif t._node is None and not t._requires_grad:
            continue  # requires_grad_(False) after the forward: PyTorch's AccumulateGrad skips it
        elif (t._hooks and (reached is None or id(t) in reached or t._grad is not None)) or (
                t._post_hooks and (reached is None or id(t) in reached)):
            before = pending.get(id(t))
            pending[id(t)] = (t, g if before is None else before[1] + g)
        elif reached is None or id(t) in reached or t._grad is not None:
            _accumulate(t, cx.torch_grad(g) if g.dtype.kind == "c" else g, owned[k])
    for j, k in enumerate(retained):
        t = nodes[k].retained()
        if t is not None:
            _accumulate(t, cx.torch_grad(grads[len(leaf_tensors) + j]),
                        owned[len(leaf_tensors) + j])
    for t, g in later:  # (a complex cotangent in the IR's convention, as it came)
        _backward(t, np.array(g, dtype=np.complex128 if t._value.dtype.kind == "c"
                              else np.float64).reshape(t.shape), passed, fired, pending)


def _prepare(root: Node, out: Any, ct: Any) -> tuple:
    """The general path: the nodes ``root`` depends on, checked (freed, versions, changed
    inputs), planned, and their structure's cache entry."""
    cuts: dict[int, Any] = {}
    nodes = _collect(root, cuts)
    retained = []
    checks = changes = bool(cuts)  # (one pass finds the nodes the checks below must see)
    for k, n in enumerate(nodes):
        if n.freed:
            raise RuntimeError(FREED_ERROR)
        if n.retained is not None:
            retained.append(k)
        if n.indices:
            checks = True
        for ref, version in n.versions:
            t = ref() if isinstance(ref, weakref.ref) else ref
            if t is not None and t._version != version:
                checks = True
        for _, t, version in n.reads:  # (changed_inputs' test: see replay)
            if t._version != version or (t._untracked < 0 and -t._untracked > n.seq):
                changes = True
    if checks:
        _check_versions(nodes)
    if views.stale(root) is not None:
        views.refuse_saved_output(root, out)
    plan, leaf_tensors, data_values = _plan(nodes, cuts)
    # changed since, as PyTorch allows
    changed = replay.changed_inputs(nodes, cuts) if changes else None
    fed = replay.fed(nodes, bool(changed))  # forward values the kernel reads, not recomputes
    if changed:
        replay.refuse_unmatched(nodes, fed, changed)
    f32 = all_float32(nodes, leaf_tensors)
    key = (tuple(plan), _leaf_kinds(leaf_tensors), tuple(retained),
           None if ct is None else np.shape(ct), fed, f32)
    entry = _cached_entry(key, lambda: _lower(nodes, plan, leaf_tensors, retained,
                                              ct is not None, fed, f32))
    if not (retained or cuts or changed):  # the next backward may match it (.structure)
        _TEMPLATE[0] = Template(key, entry, (
            tuple([(t._value.shape, t._value.dtype) for t in leaf_tensors]),
            tuple([(v.shape, v.dtype) for v in data_values])), entry.walk)
    return nodes, leaf_tensors, data_values, retained, cuts, f32, entry


def _leaf_kinds(leaf_tensors: list[Any]) -> tuple:
    return tuple([(t._value.shape, t._value.dtype.kind == "c") for t in leaf_tensors])


#: the structure the last general backward ran (:mod:`.structure`)
_TEMPLATE: list[Template | None] = [None]


def _matched(root: Node, ct: Any) -> tuple | None:
    """``_prepare``'s nodes, leaves, data, dtype and cache entry when ``root``'s graph is
    the structure of :data:`_TEMPLATE` and that entry is the one used last (no cache
    reorder), needing none of the general path's checks; else None."""
    template = _TEMPLATE[0]
    if template is None or template.entry is not _LAST[0] or _LAST[1] is not _CACHE:
        return None  # (another cache: a test's fresh one, whose entries start over)
    found = match(root, template)
    if found is None:
        return None
    nodes, leaf_tensors, data_values = found
    key = template.key
    if key[3] != (None if ct is None else np.shape(ct)) or key[4] != replay.fed(nodes):
        return None
    refuse_bf16(nodes)
    # (the leaves' values have the template's shapes and dtypes, the nodes its
    # signatures, whose last item is the dtype: all_float32 gives the key's flag)
    return nodes, leaf_tensors, data_values, key[5], template.entry


def _cached_entry(key: tuple, lower: Callable[[], Graph | tuple[Graph, tuple[int, ...]]]
                  ) -> _Entry:
    """The cache entry of a structure, lowered on first sight; least recently used
    entries beyond ``CACHE_LIMIT`` are dropped. Threads share the cache: its order is
    changed under a lock (two threads may lower one structure at once; one keeps it)."""
    entry = _CACHE.get(key)
    if entry is None:
        graph = lower()
        graph, fed = graph if isinstance(graph, tuple) else (graph, ())
        with _LOCK:
            entry = _CACHE.get(key)
            if entry is None:
                entry = _CACHE[key] = _Entry(graph, fed=fed)
                while len(_CACHE) > CACHE_LIMIT:
                    _CACHE.popitem(last=False)
    elif entry is not _LAST[0]:  # (the one used last is last already: no reorder)
        with _LOCK:
            if key in _CACHE:
                _CACHE.move_to_end(key)
    _LAST[0], _LAST[1] = entry, _CACHE
    return entry


#: the entry :func:`_cached_entry` gave last (a training loop asks for one at every step;
#: hashing its key again to move it to the end, where it is, was a tenth of a backward),
#: and the cache it is in
_LAST: list[Any] = [None, None]


def _free(nodes: Iterable[Node]) -> None:
    """Drop the saved data of a graph backward passed through; ``next_functions``
    stay as they were, and a second backward through a node that saved a tensor raises
    ``FREED_ERROR``. A node that saves nothing (:func:`saves_nothing`) stays usable (its
    kept forward value is dropped: a later backward recomputes it). A freed node also
    drops its composite (``Node.composite``, which only a backward through it reads):
    the composite's inner nodes pointing to its last node, whose inputs lead back to
    them, were a reference cycle, so that a freed graph waited for Python's cycle
    collector (104 objects for a convolution, a gelu and a loss), now freed when its
    last reference goes, as PyTorch's."""
    for n in nodes:  # (a node whose name neither set holds saves something: no call)
        if type(n.composite or n).__name__ in _MAY_SAVE_NOTHING and saves_nothing(n):
            n.value = None
            continue
        n.freed = True
        n.composite = None
        n.versions = n.reads = n.indices = n.copies = ()
        n.value = n.hooked = None
        inputs = n.inputs
        for a in inputs:
            if isinstance(a, np.ndarray) and a.ndim:  # (0-d data stay)
                break
        else:
            continue
        n.inputs = tuple(None if isinstance(a, np.ndarray) and a.ndim else a
                         for a in inputs)


_MAY_SAVE_NOTHING = SAVES_NOTHING | SAVES_FACTORS


def _check_versions(nodes: list[Node]) -> None:
    """Raise if a tensor a node needs changed in place after the node was recorded: a
    leaf or data input (backward reads their values then), or a result that PyTorch's
    node would have saved (an input of a product, the output of ``exp``)."""
    for n in nodes:
        if n.indices:
            check_indices(n)
        for ref, version in n.versions:
            t = ref() if isinstance(ref, weakref.ref) else ref
            if t is None or t._version == version:
                continue
            if t._node is n:  # (its saved output, held by a weak reference or, once
                role = f"which is output 0 of {n.name()}"  # handed out, itself)
            elif t._node is None and t._requires_grad:
                role = f"a leaf that requires grad, an input of {n.name()}"
            else:
                role = f"an input of {n.name()}"
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by "
                f"an inplace operation: [{t.type()} {list(t.shape)}], {role}, is at version "
                f"{t._version}; expected version {version} instead. Hint: change it after "
                "backward(), or compute with a copy (.clone()) instead of changing it in "
                "place.")


def _seed(out: Any, gradient: Any) -> Any:
    """The cotangent of ``out`` as a kernel input, or None for an implicit 1 on a scalar.
    A complex output's (PyTorch's convention) is conjugated into the IR's."""
    if out._value.dtype.kind == "c":
        if gradient is None:
            raise RuntimeError("grad can be implicitly created only for real scalar outputs: "
                               "this output is complex; reduce it to a real value first "
                               "(.abs(), .real) or pass backward(gradient)")
        ct = pipeline.cotangent(gradient, Aval(out._value.shape, C128), "the output has",
                                RuntimeError)
        return np.conj(np.asarray(ct, np.complex128))
    if gradient is None:
        if out._value.size != 1:
            raise RuntimeError(
                f"{SCALAR_OUTPUT_ERROR}: this output has shape {tuple(out.shape)}. Pass "
                "backward(gradient) with a tensor of that shape (the result is then the "
                "gradient of sum(output * gradient)), or reduce it first (.sum(), .mean()).")
        return None if out.ndim == 0 else np.ones(out.shape)
    return pipeline.cotangent(gradient, Aval(out._value.shape), "the output has", RuntimeError)


def all_float32(nodes: list[Node], leaf_tensors: list[Any]) -> bool:
    """Whether the backward runs in float32: every node computed a float32 result and
    every leaf (and cut) holds float32 values (the module docstring)."""
    for n in nodes:
        if n.aval.dtype != F32:
            return False
    for t in leaf_tensors:
        if t._value.dtype is not _F32:
            return False
    return True


def _kernel_arg32(v: np.ndarray) -> Any:
    """A kernel argument of a float32 backward: floating values in float32 (a node's
    data are float32 already: each node converted its operands to float32)."""
    if type(v) is np.ndarray and v.dtype is _F32 and v.ndim and v.flags.c_contiguous \
            and v.flags.writeable:
        return v
    if v.dtype.kind == "f":
        v = np.asarray(v, dtype=np.float32)
    return pipeline.kernel_input(v, promote=False)[0]


def _kernel_arg(v: np.ndarray) -> Any:
    if type(v) is np.ndarray and v.dtype is _F64 and v.ndim:
        flags = v.flags  # (a new object at every reading: one)
        if flags.c_contiguous and flags.writeable:
            return v  # what kernel_input gives for it, without its checks
    if type(v) is np.ndarray and v.dtype is _F64 and not v.ndim:
        return float(v)
    if v.dtype == np.float32:  # the backward graph is float64 (the module docstring)
        v = v.astype(np.float64)
    elif v.dtype == np.complex64:  # (and complex128: see .complex_tensors)
        v = v.astype(np.complex128)
    return pipeline.kernel_input(v, promote=False)[0]


_F64 = np.dtype(np.float64)
_F32 = np.dtype(np.float32)


class KernelFallbackWarning(RuntimeWarning):
    """Compiling a backward kernel failed; the graph runs on the numpy interpreter."""


def _run(entry: _Entry, args: list[Any], f32: bool = False) -> list[np.ndarray]:
    """The first run of a structure interprets; the second asks for its kernel, which
    (tiered, :mod:`symgrad.backend.numba.tiered`) compiles in the compile worker while runs
    go on interpreting; the runs after it is ready reuse it. The gradients come back in
    float64, or as the kernel gives them with ``f32`` (float32)."""
    result = _as_float32 if f32 else _as_float64
    graph = entry.graph
    entry.runs += 1
    if entry.kernel is None and entry.runs == COMPILE_AT_RUN and config.eager_compile:
        try:  # large graphs become several kernels of bounded size
            program = pipeline.program(graph, "backward", "backward of a recorded graph",
                                       tiered=True)
            kernel, consts = program.kernel, program.consts
            call = (lambda *a: kernel(*a, *consts)) if consts else kernel
            results = list(call(*args))
        except Exception as e:  # noqa: BLE001 -- a gradient is still owed; say why it is slow
            warnings.warn(f"symgrad could not compile the backward kernel ({type(e).__name__}: "
                          f"{e}); this graph structure keeps running on the numpy interpreter",
                          KernelFallbackWarning, stacklevel=4)
        else:
            entry.kernel = call
            # Numba's dispatcher itself once the kernel is ready (a Tiered kernel has none
            # while it compiles), when the program is one kernel
            entry.fast = None if consts else getattr(kernel, "dispatcher", None)
            _upgrade(entry)
            _STATS["compiled_runs"] += 1
            return [result(r) for r in results]
    if entry.kernel is None:
        _STATS["interpreted"] += 1
        results = interpret(graph, *args)
    else:
        if entry.fast is not None:
            _upgrade(entry)
        _STATS["compiled_runs"] += 1
        results = entry.kernel(*args)
        if len(results) == 1:  # (one gradient: no comprehension)
            return [result(results[0])]
    return [result(r) for r in results]


def _upgrade(entry: _Entry) -> None:
    """Call the kernel's Numba dispatcher directly from now on, if it is ready."""
    if entry.fast is not None:
        fast = entry.fast()
        if fast is not None:
            entry.kernel, entry.fast = fast, None


def _silent(n: Node) -> frozenset[int]:
    """The inputs of an autograd.Function's node whose gradient its ``backward`` gave as
    None (the node's first input is the handle of the call's ctx)."""
    ctx = getattr(n.inputs[0], "ctx", None) if n.inputs else None
    return getattr(ctx, "silent_inputs", frozenset())


def _reached(root: Node, nodes: list[Node]) -> set[int] | None:
    """The leaves some gradient reaches when autograd.Function backwards returned None
    for some inputs (None when none did): PyTorch leaves ``.grad`` of the others None
    (not zeros), so an optimizer skips them."""
    for n in nodes:  # (a loop: no generator per backward; only a ctx's handle, an
        # array, has a ctx)
        if n.inputs and isinstance(n.inputs[0], np.ndarray) \
                and getattr(n.inputs[0], "ctx", None) is not None and _silent(n):
            break
    else:
        return None
    seen, leaves, stack = {id(root)}, set(), [root]
    while stack:
        n = stack.pop()
        drop = _silent(n)
        for k, a in enumerate(n.inputs):
            if k in drop:
                continue
            if isinstance(a, Node):
                if id(a) not in seen:
                    seen.add(id(a))
                    stack.append(a)
            else:
                leaves.add(id(a))
    return leaves


def _as_float64(r: Any) -> np.ndarray:
    # (a Numba kernel's arrays have a float64 dtype equal to numpy's, not numpy's object)
    if type(r) is np.ndarray and (r.dtype is _F64 or r.dtype == _F64):
        return r
    return np.asarray(r, dtype=np.complex128 if np.iscomplexobj(r) else np.float64)


def _as_float32(r: Any) -> np.ndarray:
    if type(r) is np.ndarray and (r.dtype is _F32 or r.dtype == _F32):  # (as _as_float64)
        return r
    return np.asarray(r, dtype=np.float32)


def _accumulate(t: Any, g: np.ndarray, owned: bool = False) -> None:
    """``t.grad += g``, in place when ``t.grad`` exists (so ``.grad.data.zero_()`` holds).
    The gradient has the leaf's dtype: a float32 leaf gets a float32 gradient, rounded
    from the float64 the kernel computes. A first gradient that is ``owned``
    (:func:`.owned.sole`) and has the leaf's dtype and shape becomes ``.grad`` itself,
    as PyTorch's AccumulateGrad takes a gradient nothing else holds (no copy). A retained
    non-leaf's later gradient is added out of place, as PyTorch's retain_grad hook
    (``grad = grad + new``): its earlier ``.grad`` (and arrays read from it) keep their
    values. A view made under ``no_grad`` of a tensor that requires grad gets none, as
    PyTorch's (it requires grad, but has no accumulator)."""
    if t._no_grad_view and t._node is None:
        return
    if t._grad is None:
        v = t._value
        if owned and g.dtype == v.dtype and g.shape == v.shape:
            t._grad = type(t)._make(g)
        else:
            t._grad = type(t)._make(np.array(g, dtype=v.dtype).reshape(t.shape))
    elif t._node is not None:
        total = t._grad._value.copy()
        total += g
        t._grad = type(t)._make(total)
    else:
        t._grad._value += g
