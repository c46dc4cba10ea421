"""Second and third derivatives on a stable formula's kink, against SymPy at 50 digits.

The rows are ``cases_kinks.KINKS`` (smooth functions computed through ``max``,
``|x|`` or a branch, at the point where the formula has its kink); the columns:

- the Hessian, forward over reverse (``sg.hessian``);
- ``H v``, reverse over reverse (``sg.hvp``);
- the third derivative ``sum_jk d3f/dx_i dx_j dx_k v_j w_k``, reverse over reverse
  over reverse (``sg.grad`` three times);
- the same, forward over reverse over reverse (``sg.jvp`` of the gradient of
  ``<grad f, v>`` along ``w``).

All on the numpy interpreter; a few rows also on Numba (each is a kernel compile;
``SYMGRAD_FULL=1`` runs every row there). SymPy differentiates the row's own smooth
formula (no ``Max``, no ``Abs``), so neither symgrad's VJP rules nor its graph play a
part in what it returns.
"""

from __future__ import annotations

import functools
import os

import numpy as np
import pytest
import sympy as sp
from cases_kinks import KINKS, Kink

import symgrad as sg

from oracle import assert_close, rng_for

FULL = os.environ.get("SYMGRAD_FULL") == "1"


def _params(on_numba: set[str]) -> list:
    return [pytest.param(k, b, id=f"{k}-{b}") for k in KINKS for b in ("numpy", "numba")
            if b == "numpy" or FULL or k.name in on_numba]


RTOL, ATOL = 1e-10, 1e-12


def _directions(kink: Kink) -> tuple[np.ndarray, np.ndarray]:
    rng = rng_for(kink.name + "/kink")
    return rng.uniform(-1, 1, len(kink.at)), rng.uniform(-1, 1, len(kink.at))


@functools.cache
def _exact(kink: Kink) -> tuple[np.ndarray, np.ndarray]:
    """SymPy's Hessian and third derivative along (v, w) at the point, at 50 digits."""
    xs = list(sp.symbols(f"x0:{len(kink.at)}", real=True))
    e = kink.ref(xs)
    v, w = (np.array([sp.Float(float(t), 50) for t in d], dtype=object)
            for d in _directions(kink))
    at = {s: sp.Float(float(a), 50) for s, a in zip(xs, kink.at)}
    hessian = [[sp.diff(e, a, b) for b in xs] for a in xs]
    hv = [sp.Add(*(h * t for h, t in zip(row, v))) for row in hessian]
    third = [sp.Add(*(sp.diff(h, s) * t for s, t in zip(xs, w))) for h in hv]

    def value(x: object) -> float:
        return float(sp.N(x.subs(at), 50))

    return (np.array([[value(h) for h in row] for row in hessian]),
            np.array([value(t) for t in third]))


def _hvp_of(f, v, backend):
    return lambda y: sg.grad(lambda z: np.sum(sg.grad(f, backend=backend)(z) * v),
                             backend=backend)(y)


@pytest.mark.parametrize(("kink", "backend"), _params({"logaddexp-zero", "logsumexp-ties"}))
def test_second_derivatives_on_the_kink(kink: Kink, backend: str):
    x = np.array(kink.at)
    v, _ = _directions(kink)
    want, _ = _exact(kink)
    assert_close(sg.hessian(kink.fn, backend=backend)(x), want, RTOL, ATOL,
                 what=f"{kink}: Hessian (forward over reverse) vs SymPy")
    if backend == "numpy" or FULL:
        assert_close(sg.hvp(kink.fn, x, v, backend=backend), want @ v, RTOL, ATOL,
                     what=f"{kink}: H v (reverse over reverse) vs SymPy")


@pytest.mark.parametrize(("kink", "backend"), _params({"tanh-zero"}))
def test_third_derivatives_on_the_kink(kink: Kink, backend: str):
    x = np.array(kink.at)
    v, w = _directions(kink)
    _, want = _exact(kink)
    hv = _hvp_of(kink.fn, v, "numpy")
    got = sg.grad(lambda y: np.sum(hv(y) * w), backend=backend)(x)
    assert_close(got, want, RTOL, ATOL, what=f"{kink}: third derivative (reverse^3) vs SymPy")
    if backend == "numpy" or FULL:
        _, pushed = sg.jvp(hv, (x,), (w,), backend=backend)
        assert_close(pushed, want, RTOL, ATOL,
                     what=f"{kink}: third derivative (forward over reverse^2) vs SymPy")


