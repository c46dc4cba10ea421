"""The public API: grad, value_and_grad, vjp, jit, gradient=, inspection, arguments."""

from __future__ import annotations

import numpy as np
import pytest

import symgrad as sg
from symgrad.core.ir import Graph

from oracle import assert_close

X = np.array([[1.0, 2.0], [3.0, 4.0]])


def seed(x):
    return np.mean(3 * (x + 2) ** 2)


def test_grad_as_plain_decorator():
    f = sg.grad(seed)
    assert np.array_equal(f(np.ones((2, 2))), np.full((2, 2), 4.5))
    assert f.__name__ == "seed" and f.__wrapped__ is seed


def test_grad_with_argnums_as_decorator():
    @sg.grad(argnums=1)
    def f(x, y):
        return np.sum(x * y ** 2)
    assert_close(f(X, 3.0), 2 * 3.0 * X.sum())


def test_argnums_tuple_and_negative():
    f = lambda x, y, z: np.sum(x * y + z)
    gx, gz = sg.grad(f, argnums=(0, -1))(X, 2.0, np.ones(2))
    assert_close(gx, np.full((2, 2), 2.0))
    assert_close(gz, np.full(2, 2.0))
    gz, gx = sg.grad(f, argnums=(2, 0))(X, 2.0, np.ones(2))
    assert gz.shape == (2,) and gx.shape == (2, 2), "gradients come in argnums order"


def test_bad_argnums():
    with pytest.raises(TypeError, match="argnums"):
        sg.grad(seed, argnums=(0, 0))
    with pytest.raises(ValueError, match="out of range"):
        sg.grad(seed, argnums=3)(X)


def test_value_and_grad():
    value, g = sg.value_and_grad(seed)(np.ones((2, 2)))
    assert value == 27.0 and isinstance(value, np.float64)
    assert np.array_equal(g, np.full((2, 2), 4.5))


def test_vjp():
    y, pullback = sg.vjp(lambda x, s: np.sin(x) * s, X, 2.0)
    assert_close(y, np.sin(X) * 2.0)
    gx, gs = pullback(np.ones((2, 2)))
    assert_close(gx, 2.0 * np.cos(X))
    assert_close(gs, np.sin(X).sum())


def test_vjp_with_tuple_outputs_and_static_arguments():
    y, pullback = sg.vjp(lambda x, name: (x * 2.0, np.sum(x)), X, "label")
    assert isinstance(y, tuple) and len(y) == 2
    gx, gname = pullback((np.ones((2, 2)), 10.0))
    assert gname is None
    assert_close(gx, np.full((2, 2), 12.0))


def test_jit():
    f = sg.jit(lambda x, y: (np.exp(x) * y, np.sum(x)))
    a, b = f(X, 2.0)
    assert_close(a, np.exp(X) * 2.0)
    assert b == 10.0
    assert sg.jit(lambda x: x > 2.0)(X).dtype == np.bool_


def test_missing_gradient_for_vector_output():
    with pytest.raises(ValueError, match="^grad can be implicitly created only for scalar outputs"):
        sg.grad(lambda x: x * x)(X)


def test_gradient_of_wrong_shape():
    wrong = r"gradient has shape \(3,\) but <lambda> returns shape \(2, 2\)"
    with pytest.raises(ValueError, match=wrong):
        sg.grad(lambda x: x * x)(X, gradient=np.ones(3))
    with pytest.raises(TypeError, match="gradient is complex"):
        sg.grad(lambda x: x * x)(X, gradient=np.ones((2, 2), complex))


def test_size_one_gradient_for_scalar_output():
    # the seeds pass torch.Tensor([1.0]) as the gradient of a scalar
    assert np.array_equal(sg.grad(seed)(np.ones((2, 2)), gradient=np.array([2.0])),
                          np.full((2, 2), 9.0))


def test_integer_inputs_are_promoted():
    g = sg.grad(lambda x: np.sum(x ** 3))(np.array([1, 2, 3]))
    assert g.dtype == np.float64 and np.array_equal(g, [3.0, 12.0, 27.0])
    assert sg.grad(lambda x: x ** 2)(3) == 6.0
    assert sg.grad(lambda x: np.sum(x * x))([1, 2]).tolist() == [2.0, 4.0]


def test_python_numbers_are_traced_not_static():
    f = sg.grad(lambda x, s: np.sum(x * s))
    f(X, 2.0)
    f(X, 3.0)
    assert len(f._cache) == 1, "a new scalar value does not retrace"


def test_specializations_are_cached_per_shape():
    f = sg.grad(seed)
    f(np.ones((2, 2)))
    f(np.zeros((2, 2)))
    assert len(f._cache) == 1
    f(np.ones(3))
    assert len(f._cache) == 2


def test_static_arguments_must_be_hashable():
    f = sg.grad(lambda x, opts: np.sum(x) * len(opts))
    assert np.array_equal(f(X, ("a", "b")), np.full((2, 2), 2.0))
    with pytest.raises(TypeError, match="static.*hashable"):
        f(X, ["a", "b"])


def test_non_contiguous_and_read_only_inputs():
    big = np.arange(12.0).reshape(3, 4)
    f = sg.grad(lambda x: np.sum(np.sin(x)))
    assert_close(f(big[:, ::2]), np.cos(big[:, ::2]))
    assert_close(f(big.T), np.cos(big.T))
    ro = np.arange(4.0)
    ro.flags.writeable = False
    assert_close(f(ro), np.cos(ro))


