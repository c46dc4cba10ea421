"""Gradients of chosen tensors (``torch.autograd.grad``) and gradients with a graph
(``create_graph=True``): double backward, to any depth.

Both lower the recorded nodes as ``Tensor.backward`` does
(:func:`symgrad.eager.lowering.forward_graph`), differentiating with respect to the
tensors asked for: a leaf is an input of the graph, a non-leaf gets a zero added
to its node's value (the cotangent of that zero is the tensor's gradient).

Without ``create_graph`` the optimized adjoint runs as backward's does (interpreted
first, then compiled, cached by structure) and the gradients are plain tensors.

With ``create_graph`` the adjoint is IR, so it is *replayed through the eager trace*:
each equation of the (unoptimized) forward+adjoint graph that an output needs is
applied to Tensors, the leaves being the leaf tensors themselves and the cotangent
the user's ``gradient`` tensor (which may require grad). Each forward value is
computed without recording and stands for its own node (:func:`saved`): the Tensor
the node made if it is alive and unchanged (``Node.made``, a weak reference), else
the value with that node as its ``grad_fn``, as PyTorch's saved tensors are. So the
gradient's graph goes through the forward nodes it uses, as PyTorch's does: it
depends on those intermediates (``grad(g, h)`` gives the value), changing one in
place afterwards makes its backward raise, and it raises "Trying to backward
through the graph a second time" once the output's graph was freed. Every gradient
is an ordinary recorded Tensor whose ``backward`` (or ``grad``) works like any
other, with or without ``create_graph`` again. A primitive the eager trace cannot
apply (one with tuple-valued results, such as a loop) raises an error naming it: a
gradient is never returned without its graph.

Differences from PyTorch: which forward values a gradient uses follows symgrad's
adjoint rules, which may use other values than PyTorch's formulas for some
primitives (``allow_unused`` may then differ). The values are recomputed from the
leaves, so a result whose values were changed without being recorded (``.data``,
:func:`symgrad.eager.views.stale`) makes these gradients raise, where PyTorch's would
read the changed values (``Tensor.backward`` reads them). Freeing frees every node (see
:mod:`.backward`). ``backward(create_graph=True)`` does not warn about the
reference cycle PyTorch warns about.

    >>> import symgrad as torch
    >>> x = torch.tensor([1., 2.], requires_grad=True)
    >>> g, = torch.autograd.grad((x ** 3).sum(), x, create_graph=True)
    >>> g
    tensor([ 3., 12.], grad_fn=<MulBackward0>)
    >>> g.sum().backward()
    >>> x.grad
    tensor([ 6., 12.])
"""

from __future__ import annotations

import collections
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.ir import BOOL, F32, FLOAT, INT, Graph, Literal, Var
from ..core.tracing import Traced
from ..prims.elementwise import pow_p
from ..transforms import pipeline
from . import backward as engine
from . import complex_tensors as cx
from . import exposed, hooks, views
from .grad_mode import enable_grad, no_grad
from .graph import next_seq
from .lowering import forward_graph
from .replay import changed_input, changed_inputs, saved_value
from .replay import fed as replay_fed
from .replay import lower as replay_lower
from .torch_facts import torch_facts

#: differentiated (unoptimized) graphs for create_graph, by structure, least recent first
_GRAPHS: collections.OrderedDict[tuple, tuple[Graph, list[Var]]] = collections.OrderedDict()
CHANGED_LEAF = (
    "a leaf or data tensor of this graph ({}) was changed in place (under no_grad, through "
    ".data, or by a write through numpy into its memory: an array given to from_numpy() or "
    "got from numpy()) after the forward used it; torch.autograd.grad, backward(inputs=) "
    "and create_graph=True recompute the forward from the leaves, where PyTorch's backward "
    "reads the values it saved, so symgrad refuses rather than return another gradient. "
    "Call backward() without inputs= or create_graph, change it after backward, or give "
    "the tensor a copy (torch.tensor(a)).")
UNUSED_ERROR = ("The differentiated Tensor at index {} appears to not have been used in the "
                "graph. Set allow_unused=True if this is the desired behavior.")


def _tensors(x: Any, what: str) -> list[Any]:
    """A Tensor or a sequence of Tensors, as a list."""
    items = [x] if isinstance(x, Traced) else list(x)
    for t in items:
        if not isinstance(t, Traced):
            raise TypeError(f"{what} must be Tensors or a sequence of Tensors, got "
                            f"{type(t).__name__}")
    return items


