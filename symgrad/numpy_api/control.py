"""Structured control flow with JAX's signatures: ``fori_loop``, ``scan``,
``while_loop`` and ``cond``.

Inside a function being traced (``sg.grad(f)``, ``sg.jit(f)``), each call
traces its body functions once, on tracers (a nested trace: values of the
enclosing function that a body reads become extra operands, and so do the
arrays it reads), and records one equation of :mod:`symgrad.prims.loops` or
:mod:`symgrad.prims.control` whose parameters hold the body graphs: the
kernel runs a real loop, whose compile time does not depend on the trip
count. Carries, ``xs`` and results may be pytrees (tuples, lists, dicts) of
arrays and numbers; a carry keeps its shape and dtype from step to step.
Integer carries and bounds are int64 (``0``, not ``0.0``, starts an integer
counter).

Called outside any trace, with numpy values (or ``symgrad.Tensor``s), they
run as plain Python loops and return what the Python loop would.

``checkpoint=k`` (loops) trades time for memory in reverse mode: the backward
sweep needs the carry before every step; by default the forward loop stores
all of them (``N`` carries), with ``k`` every ``k``-th, and the backward sweep
recomputes each segment of ``k`` steps from its checkpoint (``N/k + k``
carries, about one more forward step per step).

    >>> import numpy as np, symgrad as sg
    >>> def f(x):
    ...     carry, ys = sg.scan(lambda c, x: (c * x, c), 1.0, x)
    ...     return carry + np.sum(ys)
    >>> sg.grad(f)(np.array([2.0, 3.0]))   # f = x0*x1 + 1 + x0
    array([4., 2.])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..core.errors import user_location
from ..core.ir import BOOL, COMPLEXES, DYN, INT, Aval, Graph, Literal, Var, usable
from ..core.pytree import Tree, flatten, paths, unflatten
from ..core.tracing import Trace, Tracer, arg_names, current_trace, find_trace, recording
from ..prims.control import cond_p, operand_aval, parts
from ..prims.convert import convert
from ..prims.elementwise import as_bool
from ..prims.loops import loop_p, step, while_p
from ..prims.reductions import broadcast_to
from .traced_array import ArrayTracer

__all__ = ["cond", "fori_loop", "scan", "while_loop"]


def fori_loop(lower: Any, upper: Any, body_fun: Callable, init_val: Any, *,
              checkpoint: int | None = None) -> Any:
    """``val = body_fun(i, val)`` for ``i`` in ``range(lower, upper)``; returns ``val``.

    ``lower`` and ``upper`` are Python ints or traced integers (an integer argument
    of the transformed function: a new trip count compiles nothing).

        >>> import numpy as np, symgrad as sg
        >>> f = lambda x, n: sg.fori_loop(0, n, lambda i, v: v + np.sin(v), x)
        >>> float(sg.grad(f)(0.5, 3)) > 0
        True
    """
    leaves, tree = flatten(init_val)
    into = _recording(lower, upper, *leaves)
    if into is None:  # plain Python
        val = init_val
        for i in range(_int(lower, "lower"), _int(upper, "upper")):
            val = body_fun(i, val)
        return val
    lo, hi = _bound(lower, "lower"), _bound(upper, "upper")
    size = max(hi.value - lo.value, 0) if isinstance(lo, Literal) and isinstance(hi, Literal) \
        else DYN
    avals = [operand_aval(x) for x in leaves]
    names = ["i", *paths(tree, _names(body_fun, 2)[1])]

    def flat(i: Any, *carry: Any) -> list:
        return _conform(body_fun(i, unflatten(tree, carry)), tree, avals, "fori_loop",
                        "body_fun")

    # (i is a Python int of range(lower, upper), weak as one: a float32 carry + i is float32)
    body, extra = _stage(flat, [Aval((), INT, weak=True), *avals], names, _name(body_fun, "body"))
    t = into.apply(loop_p, [lo, hi, *map(_operand, leaves), *extra], dict(
        body=body, n_carry=len(leaves), n_xs=0, reverse=False, tape=0, size=size,
        recompute=None, checkpoint=_checkpoint(checkpoint)))
    return unflatten(tree, parts(t, len(leaves)))


def scan(f: Callable, init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False, *, checkpoint: int | None = None) -> tuple[Any, Any]:
    """``carry, y = f(carry, x)`` for each ``x`` along the leading axis of ``xs``; returns
    the last carry and the ``y``\\ s stacked on a new leading axis (``reverse``: from the
    last ``x`` to the first, ``ys`` still in the order of ``xs``).

        >>> import numpy as np, symgrad as sg
        >>> sg.scan(lambda c, x: (c + x, c * x), 0.0, np.array([1.0, 2.0, 3.0]))
        (np.float64(6.0), array([0., 2., 9.]))
    """
    c_leaves, c_tree = flatten(init)
    x_leaves, x_tree = flatten(xs)
    n = _length(x_leaves, length)
    into = _recording(*c_leaves, *x_leaves)
    if into is None:
        return _scan_python(f, init, xs, x_leaves, x_tree, n, reverse)
    c_avals = [operand_aval(x) for x in c_leaves]
    x_avals = [step(operand_aval(x)) for x in x_leaves]
    y_tree: list[Tree] = []

    def flat(i: Any, *leaves: Any) -> list:
        carry = unflatten(c_tree, leaves[:len(c_leaves)])
        x = unflatten(x_tree, leaves[len(c_leaves):])
        result = f(carry, x)
        if not isinstance(result, tuple) or len(result) != 2:
            raise TypeError(f"scan: f must return a pair (carry, y), not {result!r:.60}")
        new, y = result
        y_leaves, tree = flatten(y)
        y_tree.append(tree)
        return [*_conform(new, c_tree, c_avals, "scan", "f"), *y_leaves]

    names = _names(f, 2)
    body, extra = _stage(flat, [Aval((), INT), *c_avals, *x_avals],
                         ["i", *paths(c_tree, names[0]), *paths(x_tree, names[1])],
                         _name(f, "step"))
    t = into.apply(loop_p, [Literal(0), Literal(n), *map(_operand, c_leaves), *x_leaves,
                            *extra], dict(
        body=body, n_carry=len(c_leaves), n_xs=len(x_leaves), reverse=bool(reverse), tape=0,
        size=n, recompute=None, checkpoint=_checkpoint(checkpoint)))
    results = parts(t, len(body.outputs))
    return (unflatten(c_tree, results[:len(c_leaves)]),
            unflatten(y_tree[0], results[len(c_leaves):]))


def while_loop(cond_fun: Callable, body_fun: Callable, init_val: Any, *,
               checkpoint: int | None = None) -> Any:
    """``val = body_fun(val)`` while ``cond_fun(val)``; returns ``val``. Differentiable in
    reverse mode: the forward loop stores the carries in a tape that grows with the
    trip count (every ``checkpoint``-th carry if given).

        >>> import numpy as np, symgrad as sg
        >>> def sqrt(a):  # Newton's iteration for the square root, to a tolerance
        ...     step = lambda x: 0.5 * (x + a / x)
        ...     return sg.while_loop(lambda x: np.abs(step(x) - x) > 1e-12, step, a)
        >>> round(float(sg.grad(sqrt)(4.0)), 12)   # 1 / (2 sqrt(4))
        0.25
    """
    leaves, tree = flatten(init_val)
    into = _recording(*leaves)
    if into is None:
        val = init_val
        while cond_fun(val):
            val = body_fun(val)
        return val
    avals = [operand_aval(x) for x in leaves]
    names = paths(tree, _names(body_fun, 1)[0])

    def test(*carry: Any) -> list:
        holds = cond_fun(unflatten(tree, carry))
        if isinstance(holds, Tracer):
            if holds.shape:
                raise TypeError(f"while_loop: cond_fun must return a scalar, not {holds.aval}")
            return [as_bool(holds)]
        return [Literal(bool(holds))]

    def flat(*carry: Any) -> list:
        return _conform(body_fun(unflatten(tree, carry)), tree, avals, "while_loop",
                        "body_fun")

    cond_graph, c_extra = _stage(test, avals, names, _name(cond_fun, "cond_fun"))
    body, b_extra = _stage(flat, avals, names, _name(body_fun, "body"))
    t = into.apply(while_p, [*map(_operand, leaves), *c_extra, *b_extra], dict(
        cond=cond_graph, body=body, n_carry=len(leaves), n_cconst=len(c_extra), tape=0,
        checkpoint=_checkpoint(checkpoint)))
    return unflatten(tree, parts(t, len(leaves)))


def cond(pred: Any, true_fun: Callable, false_fun: Callable, *operands: Any) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``: one branch runs,
    and the gradient is that of the branch taken. ``pred`` is a scalar; for an
    elementwise choice between arrays use ``sg.where``, which computes both.

        >>> import numpy as np, symgrad as sg
        >>> f = lambda x: sg.cond(x > 1.0, np.log, lambda v: v - 1.0, x)
        >>> float(sg.grad(f)(4.0)), float(sg.grad(f)(0.5))
        (0.25, 1.0)
    """
    leaves, tree = flatten(operands)
    into = _recording(pred, *leaves)
    if into is None or not isinstance(pred, Tracer):  # a known predicate: Python's if
        return true_fun(*operands) if _truth(pred) else false_fun(*operands)
    if pred.shape:
        raise TypeError(f"cond at {user_location()}: the predicate must be a scalar, not "
                        f"{pred.aval}; for an elementwise choice use sg.where(c, a, b)")
    avals = [operand_aval(x) for x in leaves]
    names = paths(tree, "x")
    out: dict[str, Any] = {}

    def branch(fun: Callable, which: str) -> Callable:
        def flat(*xs: Any) -> list:
            result = fun(*unflatten(tree, xs))
            res_leaves, res_tree = flatten(result)
            out.setdefault("tree", res_tree)
            if res_tree != out["tree"]:
                raise TypeError(f"cond: the branches return {out['tree']} and {res_tree}")
            if "avals" not in out:
                res_leaves = [Literal(int(x)) if not isinstance(x, Tracer)
                              and operand_aval(x).dtype == INT else x for x in res_leaves]
                out["avals"] = [operand_aval(x) for x in res_leaves]
                return res_leaves
            try:
                return _conform(result, res_tree, out["avals"], "cond", which)
            except TypeError:
                raise TypeError(
                    f"cond at {user_location()}: true_fun returns "
                    f"{[str(a) for a in out['avals']]} but false_fun returns "
                    f"{[str(operand_aval(x)) for x in res_leaves]}; both must return the "
                    "same shapes and dtypes") from None
        return flat

    g_true, e_true = _stage(branch(true_fun, "true_fun"), avals, names, _name(true_fun, "true"))
    g_false, e_false = _stage(branch(false_fun, "false_fun"), avals, names,
                              _name(false_fun, "false"))
    # each branch takes the operands, then what either branch reads from outside
    t_extra = [Var(v.aval, v.hint) for v in g_false.inputs[len(leaves):]]
    f_extra = [Var(v.aval, v.hint) for v in g_true.inputs[len(leaves):]]
    g_true = Graph((*g_true.inputs, *t_extra), g_true.eqns, g_true.outputs, (), g_true.name)
    g_false = Graph((*g_false.inputs[:len(leaves)], *f_extra, *g_false.inputs[len(leaves):]),
                    g_false.eqns, g_false.outputs, (), g_false.name)
    if [a.aval for a in g_true.outputs] != [a.aval for a in g_false.outputs]:
        raise TypeError(f"cond at {user_location()}: true_fun returns "
                        f"{[str(a.aval) for a in g_true.outputs]} but false_fun returns "
                        f"{[str(a.aval) for a in g_false.outputs]}; both must return the "
                        "same shapes and dtypes")
    t = into.apply(cond_p, [pred if pred.dtype == np.bool_ else as_bool(pred),
                            *map(_operand, leaves), *e_true, *e_false],
                   dict(true=g_true, false=g_false))
    return unflatten(out["tree"], parts(t, len(g_true.outputs)))


