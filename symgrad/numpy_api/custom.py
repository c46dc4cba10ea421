"""Your own derivative rules, with JAX's signatures: ``custom_vjp``, ``custom_jvp`` and
``pure_callback``.

``custom_vjp`` and ``custom_jvp`` trace the function and the user's rules into
graphs held by one ``call`` equation (:mod:`symgrad.prims.custom`), so that
``grad``, ``jit``, ``vjp``, ``vmap``, ``hessian``, loop bodies, the printer,
codegen and the SymPy bridge all see them. Called outside any trace they call
the function, as JAX's do. What JAX does, symgrad does:

- ``f.defvjp(fwd, bwd)``: ``fwd(*args) -> (out, residuals)`` (residuals: any
  pytree of arrays and numbers), ``bwd(residuals, g) -> tuple`` of one
  cotangent per argument (a pytree like the argument; ``None`` for zeros).
  ``nondiff_argnums``: those arguments are passed to ``bwd`` first
  (``bwd(*nondiff, residuals, g)``) and get no cotangent. Forward mode
  (``sg.jvp``, ``jacfwd``, ``linearize``) of a ``custom_vjp`` function raises
  JAX's "can't apply forward-mode autodiff (jvp) to a custom_vjp function";
  ``hessian`` works (forward over reverse differentiates ``bwd`` in the residuals).
- ``f.defjvp(jvp)``: ``jvp(primals, tangents) -> (out, tangent_out)``, linear in
  the tangents (``jvp(*nondiff, primals, tangents)`` with ``nondiff_argnums``);
  ``f.defjvps(*rules)``: one ``rule(g, ans, *primals)`` per argument (``None``: no
  dependence), summed. Reverse mode transposes the rule (as JAX does).
- ``pure_callback(callback, result_shape_dtypes, *args, vjp=None)``: a Python
  function the tracer never enters, called on numpy arrays; compiled functions
  are cut around it and it runs in Python between two kernels (a few µs per
  call, measured in the README). ``vjp(ct, *args) -> tuple`` (one cotangent per
  argument) makes it differentiable; without it a gradient raises. In a
  ``sg.cond`` branch or a loop body, the whole ``cond`` or loop runs on the
  interpreter, between the kernels before and after it. Under ``sg.vmap``
  it needs ``vmap_method="sequential"`` (a call per example, as JAX's).

A rule may not close over a value being differentiated (pass it as an argument):
its cotangent would be unknown, and the gradient raises rather than guess.

    >>> import numpy as np, symgrad as sg
    >>> @sg.custom_jvp
    ... def softplus(x):
    ...     return np.log1p(np.exp(x))
    >>> softplus.defjvps(lambda t, ans, x: t / (1.0 + np.exp(-x)))
    >>> float(sg.grad(softplus)(0.0))
    0.5
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..core.errors import user_location
from ..core.ir import BOOL, FLOATS, INT, Aval, Graph
from ..core.pytree import Tree, flatten, unflatten
from ..core.tracing import Tracer
from ..prims.control import operand_aval, parts
from ..prims.custom import Host, _callback_impl, call_p, callback_p
from .control import _name, _operand, _recording, _stage

__all__ = ["custom_vjp", "custom_jvp", "pure_callback", "ShapeDtypeStruct"]

#: per thread, how many rule stagings of each custom function are in progress. A rule
#: that calls its own function (``return f(x), ...`` in ``fwd`` or a jvp rule, as JAX's
#: examples do) records a custom call of it there, as JAX does, so that derivatives of
#: the rule use the rule again; JAX traces rules lazily, symgrad when the call is
#: recorded, so the nesting stops at RULE_NESTING: deeper, the function is recorded as a
#: call whose derivative is refused (a derivative of order RULE_NESTING + 2 of such a
#: function), never silently differentiated as the plain function
_IN_RULE = threading.local()
RULE_NESTING = 2


def _in_rule() -> dict[int, int]:
    if not hasattr(_IN_RULE, "depth"):
        _IN_RULE.depth = {}
    return _IN_RULE.depth


class _Custom:
    """What ``custom_vjp`` and ``custom_jvp`` share: the function, its nondiff arguments,
    and how a call is traced into one ``call`` equation."""

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(sorted(int(k) for k in nondiff_argnums))
        self.name = _name(fun, "custom")

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self, obj)

    def _args(self, args: tuple, kwargs: dict) -> tuple:
        if not kwargs:
            return args
        try:
            bound = inspect.signature(self.fun).bind(*args, **kwargs)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{self.name}: {e}") from None
        return tuple(bound.args)

    def _split(self, args: tuple) -> tuple[list, list]:
        if any(k >= len(args) for k in self.nondiff_argnums):
            raise TypeError(f"{self.name}: nondiff_argnums={self.nondiff_argnums} but it was "
                            f"called with {len(args)} arguments")
        diff = [a for k, a in enumerate(args) if k not in self.nondiff_argnums]
        nondiff = [a for k, a in enumerate(args) if k in self.nondiff_argnums]
        return diff, nondiff

    def _merge(self, diff: Sequence[Any], nondiff: Sequence[Any]) -> tuple:
        diff_it, nondiff_it = iter(diff), iter(nondiff)
        n = len(diff) + len(nondiff)
        return tuple(next(nondiff_it) if k in self.nondiff_argnums else next(diff_it)
                     for k in range(n))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        args = self._args(args, kwargs)
        diff, nondiff = self._split(args)
        leaves, tree = flatten(tuple(diff))
        into = _recording(*leaves, *flatten(tuple(nondiff))[0])
        if into is None:
            return self.fun(*args)
        depth = _in_rule().get(id(self), 0)
        self._check_rule()
        avals = [operand_aval(x) for x in leaves]  # numbers: float64 unless int
        names = [f"{self.name}_arg{k}" for k in range(len(leaves))]
        out_tree: list[Tree] = []

        def flat_fun(*xs: Any) -> list:
            out, t = flatten(self.fun(*self._merge(unflatten(tree, xs), nondiff)))
            out_tree.append(t)
            return out

        fun, fun_extra = _stage(flat_fun, avals, names, self.name)
        ops = [_as_operand(x, a) for x, a in zip(leaves, avals)]
        n_out = len(fun.outputs)
        if depth > RULE_NESTING:  # inside its own rules too deep: not differentiable
            params = dict(fun=fun, name=self.name, n_args=len(ops), n_fun=len(fun_extra),
                          n_rule=0, n_out=n_out, refuse=(0, 0), fwd=None, bwd=None, jvp=None,
                          diff=tuple(a.dtype in FLOATS for a in avals), rule="nested")
            t = into.apply(call_p, [*ops, *fun_extra], params)
            return unflatten(out_tree[0], parts(t, n_out))
        _in_rule()[id(self)] = depth + 1
        try:
            rule, rule_extra, params = self._rules(fun, tree, avals, names, nondiff,
                                                   out_tree[0])
        finally:
            if depth:
                _in_rule()[id(self)] = depth
            else:
                del _in_rule()[id(self)]
        if rule == "custom_vjp":  # the equation computes fwd: outputs, then residuals
            fun, fun_extra = params.pop("fwd_graph"), params.pop("fwd_extra")
        params.update(fun=fun, name=self.name, n_args=len(ops), n_fun=len(fun_extra),
                      n_rule=len(rule_extra), n_out=n_out, refuse=(0, 0),
                      diff=tuple(a.dtype in FLOATS for a in avals), rule=rule)
        t = into.apply(call_p, [*ops, *fun_extra, *rule_extra], params)
        return unflatten(out_tree[0], parts(t, len(fun.outputs))[:n_out])

    def _check_rule(self) -> None:
        raise NotImplementedError

    def _rules(self, fun: Graph, tree: Tree, avals: list[Aval], names: list[str],
               nondiff: list, out_tree: Tree) -> tuple[str, list, dict]:
        raise NotImplementedError


def _as_operand(x: Any, a: Aval) -> Any:
    return _operand(x) if a.dtype == INT else x


def _conform(leaves: list, want: Sequence[Aval], what: str, name: str) -> list:
    """Leaves a rule returned, as values of ``want``'s avals: ``None`` is zeros; any other
    shape is an error, a 0-d value (a number too) for a larger shape included: JAX's
    rule (a bwd or jvp rule that summed by mistake would otherwise be broadcast)."""
    out = []
    for k, (x, a) in enumerate(zip(leaves, want, strict=True)):
        if x is None:
            x = np.zeros(a.shape, dtype=a.dtype) if a.shape else 0.0
        shape = tuple(x.shape) if isinstance(x, Tracer) else np.shape(x)
        if shape != a.shape:
            raise TypeError(f"{name} at {user_location()}: {what} leaf {k} has shape "
                            f"{shape}, but it must have shape {a.shape} (that of the "
                            "value it stands for); None stands for zeros")
        out.append(x)
    return out


def _leaves(value: Any, want: Tree, what: str, name: str) -> list:
    """The leaves of ``value`` (a rule's result) against the structure ``want``; a ``None``
    in place of a whole subtree is zeros, as JAX allows for cotangents."""
    if value is None and want.kind != "none":
        return [None] * want.num_leaves
    leaves, got = flatten(value)
    if got == want:
        return leaves
    if want.kind in ("tuple", "list") and isinstance(value, tuple | list) \
            and len(value) == len(want.children):
        return [x for v, c in zip(value, want.children) for x in _leaves(v, c, what, name)]
    raise TypeError(f"{name} at {user_location()}: {what} has the structure {got}, but it "
                    f"must be {want} (that of the values it stands for)")


class custom_vjp(_Custom):  # noqa: N801 -- JAX's name
    """A function whose reverse-mode derivative is the user's ``bwd`` (JAX's
    ``jax.custom_vjp``); see the module docstring.

        >>> import numpy as np, symgrad as sg
        >>> @sg.custom_vjp
        ... def clip_gradient(x):
        ...     return x
        >>> clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (np.clip(g, -1, 1),))
        >>> float(sg.grad(lambda x: 3.0 * clip_gradient(x))(2.0))
        1.0
    """

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        super().__init__(fun, nondiff_argnums)
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None

    def defvjp(self, fwd: Callable, bwd: Callable, symbolic_zeros: bool = False) -> None:
        """Set the rule: ``fwd(*args) -> (out, residuals)``, ``bwd(residuals, g) -> tuple``."""
        if symbolic_zeros:
            raise NotImplementedError("custom_vjp: symbolic_zeros=True is not supported; "
                                      "bwd gets zero cotangents as arrays of zeros")
        self.fwd, self.bwd = fwd, bwd

    def _check_rule(self) -> None:
        if self.fwd is None or self.bwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {self.name} using "
                                 "defvjp.")

    def _rules(self, fun: Graph, tree: Tree, avals: list[Aval], names: list[str],
               nondiff: list, out_tree: Tree) -> tuple[str, list, dict]:
        outs = [a.aval for a in fun.outputs]
        res_tree: list[Tree] = []

        def flat_fwd(*xs: Any) -> list:
            result = self.fwd(*self._merge(unflatten(tree, xs), nondiff))
            if not isinstance(result, tuple | list) or len(result) != 2:
                raise TypeError(f"{self.name}: fwd must return a pair (out, residuals), not "
                                f"{type(result).__name__}")
            out = _conform(_leaves(result[0], out_tree, "fwd's output", self.name), outs,
                           "fwd's output", self.name)
            res, rt = flatten(result[1])
            res_tree.append(rt)
            return [*out, *res]

        fwd, fwd_extra = _stage(flat_fwd, avals, names, f"{self.name}_fwd")
        res_avals = [a.aval for a in fwd.outputs[len(outs):]]
        n_diff = len(tree.children)

        def flat_bwd(*xs: Any) -> list:
            res = unflatten(res_tree[0], xs[:len(res_avals)])
            g = unflatten(out_tree, xs[len(res_avals):])
            result = self.bwd(*nondiff, res, g)
            if not isinstance(result, tuple | list) or len(result) != n_diff:
                raise TypeError(
                    f"{self.name}: bwd must return a tuple of {n_diff} cotangents (one per "
                    f"differentiated argument), not {type(result).__name__}"
                    f"{f' of length {len(result)}' if isinstance(result, tuple | list) else ''}")
            cts = _leaves(tuple(result), tree, "bwd's result", self.name)
            floats = [(x, a) for x, a in zip(cts, avals) if a.dtype in FLOATS]
            return _conform([x for x, _ in floats], [a for _, a in floats], "bwd's result",
                            self.name)

        bwd, bwd_extra = _stage(flat_bwd, [*res_avals, *outs],
                                [*(f"res{k}" for k in range(len(res_avals))),
                                 *(f"g{k}" for k in range(len(outs)))], f"{self.name}_bwd")
        return "custom_vjp", bwd_extra, dict(fwd=None, bwd=bwd, jvp=None, fwd_graph=fwd,
                                             fwd_extra=fwd_extra)


class custom_jvp(_Custom):  # noqa: N801 -- JAX's name
    """A function whose forward-mode derivative is the user's ``jvp`` (JAX's
    ``jax.custom_jvp``); reverse mode transposes it. See the module docstring.

        >>> import numpy as np, symgrad as sg
        >>> @sg.custom_jvp
        ... def f(x, y):
        ...     return np.sin(x) * y
        >>> @f.defjvp
        ... def f_jvp(primals, tangents):
        ...     (x, y), (tx, ty) = primals, tangents
        ...     return f(x, y), np.cos(x) * tx * y + np.sin(x) * ty
        >>> [float(v) for v in sg.grad(f, argnums=(0, 1))(0.0, 2.0)]
        [2.0, 0.0]
    """

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        super().__init__(fun, nondiff_argnums)
        self.jvp: Callable | None = None
        #: the rules given to defjvps (what ``jvp`` calls), so that the guards of a
        #: trace follow their reads (symgrad/transforms/captured.py)
        self.jvps: tuple = ()

    def defjvp(self, jvp: Callable, symbolic_zeros: bool = False) -> Callable:
        """Set the rule ``jvp(primals, tangents) -> (out, tangent_out)``; returns ``jvp``
        (so that ``@f.defjvp`` works as a decorator)."""
        if symbolic_zeros:
            raise NotImplementedError("custom_jvp: symbolic_zeros=True is not supported; "
                                      "the rule gets zero tangents as arrays of zeros")
        self.jvp, self.jvps = jvp, ()
        return jvp

    def defjvps(self, *rules: Callable | None) -> None:
        """One rule per differentiated argument, ``rule(g, ans, *primals)`` (``None``: the
        output does not depend on it); the tangent of the output is their sum."""
        def jvp(*a: Any) -> tuple:
            *nondiff, primals, tangents = a
            if len(rules) != len(primals):
                raise TypeError(f"{self.name}: defjvps got {len(rules)} rules for "
                                f"{len(primals)} differentiated arguments")
            ans = self(*self._merge(primals, nondiff))  # (as JAX: its rule again)
            leaves, tree = flatten(ans)
            total: list[Any] = [0.0] * len(leaves)
            for rule, t in zip(rules, tangents):
                if rule is not None:
                    got = _leaves(rule(t, ans, *primals), tree, "a defjvps rule", self.name)
                    total = [s + (0.0 if x is None else x) for s, x in zip(total, got)]
            return ans, unflatten(tree, total)
        self.jvp, self.jvps = jvp, rules

    def _check_rule(self) -> None:
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {self.name} using "
                                 "defjvp.")

    def _rules(self, fun: Graph, tree: Tree, avals: list[Aval], names: list[str],
               nondiff: list, out_tree: Tree) -> tuple[str, list, dict]:
        outs = [a.aval for a in fun.outputs]
        tangent_avals = [a if a.dtype in FLOATS else Aval(a.shape) for a in avals]
        n = len(avals)

        def flat_jvp(*xs: Any) -> list:
            primals = unflatten(tree, xs[:n])
            tangents = unflatten(tree, xs[n:])
            result = self.jvp(*nondiff, tuple(primals), tuple(tangents))
            if not isinstance(result, tuple | list) or len(result) != 2:
                raise TypeError(f"{self.name}: the jvp rule must return a pair (out, "
                                f"tangent_out), not {type(result).__name__}")
            out = _conform(_leaves(result[0], out_tree, "jvp's output", self.name), outs,
                           "jvp's output", self.name)
            t_out = _conform(_leaves(result[1], out_tree, "jvp's tangent", self.name),
                             [Aval(a.shape, a.dtype if a.dtype in FLOATS else "float64")
                              for a in outs], "jvp's tangent", self.name)
            return [*out, *t_out]

        jvp, jvp_extra = _stage(flat_jvp, [*avals, *tangent_avals],
                                [*names, *(f"t_{name}" for name in names)], f"{self.name}_jvp")
        return "custom_jvp", jvp_extra, dict(fwd=None, bwd=None, jvp=jvp)


# ---------------------------------------------------------------------------
# pure_callback


class ShapeDtypeStruct:
    """The shape and dtype of a callback's result (``jax.ShapeDtypeStruct``)."""

    def __init__(self, shape: Sequence[int], dtype: Any):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)

    def __repr__(self) -> str:
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name})"


