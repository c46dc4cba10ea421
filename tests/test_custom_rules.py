"""``sg.custom_vjp``, ``sg.custom_jvp`` and ``sg.pure_callback`` against real JAX (the
oracle of their semantics: which rule runs under which transformation), finite
differences and the CLI's ``--check``. Numbers on the numpy interpreter; two Numba runs."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import timeit

import numpy as np
import pytest

import symgrad as sg

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

B = "numpy"
X = np.array([0.3, -1.2, 2.0])


def _close(got, want, rtol=1e-12):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=1e-13)


def _pair(np_like):
    """``sin(x) * y`` with a deliberately scaled rule, in one library's numpy; the rules
    are not the true derivative, so only the user's rule gives these numbers."""
    def make(custom_vjp):
        @custom_vjp
        def f(x, y):
            return np_like.sin(x) * y

        def fwd(x, y):  # (not f(x, y): under hessian JAX would apply f's rule there)
            return np_like.sin(x) * y, {"c": np_like.cos(x), "sy": (np_like.sin(x), y)}

        def bwd(res, g):
            s, y = res["sy"]
            return 2.0 * res["c"] * y * g, None if y is None else 3.0 * s * g
        f.defvjp(fwd, bwd)
        return f
    return make


F_SG = _pair(np)(sg.custom_vjp)
F_JAX = _pair(jnp)(jax.custom_vjp)


def _loss(lib, f):
    return lambda x, y: lib.sum(f(x, y) ** 2 + f(x, 0.5 * x))


# ---------------------------------------------------------------------------
# custom_vjp


def test_custom_vjp_grad_vjp_jit_match_jax():
    y = np.array([0.5, 1.5, -0.7])
    got = sg.grad(_loss(np, F_SG), argnums=(0, 1), backend=B)(X, y)
    want = jax.grad(_loss(jnp, F_JAX), argnums=(0, 1))(X, y)
    for a, b in zip(got, want):
        _close(a, b)
    _close(sg.jit(F_SG, backend=B)(X, y), jax.jit(F_JAX)(X, y))
    out, pullback = sg.vjp(F_SG, X, y, backend=B)
    want_out, want_pullback = jax.vjp(F_JAX, X, y)
    ct = np.array([1.0, -2.0, 0.5])
    _close(out, want_out)
    for a, b in zip(pullback(ct), want_pullback(ct)):
        _close(a, b)


def test_custom_vjp_under_vmap_hessian_and_loops_match_jax():
    y = 0.8
    # vmap of grad, grad of vmap
    g_sg = sg.vmap(sg.grad(lambda x: F_SG(x, y), backend=B))(X)
    _close(g_sg, jax.vmap(jax.grad(lambda x: F_JAX(x, y)))(X))
    _close(sg.grad(lambda x: np.sum(sg.vmap(lambda v: F_SG(v, y))(x)), backend=B)(X),
           jax.grad(lambda x: jnp.sum(jax.vmap(lambda v: F_JAX(v, y))(x)))(X))
    # hessian (forward over reverse: bwd differentiated in its residuals) and grad of grad
    h = lambda f, lib: lambda x: lib.sum(f(x, x) * x)  # noqa: E731
    _close(sg.hessian(h(F_SG, np), backend=B)(X), jax.hessian(h(F_JAX, jnp))(X))
    _close(sg.grad(sg.grad(lambda x: F_SG(x, 2.0), backend=B), backend=B)(0.4),
           jax.grad(jax.grad(lambda x: F_JAX(x, 2.0)))(0.4))
    # in loop bodies
    def fl_sg(x):
        return sg.fori_loop(0, 3, lambda i, v: F_SG(v, 1.1) + 0.1 * v, x)

    def fl_jax(x):
        return jax.lax.fori_loop(0, 3, lambda i, v: F_JAX(v, 1.1) + 0.1 * v, x)
    _close(sg.grad(fl_sg, backend=B)(0.7), jax.grad(fl_jax)(0.7))

    def scanned(lib, scan, f):
        def run(xs):
            c, ys = scan(lambda c, x: (f(c, x), c * x), 0.5, xs)
            return c + lib.sum(ys)
        return run
    _close(sg.grad(scanned(np, sg.scan, F_SG), backend=B)(X),
           jax.grad(scanned(jnp, jax.lax.scan, F_JAX))(X))


