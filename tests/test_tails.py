"""Values and gradients at the tail points of every primitive (``cases_tails.py``):
overflow and underflow edges, subnormals, huge and tiny arguments, against SymPy's
exact derivative at 400 digits. The worst relative error per primitive is printed
(``pytest -s``, or ``python tests/test_tails.py`` for the table alone) and held to
each primitive's bound.

On the numpy interpreter every case is its own call; on Numba all the cases are one
``sg.jit`` of a function that calls ``sg.value_and_grad`` of each, so that the
table costs one kernel (split into pieces) instead of one compile per case. That
kernel of the whole table takes about a minute to compile, so by default Numba runs
the rows whose rules issue 14 changed (:data:`NUMBA_SAMPLE`); ``SYMGRAD_FULL=1``
runs them all.
"""

from __future__ import annotations

import functools
import math
import os
import sys

import numpy as np
import pytest
from cases_tails import EPS, TAILS, Tail, error, exact

import symgrad as sg

#: the Numba rows run by default: the rules issue 14 changed (gammaln: libm in the kernel,
#: digamma cut; cabs: a complex kernel)
NUMBA_SAMPLE = {"expm1", "tanh", "arctan", "pow", "hypot", "logsumexp", "softmax",
                "log_softmax", "norm", "std", "gammaln", "cabs"}
FULL = os.environ.get("SYMGRAD_FULL") == "1"


def _tails(backend: str) -> list[Tail]:
    if backend == "numpy" or FULL:
        return TAILS
    return [t for t in TAILS if t.name in NUMBA_SAMPLE]


@functools.cache
def _exact(tail: Tail):
    return exact(tail)


def _argnums(tail: Tail) -> tuple[int, ...]:
    return tuple(range(len(tail.args)))


def _run_numpy(tail: Tail):
    f = sg.value_and_grad(tail.fn, argnums=_argnums(tail), backend="numpy")
    return f(*tail.args, gradient=tail.cotangent())


@functools.cache
def _run_numba() -> dict[str, tuple]:
    """Every case in one kernel: values and gradients of all of them."""
    tails = _tails("numba")
    cts = [tail.cotangent() for tail in tails]  # (made here: inside a trace they would be)

    def everything(*flat):
        results, k = [], 0
        for tail, ct in zip(tails, cts):
            args = flat[k:k + len(tail.args)]
            k += len(tail.args)
            value, grads = sg.value_and_grad(tail.fn, argnums=_argnums(tail))(
                *args, gradient=ct)
            results += [value, *grads]
        return tuple(results)

    flat = [a for tail in tails for a in tail.args]
    with np.errstate(all="ignore"):
        outs = iter(sg.jit(everything)(*flat))
    return {tail.name: (next(outs), tuple(next(outs) for _ in tail.args)) for tail in tails}


def worst(tail: Tail, value, grads) -> tuple[float, float, str]:
    """The worst relative error of the value and of the gradients, and where."""
    want_value, want_grads = _exact(tail)
    worst_value = worst_grad = 0.0
    where = ""
    for got, want, what in [(value, want_value, "value"),
                            *((g, w, f"d/d{'xyz'[k]}") for k, (g, w) in
                              enumerate(zip(grads, want_grads)))]:
        got = np.broadcast_to(np.asarray(got, dtype=float), np.shape(want))
        for index in np.ndindex(*np.shape(want)):
            e = error(float(got[index]), want[index])
            if math.isnan(e):
                continue
            at = ", ".join(repr(np.asarray(a)[index[0]].tolist()) for a in tail.args)
            if what == "value" and e > worst_value:
                worst_value = e
            if what != "value" and e > worst_grad:
                worst_grad = e
            if e > tail.bound * EPS and not where:
                where = f"{what} at ({at}): {float(got[index])!r} vs {float(want[index]):.17g}"
    return worst_value, worst_grad, where