# ---------------------------------------------------------------------------


def _recording(*values: Any) -> Trace | None:
    """The trace to record in: the innermost one recording, or that of a traced operand;
    None for plain Python (numpy values, Tensors)."""
    into = current_trace()
    if into is not None:
        return into
    found = find_trace([v for v in values if isinstance(v, Tracer)])
    return found


def _stage(fun: Callable, avals: Sequence[Aval], names: Sequence[str],
           name: str) -> tuple[Graph, list[Any]]:
    """Trace ``fun`` (which returns a list of leaves) on tracers of ``avals``: its graph,
    which takes those inputs, then one per enclosing value and array it read, and the
    operands that feed those extra inputs."""
    t = Trace(tracer=ArrayTracer)
    inputs = [Var(a, n) for a, n in zip(avals, names)]
    try:
        with recording(t):
            result = fun(*(ArrayTracer(v, t) for v in inputs))
            outputs = [t.atom(o) for o in result]  # (atoms lift and make consts)
    finally:
        t.active = False
    lifted = list(t.captured.values())
    consts = t.consts
    graph = Graph((*inputs, *(v for _, v in lifted), *(v for v, _ in consts)), tuple(t.eqns),
                  tuple(outputs), (), name)
    extra = [*(x for x, _ in lifted), *(t.const_sources.get(id(v), value) for v, value in consts)]
    return graph, extra


