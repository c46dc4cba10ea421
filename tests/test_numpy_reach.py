"""numpy's methods and functions people reach for (issue 28, part 4) on traced values:
values against numpy itself, gradients against JAX (float64) where JAX has the function
(median, percentile, quantile, nan*, interp, convolve, correlate, polyval,
matrix_power), against central differences of numpy's own function elsewhere; vmap
with pytree in_axes/out_axes against JAX's vmap. Interpreter only."""

from __future__ import annotations

import numpy as np
import pytest

import symgrad as sg

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

RNG = np.random.default_rng(28)
Y = RNG.normal(size=(3, 4))
YNAN = Y.copy()
YNAN[1, 2] = np.nan
YNAN[0, 0] = np.nan


def _check(fn, jfn, *args, argnums=0, rtol=1e-13, atol=1e-14):
    """numpy's value, and JAX's gradient of sum(fn * w) for a fixed random w (``jfn``
    None: central differences of numpy's ``fn``)."""
    value = sg.jit(fn, backend="numpy")(*args)
    want = fn(*args)
    np.testing.assert_allclose(value, want, rtol=rtol, atol=1e-15, equal_nan=True)
    assert np.shape(value) == np.shape(want)
    w = RNG.uniform(-1, 1, np.shape(want))
    g = sg.grad(lambda *a: np.sum(fn(*a) * w), argnums=argnums, backend="numpy")(*args)
    if jfn is None:
        assert argnums == 0
        jg = _fd(lambda x: fn(x, *args[1:]) * w, np.array(args[0], dtype=float))
        rtol = 1e-6
    else:
        jg = jax.grad(lambda *a: jnp.sum(jfn(*a) * w), argnums=argnums)(*map(jnp.asarray, args))
    for mine, theirs in zip(g if isinstance(argnums, tuple) else (g,),
                            jg if isinstance(argnums, tuple) else (jg,)):
        np.testing.assert_allclose(mine, np.asarray(theirs), rtol=rtol, atol=atol,
                                   equal_nan=True)


QUANTILE_METHODS = ["linear", "lower", "higher", "nearest", "midpoint"]


@pytest.mark.parametrize("method", QUANTILE_METHODS)
@pytest.mark.parametrize("q,axis,keepdims", [(0.3, None, False), ([0.1, 0.5, 0.95], 1, False),
                                            (0.5, 0, True)])
def test_quantile_values_and_gradients_match_numpy_and_jax(method, q, axis, keepdims):
    n = Y.size if axis in (None, (0, 1)) else Y.shape[axis]
    half = np.any(np.asarray(q) * (n - 1) % 1.0 == 0.5)
    # (numpy's nearest rounds a position k + 1/2 to even, JAX's down: there the gradient's
    # oracle is central differences of numpy's quantile, whose choice is the value's)
    jfn = None if method == "nearest" and half else (
        lambda x: jnp.quantile(x, jnp.asarray(q), axis=axis, method=method, keepdims=keepdims))
    _check(lambda x: np.quantile(x, q, axis=axis, method=method, keepdims=keepdims), jfn, Y)


def test_quantile_over_two_axes_and_q_one():
    _check(lambda x: np.quantile(x, 0.75, axis=(0, 1)), lambda x: jnp.quantile(x, 0.75,
                                                                              axis=(0, 1)), Y)
    _check(lambda x: np.quantile(x, 1.0, axis=-1, keepdims=True),
           lambda x: jnp.quantile(x, 1.0, axis=-1, keepdims=True), Y)


def test_median_and_percentile_match_numpy_and_jax():
    _check(np.median, jnp.median, Y)
    _check(lambda x: np.median(x, axis=1), lambda x: jnp.median(x, axis=1), Y)
    _check(lambda x: np.median(x, axis=0, keepdims=True),
           lambda x: jnp.median(x, axis=0, keepdims=True), Y)
    _check(lambda x: np.percentile(x, [5.0, 50.0, 90.0], axis=1),
           lambda x: jnp.percentile(x, jnp.array([5.0, 50.0, 90.0]), axis=1), Y)
    # ties: a stable sort gives the cotangent to the first of equal values, as JAX's
    tied = np.array([2.0, 1.0, 2.0, 3.0, 2.0])
    _check(np.median, jnp.median, tied)


@pytest.mark.parametrize("name", ["nansum", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin",
                                  "nanprod"])
@pytest.mark.parametrize("axis", [None, 1])
def test_nan_reductions_match_numpy_and_jax(name, axis):
    _check(lambda x: getattr(np, name)(x, axis=axis), lambda x: getattr(jnp, name)(x, axis=axis),
           YNAN)