def table(backend: str) -> list[tuple[Tail, float, float, str]]:
    rows = []
    for tail in _tails(backend):
        if backend == "numpy":
            value, grads = _run_numpy(tail)
        else:
            value, grads = _run_numba()[tail.name]
        rows.append((tail, *worst(tail, value, grads)))
    return rows


def format_table(rows, backend: str) -> str:
    lines = [f"worst relative error at the tail points ({backend}), in units of 2**-52:",
             f"  {'primitive':<12} {'value':>10} {'gradient':>10} {'bound':>6}"]
    for tail, v, g, where in rows:
        lines.append(f"  {tail.name:<12} {v / EPS:>10.3g} {g / EPS:>10.3g} {tail.bound:>6g}"
                     + (f"   over: {where}" if where else ""))
    return "\n".join(lines)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_tail_points_are_accurate(backend):
    rows = table(backend)
    text = format_table(rows, backend)
    print("\n" + text)
    over = [tail.name for tail, v, g, _ in rows if max(v, g) > tail.bound * EPS]
    assert not over, f"over their bounds: {over}\n{text}"


# ---------------------------------------------------------------------------
# the rows of issue 14's table, one by one (each failed before: see the issue)

BACKENDS = ["numpy", "numba"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_softmax_of_huge_equal_values(backend):
    x = np.array([1e16, 1e16])
    np.testing.assert_array_equal(sg.jit(sg.softmax, backend=backend)(x), [0.5, 0.5])
    np.testing.assert_allclose(sg.jit(sg.log_softmax, backend=backend)(x), -np.log(2.0),
                               rtol=1e-15)
    g = sg.grad(lambda x: sg.softmax(x)[0], backend=backend)(x)
    np.testing.assert_array_equal(g, [0.25, -0.25])
    np.testing.assert_allclose(sg.jit(sg.softmax, backend=backend)(np.array([1e15, 1e15])),
                               [0.5, 0.5], rtol=1e-15)


@pytest.mark.parametrize("backend", BACKENDS)
def test_expm1_gradient_is_exp(backend):
    x = np.array([-30.0, -37.0, -40.0, -700.0, 1e-300])
    g = sg.grad(lambda x: np.sum(np.expm1(x)), backend=backend)(x)
    np.testing.assert_allclose(g, np.exp(x), rtol=2 * EPS)
    assert np.all(g > 0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_tanh_gradient_far_out(backend):
    x = np.array([40.0, -40.0, 355.0, 0.5])
    g = sg.grad(lambda x: np.sum(np.tanh(x)), backend=backend)(x)
    np.testing.assert_allclose(g, 1.0 / np.cosh(x) ** 2, rtol=4 * EPS)
    assert g[0] == pytest.approx(7.2194055513816612e-35, rel=1e-15)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("x", [[1e-170, 2e-170], [1e200, 1e200], [1e308, 1e308],
                               [1.5e308, 1.5e308], [5e-324, 5e-324], [3.0, 4.0]])
def test_norm_and_its_gradient_are_scaled(backend, x):
    x = np.array(x)
    value, g = sg.value_and_grad(np.linalg.norm, backend=backend)(x)
    unit = x / np.max(np.abs(x))
    np.testing.assert_allclose(g, unit / np.sqrt(np.sum(unit ** 2)), rtol=2 * EPS)
    if x[0] < 1e308:
        np.testing.assert_allclose(value, np.max(x) * np.sqrt(np.sum(unit ** 2)), rtol=2 * EPS,
                                   atol=5e-324)
    else:
        assert value == (np.inf if x[0] > 1.3e308 else pytest.approx(np.sqrt(2) * 1e308))


@pytest.mark.parametrize("backend", BACKENDS)
def test_std_of_tiny_values_and_of_equal_values(backend):
    g = sg.grad(np.std, backend=backend)
    np.testing.assert_allclose(g(np.array([1e-170, 2e-170])), [-0.5, 0.5], rtol=2 * EPS)
    assert float(sg.jit(np.std, backend=backend)(np.array([1e-170, 2e-170]))) == pytest.approx(
        5e-171, rel=2 * EPS)
    # issue 18: std of equal values is norm(x - mean) at 0, whose gradient is 0 by convention
    assert float(g(3.5)) == 0.0
    row = sg.grad(lambda x: np.sum(np.std(x, axis=0)), backend=backend)(np.array([[1., 2., 3.]]))
    np.testing.assert_array_equal(row, np.zeros((1, 3)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_hypot_gradient_at_subnormals(backend):
    g = sg.grad(lambda x, y: np.hypot(x, y), argnums=(0, 1), backend=backend)
    for v in (5e-324, 1e-310, 1.5e308):
        np.testing.assert_allclose(g(v, v), (np.sqrt(0.5), np.sqrt(0.5)), rtol=2 * EPS)
    assert g(0.0, 0.0) == (0.0, 0.0)  # the convention at the origin


@pytest.mark.parametrize("make", [
    lambda g, m: g(m),                                          # an argument
    lambda g, m: sg.grad(lambda x: np.sum(x * m))(np.ones(3)),  # a captured value
    lambda g, m: sg.Tensor(m),                                  # a Tensor's data
    lambda g, m: sg.linearize(lambda x: np.sum(x * x), m),     # a point it copies
])
def test_a_masked_array_is_refused_not_unmasked(make):
    m = np.ma.array([1.0, 2.0, 3.0], mask=[False, True, False])
    with pytest.raises(TypeError, match=r"masked array.*x\.filled\(value\).*x\.compressed\(\)"):
        make(sg.grad(lambda x: np.sum(x)), m)
    # what the message says to do works
    assert list(sg.grad(lambda x: np.sum(x * x))(m.filled(0.0))) == [2.0, 0.0, 6.0]
    assert list(sg.grad(lambda x: np.sum(x * x))(m.compressed())) == [2.0, 6.0]



@pytest.mark.parametrize("make", [
    lambda g, m: g(m, m),                                                # an argument
    lambda g, m: sg.jit(lambda x: x * m, backend="numpy")(np.eye(2)),   # a captured value
    lambda g, m: sg.Tensor(m),                                           # a Tensor's data
])
def test_an_np_matrix_is_refused_not_traced_elementwise(make):
    """``*`` of two np.matrix is a matrix product in numpy, elementwise in a trace
    (finding f10): refused, and what the message says to do gives numpy's product."""
    m = np.matrix([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(TypeError, match=r"np\.matrix.*np\.asarray\(m\).*`@`"):
        make(sg.jit(lambda a, b: a * b, backend="numpy"), m)
    a = np.asarray(m)
    np.testing.assert_array_equal(sg.jit(lambda a, b: a @ b, backend="numpy")(a, a), m * m)


class _Scaled(np.ndarray):  # a user's subclass whose `*` is not numpy's
    def __mul__(self, other):
        return np.asarray(self) * other * 100.0


class _Tagged(np.ndarray):  # one that adds an attribute only: traced as its values
    pass


def test_an_array_subclass_that_changes_numpys_operations_is_refused_as_an_argument():
    """A traced argument runs numpy's operations, not its class's (``s * 2`` gave 6
    where Python gives 600): refused, naming the methods; a subclass that overrides
    nothing of numpy's is traced as its values."""
    f = lambda s: np.sum(s * 2.0)  # noqa: E731
    s = np.arange(3.0).view(_Scaled)
    with pytest.raises(TypeError, match=r"_Scaled.*__mul__.*np\.asarray"):
        sg.jit(f, backend="numpy")(s)
    assert f(s) == 600.0  # (the oracle: Python's)
    t = np.arange(3.0).view(_Tagged)
    assert sg.jit(f, backend="numpy")(t) == f(t)

if __name__ == "__main__":
    for backend in sys.argv[1:] or ["numpy", "numba"]:
        print(format_table(table(backend), backend))
