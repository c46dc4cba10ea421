"""Indexing, functional updates (sg.at) and shape ops beyond the table: semantics of
repeated indices, the gradient of indexed assignment, errors, both backends."""

from __future__ import annotations

import os
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import symgrad as sg
from symgrad.core.check import check
from symgrad.core.interpreter import interpret
from symgrad.passes.adjoint import adjoint
from symgrad.passes.rewrites import optimize

from oracle import assert_close, finite_differences, forward_graph, rng_for, sympy_gradient

BACKENDS = ["numba", "numpy"]


def _grads(fn, args, ct, backend):
    return sg.grad(fn, argnums=tuple(range(len(args))), backend=backend)(*args, gradient=ct)


# ---------------------------------------------------------------------------
# HIPS autograd #58: the gradient of a value written into an array


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_of_indexed_assignment_autograd_58(backend):
    # y = x with y[1] = x[0]**2: dy/dx0 = [1, 2*x0, 0], dy/dx1 = [0, 0, 0], dy/dx2 = e2
    def f(x):
        return sg.at(x)[1].set(x[0] ** 2)

    x = np.array([3.0, -1.5, 0.25])
    w = np.array([0.5, -2.0, 4.0])
    (got,) = _grads(f, [x], w, backend)
    assert_close(got, [0.5 + 2 * 3.0 * -2.0, 0.0, 4.0], what="exact")
    (want,) = sympy_gradient(f, [x], w)
    assert_close(got, want, what="SymPy")
    assert_close(got, finite_differences(f, [x], 0, w), rtol=1e-7, atol=1e-8, what="FD")


@pytest.mark.parametrize("backend", BACKENDS)
def test_update_in_a_chain_of_assignments(backend):
    # a running update: each entry from the one before, as a loop over x[i] = ... would
    def f(x):
        y = x
        for i in range(1, 4):
            y = sg.at(y)[i].set(np.sin(y[i - 1]) * y[i])
        return np.sum(y * y)

    x = rng_for("chain").uniform(-2, 2, 4)
    (got,) = sg.grad(f, argnums=(0,), backend=backend)(x)
    assert_close(got, sympy_gradient(f, [x])[0], what="SymPy")
    assert_close(got, finite_differences(f, [x], 0), rtol=1e-7, atol=1e-8, what="FD")


# ---------------------------------------------------------------------------
# repeated indices: set keeps the last write, add accumulates