def _operand(x: Any) -> Any:
    """A leaf as an operand: an integer number stays an integer (a counter's start)."""
    if not isinstance(x, Tracer) and operand_aval(x).dtype == INT:
        return Literal(int(x))
    return x


def _conform(result: Any, tree: Tree, avals: Sequence[Aval], api: str, fun: str) -> list:
    """The leaves of a body's result, checked against the carry's structure and avals;
    numbers become values of the carry's dtype (and shape, for a scalar)."""
    leaves, got = flatten(result)
    if got != tree:
        raise TypeError(f"{api} at {user_location()}: {fun} returns the structure {got}, but "
                        f"the carry is {tree}; return a value of the same structure")
    out = []
    for k, (x, want) in enumerate(zip(leaves, avals)):
        have = operand_aval(x)
        if not isinstance(x, Tracer) and not have.shape and want.dtype in COMPLEXES:
            x, have = convert(broadcast_to(complex(x), want.shape), want.dtype), want
        elif not isinstance(x, Tracer) and want.dtype == INT and have.dtype == INT:
            x = Literal(int(x))
        elif not isinstance(x, Tracer) and not have.shape and want.shape and want.dtype != INT:
            x = broadcast_to(float(x) if want.dtype != BOOL else bool(x), want.shape)
            have = want
        elif not isinstance(x, Tracer) and have.dtype == INT and want.dtype != INT:
            x, have = float(x), Aval(have.shape)
        if have != want:
            raise TypeError(
                f"{api} at {user_location()}: {fun} returns leaf {k} of the carry as {have}, "
                f"but it starts as {want}; a carry keeps its shape and dtype from step to "
                "step (start a float carry from a float such as 0.0, not 0; broadcast the "
                "initial value to the shape the body returns)")
        out.append(x)
    return out


