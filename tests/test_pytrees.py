"""Pytree arguments and results, and has_aux (issue 15), against flat functions and
finite differences."""

import collections

import numpy as np
import pytest

import symgrad as sg
from symgrad.core.pytree import flatten, paths, unflatten

X = np.array([0.3, -1.0, 0.7])
PARAMS = {"w": np.array([1.0, 2.0, -0.5]), "b": 0.5, "layers": [np.eye(3), np.ones(3)]}
Pair = collections.namedtuple("Pair", "a b")


def loss(p, x):
    h = np.tanh(p["layers"][0] @ (p["w"] * x) + p["b"])
    return np.sum(h * p["layers"][1]) ** 2


def central_difference(f, tree, h=1e-6):
    """The gradient of f at a pytree, leaf by leaf, by central differences."""
    leaves, structure = flatten(tree)
    grads = []
    for k, leaf in enumerate(leaves):
        leaf = np.asarray(leaf, dtype=float)
        g = np.zeros_like(leaf)
        for i in np.ndindex(leaf.shape):
            up, down = leaf.copy(), leaf.copy()
            up[i] += h
            down[i] -= h
            f_up = f(unflatten(structure, leaves[:k] + [up] + leaves[k + 1:]))
            f_down = f(unflatten(structure, leaves[:k] + [down] + leaves[k + 1:]))
            g[i] = (f_up - f_down) / (2 * h)
        grads.append(g)
    return unflatten(structure, grads)


def assert_tree_close(got, expected, rtol):
    got_leaves, got_tree = flatten(got)
    want_leaves, want_tree = flatten(expected)
    assert got_tree == want_tree
    for a, b in zip(got_leaves, want_leaves):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-9)


def test_flatten_and_unflatten_round_trip():
    tree = {"b": (1.0, None, [2.0, Pair(3.0, np.ones(2))]), "a": []}
    leaves, structure = flatten(tree)
    assert len(leaves) == structure.num_leaves == 4
    assert unflatten(structure, leaves) == {"a": [], "b": (1.0, None, [2.0, Pair(3.0, leaves[3])])}
    assert paths(structure, "p") == ["p_b_0", "p_b_2_0", "p_b_2_1_a", "p_b_2_1_b"]
    with pytest.raises(ValueError):
        unflatten(structure, leaves[:-1])


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_gradients_of_a_dict_of_parameters(backend):
    g = sg.grad(loss, backend=backend)(PARAMS, X)
    assert_tree_close(g, central_difference(lambda p: loss(p, X), PARAMS), rtol=1e-6)
    assert isinstance(g["layers"], list) and len(g["layers"]) == 2  # never stacked
    value, g2 = sg.value_and_grad(loss, backend=backend)(PARAMS, X)
    assert value == pytest.approx(loss(PARAMS, X), rel=1e-13)
    assert_tree_close(g2, g, rtol=1e-13)


def test_a_list_of_same_shape_arrays_is_a_pytree():
    ws = [np.array([1.0, 2.0]), np.array([3.0, -1.0])]
    g = sg.grad(lambda ws: np.sum(ws[0] * ws[1] ** 2))(ws)
    assert isinstance(g, list) and len(g) == 2
    np.testing.assert_allclose(g[0], ws[1] ** 2)
    np.testing.assert_allclose(g[1], 2 * ws[0] * ws[1])


def test_a_list_of_integers_given_to_vjp_names_both_ways_out():
    # a list of integers alone is no pytree: static, and unhashable; the error said
    # "pass ... a tuple", which vjp keeps static
    with pytest.raises(TypeError, match=r"pass np.array\(a\) to trace it .* a tuple to keep "
                                        r"it static \(no gradient\)"):
        sg.vjp(lambda a, x: x * len(a), [1, 2, 3], 2.0, backend="numpy")


@pytest.mark.parametrize("primal", [(1.0, 2.0), [1.0, 2.0], (1.0, 2)], ids=str)
def test_vjp_differentiates_a_tuple_of_floats_as_jax_vjp_and_grad_do(primal):
    """A tuple or list of Python floats: jax.vjp's cotangent for it (a tuple) and
    sg.grad's (an array) have the same numbers; sg.vjp gave None (a static argument)."""
    jax = pytest.importorskip("jax")
    f = lambda a, b: a[0] * b + np.sin(a[1]) * b ** 2
    y, pullback = sg.vjp(f, primal, 3.0, backend="numpy")
    got = pullback(2.0)
    jax.config.update("jax_enable_x64", True)  # (as tests/test_complex.py)
    want_y, jax_pullback = jax.vjp(lambda a, b: a[0] * b + jax.numpy.sin(a[1]) * b ** 2,
                                   tuple(map(float, primal)), 3.0)
    want = jax_pullback(2.0)
    np.testing.assert_allclose(y, want_y, rtol=1e-15)
    np.testing.assert_allclose(got[0], np.array(want[0]), rtol=1e-15)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-15)
    np.testing.assert_allclose(got[0], 2.0 * sg.grad(f)(primal, 3.0), rtol=1e-15)