@pytest.mark.parametrize("backend", BACKENDS)
def test_set_with_repeated_indices_last_write_wins(backend):
    idx = [0, 2, 0]

    def f(x, v):
        return sg.at(x)[idx].set(v)

    x, v = np.array([1.0, 2.0, 3.0, 4.0]), np.array([10.0, 20.0, 30.0])
    expected = x.copy()
    expected[idx] = v                         # numpy: the last of the repeated writes
    assert_close(sg.jit(f, backend=backend)(x, v), expected, what="value")
    assert_close(sg.at(x)[idx].set(v), expected, what="plain arrays")

    w = np.array([1.0, 2.0, 3.0, 4.0])
    gx, gv = _grads(f, [x, v], w, backend)
    assert_close(gx, [0.0, 2.0, 0.0, 4.0], what="x: zero where overwritten")
    assert_close(gv, [0.0, 3.0, 1.0], what="v: only the winning write")
    for k, want in enumerate(sympy_gradient(f, [x, v], w)):
        assert_close((gx, gv)[k], want, what=f"SymPy {k}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_add_with_repeated_indices_accumulates(backend):
    idx = (np.array([1, 1, 0, 1]), slice(None))

    def f(x, v):
        return np.sin(sg.at(x)[idx].add(v * v))

    rng = rng_for("add-repeated")
    x, v = rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (4, 3))
    expected = x.copy()
    np.add.at(expected, idx, v * v)
    assert_close(sg.jit(f, backend=backend)(x, v), np.sin(expected), what="value")
    w = rng.uniform(-1, 1, (2, 3))
    got = _grads(f, [x, v], w, backend)
    for k in range(2):
        assert_close(got[k], sympy_gradient(f, [x, v], w)[k], what=f"SymPy {k}")
        assert_close(got[k], finite_differences(f, [x, v], k, w), rtol=1e-7, atol=1e-8,
                     what=f"FD {k}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_repeated_fancy_read_scatters_back(backend):
    f = lambda x: x[[2, 2, 0, 2]]  # noqa: E731
    x = np.array([1.0, 2.0, 3.0])
    (got,) = _grads(f, [x], np.array([1.0, 10.0, 100.0, 1000.0]), backend)
    assert_close(got, [100.0, 0.0, 1011.0], what="scatter-add")


@pytest.mark.parametrize("backend", BACKENDS)
def test_at_property_and_all_index_forms(backend):
    mask = np.array([[True, False, True], [False, True, False]])
    indices = [1, -1, (slice(None), 0), (Ellipsis, slice(None, None, -2)), mask,
               ([1, 0], [2, 2]), (None, 0)]
    x = rng_for("forms").uniform(-1, 1, (2, 3))
    for index in indices:
        def f(x, v, index=index):
            return x.at[index].set(v) + sg.at(x)[index].add(2.0 * v)

        v = np.float64(0.75)
        want = x.copy()
        want[index] = v
        added = x.copy()
        np.add.at(added, index, 1.5)
        assert_close(sg.jit(f, backend=backend)(x, v), want + added, what=f"value {index}")
        w = rng_for(f"forms{index}").uniform(-1, 1, (2, 3))
        got = _grads(f, [x, v], w, backend)
        for k, want_grad in enumerate(sympy_gradient(f, [x, v], w)):
            assert_close(got[k], want_grad, what=f"{index} gradient {k}")


def test_at_on_plain_arrays_leaves_them_unchanged():
    x = np.arange(4.0)
    y = sg.at(x)[[1, 1]].add(1.0)
    assert_close(y, [0.0, 3.0, 2.0, 3.0])
    assert_close(x, np.arange(4.0), what="x untouched")


# ---------------------------------------------------------------------------
# generated code and backends


def test_kernel_copies_a_sliced_output_instead_of_returning_a_view():
    x = np.arange(5.0)
    y = sg.jit(lambda x: x[1:])(x)
    y[0] = 100.0
    assert_close(x, np.arange(5.0), what="input untouched")


def test_generated_source_is_readable():
    f = sg.grad(lambda x: np.sum(x[::-1, [0, 2, 2]] * np.cumsum(x, axis=0)[:, :3]))
    source = f.source(np.ones((4, 3)))
    assert "x[::-1]" in source
    assert "for i0, i1 in enumerate((0, 2, 2)):" in source
    assert "# grad of:" in source


#: each shape is one large kernel (about 15 s): the 2-d one in CI, the 1-d one too with
#: SYMGRAD_FULL=1 (the table in cases.py runs each of these primitives on Numba alone)
COMPOSITE_SHAPES = [(5,), (3, 4)] if os.environ.get("SYMGRAD_FULL") == "1" else [(3, 4)]


@pytest.mark.parametrize("shape", COMPOSITE_SHAPES)
def test_backends_agree_on_a_composite(shape):
    def f(x):
        y = np.concatenate([np.flip(x, axis=0), np.diff(x, axis=0, prepend=0.0)], axis=0)
        z = np.stack([np.cumsum(y, axis=0), np.tile(y, 1)], axis=-1)
        z = sg.at(z)[1:3].set(np.exp(z[0]))
        return np.sum(np.repeat(z, 2, axis=0)[..., 0] ** 2) + np.sum(z[z.shape[0] - 1])

    x = rng_for(f"composite{shape}").uniform(-1, 1, shape)
    value_nb, (grad_nb,) = sg.value_and_grad(f, argnums=(0,))(x)
    value_np, (grad_np,) = sg.value_and_grad(f, argnums=(0,), backend="numpy")(x)
    assert_close(value_nb, value_np, rtol=1e-14, atol=1e-15)
    assert_close(grad_nb, grad_np, rtol=1e-14, atol=1e-15)
    assert_close(value_nb, f(x), what="numpy")
    assert_close(grad_nb, finite_differences(f, [x], 0), rtol=1e-6, atol=1e-7, what="FD")


# ---------------------------------------------------------------------------
# errors name the problem and the fix


def _trace(fn, *args):
    return sg.jit(fn, backend="numpy")(*args)


def test_assignment_into_a_traced_array_points_to_at():
    def f(x):
        x[0] = 1.0
        return x

    with pytest.raises(TypeError, match=r"immutable.*sg\.at\(x\)\[index\]\.set\(v\)"):
        _trace(f, np.ones(3))


def test_traced_index_is_refused():
    with pytest.raises(IndexError, match="traced value.*constant integers"):
        _trace(lambda x: x[x > 0], np.ones(3))
    with pytest.raises(IndexError, match="traced value"):
        _trace(lambda x: x[1:][: x[0]], np.ones(3))
    with pytest.raises(IndexError, match="traced value"):
        _trace(lambda x: sg.at(x)[x > 0].set(0.0), np.ones(3))


@pytest.mark.parametrize("index", [3, -4, (0, 0), [0, 3], np.array([True, False])])
def test_out_of_bounds_index_is_refused(index):
    with pytest.raises(IndexError, match=r"shape \(3,\).*within the array's shape"):
        _trace(lambda x: x[index], np.ones(3))
    with pytest.raises(IndexError, match="within the array's shape"):
        _trace(lambda x: sg.at(x)[index].add(1.0), np.ones(3))


@pytest.mark.parametrize("index", [1.0, [0.5], "a"])
def test_non_integer_index_is_refused(index):
    with pytest.raises(IndexError, match="not an integer.*index with integers"):
        _trace(lambda x: x[index], np.ones(3))


def test_shape_op_errors():
    x = np.ones((2, 3))
    with pytest.raises(sg.UnsupportedFunctionError, match="order='C'"):
        _trace(lambda x: np.reshape(x, -1, order="F"), x)
    with pytest.raises(sg.UnsupportedFunctionError, match="order='C'"):
        _trace(lambda x: x.ravel(order="F"), x)
    with pytest.raises(sg.ShapeError, match="concatenate.*only the concatenation axis"):
        _trace(lambda x: np.concatenate([x, x.T]), x)
    with pytest.raises(sg.ShapeError, match="length 1"):
        _trace(lambda x: np.squeeze(x, axis=0), x)
    with pytest.raises(sg.ShapeError, match="same shape"):
        _trace(lambda x: np.stack([x, x[0]]), x)
    with pytest.raises(IndexError, match="out of bounds"):
        _trace(lambda x: np.take(x, [3], axis=1), x)
    with pytest.raises(sg.UnsupportedFunctionError, match="mode='constant'"):
        _trace(lambda x: np.pad(x, 1, mode="edge"), x)
    with pytest.raises(sg.UnsupportedFunctionError, match="repeats is a traced value"):
        _trace(lambda x: np.repeat(x, x), x)


def test_shape_ops_match_numpy_on_all_forms():
    x = rng_for("forms-numpy").uniform(-1, 1, (2, 3, 1))
    checks = [
        lambda x: np.reshape(x, (3, -1)), lambda x: x.reshape(-1), lambda x: x.reshape(6, 1),
        lambda x: np.ravel(x), lambda x: x.flatten(), lambda x: x.T, lambda x: x.transpose(),
        lambda x: np.transpose(x, (2, 0, 1)), lambda x: np.expand_dims(x, -1),
        lambda x: np.expand_dims(x, (0, 4)), lambda x: x.squeeze(), lambda x: x.squeeze(-1),
        lambda x: np.broadcast_to(x, (4, 2, 3, 5)), lambda x: np.tile(x, 2),
        lambda x: np.repeat(x, [2, 1], axis=0), lambda x: x.repeat(2), lambda x: np.flip(x),
        lambda x: np.flip(x, (0, 1)), lambda x: x.cumsum(), lambda x: np.cumsum(x, axis=-2),
        lambda x: np.diff(x, axis=1), lambda x: np.diff(x, n=0), lambda x: np.diff(x, n=3),
        lambda x: np.diff(x, n=0, append=1.0), lambda x: np.diff(x, prepend=x[..., :1]),
        lambda x: np.concatenate([x, x], axis=-1), lambda x: np.stack([x, x], -1),
        lambda x: x.swapaxes(0, 1), lambda x: x.take([0, -1], axis=1),
        lambda x: np.pad(x, [(1, 0), (0, 2), (1, 1)]),
    ]
    for fn in checks:
        assert_close(_trace(fn, x), fn(x), what=str(fn))


@pytest.mark.parametrize("kind", ["tuple", "range", "bytes", "repeated"])
def test_index_sets_of_every_size_compile_and_scatter(kind):
    n = 60
    index = {"tuple": [5, 1, 1, 7],
             "range": list(range(2, n, 3)),
             "bytes": list(np.flatnonzero(rng_for("bytes").uniform(size=n) > 0.5)),
             "repeated": [4] * 20 + [0] * 17}[kind]
    x = rng_for(kind).uniform(-1, 1, (2, n))
    w = rng_for(kind + "/w").uniform(-1, 1, (2, len(index)))

    def f(x):
        return np.sin(x[:, index])

    g = sg.grad(f)
    source = g.source(x, gradient=w)
    assert {"tuple": "enumerate((5, 1, 1, 7))", "range": "enumerate(range(2, 62, 3))",
            "bytes": "np.frombuffer(", "repeated": "np.frombuffer("}[kind] in source
    expected = np.zeros_like(x)
    np.add.at(expected, (slice(None), index), np.cos(x[:, index]) * w)
    assert_close(g(x, gradient=w), expected, what="numba")
    assert_close(sg.grad(f, backend="numpy")(x, gradient=w), expected, what="numpy")
    assert_close(sg.jit(f)(x), f(x), what="value")


def test_stacking_helpers_match_numpy():
    x = rng_for("stacking").uniform(-1, 1, (2, 3))
    y = rng_for("stacking/y").uniform(-1, 1, 3)
    checks = [
        lambda x, y: np.hstack([x, x]), lambda x, y: np.hstack([y, y, x[0]]),
        lambda x, y: np.vstack([x, y]), lambda x, y: np.vstack([y, y]),
        lambda x, y: np.append(x, y), lambda x, y: np.append(x, y[None], axis=0),
        lambda x, y: np.atleast_1d(y[0]), lambda x, y: np.atleast_2d(y),
        lambda x, y: np.roll(x, 4), lambda x, y: np.roll(x, -1, axis=1),
        lambda x, y: np.roll(x, (1, 1), axis=(1, 1)), lambda x, y: x[[]],
        lambda x, y: x[:, []],
        lambda x, y: np.column_stack([y, y]), lambda x, y: np.column_stack([x.T, y]),
        lambda x, y: np.fliplr(x), lambda x, y: np.flipud(y),
    ]
    for fn in checks:
        assert_close(_trace(fn, x, y), fn(x, y), what=str(fn))
    splits = [lambda x: np.split(x, 3, axis=1), lambda x: np.split(x, [1, 5], axis=-1),
              lambda x: np.array_split(x, 2, axis=1), lambda x: np.array_split(x, 4),
              lambda x: np.array_split(x, [-1, 1, 2], axis=1)]
    for fn in splits:
        got = sg.jit(lambda x, fn=fn: tuple(fn(x)), backend="numpy")(x)
        assert len(got) == len(fn(x)), str(fn)
        for a, b in zip(got, fn(x)):
            assert_close(a, b, what=str(fn))
    with pytest.raises(ValueError, match="equal division"):
        _trace(lambda x: np.split(x, 2, axis=1)[0], x)


# ---------------------------------------------------------------------------
# generated indices against numpy (the interpreter backend: no compile per example)

SHAPES = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4)