def test_backends_agree_and_numpy_backend_needs_no_compile():
    f = lambda x: np.sum(np.tanh(x) ** 3)
    a = sg.grad(f, backend="numpy")(X)
    b = sg.grad(f)(X)
    assert_close(a, b, rtol=1e-14)
    with pytest.raises(ValueError, match="backend"):
        sg.grad(f, backend="torch")


def test_graph_and_source_inspection():
    f = sg.grad(seed)
    graph = f.graph(np.ones((2, 2)))
    assert isinstance(graph, Graph)
    # grad computes no value: the mean is cited by the adjoint, not computed
    assert "# grad of: " in str(graph) and "= mean(" in str(graph)
    assert len(graph.outputs) == 1
    both = sg.value_and_grad(seed).graph(np.ones((2, 2)))
    assert "d: f64[] = mean(c, axes=(0, 1))" in str(both) and len(both.outputs) == 2
    source = f.source(np.ones((2, 2)))
    assert "@njit(cache=True, error_model=\"numpy\", fastmath=False)" in source
    assert "def seed(x):" in source and "grad_x" in source
    assert source.startswith("# symgrad kernel k_")


def test_grad_needs_one_float_output():
    with pytest.raises(TypeError, match="tuple"):
        sg.grad(lambda x: (x, x))(1.0)
    with pytest.raises(TypeError, match="no gradient"):
        sg.grad(lambda x: x > 1.0)(1.0)
    with pytest.raises(TypeError, match="returned None"):
        sg.grad(lambda x: None)(1.0)


def test_jit_takes_no_gradient():
    with pytest.raises(TypeError, match="no gradient"):
        sg.jit(seed)(X, gradient=1.0)


def test_results_are_numpy_scalars_for_scalars():
    assert isinstance(sg.jit(lambda x: x * 2.0)(1.5), np.float64)
    assert isinstance(sg.grad(lambda x: x * 2.0)(1.5), np.float64)


def test_negative_static_argnums():
    f = sg.jit(lambda x, n: x * len(range(n)), static_argnums=(-1,))
    assert np.array_equal(f(np.ones(2), 3), [3.0, 3.0])
    with pytest.raises(ValueError, match="both differentiated and static"):
        sg.grad(lambda x, y: x * y, argnums=1, static_argnums=(-1,))(1.0, 2.0)


def test_static_values_are_keyed_by_their_bits():
    h = sg.jit(lambda x, s: np.sum(x / s), static_argnums=(1,), backend="numpy")
    assert h(np.ones(2), 0.0) == np.inf
    assert h(np.ones(2), -0.0) == -np.inf, "-0.0 is not 0.0"
    for _ in range(3):
        h(np.ones(2), float("nan"))
    assert len(h._cache) == 3, "nan finds its specialization again"
    r = sg.jit(lambda x, s: np.sum(x * np.imag(np.sqrt(s * np.ones(2)))), static_argnums=(1,),
               backend="numpy")
    for s in (complex(-4, 0.0), np.complex128(-4), np.complex64(-4)):  # sqrt: 2j
        assert r(np.ones(2), s) == 4.0
        assert r(np.ones(2), np.conj(s)) == -4.0, "-4 - 0j is not -4 + 0j"
    assert h(np.ones(2), np.float32(-0.0)) == -np.inf
    assert h(np.ones(2), np.float32(0.0)) == np.inf


def test_literal_arithmetic_in_vjp_rules_follows_ieee():
    # the seed 1.0 meeting a literal in a VJP rule: 1/0 is inf, not ZeroDivisionError
    assert np.array_equal(sg.grad(lambda x: np.sum(x) / 0.0)(np.ones(2)), [np.inf, np.inf])
    assert sg.grad(lambda x: np.mean(x))(np.zeros(0)).shape == (0,)
    g = sg.grad(lambda x, n: np.sum(x) / n, static_argnums=(1,))(np.ones(2), 0)
    assert np.array_equal(g, [np.inf, np.inf])


def test_vjp_of_a_ufunc():
    y, pullback = sg.vjp(np.sin, X)
    assert_close(pullback(np.ones((2, 2)))[0], np.cos(X))


def test_the_interpreter_backend_has_its_name_and_numpy_stays_an_alias():
    """backend="interpreter" names the core interpreter; "numpy", its older name, runs
    the same (no program breaks); any other name is refused with the list."""
    x = np.array([0.3, -1.2, 2.0])
    want = 2 * x * np.cos(x ** 2)  # d/dx sum(sin(x^2)), by hand
    by_name = sg.grad(lambda x: np.sum(np.sin(x ** 2)), backend="interpreter")
    by_alias = sg.grad(lambda x: np.sum(np.sin(x ** 2)), backend="numpy")
    np.testing.assert_allclose(by_name(x), want, rtol=1e-14)
    np.testing.assert_array_equal(by_name(x), by_alias(x))
    assert sg.jacfwd(np.sin, backend="interpreter")(x).shape == (3, 3)
    with pytest.raises(ValueError, match="'numba', 'interpreter', 'numpy'"):
        sg.jit(np.sin, backend="cuda")
