"""What a transformation does with a call: one small class per transformation.

:class:`Signature` holds what every transformation shares: the function, which
argument positions are differentiated (``argnums``) and which are static
(``static_argnums``), the arguments' names, the backend. Its subclasses say what
differs, each in a few methods:

- :class:`Jit` differentiates nothing; ``gradient=`` is none of its business (a
  function's own parameter ``gradient`` is passed through);
- :class:`Grad` differentiates ``argnums`` and returns the gradients (``has_aux``:
  and aux); :class:`ValueAndGrad` returns the value too; :class:`Vjp` (the
  pullback of ``sg.vjp``) takes functions that return several outputs.

:class:`symgrad.transforms.api.Transformed` is the call machinery (the caches, the
fast path, tracing, building) and holds one of these; the mode of a call is its
class, never a string. :mod:`symgrad.distributed` drives a call of a Dask array
through this public object alone (``positions``, ``names``, ``plan``, ``result``),
so it needs nothing of ``Transformed``. Nothing here traces or compiles.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from ..core.errors import SCALAR_OUTPUT_ERROR
from ..core.ir import Aval, Graph, is_complex, is_float
from ..core.pytree import LEAF, Tree, unflatten
from ..core.tracing import arg_names
from ..prims.control import linearized_graph
from .calls import _ONE, _TUPLE, _VALUE_AND_GRADS, _aux_leaves, _positions

#: what ``backend=`` may name: the Numba kernels, or the core interpreter
#: (``"interpreter"``; ``"numpy"`` is its older name, kept as an alias)
BACKENDS = ("numba", "interpreter", "numpy")


def backend_name(backend: str) -> str:
    """``backend=`` as the pipeline takes it (``"numba"`` or ``"numpy"``, the interpreter),
    or a ValueError that lists the names."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, not {backend!r}")
    return "numpy" if backend == "interpreter" else backend


def check_holomorphic_inputs(name: str, avals: list[Aval]) -> None:
    """``holomorphic=True`` differentiates with respect to complex arguments only (JAX)."""
    for aval in avals:
        if not is_complex(aval.dtype):
            raise TypeError(f"{name} with holomorphic=True requires inputs with complex "
                            f"dtype, but got {aval}")


class Signature:
    """How a transformation takes a call of ``fun`` and gives its result (the base class:
    what all transformations share; a subclass per transformation says what differs)."""

    #: the transformation's name, in messages ("grad of f with respect to x")
    name = ""
    #: whether it differentiates (jit does not): ``gradient=`` is then the cotangent
    differentiates = True

    def __init__(self, fun: Callable, argnums: int | Sequence[int] = 0,
                 static_argnums: Sequence[int] = (), backend: str = "numba",
                 has_aux: bool = False, holomorphic: bool = False):
        if not callable(fun):
            raise TypeError(f"{self.name} needs a function, got {type(fun).__name__}")
        self.backend = backend_name(backend)
        self.fun = fun
        self.single = isinstance(argnums, int)
        self.argnums: tuple[int, ...] = (
            _positions("argnums", argnums, distinct=True) if self.differentiates else ())
        self.static_argnums = _positions("static_argnums", static_argnums, distinct=False)
        self._check_aux(has_aux)
        self.has_aux = has_aux
        if holomorphic and not isinstance(self, Grad) or holomorphic and self.several_outputs:
            raise TypeError(f"holomorphic is for grad and value_and_grad, not {self.name}")
        #: complex outputs allowed, complex inputs required (JAX's holomorphic=True)
        self.holomorphic = holomorphic
        self.title = getattr(fun, "__name__", "the function")  # for messages: "<lambda>"
        #: the names of the arguments of a call with n of them
        self.names: Callable[[int], list[str]] = functools.cache(
            functools.partial(arg_names, fun))
        self._by_arity: dict[int, tuple[frozenset[int], frozenset[int]]] = {}

    def _check_aux(self, has_aux: bool) -> None:
        if has_aux:
            raise TypeError(f"has_aux is for grad and value_and_grad, not {self.name}")

    def like(self, fun: Callable, argnums: int | Sequence[int],
             static_argnums: Sequence[int], backend: str | None = None) -> Signature:
        """The same transformation of another function (the function of a pytree's
        leaves, of keyword trees; on another backend)."""
        return type(self)(fun, argnums, static_argnums, backend or self.backend, self.has_aux,
                          self.holomorphic)

    def positions(self, n: int) -> tuple[frozenset[int], frozenset[int]]:
        """The differentiated and the static positions among ``n`` arguments."""
        known = self._by_arity.get(n)
        if known is not None:
            return known
        for i in self.argnums:
            if not -n <= i < n:
                raise ValueError(f"argnums {i} is out of range for {n} arguments")
        diff = frozenset(i % n for i in self.argnums)
        static = frozenset(i % n for i in self.static_argnums if -n <= i < n)
        if diff & static:
            raise ValueError("an argument cannot be both differentiated and static")
        self._by_arity[n] = diff, static
        return diff, static

    def wrt(self, n: int) -> list[str]:
        """The names of the differentiated arguments of a call with ``n`` arguments."""
        names = self.names(n)
        return [names[i % n] for i in self.argnums]

    # -- what differs --------------------------------------------------------------
    def check_gradient(self, gradient: Any) -> None:
        """Refuse a ``gradient=`` this transformation has no use for."""

    def describe(self, graph_name: str, n: int, n_primal: int) -> tuple[str, dict[int, str]]:
        """The kernel's description, and the names of its gradient outputs."""
        wrt = self.wrt(n)
        title = f"{self.name} of {graph_name} with respect to {', '.join(wrt)}"
        return title, {n_primal + k: f"grad_{name}" for k, name in enumerate(wrt)}

    def prepare(self, graph: Graph) -> Graph:
        """The traced graph as this transformation computes it (itself, but for
        :class:`LinearizedJit`)."""
        return graph

    def plan(self, graph: Graph, out_tree: Tree, avals: list[Aval | None], n_args: int,
             seeded: bool) -> tuple[list[int] | None, bool, int]:
        """What the pipeline derives from the traced ``graph``: the inputs to
        differentiate (``None``: none), whether the value is kept, and how many outputs
        after it are aux's leaves (``has_aux``). Checks that the function returns what
        the transformation needs."""
        raise NotImplementedError

    def result(self, outs: list, n_primal: int, out_tree: Tree) -> Any:
        """What the call returns, from the outputs of the transformed graph."""
        raise NotImplementedError

    def regroup(self, result: Any, n: int, trees: list, groups: tuple) -> Any:
        """The result of a call with pytree arguments, from the result of the function of
        their leaves (``groups``: per argument, its leaves' positions; ``trees``: per
        argument, its structure, or None)."""
        raise NotImplementedError

    def fast_picks(self, n_primal: int, n_outs: int, is_tuple: bool) -> tuple[tuple, int]:
        """The outputs the fast path returns, and in which form (``calls._ONE``, ...)."""
        raise NotImplementedError


