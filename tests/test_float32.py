"""float32 end to end: float32 arguments give float32 graphs, kernels and results.

Oracles are float64, never float32 symgrad itself: ``check_grad`` (SymPy at 50
digits and central differences, both in float64 at the float32 values, with
float32 tolerances), the float64 gradient of the same values, numpy's own
float64 value, and numpy's ``np.result_type`` for promotion. Both backends
(Numba kernel and numpy interpreter) run every case.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as ss

import symgrad as sg
from symgrad.backend.numba.stats import compile_stats
from symgrad.testing import check_grad

BACKENDS = ("numba", "numpy")
RTOL = 1e-5  # float32's epsilon is 1.2e-7: a few roundings, relative to the largest element


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def _f32(*shape: int, lo: float = -1.0, hi: float = 1.0, seed: int = 0) -> np.ndarray:
    return _rng(seed).uniform(lo, hi, shape).astype(np.float32)


def _close(got: np.ndarray, want: np.ndarray, rtol: float = RTOL) -> None:
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    assert np.max(np.abs(got - want), initial=0.0) <= rtol * scale, (got, want)


def _loop(x):
    return np.sum(sg.fori_loop(0, 3, lambda i, c: np.sin(c) * 0.5 + c * c, x))


def _scan(x):
    carry, ys = sg.scan(lambda c, r: (c * r + 0.25, c), x[:2], x[2:6].reshape(2, 2))
    return np.sum(carry) + np.sum(ys * ys)


# (name, function, argument shapes): a sample of every family
CASES = [
    ("elementwise", lambda x: np.sum(np.sin(x) * np.exp(-x * x) + np.tanh(x) / 3.0), [(7,)]),
    ("reductions", lambda x: np.mean(x * x) + np.max(x) + np.sum(np.prod(x + 2.0, axis=0)),
     [(3, 4)]),
    ("broadcasting", lambda a, u, v: np.mean(np.tanh(a * u[:, None] + v) ** 2),
     [(3, 4), (3,), (4,)]),
    ("matmul", lambda a, b: np.sum(np.tanh(a @ b)), [(3, 4), (4, 2)]),
    ("indexing", lambda x: np.sum(x[1:4] ** 2) + x[0] * x[-1] + np.sum(x[[0, 2, 2]]), [(6,)]),
    ("where", lambda x: np.sum(np.where(x > 0.1, x * x, -x / 2.0)), [(8,)]),
    ("fori_loop", _loop, [(5,)]),
    ("scan", _scan, [(6,)]),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name,fn,shapes", CASES, ids=[c[0] for c in CASES])
def test_grad_of_float32_is_float32_and_right(name, fn, shapes, backend):
    args = [_f32(*s, seed=k) for k, s in enumerate(shapes)]
    argnums = tuple(range(len(args)))
    value, grads = sg.value_and_grad(fn, argnums=argnums, backend=backend)(*args)
    assert type(value) is np.float32
    assert all(g.dtype == np.float32 for g in grads)
    # float64 oracles: numpy's value, symgrad's float64 gradient at the same values,
    # and check_grad's SymPy and central differences (float32 tolerances)
    # (the float64 gradient from the interpreter: for the Numba row an independent
    # computation, and no second kernel to compile; the interpreter row's check_grad
    # compares the same function with SymPy and central differences)
    wide = [a.astype(np.float64) for a in args]
    _close(value, fn(*wide))
    for g, g64 in zip(grads, sg.grad(fn, argnums=argnums, backend="numpy")(*wide)):
        assert g64.dtype == np.float64
        _close(g, g64)
    if backend == "numpy":
        check_grad(fn, *args, backend=backend, sympy=name not in ("fori_loop", "scan"))


LINALG = {
    "solve": lambda a: np.sum(np.linalg.solve(a @ a.T + 3 * np.eye(3), np.arange(3.0)) ** 2),
    "cholesky": lambda a: np.sum(np.linalg.cholesky(a @ a.T + 3 * np.eye(3))),
    "svd": lambda a: np.sum(np.linalg.svd(a, full_matrices=False)[1] ** 3),
    "slogdet": lambda a: np.linalg.slogdet(a @ a.T + np.eye(3))[1],
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(LINALG))
def test_linear_algebra_runs_in_float32(name, backend):
    """LAPACK-backed primitives: Numba calls the single-precision routines (no float64
    detour); checked against float64 symgrad and central differences in float64."""
    f, a = LINALG[name], _f32(3, 3, seed=5)
    g = sg.grad(f, backend=backend)(a)
    assert g.dtype == np.float32
    _close(g, sg.grad(f, backend=backend)(a.astype(np.float64)), rtol=1e-4)
    check_grad(f, a, backend=backend, sympy=False)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_fast_path_keeps_float32(backend):
    f = sg.value_and_grad(lambda x: np.sum(np.sin(x) * x), backend=backend)
    x = _f32(5)
    for _ in range(3):  # the first call fills the fast path, the others take it
        value, g = f(x)
        assert type(value) is np.float32 and g.dtype == np.float32
    j = sg.jit(lambda x: (np.sum(x * 2.0), x * 2.0), backend=backend)
    for _ in range(3):
        s, y = j(x)
        assert type(s) is np.float32 and y.dtype == np.float32
        _close(s, np.sum(x.astype(np.float64) * 2.0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_float32_scalars(backend):
    g = sg.grad(lambda x, y: np.sin(x) * y, argnums=(0, 1), backend=backend)
    for _ in range(3):  # the checked path, then the fast path
        gx, gy = g(np.float32(0.3), np.float32(2.0))
        assert type(gx) is np.float32 and type(gy) is np.float32
        _close(gx, np.cos(0.3) * 2.0)
        _close(gy, np.sin(np.float64(np.float32(0.3))))


PROMOTIONS = [
    ("f32*f32", (np.float32, np.float32)),
    ("f32*f64", (np.float32, np.float64)),
    ("f64*f32", (np.float64, np.float32)),
    ("f32*bool", (np.float32, np.bool_)),
    ("f64*bool", (np.float64, np.bool_)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name,dtypes", PROMOTIONS, ids=[p[0] for p in PROMOTIONS])
def test_mixed_dtypes_promote_as_numpy(name, dtypes, backend):
    x = _f32(4).astype(dtypes[0])
    y = (_f32(4, seed=1) > 0) if dtypes[1] is np.bool_ else _f32(4, seed=1).astype(dtypes[1])
    out = sg.jit(lambda x, y: x * y + 1.0, backend=backend)(x, y)
    assert out.dtype == np.result_type(x, y)
    _close(out, x.astype(np.float64) * y + 1.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_python_scalars_are_weak(backend):
    x = _f32(4)
    for f in (lambda x: x * 2.0, lambda x: x + 3, lambda x: 1.5 / (x + 2.0), lambda x: x ** 2):
        out = sg.jit(f, backend=backend)(x)
        assert out.dtype == np.result_type(f(x)) == np.float32


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradients_have_their_primals_dtype(backend):
    x, y = _f32(4), _f32(4, seed=1).astype(np.float64)
    gx, gy = sg.grad(lambda x, y: np.sum(np.sin(x) * y), argnums=(0, 1), backend=backend)(x, y)
    assert gx.dtype == np.float32 and gy.dtype == np.float64
    _close(gx, np.cos(x.astype(np.float64)) * y)
    _close(gy, np.sin(x.astype(np.float64)))  # sin(x) is float32, as in numpy
    # an argument the output does not depend on: float32 zeros
    gz = sg.grad(lambda x, z: np.sum(x * x), argnums=1, backend=backend)(x, _f32(3))
    assert gz.dtype == np.float32 and not gz.any()


@pytest.mark.parametrize("backend", BACKENDS)
def test_transforms_keep_float32(backend):
    x = _f32(4)
    x64 = x.astype(np.float64)
    f = lambda x: np.sum(np.sin(x) * x)  # noqa: E731
    y, pullback = sg.vjp(lambda x: np.sin(x) * 2.0, x, backend=backend)
    assert y.dtype == np.float32
    (g,) = pullback(np.ones(4))  # a float64 cotangent is taken in the output's dtype
    assert g.dtype == np.float32
    _close(g, 2.0 * np.cos(x64))
    out, tangent = sg.jvp(np.sin, (x,), (np.ones(4, np.float32),), backend=backend)
    assert out.dtype == tangent.dtype == np.float32
    _close(tangent, np.cos(x64))
    h = sg.hessian(f, backend=backend)(x)
    assert h.dtype == np.float32
    _close(h, np.diag(2 * np.cos(x64) - x64 * np.sin(x64)))
    v = sg.vmap(lambda r: np.sum(np.sin(r)))(x.reshape(2, 2))
    assert v.dtype == np.float32
    _close(v, np.sin(x64.reshape(2, 2)).sum(axis=1))
    g = sg.grad(lambda x: np.sum(np.sin(x) ** 2), backend=backend)(x, )
    assert g.dtype == np.float32


def test_float32_and_float64_kernels_are_cached_separately():
    f = sg.grad(lambda x: np.sum(np.cos(x) * 1.2345678 + x * x))

    def kernels() -> tuple[int, int]:
        s = compile_stats()
        return s["kernels"], s["compiled"] + s["loaded_from_disk"]

    x = _f32(6)
    before = kernels()
    assert f(x).dtype == np.float32
    after32 = kernels()
    assert after32[0] == before[0] + 1
    assert f(x.astype(np.float64)).dtype == np.float64  # a new kernel, of its own source
    after64 = kernels()
    assert after64[0] == after32[0] + 1
    assert f(_f32(9, seed=3)).dtype == np.float32  # a new length, the float32 kernel again
    assert kernels() == after64
    assert f.source(x) != f.source(x.astype(np.float64))


def _sums_into_products(x, w, v):
    # a mean over a middle axis (a loop of its own), a fused sum over the last axis and a
    # product over the first, each a float32 matrix product's operand
    return (np.sum(np.tanh(np.mean(x, axis=1) @ w))
            + 0.1 * np.sum(np.sum(np.exp(x * 0.5), axis=2) @ v)
            + 0.01 * np.sum(np.prod(x + 2.0, axis=0) @ w))


def test_float32_sums_over_axes_stay_float32_in_kernels():
    """A float32 sum over axes is float32 in the kernel, as in the IR: its float64
    accumulator, given to ``np.dot`` with a float32 matrix, did not compile (Numba's
    TypingError; a Tensor backward fell back to the interpreter). Against the
    interpreter and float64; the middle axis's mean is numpy's bits (numpy adds its
    slices in order, in float32)."""
    x, w, v = _f32(4, 3, 5), _f32(5, 2, seed=1), _f32(3, 2, seed=2)
    before = compile_stats()["compiled_calls"]
    value, grads = sg.value_and_grad(_sums_into_products, argnums=(0, 1, 2),
                                     backend="numba")(x, w, v)
    assert compile_stats()["compiled_calls"] == before + 1  # the kernel ran
    want, wanted = sg.value_and_grad(_sums_into_products, argnums=(0, 1, 2),
                                     backend="numpy")(x, w, v)
    wide = [a.astype(np.float64) for a in (x, w, v)]
    _close(value, want)
    _close(value, _sums_into_products(*wide))
    for g, h, g64 in zip(grads, wanted, sg.grad(_sums_into_products, argnums=(0, 1, 2),
                                                backend="numpy")(*wide)):
        assert g.dtype == np.float32
        _close(g, h)
        _close(g, g64)
    mean = sg.jit(lambda x: np.mean(x, axis=1) * 1.0, backend="numba")(_f32(6, 9, 33))
    np.testing.assert_array_equal(mean, np.mean(_f32(6, 9, 33), axis=1))


def test_source_allocates_float32():
    x = _f32(5)
    src = sg.grad(lambda x: np.sum(np.sin(x) * np.exp(-x * x))).source(x)
    assert "dtype=np.float32" in src
    assert "f32[" in src  # the typed signature in the header
    assert "dtype=np.float32" not in sg.grad(lambda x: np.sum(np.sin(x))).source(
        x.astype(np.float64))


def test_explicit_convert_prints_and_differentiates():
    f = lambda x: np.sum(np.sin(x.astype(np.float32)).astype(np.float64) * x)  # noqa: E731
    x = _rng().uniform(-1, 1, 5)
    g = sg.grad(f)
    assert "convert(" in str(g.graph(x))
    assert g(x).dtype == np.float64
    # the float32 rounding inside is noise to a small step: differences over 1e-2
    check_grad(f, x, rtol=1e-6, fd_rtol=1e-3, eps=1e-2)


def test_other_input_dtypes():
    f = sg.grad(lambda x: np.sum(x * x))
    assert f(np.arange(3)).dtype == np.float64  # integers promote to float64, as before
    assert f(np.ones(3, np.float16)).dtype == np.float64  # float16: computed in float64
    with pytest.raises(TypeError, match="complex"):
        f(np.ones(3, np.complex64))


def test_dask_arrays_of_float32():
    da = pytest.importorskip("dask.array")
    x = _f32(1000, seed=7)
    value, g = sg.value_and_grad(lambda x: np.mean(np.sin(x) * x))(da.from_array(x, chunks=250))
    assert type(value) is np.float32 and g.dtype == np.float32
    x64 = x.astype(np.float64)
    _close(value, np.mean(np.sin(x64) * x64))
    _close(g, (np.cos(x64) * x64 + np.sin(x64)) / x.size)


MIXED_LINALG = {
    "matmul": lambda a, b: np.sum(np.tanh(a @ b)),
    "stacked matmul": lambda a, b: np.sum(np.tanh(np.stack([a, a]) @ np.stack([b, b]))),
    "solve": lambda a, b: np.sum(np.linalg.solve(a @ a.T + 3 * np.eye(3), b) ** 2),
    "lstsq": lambda a, b: np.sum(np.linalg.lstsq(a, b, rcond=None)[0] ** 2),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(MIXED_LINALG))
def test_float32_with_float64_in_linear_algebra(name, backend):
    """A float32 matrix with a float64 one: numpy promotes to float64 (Numba's BLAS and
    LAPACK take one dtype, so the kernel converts the float32 operand first)."""
    f, a, b = MIXED_LINALG[name], _f32(3, 3, seed=1), _f32(3, 3, seed=2).astype(np.float64)
    ga, gb = sg.grad(f, argnums=(0, 1), backend=backend)(a, b)
    assert ga.dtype == np.float32 and gb.dtype == np.float64
    wa, wb = sg.grad(f, argnums=(0, 1), backend=backend)(a.astype(np.float64), b)
    _close(ga, wa, rtol=1e-4)
    _close(gb, wb, rtol=1e-4)


X32 = np.linspace(0.2, 1.4, 4).astype(np.float32)


def _scan(x):
    return sg.scan(lambda c, xi: (c * xi + xi, None), x[0], x)[0]


def _fori(x):
    return np.sum(sg.fori_loop(0, 3, lambda i, c: c * c * 0.5 + 1.0, x))


def _while(x):
    return np.sum(sg.while_loop(lambda c: c[1] < 3.0,
                                lambda c: (c[0] * c[0] * 0.5 + 0.1, c[1] + 1.0), (x, 0.0))[0])


def _cond(x):
    return np.sum(sg.cond(x[0] > 0.0, lambda v: v * v * 2, lambda v: v * 3, x))


def _jvp(f):
    return lambda x: sg.jvp(f, (x,), (np.ones_like(x),))[1]


@pytest.mark.parametrize("loop", [_scan, _fori, _while, _cond], ids=lambda f: f.__name__)
@pytest.mark.parametrize("transform", ["grad", "jvp", "jacfwd", "hessian", "grad(grad)"])
def test_loops_and_cond_in_float32_under_every_transform(loop, transform):
    """float32 carries through forward mode and second order (a float64 seed of a float32
    carry, a float32 zero of an unseeded one, a 0-d float32 input of an inlined graph
    raised internal TypeErrors): float32 results within float32 precision of float64."""
    make = {"grad": sg.grad, "jvp": _jvp, "jacfwd": sg.jacfwd, "hessian": sg.hessian,
            "grad(grad)": lambda f: sg.grad(lambda y: np.sum(sg.grad(f)(y) ** 2))}[transform]
    got, want = make(loop)(X32), make(loop)(X32.astype(np.float64))
    assert np.asarray(got).dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_a_float32_scalar_in_a_while_carry():
    def f(x):
        return sg.while_loop(lambda c: c[1] < 4.0, lambda c: (c[0] * 1.1, c[1] + 1),
                             (x, np.float32(0.0)))[0]

    for backend in BACKENDS:
        got = sg.jit(f, backend=backend)(X32)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, X32.astype(np.float64) * 1.1 ** 4, rtol=1e-6)


DTYPE_FLOAT64 = {  # numpy's dtype=np.float64 on float32 values: computed and returned in float64
    "sum": lambda x: np.sum(x, dtype=np.float64),
    "x.mean": lambda x: x.mean(axis=0, dtype=np.float64),
    "var": lambda x: np.var(x, dtype=np.float64),
    "std": lambda x: np.std(x, axis=1, dtype=np.float64),
    "cumsum": lambda x: np.cumsum(x, dtype=np.float64),
    "cumprod": lambda x: np.cumprod(x, axis=1, dtype=np.float64),
    "trace": lambda x: np.trace(x, dtype=np.float64),
    "einsum": lambda x: np.einsum("ij,ij->i", x, x, dtype=np.float64),
    "matmul": lambda x: np.matmul(x, x.T, dtype=np.float64),
    "ufunc": lambda x: np.exp(x, dtype=np.float64),
    "concatenate": lambda x: np.concatenate([x, x], dtype=np.float64),
}


@pytest.mark.parametrize("name", DTYPE_FLOAT64)
def test_dtype_float64_of_float32_values_is_numpys_float64(name):
    """np.sum(x32, dtype=np.float64) was float32 (the dtype accepted and ignored): 1e-8
    off numpy's float64 sum. Values against numpy, gradients float32 against float64."""
    fun = DTYPE_FLOAT64[name]
    x = (np.arange(1, 7, dtype=np.float32) / 7).reshape(2, 3)
    want = fun(x)  # numpy itself
    got = sg.jit(fun, backend="interpreter")(x)
    assert np.asarray(got).dtype == np.asarray(want).dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-15)
    g = sg.grad(lambda x: np.sum(np.sin(fun(x))), backend="interpreter")(x)
    g64 = sg.grad(lambda x: np.sum(np.sin(fun(x))), backend="interpreter")(x.astype(np.float64))
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, g64, rtol=1e-6)