def test_forward_mode_of_custom_vjp_raises_jax_error():
    for run in (lambda: sg.jvp(lambda x: F_SG(x, 1.0), (0.3,), (1.0,), backend=B),
                lambda: sg.jacfwd(lambda x: F_SG(x, 2.0 * x), backend=B)(X)):
        with pytest.raises(TypeError, match=r"can't apply forward-mode autodiff \(jvp\) to "
                                            r"a custom_vjp function f"):
            run()
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        jax.jvp(lambda x: F_JAX(x, 1.0), (0.3,), (1.0,))


def test_custom_vjp_nondiff_argnums_pytree_args_and_errors():
    def make(lib, custom_vjp):
        @custom_vjp
        def apply(fn, p, scale):  # fn, scale: nondiff (a function, a number)
            return fn(p["w"] * p["b"]) * scale

        def fwd(fn, p, scale):
            return apply(fn, p, scale), (p["w"], p["b"])

        def bwd(fn, scale, res, g):
            w, b = res
            return ({"w": g * b * scale * 10.0, "b": g * w * scale},)
        apply.defvjp(fwd, bwd)
        return apply

    a_sg = make(np, lambda f: sg.custom_vjp(f, nondiff_argnums=(0, 2)))
    a_jax = make(jnp, lambda f: jax.custom_vjp(f, nondiff_argnums=(0, 2)))
    p = {"w": X, "b": np.array([1.0, 2.0, 3.0])}
    got = sg.grad(lambda p: np.sum(a_sg(np.tanh, p, 2.0)), backend=B)(p)
    want = jax.grad(lambda p: jnp.sum(a_jax(jnp.tanh, p, 2.0)))(p)
    for k in ("w", "b"):
        _close(got[k], want[k])

    @sg.custom_vjp
    def f(x):
        return x * 2.0
    with pytest.raises(AttributeError, match="No VJP defined for custom_vjp function f"):
        sg.grad(f, backend=B)(1.0)
    f.defvjp(lambda x: (x * 2.0, None), lambda _, g: (g, g))
    with pytest.raises(TypeError, match="bwd must return a tuple of 1 cotangents"):
        sg.grad(f, backend=B)(1.0)
    assert f(3.0) == 6.0  # outside a trace: the function itself, as JAX calls it


def test_a_rule_closing_over_a_differentiated_value_raises():
    def loss(x, w):
        @sg.custom_vjp
        def f(v):
            return v * w                  # w is differentiated, read from outside
        f.defvjp(lambda v: (v * w, None), lambda _, g: (g * 2.0,))
        return f(x)
    with pytest.raises(NotImplementedError, match="Pass the value as an argument of f"):
        sg.grad(loss, argnums=1, backend=B)(1.0, 2.0)
    _close(sg.grad(loss, backend=B)(1.0, 2.0), 2.0)  # x's cotangent is the rule's


# ---------------------------------------------------------------------------
# custom_jvp


def _jvp_pair(lib, custom_jvp):
    @custom_jvp
    def f(x, y):
        return lib.sin(x) * y

    @f.defjvp
    def f_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        return f(x, y), 1.5 * lib.cos(x) * y * tx + lib.sin(x) * ty

    @custom_jvp
    def softplus(x):
        return lib.log1p(lib.exp(x))
    softplus.defjvps(lambda t, ans, x: 2.0 * t / (1.0 + lib.exp(-x)))
    return f, softplus


F2_SG, SP_SG = _jvp_pair(np, sg.custom_jvp)
F2_JAX, SP_JAX = _jvp_pair(jnp, jax.custom_jvp)


