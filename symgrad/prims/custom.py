"""Derivative rules given by the user: ``call`` (a function with its own rule) and
``callback`` (a Python function the tracer never sees).

``t = call(*args, *fun_extra, *rule_extra; fun, name, rule, ...)`` computes the
graph ``fun`` on ``args`` (and on the values ``fun`` read from outside, which
tracing made extra operands) and holds the tuple of its outputs, as ``cond``
and ``loop`` do (:mod:`symgrad.prims.control`). What differs is its VJP:

- ``rule="custom_vjp"`` (``sg.custom_vjp``): ``fun`` is the user's ``fwd`` (outputs
  the function's ``n_out`` outputs, then the residuals, which the VJP reads off the
  equation's own result); ``bwd`` (inputs the residuals, the outputs' cotangents,
  its extras; outputs a cotangent per argument) is recorded as a ``call``: the
  adjoint is IR, and the user's ``bwd`` is differentiated like any graph for
  second derivatives. Once differentiated, the call is a plain call of ``fwd``
  (the ``linearized`` facet), as JAX's linearized primal is.
  Forward mode (``sg.jvp``, ``jacfwd``, ``linearize``) comes from the double-VJP
  trick, which differentiates the pullback in a dummy cotangent (under
  :func:`symgrad.core.tracing.forward_mode`): the ``bwd`` call carries ``refuse=(lo, hi)`` (those
  operands are cotangents) and there its VJP answers
  :class:`~symgrad.core.errors.Refused` for them, so the adjoint raises JAX's
  error when they depend on the dummy cotangent (``jax.jvp`` of a ``custom_vjp``
  function raises it). ``hessian`` (forward over reverse) differentiates ``bwd``
  in the point only, and works, as in JAX.
- ``rule="custom_jvp"`` (``sg.custom_jvp``): the user's ``jvp`` graph (inputs
  ``args`` then a tangent per argument; outputs the outputs then their
  tangents) is linear in the tangents, so the VJP is its adjoint seeded at the
  output tangents, with respect to the input tangents, at zero tangents (JAX
  transposes the linearized rule the same way).
- ``rule="call"``: a plain call (the adjoint of a user's rule, itself
  differentiated for second derivatives): the adjoint of ``fun``.

The SymPy bridge prints a call by its ``name`` (``f(x)``; its derivatives
``f'(x, g)``, ``f''(...)``): a rule the user wrote is not SymPy's to check, and
``symgrad grad --check`` checks it with finite differences.

``callback(*args; fn, avals, name, vjp)`` calls the Python function ``fn`` on
numpy arrays (``sg.pure_callback``). Kernels never hold it: the backend runs a
graph with callbacks as a chain of kernels cut around each callback, which runs
in Python between them (:func:`symgrad.backend.program.build`). Its VJP is the
user's ``vjp`` as another callback; without one it cannot be differentiated.

    >>> import numpy as np, symgrad as sg
    >>> @sg.custom_vjp
    ... def f(x):
    ...     return np.sin(x)
    >>> f.defvjp(lambda x: (np.sin(x), np.cos(x)), lambda c, g: (2.0 * c * g,))
    >>> float(sg.grad(f)(0.0))  # the user's rule: twice the true derivative
    2.0
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..core.errors import Refused
from ..core.interpreter import interpret
from ..core.ir import FLOATS, Aval, Eqn, Graph, Var, freeze_params, tuple_aval
from ..core.tracing import apply, in_forward_mode
from .control import atom, of_dtype, parts, proj_p, seeded_adjoint, zero_eqn, zeros
from .control_batching import _forced, _unpack
from .registry import register

#: what forward mode over a custom_vjp function raises (JAX's words, then what to do)
FORWARD_MODE_ERROR = (
    "can't apply forward-mode autodiff (jvp) to a custom_vjp function {name}: sg.jvp, "
    "jacfwd and linearize differentiate its bwd in the cotangent, which a custom_vjp rule "
    "does not define. Use sg.custom_jvp for it, or reverse mode (sg.grad, sg.vjp, jacrev; "
    "sg.hessian works: it differentiates bwd in its residuals)")
#: the derivative of a custom function recorded inside its own rules deeper than
#: symgrad stages them (:data:`symgrad.numpy_api.custom.RULE_NESTING`)
NESTING_ERROR = (
    "{name} calls itself inside its own derivative rule, which symgrad follows (as JAX "
    "does) to derivatives of order 3; this derivative is of a higher order. Write the rule "
    "without calling {name} (compute its value in the rule directly)")
CAPTURED_ERROR = (
    "{name} reads a value being differentiated from outside its arguments (a closure over "
    "a traced value); its custom rule does not say how the result depends on it. Pass the "
    "value as an argument of {name}")


def _extras(params: dict) -> tuple[int, int, int]:
    return params["n_args"], params["n_fun"], params["n_rule"]


def _call_rule(*ops: Aval, fun: Graph, **params: Any) -> Aval:
    n = params["n_args"] + params["n_fun"]
    got = [v.aval for v in fun.inputs]
    if got != list(ops[:n]):
        raise TypeError(f"call {params['name']}: {fun.name} takes {[str(a) for a in got]}, "
                        f"the operands are {[str(a) for a in ops[:n]]}")
    return tuple_aval([a.aval for a in fun.outputs])


def _call_impl(*ops: Any, fun: Graph, **params: Any) -> tuple:
    return tuple(interpret(fun, *ops[:params["n_args"] + params["n_fun"]]))


def _call_sympy(sp: Any, *ops: Any, fun: Graph, evaluate: Callable, **params: Any) -> tuple:
    """Each output element as an undefined function named after the user's function, of
    the elements of the arguments: ``f(x)``, ``f'(x, g)``; a part of a several-output
    or array result is named by its place (``f[1]``, ``f[0][2, 1]``). The residuals a
    ``custom_vjp``'s ``fwd`` computes (``rule="fwd"``) are its graph, evaluated."""
    name = params["name"]
    if params["rule"] == "fwd":
        return tuple(evaluate(fun, list(ops[:params["n_args"] + params["n_fun"]])))
    n_out = params["n_out"]
    args = [e for op in ops[:params["n_args"]] for e in np.ravel(np.asarray(op, dtype=object))]
    outs = []
    for k, a in enumerate(fun.outputs):
        head = (name if n_out == 1 else f"{name}[{k}]") if k < n_out else \
            f"{name}.res[{k - n_out}]"
        if not a.aval.shape:
            outs.append(sp.Function(head)(*args))
            continue
        cell = np.empty(a.aval.shape, dtype=object)
        for idx in np.ndindex(*a.aval.shape):
            cell[idx] = sp.Function(f"{head}[{', '.join(map(str, idx))}]")(*args)
        outs.append(cell)
    return tuple(outs)