def backward(out: Any, gradient: Any, retain_graph: bool | None, create_graph: bool,
             inputs: Any) -> None:
    """``out.backward(gradient, retain_graph, create_graph, inputs)``."""
    if retain_graph is None:
        retain_graph = create_graph
    if not create_graph and inputs is None:
        engine.run_backward(out, gradient, retain_graph)
        return
    targets = None
    if inputs is not None:
        targets = _tensors(inputs, "backward(inputs=)")
        if not targets:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
        for t in targets:
            if not t._requires_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
    if not out._requires_grad:
        raise RuntimeError("element 0 of tensors does not require grad and does not have a "
                           "grad_fn: set requires_grad=True on a leaf the output depends on")
    with enable_grad() if create_graph else _nothing():
        pairs = gradients(out, gradient, targets, retain_graph, create_graph)
    for t, g in pairs:
        if g is None:
            continue
        if create_graph:
            _accumulate_graph(t, g)
        else:
            engine._accumulate(t, g._value)
    hooks.post([t for t, g in pairs if g is not None][::-1], create_graph)


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


def _accumulate_graph(t: Any, g: Any) -> None:
    """As PyTorch's ``AccumulateGrad`` in grad mode: the first gradient is stored as it
    is (with its graph), a later one is added out of place (``grad = grad + g``)."""
    g = _fit(g, t)
    if t._grad is None:
        t._grad = g if g._node is not None else type(g)._make(g._value.copy())
    else:
        with enable_grad():
            t._grad = t._grad + g


def gradients(out: Any, gradient: Any, targets: list[Any] | None, retain_graph: bool,
              create_graph: bool, allow_unused: bool = True) -> list[tuple[Any, Any]]:
    """(tensor, its gradient or None when ``out`` does not depend on it) for each of
    ``targets`` (None: every leaf ``out`` depends on and every tensor that called
    ``retain_grad()``), gradients of ``sum(out * gradient)``; Tensors with a graph when
    ``create_graph``. ``out`` requires grad. Unless ``allow_unused``, a target ``out``
    does not depend on raises, before any other check of the graph (as in PyTorch)."""
    cx.refuse(out, "torch.autograd.grad, backward(inputs=) and create_graph=True")
    if exposed.KEEPING:  # (leaves and data written through numpy since the forward)
        exposed.check()
    recorded = isinstance(gradient, Traced) and gradient._requires_grad
    ct = engine._seed(out, gradient.detach() if recorded else gradient)
    if create_graph and recorded:  # the gradients depend on it
        ct = gradient if gradient.shape == out.shape else gradient.reshape(out.shape)
    if out._node is None:  # a leaf: its gradient is the cotangent
        one = type(out)._make(np.ones(out.shape)) if ct is None else ct
        seed = one if isinstance(one, Traced) else type(out)._make(
            np.array(np.broadcast_to(one, out.shape)))
        found = [out] if targets is None else targets
        return [(t, seed if t is out else None) for t in found]
    nodes = engine._collect(out._node)
    cx.refuse_graph(nodes, "torch.autograd.grad, backward(inputs=) and create_graph=True")
    _refuse_changed(nodes, out._node)
    if not allow_unused and targets is not None:
        _check_used(targets, nodes)
    # the output of a primitive whose rule reads other tensors than PyTorch's backward
    # saves, inside a gradient's graph: the partial derivative holding the other tensors
    # fixed differs (with respect to its inputs, or anything else, it is the same)
    suspect = next((t._node.prim.name for t in targets or () if t._node is not None
                    and not _reads_like_torch(t._node)), None)
    if suspect is not None and any(n.unlike_torch for n in nodes):
        raise NotImplementedError(
            f"a gradient with respect to the output of {suspect}, through a gradient's "
            f"graph (create_graph=True): symgrad's rule for {suspect}' reads other tensors "
            "than PyTorch's backward saves (see symgrad.eager.torch_facts), so "
            "the partial derivative holding the other tensors fixed would differ from "
            "PyTorch's. Differentiate with respect to its input or to leaf tensors")
    if any(n.freed for n in nodes):
        raise RuntimeError(engine.FREED_ERROR)
    plan, leaves, data_values = engine._plan(nodes)
    if any(n.hooked is not None and n.hooked._hooks for n in nodes) or any(
            isinstance(t, Traced) and t._hooks for t in leaves):
        raise RuntimeError(hooks.GRAPH_ERROR)
    index = {id(n): k for k, n in enumerate(nodes)}
    if targets is None:
        wrt_leaves = list(range(len(leaves)))
        deltas = [k for k, n in enumerate(nodes) if n.retained is not None]
        targets = [*leaves, *(nodes[k].retained() for k in deltas)]
        slots: list[int | None] = list(range(len(targets)))
    else:
        wrt_leaves, deltas, slots = _slots(targets, leaves, index)
    if all(s is None for s in slots):  # nothing to run: PyTorch checks no saved tensor
        return [(t, None) for t in targets]
    engine._check_versions(nodes)
    changed = changed_inputs(nodes)
    if changed:
        raise RuntimeError(CHANGED_LEAF.format(changed_input(nodes, changed)))
    key = (tuple(plan), tuple(t._value.shape for t in leaves), tuple(deltas),
           None if ct is None else np.shape(ct), tuple(wrt_leaves))
    # (its graph is float64: float32 data, kept as they are, enter converted)
    data_values = [v.astype(np.float64) if v.dtype == np.float32 else v for v in data_values]
    args: list[Any] = [*leaves, *data_values, *(np.zeros(nodes[k].aval.shape) for k in deltas)]
    if ct is not None:
        args.append(ct)
    if create_graph:
        grads = _replay_grads(key, nodes, plan, leaves, deltas, wrt_leaves, ct, args, out)
    else:  # the kernel reads the forward's values it may (as Tensor.backward's: .replay)
        fed = replay_fed(nodes)
        entry = engine._cached_entry(("grad", *key, fed), lambda: _lower(
            nodes, plan, leaves, deltas, wrt_leaves, ct is not None, fed))
        values = engine._run(entry, [engine._kernel_arg(
            a._value if isinstance(a, Traced) else np.asarray(a)) for a in args]
            + [engine._kernel_arg(nodes[k].value) for k in entry.fed])
        grads = [type(out)._make(np.asarray(v)) for v in values]
    if not retain_graph:
        engine._free(nodes)
    result = []
    for t, s in zip(targets, slots):
        if t is None:
            continue
        result.append((t, None if s is None else _fit(grads[s], t)))
    return result


