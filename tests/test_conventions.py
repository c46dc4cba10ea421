"""The conventions table of symgrad.conventions, row by row, with exact values on both backends.

Every row of :data:`symgrad.conventions.CONVENTIONS` has examples here: a
function, its arguments and the exact value and gradient symgrad must give
(``assert_array_equal``: bit-for-bit up to the sign of zero, nan where nan).
Then the regression tests for known failures of other systems, and the
completeness of ``where``'s masking over the whole registry.
"""

from __future__ import annotations

import inspect
import os

import numpy as np
import pytest

import symgrad as sg
from symgrad import prims as P
from symgrad.backend.numba import codegen
from symgrad.core.conventions import CONVENTIONS, CONVENTIONS_VERSION
from symgrad.core.ir import FLOAT, Aval
from symgrad.core.tracing import apply

BACKENDS = ["numba", "numpy"]
FULL = os.environ.get("SYMGRAD_FULL") == "1"
inf, nan = np.inf, np.nan


def a(*values: float) -> np.ndarray:
    return np.array(values, dtype=float)


def _where_sqrt(x):
    return np.sum(np.where(x > 0, np.sqrt(x), 0.0))


def _where_of_a_sum(x):
    return np.where(np.sum(x) > 0, np.sum(np.sqrt(x)), 0.0)