def _scan_python(f: Callable, init: Any, xs: Any, x_leaves: list, x_tree: Tree, n: int,
                 reverse: bool) -> tuple[Any, Any]:
    carry, ys = init, [None] * n
    for i in (range(n - 1, -1, -1) if reverse else range(n)):
        x = unflatten(x_tree, [leaf[i] for leaf in x_leaves]) if xs is not None else None
        carry, ys[i] = f(carry, x)
    if n == 0:  # the ys' shapes: of f's y at a row of zeros, stacked zero times
        x = unflatten(x_tree, [np.zeros(np.shape(leaf)[1:]) for leaf in x_leaves])
        _, y = f(init, x if xs is not None else None)
        y_leaves, y_tree = flatten(y)
        return carry, unflatten(y_tree, [np.zeros((0, *np.shape(v))) for v in y_leaves])
    y_leaves = [flatten(y)[0] for y in ys]
    # np.stack, not of np.asarray: Tensors stack as Tensors, keeping their graph
    stacked = [np.stack([y[k] for y in y_leaves]) for k in range(len(y_leaves[0]))]
    return carry, unflatten(flatten(ys[0])[1], stacked)


def _length(x_leaves: list, length: int | None) -> int:
    lengths = set()
    for x in x_leaves:
        shape = np.shape(x) if not isinstance(x, Tracer) else x.shape
        if not shape:
            raise TypeError("scan: every leaf of xs needs a leading axis to scan over")
        lengths.add(shape[0])
    if length is not None:
        length = _int(length, "length")
        if lengths and lengths != {length}:
            raise ValueError(f"scan: length={length} but xs have leading axes {sorted(lengths)}")
        return length
    if not lengths:
        raise ValueError("scan: without xs, pass length= (the number of steps)")
    if len(lengths) > 1:
        raise ValueError(f"scan: the leaves of xs have leading axes {sorted(lengths)}; they "
                         "must all have the same length")
    return lengths.pop()


