"""Large graphs split into bounded kernels (symgrad.split): the pieces are valid
graphs that together compute what the whole graph does, bit for bit, on the
interpreter and through grad, vjp and Tensor.backward on Numba kernels."""

from __future__ import annotations

import numpy as np
import pytest

import symgrad as torch
from symgrad.backend import program
from symgrad.backend.numba import compile as kernels
from symgrad.backend.numba import split
from symgrad.backend.numba.lowering import lowering
from symgrad.core.check import check
from symgrad.core.interpreter import interpret
from symgrad.core.ir import Aval, Eqn, Graph, Literal, Var
from symgrad.eager import backward as autograd
from symgrad.prims import REGISTRY, add_p, mul_p, sin_p
from symgrad.transforms.api import Grad, Jit, Transformed, Vjp

from cases import CASES
from oracle import assert_close, finite_differences

LIMIT = 20  # equations per kernel in the compiled tests: a few kernels of ~0.5 s each


def recurrence(steps: int):
    def f(x, w):
        for _ in range(steps):
            x = np.sin(x) * w + 0.5 * x
        return np.sum(x)
    return f


def run_pieces(graph: Graph, max_eqns: int, *args) -> tuple:
    """The pieces of ``graph``, checked, run one after another on the interpreter."""
    pieces = split.split(graph, max_eqns)
    for p in pieces:
        check(p)
        assert len(p.eqns) <= max_eqns
    assert [e for p in pieces for e in p.eqns] == list(graph.eqns), "program order, all kept"
    steps = [lambda *a, p=p: tuple(interpret(p, *a)) for p in pieces]
    return program.Chain(graph, pieces, steps)(*args)


def assert_bitwise(got, want) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w, strict=False)
        assert np.asarray(g).tobytes() == np.asarray(w).tobytes()


# -- the pass, on the interpreter ------------------------------------------------------------

@pytest.mark.parametrize("case", CASES[::3], ids=str)
def test_pieces_of_every_case_compute_the_whole_graph_bitwise(case):
    """Forward and adjoint of every third case of the primitive table, cut after
    every 1, 2 or 5 equations."""
    args = case.args()
    n = len(args)
    forward = Transformed(Jit(case.fn, backend="numpy"))
    ct = np.ones(np.shape(forward(*args)))
    t = Transformed(Vjp(case.fn, argnums=tuple(range(n)), backend="numpy"))
    spec, inputs = t._prepare(args, ct)
    want = interpret(spec.graph, *inputs)
    # A piece's outputs are contiguous copies (never views), and BLAS may round a
    # product of contiguous arrays differently from one of a transposed view.
    # (no primitive is of kind "linalg": the BLAS/LAPACK ones are those whose Numba
    # lowering lives in the linalg or decompositions family)
    blas = any(lowering(REGISTRY[p]).emit.__module__ in (
        "symgrad.backend.numba.lowering.linalg", "symgrad.backend.numba.lowering.decompositions")
               for p in case.prims)
    for max_eqns in (1, 2, 5):
        got = run_pieces(spec.graph, max_eqns, *inputs)
        if blas:
            for g, w in zip(got, want):
                assert_close(g, w, rtol=1e-14, atol=1e-15)
        else:
            assert_bitwise(got, want)


def test_a_graph_within_the_limit_is_one_piece_itself():
    graph = Transformed(Grad(recurrence(3), backend="numpy")).graph(np.ones(3), np.ones(3))
    assert split.split(graph, len(graph.eqns)) == [graph]
    assert len(split.split(graph, len(graph.eqns) - 1)) == 2


def test_cuts_go_where_fewest_values_cross(monkeypatch):
    """An unrolled recurrence: cut between steps (one value and its residual live), not
    inside one; the forward pieces of equal length then have the same structure."""
    monkeypatch.setattr(torch.config, "reroll", False)  # unrolled, not one loop
    graph = Transformed(Grad(recurrence(40), backend="numpy")).graph(np.ones(3), np.ones(3))
    built = program.build(graph, "f", "test", backend="numpy", max_eqns=LIMIT)
    assert len(built.pieces) > 10
    assert len({s.key for s in built.sources}) <= 6, "repeated pieces share one source"