# name -> [(fn, args, argnums, value, gradients)]
EXAMPLES = {
    "abs_kink": [(lambda x: np.sum(np.abs(x)), (a(-2, 0, 3),), 0, 5.0, a(-1, 0, 1))],
    "sign": [(lambda x: np.sum(np.sign(x)), (a(-2, 0, 3),), 0, 0.0, a(0, 0, 0))],
    "maximum_tie": [
        (lambda x, y: np.sum(np.maximum(x, y)), (a(1, 2, 3), a(1, 5, 0)), (0, 1), 9.0,
         (a(0.5, 0, 1), a(0.5, 1, 0))),
        (lambda x, y: np.sum(np.minimum(x, y)), (a(1, 2, 3), a(1, 5, 0)), (0, 1), 3.0,
         (a(0.5, 1, 0), a(0.5, 0, 1)))],
    "extremum_ties": [
        (lambda x: np.max(x), (a(1, 3, 3, 3),), 0, 3.0, a(0, 1 / 3, 1 / 3, 1 / 3)),
        (lambda x: np.min(x), (a(-inf, 2, -inf),), 0, -inf, a(0.5, 0, 0.5)),
        (lambda x: np.sum(np.max(x, axis=1)), (np.array([[1.0, 1.0], [0.0, 2.0]]),), 0, 3.0,
         np.array([[0.5, 0.5], [0.0, 1.0]]))],
    "relu_kink": [(lambda x: np.sum(sg.relu(x)), (a(-1, 0, 2),), 0, 2.0, a(0, 0, 1))],
    "sqrt_zero": [(lambda x: np.sum(np.sqrt(x)), (a(0, 4),), 0, 2.0, a(inf, 0.25))],
    "pow_zero_base": [
        (lambda x, y: np.sum(np.power(x, y)), (a(0, 0), a(0, 2)), (0, 1), 1.0,
         (a(0, 0), a(0, 0)))],
    "pow_zero_exponent": [
        (lambda x: np.sum(np.power(x, 0.0)), (a(0, -1, 2),), 0, 3.0, a(0, 0, 0))],
    "where_no_leak": [
        (_where_sqrt, (a(-1, 0, 4),), 0, 2.0, a(0, 0, 0.25)),
        (_where_of_a_sum, (a(-1, -2),), 0, 0.0, a(0, 0))],
    "comparisons": [
        (lambda x, y: np.sum((x > y) * 1.0 + (x == y)), (a(1, 2), a(2, 2)), (0, 1), 1.0,
         (a(0, 0), a(0, 0))),
        (lambda x: np.sum(np.floor(x) + np.ceil(x) + np.trunc(x) + np.round(x)),
         (a(-1.5, 0.5, 2.0),), 0, 3.0, a(0, 0, 0)),
        # halves round to even (SymPy's numerical derivative at a jump is no oracle)
        (lambda x: np.sum(np.rint(x) * np.arange(1.0, 7.0)), (a(-2.5, -1.5, -0.5, 0.5, 1.5, 2.5),),
         0, 16.0, a(0, 0, 0, 0, 0, 0))],
    # the first derivative's value and its gradient: the second derivative
    "second_order_kinks": [
        (lambda x: np.sum(sg.grad(lambda y: np.sum(sg.relu(y)))(x)), (a(-1, 0, 2),), 0, 1.0,
         a(0, 0, 0)),
        (lambda x: np.sum(sg.grad(lambda y: np.sum(np.abs(y) * y))(x) * a(1, 1, 1)),
         (a(-1, 0, 2),), 0, 6.0, a(-2, 0, 2)),  # d/dx 2|x| = 2 sign(x), 0 at 0
        (lambda x: np.sum(sg.grad(lambda y: np.sum(np.abs(y)))(x)), (a(-1, 0, 2),), 0, 0.0,
         a(0, 0, 0)),
        (lambda x: np.sum(sg.grad(lambda y: np.sum(np.clip(y, 0.0, 1.0)))(x)),
         (a(-1, 0, 0.5, 1, 2),), 0, 3.0, a(0, 0, 0, 0, 0)),
        (lambda x, y: np.sum(sg.grad(lambda u: np.sum(np.maximum(u, y)))(x)),
         (a(1, 2, 3), a(2, 2, 2)), (0, 1), 1.5, (a(0, 0, 0), a(0, 0, 0))),
        (lambda x: np.sum(sg.grad(lambda y: np.max(y))(x)), (a(1, 3, 3),), 0, 1.0,
         a(0, 0, 0))],
    "outside_domain": [
        (lambda x: np.sum(np.sqrt(x)), (a(-1),), 0, nan, a(nan)),
        (lambda x: np.sum(np.arcsin(x)), (a(2),), 0, nan, a(nan))],
    "clip_bounds": [
        (lambda x, lo, hi: np.sum(np.clip(x, lo, hi)), (a(-1, 0, 0.5, 1, 2), 0.0, 1.0),
         (0, 1, 2), 2.5, (a(0, 1, 1, 1, 0), 1.0, 1.0))],
    "xlogy_zero": [
        (sg.xlogy, (0.0, 0.0), (0, 1), 0.0, (0.0, 0.0)),
        (sg.xlogy, (0.0, nan), (0, 1), nan, (nan, nan)),  # PyTorch's, JAX's
        (sg.xlogy, (0.0, 2.0), (0, 1), 0.0, (np.log(2.0), 0.0))],   # smooth there: PyTorch
    "hypot_origin": [(np.hypot, (0.0, 0.0), (0, 1), 0.0, (0.0, 0.0))],
    "norm_zero": [
        (lambda x: np.linalg.norm(x), (a(0, 0, 0),), 0, 0.0, a(0, 0, 0)),
        (lambda x: np.sum(np.linalg.norm(x, axis=1)), (np.array([[0.0, 0.0], [3.0, 4.0]]),),
         0, 5.0, np.array([[0.0, 0.0], [0.6, 0.8]]))],
    # issue 18: sg.grad(np.std)(3.5) and the gradient of np.std(x, axis=0) of a 1x3 were nan
    "std_equal": [
        (np.std, (3.5,), 0, 0.0, 0.0),
        (lambda x: np.sum(np.std(x, axis=0)), (np.array([[1.0, 2.0, 3.0]]),), 0, 0.0,
         np.zeros((1, 3))),
        (lambda x: np.std(x, ddof=1), (a(2, 2, 2),), 0, 0.0, a(0, 0, 0)),
        # no degrees of freedom (n - ddof <= 0): numpy's nan, and a nan gradient, as var's
        # (PyTorch's, JAX's), not the 0 of equal values
        (lambda x: np.std(x, ddof=1), (a(2),), 0, nan, a(nan)),
        (lambda x: np.sum(np.std(x, axis=0, ddof=1)), (np.array([[1.0, 2.0]]),), 0, nan,
         np.full((1, 2), nan))],
    "arctan2_origin": [(np.arctan2, (0.0, 0.0), (0, 1), 0.0, (nan, nan))],
    "logaddexp_tie": [
        (np.logaddexp, (-inf, -inf), (0, 1), -inf, (0.5, 0.5)),
        (np.logaddexp, (2.0, -inf), (0, 1), 2.0, (1.0, 0.0))],
    "logsumexp_infinite": [
        (sg.logsumexp, (a(-inf, -inf),), 0, -inf, a(0.5, 0.5)),
        (sg.logsumexp, (a(1, -inf),), 0, 1.0, a(1, 0)),
        (sg.logsumexp, (a(inf, 0, inf),), 0, inf, a(0.5, 0, 0.5))],
    "stable_tails": [
        (sg.sigmoid, (-800.0,), 0, 0.0, 0.0),
        (sg.sigmoid, (800.0,), 0, 1.0, 0.0),
        (sg.softplus, (800.0,), 0, 800.0, 1.0),
        (sg.softplus, (-800.0,), 0, 0.0, 0.0)],
    # issue 18
    "cbrt_zero": [(lambda x: np.sum(np.cbrt(x)), (a(0, -8, 64),), 0, 2.0,
                   a(inf, 1 / 12, 1 / 48))],
    "sinc_zero": [(lambda x: np.sum(np.sinc(x)), (a(0, -0.0),), 0, 2.0, a(0, 0))],
    "remainder": [
        (lambda x, y: x % y, (7.5, 2.0), (0, 1), 1.5, (1.0, -3.0)),
        (lambda x, y: np.remainder(x, y), (-7.5, 2.0), (0, 1), 0.5, (1.0, 4.0)),
        (lambda x, y: x // y, (7.5, 2.0), (0, 1), 3.0, (0.0, 0.0))],
    "fmax_nan": [
        (lambda x, y: np.sum(np.fmax(x, y)), (a(nan, 1, 2), a(3, nan, 2)), (0, 1), 6.0,
         (a(0, 1, 0.5), a(1, 0, 0.5))),
        (lambda x, y: np.sum(np.fmin(x, y)), (a(nan, 1), a(3, nan)), (0, 1), 4.0,
         (a(0, 1), a(1, 0)))],
    "nan_to_num": [(lambda x: np.sum(np.nan_to_num(x, posinf=2.0, neginf=-3.0) * a(1, 2, 3, 4)),
                    (a(nan, inf, -inf, 0.5),), 0, -3.0, a(0, 0, 0, 4))],
    "sort_ties": [(lambda x: np.sum(np.sort(x) * a(1, 2, 3, 4)), (a(2, 1, 2, 0),), 0, 16.0,
                   a(3, 2, 4, 1))],
    "cumprod_zeros": [(lambda x: np.sum(np.cumprod(x)), (a(2, 0, 3, 4),), 0, 2.0,
                       a(1, 2 + 6 + 24, 0, 0)),
                      (lambda x: np.sum(np.cumprod(x)), (a(2, 0, 3, 0, 5),), 0, 2.0,
                       a(1, 2 + 6, 0, 0, 0))],
    "p_norm_zero": [(lambda x: np.linalg.norm(x, 3), (a(0, 0),), 0, 0.0, a(0, 0))],
    # the upper triangle is not read: it gets 0, the lower one s_ij + s_ji (by hand:
    # L = [[sqrt(a), 0], [b/sqrt(a), sqrt(c - b^2/a)]] of a = 4, b = 2, c = 5)
    "triangle_read": [
        (lambda m: np.sum(np.linalg.cholesky(m)), (np.array([[4.0, 7.0], [2.0, 5.0]]),), 0,
         5.0, np.array([[0.1875, 0.0], [0.25, 0.25]])),
        (lambda m: np.sum(np.linalg.eigvalsh(m, "U") * a(1, 2)),
         (np.array([[1.0, 0.0], [7.0, 2.0]]),), 0, 5.0, np.array([[1.0, 0.0], [0.0, 2.0]]))],
    # a double eigenvalue (singular value): through the vectors, nan (the matrix products
    # spread it), the triangle not read keeping its 0
    "degenerate_spectrum": [
        (lambda m: np.sum(np.linalg.eigh(m)[1] ** 2), (np.eye(2),), 0, 2.0,
         np.array([[nan, 0.0], [nan, nan]])),
        (lambda m: np.sum(np.linalg.svd(m)[0] ** 2), (np.eye(2),), 0, 2.0,
         np.full((2, 2), nan))],
    # Golub-Pereyra at P = A = diag(1, 0): -P G P + (I - A P) G P P + P P G (I - P A)
    "constant_rank": [
        (lambda m: np.sum(np.linalg.pinv(m)), (np.array([[1.0, 0.0], [0.0, 0.0]]),), 0, 1.0,
         np.array([[-1.0, 1.0], [1.0, 0.0]]))],
}

ROWS = [(name, k) for name, examples in EXAMPLES.items() for k in range(len(examples))]


def test_every_convention_has_examples():
    assert set(EXAMPLES) == set(CONVENTIONS)


def _check(fn, args, argnums, value, grads, backend):
    got_value, got_grads = sg.value_and_grad(fn, argnums=argnums, backend=backend)(*args)
    np.testing.assert_array_equal(got_value, value)
    if not isinstance(argnums, tuple):
        got_grads, grads = (got_grads,), (grads,)
    assert len(got_grads) == len(grads)
    for got, want in zip(got_grads, grads):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name, k", ROWS, ids=[f"{n}-{k}" for n, k in ROWS])
def test_convention(name, k, backend):
    _check(*EXAMPLES[name][k], backend=backend)


def test_conventions_version_is_in_the_kernel_key(monkeypatch):
    graph = sg.jit(lambda x: np.abs(x)).graph(1.0)
    before = codegen.generate(graph, "f", "f")
    monkeypatch.setattr(codegen, "CONVENTIONS_VERSION", CONVENTIONS_VERSION + 1)
    after = codegen.generate(graph, "f", "f")
    assert f"conventions {CONVENTIONS_VERSION}" in before.text
    assert before.key != after.key


# ---------------------------------------------------------------------------
# regressions: failures of other systems


@pytest.mark.parametrize("backend", BACKENDS)
def test_jax_347_where_does_not_leak_nan_from_the_unselected_branch(backend):
    """jax #347: grad of where(x > 0, sqrt(x), 0) is nan at x < 0 (0 * inf in sqrt's VJP)."""
    g = sg.grad(_where_sqrt, backend=backend)
    np.testing.assert_array_equal(g(a(-1, -0.0, 0, 4)), a(0, 0, 0, 0.25))


@pytest.mark.parametrize("backend", BACKENDS)
def test_pytorch_23395_where_gradient_is_not_nan(backend):
    """pytorch #23395: torch.where's backward gives nan when the unselected branch's
    derivative is inf or nan there, here x * log(x) at x = 0 and x < 0."""
    g = sg.grad(lambda x: np.sum(np.where(x > 0, x * np.log(x), 0.0)), backend=backend)
    np.testing.assert_array_equal(g(a(-1, 0, 1)), a(0, 0, 1))


@pytest.mark.parametrize("backend", BACKENDS)
def test_jax_37821_maximum_tie_splits_the_gradient(backend):
    """jax #37821: the gradient of maximum(x, y) at x == y; symgrad gives 1/2 to each."""
    g = sg.grad(lambda x, y: np.maximum(x, y), argnums=(0, 1), backend=backend)
    assert g(1.0, 1.0) == (0.5, 0.5)
    g = sg.grad(lambda x: np.maximum(x, x), backend=backend)
    assert g(2.0) == 1.0  # both sides are x: 1/2 + 1/2


@pytest.mark.parametrize("backend", BACKENDS)
def test_jax_37820_abs_gradient_at_zero_is_zero(backend):
    """jax #37820: abs'(0); symgrad gives 0 (sign(0)), as PyTorch, also at -0.0."""
    g = sg.grad(lambda x: np.sum(np.abs(x)), backend=backend)
    np.testing.assert_array_equal(g(a(0.0, -0.0)), a(0, 0))


# ---------------------------------------------------------------------------
# where masks every primitive's VJP, not only sqrt's



def _arity(prim) -> int:
    nin = getattr(prim.impl, "nin", None)
    return nin if nin is not None else len(inspect.signature(prim.impl).parameters)


def _float_in_float_out(prim) -> bool:
    try:
        return prim.shape_rule(*[Aval(())] * _arity(prim)).dtype == FLOAT
    except TypeError:  # to_float takes integers
        return False


FLOAT_ELEMENTWISE = sorted(
    name for name, p in P.REGISTRY.items()
    if p.kind == "elementwise" and p is not P.where_p and _arity(p) in (1, 2)
    and _float_in_float_out(p))
# where every derivative formula meets its poles, infinities and nans
SPECIAL = a(-2, -1, -0.0, 0, 1, 2, 1e308, inf, -inf, nan)


#: the parameters of the elementwise primitives that take one (a number, not an operand)
PARAMS = {"polygamma": {"n": 1}, "zeta": {"s": 2.0}}
#: the primitives differentiable in their second operand only (the first's raises, as
#: PyTorch's igamma: tests/test_igamma.py; the Bessel functions' order: tests/test_bessel.py)
SECOND_ONLY = {"gammainc", "gammaincc", "iv", "ive", "kv", "kve", "jv", "yv"}


def _apply(name, x, y):
    prim, params = P.REGISTRY[name], PARAMS.get(name, {})
    return apply(prim, x, **params) if _arity(prim) == 1 else apply(prim, x, y, **params)


#: the interpreter masks every primitive; Numba every third one (two compiles each), all
#: of them with SYMGRAD_FULL=1
WHERE_CASES = [(name, backend) for k, name in enumerate(FLOAT_ELEMENTWISE)
               for backend in BACKENDS
               if backend == "numpy" or FULL or k % 3 == 0]


@pytest.mark.parametrize("name, backend", WHERE_CASES, ids=[f"{n}-{b}" for n, b in WHERE_CASES])
def test_where_masks_the_unselected_branch_of_every_primitive(name, backend):
    x, y = SPECIAL.reshape(-1, 1), SPECIAL
    never = lambda x: x > np.inf  # noqa: E731  (false everywhere, nan included)
    selected_x = lambda x, y: np.sum(np.where(never(x), _apply(name, x, y), 0.0))  # noqa: E731
    selected_y = lambda x, y: np.sum(  # noqa: E731
        np.where(x <= np.inf, 0.0, np.exp(_apply(name, x, y))))
    argnums = (1,) if name in SECOND_ONLY else (0, 1)
    finite_x = x[~np.isnan(x)].reshape(-1, 1)
    for fn, xs in ((selected_x, x), (selected_y, finite_x)):
        grads = sg.grad(fn, argnums=argnums, backend=backend)(xs, y)
        for g, v in zip(grads, [xs, y][-len(argnums):]):
            np.testing.assert_array_equal(g, np.zeros_like(v))


MASKED = {
    # through reductions and structural primitives under the where
    "prod": (lambda x: np.where(np.sum(x) > 9.0, np.prod(np.log(x)), 0.0), a(-1, 0, 2)),
    "max": (lambda x: np.where(np.sum(x) > 9.0, np.max(np.sqrt(x)), 0.0), a(-1, 0, 2)),
    "mean-reshape": (lambda x: np.where(np.sum(x) > 9.0, np.mean(np.sqrt(x).reshape(3, 1).T),
                                        0.0), a(-1, 0, 2)),
    # a condition broadcast against a smaller branch
    "broadcast": (lambda x: np.sum(np.where(np.ones((2, 1)) * x > 0, np.sqrt(x), 0.0)),
                  a(-1, 0, 4)),
    # nested wheres, and the same branch under two different conditions
    "nested": (lambda x: np.sum(np.where(x > -5, np.where(x > 0, np.log(x), 0.0), 1.0)),
               a(-1, 0, 4)),
    "two-conditions": (lambda x: np.sum(np.where(x > 0, np.sqrt(x), 0.0)
                                        + np.where(x > 1, np.sqrt(x), 0.0)), a(-1, 0.5, 4)),
    # through the array family: the nonlinear function before the slice, gather,
    # concatenate, cumsum or functional update that the where then selects from
    "slice": (lambda x: np.sum(np.where(x[1:] > 0, np.sqrt(x)[1:], 0.0)), a(-1, 0, 4)),
    "gather": (lambda x: np.sum(np.where(x[[2, 0, 2]] > 0, np.log(x)[[2, 0, 2]], 0.0)),
               a(-1, 0, 4)),
    "concatenate": (lambda x: np.sum(np.where(np.concatenate([x, x]) > 0,
                                              np.concatenate([np.sqrt(x), np.log(x)]), 0.0)),
                    a(-1, 0, 4)),
    "flip-cumsum": (lambda x: np.sum(np.where(x[::-1] > 0, np.cumsum(np.sqrt(x)[::-1]), 0.0)),
                    a(-1, 0, 4)),
    "at-set": (lambda x: np.sum(np.where(x > 0, sg.at(np.sqrt(x))[0].set(1.0), 0.0)),
               a(-1, 0, 4)),
}
WANT = {"prod": a(0, 0, 0), "max": a(0, 0, 0), "mean-reshape": a(0, 0, 0),
        "broadcast": a(0, 0, 0.5), "nested": a(0, 0, 0.25),
        "two-conditions": a(0, 0.5 / np.sqrt(0.5), 0.5),
        "slice": a(0, 0, 0.25), "gather": a(0, 0, 0.5), "concatenate": a(0, 0, 0.5),
        "flip-cumsum": a(0, 0, 0.25), "at-set": a(0, 0, 0.25)}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(MASKED))
def test_where_masks_through_any_chain(name, backend):
    fn, x = MASKED[name]
    np.testing.assert_array_equal(sg.grad(fn, backend=backend)(x), WANT[name])


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_selected_use_still_gives_numpys_nan(backend):
    # sqrt(x) is also used outside the where: its nan at x = -1 is genuine
    g = sg.grad(lambda x: np.sum(np.where(x > 0, np.sqrt(x), 0.0) + np.sqrt(x)), backend=backend)
    np.testing.assert_array_equal(g(a(-1, 4)), a(nan, 0.5))


def test_no_mask_without_where():
    source = sg.grad(lambda x: np.sum(np.sqrt(x) * np.exp(x) / x)).source(a(1, 2))
    assert "where" not in source