def _int(x: Any, what: str) -> int:
    if isinstance(x, bool) or not isinstance(x, int | np.integer):
        raise TypeError(f"{what} must be an integer, not {x!r:.40}")
    return int(x)


#: what to write instead of a trip count that differs per example under ``sg.vmap``
PER_EXAMPLE_FIX = ("pass one count for the whole batch (in_axes=None for it), or count in "
                   "the carry with sg.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, "
                   "body(c[1])), (0, init)), whose condition may differ per example (each "
                   "example stops at its own count), or loop over the examples in Python")


class BoundError(TypeError):
    """A loop bound that is a traced value (``.value``) but not an integer scalar;
    ``sg.vmap`` says more when it is a batched argument (a trip count per example)."""

    def __init__(self, message: str, value: Any, where: str):
        super().__init__(message)
        self.value, self.where = value, where


def _bound(x: Any, what: str) -> Any:
    """A loop bound as an operand: a traced integer, or an integer literal."""
    if isinstance(x, Tracer):
        if x.dtype != np.int64 or x.shape:
            where = user_location()
            raise BoundError(
                f"fori_loop at {where}: {what} is a traced {x.aval} value; the bounds must "
                "be integers: Python ints, or int scalar arguments (traced as int64 unless "
                "differentiated; an array of ints, as sg.vmap maps, is traced as float). A "
                "trip count per example under sg.vmap is not supported: " + PER_EXAMPLE_FIX,
                x, where)
        return x
    return Literal(_int(x, what))


def _truth(pred: Any) -> bool:
    return bool(np.asarray(pred)) if not hasattr(pred, "__bool__") else bool(pred)


def _checkpoint(k: int | None) -> int:
    if k is None:
        return 0
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ValueError(f"checkpoint must be a positive int (store every k-th carry), not {k!r}")
    return int(k) if k > 1 else 0


def _names(fun: Callable, count: int) -> list[str]:
    return [n if usable(n) else f"arg{k}" for k, n in enumerate(arg_names(fun, count))]


def _name(fun: Callable, default: str) -> str:
    name = getattr(fun, "__name__", "")
    return name if isinstance(name, str) and usable(name) else default