MASK = np.array([True, False, True, True])


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.float16, np.int32])
def test_a_constant_of_a_small_dtype_with_float32_promotes_as_numpy(dtype):
    """x32 * c for a constant c of a dtype float32 holds (a captured mask) is float32 in
    numpy; it was float64 (the constant converted to float64 first). int32 stays float64.
    As a condition (not narrowed to float32 first) it chooses by its truth, as numpy's."""
    c = MASK.astype(dtype) * (3 if dtype is not np.bool_ else 1)
    x = _f32(4)
    for fun in (lambda x: x * c + 1.0, lambda x: np.where(x > 0, x, c), lambda x: c - x,
                lambda x: np.where(c, x, 0.5) - x):
        want = fun(x)  # numpy itself
        got = sg.jit(fun, backend="interpreter")(x)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)
    g = sg.grad(lambda x: np.sum(np.sin(x * c)), backend="interpreter")(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, np.cos(x.astype(np.float64) * c) * c, rtol=1e-5)


@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "full_like", "var", "std"])
def test_like_constructors_and_var_std_keep_float32_as_numpy(name):
    fun = {"zeros_like": lambda x: x + np.zeros_like(x), "ones_like": lambda x: x * np.ones_like(x),
           "full_like": lambda x: x + np.full_like(x, 2.0),
           "var": lambda x: np.var(x, axis=1, ddof=1), "std": lambda x: np.std(x)}[name]
    x = X32.reshape(2, 2)
    want = fun(x)  # numpy itself
    for backend in BACKENDS:
        got = sg.jit(fun, backend=backend)(x)
        assert np.asarray(got).dtype == np.asarray(want).dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-5)
        g = sg.grad(lambda x: np.sum(fun(x)), backend=backend)(x)
        g64 = sg.grad(lambda x: np.sum(fun(x)), backend=backend)(x.astype(np.float64))
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, g64, rtol=1e-4, atol=1e-6)


