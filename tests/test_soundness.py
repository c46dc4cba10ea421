"""No silent wrong answers: composed transformations and values read from outside.

Every result here is compared with an oracle that does not share symgrad's
code: SymPy's derivatives at 50 digits, central finite differences of the
plain Python function, or the plain Python function itself, called after the
world it reads has changed.
"""

import functools
import threading
import types

import numpy as np
import pytest
import sympy

import symgrad as sg
from symgrad.transforms.signature import Grad

# ---------------------------------------------------------------------------
# composed transformations, against SymPy

X = sympy.Symbol("x")
SCALAR_FUNCTIONS = [  # (numpy function, the same in SymPy)
    (np.sin, sympy.sin(X)),
    (lambda x: x ** 3, X ** 3),
    (lambda x: np.exp(x) * x, sympy.exp(X) * X),
    (lambda x: np.tanh(x) ** 2, sympy.tanh(X) ** 2),
    (lambda x: np.log1p(x * x) / (1.0 + x), sympy.log(1 + X * X) / (1 + X)),
    (lambda x: np.sqrt(x) * np.cos(2.0 * x), sympy.sqrt(X) * sympy.cos(2 * X)),
]
POINTS = [0.3, 1.7]


def derivative(expr, order, at):
    return float(sympy.diff(expr, X, order).evalf(50, subs={X: at}))


@pytest.mark.parametrize("backend", ["numba", "numpy"])
@pytest.mark.parametrize("k", range(len(SCALAR_FUNCTIONS)))
def test_compositions_of_grad_and_jit_match_sympy(k, backend):
    f, expr = SCALAR_FUNCTIONS[k]
    grad = functools.partial(sg.grad, backend=backend)
    jit = functools.partial(sg.jit, backend=backend)
    vg = functools.partial(sg.value_and_grad, backend=backend)
    for at in POINTS:
        d0, d1, d2, d3 = (derivative(expr, n, at) for n in range(4))
        close = functools.partial(np.testing.assert_allclose, rtol=1e-12, atol=1e-14)
        close(grad(grad(f))(at), d2)
        close(grad(grad(grad(f)))(at), d3)
        close(grad(jit(f))(at), d1)
        close(jit(grad(f))(at), d1)
        close(jit(grad(grad(f)))(at), d2)
        value, slope = vg(jit(f))(at)
        close([value, slope], [d0, d1])
        value, slope = vg(grad(f))(at)
        close([value, slope], [d1, d2])
        close(grad(lambda x: vg(f)(x)[1])(at), d2)


def test_wrapping_never_changes_the_inner_transformation():
    inner = sg.grad(lambda x: x ** 3)
    before = dict(inner.__dict__)
    outer = sg.grad(inner)
    assert outer(2.0) == pytest.approx(12.0)
    assert inner(2.0) == pytest.approx(12.0)
    assert inner.__dict__.keys() == before.keys()
    assert inner.fun is before["fun"] and type(inner.signature) is Grad
    assert outer.fun is inner and type(outer.signature) is Grad
    assert outer.__name__ == inner.__name__ == "<lambda>"


def central_difference(f, x, h=1e-6):
    """The gradient of a scalar function of an array by central differences."""
    x = np.array(x, dtype=float)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += h
        down[i] -= h
        g[i] = (f(up) - f(down)) / (2 * h)
    return g


V = np.array([0.3, -1.2, 2.0])


def test_a_gradient_penalty_against_finite_differences():
    def loss(w):
        return np.sum(np.tanh(w) * w ** 2)

    def penalty(w):
        return np.sum(sg.grad(loss)(w) ** 2) + np.sum(w)

    def plain_gradient(w):  # the gradient of loss by hand, for the oracle
        return (1 - np.tanh(w) ** 2) * w ** 2 + 2 * w * np.tanh(w)

    expected = central_difference(lambda w: np.sum(plain_gradient(w) ** 2) + np.sum(w), V)
    np.testing.assert_allclose(sg.grad(penalty)(V), expected, rtol=1e-6)
    np.testing.assert_allclose(sg.jit(penalty)(V), np.sum(plain_gradient(V) ** 2) + np.sum(V),
                               rtol=1e-12)


