"""Control flow: primitives whose parameters hold graphs, and what they share.

A control-flow equation computes several values at once: its output is a
*tuple* (dtype ``tuple``, see :mod:`symgrad.core.ir`), which only ``proj``
reads. This module declares ``proj`` and ``cond`` (one of two branch graphs
runs) and the pieces the loops of :mod:`symgrad.prims.loops` use too:

- cotangents of tuples: the adjoint keeps, for a tuple value, a dict from part
  index to that part's cotangent (``proj``'s VJP gives one entry);
- :func:`seeded_adjoint`: the adjoint of a body graph as a graph whose inputs
  are the body's inputs and the cotangents of chosen outputs, and whose
  outputs are the cotangents of chosen inputs. It calls the adjoint transform
  it is given (``adjoint=``, which the adjoint sweep hands to the VJP rules of
  primitives with ``subgraphs``), so the adjoint of a body is IR, optimized,
  fused and compiled like any other graph;
- :func:`hoist`: a traced graph with its constants turned into inputs (a body
  has no constants: its arrays are operands of the equation that holds it).

Facets of control-flow primitives get the tool of the layer that applies them:
the Numba backend's lowering gets a scope that renders a graph as kernel statements
(:class:`symgrad.backend.numba.scope.Scope`), ``sympy(..., evaluate=)`` evaluates a
graph symbolically, ``vjp(..., adjoint=)`` is the adjoint transform. The
interpreter is :func:`symgrad.core.interpreter.interpret` itself.

    >>> import numpy as np, symgrad as sg
    >>> f = sg.grad(lambda x: sg.cond(x > 0.0, lambda v: v * v, lambda v: -v, x))
    >>> float(f(3.0)), float(f(-3.0))
    (6.0, -1.0)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.interpreter import interpret
from ..core.ir import (
    BOOL,
    C64,
    C128,
    F32,
    FLOAT,
    INEXACT,
    INT,
    TUPLE,
    Aval,
    Eqn,
    Graph,
    Literal,
    Var,
    freeze_params,
    tuple_aval,
)
from ..core.tracing import Traced, apply
from .control_batching import batch_cond
from .convert import convert_p
from .elementwise import add_p
from .reductions import broadcast_to, broadcast_to_p
from .registry import register, require

# ---------------------------------------------------------------------------
# tuples


def _proj_rule(t: Aval, *, part: int) -> Aval:
    if t.dtype != TUPLE or not 0 <= part < len(t.parts):
        raise TypeError(f"proj: part {part} of {t}")
    return t.parts[part]


# a part of a control-flow equation's results; a tuple's cotangent is a dict from
# part index to cotangent, so proj gives its one entry
proj_p = register(
    name="proj", complex=True, kind="control", shape_rule=_proj_rule,
    impl=lambda t, part: t[part],
    vjp=lambda g, ans, t, *, part: ({part: g},),
    sympy=lambda sp, t, *, part: t[part], view=True,
    # a batched control-flow equation gives its parts unpacked (control_batching)
    batch=lambda b, args, flags, *, part: _batched_part(args[0], flags[0], part))


def _batched_part(t: Any, flags: Any, part: int) -> tuple[Any, bool]:
    if not isinstance(t, tuple):
        raise TypeError(f"vmap: proj of {t}, which no control-flow batching rule unpacked")
    return t[part], flags[part]


def proj(t: Any, part: int) -> Any:
    """Part ``part`` of the tuple ``t`` (one equation)."""
    return apply(proj_p, t, part=part)


def parts(t: Any, n: int) -> list[Any]:
    """The first ``n`` parts of the tuple ``t``."""
    return [proj(t, k) for k in range(n)]


def is_float(a: Aval) -> bool:
    """Whether values of ``a`` carry derivatives: float and complex ones."""
    return a.dtype in INEXACT


def atom(x: Any) -> Any:
    """An operand as the VJP rule got it, for recording again: the adjoint gives
    literals as numpy scalars, and an integer one must stay an integer literal."""
    if isinstance(x, np.integer | int) and not isinstance(x, bool | np.bool_):
        return Literal(int(x))
    return x


def of_dtype(x: Any, aval: Aval) -> Any:
    """``x`` (a cotangent, traced or a number) in ``aval``'s float or complex dtype: a
    ``convert`` when it differs (a float64 seed of a float32 carry; a literal has no
    float32; a real cotangent of a complex carry)."""
    dtype = x.dtype if isinstance(x, Traced) else np.asarray(x).dtype
    if aval.dtype in INEXACT and dtype != np.dtype(aval.dtype):
        return apply(convert_p, x, dtype=aval.dtype)
    return x


def zeros(aval: Aval) -> Any:
    """Zeros of ``aval`` (a float literal for a float64 scalar; a float32 or complex value
    is a ``convert`` of the float64 zeros, as a literal has neither)."""
    zero = np.float64(0.0) if not aval.shape else broadcast_to(0.0, aval.shape)
    if aval.dtype in (F32, C64, C128):
        return apply(convert_p, zero, dtype=aval.dtype)
    return zero


# ---------------------------------------------------------------------------
# graphs held by equations


def hoist(graph: Graph) -> tuple[Graph, list[np.ndarray]]:
    """``graph`` with its constants as extra inputs (after the others), and their values."""
    if not graph.consts:
        return graph, []
    return (Graph((*graph.inputs, *graph.const_vars), graph.eqns, graph.outputs, (),
                  graph.name), [value for _, value in graph.consts])


def with_inputs(graph: Graph, inputs: Sequence[Var], name: str | None = None) -> Graph:
    """``graph`` taking ``inputs`` (which include all it reads; the others are unused)."""
    return Graph(tuple(inputs), graph.eqns, graph.outputs, (), name or graph.name)


@dataclass(frozen=True)
class SeededAdjoint:
    """The adjoint of a body: ``graph`` takes the body's inputs, then ``cts`` (one per
    seeded output) and returns the cotangent of each input in ``wrt``."""

    graph: Graph
    cts: tuple[Var, ...]


def seeded_adjoint(body: Graph, seeded: Sequence[int], wrt: Sequence[int],
                   adjoint: Callable[..., Graph], name: str) -> SeededAdjoint:
    """The adjoint of ``body`` seeded at its outputs ``seeded``, differentiating the
    inputs ``wrt`` (float ones; the others get no cotangent)."""
    restricted = Graph(body.inputs, body.eqns, tuple(body.outputs[k] for k in seeded), (),
                       body.name)
    full = adjoint(restricted, list(wrt), seed_inputs=True)
    cts = full.inputs[len(body.inputs):]
    grads = full.outputs[len(seeded):]
    graph, consts = hoist(Graph(full.inputs, full.eqns, grads, full.consts, name))
    if consts:  # a VJP rule made an array constant: not expected of any rule today
        raise NotImplementedError(f"the adjoint of {body.name} has array constants")
    return SeededAdjoint(graph, tuple(cts))


#: (id(graph), active inputs) -> (graph, its linearized form): one object per body, so a
#: loop's forward equation (``linearized`` facet) and the taping loop of its VJP hold the
#: same body and :func:`symgrad.passes.loops.merge_taped` merges them
_LINEARIZED: dict[tuple, tuple[Graph, Graph]] = {}


def active_inputs(graph: Graph, active: Sequence[bool] | None) -> tuple[bool, ...]:
    """Which inputs of ``graph`` are differentiated: ``active`` (one flag per input, as
    the adjoint gives an equation's operands), or every float and complex one."""
    if active is None:
        return tuple(v.aval.dtype in INEXACT for v in graph.inputs)
    return tuple(bool(a) and v.aval.dtype in INEXACT for a, v in zip(active, graph.inputs))


def active_outputs(graph: Graph, active: Sequence[bool]) -> tuple[bool, ...]:
    """Which outputs of ``graph`` depend on its ``active`` inputs."""
    live = {id(v) for v, a in zip(graph.inputs, active) if a}
    for e in graph.eqns:
        if any(isinstance(a, Var) and id(a) in live for a in e.inputs):
            live.add(id(e.out))
    return tuple(isinstance(o, Var) and id(o) in live for o in graph.outputs)


def active_carries(body: Graph, first: int, n_carry: int, active: Sequence[bool]) -> tuple:
    """The active inputs of a loop body whose inputs ``first .. first + n_carry`` are the
    carries (its first ``n_carry`` outputs): a carry is active if it starts active or the
    body makes it from active values (a fixed point, as JAX's loop JVP finds it)."""
    flags = list(active_inputs(body, active))
    while True:
        outs = active_outputs(body, flags)
        new = [flags[first + j] or outs[j] for j in range(n_carry)]
        if new == flags[first:first + n_carry]:
            return tuple(flags)
        flags[first:first + n_carry] = new


def linearized_graph(graph: Graph, active: Sequence[bool] | None = None) -> Graph:
    """``graph`` as it computes under differentiation (JAX's linearized primal): each
    equation that depends on a differentiated input (``active``: one flag per input;
    None: every float and complex one) and has a ``linearized`` facet (a ``custom_jvp``
    call, whose jvp rule's primal output is then the value; a ``custom_vjp`` call, its
    ``fwd``; a loop or branch holding one) stands as that facet makes it. ``graph``
    itself when nothing changes."""
    flags = active_inputs(graph, active)
    key = (id(graph), flags)
    known = _LINEARIZED.get(key)
    if known is not None and known[0] is graph:
        return known[1]
    live = {id(v) for v, a in zip(graph.inputs, flags) if a}
    eqns, changed = [], False
    for e in graph.eqns:
        operands = tuple(isinstance(a, Var) and id(a) in live for a in e.inputs)
        if any(operands):
            live.add(id(e.out))
            if e.prim.linearized is not None:
                new = e.prim.linearized(e, operands)
                changed |= new is not e
                e = new
        eqns.append(e)
    result = Graph(graph.inputs, tuple(eqns), graph.outputs, graph.consts, graph.name) \
        if changed else graph
    if len(_LINEARIZED) > 1024:
        _LINEARIZED.clear()
    _LINEARIZED[key] = (graph, result)
    return result


def with_linearized(eqn: Eqn, graphs: dict[str, Sequence[bool] | None]) -> Eqn:
    """``eqn`` with its graphs (name -> their active inputs) linearized
    (:func:`linearized_graph`): a loop's or branch's ``linearized`` facet. ``eqn`` itself
    when they do not change."""
    new = {k: linearized_graph(eqn.params[k], a) for k, a in graphs.items()
           if isinstance(eqn.params.get(k), Graph)}
    if all(new[k] is eqn.params[k] for k in new):
        return eqn
    return Eqn(eqn.prim, eqn.inputs, eqn.out, freeze_params({**eqn.params, **new}), eqn.origin)


def add_eqn(x: Var, y: Any) -> Eqn:
    """``out = x + y`` as an equation of a graph under construction (no trace)."""
    y_atom = y if isinstance(y, Var | Literal) else Literal(float(y))
    return Eqn(add_p, (x, y_atom), Var(add_p.shape_rule(x.aval, y_atom.aval)),
               freeze_params({}))


def zero_eqn(v: Var) -> Eqn:
    """``v = 0`` of its shape, as an equation (for a cotangent nobody gives)."""
    return Eqn(broadcast_to_p, (Literal(0.0),), v, freeze_params({"shape": v.shape}))


# ---------------------------------------------------------------------------
# cond


def _branch_avals(g: Graph) -> tuple[list[Aval], list[Aval]]:
    return [v.aval for v in g.inputs], [a.aval for a in g.outputs]


def _cond_rule(pred: Aval, *ops: Aval, true: Graph, false: Graph) -> Aval:
    require("cond", (pred,), BOOL)
    if pred.shape:
        raise TypeError(f"cond: the predicate must be a scalar, not {pred}")
    (t_in, t_out), (f_in, f_out) = _branch_avals(true), _branch_avals(false)
    if t_in != list(ops) or f_in != list(ops):
        raise TypeError(f"cond: branches take {t_in} and {f_in}, operands are {list(ops)}")
    if t_out != f_out:
        raise TypeError(f"cond: the branches return {t_out} and {f_out}")
    return tuple_aval(t_out)


def _cond_impl(pred: Any, *ops: Any, true: Graph, false: Graph) -> tuple:
    return tuple(interpret(true if bool(pred) else false, *ops))


def _cond_sympy(sp: Any, pred: Any, *ops: Any, true: Graph, false: Graph,
                evaluate: Callable) -> tuple:
    a, b = evaluate(true, list(ops)), evaluate(false, list(ops))
    if pred in (sp.true, sp.false):
        return tuple(a if pred == sp.true else b)

    def pick(x: Any, y: Any) -> Any:
        return sp.Piecewise((x, pred), (y, True))
    return tuple(np.frompyfunc(pick, 2, 1)(x, y) if np.ndim(x) else pick(x, y)
                 for x, y in zip(a, b))


def _cond_vjp(g: dict, ans: Any, pred: Any, *ops: Any, true: Graph, false: Graph,
              adjoint: Callable, active: Sequence[bool] | None = None) -> tuple:
    """The adjoint of the branch taken: a cond of the two branches' adjoints (with
    respect to the ``active`` operands, the adjoint's flags; None: every float one)."""
    outs = [a.aval for a in true.outputs]
    seeded = [k for k in sorted(g) if is_float(outs[k])]
    flags = active_inputs(true, None if active is None else active[1:])
    wrt = [k for k, a in enumerate(flags) if a]
    if not seeded or not wrt:
        return (None,) * (1 + len(ops))
    branches = []
    for graph in (true, false):
        adj = seeded_adjoint(graph, seeded, wrt, adjoint, f"grad_{graph.name}")
        branches.append(adj.graph)
    # both adjoints take (*ops, *cts): the same avals, hence one operand list
    t = apply(cond_p, pred, *map(atom, ops), *(of_dtype(g[k], outs[k]) for k in seeded),
              true=branches[0], false=branches[1])
    cts: list[Any] = [None] * len(ops)
    for k, ct in zip(wrt, parts(t, len(wrt))):
        cts[k] = ct
    return (None, *cts)


cond_p = register(
    name="cond", complex=True, kind="control", shape_rule=_cond_rule, impl=_cond_impl,
    vjp=_cond_vjp, sympy=_cond_sympy, subgraphs=("true", "false"),
    linearized=lambda eqn, active=None: with_linearized(
        eqn, dict.fromkeys(("true", "false"), None if active is None else active[1:])),
    batch=lambda b, args, flags, **params: batch_cond(cond_p, b, args, flags, **params))


def operand_aval(x: Any) -> Aval:
    """The aval of an operand of a control-flow equation: a traced value's, or that of a
    Python/numpy number or array (integers stay int64)."""
    if isinstance(x, Traced):
        return Aval(tuple(x.shape), np.dtype(x.dtype).name)
    if isinstance(x, Literal):
        return x.aval
    array = np.asarray(x)
    if array.dtype.kind == "b":
        return Aval(array.shape, BOOL)
    if array.dtype.kind in "iu" and array.ndim == 0:
        return Aval((), INT)
    if array.dtype.kind == "c":
        return Aval(array.shape, C64 if array.dtype == np.complex64 else C128)
    return Aval(array.shape, F32 if array.dtype == np.float32 else FLOAT)