def _check_used(targets: list[Any], nodes: list) -> None:
    """Raise PyTorch's error for the first target the nodes do not depend on."""
    inside = {id(n) for n in nodes}
    leaves = {id(a) for n in nodes for a in n.inputs if isinstance(a, Traced)}
    for i, t in enumerate(targets):
        if id(t._node) not in inside if t._node is not None else id(t) not in leaves:
            raise RuntimeError(UNUSED_ERROR.format(i))


def _slots(targets: list[Any], leaves: list[Any], index: dict[int, int]
           ) -> tuple[list[int], list[int], list[int | None]]:
    """The leaf positions and the node indices to differentiate with respect to, and for
    each target the position of its gradient among the outputs (None: not used)."""
    leaf_pos = {id(t): k for k, t in enumerate(leaves)}
    wrt_leaves: list[int] = []
    deltas: list[int] = []
    chosen = []
    for t in targets:
        if t._node is None:
            k = leaf_pos.get(id(t))
            chosen.append(None if k is None else ("leaf", k))
            if k is not None and k not in wrt_leaves:
                wrt_leaves.append(k)
        else:
            k = index.get(id(t._node))
            chosen.append(None if k is None else ("node", k))
            if k is not None and k not in deltas:
                deltas.append(k)
    deltas.sort()
    slots = [None if c is None else wrt_leaves.index(c[1]) if c[0] == "leaf"
             else len(wrt_leaves) + deltas.index(c[1]) for c in chosen]
    return wrt_leaves, deltas, slots


def _differentiated(nodes: list, plan: list, leaves: list, deltas: list[int],
                    wrt_leaves: list[int]) -> tuple[Graph, list[Var], list[int]]:
    """The forward graph, each node's variable, and the inputs to differentiate."""
    graph, own = forward_graph(nodes, plan, leaves, deltas)
    first = len(graph.inputs) - len(deltas)
    return graph, own, [*wrt_leaves, *range(first, len(graph.inputs))]