def test_hessian_vector_products_by_grad_of_grad():
    def f(x):
        return np.sum(np.exp(x) * x) + np.prod(x)

    v = np.array([1.0, -2.0, 0.5])
    hvp = sg.grad(lambda x: np.sum(sg.grad(f)(x) * v))(V)
    expected = central_difference(lambda x: np.sum(sg.grad(f, backend="numpy")(x) * v), V)
    np.testing.assert_allclose(hvp, expected, rtol=1e-6)
    # with gradient= inside: the same product
    hvp2 = sg.grad(lambda x: np.sum(sg.grad(lambda y: np.exp(y) * y)(x, gradient=v)))(V)
    np.testing.assert_allclose(hvp2, np.exp(V) * (2 + V) * v, rtol=1e-12)


def test_an_inner_function_closing_over_the_outer_argument():
    # d/dx [d/dy sin(x y)] at y = x: cos(x²) - x² sin(x²), plus the y = x dependence
    y0 = 0.7

    def mixed(x):
        return sg.grad(lambda y: np.sin(x * y))(y0)  # x * cos(x * y0)

    x0 = 1.3
    expected = np.cos(x0 * y0) - x0 * y0 * np.sin(x0 * y0)
    assert sg.grad(mixed)(x0) == pytest.approx(expected, rel=1e-12)
    assert sg.grad(lambda x: sg.grad(lambda y: x * y ** 2)(x))(3.0) == pytest.approx(12.0)


def test_vjp_and_argnums_inside_grad():
    f = lambda x: np.sum(sg.vjp(np.sin, x)[1](np.ones(3))[0] * x)  # sum(cos(x) x)
    np.testing.assert_allclose(sg.grad(f)(V), np.cos(V) - V * np.sin(V), rtol=1e-12)
    two = sg.grad(lambda a, b: a * b * b, argnums=(0, 1))
    assert sg.grad(lambda a: two(a, 2.0)[1])(3.0) == pytest.approx(4.0)


def test_a_traced_value_escaping_an_inner_function_is_refused():
    leaked = []

    def inner(y):
        leaked.append(y)
        return y * 2.0

    def outer(x):
        sg.grad(inner)(x)
        return leaked[-1] * x

    with pytest.raises(sg.EscapedTracerError):
        sg.grad(outer)(1.0)


# ---------------------------------------------------------------------------
# values read from outside: every capture kind, every transformation, after a change

SCALE = 2.0
WEIGHTS = np.array([1.0, 2.0, 3.0])
config = types.ModuleType("config")  # stands for a user's module of settings
config.SCALE = 2.0


class Settings:
    def __init__(self):
        self.scale = 2.0


class Model:
    def __init__(self):
        self.w = np.array([1.0, 2.0, 3.0])
        self.settings = Settings()

    def loss(self, x):
        return np.sum(self.settings.scale * (self.w * x) ** 2)

    def plain(self, x):
        return np.sum(self.settings.scale * (self.w * x) ** 2)


def helper(x):
    return np.sum(np.sin(WEIGHTS * x))


def capture_global_number():
    f = lambda x: np.sum(SCALE * np.sin(x))

    def change():
        global SCALE
        SCALE = 5.0
    return f, change


def capture_global_array():
    f = lambda x: np.sum(np.sin(WEIGHTS * x))

    def change():
        global WEIGHTS
        WEIGHTS = np.array([-1.0, 0.5, 4.0])
    return f, change


def capture_helper_global():
    f = lambda x: helper(x) * 2.0

    def change():
        global WEIGHTS
        WEIGHTS = np.array([-1.0, 0.5, 4.0])
    return f, change


def capture_closure_cell():
    scale = 2.0
    f = lambda x: np.sum(scale * np.sin(x))

    def change():
        nonlocal scale
        scale = -3.0
    return f, change


def capture_bound_method_attribute():
    m = Model()

    def change():
        m.w = np.array([10.0, 10.0, 1.0])
    return m.loss, change


def capture_nested_attribute():
    m = Model()

    def change():
        m.settings.scale = 7.0
    return m.loss, change


def capture_module_attribute():
    f = lambda x: np.sum(config.SCALE * np.cos(x))

    def change():
        config.SCALE = -4.0
    return f, change


def capture_array_in_place():
    W = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 3.0], [1.0, 0.0, 1.0]])
    f = lambda x: np.sum(np.tanh(W @ x))

    def change():
        W[:] = 2 * np.eye(3)
    return f, change


def capture_array_replaced_with_another_shape():
    w = np.array([1.0, 2.0, 3.0])
    f = lambda x: np.sum(np.sin(w[:, None] * x))  # an outer product: (3, 3), then (4, 3)

    def change():
        nonlocal w
        w = np.array([1.0, -1.0, 0.5, 2.0])
    return f, change


