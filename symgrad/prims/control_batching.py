"""Batching (``vmap``) of control flow: the ``batch`` facets of ``cond``, ``loop``, ``while``.

Each facet batches the graphs its equation holds with ``b.graph`` (the batching
transform, handed down by :class:`symgrad.passes.batching.Batcher`, as the
adjoint transform is handed to VJP rules) and returns the equation's tuple
*unpacked*: a Python tuple of atoms, each with the batch axis leading or
without it, and a tuple of flags; ``proj``'s facet picks one part.

- Carries: a carry that the body makes batched from an unbatched start is
  batched from the start (its initial value broadcast). The carries' flags are
  iterated to a fixed point over the body (and over a checkpointed backward
  loop's ``recompute``), as JAX does for ``scan`` and ``while`` carries; the
  batched body's results are then broadcast where a carry's flag asks for it.
- ``loop``: batched ``xs`` (and checkpoints) are read one row per step, so they
  enter with the batch axis second; ``ys`` and tapes come out stacked with it
  second and are transposed back. A trip count per example (batched bounds)
  is refused, naming the rewrite: a ``while`` counting in its carry (``sg.vmap``
  says so earlier, where a batched argument is a ``fori_loop`` bound).
- ``while`` with an unbatched predicate: a ``while`` of the batched graphs. With
  a batched one, JAX's rule: the loop runs while any example continues, and an
  example whose predicate no longer holds keeps its carry (``where``); every
  carry is then batched. A *taping* ``while`` (the forward sweep of a
  gradient) with a batched predicate is refused: its backward loop would need
  a trip count per example. ``grad`` of the ``vmap`` works (the select is then
  part of the differentiated body).
- ``cond`` with an unbatched predicate: a ``cond`` of the batched branches; with
  a batched one (JAX's rule): both branches computed for the whole batch, then
  ``where``. (As with ``sg.where``, a branch that is NaN where it is not taken
  gives a NaN gradient there.)

    >>> import numpy as np, symgrad as sg
    >>> f = lambda x: sg.fori_loop(0, 3, lambda i, v: v * v, x)
    >>> sg.vmap(f)(np.array([1.0, 2.0]))
    array([  1., 256.])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.ir import BOOL, Aval, Eqn, Graph, Literal, Primitive, Var, freeze_params
from ..core.tracing import Trace
from .elementwise import gt_p, where_p
from .reductions import broadcast_to_p, reshape_p, sum_p


def _forced(b: Any, graph: Graph, flags: Sequence[bool],
            want: Sequence[bool | None]) -> tuple[Graph, list[bool]]:
    """``graph`` batched for inputs ``flags``, with its outputs batched where ``want``
    says True (an unbatched result broadcast); ``None`` leaves an output as it comes."""
    g, got = b.graph(graph, list(flags))
    if g.consts:  # no batching rule makes array constants today
        raise b.refuse(f"vmap: batching {graph.name} made array constants")
    eqns, outs = list(g.eqns), list(g.outputs)
    for k, w in enumerate(want):
        if w and not got[k]:
            a = outs[k]
            v = Var(Aval((b.size, *a.aval.shape), a.aval.dtype))
            eqns.append(Eqn(broadcast_to_p, (a,), v, freeze_params({"shape": v.shape})))
            outs[k], got[k] = v, True
        elif w is False and got[k]:
            raise AssertionError(f"vmap: {graph.name} output {k} batched against its flag")
    return Graph(g.inputs, tuple(eqns), tuple(outs), (), g.name), got


def _merge(flags: Sequence[bool], more: Sequence[bool]) -> list[bool]:
    return [bool(a or m) for a, m in zip(flags, more, strict=True)]


def _swap(b: Any, a: Any) -> Any:
    """The first two axes exchanged: batch axis leading <-> rows leading."""
    return b.transpose(a, (1, 0, *range(2, len(b.shape(a)))))


def _batched(b: Any, a: Any, have: bool, want: bool) -> Any:
    return b.with_batch(a) if want and not have else a


def _unpack(b: Any, t: Any, flags: Sequence[bool], swapped: Sequence[bool]) -> tuple:
    """The parts of the tuple ``t``, those in ``swapped`` with their first two axes
    exchanged (a batch axis that came out second), with their flags."""
    parts = b.parts(t, len(flags))
    parts = [_swap(b, p) if s else p for p, s in zip(parts, swapped)]
    return tuple(parts), tuple(bool(f) for f in flags)


# ---------------------------------------------------------------------------
# loop


def batch_loop(loop_p: Primitive, b: Any, args: list, flags: list, *, body: Graph,
               n_carry: int, n_xs: int, reverse: bool, tape: int, size: int,
               recompute: Graph | None, checkpoint: int) -> tuple:
    lo, hi, *ops = args
    if flags[0] or flags[1]:
        raise b.refuse("vmap: a loop whose bounds differ from example to example (a batched "
                       "trip count) is not batched, since the batch runs one loop; count in "
                       "the carry of an sg.while_loop instead (its condition may differ per "
                       "example: each example stops at its own count), or run every example "
                       "to the largest count with sg.where(i < n, ...) in the body, or loop "
                       "over the examples in Python")
    f_ops = flags[2:]
    n_ckpt = len(recompute.outputs) if recompute is not None else 0
    C, X = n_carry, n_xs
    K = len(ops) - C - X - n_ckpt
    fc, fx = list(f_ops[:C]), list(f_ops[C:C + X])
    fk, fr = list(f_ops[C + X:C + X + K]), list(f_ops[C + X + K:])
    while True:  # the carries' (and checkpoints') flags, to a fixed point
        _, out = b.graph(body, [False, *fc, *fr, *fx, *fk])
        new_c, new_r = _merge(fc, out[:C]), fr
        if recompute is not None:
            _, r_out = b.graph(recompute, [False, *fr, *fx, *fk])
            new_r = _merge(fr, r_out)
        if new_c == fc and new_r == fr:
            break
        fc, fr = new_c, new_r
    n_y = len(body.outputs) - C
    body_b, out = _forced(b, body, [False, *fc, *fr, *fx, *fk], [*fc, *(None,) * n_y])
    recompute_b = None
    if recompute is not None:
        recompute_b, _ = _forced(b, recompute, [False, *fr, *fx, *fk], fr)
    carry = [_batched(b, a, have, want) for a, have, want in zip(ops[:C], f_ops[:C], fc)]
    xs = [_swap(b, a) if f else a for a, f in zip(ops[C:C + X], fx)]
    ckpts = [_batched(b, a, have, want) for a, have, want
             in zip(ops[C + X + K:], f_ops[C + X + K:], fr)]
    ckpts = [_swap(b, a) if f else a for a, f in zip(ckpts, fr)]
    t = b.bind(loop_p, [lo, hi, *carry, *xs, *ops[C + X:C + X + K], *ckpts], body=body_b,
               n_carry=C, n_xs=X, reverse=reverse, tape=tape, size=size,
               recompute=recompute_b, checkpoint=checkpoint)
    ys = out[C:]
    tapes = fc if tape and recompute is None else []
    return _unpack(b, t, [*fc, *ys, *tapes], [*(False,) * C, *ys, *tapes])


# ---------------------------------------------------------------------------
# while


def batch_while(while_p: Primitive, b: Any, args: list, flags: list, *, cond: Graph,
                body: Graph, n_carry: int, n_cconst: int, tape: int, checkpoint: int) -> tuple:
    C = n_carry
    carry, cc, bc = args[:C], args[C:C + n_cconst], args[C + n_cconst:]
    f_carry = list(flags[:C])
    fcc, fbc = list(flags[C:C + n_cconst]), list(flags[C + n_cconst:])
    fc = f_carry
    while True:
        _, (pred,) = b.graph(cond, [*fc, *fcc])
        if pred:
            return _batch_while_any(while_p, b, carry, cc, bc, f_carry, fcc, fbc, cond=cond,
                                    body=body, tape=tape, checkpoint=checkpoint)
        _, out = b.graph(body, [*fc, *fbc])
        new = _merge(fc, out)
        if new == fc:
            break
        fc = new
    cond_b, _ = _forced(b, cond, [*fc, *fcc], [False])
    body_b, _ = _forced(b, body, [*fc, *fbc], fc)
    carry = [_batched(b, a, have, want) for a, have, want in zip(carry, f_carry, fc)]
    t = b.bind(while_p, [*carry, *cc, *bc], cond=cond_b, body=body_b, n_carry=C,
               n_cconst=n_cconst, tape=tape, checkpoint=checkpoint)
    tapes = [False, *fc] if tape else []  # the step count, then a tape per carry
    return _unpack(b, t, [*fc, *tapes], [*(False,) * C, *tapes])


def _inline(trace: Trace, graph: Graph, args: Sequence[Any]) -> list:
    """``graph``'s equations recorded again in ``trace`` on ``args``; its outputs."""
    env = {id(v): a for v, a in zip(graph.inputs, args, strict=True)}

    def read(a: Any) -> Any:
        return env[id(a)] if isinstance(a, Var) else a
    for e in graph.eqns:
        env[id(e.out)] = trace.bind(e.prim, [read(a) for a in e.inputs], dict(e.params))
    return [read(a) for a in graph.outputs]


