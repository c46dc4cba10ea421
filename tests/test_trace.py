"""Tracing plain numpy code: operators, ufuncs, array functions, methods, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import symgrad as sg
from symgrad.core.tracing import Tracer, as_constant_array

from oracle import assert_close, forward_graph


def prims(fn, *args) -> list[str]:
    return [e.prim.name for e in forward_graph(fn, *args).eqns]


X = np.array([[0.5, 1.0, 1.5], [2.0, 2.5, 3.0]])


def test_python_operators():
    assert prims(lambda x: x + 1, X) == ["add"]
    assert prims(lambda x: 1 - x, X) == ["sub"]
    assert prims(lambda x: 2 * x / 3, X) == ["mul", "div"]
    assert prims(lambda x: -x, X) == ["neg"]
    assert prims(lambda x: +x, X) == []
    assert prims(lambda x: abs(x), X) == ["abs"]
    assert prims(lambda x: x ** 3, X) == ["pow"]
    assert prims(lambda x: x ** 2, X) == ["pow"]
    assert prims(lambda x: 2 ** x, X) == ["pow"]
    assert prims(lambda x: x > 1, X) == ["gt"]


def test_power_follows_numpy_fast_paths():
    # numpy computes x ** 2, x ** 0.5 and x ** -1 as square, sqrt and reciprocal
    def optimized(fn):
        return [e.prim.name for e in sg.jit(fn).graph(X).eqns]
    assert prims(lambda x: x ** 2, X) == ["pow"]
    assert optimized(lambda x: x ** 2) == ["square"]
    assert optimized(lambda x: x ** 0.5) == ["sqrt"]
    assert optimized(lambda x: np.power(x, -1)) == ["reciprocal"]
    assert optimized(lambda x: x ** 3) == ["pow"]
    x = np.random.default_rng(1).uniform(0.1, 10, 1000)
    for e in (2, 0.5, -1):
        assert np.array_equal(sg.jit(lambda x, e=e: x ** e, backend="numpy")(x), x ** e)


def test_ufuncs_and_numpy_constants():
    c = np.array([1.0, 2.0, 3.0])
    f = lambda x: np.exp(x) * c + np.pi
    assert prims(f, X) == ["exp", "mul", "add"]
    graph = forward_graph(f, X)
    assert len(graph.consts) == 1 and np.array_equal(graph.consts[0][1], c)
    assert not graph.consts[0][1].flags.writeable, "constants are frozen copies"
    assert_close(sg.jit(f)(X), f(X))


def test_numpy_scalars_and_arrays_on_the_left():
    f = lambda x: np.float64(2.0) * x + np.array([1.0, 2.0, 3.0]) - np.int64(1)
    assert_close(sg.jit(f)(X), f(X))


def test_array_functions_and_methods():
    f = lambda x: np.sum(x) + x.sum(axis=0).mean() + np.mean(x, axis=1).max() + x.T.min()
    assert prims(f, X)[:1] == ["sum"]
    assert_close(sg.jit(f)(X), f(X))
    g = lambda x: x.reshape(3, 2).T.ravel().prod() + np.max(x, axis=-1, keepdims=True).sum()
    assert_close(sg.jit(g)(X), g(X))


def test_keepdims_is_a_reshape():
    assert prims(lambda x: np.sum(x, axis=1, keepdims=True), X) == ["sum", "reshape"]


def test_python_control_flow_on_static_values_runs_at_trace_time():
    def f(x, n):
        y = x
        for _ in range(n):
            y = np.sin(y)
        return np.sum(y) if n > 1 else np.mean(y)
    g = sg.grad(f, static_argnums=(1,))
    assert_close(g(X, 3), sg.grad(lambda x: np.sum(np.sin(np.sin(np.sin(x)))))(X))
    assert_close(g(X, 1), sg.grad(lambda x: np.mean(np.sin(x)))(X))


def test_bool_of_a_traced_value_points_to_where():
    def f(x):
        if x > 0:
            return x
        return -x
    with pytest.raises(sg.TracerBoolConversionError, match=r"symgrad\.where") as e:
        sg.grad(f)(1.0)
    assert "test_trace.py" in str(e.value), "the message names the user's line"
    with pytest.raises(sg.TracerBoolConversionError):
        sg.jit(lambda x: x if np.all(x > 0) else -x)  # constructing is fine
        sg.jit(lambda x: (x > 0) and x)(X)


def test_where_replaces_if():
    f = sg.grad(lambda x: np.sum(sg.where(x > 1.5, x ** 3, -x)))
    assert_close(f(X), np.where(X > 1.5, 3 * X ** 2, -1.0))


@pytest.mark.parametrize("call, name", [
    (lambda x: np.linalg.svd(x), "linalg.svd"),
    (lambda x: np.unwrap(x), "unwrap"),
    (lambda x: np.spacing(x), "np.spacing"),
    (lambda x: np.add.reduce(x), "np.add.reduce"),
])
def test_unsupported_numpy_functions_are_named(call, name):
    with pytest.raises(sg.UnsupportedFunctionError, match=name.replace(".", r"\.")):
        sg.jit(call)(X)


@pytest.mark.parametrize("call, what", [
    (lambda x: math.exp(x), "float()"),
    (lambda x: float(x), "float()"),
    (lambda x: np.asarray(x, dtype=float), "np.asarray"),
    (lambda x: x.item(), "item()"),
])
def test_concrete_conversions_are_refused(call, what):
    with pytest.raises(sg.TracerConversionError, match=r"traced value"):
        sg.jit(call)(2.0)


def test_unsupported_keyword_arguments_are_named():
    with pytest.raises(sg.UnsupportedFunctionError, match="out="):
        sg.jit(lambda x: np.sum(x, out=np.empty(())))(X)
    with pytest.raises(sg.UnsupportedFunctionError, match="where="):
        sg.jit(lambda x: np.sum(x, where=x > 1))(X)
    with pytest.raises(sg.UnsupportedFunctionError, match="float64"):
        sg.jit(lambda x: np.exp(x, dtype=np.float32))(X)


def test_shape_errors_name_the_operation_and_shapes():
    with pytest.raises(sg.ShapeError, match=r"add: operands of shapes f64\[2,3\] and f64\[2\]"):
        sg.jit(lambda x, y: x + y)(X, np.ones(2))
    with pytest.raises(sg.ShapeError, match="reshape"):
        sg.jit(lambda x: x.reshape(4, 2))(X)
    with pytest.raises(np.exceptions.AxisError):
        sg.jit(lambda x: np.sum(x, axis=2))(X)
    with pytest.raises(sg.ShapeError, match="empty axis"):
        sg.jit(lambda x: np.max(x, axis=0))(np.ones((0, 3)))


def test_escaped_tracer_is_reported():
    leaked = []
    sg.jit(lambda x: leaked.append(x) or x * 2)(X)
    with pytest.raises(sg.EscapedTracerError, match="after its function returned"):
        sg.jit(lambda y: y + leaked[0])(X)


def test_complex_values_trace_and_object_values_are_refused():
    # complex values are traced (tests/test_complex.py); grad of a complex output is not
    np.testing.assert_array_equal(sg.jit(lambda x: x * (1 + 2j))(X), X * (1 + 2j))
    with pytest.raises(TypeError, match="complex"):
        sg.grad(lambda x: np.sum(x))(np.ones(3, dtype=complex))
    with pytest.raises(TypeError, match="dtype <U1"):
        sg.grad(lambda x: np.sum(x))(np.array(["a"]))


def test_booleans_promote_in_arithmetic():
    f = lambda x: np.sum((x > 1.0) * x + (x < 2.0))
    assert_close(sg.jit(f)(X), f(X))
    assert_close(sg.grad(f)(X), (X > 1.0).astype(float))


@pytest.mark.parametrize("base", [-2.0, -np.inf, -0.0])
def test_negative_literal_base(base):
    # generated code must not read (-2.0) ** y as -(2.0 ** y)
    y = np.array([2.0, 3.0, 0.5])
    with np.errstate(all="ignore"):
        want = base ** y
    for backend in ("numba", "numpy"):
        got = sg.jit(lambda y: base ** y, backend=backend)(y)
        np.testing.assert_array_equal(got, want)


def test_power_follows_numpy_on_arrays_at_special_values():
    # numpy's power computes exponent 0.5 as sqrt: sqrt(-inf) is nan, sqrt(-0.0) is -0.0
    x = np.array([-np.inf, -0.0, 0.0, 4.0, np.inf])
    with np.errstate(all="ignore"):
        for e in (0.5, 2.0, -1.0):
            want = np.power(x, e)
            for backend in ("numba", "numpy"):
                got = sg.jit(lambda x, e=e: np.power(x, e), backend=backend)(x)
                assert np.array_equal(np.signbit(got), np.signbit(want)), (e, backend)
                np.testing.assert_array_equal(got, want)


def test_sign_of_negative_zero_matches_numpy_on_both_backends():
    x = np.array([-0.0, 0.0, -2.0])
    for backend in ("numba", "numpy"):
        s = sg.jit(np.sign, backend=backend)(x)
        assert not np.signbit(s[:2]).any(), backend
        g = sg.grad(lambda x: np.sum(np.abs(x)), backend=backend)(x)
        assert np.array_equal(g, [0.0, 0.0, -1.0]) and not np.signbit(g[:2]).any()


def _write_scalar(x):
    y = np.zeros(3)
    y[0] = x[0]  # numpy asks the traced x[0] for float() and says "with a sequence"
    return np.sum(y * np.arange(1.0, 4.0))


def _write_row(x):
    y = np.zeros((2, 3))
    y[1] = x  # numpy asks the traced x for __array__
    return np.sum(y)


def _write_fancy(x):
    y = np.ones(4)
    y[[0, 2]] = x[:2]
    return np.sum(y)


@pytest.mark.parametrize("f", [_write_scalar, _write_row, _write_fancy])
def test_writing_a_traced_value_into_a_numpy_array_points_to_stack_and_at(f):
    with pytest.raises(sg.TracerConversionError) as e:
        sg.grad(f)(np.ones(3))
    message = str(e.value)
    assert "numpy array" in message and "np.stack" in message and "sg.at(y)" in message
    assert "test_trace.py:" in message and f"(in {f.__name__})" in message, message
    assert "with a sequence" not in message and e.value.__cause__ is None


def test_the_fix_the_write_error_suggests_works():
    def fixed(x):
        y = sg.at(np.zeros(3))[0].set(x[0])
        return np.sum(y * np.arange(1.0, 4.0))
    assert_close(sg.grad(fixed)(np.ones(3)), [1.0, 0.0, 0.0])


@pytest.mark.parametrize("f, want", [
    (lambda x: np.sum(np.array([x[0], x[1]])), [1.0, 1.0, 0.0]),
    (lambda x: np.sum(np.array([x, x]) * np.arange(2.0)[:, None]), [1.0, 1.0, 1.0]),
    (lambda x: np.sum(np.asarray(x) ** 2), [2.0, 4.0, 6.0]),
])
def test_a_numpy_array_of_traced_values_is_numpys_object_array(f, want):
    """np.array([x, y]) holds the traced elements (numpy's object array); arithmetic on it
    works, and symgrad assembles it into one traced array where it meets symgrad."""
    assert_close(sg.grad(f)(np.array([1.0, 2.0, 3.0])), want)


@pytest.mark.parametrize("f", [lambda x: np.mean([x[0], x[1]]),
                               lambda x: np.max(np.array([x[0], x[1]])),
                               lambda x: np.sum(np.asarray(np.concatenate([x] * 40)))])
def test_what_numpy_cannot_do_with_traced_elements_points_to_stack(f):
    # numpy's own reductions need the values; a large array is refused at once
    with pytest.raises((sg.TracerConversionError, sg.TracerBoolConversionError,
                        sg.UnsupportedFunctionError), match=r"np\.stack"):
        sg.grad(f)(np.array([1.0, 2.0, 3.0]))


def test_a_tensor_is_a_constant_to_as_constant_array():
    t = sg.tensor([1.0, 2.0, 3.0])
    assert not isinstance(t, Tracer)  # an eager value, not a symbolic one
    np.testing.assert_array_equal(as_constant_array(t), [1.0, 2.0, 3.0])
    # as a constant inside a traced function: the gradient of sum(x * t) is t
    assert_close(sg.grad(lambda x: np.sum(x * t))(np.ones(3)), [1.0, 2.0, 3.0])


def test_a_traced_value_where_a_concrete_array_is_needed_is_named_as_such():
    with pytest.raises(TypeError) as e:
        sg.jit(lambda x: as_constant_array(x, "the value"))(X)
    message = str(e.value)
    assert message.startswith("the value is a traced value of a function being traced")
    assert "nest" not in message and "transformed function" not in message


def test_power_by_a_scalar_known_later_follows_numpy():
    """An exponent the kernel takes as an argument (a traced scalar, or a float read from
    outside): numpy computes a scalar 0.5 as sqrt (nan at -inf, -0.0 at -0.0); the gradient
    in the exponent at 0.5 is pow's, not sqrt's zero (central differences)."""
    x = np.array([-np.inf, -0.0, 0.0, 4.0, np.inf, 2.5])
    p = 0.5
    for backend in ("numba", "numpy"):
        with np.errstate(all="ignore"):
            for got in (sg.jit(lambda x, e: np.power(x, e), backend=backend)(x, 0.5),
                        sg.jit(lambda x: x ** p, backend=backend)(x)):
                want = np.power(x, 0.5)
                assert np.array_equal(got, want, equal_nan=True)
                assert np.array_equal(np.signbit(got), np.signbit(want))
        y = np.array([2.0, 3.0])
        _, gp = sg.grad(lambda x, e: np.sum(x ** e), argnums=(0, 1), backend=backend)(y, 0.5)
        h = 1e-6
        assert gp == pytest.approx((np.sum(y ** (0.5 + h)) - np.sum(y ** (0.5 - h))) / (2 * h),
                                   rel=1e-7)
