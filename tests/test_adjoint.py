"""The adjoint transform: fan-out, un-broadcasting, cotangent inputs, higher order."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import symgrad as sg
from symgrad.core.check import check
from symgrad.core.interpreter import interpret
from symgrad.passes.adjoint import adjoint
from symgrad.passes.rewrites import optimize

from oracle import assert_close, finite_differences, forward_graph, rng_for, sympy_gradient


def grads(fn, *args, gradient=None, backend="numba"):
    argnums = tuple(range(len(args)))
    return sg.grad(fn, argnums=argnums, backend=backend)(*args, gradient=gradient)


def test_fan_out_accumulates():
    fn = lambda x: np.sum(x * x + np.sin(x) * x + np.exp(x) / x)
    x = rng_for("fan-out").uniform(0.5, 2, (2, 3))
    (g,) = grads(fn, x)
    assert_close(g, sympy_gradient(fn, [x])[0])


def test_unbroadcasting_sums_over_the_copies():
    fn = lambda a, b, c: np.sum(a * b + c, axis=0)
    a, b, c = np.ones((4, 1, 3)) * 0.5, np.arange(6.0).reshape(2, 3), 2.0
    ct = rng_for("unbroadcast").uniform(-1, 1, (2, 3))
    got = grads(fn, a, b, c, gradient=ct)
    want = sympy_gradient(fn, [a, b, c], ct)
    for g, w, arg in zip(got, want, (a, b, c)):
        assert np.shape(g) == np.shape(arg)
        assert_close(g, w)


def test_vector_output_is_the_gradient_of_sum_y_times_gradient():
    fn = lambda x, y: np.exp(x) * y - x ** 3
    rng = rng_for("vector-output")
    x, y, ct = rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (3,)), rng.uniform(-2, 2, (2, 3))
    got = grads(fn, x, y, gradient=ct)
    for g, w in zip(got, sympy_gradient(fn, [x, y], ct)):
        assert_close(g, w)
    for k, g in enumerate(got):
        assert_close(g, finite_differences(fn, [x, y], k, ct), rtol=1e-6, atol=1e-7)


def test_seed_vector_example():
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    g = sg.grad(lambda x: x * x)(x, gradient=np.array([5.0, 5, 5, 5, 5]))
    assert np.array_equal(g, [10.0, 20.0, 30.0, 40.0, 50.0])


def test_adjoint_graph_has_a_cotangent_input_of_the_output_shape():
    graph = forward_graph(lambda x: np.sin(x).T, np.ones((2, 3)))
    full = check(adjoint(graph, [0], seed_inputs=True))
    assert [v.shape for v in full.inputs] == [(2, 3), (3, 2)]
    assert full.inputs[1].hint == "ct"
    assert [a.shape for a in full.outputs] == [(3, 2), (2, 3)]


def test_scalar_seed_needs_a_scalar_output():
    graph = forward_graph(lambda x: x * 2.0, np.ones(3))
    with pytest.raises(ValueError, match="only for scalar outputs"):
        adjoint(graph, [0], seed_inputs=False)


def test_unused_input_gets_zeros():
    f = sg.grad(lambda x, y: np.sum(x ** 2), argnums=(0, 1))
    gx, gy = f(np.ones(3), np.ones((2, 2)))
    assert np.array_equal(gy, np.zeros((2, 2))) and gy.flags.writeable
    assert sg.grad(lambda x: 3.0)(2.0) == 0.0


def test_identity_and_constant_outputs():
    x = np.array([1.0, 2.0])
    g = sg.grad(lambda x: x)(x, gradient=np.array([3.0, 4.0]))
    assert np.array_equal(g, [3.0, 4.0])
    ct = np.array([3.0, 4.0])
    g[0] = 99.0
    assert x[0] == 1.0 and ct[0] == 3.0, "results never alias inputs"
    value, g = sg.value_and_grad(lambda x: x)(2.5)
    assert value == 2.5 and g == 1.0


def test_only_paths_from_differentiated_inputs_are_swept():
    graph = forward_graph(lambda x, y: np.sum(np.exp(y) * x), np.ones(2), np.ones(2))
    full = adjoint(graph, [0], seed_inputs=False)
    swept = {e.origin.prim.name for e in full.eqns if e.origin is not None}
    assert swept == {"sum", "mul"}, "exp(y) depends on y only: its VJP never runs"


def test_second_derivative_by_differentiating_the_adjoint():
    # the adjoint is IR, so it can be differentiated again
    fn = lambda x: np.sin(x) * x ** 3
    graph = forward_graph(fn, 0.7)
    first = optimize(adjoint(graph, [0], seed_inputs=False))
    gradient_only = replace(first, outputs=first.outputs[1:])
    second = check(optimize(adjoint(gradient_only, [0], seed_inputs=False)))
    x = 0.7
    want = -np.sin(x) * x ** 3 + 6 * x ** 2 * np.cos(x) + 6 * x * np.sin(x)
    assert_close(interpret(second, x)[1], want, rtol=1e-14)


@pytest.mark.parametrize("x", [
    [np.inf, 2.0], [np.inf, 0.0, 3.0], [-np.inf, np.inf, 2.0], [0.0, 0.0, 5.0], [0.0, 2.0, 3.0],
    [-np.inf, -np.inf, 0.5], [0.0, -np.inf], [1.5, 2.0, -4.0], [0.0, 0.0, np.inf, -1.0]])
@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_prod_gradient_is_the_product_of_the_others(x, backend):
    # exact also where elements are 0 or +-inf (no 0/0 or inf/inf)
    x = np.array(x)
    with np.errstate(all="ignore"):
        want = [np.prod(np.delete(x, i)) for i in range(len(x))]
    np.testing.assert_array_equal(sg.grad(np.prod, backend=backend)(x), want)