def test_custom_jvp_reverse_forward_and_second_order_match_jax():
    y = np.array([0.5, 1.5, -0.7])
    loss = lambda lib, f, sp: lambda x, y: lib.sum(f(x, y) * sp(x) + sp(y))  # noqa: E731
    for a, b in zip(sg.grad(loss(np, F2_SG, SP_SG), argnums=(0, 1), backend=B)(X, y),
                    jax.grad(loss(jnp, F2_JAX, SP_JAX), argnums=(0, 1))(X, y)):
        _close(a, b)
    t = np.array([1.0, -0.5, 2.0])
    for a, b in zip(sg.jvp(lambda x: F2_SG(x, y), (X,), (t,), backend=B),
                    jax.jvp(lambda x: F2_JAX(x, y), (X,), (t,))):
        _close(a, b)
    _close(sg.jacfwd(SP_SG, backend=B)(X), jax.jacfwd(SP_JAX)(X))
    h = lambda lib, f: lambda x: lib.sum(f(x, x) * x)  # noqa: E731
    _close(sg.hessian(h(np, F2_SG), backend=B)(X), jax.hessian(h(jnp, F2_JAX))(X))
    _close(sg.vmap(sg.grad(SP_SG, backend=B))(X), jax.vmap(jax.grad(SP_JAX))(X))


def _self_calling(lib, np_like):
    """JAX's documented pattern: rules that call their own function (``fwd`` returns
    ``f(x)``, the jvp rule computes ``h(x)``), with rules that are not the true
    derivative, so JAX's semantics (the rule again inside the rule) decide the numbers."""
    @lib.custom_vjp
    def f(x):
        return np_like.sin(x) * 2

    f.defvjp(lambda x: (f(x), np_like.cos(x)), lambda c, g: (3.0 * c * g,))

    @lib.custom_jvp
    def h(x):
        return np_like.exp(x) * x

    @h.defjvp
    def h_jvp(primals, tangents):
        y = h(primals[0])
        return y, (y + 2.0 * np_like.exp(primals[0])) * tangents[0]

    @lib.custom_vjp
    def clip_gradient(x):
        return x

    clip_gradient.defvjp(lambda x: (clip_gradient(x), None),
                         lambda _, g: (np_like.clip(g, -0.5, 0.5),))
    return f, h, clip_gradient


def _broken(np_like, custom_jvp):
    """A jvp rule whose primal output (sin(x) + 1) is not the function's (sin(x)): JAX's
    broken contract, whose behaviour is still defined: under jvp, linearize, vjp and grad
    the rule's primal is the value, also as a loop carry or a branch's result."""
    @custom_jvp
    def f(x):
        return np_like.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        return np_like.sin(primals[0]) + 1.0, 3.0 * tangents[0]

    return f


