"""The IR: checker, text form, names, and the reference interpreter."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import symgrad as sg
from symgrad import prims as P
from symgrad.core.check import check
from symgrad.core.interpreter import interpret
from symgrad.core.ir import (
    Aval,
    Eqn,
    Graph,
    IRError,
    Literal,
    Var,
    assign_names,
    freeze_params,
    pformat,
)

from oracle import forward_graph


def small_graph() -> Graph:
    x = Var(Aval((2,)), "x")
    a = Var(Aval((2,)))
    b = Var(Aval(()))
    eqns = (Eqn(P.exp_p, (x,), a), Eqn(P.sum_p, (a,), b, freeze_params({"axes": (0,)})))
    return Graph((x,), eqns, (b,))


def test_a_well_formed_graph_passes_the_checker():
    assert check(small_graph()) is not None


def test_use_before_definition_is_reported_with_context():
    g = small_graph()
    swapped = replace(g, eqns=g.eqns[::-1])
    with pytest.raises(IRError, match="used before it is defined") as e:
        check(swapped)
    assert ">>" in str(e.value), "the printout marks the bad equation"


def test_double_definition_and_wrong_avals_are_reported():
    g = small_graph()
    with pytest.raises(IRError, match="defined twice"):
        check(replace(g, eqns=g.eqns + (g.eqns[0],)))
    bad = replace(g.eqns[1], out=Var(Aval((2,))))
    with pytest.raises(IRError, match=r"output is f64\[2\] but sum gives f64\[\]"):
        check(replace(g, eqns=(g.eqns[0], bad), outputs=(bad.out,)))


def test_shape_rule_violations_are_reported():
    g = small_graph()
    bad = replace(g.eqns[1], params=freeze_params({"axes": (1,)}))
    with pytest.raises(IRError, match="shape rule of sum rejects"):
        check(replace(g, eqns=(g.eqns[0], bad)))


def test_undefined_output_and_writable_consts_are_reported():
    g = small_graph()
    with pytest.raises(IRError, match="not defined"):
        check(replace(g, outputs=(Var(Aval(())),)))
    c = Var(Aval((2,)))
    with pytest.raises(IRError, match="read-only"):
        check(replace(g, consts=((c, np.ones(2)),)))


def test_text_form():
    graph = forward_graph(lambda x, y: np.sum(np.exp(x) * y + 2.0, axis=0), np.ones((2, 3)), 1.5)
    assert str(graph) == (
        "f(x: f64[2,3], y: f64[]) {\n"
        "  a: f64[2,3] = exp(x)\n"
        "  b: f64[2,3] = mul(a, y)\n"
        "  c: f64[2,3] = add(b, 2.0)\n"
        "  d: f64[3] = sum(c, axes=(0,))\n"
        "  return (d,)\n"
        "}")


def test_literals_print_as_python():
    graph = forward_graph(lambda x: (x + np.inf) * -0.0 - np.nan, 1.0)
    text = str(graph)
    assert "add(x, inf)" in text and "mul(a, -0.0)" in text and "sub(b, nan)" in text


def test_names_are_deterministic_and_never_collide():
    # arguments named like generated names and like reserved words
    def f(a, np_, b):
        return a * b + np_
    graph = sg.jit(f).graph(np.ones(2), np.ones(2), np.ones(2))
    names = assign_names(graph)
    assert len(set(names.values())) == len(names)
    assert [names[id(v)] for v in graph.inputs] == ["a", "np_", "b"]
    assert pformat(graph) == pformat(graph)


def test_many_values_get_unique_names():
    def f(x):
        for _ in range(60):
            x = np.sin(x)
        return x
    graph = forward_graph(f, 1.0)
    names = list(assign_names(graph).values())
    assert len(names) == 61 == len(set(names))
    assert "aa" in names and "if" not in names and "in" not in names


def test_interpreter_runs_numpy_semantics_without_warnings():
    graph = forward_graph(lambda x: np.log(x) / x, np.array([0.0, -1.0, 2.0]))
    with np.errstate(all="raise"):
        out = interpret(graph, np.array([0.0, -1.0, 2.0]))[0]
    assert np.isneginf(out[0]) and np.isnan(out[1]) and out[2] == np.log(2.0) / 2.0


def test_interpreter_outputs_are_owned():
    graph = forward_graph(lambda x: x, np.ones(3))
    x = np.ones(3)
    out = interpret(graph, x)[0]
    out[0] = 5.0
    assert x[0] == 1.0


def test_literal_identity_is_by_bits():
    assert Literal(0.0) != Literal(-0.0)
    assert Literal(float("nan")) == Literal(float("nan"))
    assert Literal(True) != Literal(1.0)
    assert Literal(1) != Literal(1.0) and Literal(1).dtype == "int64"  # a loop bound
    with pytest.raises(TypeError):
        Literal("1")
