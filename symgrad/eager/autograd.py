"""Define-by-run autograd: ``Variable``/``Tensor`` operations recorded, ``backward`` compiled.

Recording is an *eager trace*: every Tensor operation goes through the same
numpy-on-tracer code as :func:`symgrad.grad` (:mod:`symgrad.ops`, the Tracer
operators, ``np.exp(x)``); :meth:`EagerTrace.apply` computes the value at once
with the primitive's numpy ``impl`` and, when an input requires grad, records
a :class:`Node` (the equation and its inputs). So every primitive the ``grad``
API supports works on Tensors, with no per-op code here.

``backward`` lowers the recorded graph to the IR (:class:`symgrad.ir.Graph`),
builds its adjoint (:mod:`symgrad.adjoint`), optimizes it (:mod:`symgrad.passes`)
and runs it. All tensor data (leaves, tensors that need no grad, numpy arrays)
enter as inputs, and so do Python scalars (``x * (0.5 + k)``), except exponents
(``x ** 2``: the passes rewrite 2, 0.5 and -1 as numpy computes them), which are
literals. So the kernel depends on the graph's structure, its shapes and its
exponents, and is cached by them; the cache keeps the ``CACHE_LIMIT`` structures
used last.

Execution policy: the first backward of a structure runs the optimized adjoint
on the numpy interpreter (:func:`symgrad.ir.interpret`); when the same structure
recurs, it is compiled with Numba (:mod:`symgrad.compile`) and every later
backward calls the kernel. Measured on the seed graph (n = 1000, on 2 cores
shared with other work, so the spread is wide): the first backward takes
0.7-5 ms on the interpreter (lowering, adjoint and passes included) against
1.7-2.2 s when compiled at once (2.2 s with Numba's import; 1.2 s to load it from
a warm disk cache); the cached kernel then takes 0.07-0.1 ms. So a one-off graph
never waits for Numba, and a training loop compiles exactly once, on its second
step (``benchmarks/train_loop.py``).
``backward_stats()`` counts the interpreted and compiled runs;
``symgrad.compile.compile_stats()`` counts Numba compiles.

Differences from PyTorch: a backward without ``retain_graph=True`` frees every
node it passed through, so a second backward through any of them raises (PyTorch
only raises for nodes that saved tensors). Leaves and data are read at backward
time, so changing any of them in place between a node's creation and backward
raises (PyTorch only raises for the tensors a node saved); ``.data`` writes are
not counted, as in PyTorch. An in-place operation on a result is recorded: the
tensor takes the new node (``y.mul_(3)`` is ``y = y * 3`` for the gradient).
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import itertools
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import tensor as _tensor
from .ir import Aval, Eqn, Graph, Literal, Primitive, Var, freeze_params, interpret
from .trace import Trace, as_constant_array

SCALAR_OUTPUT_ERROR = "grad can be implicitly created only for scalar outputs"
FREED_ERROR = (
    "Trying to backward through the graph a second time: its nodes were freed by the "
    "previous backward(). Pass retain_graph=True to the first backward() to keep the graph "
    "for another one (or rebuild the graph by running the forward computation again).")

# ---------------------------------------------------------------------------
# grad mode

_grad_enabled = True


def is_grad_enabled() -> bool:
    return _grad_enabled


class _GradMode:
    """A context manager and decorator that sets the grad mode inside its block.
    Each ``with`` pushes the mode it replaces, so one instance may be nested."""

    _mode = False

    def __new__(cls, *args: Any) -> Any:
        if len(args) == 1 and callable(args[0]) and cls is not set_grad_enabled:
            return cls()(args[0])  # a bare ``@no_grad`` decorator
        return super().__new__(cls)

    def __init__(self, *args: Any) -> None:
        self._previous: list[bool] = []

    def __enter__(self) -> None:
        global _grad_enabled
        self._previous.append(_grad_enabled)
        _grad_enabled = self._mode

    def __exit__(self, *exc: Any) -> None:
        global _grad_enabled
        _grad_enabled = self._previous.pop()

    def __call__(self, fn: Callable) -> Callable:
        mode = self._mode

        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with _mode_class(mode)():
                return fn(*args, **kwargs)
        return wrapped


class no_grad(_GradMode):
    """``with symgrad.no_grad():``, ``@symgrad.no_grad()`` or ``@symgrad.no_grad``:
    results record no graph.

        >>> import symgrad as torch
        >>> x = torch.ones(2, requires_grad=True)
        >>> with torch.no_grad():
        ...     y = x * 2
        >>> y.requires_grad, y.grad_fn
        (False, None)
    """

    _mode = False


class set_grad_enabled(_GradMode):
    """``set_grad_enabled(False)`` disables grad at once, as a function; used as a
    context manager (or decorator), it restores the previous mode when the block ends.

        >>> import symgrad as torch
        >>> with torch.set_grad_enabled(False):
        ...     torch.is_grad_enabled()
        False
        >>> torch.is_grad_enabled()
        True
    """

    def __init__(self, mode: bool) -> None:
        global _grad_enabled
        super().__init__()
        self._mode = bool(mode)
        self._previous.append(_grad_enabled)  # what the block's end restores
        _grad_enabled = self._mode

    def __enter__(self) -> None:
        pass  # the mode was set when the object was made

    def __call__(self, fn: Callable) -> Callable:
        _GradMode.__exit__(self)  # as a decorator, it only applies inside ``fn``
        return super().__call__(fn)


class enable_grad(no_grad):
    """The opposite of :class:`no_grad`."""

    _mode = True


def _mode_class(mode: bool) -> type[_GradMode]:
    return enable_grad if mode else no_grad


# ---------------------------------------------------------------------------
# the recorded graph

#: PyTorch's names for the backward functions of symgrad's primitives
TORCH_NAMES = {
    "add": "AddBackward0", "sub": "SubBackward0", "mul": "MulBackward0",
    "div": "DivBackward0", "pow": "PowBackward0", "neg": "NegBackward0",
    "sum": "SumBackward0", "mean": "MeanBackward0", "prod": "ProdBackward0",
    "max": "MaxBackward1", "min": "MinBackward1", "reshape": "ViewBackward0",
    "transpose": "PermuteBackward0", "broadcast_to": "ExpandBackward0",
    "maximum": "MaximumBackward0", "minimum": "MinimumBackward0",
    "arcsin": "AsinBackward0", "arccos": "AcosBackward0", "arctan": "AtanBackward0",
    "matmul": "MmBackward0", "dot": "DotBackward0",
    "slice": "SliceBackward0", "gather": "IndexBackward0", "concatenate": "CatBackward0",
    "inv": "LinalgInvExBackward0", "det": "LinalgDetBackward0",
}
#: nodes whose Python-scalar operand torch keeps out of ``next_functions``
_SCALAR_OPERAND_HIDDEN = {"PowBackward0", "PowBackward2", "RsubBackward1", "CloneBackward0",
                          "ZeroBackward0", "FillBackward2"}
_counter = itertools.count()


@functools.cache
def _node_class(name: str) -> type[Node]:
    return type(name, (Node,), {"__slots__": ()})


def torch_name(prim: Primitive) -> str:
    """``AddBackward0`` for ``add``; ``<Name>Backward0`` for the others."""
    name = TORCH_NAMES.get(prim.name)
    return name or "".join(p.capitalize() for p in prim.name.split("_")) + "Backward0"


class Node:
    """A ``grad_fn``: one recorded equation, whose inputs are other nodes, leaves
    (tensors that require grad), data (arrays that do not) or literals."""

    __slots__ = ("prim", "params", "inputs", "aval", "seq", "freed", "retained", "sig",
                 "versions", "__weakref__")

    def __init__(self, prim: Primitive, params: dict[str, Any], inputs: tuple, aval: Aval):
        self.prim, self.params, self.inputs, self.aval = prim, params, inputs, aval
        #: what the structure key holds of this node (the rest is how inputs connect)
        self.sig = (prim.name, tuple(sorted(params.items())),
                    tuple(a.key for a in inputs if isinstance(a, Literal)))
        self.seq = next(_counter)  # creation order is a topological order
        self.freed = False
        self.retained: Any = None  # the tensor that called retain_grad()
        #: (tensor, its _version) for each leaf or data tensor input: backward reads their
        #: values then, so an in-place change in between must be caught
        self.versions: tuple[tuple[Any, int], ...] = ()

    def name(self) -> str:
        return type(self).__name__

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        """The functions the cotangent flows to: nodes, ``AccumulateGrad`` for leaves
        that require grad, ``None`` for inputs that need no gradient."""
        inputs = self.inputs
        if type(self).__name__ in _SCALAR_OPERAND_HIDDEN:  # x ** 2, 2 - x, x.clone()
            inputs = tuple(a for a in inputs if not _is_scalar(a))
        elif self.prim.name in ("add", "mul") and _is_scalar(inputs[0]):
            inputs = inputs[::-1]  # 2 + x is x.add(2) in torch
        return tuple((_function_of(a), 0) for a in inputs)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {id(self):#x}>"


def _is_scalar(a: Any) -> bool:
    """A scalar operand: a literal, or a Python scalar that enters the kernel as data."""
    return isinstance(a, Literal) or (isinstance(a, np.ndarray) and a.ndim == 0)


class AccumulateGrad:
    """The ``grad_fn`` slot of a leaf in ``next_functions``: adds into ``variable.grad``."""

    __slots__ = ("variable",)
    next_functions: tuple = ()

    def __init__(self, variable: Any):
        self.variable = variable

    def name(self) -> str:
        return "AccumulateGrad"

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {id(self):#x}>"


def _function_of(a: Any) -> Any:
    if isinstance(a, Node):
        return a
    if isinstance(a, _tensor.Tensor):
        if a._accumulate is None:
            a._accumulate = AccumulateGrad(a)
        return a._accumulate
    return None


class EagerTrace(Trace):
    """The trace Tensors belong to: computes each operation now, records it if needed."""

    def __init__(self) -> None:
        super().__init__()
        self.eager = True

    def apply(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        Tensor = _tensor.Tensor
        values = [a._value if isinstance(a, Tensor) else
                  float(a) if type(a) in (float, int) else as_constant_array(a) for a in args]
        aval = _shape_rule(prim, values, params)
        with np.errstate(all="ignore"):  # IEEE results (inf, nan), as the kernels give
            value = prim.impl(*values, **params)
        if type(value) is not np.ndarray or value.dtype != _DTYPES[aval.dtype]:
            value = np.asarray(value, dtype=aval.dtype)
        if not (_grad_enabled and aval.dtype == "float64"
                and any(isinstance(a, Tensor) and a._requires_grad for a in args)):
            return Tensor._make(value)
        literal_ok = prim.name in _LITERAL_PRIMS
        inputs = tuple(_operand(a, v, literal_ok) for a, v in zip(args, values))
        node = _node_class(torch_name(prim))(prim, params, inputs, aval)
        node.versions = tuple((a, a._version) for a in args
                              if isinstance(a, Tensor) and a._node is None)
        return Tensor._make(value, node)


_DTYPE_NAMES = {np.dtype(np.float64): "float64", np.dtype(np.bool_): "bool"}
_DTYPES = {name: dtype for dtype, name in _DTYPE_NAMES.items()}
_RULES: dict[tuple, Aval] = {}


def _shape_rule(prim: Primitive, values: list[Any], params: dict[str, Any]) -> Aval:
    """``prim.shape_rule`` on the values' avals (checks shapes, names the output dtype),
    memoized: a training loop asks the same question every step."""
    types = tuple(((), "float64") if type(v) is float else
                  (v.shape, _DTYPE_NAMES.get(v.dtype) or v.dtype.name) for v in values)
    try:
        key: tuple | None = (prim.name, types, tuple(params.items()))
        hash(key)
    except TypeError:
        key = None
    aval = _RULES.get(key) if key is not None else None
    if aval is None:
        aval = prim.shape_rule(*(Aval(*t) for t in types), **params)
        if key is not None and len(_RULES) < 100_000:
            _RULES[key] = aval
    return aval


#: primitives whose scalar operands stay literals in the structure: the passes
#: rewrite ``x ** 2``, ``x ** 0.5`` and ``x ** -1`` as numpy computes them
_LITERAL_PRIMS = {"pow"}


def _operand(a: Any, value: Any, literal_ok: bool) -> Any:
    if isinstance(a, _tensor.Tensor) and a._requires_grad:
        return a._node if a._node is not None else a  # a result's node, or a leaf
    scalar = type(value) is float or (value.ndim == 0 and not isinstance(a, _tensor.Tensor))
    if scalar and (literal_ok or type(value) is not float and value.dtype != np.float64):
        return Literal(float(value) if type(value) is float else value.item())
    if scalar:  # x * (0.5 + k): a kernel input, so the structure does not change with k
        return np.array(value, dtype=np.float64)
    return value  # data: a kernel input, never a literal


EAGER = EagerTrace()

# ---------------------------------------------------------------------------
# backward


@dataclasses.dataclass
class _Entry:
    """What one graph structure lowers to: the optimized adjoint and how to run it."""

    graph: Graph
    runs: int = 0
    kernel: Callable[..., tuple] | None = None


#: the graph structures kept, least recently used first
_CACHE: collections.OrderedDict[tuple, _Entry] = collections.OrderedDict()
CACHE_LIMIT = 256
_STATS = {"interpreted": 0, "compiled_runs": 0}


def backward_stats() -> dict[str, int]:
    """Backward calls run on the numpy interpreter, on a compiled kernel, and the
    number of graph structures in the cache (at most ``CACHE_LIMIT``)."""
    return {**_STATS, "structures": len(_CACHE)}


def _collect(root: Node) -> list[Node]:
    """The nodes ``root`` depends on, in creation (topological) order."""
    seen: dict[int, Node] = {}
    stack = [root]
    while stack:
        n = stack.pop()
        if id(n) not in seen:
            seen[id(n)] = n
            stack.extend(a for a in n.inputs if isinstance(a, Node))
    return sorted(seen.values(), key=lambda n: n.seq)


def run_backward(out: Any, gradient: Any, retain_graph: bool | None) -> None:
    """``out.backward(gradient, retain_graph)``: fill ``.grad`` of the leaves."""
    if not out._requires_grad:
        raise RuntimeError("element 0 of tensors does not require grad and does not have a "
                           "grad_fn: set requires_grad=True on a leaf the output depends on")
    ct = _seed(out, gradient)
    root = out._node
    if root is None:  # backward on a leaf itself
        _accumulate(out, np.broadcast_to(1.0 if ct is None else ct, out.shape))
        return
    nodes = _collect(root)
    if any(n.freed for n in nodes):
        raise RuntimeError(FREED_ERROR)
    _check_versions(nodes)
    plan, leaf_tensors, data_values = _plan(nodes)
    retained = [k for k, n in enumerate(nodes) if n.retained is not None]
    key = (tuple(plan), tuple(t.shape for t in leaf_tensors), tuple(retained),
           None if ct is None else ct.shape)
    entry = _cached_entry(key, lambda: _lower(nodes, plan, leaf_tensors, retained,
                                              ct is not None))
    args: list[Any] = [_kernel_arg(t._value) for t in leaf_tensors]
    args += [_kernel_arg(v) for v in data_values]
    args += [_kernel_arg(np.zeros(nodes[k].aval.shape)) for k in retained]
    if ct is not None:
        args.append(_kernel_arg(ct))
    grads = _run(entry, args)
    for t, g in zip(leaf_tensors, grads):
        _accumulate(t, g)
    for k, g in zip(retained, grads[len(leaf_tensors):]):
        t = nodes[k].retained()
        if t is not None:
            _accumulate(t, g)
    if not retain_graph:
        _free(nodes)


def _plan(nodes: list[Node]) -> tuple[list, list[Any], list[np.ndarray]]:
    """What the structure key holds of each node (its signature and where each input
    comes from: an earlier node, a leaf, data or a literal), the leaves and the data
    arrays in the order the kernel takes them."""
    Tensor = _tensor.Tensor
    index = {id(n): k for k, n in enumerate(nodes)}
    leaves: dict[int, Any] = {}    # id(tensor) -> (position, tensor)
    data: dict[int, int] = {}       # id(array) -> position
    data_values: list[np.ndarray] = []
    plan = []
    for n in nodes:
        refs: list[Any] = []
        for a in n.inputs:
            if isinstance(a, Node):
                refs.append(("eqn", index[id(a)]))
            elif isinstance(a, Tensor):
                refs.append(("leaf", leaves.setdefault(id(a), (len(leaves), a))[0]))
            elif isinstance(a, Literal):
                refs.append(None)  # its value is in n.sig
            else:
                if id(a) not in data:
                    data[id(a)] = len(data_values)
                    data_values.append(a)
                refs.append(("data", data[id(a)], a.shape, _DTYPE_NAMES.get(a.dtype)))
        plan.append((n.sig, tuple(refs)))
    leaf_tensors = [t for _, t in sorted(leaves.values(), key=lambda p: p[0])]
    return plan, leaf_tensors, data_values


def _cached_entry(key: tuple, lower: Callable[[], Graph]) -> _Entry:
    """The cache entry of a structure, lowered on first sight; least recently used
    entries beyond ``CACHE_LIMIT`` are dropped."""
    entry = _CACHE.get(key)
    if entry is None:
        entry = _CACHE[key] = _Entry(lower())
        while len(_CACHE) > CACHE_LIMIT:
            _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(key)
    return entry


def _free(nodes: list[Node]) -> None:
    """Drop the saved data of a graph backward passed through; ``next_functions``
    stay as they were, and a second backward raises ``FREED_ERROR``."""
    for n in nodes:
        n.freed = True
        n.versions = ()
        n.inputs = tuple(None if isinstance(a, np.ndarray) and a.ndim else a
                         for a in n.inputs)


def _check_versions(nodes: list[Node]) -> None:
    """Raise if a leaf or data tensor changed in place after a node used it."""
    for n in nodes:
        for t, version in n.versions:
            if t._version != version:
                kind = "a leaf that requires grad" if t._requires_grad else "a tensor"
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified "
                    f"by an inplace operation: {kind} of shape {list(t.shape)} is at version "
                    f"{t._version}; expected version {version} instead (it is an input of "
                    f"{n.name()}). Hint: change it after backward(), or compute with a copy "
                    "(.clone()) instead of changing it in place.")


def _seed(out: Any, gradient: Any) -> np.ndarray | None:
    """The cotangent of ``out`` as an array, or None for an implicit 1 on a scalar."""
    if gradient is None:
        if out._value.size != 1:
            raise RuntimeError(
                f"{SCALAR_OUTPUT_ERROR}: this output has shape {tuple(out.shape)}. Pass "
                "backward(gradient) with a tensor of that shape (the result is then the "
                "gradient of sum(output * gradient)), or reduce it first (.sum(), .mean()).")
        return None if out.ndim == 0 else np.ones(out.shape)
    g = gradient._value if isinstance(gradient, _tensor.Tensor) else as_constant_array(gradient)
    g = np.asarray(g, dtype=np.float64)
    if g.shape != out.shape:
        if out._value.size == 1 and g.size == 1:  # the seed's torch.Tensor([1.0]) for a scalar
            return g.reshape(out.shape)
        raise RuntimeError(
            f"Mismatch in shape: gradient has shape {tuple(g.shape)} but the output has shape "
            f"{tuple(out.shape)}; pass a gradient of the output's shape (backward(gradient) "
            "computes the gradient of sum(output * gradient))")
    return g


def _kernel_arg(v: np.ndarray) -> Any:
    if v.ndim == 0:
        return bool(v) if v.dtype == np.bool_ else float(v)
    v = np.ascontiguousarray(v)
    return v if v.flags.writeable else v.copy()  # Numba compiles read-only arrays separately


def _lower(nodes: list[Node], plan: list, leaves: list, retained: list[int],
           seeded: bool) -> Graph:
    """The optimized adjoint graph of a recorded structure. Inputs: leaves, data,
    one zero per retained non-leaf (added to it, so its gradient is theirs), the
    cotangent; outputs: the gradients of leaves and retained non-leaves."""
    from .adjoint import adjoint
    from .passes import optimize

    inputs = [Var(Aval(t.shape), f"leaf{k}") for k, t in enumerate(leaves)]
    data_vars: dict[int, Var] = {}
    for _, refs in plan:
        for r in refs:
            if isinstance(r, tuple) and r[0] == "data" and r[1] not in data_vars:
                data_vars[r[1]] = Var(Aval(r[2], r[3]), f"data{r[1]}")
    inputs += [data_vars[k] for k in sorted(data_vars)]
    deltas = {k: Var(nodes[k].aval, f"retained{j}") for j, k in enumerate(retained)}
    outs: list[Var] = []
    eqns: list[Eqn] = []
    for k, (n, (_, refs)) in enumerate(zip(nodes, plan)):
        atoms = [a if r is None else
                 outs[r[1]] if r[0] == "eqn" else
                 inputs[r[1]] if r[0] == "leaf" else data_vars[r[1]]
                 for a, r in zip(n.inputs, refs)]
        v = Var(n.aval)
        eqns.append(Eqn(n.prim, tuple(atoms), v, freeze_params(n.params)))
        if k in deltas:  # v + 0: the cotangent of this input is the cotangent of v
            from .primitives import add_p
            v2 = Var(n.aval)
            eqns.append(Eqn(add_p, (v, deltas[k]), v2))
            v = v2
        outs.append(v)
    graph = Graph(tuple(inputs + list(deltas.values())), tuple(eqns), (outs[-1],), (),
                  "backward")
    wrt = [*range(len(leaves)), *range(len(inputs), len(inputs) + len(deltas))]
    full = adjoint(graph, wrt, seed_inputs=seeded)
    return optimize(dataclasses.replace(full, outputs=full.outputs[1:]))


class KernelFallbackWarning(RuntimeWarning):
    """Compiling a backward kernel failed; the graph runs on the numpy interpreter."""


def _run(entry: _Entry, args: list[Any]) -> list[np.ndarray]:
    """The first run of a structure interprets; the second compiles; the rest reuse."""
    graph = entry.graph
    entry.runs += 1
    if entry.kernel is None and entry.runs == 2:
        from . import split

        try:  # large graphs become several kernels of at most split.MAX_EQNS equations
            # a backward graph has no constants (leaves and data are its inputs)
            kernel = split.build(graph, "backward", "backward of a recorded graph").kernel
            results = list(kernel(*args))
        except Exception as e:  # noqa: BLE001 -- a gradient is still owed; say why it is slow
            warnings.warn(f"symgrad could not compile the backward kernel ({type(e).__name__}: "
                          f"{e}); this graph structure keeps running on the numpy interpreter",
                          KernelFallbackWarning, stacklevel=4)
        else:
            entry.kernel = kernel
            _STATS["compiled_runs"] += 1
            return [np.asarray(r, dtype=np.float64) for r in results]
    if entry.kernel is None:
        _STATS["interpreted"] += 1
        results = interpret(graph, *args)
    else:
        _STATS["compiled_runs"] += 1
        results = list(entry.kernel(*args))
    return [np.asarray(r, dtype=np.float64) for r in results]


def _accumulate(t: Any, g: np.ndarray) -> None:
    """``t.grad += g``, in place when ``t.grad`` exists (so ``.grad.data.zero_()`` holds)."""
    if t._grad is None:
        t._grad = _tensor.Tensor._make(np.array(g, dtype=np.float64).reshape(t.shape))
    else:
        t._grad._value += g


def Variable(data: Any, requires_grad: bool = False) -> Any:
    """``torch.autograd.Variable``: a leaf tensor sharing ``data``'s values.

        >>> import symgrad as torch
        >>> from symgrad.autograd import Variable
        >>> Variable(torch.ones(2), requires_grad=True)
        tensor([1., 1.], requires_grad=True)
    """
    return _tensor.Tensor._leaf(data, requires_grad)


__all__ = ["Variable", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled",
           "Node", "AccumulateGrad", "EagerTrace", "backward_stats", "KernelFallbackWarning",
           "SCALAR_OUTPUT_ERROR"]