def test_namedtuples_and_several_argnums():
    f = lambda p, x: np.sum(p.a * np.sin(p.b * x))
    p = Pair(np.array([1.0, 2.0, 3.0]), 0.7)
    gp, gx = sg.grad(f, argnums=(0, 1))(p, X)
    assert isinstance(gp, Pair)
    assert_tree_close(gp, central_difference(lambda p: f(p, X), p), rtol=1e-6)
    np.testing.assert_allclose(gx, p.a * p.b * np.cos(p.b * X), rtol=1e-12)


def test_jit_and_vjp_return_the_structure_of_the_function():
    f = lambda x: {"s": np.sin(x), "pair": (np.cos(x), 2.0 * x)}
    out = sg.jit(f)(X)
    assert_tree_close(out, f(X), rtol=1e-15)
    y, pullback = sg.vjp(f, X)
    assert_tree_close(y, f(X), rtol=1e-15)
    ct = {"s": np.ones(3), "pair": (np.full(3, 2.0), np.full(3, -1.0))}
    (gx,) = pullback(ct)
    np.testing.assert_allclose(gx, np.cos(X) - 2 * np.sin(X) - 2.0, rtol=1e-12)
    with pytest.raises(ValueError, match="structure"):
        pullback({"s": np.ones(3)})


def test_pytrees_inside_a_nested_transformation():
    outer = sg.grad(lambda p: np.sum(sg.grad(loss)(p, X)["w"] ** 2))(PARAMS)
    expected = central_difference(
        lambda p: np.sum(sg.grad(loss, backend="numpy")(p, X)["w"] ** 2), PARAMS)
    assert_tree_close(outer, expected, rtol=1e-5)


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_has_aux_passes_the_auxiliary_value_through(backend):
    def f(x):
        return np.sum(x ** 3), {"mean": np.mean(x), "twice": 2 * x, "label": None}

    g, aux = sg.grad(f, has_aux=True, backend=backend)(X)
    np.testing.assert_allclose(g, 3 * X ** 2, rtol=1e-13)
    assert aux["label"] is None
    np.testing.assert_allclose(aux["mean"], np.mean(X))
    np.testing.assert_allclose(aux["twice"], 2 * X)
    (value, aux2), g2 = sg.value_and_grad(f, has_aux=True, backend=backend)(X)
    assert value == pytest.approx(np.sum(X ** 3))
    np.testing.assert_allclose(g2, g)
    np.testing.assert_allclose(aux2["twice"], 2 * X)
    inner = sg.grad(f, has_aux=True)
    hvp = sg.grad(lambda x: np.sum(inner(x)[0] * inner(x)[1]["twice"]))(X)  # sum(6 x^3)
    np.testing.assert_allclose(hvp, 18 * X ** 2, rtol=1e-12)


def test_has_aux_with_a_gradient_for_a_vector_value():
    """gradient= seeds the value only (aux passes through): it was checked against the
    structure (value, aux) and refused. The gradient of sum(value * v), against its closed
    form, (x cos x + sin x) v; twice (the fast path), and inside a trace (against central
    differences)."""
    v = np.array([1.0, 2.0, -1.0])

    def f(x):
        return np.sin(x) * x, {"total": np.sum(x)}

    want = (X * np.cos(X) + np.sin(X)) * v
    for _ in range(2):
        g, aux = sg.grad(f, has_aux=True, backend="numpy")(X, gradient=v)
        np.testing.assert_allclose(g, want, rtol=1e-7)
        assert aux["total"] == pytest.approx(np.sum(X))
        (value, aux), g = sg.value_and_grad(f, has_aux=True, backend="numpy")(X, gradient=v)
        np.testing.assert_allclose(value, np.sin(X) * X)
        np.testing.assert_allclose(g, want, rtol=1e-7)
    inner = sg.grad(f, has_aux=True)
    outer = sg.grad(lambda w: np.sum(inner(X * w, gradient=v)[0]), backend="numpy")(1.5)
    fd = (np.sum(inner(X * (1.5 + 1e-6), gradient=v)[0])
          - np.sum(inner(X * (1.5 - 1e-6), gradient=v)[0])) / 2e-6
    assert outer == pytest.approx(fd, rel=1e-6)


def test_vjp_of_a_named_tuple_holding_a_dict():
    """The pullback's cotangent, a named tuple like the output, was made a plain tuple
    before its structure was compared with the output's: refused unless all its fields
    were arrays. Against the closed form cos(x) + x reversed."""
    y, pullback = sg.vjp(lambda x: Pair(np.sin(x[:2]), {"k": x[0] * x[1]}), X, backend="numpy")
    assert type(y) is Pair
    (g,) = pullback(Pair(np.ones(2), {"k": 1.0}))
    np.testing.assert_allclose(g, [np.cos(X[0]) + X[1], np.cos(X[1]) + X[0], 0.0])


def test_has_aux_needs_a_pair():
    with pytest.raises(TypeError, match="must return a pair"):
        sg.grad(lambda x: np.sum(x), has_aux=True)(X)
    with pytest.raises(TypeError, match="has_aux is for grad and value_and_grad"):
        sg.jit(lambda x: x, has_aux=True)
