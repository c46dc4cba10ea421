"""Loops as primitives: ``loop`` (``fori_loop`` and ``scan``) and ``while``.

``t = loop(lo, hi, *carry, *xs, *consts; body, n_carry, n_xs, reverse, tape,
size, recompute, checkpoint)`` runs ``body(i, *carry, *x, *consts) -> (*carry,
*y)`` for ``i`` from ``lo`` to ``hi - 1`` (down from ``hi - 1`` if ``reverse``),
reading ``x = xs[i - lo]`` and writing ``ys[i - lo] = y``. ``size`` is the trip
count ``hi - lo`` when it is known while tracing, else :data:`DYN` (then ys
and tapes have a leading size known only at run time). ``t`` holds
``(*carry, *ys, *tapes)``.

Reverse mode (:func:`_loop_vjp`) runs the loop again with ``tape=1``, which
also stores the carry before each step (``tapes[j][i - lo]``), and then a
``loop`` in the other direction over the *adjoint body*: the adjoint transform
of ``body`` (seeded with the cotangents of its outputs) whose carries are the
cotangents of the carries and the sums of the constants' cotangents, and whose
xs are the tapes, the xs and the cotangents of the ys. The pass
:func:`symgrad.passes.loops.merge_taped` then lets the taping loop stand
for the forward one, so the forward runs once. With ``checkpoint=k`` the tape
holds the carry before every k-th step only (``tape=k``), and the backward
loop (``recompute=`` the forward body) recomputes each segment of ``k`` steps
from its checkpoint into a buffer of ``k`` carries before running back over
it: memory ``N/k + k`` carries instead of ``N``, for one more forward step per
step.

``t = while(*carry, *cond_consts, *body_consts; cond, body, n_carry,
n_cconst, tape, checkpoint)`` runs ``body`` while ``cond`` holds. With
``tape`` it also counts the steps and stores the carries in tapes that grow by
doubling; its VJP is the taping ``while`` and a backward ``loop`` over
``0 .. count``. Second derivatives run through ``loop``, ``cond`` and ``while``
(the backward loop is a ``loop`` again; a taping ``while`` differentiated again
reads its tapes' cotangents there as the cotangents of ys), not through a
checkpointed loop (a ``NotImplementedError`` says so). Tapes whose length is
known at run time only (``DYN``) broadcast with themselves
(:func:`symgrad.prims.registry.broadcast_shapes`), so the adjoint can sum two
cotangents of one tape.

    >>> import numpy as np, symgrad as sg
    >>> f = lambda x: sg.fori_loop(0, 3, lambda i, v: v * v, x)
    >>> float(sg.grad(f)(1.5))        # d/dx x**8 = 8 x**7
    136.6875
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.interpreter import runner
from ..core.ir import BOOL, DYN, INT, Aval, Eqn, Graph, Literal, Var, tuple_aval
from ..core.tracing import apply
from .control import (
    active_carries,
    active_inputs,
    add_eqn,
    atom,
    is_float,
    linearized_graph,
    of_dtype,
    proj,
    seeded_adjoint,
    with_linearized,
    zeros,
)
from .control_batching import batch_loop, batch_while
from .registry import register, require

_SECOND_ORDER = ("second derivatives through {what} are not supported (nor forward mode: "
                 "sg.jvp, jacfwd, linearize and hessian differentiate a gradient): "
                 "differentiate the function once in reverse mode, or write the loop {fix}")


def stacked(n: int, a: Aval) -> Aval:
    """The aval of ``n`` values of aval ``a`` stacked on a new leading axis."""
    return Aval((n, *a.shape), a.dtype)


def step(a: Aval) -> Aval:
    """The aval of one row of ``a``."""
    if not a.shape:
        raise TypeError(f"loop: xs must have a leading axis, got {a}")
    return Aval(a.shape[1:], a.dtype)


def tape_length(size: int, tape: int) -> int:
    if size == DYN:
        return DYN
    return size if tape == 1 else -(-size // tape)


def _split(ops: tuple, n_carry: int, n_xs: int, n_ckpt: int) -> tuple[tuple, ...]:
    carry, xs = ops[:n_carry], ops[n_carry:n_carry + n_xs]
    rest = ops[n_carry + n_xs:]
    return carry, xs, rest[:len(rest) - n_ckpt], rest[len(rest) - n_ckpt:]


# ---------------------------------------------------------------------------
# loop


def _loop_rule(lo: Aval, hi: Aval, *ops: Aval, body: Graph, n_carry: int, n_xs: int,
               reverse: bool, tape: int, size: int, recompute: Graph | None,
               checkpoint: int) -> Aval:
    require("loop", (lo, hi), INT)
    if lo.shape or hi.shape:
        raise TypeError("loop: the bounds must be integer scalars")
    n_ckpt = len(recompute.outputs) if recompute is not None else 0
    carry, xs, consts, ckpts = _split(ops, n_carry, n_xs, n_ckpt)
    rows = [step(a) for a in ckpts] + [step(a) for a in xs]
    want = [Aval((), INT), *carry, *rows, *consts]
    got = [v.aval for v in body.inputs]
    if got != want:
        raise TypeError(f"loop: the body {body.name} takes {[str(a) for a in got]}, but "
                        f"the operands give {[str(a) for a in want]}")
    outs = [a.aval for a in body.outputs]
    if outs[:n_carry] != list(carry):
        raise TypeError(f"loop: the body {body.name} returns the carry as "
                        f"{[str(a) for a in outs[:n_carry]]}, not {[str(a) for a in carry]}")
    if recompute is not None:
        r_in = [v.aval for v in recompute.inputs]
        if (r_in != [Aval((), INT), *rows[:n_ckpt], *rows[n_ckpt:], *consts]
                or [a.aval for a in recompute.outputs] != rows[:n_ckpt] or checkpoint < 2):
            raise TypeError(f"loop: recompute={recompute.name} does not fit the checkpoints")
    tapes = [stacked(tape_length(size, tape), a) for a in carry] if tape else []
    return tuple_aval([*carry, *(stacked(size, a) for a in outs[n_carry:]), *tapes])


def _record(tapes: list[np.ndarray], tape: int, slot: int, t: int, carry: list) -> None:
    """Store the carry before a step: at its slot (tape=1), or every tape-th step."""
    if tape == 1:
        for tp, c in zip(tapes, carry):
            tp[slot] = c
    elif tape > 1 and t % tape == 0:
        for tp, c in zip(tapes, carry):
            tp[t // tape] = c


def _loop_impl(lo: Any, hi: Any, *ops: Any, body: Graph, n_carry: int, n_xs: int,
               reverse: bool, tape: int, size: int, recompute: Graph | None,
               checkpoint: int) -> tuple:
    lo, hi = int(lo), int(hi)
    n = max(hi - lo, 0)
    n_ckpt = len(recompute.outputs) if recompute is not None else 0
    carry_in, xs, consts, ckpts = _split(ops, n_carry, n_xs, n_ckpt)
    carry = list(carry_in)
    outs_avals = [a.aval for a in body.outputs[n_carry:]]
    ys = [np.empty((n, *a.shape), a.dtype) for a in outs_avals]
    tapes = [np.empty((tape_length(n, tape), *np.shape(c)), body.inputs[1 + j].dtype)
             for j, c in enumerate(carry)] if tape else []

    step_body = runner(body)

    def run(i: int, rows: list) -> None:
        nonlocal carry
        s = i - lo
        outs = step_body(np.int64(i), *carry, *rows, *(x[s] for x in xs), *consts)
        carry = outs[:n_carry]
        for y, value in zip(ys, outs[n_carry:]):
            y[s] = value

    if recompute is None:
        order = range(hi - 1, lo - 1, -1) if reverse else range(lo, hi)
        for t, i in enumerate(order):
            _record(tapes, tape, i - lo, t, carry)
            run(i, [])
    else:  # the backward loop of a checkpointed loop: segments, last first
        k = checkpoint

        def index(t: int) -> int:  # of the forward's step t (it ran the other way)
            return lo + t if reverse else hi - 1 - t

        for seg in range(-(-n // k) - 1, -1, -1):
            t0, t1 = seg * k, min(seg * k + k, n)
            c: list = [ck[seg] for ck in ckpts]
            local = []
            for t in range(t0, t1):
                local.append(c)
                i = index(t)
                c = runner(recompute)(np.int64(i), *c, *(x[i - lo] for x in xs), *consts)
            for t in range(t1 - 1, t0 - 1, -1):
                run(index(t), local[t - t0])
    return tuple([*carry, *ys, *tapes])


def _loop_sympy(sp: Any, lo: Any, hi: Any, *ops: Any, body: Graph, n_carry: int,
                n_xs: int, reverse: bool, tape: int, size: int, recompute: Graph | None,
                checkpoint: int, evaluate: Callable) -> tuple:
    """The loop unrolled on SymPy expressions (a trip count known while tracing)."""
    try:
        lo, hi = int(lo), int(hi)
    except TypeError:
        raise NotImplementedError("SymPy unrolls loops whose trip count is known") from None
    if recompute is not None:
        raise NotImplementedError("SymPy does not evaluate checkpointed backward loops")
    n = max(hi - lo, 0)
    carry_in, xs, consts, _ = _split(ops, n_carry, n_xs, 0)
    carry = list(carry_in)
    ys = [np.empty((n, *a.aval.shape), dtype=object) for a in body.outputs[n_carry:]]
    tapes = [np.empty((tape_length(n, tape), *np.shape(c)), dtype=object)
             for c in carry] if tape else []
    xs = tuple(np.asarray(x, dtype=object) for x in xs)
    for t, i in enumerate(range(hi - 1, lo - 1, -1) if reverse else range(lo, hi)):
        _record(tapes, tape, i - lo, t, carry)
        outs = evaluate(body, [sp.Integer(i), *carry, *(x[i - lo] for x in xs), *consts])
        carry = list(outs[:n_carry])
        for y, value in zip(ys, outs[n_carry:]):
            y[i - lo] = value
    return tuple([*carry, *ys, *tapes])


def backward(body: Graph, n_carry: int, n_xs: int, g: dict, lo: Any, hi: Any,
             carry: tuple, xs: tuple, consts: tuple, tapes: list, reverse: bool, size: int,
             checkpoint: int, adjoint: Callable,
             active: tuple[bool, ...] | None = None) -> tuple[list, list, list]:
    """The backward ``loop`` of a forward loop of ``body`` (inputs ``(i, *carry, *x,
    *consts)``, outputs ``(*carry, *ys)``) whose tapes are ``tapes`` (every step, or every
    ``checkpoint``-th); ``g`` the cotangents of its results. Returns the cotangents of
    the carries, xs and consts (None where there is none). ``active``: the body's
    differentiated inputs (:func:`~.control.active_carries`; None: every float one)."""
    C, X = n_carry, n_xs
    ins = body.inputs
    n_y = len(body.outputs) - C
    flags = active_inputs(body, active)
    float_c = [j for j in range(C) if flags[1 + j]]
    float_x = [j for j in range(X) if flags[1 + C + j]]
    float_k = [j for j in range(len(consts)) if flags[1 + C + X + j]]
    seeded_y = [y for y in range(n_y) if C + y in g and is_float(body.outputs[C + y].aval)]
    adj = seeded_adjoint(body, [*float_c, *(C + y for y in seeded_y)],
                         [1 + j for j in float_c] + [1 + C + j for j in float_x]
                         + [1 + C + X + j for j in float_k], adjoint, f"grad_{body.name}")
    nc, nx, nk = len(float_c), len(float_x), len(float_k)
    ct_next, ct_y = adj.cts[:nc], adj.cts[nc:]
    grads = adj.graph.outputs
    ct_c, ct_x, ct_k = grads[:nc], grads[nc:nc + nx], grads[nc + nx:]
    accs = [Var(ins[1 + C + X + j].aval, f"ct_{ins[1 + C + X + j].hint or 'k'}")
            for j in float_k]
    sums = [add_eqn(acc, ct) for acc, ct in zip(accs, ct_k)]
    # (i, *ct of the carries, *sums of the consts' cotangents, *carries, *xs, *ct of ys,
    #  *consts) -> (*ct of the carries before the step, *sums, *ct of x)
    graph = Graph((ins[0], *ct_next, *accs, *ins[1:1 + C + X], *ct_y, *ins[1 + C + X:]),
                  (*adj.graph.eqns, *sums), (*ct_c, *(e.out for e in sums), *ct_x), (),
                  adj.graph.name)
    # a cotangent given in another float dtype (float64 for a float32 carry) is converted
    ct_final = [of_dtype(g[j], ins[1 + j].aval) if j in g else zeros(ins[1 + j].aval)
                for j in float_c]
    acc0 = [zeros(ins[1 + C + X + j].aval) for j in float_k]
    ct_ys = [of_dtype(g[C + y], body.outputs[C + y].aval) for y in seeded_y]
    common = dict(body=graph, n_carry=nc + nk, reverse=not reverse, tape=0, size=size)
    if checkpoint > 1:
        unused = [Var(v.aval) for v in ct_y]
        recompute = Graph((ins[0], *ins[1:1 + C + X], *unused, *ins[1 + C + X:]),
                          linearized_graph(body, flags).eqns, body.outputs[:C], (), body.name)
        t = apply(loop_p, atom(lo), atom(hi), *ct_final, *acc0, *xs, *ct_ys, *consts, *tapes,
                  n_xs=X + len(ct_ys), recompute=recompute, checkpoint=checkpoint, **common)
    else:
        t = apply(loop_p, atom(lo), atom(hi), *ct_final, *acc0, *tapes, *xs, *ct_ys, *consts,
                  n_xs=C + X + len(ct_ys), recompute=None, checkpoint=0, **common)
    cts_c: list[Any] = [None] * C
    cts_x: list[Any] = [None] * X
    cts_k: list[Any] = [None] * len(consts)
    for n, j in enumerate(float_c):
        cts_c[j] = proj(t, n)
    for n, j in enumerate(float_k):
        cts_k[j] = proj(t, nc + n)
    for n, j in enumerate(float_x):
        cts_x[j] = proj(t, nc + nk + n)
    return cts_c, cts_x, cts_k


def _loop_vjp(g: dict, ans: Any, lo: Any, hi: Any, *ops: Any, body: Graph, n_carry: int,
              n_xs: int, reverse: bool, tape: int, size: int, recompute: Graph | None,
              checkpoint: int, adjoint: Callable, active: tuple | None = None) -> tuple:
    if recompute is not None or tape > 1:
        raise NotImplementedError(_SECOND_ORDER.format(
            what="a loop with checkpoint=", fix="without checkpoint= (every carry taped)"))
    ops = tuple(map(atom, ops))
    if tape == 1:  # a taping loop differentiated again: its tapes are more ys
        body = Graph(body.inputs, body.eqns, (*body.outputs, *body.inputs[1:1 + n_carry]),
                     (), body.name)
    carry, xs, consts, _ = _split(ops, n_carry, n_xs, 0)
    flags = _body_flags(body, n_carry, active)
    k = checkpoint if checkpoint > 1 else 1
    # the forward as differentiated: custom rules' primals (the forward loop's equation
    # becomes the same loop once this ran: its linearized facet, then merge_taped)
    fwd = apply(loop_p, atom(lo), atom(hi), *ops, body=linearized_graph(body, flags),
                n_carry=n_carry,
                n_xs=n_xs, reverse=reverse, tape=k, size=size, recompute=None,
                checkpoint=checkpoint)
    first_tape = len(body.outputs)
    tapes = [proj(fwd, first_tape + j) for j in range(n_carry)]
    cts_c, cts_x, cts_k = backward(body, n_carry, n_xs, g, lo, hi, carry, xs, consts, tapes,
                                   reverse, size, checkpoint, adjoint, flags)
    return (None, None, *cts_c, *cts_x, *cts_k)


def _body_flags(body: Graph, n_carry: int, active: tuple | None) -> tuple[bool, ...] | None:
    """The differentiated inputs ``(i, *carry, *xs, *consts)`` of a loop's body, given the
    adjoint's flags of the loop's operands ``(lo, hi, *carry, *xs, *consts)``."""
    if active is None:
        return None
    return active_carries(body, 1, n_carry, (False, *active[2:]))


def _loop_linearized(eqn: Eqn, active: tuple | None = None) -> Eqn:
    """A forward loop as differentiated (its body's custom rules' primals); a backward
    loop of checkpoints (``recompute``) comes from an adjoint, linearized already."""
    if eqn.params["recompute"] is not None:
        return eqn
    return with_linearized(eqn, {"body": _body_flags(eqn.params["body"],
                                                     eqn.params["n_carry"], active)})


loop_p = register(
    name="loop", complex=True, kind="control", shape_rule=_loop_rule, impl=_loop_impl,
    vjp=_loop_vjp, sympy=_loop_sympy, subgraphs=("body", "recompute"),
    linearized=_loop_linearized,
    batch=lambda b, args, flags, **params: batch_loop(loop_p, b, args, flags, **params))


# ---------------------------------------------------------------------------
# while


def _while_rule(*ops: Aval, cond: Graph, body: Graph, n_carry: int, n_cconst: int,
                tape: int, checkpoint: int) -> Aval:
    carry = list(ops[:n_carry])
    c_in = [v.aval for v in cond.inputs]
    if c_in != carry + list(ops[n_carry:n_carry + n_cconst]):
        raise TypeError(f"while: cond {cond.name} takes {[str(a) for a in c_in]}")
    if [a.aval for a in cond.outputs] != [Aval((), BOOL)]:
        raise TypeError(f"while: cond {cond.name} must return one bool scalar")
    b_in = [v.aval for v in body.inputs]
    if b_in != carry + list(ops[n_carry + n_cconst:]):
        raise TypeError(f"while: body {body.name} takes {[str(a) for a in b_in]}")
    if [a.aval for a in body.outputs] != carry:
        raise TypeError(f"while: body {body.name} returns "
                        f"{[str(a.aval) for a in body.outputs]}, not the carry "
                        f"{[str(a) for a in carry]}")
    tapes = [Aval((), INT), *(stacked(DYN, a) for a in carry)] if tape else []
    return tuple_aval([*carry, *tapes])


def _while_impl(*ops: Any, cond: Graph, body: Graph, n_carry: int, n_cconst: int,
                tape: int, checkpoint: int) -> tuple:
    carry = list(ops[:n_carry])
    cc, bc = ops[n_carry:n_carry + n_cconst], ops[n_carry + n_cconst:]
    count, stored = 0, [[] for _ in carry]
    test, step_body = runner(cond), runner(body)
    while bool(test(*carry, *cc)[0]):
        if tape and count % tape == 0:
            for s, c in zip(stored, carry):
                s.append(np.copy(c))
        carry = step_body(*carry, *bc)
        count += 1
    if not tape:
        return tuple(carry)
    tapes = [np.array(s, dtype=v.dtype) if s else np.empty((0, *v.shape), v.dtype)
             for s, v in zip(stored, body.inputs)]
    return tuple([*carry, np.int64(count), *tapes])


def _while_sympy(sp: Any, *ops: Any, cond: Graph, body: Graph, n_carry: int, n_cconst: int,
                 tape: int, checkpoint: int, evaluate: Callable) -> tuple:
    carry = list(ops[:n_carry])
    cc, bc = list(ops[n_carry:n_carry + n_cconst]), list(ops[n_carry + n_cconst:])
    for _ in range(10_000):
        holds = evaluate(cond, [*carry, *cc])[0]
        if holds not in (sp.true, sp.false, True, False):
            raise NotImplementedError("SymPy evaluates while loops whose condition is known")
        if not holds:
            break
        carry = list(evaluate(body, [*carry, *bc]))
    else:
        raise NotImplementedError("SymPy unrolls while loops of at most 10000 steps")
    if tape:
        raise NotImplementedError("SymPy does not evaluate taping while loops")
    return tuple(carry)


def _while_vjp(g: dict, ans: Any, *ops: Any, cond: Graph, body: Graph, n_carry: int,
               n_cconst: int, tape: int, checkpoint: int, adjoint: Callable,
               active: tuple | None = None) -> tuple:
    if tape > 1:
        raise NotImplementedError(_SECOND_ORDER.format(
            what="a while_loop with checkpoint=", fix="without checkpoint= (every carry "
            "taped), or as sg.fori_loop with a trip count if there is one"))
    ops = tuple(map(atom, ops))
    k = checkpoint if checkpoint > 1 else 1
    flags = _while_flags(body, n_carry, n_cconst, active)
    fwd = apply(while_p, *ops, cond=cond, body=linearized_graph(body, flags), n_carry=n_carry,
                n_cconst=n_cconst, tape=k, checkpoint=checkpoint)
    count = proj(fwd, n_carry)
    tapes = [proj(fwd, n_carry + 1 + j) for j in range(n_carry)]
    index = Var(Aval((), INT), "i")
    outs = body.outputs
    if tape:  # a taping while differentiated again: its tapes are ys (the carry before
        # each step), read back by the backward loop over 0 .. count like the carries
        outs = (*outs, *body.inputs[:n_carry])
        g = {**{j: c for j, c in g.items() if j < n_carry},
             **{n_carry + j: g[n_carry + 1 + j] for j in range(n_carry) if n_carry + 1 + j in g}}
    stepper = Graph((index, *body.inputs), body.eqns, outs, (), body.name)
    carry, consts = ops[:n_carry], ops[n_carry + n_cconst:]
    cts_c, _, cts_k = backward(stepper, n_carry, 0, g, Literal(0), count, carry, (), consts,
                               tapes, False, DYN, checkpoint, adjoint,
                               None if flags is None else (False, *flags))
    return (*cts_c, *([None] * n_cconst), *cts_k)


def _while_flags(body: Graph, n_carry: int, n_cconst: int,
                 active: tuple | None) -> tuple[bool, ...] | None:
    """The differentiated inputs ``(*carry, *consts)`` of a while loop's body, given the
    adjoint's flags of its operands ``(*carry, *cond's consts, *body's consts)``."""
    if active is None:
        return None
    return active_carries(body, 0, n_carry, (*active[:n_carry], *active[n_carry + n_cconst:]))


while_p = register(
    name="while", complex=True, kind="control", shape_rule=_while_rule, impl=_while_impl,
    vjp=_while_vjp, sympy=_while_sympy, subgraphs=("cond", "body"),
    # cond_fun sees primals only, as JAX's
    linearized=lambda eqn, active=None: with_linearized(eqn, {"body": _while_flags(
        eqn.params["body"], eqn.params["n_carry"], eqn.params["n_cconst"], active)}),
    batch=lambda b, args, flags, **params: batch_while(while_p, b, args, flags, **params))