@st.composite
def _indexed(draw):
    shape = draw(SHAPES)
    index = draw(st.one_of(
        hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True),
        hnp.integer_array_indices(shape, result_shape=hnp.array_shapes(max_dims=2, max_side=3)),
        hnp.arrays(bool, shape).map(lambda m: (m,)),
    ))
    return shape, index


@settings(max_examples=80, deadline=None)
@given(_indexed())
def test_generated_indices_match_numpy_and_scatter_back(problem):
    shape, index = problem
    x = rng_for(f"{shape}{index}").uniform(-1, 1, shape)
    want = x[index]
    # a scalar output is seeded with 1 (grad takes no gradient= for it)
    w = np.asarray(rng_for("w").uniform(-1, 1, np.shape(want))) if np.ndim(want) else 1.0
    got = sg.jit(lambda x: x[index], backend="numpy")(x)
    assert_close(got, want, what="value")
    grad = sg.grad(lambda x: x[index], backend="numpy")(x, gradient=w if np.ndim(w) else None)
    expected = np.zeros(shape)
    np.add.at(expected, index, w)             # numpy's own scatter-add, an independent oracle
    assert_close(grad, expected, what="gradient")


@settings(max_examples=60, deadline=None)
@given(_indexed())
def test_generated_updates_match_numpy(problem):
    shape, index = problem
    x = rng_for(f"u{shape}{index}").uniform(-1, 1, shape)
    v = rng_for("v").uniform(-1, 1, np.shape(x[index]))
    set_want = x.copy()
    set_want[index] = v
    add_want = x.copy()
    np.add.at(add_want, index, v)
    f = sg.jit(lambda x, v: (sg.at(x)[index].set(v), x.at[index].add(v)), backend="numpy")
    got_set, got_add = f(x, v)
    assert_close(got_set, set_want, what="set")
    assert_close(got_add, add_want, what="add")
    # set: d/dv of sum(y * w) is w at each written place that is not written again later
    w = rng_for("w2").uniform(-1, 1, shape)
    gx, gv = sg.grad(lambda x, v: sg.at(x)[index].set(v), argnums=(0, 1),
                     backend="numpy")(x, v, gradient=w)
    written = np.zeros(shape, dtype=bool)
    written[index] = True
    assert_close(gx, np.where(written, 0.0, w), what="x gradient")
    assert_close(np.sum(gv), np.sum(w[written]), what="v gradient: each place once")