def record(fun: Graph, ops: Sequence[Any], name: str, rule: str = "call", n_fun: int = 0,
           **more: Any) -> list[Any]:
    """The outputs of ``fun`` on ``ops`` (its arguments then, ``n_fun`` of them, the values
    it read from outside, then the operands of the rule's graphs), as one ``call``."""
    params = dict(fun=fun, name=name, rule=rule, n_args=len(ops) - n_fun - more.get("n_rule", 0),
                  n_fun=n_fun, n_rule=0, fwd=None, bwd=None, jvp=None, n_out=len(fun.outputs),
                  refuse=(0, 0), diff=())
    params.update(more)
    t = apply(call_p, *map(atom, ops), **params)
    return parts(t, len(fun.outputs))


def _cotangents(g: dict, fun: Graph, n: int) -> list[Any]:
    """The cotangents of the first ``n`` outputs of ``fun`` (zeros where none came)."""
    return [of_dtype(g[k], a.aval) if k in g else zeros(a.aval)
            for k, a in enumerate(fun.outputs[:n])]


def _prime(name: str) -> str:
    return name + "'"


def _call_vjp(g: dict, ans: Any, *ops: Any, fun: Graph, adjoint: Callable,
              **params: Any) -> tuple:
    n_args, n_fun, n_rule = _extras(params)
    name, rule = params["name"], params["rule"]
    args = ops[:n_args]
    rule_extra = ops[n_args + n_fun:]
    cts: list[Any] = [None] * len(ops)
    seeded = [k for k in sorted(g) if fun.outputs[k].aval.dtype in FLOATS]
    if not seeded:
        return tuple(cts)
    if rule == "nested":
        error = NotImplementedError(NESTING_ERROR.format(name=name))
        return tuple(Refused(error) if _is_float(op) else None for op in ops)
    if rule == "custom_vjp":  # fun is the user's fwd: the residuals are parts of ans
        bwd, n_out = params["bwd"], params["n_out"]
        res = parts(ans, len(fun.outputs))[n_out:]
        g_out = {k: v for k, v in g.items() if k < n_out}
        if not g_out:
            return tuple(cts)
        grads = record(bwd, [*res, *_cotangents(g_out, fun, n_out), *rule_extra],
                       _prime(name), n_fun=len(rule_extra), refuse=(len(res), len(res) + n_out),
                       owner=name)
        for k, grad in zip([k for k, d in enumerate(params["diff"]) if d], grads, strict=True):
            cts[k] = grad
    elif rule == "custom_jvp":
        jvp, n_out = params["jvp"], params["n_out"]
        tangents = [zeros(v.aval) for v in jvp.inputs[n_args:2 * n_args]]
        wrt = [n_args + k for k, d in enumerate(params["diff"]) if d]
        adj = seeded_adjoint(jvp, [n_out + k for k in seeded], wrt, adjoint, f"{name}_vjp")
        grads = record(adj.graph, [*args, *tangents, *rule_extra,
                                   *(of_dtype(g[k], fun.outputs[k].aval) for k in seeded)],
                       _prime(name))
        for k, grad in zip([w - n_args for w in wrt], grads, strict=True):
            cts[k] = grad
    else:  # a plain call (or a custom_vjp's fwd): the adjoint of its graph
        # a custom_vjp's bwd in its cotangent: refused in forward mode only (JAX's
        # jvp of a custom_vjp function); hessian's forward-over-reverse differentiates
        # it in cotangents that depend on the point, which is fine (linear in them)
        lo, hi = params["refuse"] if in_forward_mode() else (0, 0)
        wrt = [k for k, v in enumerate(fun.inputs)
               if v.aval.dtype in FLOATS and not lo <= k < hi]
        if wrt:
            adj = seeded_adjoint(fun, seeded, wrt, adjoint, f"{fun.name}_vjp")
            grads = record(adj.graph, [*ops[:n_args + n_fun],
                                       *(of_dtype(g[k], fun.outputs[k].aval) for k in seeded)],
                           _prime(name), owner=params.get("owner", ""))
            for k, grad in zip(wrt, grads, strict=True):
                cts[k] = grad
        error = TypeError(FORWARD_MODE_ERROR.format(name=params.get("owner", name)))
        for k in range(lo, hi):
            cts[k] = Refused(error)
        return tuple(cts)
    for k in range(n_args, len(ops)):  # values the rule's graphs read from outside
        if ops[k] is not None and _is_float(ops[k]):
            cts[k] = Refused(NotImplementedError(CAPTURED_ERROR.format(name=name)))
    return tuple(cts)


