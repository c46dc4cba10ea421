"""Passes: each small and pure, checked by the IR checker; all but the accuracy rewrites
exact to the bit (passes.EXACT), which the corpus tests check."""

from __future__ import annotations

import numpy as np
import pytest

import symgrad as sg
from symgrad.core.check import check
from symgrad.core.interpreter import interpret
from symgrad.numpy_api import functions as ops
from symgrad.passes.adjoint import adjoint
from symgrad.passes.rewrites import (
    EXACT,
    PIPELINE,
    cse,
    dce,
    fold_constants,
    improve_accuracy,
    optimize,
    simplify,
)

from oracle import forward_graph


def prims(graph) -> list[str]:
    return [e.prim.name for e in graph.eqns]


def bits(x) -> np.ndarray:
    """float64 values as bit patterns: equal means equal to the last bit, -0.0 included;
    every NaN maps to one pattern (IEEE leaves the sign of a NaN result unspecified)."""
    x = np.asarray(x, dtype=np.float64)
    return np.where(np.isnan(x), np.nan, x).view(np.int64)


# A corpus of functions whose optimized forms must compute bit-identical results,
# fed inputs with signed zeros, infinities and nans.
CORPUS = [
    lambda x: x * 1.0 + -0.0 - 0.0,
    lambda x: (x / 1.0) * -1.0 + x / -1.0,
    lambda x: -(-x) + np.power(x, 1.0) + np.power(x, 2.0) + np.power(x, -1.0),  # noqa: B002
    lambda x: np.power(x, 0.0) * x + np.power(x, -0.0),
    lambda x: np.sum(x * 2.0) + np.sum(x * 2.0) + np.mean(2.0 * x),
    lambda x: sg.where(x > 0, x, x) + sg.where(True, x, 0.0) + sg.where(2.0 > 3.0, 1.0, x),
    lambda x: np.reshape(np.reshape(x, (2, 3)), (3, 2)).T.T.sum(axis=0),
    lambda x: np.transpose(np.transpose(x.reshape(1, 2, 3), (1, 2, 0)), (2, 0, 1)).ravel(),
    lambda x: np.broadcast_to(np.reshape(2.0, (1,)), (6,)) * x + np.exp(np.log(3.0)),
    lambda x: np.broadcast_to(x.reshape(6, 1), (6, 4)).sum(axis=1) * (1.0 + 2.0),
    lambda x: np.maximum(np.broadcast_to(0.5, (6,)), 1.0) + x,
    lambda x: sg.where(sg.where(x > 1.0, 2.0, 0.0) > 0.0, x, -x),
]
SPECIAL = np.array([0.0, -0.0, 1.5, -np.inf, np.nan, 3.0])


def optimize_exact(graph):
    return optimize(graph, EXACT)


@pytest.mark.parametrize("k", range(len(CORPUS)))
@pytest.mark.parametrize("run_pass", [*EXACT, optimize_exact], ids=lambda p: p.__name__)
def test_passes_are_exact_and_keep_the_graph_well_formed(k, run_pass):
    fn = CORPUS[k]
    graph = forward_graph(fn, SPECIAL)
    new = check(run_pass(graph))
    with np.errstate(all="ignore"):
        want = fn(SPECIAL)
    assert np.array_equal(bits(interpret(new, SPECIAL)[0]), bits(want))


@pytest.mark.parametrize("k", range(len(CORPUS)))
def test_passes_are_exact_on_adjoint_graphs(k):
    graph = forward_graph(lambda x: np.sum(CORPUS[k](x) ** 3), SPECIAL)
    full = check(adjoint(graph, [0], seed_inputs=False))
    x = np.array([0.5, -0.0, 1.5, -2.0, 0.25, 3.0])
    before, after = interpret(full, x), interpret(check(optimize(full, EXACT, checked=True)), x)
    for a, b in zip(before, after):
        assert np.array_equal(bits(a), bits(b))


def test_optimize_reaches_a_fixed_point():
    graph = optimize(forward_graph(CORPUS[3], SPECIAL))
    for p in PIPELINE:
        assert p(graph) is graph, f"{p.__name__} still changes an optimized graph"
    assert optimize(graph) is graph