def capture_array_replaced_with_another_dtype():
    w = np.array([1.0, 2.0, 3.0])
    f = lambda x: np.sum(np.sin(w * x))

    def change():
        nonlocal w
        w = np.array([4, -2, 1])  # int64: the same shape, other values
    return f, change


def capture_default_argument_in_place():
    def f(x, w=np.array([1.0, 2.0, 3.0])):  # noqa: B008 -- the captured default under test
        return np.sum(np.sin(w * x))

    def change():
        f.__defaults__[0][:] = [3.0, 0.0, -1.0]
    return f, change


def capture_list_element_in_place():
    layers = [np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.5, 0.5])]
    f = lambda x: np.sum(np.tanh(layers[0] * x) * layers[1])

    def change():
        layers[1] *= -2.0
    return f, change


CAPTURES = [capture_global_number, capture_global_array, capture_helper_global,
            capture_closure_cell, capture_bound_method_attribute, capture_nested_attribute,
            capture_module_attribute, capture_array_in_place,
            capture_array_replaced_with_another_shape, capture_array_replaced_with_another_dtype,
            capture_default_argument_in_place, capture_list_element_in_place]


@pytest.fixture(autouse=True)
def fresh_globals():
    global SCALE, WEIGHTS
    SCALE, WEIGHTS, config.SCALE = 2.0, np.array([1.0, 2.0, 3.0]), 2.0
    yield


def check_transformation(name, f, x):
    """The transformation ``name`` of ``f`` at ``x`` against the plain function."""
    if name == "jit":
        np.testing.assert_allclose(sg.jit(f)(x), f(x), rtol=1e-12)
        return
    expected = central_difference(f, x)
    if name == "grad":
        got = sg.grad(f)(x)
    elif name == "value_and_grad":
        value, got = sg.value_and_grad(f)(x)
        np.testing.assert_allclose(value, f(x), rtol=1e-12)
    else:
        out, pullback = sg.vjp(f, x)
        np.testing.assert_allclose(out, f(x), rtol=1e-12)
        (got,) = pullback(2.0)
        expected = 2.0 * expected
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("transformation", ["grad", "value_and_grad", "vjp", "jit"])
@pytest.mark.parametrize("capture", CAPTURES, ids=lambda c: c.__name__.removeprefix("capture_"))
def test_a_transformed_function_sees_the_current_world(capture, transformation):
    f, change = capture()
    x = np.array([0.3, -0.8, 1.1])
    if transformation == "jit":
        t = sg.jit(f)
        before = t(x)
        np.testing.assert_allclose(before, f(x), rtol=1e-12)
        change()
        np.testing.assert_allclose(t(x), f(x), rtol=1e-12)
        assert not np.allclose(t(x), before), "the change must change the result"
        return
    t = {"grad": sg.grad, "value_and_grad": sg.value_and_grad}.get(transformation)
    if t is None:  # vjp: a new pullback each time
        check_transformation("vjp", f, x)
        change()
        check_transformation("vjp", f, x)
        return
    g = t(f)
    g(x)  # the first trace reads the old world
    g(x)  # and the fast path is filled
    change()
    got = g(x)
    got = got[1] if transformation == "value_and_grad" else got
    np.testing.assert_allclose(got, central_difference(f, x), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda c: c.__name__.removeprefix("capture_"))
def test_second_derivatives_see_the_current_world(capture):
    f, change = capture()
    x = np.array([0.3, -0.8, 1.1])
    v = np.array([1.0, 0.5, -1.0])
    hvp = sg.grad(lambda x: np.sum(sg.grad(f)(x) * v))
    hvp(x)
    change()
    expected = central_difference(lambda x: np.sum(central_difference(f, x, 1e-4) * v), x, 1e-4)
    np.testing.assert_allclose(hvp(x), expected, rtol=1e-4, atol=1e-5)


def test_a_pullback_refuses_to_run_after_the_world_changed():
    f, change = capture_array_in_place()
    x = np.array([0.3, -0.8, 1.1])
    _, pullback = sg.vjp(f, x)
    pullback(1.0)
    change()
    with pytest.raises(RuntimeError, match="call sg.vjp again"):
        pullback(1.0)


def test_a_pullback_belongs_to_the_arguments_it_was_made_at():
    x = np.array([0.3, -0.8, 1.1])
    _, pullback = sg.vjp(lambda x: np.sin(x), x)
    x[:] = 0.0  # the caller reuses its buffer
    np.testing.assert_allclose(pullback(np.ones(3))[0], np.cos([0.3, -0.8, 1.1]), rtol=1e-15)