def _is_float(x: Any) -> bool:
    dtype = getattr(x, "dtype", None)
    return dtype is not None and np.dtype(dtype).kind == "f"


def _call_batch(b: Any, args: list, flags: list, **params: Any) -> tuple:
    """Every operand and every output batched: the graphs are batched with all their
    inputs batched (a user's rule may mix its arguments in any way)."""
    args = [a if f else b.with_batch(a) for a, f in zip(args, flags)]
    new = dict(params)
    for key in ("fun", "fwd", "bwd", "jvp"):
        graph = params[key]
        if graph is not None:
            new[key], _ = _forced(b, graph, [True] * len(graph.inputs),
                                  [True] * len(graph.outputs))
    t = b.bind(call_p, args, **new)
    n = len(params["fun"].outputs)
    return _unpack(b, t, [True] * n, [False] * n)


def _call_linearized(eqn: Eqn, active: Any = None) -> Eqn:
    """A custom call, once differentiated, is a plain call of what computed its primal
    in JAX's linearization: a custom_vjp's ``fwd`` (its ``fun``), a custom_jvp's jvp
    rule at zero tangents. So the second derivatives of its outputs
    (``grad(grad(lambda x: f(x) * x))``, ``hessian``, ``jvp`` of a gradient)
    differentiate the rule as written, as JAX's do, and only forward mode over a
    custom_vjp call never differentiated meets the refusal of JAX's."""
    params = eqn.params
    if params["rule"] == "custom_vjp":
        return replace(eqn, params=freeze_params({**params, "rule": "fwd", "bwd": None,
                                                  "name": params["name"] + "_fwd"}))
    if params["rule"] == "custom_jvp":
        n_args, n_fun, n_rule = _extras(params)
        primal = _jvp_primal(params["jvp"], params["fun"], n_args, params["n_out"],
                             params["name"])
        return replace(eqn, params=freeze_params({
            **params, "rule": "fwd", "jvp": None, "fun": primal, "n_fun": n_fun + n_rule,
            "n_rule": 0, "name": params["name"] + "_jvp"}))
    return eqn