def _select(trace: Trace, pred: Any, new: Any, old: Any) -> Any:
    """``where(pred, new, old)`` with ``pred`` of shape (batch,) against batched values."""
    rank = len(new.aval.shape)
    if rank > 1:
        pred = trace.bind(reshape_p, [pred], {"shape": (pred.aval.shape[0], *(1,) * (rank - 1))})
    return trace.bind(where_p, [pred, new, old], {})


def _batch_while_any(while_p: Primitive, b: Any, carry: list, cc: list, bc: list,
                     f_carry: list, fcc: list, fbc: list, *, cond: Graph, body: Graph,
                     tape: int, checkpoint: int) -> tuple:
    """JAX's rule for a batched predicate: run while any example continues; an example
    that stopped keeps its carry. Every carry is batched."""
    if tape:
        raise b.refuse("vmap of the gradient of a while_loop whose condition depends on the "
                       "batched argument is not supported (each example would need its own "
                       "trip count in the backward loop); take sg.grad of the vmap, or use "
                       "sg.fori_loop with a fixed trip count")
    if any(v.aval.dtype == BOOL for v in body.inputs[:len(carry)]):
        raise b.refuse("vmap of a while_loop with a batched condition and a bool carry is "
                       "not supported; carry it as an integer 0/1 instead")
    fc = [True] * len(carry)
    cond_b, _ = _forced(b, cond, [*fc, *fcc], [True])
    body_b, _ = _forced(b, body, [*fc, *fbc], fc)

    def fresh(graph: Graph) -> list[Var]:
        return [Var(v.aval, v.hint) for v in graph.inputs]
    # cond: any example continues
    trace = Trace()
    ins = fresh(cond_b)
    (p,) = _inline(trace, cond_b, ins)
    ones = trace.bind(where_p, [p, Literal(1.0), Literal(0.0)], {})
    going = trace.bind(gt_p, [trace.bind(sum_p, [ones], {"axes": (0,)}), Literal(0.0)], {})
    any_cond = Graph(tuple(ins), tuple(trace.eqns), (going,), (), f"any_{cond.name}")
    # body: a step where the example's condition holds, its carry kept where not
    trace = Trace()
    c_ins = fresh(body_b)[:len(carry)]
    cc_ins = fresh(cond_b)[len(carry):]
    bc_ins = fresh(body_b)[len(carry):]
    (p,) = _inline(trace, cond_b, [*c_ins, *cc_ins])
    new = _inline(trace, body_b, [*c_ins, *bc_ins])
    outs = [_select(trace, p, n, c) for n, c in zip(new, c_ins)]
    step = Graph((*c_ins, *cc_ins, *bc_ins), tuple(trace.eqns), tuple(outs), (),
                 f"masked_{body.name}")
    carry = [_batched(b, a, have, True) for a, have in zip(carry, f_carry)]
    t = b.bind(while_p, [*carry, *cc, *cc, *bc], cond=any_cond, body=step,
               n_carry=len(carry), n_cconst=len(cc), tape=0, checkpoint=checkpoint)
    return _unpack(b, t, fc, [False] * len(carry))