def _lower(nodes: list, plan: list, leaves: list, deltas: list[int], wrt_leaves: list[int],
           seeded: bool, fed: tuple[int, ...]) -> Graph | tuple[Graph, tuple[int, ...]]:
    graph, own, wrt = _differentiated(nodes, plan, leaves, deltas, wrt_leaves)
    if fed:
        return replay_lower(graph, own, wrt, seeded, fed)
    return pipeline.derive(graph, wrt, seeded, keep_primal=False)


def _replay_grads(key: tuple, nodes: list, plan: list, leaves: list, deltas: list[int],
                  wrt_leaves: list[int], ct: Any, args: list[Any], out: Any) -> list[Any]:
    """The gradients as recorded Tensors: the forward+adjoint graph replayed eagerly,
    each forward value standing for its own node (:func:`saved`)."""
    cached = _GRAPHS.get(key)
    if cached is None:
        graph, own, wrt = _differentiated(nodes, plan, leaves, deltas, wrt_leaves)
        full = pipeline.differentiate(graph, wrt, ct is not None, keep_primal=False)
        cached = _GRAPHS[key] = (full, own)
        while len(_GRAPHS) > engine.CACHE_LIMIT:
            _GRAPHS.popitem(last=False)
    else:
        _GRAPHS.move_to_end(key)
    full, own = cached
    start = next_seq()
    grads = replay(full, args, {}, leaves[0] if leaves else out,
                   {id(v): n for v, n in zip(own, nodes)})
    unlike = next((n.prim.name for n in nodes if not _reads_like_torch(n)), None)
    if unlike is not None:  # mark the nodes this replay recorded
        for g in grads:
            if g._node is not None:
                for n in engine._collect(g._node):
                    if n.seq > start:
                        n.unlike_torch = unlike
    return grads


# Primitives whose derivative rule reads the tensors PyTorch's backward saves (checked
# rule by rule against PyTorch's derivatives.yaml; ``reads_like_torch`` in
# :mod:`.torch_facts`), besides the linear ones. Others read
# different ones: ``tanh' = sech(x)**2`` and ``expm1' = exp(x)`` read the input, for
# accuracy in the tails where PyTorch's ``1 - tanh(x)**2`` and ``expm1(x) + 1`` from
# the saved output lose every digit; ``sigmoid`` and ``div`` read both. A gradient with
# respect to a leaf is the same either way; one with respect to an intermediate tensor
# of a gradient's graph is not (it holds the other tensors fixed), so through any
# other primitive it is refused.


def _reads_like_torch(node: Any) -> bool:
    if node.prim.linear:
        return True
    if node.prim is pow_p:  # x ** y reads x for |y| >= 1, x ** y (the output) else
        y = node.inputs[1]
        return not (isinstance(y, Literal) and 0.0 < abs(y.value) < 1.0)
    return torch_facts(node.prim).reads_like_torch


def replay(graph: Graph, args: Sequence[Any], known: dict[int, Any], like: Any,
           made: dict[int, Any] | None = None) -> list[Any]:
    """Apply the equations of ``graph`` that its outputs need to ``args`` (Tensors,
    arrays, numbers) through the eager trace of the Tensor ``like``, recording each
    one; a variable in ``known`` (by id) takes that Tensor instead of being computed.
    A variable in ``made`` (by id) is the value of that recorded node: it is computed
    without recording and stands as :func:`saved` gives it. Returns the outputs as
    Tensors."""
    needed = {id(a) for a in graph.outputs if isinstance(a, Var)}
    for e in reversed(graph.eqns):
        if id(e.out) in needed and id(e.out) not in known:
            needed.update(id(a) for a in e.inputs if isinstance(a, Var))
    env: dict[int, Any] = {id(v): x for v, x in zip(graph.inputs, args)}
    env.update((id(v), c) for v, c in graph.consts)
    env.update(known)
    trace = like._trace

    def read(a: Any) -> Any:
        return a.value if isinstance(a, Literal) else env[id(a)]

    for e in graph.eqns:
        if id(e.out) not in needed or id(e.out) in env:
            continue
        # an autograd.Function (.function); not scipy's host primitives (elementwise)
        if (e.prim.host and e.prim.kind == "control") or e.prim.name == "proj":
            env[id(e.out)] = _host_or_part(e, [read(a) for a in e.inputs], like, made)
            continue
        if e.prim.name == "convert" and e.out.dtype in (F32, FLOAT) and isinstance(
                read(e.inputs[0]), Traced):  # a cast's rounding (graph.ROUNDED): a cast
            x = read(e.inputs[0])
            env[id(e.out)] = x.float() if e.out.dtype == F32 else x.double()
            continue
        if e.out.dtype not in (FLOAT, BOOL, INT) or e.prim.subgraphs:
            raise NotImplementedError(_cannot(e.prim.name, "its result is not an array"))
        if e.prim.name == "where":  # a condition known now (a rule's choice by a literal)
            picked = _chosen(read(e.inputs[0]), read(e.inputs[1]), read(e.inputs[2]))
            if picked is not None and tuple(np.shape(picked)) == e.out.shape:
                env[id(e.out)] = picked  # the other side stays out of the gradient's graph
                continue
        node = None if made is None else made.get(id(e.out))
        try:
            if node is None:
                env[id(e.out)] = trace.apply(e.prim, [read(a) for a in e.inputs],
                                             dict(e.params))
            else:
                kept = saved_value(node)  # the forward's own value (float32 stays float32)
                with no_grad():
                    value = (type(like)._make(kept) if kept is not None else
                             trace.apply(e.prim, [read(a) for a in e.inputs], dict(e.params)))
                env[id(e.out)] = saved(node, value)
        except Exception as err:  # noqa: BLE001 -- name the primitive, keep the cause
            raise NotImplementedError(_cannot(e.prim.name, f"{type(err).__name__}: {err}")
                                      ) from err
    make = type(like)._make
    return [x if isinstance(x, Traced) else make(np.array(x, dtype=np.float64))
            for x in map(read, graph.outputs)]