def _jvp_primal(jvp: Graph, fun: Graph, n_args: int, n_out: int, name: str) -> Graph:
    """The primal outputs of a jvp rule at zero tangents, as a graph of the call's
    operands (arguments, ``fun``'s extras, unused here, the rule's extras)."""
    inputs = [Var(v.aval, v.hint) for v in (*fun.inputs, *jvp.inputs[2 * n_args:])]
    tangents = [Var(v.aval) for v in jvp.inputs[n_args:2 * n_args]]
    operands = (*inputs[:n_args], *tangents, *inputs[len(fun.inputs):])
    n_rule = len(jvp.inputs) - 2 * n_args
    params = dict(fun=jvp, name=f"{name}_jvp", rule="call", n_args=2 * n_args, n_fun=n_rule,
                  n_rule=0, fwd=None, bwd=None, jvp=None, n_out=len(jvp.outputs),
                  refuse=(0, 0), diff=())
    out = Var(tuple_aval([v.aval for v in jvp.outputs]))
    eqns = [*(zero_eqn(t) for t in tangents),
            Eqn(call_p, operands, out, freeze_params(params))]
    outputs = []
    for k in range(n_out):
        part = Var(jvp.outputs[k].aval)
        eqns.append(Eqn(proj_p, (out,), part, freeze_params({"part": k})))
        outputs.append(part)
    return Graph(tuple(inputs), tuple(eqns), tuple(outputs), (), f"{name}_jvp_primal")


call_p = register(
    name="call", kind="control", shape_rule=_call_rule, impl=_call_impl,
    vjp=_call_vjp, sympy=_call_sympy, subgraphs=("fun", "fwd", "bwd", "jvp"),
    batch=_call_batch, linearized=_call_linearized)


# ---------------------------------------------------------------------------
# callbacks


class Host:
    """A Python function held by a ``callback`` equation, printed by name: kernel source
    quotes equations in comments, and its content key must not change from one process
    to the next (a function's default repr holds its address)."""

    __slots__ = ("fn", "name")

    def __init__(self, fn: Callable, name: str):
        self.fn, self.name = fn, name

    def __call__(self, *args: Any) -> Any:
        return self.fn(*args)

    def __repr__(self) -> str:
        return f"<python {self.name}>"


def _callback_rule(*ops: Aval, fn: Any, avals: tuple[Aval, ...], **params: Any) -> Aval:
    return tuple_aval(list(avals))


def _callback_impl(*ops: Any, fn: Any, avals: tuple[Aval, ...], name: str,
                   **params: Any) -> tuple:
    """Call the user's function on numpy arrays; check what it returns against ``avals``."""
    result = fn(*map(_read_only, ops))
    leaves = list(result) if isinstance(result, list | tuple) else [result]
    if len(leaves) != len(avals):
        raise ValueError(f"pure_callback {name} returned {len(leaves)} values, but "
                         f"result_shape_dtypes declares {len(avals)}")
    out = []
    for k, (x, a) in enumerate(zip(leaves, avals)):
        x = np.asarray(x)
        if x.shape != a.shape:
            raise ValueError(f"pure_callback {name} returned result {k} of shape {x.shape}, "
                             f"but result_shape_dtypes declares {a.shape}")
        if not np.can_cast(x.dtype, a.dtype, "same_kind"):
            raise TypeError(f"pure_callback {name} returned result {k} of dtype {x.dtype}, "
                            f"but result_shape_dtypes declares {a.dtype}: symgrad does not "
                            "cast it (that would drop an imaginary part or a fraction); "
                            "declare the dtype the callback returns, or convert the result "
                            "in the callback")
        out.append(np.array(x, dtype=a.dtype, order="C"))  # (ascontiguousarray is 1-d)
    return tuple(out)


def _read_only(x: Any) -> np.ndarray:
    """A read-only view of an argument for a callback (as JAX's): a callback that writes
    into its argument would change the caller's array and the rest of the function."""
    view = np.asarray(x).view()
    view.flags.writeable = False
    return view