class Jit(Signature):
    """``sg.jit``: the function itself, compiled; it differentiates nothing."""

    name = "jit"
    differentiates = False

    def check_gradient(self, gradient: Any) -> None:
        if gradient is not None:
            raise TypeError("jit functions take no gradient=; use grad or vjp")

    def describe(self, graph_name: str, n: int, n_primal: int) -> tuple[str, dict[int, str]]:
        return f"jit of {graph_name}", {}

    def plan(self, graph: Graph, out_tree: Tree, avals: list[Aval | None], n_args: int,
             seeded: bool) -> tuple[list[int] | None, bool, int]:
        return None, True, 0

    def result(self, outs: list, n_primal: int, out_tree: Tree) -> Any:
        return unflatten(out_tree, outs[:n_primal])

    def regroup(self, result: Any, n: int, trees: list, groups: tuple) -> Any:
        return result

    def fast_picks(self, n_primal: int, n_outs: int, is_tuple: bool) -> tuple[tuple, int]:
        return tuple(range(n_primal)), _TUPLE if is_tuple else _ONE


class LinearizedJit(Jit):
    """The primal output of ``sg.vjp``, ``sg.jvp`` and ``sg.linearize``: the function
    as differentiated (JAX's linearized primal), where a ``custom_jvp`` call gives its jvp
    rule's primal output (:func:`symgrad.prims.control.linearized_graph`; the same as
    the function's unless the rule breaks JAX's contract)."""

    def prepare(self, graph: Graph) -> Graph:
        return linearized_graph(graph)