def test_an_unchanged_world_compiles_nothing_again():
    f, _ = capture_bound_method_attribute()
    x = np.array([0.3, -0.8, 1.1])
    g = sg.grad(f)
    g(x)
    traces = []
    stage = g._specialize
    g._specialize = lambda *a: traces.append(a) or stage(*a)
    for _ in range(3):
        g(x)
    assert traces == []


def test_a_world_that_changes_back_reuses_its_kernel():
    from symgrad.backend.numba import compile as kernels

    f, change = capture_array_in_place()
    x = np.array([0.3, -0.8, 1.1])
    g = sg.grad(f)
    g(x)
    compiled = kernels.compile_stats()["compiled"]
    change()  # new values in a captured array: a new trace, the same kernel source
    np.testing.assert_allclose(g(x), central_difference(f, x), rtol=1e-6)
    assert kernels.compile_stats()["compiled"] == compiled


# ---------------------------------------------------------------------------
# methods, keyword arguments, Tensors as arguments


class Quadratic:
    def __init__(self, w):
        self.w = np.asarray(w, dtype=float)

    @functools.partial(sg.grad, argnums=1)
    def grad_x(self, x):
        return np.sum(self.w * x ** 2)

    @functools.partial(sg.value_and_grad, argnums=1)
    def value_and_grad_x(self, x, scale=1.0):
        return scale * np.sum(self.w * x ** 2)

    @sg.grad
    def wrong(self, x):
        return np.sum(x)


def test_transformations_work_as_methods():
    q = Quadratic([1.0, 2.0, 3.0])
    np.testing.assert_allclose(q.grad_x(V), 2 * q.w * V)
    q.w = np.array([0.5, 0.5, 0.5])
    np.testing.assert_allclose(q.grad_x(V), V)
    other = Quadratic([3.0, 0.0, 1.0])
    np.testing.assert_allclose(other.grad_x(V), 2 * other.w * V)
    value, g = q.value_and_grad_x(V, scale=4.0)
    assert value == pytest.approx(4.0 * np.sum(0.5 * V ** 2))
    np.testing.assert_allclose(g, 4.0 * V)
    assert Quadratic.grad_x.__name__ == "grad_x"
    with pytest.raises(TypeError, match="argnums=1"):
        q.wrong(V)


def test_keyword_arguments_are_passed_through_and_not_differentiated():
    f = lambda x, scale=1.0, shift=None: np.sum(scale * np.sin(x)) + (
        0.0 if shift is None else np.sum(shift * x))
    g = sg.grad(f)
    np.testing.assert_allclose(g(V, scale=3.0), 3.0 * np.cos(V))
    np.testing.assert_allclose(g(V, scale=-1.0), -np.cos(V))
    np.testing.assert_allclose(g(V), np.cos(V))
    shift = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(g(V, shift=shift), np.cos(V) + shift)
    np.testing.assert_allclose(g(V, shift=2 * shift), np.cos(V) + 2 * shift)
    np.testing.assert_allclose(sg.jit(f)(V, scale=2.0), f(V, scale=2.0))
    assert sg.value_and_grad(f)(V, scale=2.0)[0] == pytest.approx(f(V, scale=2.0))


def test_a_tensor_argument_is_taken_as_its_value():
    t = sg.tensor([0.3, -0.8, 1.1], requires_grad=True)
    np.testing.assert_allclose(sg.grad(lambda x: np.sum(x ** 3))(t), 3 * t.detach().numpy() ** 2)
    np.testing.assert_allclose(sg.jit(lambda x: x * 2.0)(t), 2 * t.detach().numpy())


# ---------------------------------------------------------------------------
# threads


def test_threads_trace_and_nest_independently():
    errors = []
    results = {}

    def work(k):
        try:
            for j in range(6):
                c = 0.5 + 0.1 * k + 0.01 * j  # a fresh closure every time: a fresh trace
                f = lambda x, c=c: np.sum(np.sin(c * x))  # noqa: E731
                got = sg.grad(sg.grad(lambda x, f=f: f(x)), backend="numpy")(0.7)
                results[(k, j)] = (got, -c * c * np.sin(c * 0.7))
                g = sg.grad(f)(V)
                np.testing.assert_allclose(g, c * np.cos(c * V), rtol=1e-12)
        except Exception as e:  # noqa: BLE001 -- reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    assert len(results) == 48
    for got, expected in results.values():
        assert got == pytest.approx(expected, rel=1e-12)