def _callback_vjp(g: dict, ans: Any, *ops: Any, fn: Any, avals: tuple[Aval, ...], name: str,
                  vjp: Any, vmap_method: str = "") -> tuple:
    floats = [k for k, x in enumerate(ops) if _is_float(x)]
    if isinstance(vjp, Exception):  # a result that must not be differentiated
        return tuple(Refused(vjp) if k in floats else None for k in range(len(ops)))
    if vjp is None:
        error = NotImplementedError(
            f"pure_callback {name} has no derivative: pass vjp=(a function vjp(ct, *args) "
            "returning a cotangent per argument) to sg.pure_callback, or wrap the call in "
            "an sg.custom_vjp function")
        return tuple(Refused(error) if k in floats else None for k in range(len(ops)))
    cts_in = [of_dtype(g[k], a) if k in g else zeros(a) for k, a in enumerate(avals)]
    want = tuple(Aval(tuple(getattr(x, "shape", np.shape(x))), np.dtype(x.dtype).name)
                 for x in ops)
    t = apply(callback_p, *map(atom, ops), *cts_in, fn=vjp, avals=want, name=_prime(name),
              vjp=None, vmap_method=vmap_method)
    grads = parts(t, len(ops))
    return tuple(grads[k] if k in floats else None for k in range(len(ops)))


def _callback_sympy(sp: Any, *ops: Any, fn: Any, avals: tuple[Aval, ...], name: str,
                    **params: Any) -> tuple:
    args = [e for op in ops for e in np.ravel(np.asarray(op, dtype=object))]
    outs = []
    for k, a in enumerate(avals):
        head = name if len(avals) == 1 else f"{name}[{k}]"
        if not a.shape:
            outs.append(sp.Function(head)(*args))
            continue
        cell = np.empty(a.shape, dtype=object)
        for idx in np.ndindex(*a.shape):
            cell[idx] = sp.Function(f"{head}[{', '.join(map(str, idx))}]")(*args)
        outs.append(cell)
    return tuple(outs)


class Rows(Host):
    """A callback's function applied to each row of its arguments (all batched), the
    results stacked: ``vmap_method="sequential"``, JAX's loop over the batch."""

    __slots__ = ("inner", "avals")

    def __init__(self, inner: Callable, avals: tuple[Aval, ...], name: str):
        super().__init__(self._run, name)
        self.inner, self.avals = inner, avals

    def _run(self, *args: Any) -> list[np.ndarray]:
        n = len(args[0])
        rows = [_callback_impl(*(a[i] for a in args), fn=self.inner, avals=self.avals,
                               name=self.name) for i in range(n)]
        return [np.stack([r[k] for r in rows]) if rows else np.zeros((0, *a.shape), a.dtype)
                for k, a in enumerate(self.avals)]


def _callback_batch(b: Any, args: list, flags: list, *, fn: Any, avals: tuple[Aval, ...],
                    name: str, vjp: Any, vmap_method: str = "") -> tuple:
    if vmap_method != "sequential":
        raise b.refuse(f"vmap of pure_callback {name}: pass vmap_method='sequential' to "
                       "sg.pure_callback (the callback then runs once per example, as JAX's "
                       "does), or call sg.vmap inside the callback's Python function")
    args = [a if f else b.with_batch(a) for a, f in zip(args, flags)]
    row_avals = tuple(Aval(tuple(b.shape(a))[1:], a.aval.dtype) for a in args)
    batched = tuple(Aval((b.size, *a.shape), a.dtype) for a in avals)
    rows_vjp = Rows(vjp, row_avals, vjp.name) if isinstance(vjp, Host) else vjp
    t = b.bind(callback_p, args, fn=Rows(fn, avals, name), avals=batched, name=name,
               vjp=rows_vjp, vmap_method=vmap_method)
    return _unpack(b, t, [True] * len(avals), [False] * len(avals))


#: a Python function on numpy arrays (sg.pure_callback); kernels are cut around it
callback_p = register(
    name="callback", kind="control", shape_rule=_callback_rule, impl=_callback_impl,
    vjp=_callback_vjp, sympy=_callback_sympy, batch=_callback_batch, host=True)


__all__ = ["call_p", "callback_p", "record", "Host", "Rows", "FORWARD_MODE_ERROR"]