def test_nan_reductions_of_nan_only_are_nan_and_ddof_follows_numpy():
    x = np.array([[np.nan, np.nan], [1.0, 3.0]])
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        want = (np.nanmean(x, axis=1), np.nanmax(x, axis=1))
    got = (sg.jit(lambda x: np.nanmean(x, axis=1), backend="numpy")(x),
           sg.jit(lambda x: np.nanmax(x, axis=1), backend="numpy")(x))
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    _check(lambda x: np.nanstd(x, ddof=1), lambda x: jnp.nanstd(x, ddof=1), YNAN)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("n,m", [(5, 3), (3, 5), (6, 4)])
def test_convolve_and_correlate_match_numpy_and_jax(mode, n, m):
    a, v = RNG.normal(size=n), RNG.normal(size=m)
    _check(lambda a, v: np.convolve(a, v, mode), lambda a, v: jnp.convolve(a, v, mode), a, v,
           argnums=(0, 1))
    _check(lambda a, v: np.correlate(a, v, mode), lambda a, v: jnp.correlate(a, v, mode), a, v,
           argnums=(0, 1))


def test_convolve_and_correlate_with_nan_and_inf_are_numpys():
    """A nan or inf meets only the products numpy forms (zero padding multiplied by it
    made every output nan: ``convolve([1, nan, 2], itself)`` is ``[1, nan, nan, nan, 4]``)."""
    a, b = np.array([1.0, np.nan, 2.0]), np.array([1.0, np.inf, 2.0, 3.0])
    z = (np.array([1 + 2j, 3j]), np.array([1.0, np.inf * 1j]))
    for x, y in ((a, a), (b, a), (a, b), (b, np.array([0.5, -1.0])), z):
        for mode in ("full", "same", "valid"):
            for name in ("convolve", "correlate"):
                f = getattr(np, name)
                jitted = sg.jit(lambda u, v, f=f, mode=mode: f(u, v, mode),
                                backend="interpreter")
                got = jitted(x, y)
                np.testing.assert_array_equal(got, f(x, y, mode), err_msg=f"{name} {mode}")


def test_interp_matches_numpy_and_jax_in_x_xp_and_fp():
    xp = np.array([0.0, 1.0, 2.5, 4.0])
    fp = np.array([1.0, 3.0, 2.0, -1.0])
    x = np.array([-1.0, 0.3, 0.5, 1.7, 3.0, 3.9, 5.0])  # (no knots: the slope there is one-sided)
    _check(lambda x, xp, fp: np.interp(x, xp, fp), lambda x, xp, fp: jnp.interp(x, xp, fp),
           x, xp, fp, argnums=(0, 1, 2))
    _check(lambda x, fp: np.interp(x, xp, fp, left=-7.0, right=9.0),
           lambda x, fp: jnp.interp(x, xp, fp, left=-7.0, right=9.0), x, fp, argnums=(0, 1))
    knots = np.array([0.0, 1.0, 4.0, np.nan])
    np.testing.assert_array_equal(sg.jit(lambda x: np.interp(x, xp, fp), backend="numpy")(knots),
                                  np.interp(knots, xp, fp))
    # at the first and the last point: its segment's slope, as JAX's (the last had 0)
    ends = np.array([0.0, 4.0])
    _check(lambda x, xp, fp: np.interp(x, xp, fp), lambda x, xp, fp: jnp.interp(x, xp, fp),
           ends, xp, fp, argnums=(0, 1, 2))


def test_polyval_and_matrix_power_match_numpy_and_jax():
    p, x = RNG.normal(size=4), RNG.normal(size=5)
    _check(np.polyval, jnp.polyval, p, x, argnums=(0, 1))
    m = RNG.normal(size=(3, 3)) + 2 * np.eye(3)
    for n in (0, 1, 2, 3, 5, -1, -2):
        _check(lambda m, n=n: np.linalg.matrix_power(m, n),
               lambda m, n=n: jnp.linalg.matrix_power(m, n), m, rtol=1e-12)


def _fd(fn, x, h=1e-6):
    g = np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        up, down = x.copy(), x.copy()
        up[idx] += h
        down[idx] -= h
        g[idx] = (np.sum(fn(up)) - np.sum(fn(down))) / (2 * h)
    return g


METHODS = [
    ("std", lambda x: x.std(axis=0, ddof=1)), ("var", lambda x: x.var(axis=1, keepdims=True)),
    ("clip", lambda x: x.clip(-0.5, 0.5)), ("round", lambda x: x.round(1) * x),
    ("trace", lambda x: x[:, :3].trace()), ("diagonal", lambda x: x.diagonal(1)),
    ("cumprod", lambda x: x.cumprod(axis=1)), ("cumsum", lambda x: x.cumsum()),
    ("conj", lambda x: x.conj() * x), ("prod", lambda x: x.prod(axis=0)),
    ("max", lambda x: x.max(axis=1)), ("mean", lambda x: x.mean(keepdims=True)),
    ("dot", lambda x: x.dot(x.T)), ("flatten", lambda x: x.flatten()[2:5]),
    ("swapaxes", lambda x: x.swapaxes(0, 1)), ("repeat", lambda x: x.repeat(2, axis=0)),
    ("take", lambda x: x.take([0, 2], axis=1)), ("squeeze", lambda x: x[:1].squeeze()),
    ("any-all", lambda x: np.where(x.any(axis=0) & (x > -3.0).all(), x, 0.0)),
]