def test_a_jvp_rule_whose_primal_differs_is_followed_as_jax_follows_it():
    f, F = _broken(np, sg.custom_jvp), _broken(jnp, jax.custom_jvp)
    lax = jax.lax

    def programs(n, ours):
        fori = sg.fori_loop if ours else lax.fori_loop
        scan = sg.scan if ours else lax.scan
        cond = sg.cond if ours else lax.cond
        g = f if ours else F
        return {
            "call": lambda x: g(x) * x,
            "fori": lambda x: fori(0, 3, lambda i, v: g(v) * v, x),
            "scan": lambda x: n.sum(scan(lambda c, _: (g(c) * c, g(c)), x, None, length=3)[1]),
            "cond": lambda x: cond(x > 0, lambda v: g(v) * 2.0, lambda v: v, x),
            "cond-in-loop": lambda x: fori(0, 2, lambda i, v: cond(
                v > 0, lambda w: g(w) * w, lambda w: -w, v), x),
        }

    ours, theirs = programs(np, True), programs(jnp, False)
    x = 0.5
    for name in ours:
        _close(sg.jit(ours[name], backend=B)(x), theirs[name](x))
        _close(sg.value_and_grad(ours[name], backend=B)(x), jax.value_and_grad(theirs[name])(x))
        _close(sg.jvp(ours[name], (x,), (1.0,), backend=B), jax.jvp(theirs[name], (x,), (1.0,)))
    value, pullback = sg.vjp(ours["scan"], x, backend=B)
    want, jax_pullback = jax.vjp(theirs["scan"], x)
    _close(value, want)
    _close(pullback(1.0), jax_pullback(1.0))
    value, f_jvp = sg.linearize(ours["fori"], 0.7, backend=B)  # another point
    want, jax_f_jvp = jax.linearize(theirs["fori"], 0.7)
    _close(value, want)
    _close(f_jvp(2.0), jax_f_jvp(2.0))
    # a while_loop (JAX has forward mode only there) and a checkpointed loop
    wl = lambda g, loop: lambda x: loop(lambda v: v < 3.0, lambda v: g(v) + v, x)  # noqa: E731
    _close(sg.jvp(wl(f, sg.while_loop), (0.5,), (1.0,), backend=B),
           jax.jvp(wl(F, lax.while_loop), (0.5,), (1.0,)))
    _close(sg.value_and_grad(wl(f, sg.while_loop), backend=B)(0.5),
           jax.jvp(wl(F, lax.while_loop), (0.5,), (1.0,)))
    # a call on a value not differentiated (c) inside a differentiated body: the function's
    # primal, as JAX's (no tangent reaches it); x's carry gets the rule's
    inner = lambda g, loop: lambda x, c: loop(  # noqa: E731
        0, 2, lambda i, v: g(c) * v + g(v), x)
    _close(sg.value_and_grad(inner(f, sg.fori_loop), backend=B)(0.5, 0.3),
           jax.value_and_grad(inner(F, lax.fori_loop))(0.5, 0.3))
    _close(sg.grad(inner(f, sg.fori_loop), argnums=(0, 1), backend=B)(0.5, 0.3),
           jax.grad(inner(F, lax.fori_loop), argnums=(0, 1))(0.5, 0.3))
    ck = lambda x: sg.fori_loop(0, 5, lambda i, v: f(v) * 0.5 + v, x, checkpoint=2)  # noqa: E731
    _close(sg.value_and_grad(ck, backend=B)(0.5), jax.value_and_grad(
        lambda x: lax.fori_loop(0, 5, lambda i, v: F(v) * 0.5 + v, x))(0.5))



@pytest.mark.parametrize("which", [0, 1, 2], ids=["fwd_calls_f", "jvp_calls_h", "clip"])
def test_rules_that_call_their_own_function_match_jax_to_order_three(which):
    g_sg, g_jax = _self_calling(sg, np)[which], _self_calling(jax, jnp)[which]
    fs = lambda x: g_sg(x) * np.sin(x) + g_sg(x * x)  # noqa: E731
    fj = lambda x: g_jax(x) * jnp.sin(x) + g_jax(x * x)  # noqa: E731
    for _ in range(3):
        fs, fj = sg.grad(fs, backend=B), jax.grad(fj)
        _close(fs(0.7), fj(0.7))
    # forward over reverse in symgrad; JAX's jacfwd refuses a custom_vjp inside fwd
    _close(sg.hessian(lambda x: np.sum(g_sg(x) ** 2), backend=B)(X),
           jax.jacrev(jax.jacrev(lambda x: jnp.sum(g_jax(x) ** 2)))(X))
    if which == 1:  # a fourth derivative through h's own rule: refused, never guessed
        with pytest.raises(NotImplementedError, match="calls itself inside its own"):
            sg.grad(fs, backend=B)(0.7)


K = 2.0


def _bwd_helper(g):
    return g * K