def _host_or_part(e: Any, values: list[Any], like: Any, made: dict[int, Any] | None) -> Any:
    """An ``autograd.Function``'s equations (:mod:`.function`): its backward callback
    replays the user's ``backward`` with recording (``fn.replay``); its forward callback
    gives the values ``forward`` computed (each output stands for its own node, as any
    forward value here); ``proj`` picks one of them."""
    make = type(like)._make
    if e.prim.name == "proj":
        if not isinstance(values[0], tuple):
            raise NotImplementedError(_cannot("proj", "its operand is not a tuple of Tensors"))
        part = values[0][e.params["part"]]
        node = None if made is None else made.get(id(e.out))
        if not isinstance(part, Traced):
            part = make(np.array(part, dtype=np.float64))
        return part if node is None else saved(node, part)
    fn = e.params["fn"]
    if hasattr(fn, "replay"):
        return fn.replay(values, like)
    raw = [np.asarray(v._value if isinstance(v, Traced) else v) for v in values]
    return e.prim.impl(*raw, **e.params)


def _chosen(c: Any, a: Any, b: Any) -> Any:
    """``a`` or ``b`` where the condition ``c`` is one truth value known without a
    graph (a literal, or a comparison of literals), else None."""
    if isinstance(c, (bool, np.bool_)):
        return a if c else b
    if isinstance(c, Traced) and c._node is None and c._value.size == 1:
        return a if bool(c._value) else b
    return None


def saved(node: Any, value: Any) -> Any:
    """The Tensor standing for ``node``'s ``value`` (an unrecorded Tensor) in a gradient's
    graph, as PyTorch's saved tensor does: the Tensor the node made, if it is alive and
    still holds exactly that value (not changed in place, not even through a view), else
    a new Tensor of the value whose ``grad_fn`` is ``node``. Either way the gradient's
    graph goes through ``node``, so it depends on that intermediate, and a backward
    through it after the node was freed raises as in PyTorch. Using the live Tensor
    itself also makes the gradient's nodes watch its version: changing it in place
    afterwards makes their backward raise, as PyTorch's does."""
    ref = node.made
    t = None if ref is None else ref[0]()
    if (t is not None and t._node is node and t._version == ref[1]
            and t._value.dtype == value._value.dtype
            and np.array_equal(t._value, value._value, equal_nan=True)):
        return t
    return type(value)._make(value._value, node)