def _result_aval(x: Any) -> Aval:
    dtype = np.dtype(getattr(x, "dtype", np.float64))
    if dtype.kind == "b":
        return Aval(tuple(np.shape(x) if not hasattr(x, "shape") else x.shape), BOOL)
    if dtype.kind not in "fiu" or dtype.itemsize not in (4, 8) or dtype.kind in "iu" and \
            dtype.itemsize != 8:
        raise TypeError(f"pure_callback: result dtype {dtype} is not supported (float64, "
                        "float32, int64 or bool)")
    name = "int64" if dtype.kind in "iu" else dtype.name
    return Aval(tuple(x.shape), name)


def pure_callback(callback: Callable, result_shape_dtypes: Any, *args: Any,
                  vjp: Callable | None = None, vmap_method: str | None = None,
                  **kwargs: Any) -> Any:
    """``callback(*args, **kwargs)`` on numpy arrays, outside the tracer (JAX's
    ``jax.pure_callback``): for code that cannot be traced (a C extension, scipy).

    ``result_shape_dtypes``: a pytree of objects with ``.shape`` and ``.dtype``
    (``sg.ShapeDtypeStruct``, or arrays) that the result must match. ``callback`` must
    be pure: symgrad may call it again (a gradient runs it once more) or not at all (an
    unused result). ``vjp(ct, *args) -> tuple`` (one cotangent per argument, ``None``
    for zeros; ``ct`` shaped like the result) makes it differentiable in reverse mode.

        >>> import numpy as np, symgrad as sg
        >>> def f(x):
        ...     y = sg.pure_callback(np.sin, sg.ShapeDtypeStruct((), np.float64), x,
        ...                          vjp=lambda ct, x: (ct * np.cos(x),))
        ...     return y * 2.0
        >>> float(sg.grad(f, backend="numpy")(0.0))
        2.0
    """
    if vmap_method not in (None, "sequential"):
        raise NotImplementedError(f"pure_callback: vmap_method={vmap_method!r} is not "
                                  "supported; 'sequential' is (one call per example)")
    out_leaves, out_tree = flatten(result_shape_dtypes)
    avals = tuple(_result_aval(x) for x in out_leaves)
    leaves, tree = flatten(tuple(args))
    name = _name(callback, "callback")

    def flat(*xs: Any) -> list:
        result = callback(*unflatten(tree, list(xs)), **kwargs)
        got, got_tree = flatten(result)
        if got_tree != out_tree:
            raise TypeError(f"pure_callback {name} returned the structure {got_tree}, but "
                            f"result_shape_dtypes is {out_tree}")
        return got

    flat_vjp = None if vjp is None else Host(_flat_vjp(vjp, tree, out_tree, name, len(leaves)),
                                             name + "'")
    into = _recording(*leaves)
    if into is None and any(getattr(x, "requires_grad", False) for x in leaves):
        raise RuntimeError(f"pure_callback {name}: its arguments are symgrad Tensors that "
                           "require grad, whose graph a callback cannot carry; in the Tensor "
                           "API write the call as a symgrad.autograd.Function, whose backward "
                           "you give")
    if into is None:
        arrays = [np.asarray(x) for x in leaves]
        return unflatten(out_tree, list(_callback_impl(*arrays, fn=flat, avals=avals,
                                                       name=name)))
    ops = [_operand(x) for x in leaves]
    t = into.apply(callback_p, ops, dict(fn=Host(flat, name), avals=avals, name=name,
                                         vjp=flat_vjp, vmap_method=vmap_method or ""))
    return unflatten(out_tree, parts(t, len(avals)))


def _flat_vjp(vjp: Callable, tree: Tree, out_tree: Tree, name: str, n: int) -> Callable:
    def flat(*xs: Any) -> list:
        args = unflatten(tree, list(xs[:n]))
        ct = unflatten(out_tree, list(xs[n:]))
        result = vjp(ct, *args)
        cts = _leaves(tuple(result) if isinstance(result, list) else result, tree,
                      "vjp's result", f"pure_callback {name}")
        return [np.zeros(np.shape(x)) if c is None else c for c, x in zip(cts, xs[:n])]
    return flat