def test_second_derivative_through_every_array_primitive():
    # the adjoint of the adjoint: H @ u, against finite differences of the gradient
    def f(x):
        y = np.cumsum(x[::-1] ** 2)[[0, 2, 2]]                    # slice, cumsum, gather
        z = np.pad(x[1:], 1) ** 3                                  # unslice
        c = np.concatenate([x, sg.at(x)[[1, 1]].set(x[0] * x[3])])  # concatenate, scatter_add
        return np.sum(y * y) + np.sum(z) + np.sum(np.sin(c))

    x = rng_for("second").uniform(-1, 1, 4)
    u = rng_for("second/u").uniform(-1, 1, 4)
    first = optimize(adjoint(forward_graph(f, x), [0], seed_inputs=False))
    gradient_only = replace(first, outputs=first.outputs[1:])
    second = check(optimize(adjoint(gradient_only, [0], seed_inputs=True)))
    hvp = interpret(second, x, u)[1]
    grad = sg.grad(f, backend="numpy")
    assert_close(grad(x), interpret(first, x)[1], what="first derivative")
    assert_close(hvp, finite_differences(grad, [x], 0, u), rtol=1e-6, atol=1e-7, what="H u")


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_indexing_a_boolean_array_keeps_booleans(backend):
    x = np.array([1.0, -2.0, 3.0])
    f = sg.jit(lambda x: ((x > 0)[[0, 2, 2]], (x > 0)[::-1][1:]), backend=backend)
    for got, want in zip(f(x), ((x > 0)[[0, 2, 2]], (x > 0)[::-1][1:])):
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got, want)