# ---------------------------------------------------------------------------
# float32 math in float32 (symgrad/backend/vecmath32.py, issue 31): each function within
# 1 ulp, checked on a sample here (the dense measurement: benchmarks/float32_accuracy.py,
# docs/accuracy.md). Oracle: numpy's float64 function rounded to float32; a float32
# within 1 ulp of the exact value is at most 1 ulp (an integer) from that rounding

_MATH32 = {
    "exp": (np.exp, lambda v: np.exp(v)),
    "log": (np.log, lambda v: np.log(v)),
    "sin": (np.sin, lambda v: np.sin(v)),
    "cos": (np.cos, lambda v: np.cos(v)),
    "tanh": (np.tanh, lambda v: np.tanh(v)),
    "sigmoid": (lambda v: 1.0 / (1.0 + np.exp(-v)), lambda v: sg.sigmoid(v)),
    "softplus": (lambda v: np.logaddexp(0.0, v), lambda v: sg.softplus(v)),
}
#: zeros, infinities, nan, subnormals, and each side of every overflow, underflow and
#: rounds-to-1 threshold
_TAILS32 = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1.1754944e-38,
                     -1.1754944e-38, 1e-30, -1e-30, 88.72283, 88.72284, 89.0, 100.0, -87.33654,
                     -103.27893, -103.97208, -104.0, -200.0, 9.01, 9.1, -9.1, 17.0, -17.0,
                     -24.0, 24.0, 3.4028235e38, -3.4028235e38, 6432.9, -6432.9],
                    dtype=np.float32)