def test_a_rule_reads_from_outside_are_guarded_as_in_plain_python():
    """A reused gradient trace sees what its rules read now (finding f05): a global read
    only by ``bwd``, by ``fwd``, by a helper ``bwd`` calls, a list read by a defjvps
    rule, and a rule redefined with defvjp. Oracle: the rule evaluated now, in numpy."""
    global K
    K = 2.0
    s = [1.0]

    @sg.custom_vjp
    def f(x):
        return np.sin(x)

    f.defvjp(lambda x: (np.sin(x), np.cos(x) * K), lambda c, g: (_bwd_helper(g) * c,))

    @sg.custom_jvp
    def h(x):
        return x ** 2

    h.defjvps(lambda t, ans, x: t * 2 * x * s[0])
    gf = sg.grad(lambda x: np.sum(f(x)), backend=B)
    gh = sg.grad(lambda x: np.sum(h(x)), backend=B)
    _close(gf(X), 4 * np.cos(X))
    _close(gh(X), 2 * X)
    K, s[0] = 3.0, 10.0
    _close(gf(X), 9 * np.cos(X))
    _close(gh(X), 20 * X)
    f.defvjp(lambda x: (np.sin(x), None), lambda c, g: (-g,))
    _close(gf(X), -np.ones(3))
    K = 2.0


def test_defjvps_rules_get_the_custom_function_as_ans_to_order_three():
    """``ans`` is the custom function's output, as JAX's ``self(*primals)`` (finding f01):
    its derivative is the rule again, not the primal code (whose derivative is 0 here)."""
    def make(lib, np_like):
        @lib.custom_jvp
        def e(x):
            return np_like.exp(np_like.round(x * 1e6) / 1e6)

        e.defjvps(lambda t, ans, x: t * ans * 0.5)
        return e
    fs, fj = make(sg, np), make(jax, jnp)
    _close(sg.hessian(fs, backend=B)(0.7), jax.hessian(fj)(0.7))
    _close(sg.grad(sg.grad(sg.grad(fs, backend=B), backend=B), backend=B)(0.7),
           jax.grad(jax.grad(jax.grad(fj)))(0.7))


def test_custom_jvp_nondiff_argnums_matches_jax():
    def make(lib, custom_jvp):
        @custom_jvp
        def power(n, x):
            return x ** n

        @power.defjvp
        def power_jvp(n, primals, tangents):
            (x,), (t,) = primals, tangents
            return power(n, x), n * x ** (n - 1) * t * 10.0
        return custom_jvp and power
    p_sg = make(np, lambda f: sg.custom_jvp(f, nondiff_argnums=(0,)))
    p_jax = make(jnp, lambda f: jax.custom_jvp(f, nondiff_argnums=(0,)))
    _close(sg.grad(lambda x: np.sum(p_sg(3, x)), backend=B)(X),
           jax.grad(lambda x: jnp.sum(p_jax(3, x)))(X))


# ---------------------------------------------------------------------------
# pure_callback


def _host_loss(x):
    y = sg.pure_callback(np.tanh, sg.ShapeDtypeStruct(x.shape, np.float64), x,
                         vjp=lambda ct, x: (ct * (1.0 - np.tanh(x) ** 2),))
    return np.sum(y * x)


def test_pure_callback_values_gradients_and_errors():
    want = jax.grad(lambda x: jnp.sum(jnp.tanh(x) * x))(X)
    _close(sg.grad(_host_loss, backend=B)(X), want)
    _close(sg.jit(_host_loss, backend=B)(X), np.sum(np.tanh(X) * X))
    no_vjp = lambda x: np.sum(sg.pure_callback(  # noqa: E731
        np.tanh, sg.ShapeDtypeStruct((3,), np.float64), x))
    with pytest.raises(NotImplementedError, match="pure_callback tanh has no derivative"):
        sg.grad(no_vjp, backend=B)(X)
    wrong = lambda x: np.sum(sg.pure_callback(  # noqa: E731
        np.tanh, sg.ShapeDtypeStruct((2,), np.float64), x))
    with pytest.raises(ValueError, match="returned result 0 of shape"):
        sg.jit(wrong, backend=B)(X)
    with pytest.raises(NotImplementedError, match="pass vmap_method='sequential'"):
        sg.vmap(lambda x: sg.pure_callback(np.tanh, sg.ShapeDtypeStruct((), np.float64),
                                           x))(X)
    # outside a trace it calls the function (JAX's pure_callback does too)
    _close(sg.pure_callback(np.tanh, sg.ShapeDtypeStruct((3,), np.float64), X), np.tanh(X))