_SIGNED_ZEROS = np.array([-0.0, 1.5, -0.0, 0.0, -2.0])
_SIGNED_UPDATES = [  # (op, index, v): -0.0 written, added, or left untouched
    ("set", 1, -0.0), ("set", [0, 2], [-0.0, 0.0]), ("set", [3, 3, 1], [-0.0, -0.0, 2.0]),
    ("add", 1, -0.0), ("add", [2, 2], [-0.0, -0.0]), ("add", slice(1, 4), [-0.0, 0.0, -0.0]),
    ("add", [2] * 5, [-0.0] * 5), ("add", [0, 3, 0], [-0.0, -0.0, 0.0])]


def _signed_update(op, index):
    if op == "set":
        return lambda x, v: sg.at(x)[index].set(v)
    return lambda x, v: sg.at(x)[index].add(v)


@pytest.mark.parametrize("op,index,v", _SIGNED_UPDATES)
def test_at_keeps_signed_zeros_as_jax(op, index, v):
    """A scatter into zeros turned -0.0 into +0.0 (written values, untouched elements of
    ``add``); JAX keeps every bit. Plain arrays and the interpreter."""
    jax = pytest.importorskip("jax", reason="JAX is the oracle of signed zeros")
    jax.config.update("jax_enable_x64", True)
    jx = jax.numpy.asarray(_SIGNED_ZEROS).at[jax.numpy.asarray(index)
                                             if isinstance(index, list) else index]
    want = np.asarray(getattr(jx, op)(jax.numpy.asarray(v)))
    fn = _signed_update(op, index)
    for got in (fn(_SIGNED_ZEROS, np.asarray(v)),
                sg.jit(fn, backend="numpy")(_SIGNED_ZEROS, np.asarray(v, dtype=float))):
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_at_signed_zeros_in_a_numba_kernel_and_its_gradient():
    """The same in a Numba kernel (against JAX); the gradient of set-then-add (repeated
    indices, the value read again) against finite differences."""
    jax = pytest.importorskip("jax", reason="JAX is the oracle of signed zeros")
    jax.config.update("jax_enable_x64", True)

    def f(x, at):  # at: sg.at, or JAX's x.at
        y = at(x)[np.array([1, 3, 1])].set(x[0] * x[5])  # -0.0 written twice
        return at(y)[np.array([0, 2, 2, 2, 2, 2, 4])].add(-x[1:8] ** 2)
    x = np.array([-0.0, 0.5, -0.0, 1.5, -0.0, 2.0, 0.0, -0.0])
    got = sg.jit(lambda x: f(x, sg.at), backend="numba")(x)
    want = np.asarray(f(jax.numpy.asarray(x), lambda a: a.at))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    x = rng_for("at-signed").normal(size=8)
    loss = lambda x: np.sum(np.sin(f(x, sg.at)) * x)  # noqa: E731
    assert_close(sg.grad(loss, backend="numba")(x), finite_differences(loss, [x], 0),
                 rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("op,index,v", _SIGNED_UPDATES[:4])
def test_at_gradients_keep_signed_zeros_as_jax(op, index, v):
    """The cotangents of x and v, bit for bit against jax.vjp (a cotangent of -0.0s)."""
    jax = pytest.importorskip("jax", reason="JAX is the oracle of signed zeros")
    jax.config.update("jax_enable_x64", True)
    jindex = jax.numpy.asarray(index) if isinstance(index, list) else index
    ct = np.array([-0.0, 2.0, -0.0, -0.0, 0.5])
    v = np.asarray(v, dtype=float)
    _, pull = jax.vjp(lambda x, v: getattr(x.at[jindex], op)(v), _SIGNED_ZEROS, v)
    for got, want in zip(_grads(_signed_update(op, index), (_SIGNED_ZEROS, v), ct, "numpy"),
                         pull(ct)):
        np.testing.assert_array_equal(got, np.asarray(want))
        np.testing.assert_array_equal(np.signbit(got), np.signbit(np.asarray(want)))