def test_dce_drops_dead_equations_and_constants():
    def f(x):
        np.exp(x) * np.array([1.0, 2.0])  # traced, then dead
        return np.sin(x)
    graph = forward_graph(f, np.ones(2))
    assert prims(graph) == ["exp", "mul", "sin"] and len(graph.consts) == 1
    new = check(dce(graph))
    assert prims(new) == ["sin"] and new.consts == ()
    assert dce(new) is new


def test_cse_merges_repeated_and_commuted_work():
    graph = forward_graph(lambda x, y: np.sin(x * y) + np.sin(y * x) + np.sin(x * y), 1.0, 2.0)
    new = check(dce(cse(graph)))
    assert prims(new) == ["mul", "sin", "add", "add"]


def test_cse_keeps_distinct_literals_apart():
    graph = forward_graph(lambda x: (x + 0.0) * (x + -0.0), 1.0)
    assert prims(dce(cse(graph))) == ["add", "add", "mul"]


def test_cse_does_not_merge_different_params():
    fn = lambda x: np.sum(x, axis=0).sum() + np.sum(x, axis=1).sum()
    graph = forward_graph(fn, np.ones((2, 2)))
    assert prims(dce(cse(graph))).count("sum") == 4


def test_constant_folding_folds_scalars_only():
    # (a numpy number the function computes, np.float64(2.0) * 3.0, is a kernel argument
    # instead: tests/test_captured_numbers.py)
    fn = lambda x: x * (2.0 * 3.0 + sg.where(1.0 > 2.0, 1.0, 5.0))
    graph = forward_graph(fn, 1.0)
    new = check(optimize(graph))
    assert str(new).count("mul(x, 11.0)") == 1
    # (np.broadcast_to of a constant would run in numpy at trace time; ops records it)
    arrays = forward_graph(lambda x: x + ops.broadcast_to(2.0, (3,)) * 2.0, np.ones(3))
    folded = check(fold_constants(arrays))
    assert "broadcast_to" in prims(folded), "arrays are left for the kernel to build"


@pytest.mark.parametrize("fn, expected", [
    (lambda x: x * 1.0, []),                        # x * 1.0 -> x
    (lambda x: 1.0 * x, []),
    (lambda x: x / 1.0, []),                        # x / 1.0 -> x
    (lambda x: x - 0.0, []),                        # x - 0.0 -> x
    (lambda x: x + -0.0, []),                       # x + -0.0 -> x
    (lambda x: x + 0.0, ["add"]),                   # not exact for x = -0.0: kept
    (lambda x: x * 0.0, ["mul"]),                   # not exact for inf and nan: kept
    (lambda x: x * -1.0, ["mul"]),                  # flips a NaN's sign bit: kept
    (lambda x: -(-x), []),  # noqa: B002            -(-x) -> x
    (lambda x: np.power(x, 1.0), []),               # x ** 1.0 -> x
    (lambda x: np.power(x, 0.0), ["broadcast_to"]),  # x ** 0.0 -> 1.0, nan and inf too
    (lambda x: np.power(x, 2.0), ["square"]),       # x ** 2.0 -> square(x)
    (lambda x: np.power(x, -1.0), ["reciprocal"]),  # x ** -1.0 -> reciprocal(x)
    (lambda x: sg.where(x > 0, x, x), []),          # where(c, x, x) -> x
    (lambda x: x.T.T, []),                          # transpose(transpose(x)) -> x
    (lambda x: x.reshape(3, 2).reshape(6), []),     # reshape(reshape(x)) -> x
    (lambda x: x * np.broadcast_to(2.0, (6,)), ["mul"]),  # elementwise ops broadcast by themselves
    (lambda x: sg.where(sg.where(x > 1, 1.0, 0.0) > 0, x, 2.0), ["gt", "where"]),  # a mask > 0 -> c
    (lambda x: sg.where(sg.where(x > 1, 0.0, 1.0) > 0, x, 2.0), ["gt", "where", "gt", "where"]),
])
def test_simplification_rules(fn, expected):
    graph = forward_graph(fn, np.arange(6.0))
    new = check(dce(optimize(graph, (simplify, dce))))
    assert prims(new) == expected, str(new)


