"""Reverse-mode adjoint of a graph, as a graph.

:func:`adjoint` appends to a forward graph the equations of its reverse sweep:
for each equation, last to first, the primitive's VJP rule turns the
cotangent of the output into cotangents of the inputs. Cotangents of a value
used several times (fan-out) are summed; cotangents of broadcast operands are
summed back to the operand's shape (:func:`symgrad.prims.reductions.unbroadcast`).
VJP rules run on :class:`~symgrad.prims.operators.PrimTracer` values: they record
primitives, so the sweep's result is a graph.

``where`` never leaks NaN or inf from the branch it did not select. Its VJP
gives that branch an exact 0 cotangent, but a VJP rule further up multiplies
that 0 by its local derivative, and 0 * inf or 0 * nan is nan
(``where(x > 0, sqrt(x), 0)`` at ``x = -1``: jax #347, pytorch #23395). So the
sweep keeps, beside each cotangent that a ``where`` zeroed somewhere, a *mask*:
a float array that is > 0 wherever the cotangent may be nonzero and exactly 0
where it is a selected-away 0. Every VJP contribution computed from a masked
cotangent by a nonlinear rule is replaced by ``where(mask > 0, contribution, 0)``,
and the mask travels on to the inputs (see :class:`_Masks`). Cotangents no
``where`` touched carry no mask and their code is unchanged.

For outputs that are not scalars the graph gets a cotangent input ``ct`` of the
output's shape, so that what it returns is the gradient of ``sum(y * ct)``:
exactly PyTorch's ``y.backward(gradient)`` and SymPy's gradient of that sum.

Control flow (:mod:`symgrad.prims.loops`, :mod:`symgrad.prims.control`): the
cotangent of a tuple (the results of a loop) is a dict from part index to the
cotangent of that part, filled by the ``proj`` equations that read it; the
VJP rule of a primitive holding graphs gets this transform as ``adjoint=``, to
derive the adjoints of its bodies, and ``active=``, which of its operands are
differentiated (a body's custom rules follow JAX's linearized primal for those). An
equation whose primitive has a ``linearized`` facet stands in the forward part as
that facet makes it, once its VJP ran (a ``custom_vjp`` call becomes a plain call of
the user's ``fwd``; a loop whose body holds a ``custom_jvp`` call runs its rule's
primal there).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.errors import SCALAR_OUTPUT_ERROR, Refused
from ..core.ir import DTYPES, INEXACT, TUPLE, Aval, Eqn, Graph, IRError, Literal, Primitive, Var
from ..core.tracing import Trace, recording, shape_of
from ..prims.convert import convert
from ..prims.elementwise import add, greater, where, where_p
from ..prims.operators import PrimTracer
from ..prims.reductions import broadcast_to, expand, unbroadcast
from ..prims.registry import broadcast_shapes


def active_vars(graph: Graph, wrt: Sequence[int]) -> set[int]:
    """ids of the float values that depend on the inputs ``wrt``. A value of a dtype
    the IR does not have (``float16``) is an IRError: taken for an integer it would get
    no cotangent, and the gradients through it would be zeros."""
    active = {id(graph.inputs[i]) for i in wrt}
    for e in graph.eqns:
        if e.out.dtype not in DTYPES:
            raise IRError(f"{e.prim.name} gives a value of dtype {e.out.dtype!r}, which the "
                          f"IR does not have (its dtypes: {', '.join(DTYPES)})")
        if (e.out.dtype in INEXACT or e.out.dtype == TUPLE) and any(
                id(a) in active for a in e.inputs if isinstance(a, Var)):
            active.add(id(e.out))
    return active


def adjoint(graph: Graph, wrt: Sequence[int], seed_inputs: bool) -> Graph:
    """The forward+adjoint graph of ``graph`` with respect to ``graph.inputs[wrt]``.

    Inputs: ``graph``'s inputs, then (if ``seed_inputs``) one cotangent per output.
    Outputs: ``graph``'s outputs, then the cotangent of each input in ``wrt``.
    Without ``seed_inputs`` the graph must have one scalar output, seeded with 1.
    """
    if not seed_inputs and (len(graph.outputs) != 1 or graph.outputs[0].shape != ()):
        raise ValueError(SCALAR_OUTPUT_ERROR)
    trace = Trace(graph.eqns, graph.consts, tracer=PrimTracer)
    seeds: list[Any]
    if seed_inputs:
        ct_vars = [Var(o.aval, "ct") for o in graph.outputs]
        seeds = [PrimTracer(v, trace) for v in ct_vars]
    else:
        ct_vars, seeds = [], [np.float64(1.0)]

    active = active_vars(graph, wrt)
    cts: dict[int, Any] = {}
    masks: dict[int, Any] = {}  # id(var) -> its cotangent's mask, None if it has none

    def accumulate(v: Var, ct: Any, mask: Any = None) -> None:
        if v.dtype == TUPLE:  # a dict: part index -> cotangent of that part
            old = cts.setdefault(id(v), {})
            for k, c in ct.items():
                old[k] = add(old[k], c) if k in old else c
            masks[id(v)] = None
            return
        ct = convert(unbroadcast(ct, v.shape), v.dtype)  # a cotangent has v's dtype
        if mask is not None:
            mask = _fit(mask, v.shape)
        if id(v) not in cts:
            cts[id(v)], masks[id(v)] = ct, mask
            return
        cts[id(v)] = add(cts[id(v)], ct)
        old = masks[id(v)]
        # a sum is zero where both terms are; an unmasked term may be nonzero anywhere
        masks[id(v)] = (None if old is None or mask is None else
                        old if old is mask else add(old, mask))

    def primal(a: Any) -> Any:
        # literals as numpy scalars: VJP rules computing on them (1/0 where the seed
        # meets a literal) follow IEEE arithmetic as the kernels do, never raise
        return PrimTracer(a, trace) if isinstance(a, Var) else np.asarray(a.value)[()]

    ran: dict[int, tuple] = {}  # id -> its operands' activity, of the eqns whose VJP ran
    with recording(trace), np.errstate(all="ignore"):
        for out, seed in zip(graph.outputs, seeds):
            if isinstance(out, Var) and id(out) in active:
                accumulate(out, seed)
        for eqn in reversed(graph.eqns):
            g = cts.pop(id(eqn.out), None)
            if g is None:
                continue
            mask = masks.pop(id(eqn.out))
            trace.origin = eqn
            ans, primals = PrimTracer(eqn.out, trace), list(map(primal, eqn.inputs))
            first = len(trace.eqns)
            flags = tuple(isinstance(a, Var) and id(a) in active for a in eqn.inputs)
            ran[id(eqn)] = flags
            if eqn.prim.subgraphs:  # control flow: its bodies' adjoints come from here
                # (and which operands are differentiated: a body's custom rules follow)
                in_cts = eqn.prim.vjp(g, ans, *primals, **eqn.params, adjoint=adjoint,
                                      active=flags)
            else:
                in_cts = eqn.prim.vjp(g, ans, *primals, **eqn.params)
            in_masks = _input_masks(eqn, mask, ans, primals)
            for a, ct, m in zip(eqn.inputs, in_cts, in_masks, strict=True):
                if ct is not None and isinstance(a, Var) and id(a) in active:
                    if isinstance(ct, Refused):  # a rule that cannot give this one
                        raise _fresh(ct.error)
                    if m is not None and not eqn.prim.linear and \
                            not _selects(ct, g, trace.eqns[first:]):
                        ct = where(greater(m, 0.0), ct, 0.0)
                    accumulate(a, ct, m)
            trace.origin = None
        # an input the outputs do not depend on gets zeros
        grads = [cts.get(id(graph.inputs[i])) for i in wrt]
        grads = [convert(broadcast_to(0.0, graph.inputs[i].shape), graph.inputs[i].dtype)
                 if g is None else g for g, i in zip(grads, wrt)]
        for k, e in enumerate(graph.eqns):  # the forward part, as differentiated
            if e.prim.linearized is not None and id(e) in ran:
                trace.eqns[k] = e.prim.linearized(e, ran[id(e)])
        return trace.to_graph([*graph.inputs, *ct_vars], [*graph.outputs, *grads], graph.name)


def _fresh(error: Exception) -> Exception:
    """A copy of a refusal's error to raise: the error a rule holds (one object, shared by
    every graph of a structure) then gathers no traceback, nor the frames it holds."""
    try:
        return copy.copy(error)
    except Exception:  # noqa: BLE001 -- an exception class that does not copy: itself
        return error


def _selects(ct: Any, g: Any, made: list[Eqn]) -> bool:
    """Whether ``ct`` is ``where(c, g, 0.0)`` (or ``where(c, 0.0, g)``) of the cotangent
    ``g`` itself, made by the VJP rule that just ran (the equations ``made``; relu's rule):
    it is already 0 wherever ``g`` is a selected-away 0, so a mask's ``where`` would only
    copy it (LeNet's backward computed a col2im of the mask for it)."""
    if not (isinstance(ct, PrimTracer) and isinstance(g, PrimTracer)):
        return False
    for e in reversed(made):
        if e.out is ct._var:
            if e.prim is not where_p:
                return False
            _, x, y = e.inputs
            zero = Literal(0.0)
            return (x is g._var and y == zero) or (x == zero and y is g._var)
    return False


def _fit(mask: Any, shape: tuple[int, ...]) -> Any:
    """``mask`` for a value of ``shape``: > 0 wherever any element summed into it is."""
    mask_shape = tuple(shape_of(mask))
    full = broadcast_shapes("where", Aval(mask_shape), Aval(shape))
    if full == tuple(shape) or mask_shape == tuple(shape):
        return mask  # broadcasts up to the value's shape by itself
    return unbroadcast(broadcast_to(mask, full), shape)


def _input_masks(eqn: Eqn, mask: Any, ans: Any, primals: list[Any]) -> list[Any]:
    """The masks of the cotangents ``eqn``'s VJP gives its inputs (None: unmasked).

    ``where(c, x, y)`` starts masks: ``x``'s cotangent is zero where ``c`` is false,
    ``y``'s where it is true. An elementwise VJP computes the contribution at each
    position from the cotangent at that position, a reduction's from its group's,
    so their inputs inherit the mask (expanded over the reduced axes); a linear
    primitive of another kind moves it as it moves cotangents. Any other
    primitive ends a mask's journey: its inputs' cotangents go on unmasked, as
    without a where.
    """
    prim: Primitive = eqn.prim
    n = len(eqn.inputs)
    if prim is where_p:
        live = 1.0 if mask is None else mask
        return [None, where(primals[0], live, 0.0), where(primals[0], 0.0, live)]
    if mask is None:
        return [None] * n
    if prim.kind == "elementwise":
        return [mask] * n
    full = broadcast_to(mask, eqn.out.shape)
    if prim.kind == "reduction":
        return [expand(full, eqn.inputs[0].shape, eqn.params["axes"])] + [None] * (n - 1)
    if prim.linear:
        return list(prim.vjp(full, ans, *primals, **eqn.params))
    return [None] * n