def test_outputs_that_are_inputs_constants_literals_or_repeated_and_values_read_later():
    x, y = Var(Aval((3,)), "x"), Var(Aval(()), "y")
    k = Var(Aval((3,)), "k")
    const = np.arange(3.0)
    const.flags.writeable = False
    a, b, c, d, e = (Var(Aval((3,))) for _ in range(5))
    eqns = (Eqn(sin_p, (x,), a),          # a: read by two later pieces, and returned twice
            Eqn(mul_p, (a, k), b),        # the constant k: read by two pieces
            Eqn(add_p, (b, a), c),
            Eqn(mul_p, (c, k), d),
            Eqn(add_p, (d, y), e))
    graph = check(Graph((x, y), eqns, (e, x, k, Literal(2.0), a, a, y, c), ((k, const),)))
    args = (np.array([0.5, 1.0, 2.0]), 0.25)
    want = interpret(graph, *args)
    for max_eqns in (1, 2, 3, 4):
        got = run_pieces(graph, max_eqns, *args)
        assert_bitwise(got, want)
        arrays = [g for g in got if isinstance(g, np.ndarray)]
        assert not any(np.shares_memory(g, h) for i, g in enumerate(arrays)
                       for h in arrays[i + 1:]), "repeated outputs are copies"
        assert not np.shares_memory(got[1], args[0]) and not np.shares_memory(got[2], const)
    pieces = split.split(graph, 1)
    assert [len(p.consts) for p in pieces] == [0, 1, 0, 1, 0]
    assert [p.outputs for p in pieces] == [(a,), (b,), (c,), (d,), (e,)]
    assert pieces[2].inputs == (a, b) and pieces[4].inputs == (y, d)


# -- compiled: grad and Tensor.backward ------------------------------------------------------

def test_an_unrolled_200_step_recurrence_runs_as_bounded_kernels(monkeypatch):
    monkeypatch.setattr(torch.config, "reroll", False)  # unrolled, not one loop
    monkeypatch.setattr(split, "MAX_EQNS", LIMIT)
    monkeypatch.setattr(split, "SPLIT_ABOVE", LIMIT)
    monkeypatch.setattr(split, "FEW_ARRAYS", -1)  # split even a graph fused into one loop
    f = recurrence(200)
    x, w = 0.7, -0.45  # |w cos x + 0.5| < 1: the recurrence contracts; scalars compile fast
    g = torch.grad(f)
    before = kernels.compile_stats()["kernels"]
    got = g(x, w)
    spec = g._prepare((x, w), None)[0]
    assert len(spec.pieces) > 1 and all(len(p.eqns) <= LIMIT for p in spec.pieces)
    assert spec.source.text.count("@njit") == len(spec.pieces)
    distinct = kernels.compile_stats()["kernels"] - before
    assert 1 < distinct < len(spec.pieces), "pieces of the same structure share a kernel"

    assert_bitwise([got], [torch.grad(f, backend="numpy")(x, w)])
    assert_close(got, finite_differences(f, [x, w], 0), rtol=1e-7, atol=1e-10)
    whole = interpret(spec.graph, x, w)
    assert_close(got, whole[-1], rtol=1e-13, atol=0)  # grad computes only the gradient


@pytest.mark.kernels
def test_tensor_backward_through_split_kernels(monkeypatch):
    monkeypatch.setattr(split, "MAX_EQNS", LIMIT)
    monkeypatch.setattr(split, "SPLIT_ABOVE", LIMIT)
    monkeypatch.setattr(split, "FEW_ARRAYS", -1)  # split even a graph fused into one loop
    monkeypatch.setattr(autograd, "_CACHE", type(autograd._CACHE)())
    w = torch.tensor(-0.45)
    want = Transformed(Grad(recurrence(30), backend="numpy"))(0.7, -0.45)
    # interpreted, then compiled, then the cached kernels (the first step's structure
    # reads no kept value of the forward: a structure of its own, interpreted once)
    for _ in range(4):
        x = torch.tensor(0.7, requires_grad=True)
        y = x
        for _ in range(30):
            y = np.sin(y) * w + 0.5 * y
        y.sum().backward()
        assert_close(x.grad.numpy(), want, rtol=1e-13, atol=1e-15)
    (entry,) = [e for e in autograd._CACHE.values() if e.kernel is not None]
    assert isinstance(entry.kernel, program.Chain) and len(entry.kernel.pieces) > 1
    assert all(len(p.eqns) <= LIMIT for p in entry.kernel.pieces)