class Grad(Signature):
    """``sg.grad``: the gradients with respect to ``argnums`` (with ``has_aux``: and aux)."""

    name = "grad"
    #: the value comes out before the gradients (value_and_grad)
    keeps_value = False
    #: the function may return several outputs, given several cotangents (vjp)
    several_outputs = False

    def _check_aux(self, has_aux: bool) -> None:
        pass  # grad and value_and_grad take has_aux

    def plan(self, graph: Graph, out_tree: Tree, avals: list[Aval | None], n_args: int,
             seeded: bool) -> tuple[list[int] | None, bool, int]:
        n_aux = 0
        if self.has_aux:
            if out_tree.kind not in ("tuple", "list") or len(out_tree.children) != 2 \
                    or out_tree.children[0].kind != "leaf":
                raise TypeError(f"with has_aux=True, {self.title} must return a pair "
                                f"(value, aux), not the structure {out_tree}")
            n_aux = len(graph.outputs) - 1
            graph, out_tree = replace(graph, outputs=graph.outputs[:1]), LEAF
        # gradients come out in argnums order: wrt is the graph inputs in that order
        position = {i: k for k, i in enumerate(i for i, a in enumerate(avals) if a is not None)}
        if self.holomorphic:
            check_holomorphic_inputs(self.name, [graph.inputs[position[i % n_args]].aval
                                                 for i in self.argnums])
        self._check_differentiable(graph, out_tree.kind != "leaf", seeded)
        return [position[i % n_args] for i in self.argnums], self.keeps_value, n_aux

    def _check_differentiable(self, graph: Graph, is_tuple: bool, seeded: bool) -> None:
        name = self.title
        if is_tuple and not self.several_outputs:
            raise TypeError(f"{self.name} needs {name} to return one array, but it returns a "
                            f"tuple of {len(graph.outputs)}; use symgrad.vjp for several "
                            "outputs")
        for out in graph.outputs:
            if is_complex(out.dtype) and (self.holomorphic or self.several_outputs):
                continue
            if self.holomorphic and is_float(out.dtype):  # JAX's rule
                raise TypeError(f"{self.name} with holomorphic=True requires outputs with "
                                f"complex dtype, but {name} returns {out.aval}")
            if is_complex(out.dtype):  # JAX's rule and message
                raise TypeError(
                    f"{self.name} requires real-valued outputs, but {name} returns "
                    f"{out.aval} (complex). For holomorphic differentiation, pass "
                    "holomorphic=True. For differentiating non-holomorphic functions "
                    "involving complex outputs, use symgrad.vjp directly (or return a real "
                    "value: np.abs(z) ** 2, np.real(z))")
            if not is_float(out.dtype):
                raise TypeError(f"{name} returns a {out.aval} value, which has no gradient; "
                                "return a float array")
        if not seeded and graph.outputs[0].shape != ():
            raise ValueError(
                f"{SCALAR_OUTPUT_ERROR}: {name} returns {graph.outputs[0].aval}. Pass "
                "gradient= (an array of the output's shape) to get the gradient of "
                "sum(output * gradient), or reduce the output to a scalar (np.sum, np.mean) "
                "in the function.")

    def result(self, outs: list, n_primal: int, out_tree: Tree) -> Any:
        primal, grads = outs[:n_primal], outs[n_primal:]
        aux = None
        if self.has_aux:  # primal: the value (value_and_grad only), then aux's leaves
            aux = unflatten(out_tree.children[1], primal[len(primal) - _aux_leaves(out_tree):])
        g = grads[0] if self.single else tuple(grads)
        return self._with_gradients(self._rest(primal, aux), g)

    def _rest(self, primal: list, aux: Any) -> Any:
        """What the result holds besides the gradients: aux (``has_aux``), or nothing."""
        return aux

    def _with_gradients(self, rest: Any, g: Any) -> Any:
        """The result: the gradients ``g`` with :meth:`_rest`."""
        return (g, rest) if self.has_aux else g

    def _gradients(self, result: Any) -> tuple[Any, Any]:
        """The gradients in a result, and the rest (the inverse of :meth:`_with_gradients`)."""
        return result if self.has_aux else (result, None)

    def regroup(self, result: Any, n: int, trees: list, groups: tuple) -> Any:
        grads, rest = self._gradients(result)
        it = iter(grads)
        per_arg = []
        for i in self.argnums:
            part = [next(it) for _ in groups[i % n]]
            tree = trees[i % n]
            per_arg.append(part[0] if tree is None else unflatten(tree, part))
        return self._with_gradients(rest, per_arg[0] if self.single else tuple(per_arg))

    def fast_picks(self, n_primal: int, n_outs: int, is_tuple: bool) -> tuple[tuple, int]:
        return tuple(range(n_primal, n_outs)), _ONE if self.single else _TUPLE


class ValueAndGrad(Grad):
    """``sg.value_and_grad``: the value (with ``has_aux``: and aux), then the gradients."""

    name = "value_and_grad"
    keeps_value = True

    def _rest(self, primal: list, aux: Any) -> Any:
        return (primal[0], aux) if self.has_aux else primal[0]

    def _with_gradients(self, rest: Any, g: Any) -> Any:
        return rest, g

    def _gradients(self, result: Any) -> tuple[Any, Any]:
        return result[1], result[0]

    def fast_picks(self, n_primal: int, n_outs: int, is_tuple: bool) -> tuple[tuple, int]:
        # one primal output, then the gradients
        return (0, *range(n_primal, n_outs)), _TUPLE if self.single else _VALUE_AND_GRADS


class Vjp(Grad):
    """The pullback of ``sg.vjp``: gradients of ``sum(outputs * cotangents)`` with respect
    to every traced argument, for a function that may return several outputs."""

    name = "vjp"
    several_outputs = True

    def _check_aux(self, has_aux: bool) -> None:
        Signature._check_aux(self, has_aux)
