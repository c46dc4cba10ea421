"""The IR checker: :func:`check` raises :class:`IRError` on a malformed graph and
prints the equations around the bad one. ``SYMGRAD_CHECK_IR=1`` (the test
suite sets it) makes :func:`symgrad.transforms.pipeline.derive` run it after every pass.
"""

from __future__ import annotations

import os

import numpy as np

from .ir import DTYPES, Graph, IRError, Literal, Var, pformat_around, subgraphs


def enabled() -> bool:
    """Whether ``SYMGRAD_CHECK_IR=1`` asks for the checker after every pass."""
    return os.environ.get("SYMGRAD_CHECK_IR") == "1"


def check(graph: Graph) -> Graph:
    """Raise :class:`IRError` unless ``graph`` is well formed; return it.

    Checks: every variable is defined once before use; literals and values have
    the declared dtypes; each equation's output aval is what its primitive's
    shape rule says; parameters are hashable; constants match their avals. A
    graph held as a parameter (a loop's body) is checked too: it is closed (it
    reads only its own inputs) and has no constants (its arrays are operands of
    the equation that holds it); the primitive's shape rule checks that its
    inputs and outputs fit the equation's operands.
    """
    defined: set[int] = set()

    def define(v: Var, where: str) -> None:
        if not isinstance(v, Var):
            _fail(graph, None, f"{where} is {v!r}, not a Var")
        if id(v) in defined:
            _fail(graph, None, f"{where} {v!r} is defined twice")
        if v.dtype not in DTYPES:
            _fail(graph, None, f"{where} {v!r} has unknown dtype {v.dtype}")
        defined.add(id(v))

    for v in graph.inputs:
        define(v, "input")
    for v, value in graph.consts:
        define(v, "const")
        if not isinstance(value, np.ndarray) or value.shape != v.shape:
            _fail(graph, None, f"const {v!r} is bound to {type(value).__name__} "
                  f"of shape {getattr(value, 'shape', None)}")
        if value.dtype != np.dtype(v.dtype) or value.flags.writeable:
            _fail(graph, None, f"const {v!r} must be a read-only {v.dtype} array")
    for i, eqn in enumerate(graph.eqns):
        for a in eqn.inputs:
            if isinstance(a, Var) and id(a) not in defined:
                _fail(graph, i, f"input {a!r} is used before it is defined")
            if not isinstance(a, (Var, Literal)):
                _fail(graph, i, f"operand {a!r} is not an atom")
        try:
            hash(tuple(eqn.params.items()))
        except TypeError:
            _fail(graph, i, f"params {dict(eqn.params)} are not hashable")
        try:
            expected = eqn.prim.shape_rule(*(a.aval for a in eqn.inputs), **eqn.params)
        except Exception as e:  # the rule's own message says what is wrong
            _fail(graph, i, f"shape rule of {eqn.prim.name} rejects its inputs: {e}")
        if expected != eqn.out.aval:
            _fail(graph, i, f"output is {eqn.out.aval} but {eqn.prim.name} gives {expected}")
        for key, sub in subgraphs(eqn):
            if sub.consts:
                _fail(graph, i, f"the graph {key}={sub.name} has constants; they must be "
                      "operands of the equation")
            try:
                check(sub)
            except IRError as e:
                _fail(graph, i, f"in the graph {key}={sub.name}: {e}")
        define(eqn.out, "output of equation")
    for a in graph.outputs:
        if isinstance(a, Var) and id(a) not in defined:
            _fail(graph, None, f"graph output {a!r} is not defined")
    return graph


def _fail(graph: Graph, index: int | None, message: str) -> None:
    raise IRError(f"{message}\n{pformat_around(graph, index)}")