def _refuse_changed(nodes: list[Any], root: Any) -> None:
    """Raise if a result's values were changed behind its node's back (``.data``): the
    gradients here recompute every value, where PyTorch's would read the changed ones
    (``Tensor.backward()`` without ``inputs`` or ``create_graph`` reads them too)."""
    for n in nodes:
        t = views.stale(n)
        if t is not None and n is root:
            views.refuse_saved_output(n, t)  # only its own node reads the root's values
        elif t is not None and (t._untracked < 0 or any(
                c.seq > t._untracked and any(a is n for a in c.inputs) for c in nodes)):
            # (a node made before a counted change reads it only if it saved it, and then
            # the version check raises; a .data change is not counted)
            raise RuntimeError(
                f"the values of a {t.type()} {list(t.shape)}, output 0 of {n.name()}, were "
                "changed after it was computed without being recorded (through .data, "
                "detach(), or under no_grad); torch.autograd.grad, backward(inputs=) and "
                "create_graph=True recompute it from the leaves, where PyTorch would read "
                "the changed values, so symgrad refuses rather than return another "
                "gradient. Call backward() without inputs= or create_graph, or change the "
                "values by a recorded operation.")


def _cannot(prim: str, why: str) -> str:
    return (f"create_graph=True: the adjoint of this graph uses the primitive '{prim}', which "
            f"the eager trace cannot apply to Tensors ({why}), so the gradient cannot carry a "
            "graph. Differentiate twice with symgrad.grad(symgrad.grad(f)) on a numpy "
            "function instead, or call backward without create_graph.")


def _fit(g: Any, t: Any) -> Any:
    """A gradient with its tensor's shape and dtype (recorded when it has a graph)."""
    if tuple(g.shape) != tuple(t.shape):  # a constant gradient (a literal) is a scalar
        g = g + type(g)._make(np.zeros(t.shape))
    if g.dtype is not t.dtype:
        g = g.to(t.dtype)
    return g


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> tuple[Any, ...]:
    """``torch.autograd.grad``: the gradients of ``sum(outputs[i] * grad_outputs[i])`` in
    each of ``inputs``, as a tuple, without touching any ``.grad``.

    ``outputs`` and ``inputs`` are Tensors or sequences of them; a ``grad_outputs``
    entry may be None for a one-element output. An input the outputs do not depend on
    raises unless ``allow_unused`` (then its gradient is None, or zeros with
    ``materialize_grads``). ``retain_graph`` defaults to ``create_graph``; with
    ``create_graph`` the gradients are recorded Tensors, to differentiate again.

        >>> import symgrad as torch
        >>> x = torch.tensor([1., 2.], requires_grad=True)
        >>> torch.autograd.grad((x * x).sum(), x)
        (tensor([2., 4.]),)
    """
    if is_grads_batched:
        raise NotImplementedError("grad(is_grads_batched=True) is not supported: call grad "
                                  "once per row of grad_outputs (with retain_graph=True), or "
                                  "use symgrad.vmap on a numpy function")
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    allow_unused = bool(allow_unused) or materialize_grads
    outs = _tensors(outputs, "outputs")
    targets = _tensors(inputs, "inputs")
    if grad_outputs is None:
        cts: list[Any] = [None] * len(outs)
    else:
        cts = [grad_outputs] if isinstance(grad_outputs, Traced) else list(grad_outputs)
    if len(cts) != len(outs):
        raise RuntimeError(f"grad requires one grad_output per output: got {len(cts)} "
                           f"grad_outputs for {len(outs)} outputs")
    for i, (o, c) in enumerate(zip(outs, cts)):
        if c is None and o._value.size != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        if c is not None and np.shape(c._value if isinstance(c, Traced) else c) != o.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                               f"torch.Size({list(np.shape(getattr(c, '_value', c)))}) and "
                               f"output[{i}] has a shape of torch.Size({list(o.shape)}).")
        if not o._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               "have a grad_fn")
    for t in targets:
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if retain_graph is None:
        retain_graph = create_graph
    with enable_grad() if create_graph else _nothing():
        if len(outs) == 1:
            root, ct = outs[0], cts[0]
        else:  # sum_i <outputs[i], grad_outputs[i]>, recorded: one backward through all
            with enable_grad():
                root = sum(((o * (1.0 if c is None else c)).sum() for o, c in zip(outs, cts)))
            ct = None
        pairs = gradients(root, ct, targets, retain_graph, create_graph, allow_unused)
    found = {id(t): g for t, g in pairs}
    result = []
    for i, t in enumerate(targets):
        g = found.get(id(t))
        if g is None:
            if not allow_unused:
                raise RuntimeError(UNUSED_ERROR.format(i))
            if materialize_grads:
                g = type(t)._make(np.zeros(t.shape, dtype=t._value.dtype))
        result.append(g)
    return tuple(result)