def test_pure_callback_gets_read_only_arrays_and_refuses_a_lossy_dtype():
    """As JAX (finding f08): a callback cannot write into the caller's array (JAX's
    refusal), and a complex result for a float64 declaration is refused, not cast."""
    def scribble(a):
        a[0] = 99.0
        return a
    x = np.array([0.5, 1.0, 2.0])
    sd = sg.ShapeDtypeStruct(x.shape, np.float64)
    with pytest.raises(Exception, match="immutable"):  # (JAX passes jax arrays)
        jax.jit(lambda x: jax.pure_callback(scribble, sd, x))(x).block_until_ready()
    with pytest.raises(ValueError, match="read-only"):
        sg.jit(lambda x: sg.pure_callback(scribble, sd, x) + x, backend=B)(x)
    assert x[0] == 0.5
    with pytest.raises(TypeError, match="dtype complex128.*declares float64"):
        sg.jit(lambda x: sg.pure_callback(lambda a: a * 1j, sd, x) * 2, backend=B)(x)


def test_pure_callback_in_a_cond_branch_and_a_loop_body_runs_as_plain_python():
    """Finding f07 (it crashed, the interpreter too): the cond or loop holding a callback
    runs on the interpreter; values against plain numpy, gradients against central
    differences of it."""
    sd = sg.ShapeDtypeStruct((3,), np.float64)

    def sin(v):
        return sg.pure_callback(np.sin, sd, v, vjp=lambda ct, v: (ct * np.cos(v),))
    def plain_loop(x):
        for _ in range(3):
            x = np.sin(x) * 1.5
        return np.sum(x)
    loop = lambda x: np.sum(sg.fori_loop(0, 3, lambda i, v: sin(v) * 1.5, x))  # noqa: E731
    branch = lambda x: np.sum(sg.cond(x[0] > 0, lambda v: sin(v) * 2.0, lambda v: v, x))  # noqa: E731
    plain_branch = lambda x: np.sum(np.sin(x) * 2.0 if x[0] > 0 else x)  # noqa: E731
    for f, plain in ((loop, plain_loop), (branch, plain_branch)):
        _close(sg.jit(f, backend=B)(X), plain(X))
        h = 1e-6
        fd = [(plain(X + h * e) - plain(X - h * e)) / (2 * h) for e in np.eye(3)]
        _close(sg.grad(f, backend=B)(X), fd, rtol=1e-7)


def test_pure_callback_under_vmap_sequential_matches_jax():
    calls = []

    def host(x, y):
        calls.append(np.shape(x))
        return np.tanh(x) * y

    def f(lib, callback, shape_dtype):
        def run(x, y):
            out = callback(host, shape_dtype((), np.float64), x, y, vmap_method="sequential",
                           **({"vjp": lambda ct, x, y: (ct * y * (1 - np.tanh(x) ** 2),
                                                        ct * np.tanh(x))} if lib is np else {}))
            return out * x
        return run
    y = np.array([0.5, -1.0, 2.0])
    got = sg.vmap(f(np, sg.pure_callback, sg.ShapeDtypeStruct), in_axes=(0, 0))(X, y)
    want = jax.vmap(f(jnp, jax.pure_callback, jax.ShapeDtypeStruct))(X, y)
    _close(got, want)
    assert calls[:3] == [(), (), ()]  # one call per example, on its row
    # the gradient of the mapped function runs the user's vjp per example too
    g = sg.grad(lambda x: np.sum(sg.vmap(f(np, sg.pure_callback, sg.ShapeDtypeStruct))(x, y)),
                backend=B)(X)
    _close(g, np.tanh(X) * y + X * y * (1 - np.tanh(X) ** 2))