# ---------------------------------------------------------------------------
# cond


def batch_cond(cond_p: Primitive, b: Any, args: list, flags: list, *, true: Graph,
               false: Graph) -> tuple:
    pred, *ops = args
    f_pred, *f_ops = flags
    _, out_t = b.graph(true, f_ops)
    _, out_f = b.graph(false, f_ops)
    if not f_pred:  # one branch runs for the whole batch
        want = _merge(out_t, out_f)
        true_b, _ = _forced(b, true, f_ops, want)
        false_b, _ = _forced(b, false, f_ops, want)
        t = b.bind(cond_p, [pred, *ops], true=true_b, false=false_b)
        return _unpack(b, t, want, [False] * len(want))
    if any(a.aval.dtype == BOOL for a in true.outputs):
        raise b.refuse("vmap of sg.cond with a batched predicate and a bool result is not "
                       "supported; return it as a float or an integer")
    want = [True] * len(true.outputs)
    results = []
    true_b, _ = _forced(b, true, f_ops, want)
    false_b, _ = _forced(b, false, f_ops, want)
    on_true = _inline(b.trace, true_b, ops)
    on_false = _inline(b.trace, false_b, ops)
    for x, y in zip(on_true, on_false):
        results.append(_select(b.trace, pred, x, y))
    return tuple(results), tuple(want)


__all__ = ["batch_cond", "batch_loop", "batch_while"]
