"""Complex values through ``sg.fori_loop``, ``scan``, ``while_loop`` and ``cond``.

Each program is written once against a small namespace of loops (:class:`Loops`) and
run three ways: symgrad's loops, JAX's ``lax`` loops (the oracle of values, ``grad``
and ``jvp``; JAX cannot reverse a ``while_loop``, so that gradient is assembled from
``jax.jvp``), and plain Python loops unrolled while symgrad traces (a second oracle,
through none of the loop primitives). Everything runs on the numpy interpreter but
:func:`test_complex_loops_and_branches_run_in_one_numba_kernel`, which groups the
programs into one kernel (one compile) and checks it against the interpreter.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_complex import close, crand, rand

import symgrad as sg

jax = pytest.importorskip("jax", reason="JAX is the oracle of complex derivatives (test extra)")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy
lax = jax.lax

Z = crand(3) * 0.5
X = rand(3) * 0.5
C = 0.4 - 0.2j


class Loops:
    """``fori``, ``scan``, ``while_`` and ``cond`` of one kind, and its numpy module ``n``."""

    def __init__(self, kind, taken=True):
        self.kind, self.taken = kind, taken
        self.n = jnp if kind == "jax" else np

    def fori(self, lo, hi, body, init):
        if self.kind == "python":
            for i in range(lo, hi):
                init = body(i, init)
            return init
        return (lax.fori_loop if self.kind == "jax" else sg.fori_loop)(lo, hi, body, init)

    def scan(self, f, init, xs, reverse=False):
        if self.kind != "python":
            return (lax.scan if self.kind == "jax" else sg.scan)(f, init, xs, reverse=reverse)
        ys = [None] * len(xs)
        for i in (range(len(xs) - 1, -1, -1) if reverse else range(len(xs))):
            init, ys[i] = f(init, xs[i])
        return init, np.stack(ys)

    def while_(self, cond, body, init, steps):
        """``steps``: the trip count at the test's point, which the unrolled loop needs
        (a traced condition has no truth value while tracing)."""
        if self.kind == "python":
            return self.fori(0, steps, lambda i, v: body(v), init)
        return (lax.while_loop if self.kind == "jax" else sg.while_loop)(cond, body, init)

    def cond(self, pred, true, false, *ops, taken=None):
        """The unrolled program takes the branch ``taken`` (that of the test's point)."""
        if self.kind == "python":
            return (true if (self.taken if taken is None else taken) else false)(*ops)
        return (lax.cond if self.kind == "jax" else sg.cond)(pred, true, false, *ops)


def fori(L, z, x):  # complex carry, a real and a complex value read from outside
    v = L.fori(0, 4, lambda i, v: v * v * 0.5 + C * v * x - 0.1j, z)
    return L.n.sum(L.n.abs(v) ** 2)


def scan(L, z, x):  # complex carry, real xs, complex ys; and backwards
    c, ys = L.scan(lambda c, xi: (L.n.sin(c) * xi + c, c * 1j + xi), z[0], x)
    d, ws = L.scan(lambda d, zi: (d * zi + 1.0, L.n.conj(d) * zi), z[1], z, reverse=True)
    return L.n.real(c * L.n.conj(c)) + L.n.sum(L.n.imag(ys) ** 2) + L.n.sum(L.n.real(ws * d))


def scan_real_carry(L, z, x):  # a real carry fed by complex xs
    c, ys = L.scan(lambda c, zi: (c + L.n.real(zi * zi), L.n.exp(zi) * c), x[0], z)
    return c + L.n.sum(L.n.abs(ys))


def while_(L, z, x):  # a (real, complex) carry; stops on a complex modulus
    out = L.while_(lambda s: L.n.abs(s[1]) < 4.0,
                   lambda s: (s[0] * x[0] + 1.0, s[1] * (1.5 + 0.5j) + s[0]), (x[1], z[0]), 4)
    return L.n.abs(out[1]) ** 2 + out[0]


def cond(L, z, x):  # complex operands and results, a real result beside them
    r, s = L.cond(x[0] > 0.0, lambda a, b: (a * a * b, b),
                  lambda a, b: (L.n.conj(a) * b, b * 2.0), z, x[1])
    return L.n.sum(L.n.real(r) * L.n.imag(r)) + s


def nested(L, z, x):  # a cond inside a loop, both holding complex values
    def body(i, v):
        return L.cond(L.n.real(v[0]) > -5.0, lambda w: w * (0.8 + 0.3j), lambda w: -w, v,
                      taken=True)
    return L.n.sum(L.n.real(L.fori(0, 3, body, z) * (1 - 2j)))


PROGRAMS = {f.__name__: f for f in (fori, scan, scan_real_carry, while_, cond, nested)}


def program(name, kind, taken=True):
    L = Loops(kind, taken)
    return lambda z, x: PROGRAMS[name](L, z, x)


def jax_grad(f, z, x):
    """JAX's gradient of a real-valued ``f`` (``df/dRe z - i df/dIm z``; ``df/dx``) by its
    forward mode, which also runs through ``lax.while_loop``."""
    def d(tz, tx):
        return jax.jvp(f, (z, x), (tz, tx))[1]
    eye_z, eye_x = np.eye(len(z)), np.eye(len(x))
    gz = [d(e + 0j, 0 * x) - 1j * d(1j * e, 0 * x) for e in eye_z]
    return np.array(gz), np.array([d(0 * z, e) for e in eye_x])


CASES = [(name, 1.0) for name in sorted(PROGRAMS)] + [("cond", -1.0)]  # the other branch


@pytest.mark.parametrize("name, sign", CASES)
def test_values_gradients_and_jvps_are_jaxs_and_the_unrolled_loops(name, sign):
    x = X * sign
    ours, theirs, unrolled = (program(name, k, X[0] * sign > 0) for k in
                              ("symgrad", "jax", "python"))
    close(sg.jit(ours, backend="numpy")(Z, x), theirs(Z, x))
    g = sg.grad(ours, argnums=(0, 1), backend="numpy")(Z, x)
    assert g[0].dtype == np.complex128 and g[1].dtype == np.float64
    want = (jax.grad(theirs, argnums=(0, 1))(Z, x) if name != "while_"
            else jax_grad(theirs, Z, x))
    for a, b, c in zip(g, want, sg.grad(unrolled, argnums=(0, 1), backend="numpy")(Z, x)):
        close(a, b)
        close(a, c)
    tz, tx = crand(3), rand(3)
    value, tangent = sg.jvp(ours, (Z, x), (tz, tx), backend="numpy")
    want_value, want_tangent = jax.jvp(theirs, (Z, x), (tz, tx))
    close(value, want_value)
    close(tangent, want_tangent)


def test_complex_valued_results_vjp_jvp_and_holomorphic_derivatives():
    """A loop whose result is complex: its vjp and jvp (no holomorphy needed), and
    ``holomorphic=True`` grad, jacfwd and jacrev of a holomorphic loop, as JAX's."""
    def h(L):
        return lambda z: L.fori(0, 3, lambda i, v: v * v * (0.5 - 0.2j) + L.n.sin(v), z)

    def nonholo(L):
        return lambda z: L.scan(lambda c, zi: (c * L.n.conj(zi) + 1.0, L.n.abs(c) * zi),
                                z[0], z)[1]

    ours, theirs = Loops("symgrad"), Loops("jax")
    for make in (h, nonholo):
        value, pullback = sg.vjp(make(ours), Z, backend="numpy")
        want, jax_pullback = jax.vjp(make(theirs), Z)
        close(value, want)
        ct = crand(*np.shape(want))
        close(pullback(ct)[0], jax_pullback(ct)[0])
        t = crand(3)
        close(sg.jvp(make(ours), (Z,), (t,), backend="numpy")[1],
              jax.jvp(make(theirs), (Z,), (t,))[1])
    close(sg.grad(h(ours), holomorphic=True, backend="numpy")(0.3 + 0.2j),
          jax.grad(h(theirs), holomorphic=True)(0.3 + 0.2j))
    for ours_jac, their_jac in ((sg.jacfwd, jax.jacfwd), (sg.jacrev, jax.jacrev)):
        close(ours_jac(h(ours), holomorphic=True, backend="numpy")(Z),
              their_jac(h(theirs), holomorphic=True)(Z))


def test_checkpointed_and_vmapped_complex_loops():
    f = lambda n, k: lambda z: n.sum(n.abs(  # noqa: E731
        sg.fori_loop(0, 7, lambda i, v: n.sin(v) * (0.9 + 0.1j), z, checkpoint=k)) ** 2)
    fj = lambda z: jnp.sum(jnp.abs(  # noqa: E731
        lax.fori_loop(0, 7, lambda i, v: jnp.sin(v) * (0.9 + 0.1j), z)) ** 2)
    for k in (2, 3):
        close(sg.grad(f(np, k), backend="numpy")(Z), jax.grad(fj)(Z))
    step = lambda n, lp: lambda z: lp(0, 3, lambda i, v: v * v + 0.1j, z)  # noqa: E731
    zs = crand(2, 3)
    close(sg.vmap(step(np, sg.fori_loop), backend="numpy")(zs),
          jax.vmap(step(jnp, lax.fori_loop))(zs))
    # the second derivative of a real function of real inputs through a complex loop
    r = lambda n, lp: lambda x: n.sum(n.abs(  # noqa: E731
        lp(0, 3, lambda i, v: v * v * (0.5 + 0.5j), x * (1 + 1j))) ** 2)
    close(sg.hessian(r(np, sg.fori_loop), backend="numpy")(X),
          jax.hessian(r(jnp, lax.fori_loop))(X))


def test_numbers_returned_for_a_complex_carry_take_its_dtype():
    z64 = (Z * 1j).astype(np.complex64)
    got = sg.jit(lambda z: sg.fori_loop(0, 2, lambda i, v: 3, z), backend="numpy")(z64)
    assert got.dtype == np.complex64
    close(got, np.full(3, 3.0))
    g = sg.grad(lambda x: np.abs(sg.cond(x > 0, lambda v: v * 2, lambda v: 1j, x * 1j)) ** 2,
                backend="numpy")
    assert (float(g(1.5)), float(g(-1.5))) == (12.0, 0.0)
    with pytest.raises(TypeError, match=r"returns leaf 0 of the carry as c128\[\], but it "
                                        r"starts as f64\[\]"):
        sg.jit(lambda x: sg.fori_loop(0, 2, lambda i, v: v * 1j, x), backend="numpy")(1.5)


def test_complex_loops_and_branches_run_in_one_numba_kernel():
    """The programs above in one Numba kernel: compiled (its source is ``@njit`` code, not
    the interpreter's), equal to the interpreter, and again after the inputs changed;
    complex64 carries stay complex64."""
    names = sorted(PROGRAMS)
    L = Loops("symgrad")

    def total(z, x, z64):
        ends = sg.fori_loop(0, 3, lambda i, v: v * (1.1 - 0.2j) + 0.5, z64)
        return sum(PROGRAMS[n](L, z, x) for n in names) + np.sum(np.abs(ends) ** 2)

    g = sg.grad(total, argnums=(0, 1, 2), backend="numba")
    interpreted = sg.grad(total, argnums=(0, 1, 2), backend="numpy")
    z64 = Z.astype(np.complex64)
    source = g.source(Z, X, z64)
    assert "@njit" in source and "interpreter" not in source
    for args in ((Z, X, z64), (Z * 0.7 + 0.1j, -X, z64 * 0.5)):
        got, want = g(*args), interpreted(*args)
        assert got[2].dtype == want[2].dtype == np.complex64
        close(got[0], want[0], rtol=1e-13, atol=1e-13)
        close(got[1], want[1], rtol=1e-13, atol=1e-13)
        close(got[2], want[2], rtol=1e-5, atol=1e-5)


def test_numpys_complex_log_inside_a_body_is_kernel_code():
    """Complex log is numpy's in kernels (clog, symgrad.backend.npymath), inside a loop
    body too: the graph is one kernel, numpy's values (tests/test_npymath.py has the
    bits of each function)."""
    f = lambda z: np.sum(np.abs(sg.fori_loop(0, 2, lambda i, v: np.log(v) + v, z)) ** 2)  # noqa: E731
    g = sg.grad(f, backend="numba")
    assert "nm.clog(" in g.source(Z) and "interpreter" not in g.source(Z)
    close(g(Z), sg.grad(f, backend="numpy")(Z), rtol=1e-14, atol=1e-14)