@pytest.mark.parametrize("name,fn", METHODS, ids=[m[0] for m in METHODS])
def test_ndarray_methods_match_numpy_and_its_differences(name, fn):
    np.testing.assert_allclose(sg.jit(fn, backend="numpy")(Y), fn(Y), rtol=1e-14, atol=1e-15)
    g = sg.grad(lambda x: np.sum(fn(x)), backend="numpy")(Y)
    np.testing.assert_allclose(g, _fd(fn, Y), rtol=1e-6, atol=1e-7)


def test_ptp_method_and_refused_methods_say_what_to_do():
    np.testing.assert_allclose(sg.jit(lambda x: x.ptp(axis=1), backend="numpy")(Y), np.ptp(Y, 1))
    with pytest.raises(TypeError, match=r"np\.sort\(x\)"):
        sg.grad(lambda x: x.sort(), backend="numpy")(Y)
    with pytest.raises(sg.UnsupportedFunctionError, match="traced q"):
        sg.grad(lambda x, q: np.quantile(x, q), argnums=0, backend="numpy")(Y, 0.5)


def test_vmap_pytree_in_axes_and_out_axes_match_jax():
    def f(np_, p, batch):
        y = np_.tanh(batch["x"] @ p["w"] + p["b"])
        return {"y": y * batch["s"][0], "aux": (np_.sum(y), p["b"])}

    p = {"w": RNG.normal(size=(3, 2)), "b": RNG.normal(size=2)}
    batch = {"x": RNG.normal(size=(3, 5)), "s": [RNG.normal(size=5)]}
    in_axes = ({"w": None, "b": None}, {"x": 1, "s": [0]})
    out_axes = {"y": 1, "aux": (0, None)}
    got = sg.vmap(lambda p, b: f(np, p, b), in_axes=in_axes, out_axes=out_axes,
                  backend="numpy")(p, batch)
    want = jax.vmap(lambda p, b: f(jnp, p, b), in_axes=in_axes, out_axes=out_axes)(p, batch)
    np.testing.assert_allclose(got["y"], want["y"], rtol=1e-14)
    np.testing.assert_allclose(got["aux"][0], want["aux"][0], rtol=1e-14)
    np.testing.assert_allclose(got["aux"][1], want["aux"][1], rtol=1e-14)
    # per-example gradients in a dict of parameters, the data batched in a nested tuple
    def loss(np_, p, xy):
        x, (y,) = xy
        return np_.sum((np_.tanh(x @ p["w"] + p["b"]) - y) ** 2)

    xy = (RNG.normal(size=(5, 3)), (RNG.normal(size=(5, 2)),))
    got = sg.vmap(sg.grad(lambda p, xy: loss(np, p, xy), backend="numpy"),
                  in_axes=(None, (0, (0,))), backend="numpy")(p, xy)
    want = jax.vmap(jax.grad(lambda p, xy: loss(jnp, p, xy)), in_axes=(None, (0, (0,))))(p, xy)
    for key in p:  # (sums of terms of either sign: 1.5e-13 relative on the small entries)
        np.testing.assert_allclose(got[key], want[key], rtol=1e-12, atol=1e-15)


def test_vmap_pytree_axes_that_do_not_match_say_so():
    with pytest.raises(ValueError, match=r"does not match the structure \{'a': \*, 'b': \*\}"):
        sg.vmap(lambda d: d["a"], in_axes=({"a": 0, "c": 1},),
                backend="numpy")({"a": np.ones(3), "b": 1.0})


@pytest.mark.parametrize("scale,rtol", [(1e-3, 1e-15), (0.5, 1e-15), (3.0, 4e-15), (20.0, 1e-12)])
def test_expm_matches_scipy_and_jax_gradient(scale, rtol):
    import scipy.linalg

    a = np.random.default_rng(1).normal(size=(3, 3)) * scale
    expm = sg.scipy.linalg.expm
    # (scale 20 needs 5 squarings: the conditioning of exp there, not the algorithm, is
    # what separates the two Padé implementations)
    want = scipy.linalg.expm(a)
    np.testing.assert_allclose(sg.jit(expm, backend="numpy")(a), want,
                               rtol=rtol * 100 if scale > 10 else rtol * 4,
                               atol=1e-15 * np.max(np.abs(want)))
    # (entries 100 times smaller than the largest carry its rounding: an absolute bound)
    _check(expm, jax.scipy.linalg.expm, a, rtol=max(rtol, 1e-13), atol=1e-14 * (1 + scale))
    with pytest.raises(sg.TracerConversionError, match="Call sg.scipy.linalg.expm instead"):
        sg.grad(lambda a: np.sum(scipy.linalg.expm(a)), backend="numpy")(a)