def test_numba_kernels_around_a_callback_and_a_custom_vjp():
    """Two Numba runs: the kernel cut around a callback (which runs in Python between
    the pieces), and a custom_vjp's rules inlined in one kernel."""
    g = sg.grad(_host_loss)
    _close(g(X), sg.grad(_host_loss, backend=B)(X))
    assert "runs in Python between the kernels" in g.source(X)
    y = np.array([0.5, 1.5, -0.7])
    got = sg.grad(_loss(np, F_SG), argnums=(0, 1))(X, y)
    want = jax.grad(_loss(jnp, F_JAX), argnums=(0, 1))(X, y)
    for a, b in zip(got, want):
        _close(a, b)


def test_callback_cost_per_call_is_a_few_microseconds(monkeypatch):
    """What a callback adds to a compiled call: printed, and bounded loosely (a shared CI
    machine) at 200 µs; README "Your own derivative rules" quotes the measured number."""
    monkeypatch.setattr(sg.config, "tiered", False)  # the kernels, not the interpreter
    ident = lambda v: v  # noqa: E731
    plain = sg.jit(lambda x: x * 2.0 + 1.0)
    cut = sg.jit(lambda x: sg.pure_callback(ident, sg.ShapeDtypeStruct((), np.float64),
                                            x * 2.0) + 1.0)
    assert cut(1.5) == plain(1.5) == 4.0
    n = 2000
    t_plain = min(timeit.repeat(lambda: plain(1.5), number=n, repeat=3)) / n
    t_cut = min(timeit.repeat(lambda: cut(1.5), number=n, repeat=3)) / n
    print(f"\ncompiled call {t_plain * 1e6:.2f} us; with a callback {t_cut * 1e6:.2f} us")
    assert t_cut - t_plain < 200e-6


# ---------------------------------------------------------------------------
# printing by name, and the CLI's check


def test_sympy_prints_user_rules_by_name():
    @sg.custom_vjp
    def f(x):
        return np.sin(x)
    f.defvjp(lambda x: (np.sin(x), np.cos(x)), lambda c, g: (c * g,))
    # the derivative by name, on the residuals and the cotangent; the primal value in the
    # differentiated graph is fwd's formula (JAX's linearized primal comes from fwd)
    text = str(sg.grad(lambda x: f(x) * x, backend=B).expressions(0.5))
    assert text == "f'(cos(x), x) + sin(x)", text
    assert str(sg.jit(f, backend=B).graph(0.5)).count("call(") == 1


RULES = '''
import numpy as np
import symgrad as sg

@sg.custom_vjp
def safe_log(x):
    return np.log(x)
safe_log.defvjp(lambda x: (np.log(x), x), lambda x, g: ({scale} * g / x,))

def func(x):
    return np.sum(safe_log(x) * x)
'''


@pytest.mark.parametrize("scale,status", [("1.0", 0), ("3.0", 1)])
def test_cli_check_compares_a_user_rule_with_finite_differences(tmp_path, scale, status):
    path = tmp_path / "rules.py"
    path.write_text(textwrap.dedent(RULES.format(scale=scale)))
    result = subprocess.run(
        [sys.executable, "-m", "symgrad", "grad", f"{path}:func", "--shape", "x=2",
         "--at", "x=1,2", "--check"], capture_output=True, text=True, timeout=300,
        env={**os.environ}, cwd=tmp_path)
    out = result.stdout + result.stderr
    assert result.returncode == status, out
    assert "safe_log'[0](x[0], x[1]" in out, out
    assert "whose derivative you gave" in out, out
    assert ("vs finite differences" in out
            and ("MISMATCH" in out) == (status == 1)), out