def test_relu_under_a_where_mask_needs_no_mask_of_its_own():
    """relu's VJP, where(x > 0, g, 0), is 0 wherever a where zeroed its cotangent g, so the
    adjoint adds no where(mask > 0, ...) after it (LeNet's backward computed a col2im of
    the mask for it); the gradient is unchanged (and where(x > 1, sqrt(x - 1), 0) still
    gets its mask: no nan leaks)."""
    def f(x):
        return np.sum(sg.where(x > 0, sg.relu(x - 2.0), 0.0) + sg.where(x > 1, np.sqrt(x - 1.0),
                                                                         0.0))
    x = np.array([-1.0, 0.0, 1.5, 3.0, 5.0])
    graph = forward_graph(f, x)
    full = check(optimize(adjoint(graph, [0], seed_inputs=False)))
    expected = np.where(x > 2, 1.0, 0.0) + np.where(x > 1, 0.5 / np.sqrt(np.abs(x - 1.0)), 0.0)
    np.testing.assert_array_equal(interpret(full, x)[1], expected)
    # each where's cotangent (its mask too), sqrt's masked VJP, relu's VJP: no fifth where
    # (relu's VJP masked again)
    assert prims(full)[len(graph.eqns):].count("where") == 4, str(full)


def test_broadcast_hoisting_computes_small_then_broadcasts():
    graph = forward_graph(lambda x: np.broadcast_to(x, (3, 4)) * 2.0, np.ones(4))
    new = check(optimize(graph))
    assert prims(new) == ["mul", "broadcast_to"]
    assert new.eqns[0].out.shape == (4,)


def test_passes_do_not_mutate_their_input():
    graph = forward_graph(CORPUS[2], SPECIAL)
    text = str(graph)
    optimize(graph)
    assert str(graph) == text


@pytest.mark.parametrize("k", range(len(CORPUS)))
def test_adjoint_comments_cite_equations_of_the_optimized_graph(k):
    graph = forward_graph(lambda x: np.sum(CORPUS[k](x) ** 2) * np.sum(np.sin(x)), SPECIAL)
    full = optimize(adjoint(graph, [0], seed_inputs=False))
    present = {id(e) for e in full.eqns}
    defined = {id(e.out) for e in full.eqns}
    for e in full.eqns:
        if e.origin is not None and id(e.origin.out) in defined:
            assert id(e.origin) in present, f"cites a replaced equation: {e.origin.prim.name}"


@pytest.mark.parametrize("fn, expected", [
    (lambda x: np.log(1.0 + x), ["log1p"]),         # log(1 + x) -> log1p(x)
    (lambda x: np.log(x + 1.0), ["log1p"]),
    (lambda x: np.exp(x) - 1.0, ["expm1"]),         # exp(x) - 1 -> expm1(x)
    (lambda x: np.log(2.0 + x), ["add", "log"]),    # only 1
    (lambda x: 1.0 - np.exp(x), ["exp", "sub"]),    # only exp(x) - 1
    (lambda x: np.log(np.ones(3) + x), ["add", "log"]),  # a literal 1, not an array of ones
])
def test_accuracy_rewrites(fn, expected):
    graph = forward_graph(fn, np.arange(3.0))
    new = check(dce(optimize(graph, (improve_accuracy, dce))))
    assert prims(new) == expected, str(new)


def test_accuracy_rewrites_are_more_accurate_and_keep_special_values():
    x = np.array([1e-17, -1e-17, 1e-10, 0.0, -1.0, np.inf, -np.inf, np.nan, 3.0])
    fns = [(lambda x: np.log(1.0 + x), np.log1p), (lambda x: np.exp(x) - 1.0, np.expm1)]
    for fn, accurate in fns:
        with np.errstate(all="ignore"):
            got = sg.jit(fn, backend="numpy")(x)
            want = accurate(x)
        assert np.array_equal(bits(got), bits(want))
        assert got[0] == 1e-17 and fn(x[:1])[0] != 1e-17  # the unrewritten form cancels
    assert improve_accuracy in PIPELINE and improve_accuracy not in EXACT