def _ulps32(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Distance in float32 steps (nan = nan, inf = inf only)."""
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    a = got.view(np.int32).astype(np.int64)
    b = want.view(np.int32).astype(np.int64)
    a = np.where(a < 0, -(a & 0x7FFFFFFF), a)  # an ordered integer line (-0 = +0)
    b = np.where(b < 0, -(b & 0x7FFFFFFF), b)
    d = np.abs(a - b).astype(np.float64)
    bad = ~np.isfinite(got) | ~np.isfinite(want)
    return np.where(same, 0.0, np.where(bad, np.inf, d))


def _sample32(n: int) -> np.ndarray:
    """n points: random bit patterns with |x| < 6000 (sin and cos stay on their float32
    path), uniform points where the functions vary, and points near 0, with the tails."""
    rng = np.random.default_rng(31)
    bits = rng.integers(0, 2**32, 4 * n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    bits = bits[np.abs(bits) < 6000.0][: n // 3]
    uniform = rng.uniform(-110.0, 95.0, n // 3).astype(np.float32)
    small = (rng.uniform(-1, 1, n // 3) * 10.0 ** rng.uniform(-30, 1, n // 3)).astype(np.float32)
    return np.concatenate([bits, uniform, small])


def test_float32_math_is_float32_code_within_one_ulp():
    names = list(_MATH32)
    x = _sample32(60_000)
    f = sg.jit(lambda v: tuple(_MATH32[name][1](v) for name in names))
    source = f.source(x)
    for name in names:
        assert f"vm32.{name}32(" in source, name
    assert "vm." not in source  # no float64 detour
    with np.errstate(all="ignore"):
        for name, got in zip(names, f(x)):
            assert got.dtype == np.float32
            want = _MATH32[name][0](x.astype(np.float64)).astype(np.float32)
            err = _ulps32(got, want)
            worst = int(np.argmax(err))
            assert err[worst] <= 1.0, (name, x[worst], got[worst], want[worst])


def test_float32_math_at_its_tails_is_numpys_float32():
    """Overflow, underflow, nan, inf and -0.0 exactly as numpy's float32 functions give
    them (bit for bit where the value is exact; within 1 ulp elsewhere). The kernel is
    the one test_float32_math_is_float32_code_within_one_ulp compiles; with +-3.4e38 in
    it, sin and cos run their loop again with libm."""
    names = list(_MATH32)
    got = sg.jit(lambda v: tuple(_MATH32[name][1](v) for name in names))(_TAILS32)
    with np.errstate(all="ignore"):
        for name, g in zip(names, got):
            ref = _MATH32[name][0]
            want = (ref(_TAILS32) if name in ("exp", "log", "sin", "cos", "tanh")
                    else ref(_TAILS32.astype(np.float64)).astype(np.float32))
            assert np.array_equal(np.isnan(g), np.isnan(want)), (name, _TAILS32[np.isnan(g)])
            exact = ~np.isfinite(want) | (want == 0.0) | ~np.isfinite(g) | (g == 0.0)
            assert np.array_equal(g[exact].view(np.int32), want[exact].view(np.int32)), \
                (name, _TAILS32[exact], g[exact], want[exact])
            assert _ulps32(g, want).max() <= 1.0, (name, g, want)


@pytest.mark.parametrize("name,fn,shapes", [
    ("all seven", lambda x: np.sum(np.exp(-x * x) * np.sin(3.0 * x) + np.cos(x) * np.tanh(x)
                                   + sg.sigmoid(x) * np.log(x * x + 0.5) + sg.softplus(2.0 * x)),
     [(2000,)]),
    ("broadcast tanh", lambda A, u, v: np.mean(np.tanh(A * u[:, None] + v) ** 2),
     [(40, 30), (40,), (30,)]),
], ids=["all seven", "broadcast tanh"])
def test_float32_gradients_of_the_float32_math_agree_with_float64(name, fn, shapes):
    args = [_f32(*s, lo=-3.0, hi=3.0, seed=k) for k, s in enumerate(shapes)]
    argnums = tuple(range(len(args)))
    g32 = sg.grad(fn, argnums=argnums)
    assert "vm32." in g32.source(*args)
    wide = [a.astype(np.float64) for a in args]
    for g, g64 in zip(g32(*args), sg.grad(fn, argnums=argnums)(*wide)):
        assert g.dtype == np.float32 and g64.dtype == np.float64
        _close(g, g64, rtol=2e-6)


# symgrad's functions on plain arrays (no trace) against scipy's: float32 and complex64
# values keep their precision, integers become float64
PLAIN = {
    "sg.logsumexp": (lambda x: sg.logsumexp(x, axis=1), lambda x: ss.logsumexp(x, axis=1)),
    "sg.softmax": (lambda x: sg.softmax(x, axis=1), lambda x: ss.softmax(x, axis=1)),
    "sg.log_softmax": (lambda x: sg.log_softmax(x, axis=1), lambda x: ss.log_softmax(x, axis=1)),
    "special.logsumexp": (sg.scipy.special.logsumexp, ss.logsumexp),
    "special.softmax": (sg.scipy.special.softmax, ss.softmax),
    "special.log_softmax": (sg.scipy.special.log_softmax, ss.log_softmax),
    "sg.sigmoid": (sg.sigmoid, ss.expit),
    "sg.xlogy": (lambda x: sg.xlogy(x, x * x), lambda x: ss.xlogy(x, x * x)),
}


@pytest.mark.parametrize("name", sorted(PLAIN))
@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.int64])
def test_functions_on_plain_arrays_keep_scipys_dtype(name, dtype):
    mine, scipys = PLAIN[name]
    x = (np.arange(12).reshape(3, 4) % 5 - 1.5) * (1 if dtype is np.int64 else 0.75)
    x = (x + (0.5j if dtype is np.complex64 else 0)).astype(dtype)
    try:
        want = scipys(x)
    except TypeError:  # scipy's expit takes no complex values: neither does symgrad's
        with pytest.raises(TypeError, match="does not take complex operands"):
            mine(x)  # (it took the real part)
        return
    got = mine(x)
    assert got.dtype == want.dtype
    tol = 1e-6 if want.dtype in (np.float32, np.complex64) else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