def test_the_issue_example_and_the_conventions_at_real_kinks():
    """softplus'' at 0 is 1/4 (issue 25); abs, maximum and relu keep their conventions
    (DESIGN.md): their second derivatives are 0, also at the kink, and the first ones
    abs'(0) = 0, maximum's tie 1/2, relu'(0) = 0."""
    x = np.zeros(3)
    h = sg.hessian(lambda x: np.sum(np.logaddexp(0.0, x)), backend="numpy")(x)
    assert np.array_equal(h, np.diag([0.25] * 3))
    for f, first in [(lambda x: np.sum(np.abs(x)), 0.0),
                     (lambda x: np.sum(np.maximum(x, 0.0)), 0.5),
                     (lambda x: np.sum(sg.relu(x)), 0.0)]:
        assert np.array_equal(sg.grad(f, backend="numpy")(x), np.full(3, first))
        assert np.array_equal(sg.hessian(f, backend="numpy")(x), np.zeros((3, 3)))
    # a user's own stable formula keeps the conventions of what it is written with:
    # max(a, b) + log1p(exp(-|a - b|)) at a tie has the Hessian of max and abs there, 0
    mine = lambda x: np.maximum(x[0], x[1]) + np.log1p(np.exp(-np.abs(x[0] - x[1])))
    assert np.array_equal(sg.hessian(mine, backend="numpy")(np.ones(2)), np.zeros((2, 2)))
    assert np.array_equal(sg.hessian(lambda x: np.logaddexp(x[0], x[1]), backend="numpy")(
        np.ones(2)), np.array([[0.25, -0.25], [-0.25, 0.25]]))


def test_the_first_derivatives_at_infinite_ties_stay():
    """logaddexp(-inf, -inf) and (inf, inf): x - y is nan there, and 1/2 each takes its
    place (the logaddexp_tie convention), on the first and the second derivative."""
    for t in (-np.inf, np.inf):
        g = sg.grad(lambda a, b: np.logaddexp(a, b), argnums=(0, 1), backend="numpy")(t, t)
        assert [float(v) for v in g] == [0.5, 0.5]
        assert float(sg.grad(lambda a: np.logaddexp(a, 0.0), backend="numpy")(t)) == \
            (1.0 if t > 0 else 0.0)
    # and a nan stays nan
    assert np.isnan(sg.grad(lambda a: np.logaddexp(a, 1.0), backend="numpy")(np.nan))


def test_the_table_covers_the_audit():
    covered = {p for k in KINKS for p in k.prims}
    assert {"logaddexp", "softplus", "sigmoid", "tanh", "logsumexp", "log_softmax",
            "softmax", "xlogy", "hypot", "norm2", "prod", "cumprod", "sinc"} <= covered


def _eager_kinks(torch, show, data):
    """Three derivatives of each function, on Tensors, where its stable formula has a
    kink: zeros (softplus, tanh, sigmoid, smooth_l1) and tied maxima (logsumexp,
    log_softmax, softmax)."""
    F = torch.nn.functional
    x = torch.tensor(data["x"], requires_grad=True)
    w = torch.tensor(data["w"])
    zeros = torch.zeros(5)
    for f, orders in ((lambda x: F.softplus(x), 3), (lambda x: torch.tanh(x), 3),
                      (lambda x: torch.sigmoid(x), 3),
                      # u**2 / 2 near 0: the second derivative is the constant 1
                      (lambda x: F.smooth_l1_loss(x, zeros, reduction="none"), 2),
                      (lambda x: x.logsumexp(0), 3), (lambda x: F.log_softmax(x, 0) * w, 3),
                      (lambda x: F.softmax(x, 0) * w, 3)):
        d = f(x).sum()
        for _ in range(orders):
            d, = torch.autograd.grad(d if d.ndim == 0 else (d * w).sum(), x,
                                     create_graph=True)
            show(d.detach())


def test_eager_tensors_agree_with_pytorch_on_the_kink():
    torch = pytest.importorskip("torch")
    from torch_oracle import run_both

    x = np.array([0.0, 0.0, 0.3, 0.3, -1.0])  # zeros, and the tied maxima 0.3
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # as symgrad's
    try:
        run_both(_eager_kinks, {"x": x, "w": np.array([0.5, -1.0, 2.0, 0.25, 1.5])})
    finally:
        torch.set_default_dtype(before)
