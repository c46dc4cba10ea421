"""Numba lowering of :mod:`symgrad.prims.loops`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ....core.ir import DYN, Aval, Graph, Var
from ....prims import loops as P
from ....prims.loops import _split
from .table import lower


def _loop_emit(out: str, args: list[str], avals: list[Aval], out_aval: Aval, *,
               body: Graph, n_carry: int, n_xs: int, reverse: bool, tape: int, size: Any,
               recompute: Graph | None, checkpoint: int, scope: Any) -> list[str]:
    lo, hi, *ops = args
    n_ckpt = len(recompute.outputs) if recompute is not None else 0
    carry, xs, consts, ckpts = _split(tuple(ops), n_carry, n_xs, n_ckpt)
    carry_avals = avals[2:2 + n_carry]
    lines = [f"# loop: {body.name}, i from {lo} to {hi}"
             + (" (reversed)" if reverse else "")]
    if size != DYN:  # a size the arguments' shapes name, or a number
        steps = str(size)
        top = steps if lo == "0" else f"{lo} + {steps}"
    elif tape or recompute is not None or len(body.outputs) > n_carry:  # sizes arrays
        steps = scope.fresh("steps")
        top = hi
        lines.append(f"{steps} = max({hi if lo == '0' else f'{hi} - {lo}'}, 0)")
    else:
        steps, top = "", hi
    r = scope.render(body, _reusable(body, n_carry, 1))
    i_name = r.inputs[0]
    c_names = r.inputs[1:1 + n_carry]
    rows = r.inputs[1 + n_carry:1 + n_carry + n_ckpt]
    x_names = r.inputs[1 + n_carry + n_ckpt:1 + n_carry + n_ckpt + n_xs]
    k_names = r.inputs[1 + n_carry + n_ckpt + n_xs:]
    k0 = 1 + n_carry + n_ckpt + n_xs
    lines += [f"{c} = {scope.init(a, av)}" for c, a, av in zip(c_names, carry, carry_avals)]
    lines += [f"{b} = np.empty_like({c_names[j]})" for j, b in r.buffers.items()]
    lines += [f"{name} = {k}" for j, (name, k) in enumerate(zip(k_names, consts))
              if k0 + j in r.used and name != k]
    ys = [scope.fresh("ys") for _ in body.outputs[n_carry:]]
    lines += [f"{y} = {scope.empty(steps, a.aval)}" for y, a in zip(ys, body.outputs[n_carry:])]
    tapes = [scope.fresh("tape") for _ in carry] if tape else []
    length = steps if tape == 1 else f"({steps} + {tape - 1}) // {tape}"
    lines += [f"{tp} = {scope.empty(length, av)}" for tp, av in zip(tapes, carry_avals)]

    def slot(i: str) -> str:
        return i if lo == "0" else f"{i} - {lo}"

    def per_step(i: str) -> list[str]:
        s = slot(i)
        body_lines = []
        if tape == 1:
            body_lines += [f"{tp}[{s}] = {c}" for tp, c in zip(tapes, c_names)]
        elif tape > 1:
            t = s if not reverse else f"{top} - 1 - {i}"
            body_lines.append(f"if ({t}) % {tape} == 0:")
            body_lines += scope.indent([f"{tp}[({t}) // {tape}] = {c}"
                                        for tp, c in zip(tapes, c_names)])
        body_lines += [f"{name} = {x}[{s}]" for j, (name, x) in enumerate(zip(x_names, xs))
                       if 1 + n_carry + n_ckpt + j in r.used]
        body_lines += r.lines
        body_lines += [f"{y}[{s}] = {r.outputs[n_carry + j]}" for j, y in enumerate(ys)]
        return body_lines + scope.update(c_names, r, n_carry)

    if recompute is None:
        if reverse:
            lines.append(f"for {i_name} in range({_minus_one(top)}, {_minus_one(lo)}, -1):")
        else:
            lines.append(f"for {i_name} in range({top}):" if lo == "0"
                         else f"for {i_name} in range({lo}, {top}):")
        return lines + scope.indent(per_step(i_name)) + [
            f"{out} = {scope.tuple([*c_names, *ys, *tapes])}"]
    return lines + _segments(out, lo, top, steps, reverse, checkpoint, recompute, xs, consts,
                             ckpts, carry_avals, r, rows, n_carry, ys, per_step, scope)


def _reusable(body: Graph, n_carry: int, first: int) -> list[int]:
    """The carries (outputs ``< n_carry``) whose new array may be written into the array of
    the step before last: array carries whose input no output of the body is (else that
    output would alias the array the loop overwrites)."""
    outs = {id(a) for a in body.outputs if isinstance(a, Var)}
    return [j for j in range(n_carry) if body.inputs[first + j].shape
            and id(body.inputs[first + j]) not in outs]


def _minus_one(text: str) -> str:
    """``text - 1`` as kernel source, computed where ``text`` is a number."""
    return str(int(text) - 1) if text.lstrip("-").isdigit() else f"{text} - 1"


def _segments(out: str, lo: str, top: str, steps: str, reverse: bool, k: int,
              recompute: Graph, xs: tuple, consts: tuple, ckpts: tuple, carry_avals: list,
              r: Any, rows: list[str], n_carry: int, ys: list[str], per_step: Callable,
              scope: Any) -> list[str]:
    """The backward loop of a checkpointed loop: for each segment of ``k`` steps, last
    first, the forward again from its checkpoint into a buffer, then back over it."""
    rr = scope.render(recompute)
    n_ckpt = len(ckpts)
    f_i, f_c = rr.inputs[0], rr.inputs[1:1 + n_ckpt]
    f_x, f_k = rr.inputs[1 + n_ckpt:1 + n_ckpt + len(xs)], rr.inputs[1 + n_ckpt + len(xs):]
    seg, t, t0, t1 = (scope.fresh(h) for h in ("segment", "t", "t0", "t1"))
    segments = scope.fresh("segments")
    rows_avals = [v.aval for v in recompute.outputs]
    local = [scope.fresh("local") for _ in ckpts]
    lines = [f"{segments} = ({steps} + {k - 1}) // {k}"]
    lines += [f"{b} = {scope.empty(str(k), a)}" for b, a in zip(local, rows_avals)]
    k0 = 1 + n_ckpt + len(xs)
    lines += [f"{name} = {c}" for j, (name, c) in enumerate(zip(f_k, consts))
              if k0 + j in rr.used and name != c]

    def index(tt: str) -> str:  # the index of the forward's step tt (it ran the other way)
        return (tt if lo == "0" else f"{lo} + {tt}") if reverse else f"{top} - 1 - {tt}"

    def s(i: str) -> str:
        return i if lo == "0" else f"{i} - {lo}"

    forward = [f"{f_i} = {index(t)}"]
    forward += [f"{b}[{t} - {t0}] = {c}" for b, c in zip(local, f_c)]
    forward += [f"{name} = {x}[{s(f_i)}]" for j, (name, x) in enumerate(zip(f_x, xs))
                if 1 + n_ckpt + j in rr.used]
    forward += rr.lines + scope.update(f_c, rr, n_ckpt)
    back = [f"{r.inputs[0]} = {index(t)}"]
    back += [f"{row} = {b}[{t} - {t0}]" for row, b in zip(rows, local)]
    back += per_step(r.inputs[0])
    segment = [f"{t0} = {seg} * {k}", f"{t1} = min({t0} + {k}, {steps})"]
    segment += [f"{c} = {ck}[{seg}]" + (".copy()" if a.shape else "")
                for c, ck, a in zip(f_c, ckpts, rows_avals)]
    segment += [f"for {t} in range({t0}, {t1}):", *scope.indent(forward)]
    segment += [f"for {t} in range({t1} - 1, {t0} - 1, -1):", *scope.indent(back)]
    lines += [f"for {seg} in range({segments} - 1, -1, -1):", *scope.indent(segment)]
    c_names = r.inputs[1:1 + n_carry]
    return lines + [f"{out} = {scope.tuple([*c_names, *ys])}"]


def _while_emit(out: str, args: list[str], avals: list[Aval], out_aval: Aval, *,
                cond: Graph, body: Graph, n_carry: int, n_cconst: int, tape: int,
                checkpoint: int, scope: Any) -> list[str]:
    carry = args[:n_carry]
    cc, bc = args[n_carry:n_carry + n_cconst], args[n_carry + n_cconst:]
    rb, rc = scope.render(body, _reusable(body, n_carry, 0)), scope.render(cond)
    c_names = rb.inputs[:n_carry]
    lines = [f"# while {cond.name}: {body.name}"]
    lines += [f"{c} = {scope.init(a, av)}" for c, a, av in zip(c_names, carry, avals)]
    lines += [f"{b} = np.empty_like({c_names[j]})" for j, b in rb.buffers.items()]
    for r, ks in ((rb, bc), (rc, cc)):
        lines += [f"{name} = {k}" for j, (name, k) in enumerate(zip(r.inputs[n_carry:], ks))
                  if n_carry + j in r.used and name != k]
    count = cap = ""
    tapes: list[str] = []
    if tape:
        count, cap = scope.fresh("count"), scope.fresh("capacity")
        tapes = [scope.fresh("tape") for _ in carry]
        lines += [f"{count} = 0", f"{cap} = 16"]
        lines += [f"{tp} = {scope.empty(cap, av)}" for tp, av in zip(tapes, avals)]
    inner = [f"{name} = {c}" for j, (name, c) in enumerate(zip(rc.inputs, c_names))
             if j in rc.used and name != c]
    inner += rc.lines + [f"if not {rc.outputs[0]}:", *scope.indent(["break"])]
    if tape:
        slot = count if tape == 1 else f"{count} // {tape}"
        grow = [f"{tp} = np.concatenate(({tp}, np.empty_like({tp})))" for tp in tapes]
        store = [f"if {slot} == {cap}:", *scope.indent([*grow, f"{cap} *= 2"])]
        store += [f"{tp}[{slot}] = {c}" for tp, c in zip(tapes, c_names)]
        inner += store if tape == 1 else [f"if {count} % {tape} == 0:", *scope.indent(store)]
    inner += rb.lines + scope.update(c_names, rb, n_carry)
    if tape:
        inner.append(f"{count} += 1")
    lines += ["while True:", *scope.indent(inner)]
    kept = count if tape == 1 else f"({count} + {tape - 1}) // {tape}"
    results = [*c_names, *([count, *(f"{tp}[:{kept}]" for tp in tapes)] if tape else [])]
    return lines + [f"{out} = {scope.tuple(results)}"]


lower(P.loop_p, _loop_emit)
lower(P.while_p, _while_emit)