def test_tensor_backward_sees_the_current_world():
    global WEIGHTS
    grads = []
    for weights in ([1.0, 2.0, 3.0], [-1.0, 0.5, 4.0]):
        WEIGHTS = np.array(weights)
        x = sg.tensor([0.3, -0.8, 1.1], requires_grad=True)
        (x * sg.from_numpy(WEIGHTS)).sin().sum().backward()
        grads.append(x.grad.numpy())
        np.testing.assert_allclose(grads[-1], WEIGHTS * np.cos(WEIGHTS * x.detach().numpy()),
                                   rtol=1e-12)
    assert not np.allclose(grads[0], grads[1])


def test_nested_jacobians_see_the_current_world():
    """jacfwd(jacrev(f)) wraps f in two closures of one code object: each is followed
    (a float and an array f reads, changed between calls, must be seen: the finite
    differences of the plain function's gradient are the oracle)."""
    state = {"k": 2.0}
    A = np.ones(2)

    def f(x):
        return state["k"] * np.sum(A * x ** 3)

    def fd_hessian(x, h=1e-5):
        g = lambda x: np.array([(f(x + h * e) - f(x - h * e)) / (2 * h)  # noqa: E731
                                for e in np.eye(len(x))])
        return np.array([(g(x + h * e) - g(x - h * e)) / (2 * h) for e in np.eye(len(x))])

    x = np.array([0.5, -1.5])
    for make in (sg.hessian, lambda f: sg.jacrev(sg.jacrev(f)), lambda f: sg.jacfwd(sg.jacfwd(f))):
        state["k"], A[:] = 2.0, 1.0
        H = make(f)
        for change in (lambda: None, lambda: state.update(k=3.0), lambda: A.__setitem__(0, 10.0)):
            change()
            np.testing.assert_allclose(H(x), fd_hessian(x), rtol=1e-5, atol=1e-4)


def test_a_name_absent_when_traced_is_guarded_as_absent():
    """A read that found nothing is a read: an attribute added after the trace
    (``getattr(o, "k", default)``, ``hasattr``) and a global defined after it (here
    one that shadows a builtin) change the result, as they change Python's."""
    class Options:
        pass

    options = Options()
    namespace = {"np": np}
    exec("def shadowed(x):\n    return np.sum(x) * abs(-2.0)", namespace)
    reads = [
        (lambda x: np.sum(x * getattr(options, "scale", 1.0)),
         lambda: setattr(options, "scale", 4.0)),
        (lambda x: np.sum(x * (3.0 if hasattr(options, "double") else 1.0)),
         lambda: setattr(options, "double", True)),
        (namespace["shadowed"], lambda: namespace.update(abs=lambda v: 10.0)),
    ]
    x = np.array([0.3, -0.8, 1.1])
    for f, change in reads:
        g = sg.value_and_grad(f, backend="numpy")
        g(x)
        g(x)  # (the fast path is filled)
        before = f(x)
        change()
        value, grad = g(x)
        assert f(x) != before, "the change must change the result"
        np.testing.assert_allclose(value, f(x), rtol=1e-12)
        np.testing.assert_allclose(grad, central_difference(f, x), rtol=1e-6, atol=1e-8)


def test_a_name_bound_to_a_library_module_is_guarded_by_identity():
    """numpy itself is taken as fixed, a name bound to it is not: ``M = np`` then
    ``M = other`` (a global, a closure variable, an attribute) changes the result."""
    holder = types.SimpleNamespace(lib=np)
    cell = [np]  # (a global `np` rebound would break this module: a namespace's instead)
    namespace = {"np": np, "M": np}
    exec("def by_global(x):\n    return np.sum(M.sin(x))", namespace)
    reads = [
        (namespace["by_global"], lambda: namespace.update(M=types.SimpleNamespace(sin=np.cos))),
        (lambda x: np.sum(holder.lib.sin(x)),
         lambda: setattr(holder, "lib", types.SimpleNamespace(sin=np.tanh))),
        (lambda x: np.sum(cell[0].sin(x)), lambda: cell.__setitem__(0, types.SimpleNamespace(
            sin=np.exp))),
    ]
    x = np.array([0.3, -0.8, 1.1])
    for f, change in reads:
        g = sg.jit(f, backend="numpy")
        g(x)
        g(x)
        before = f(x)
        change()
        assert f(x) != before, "the change must change the result"
        np.testing.assert_allclose(g(x), f(x), rtol=1e-12)
