"""Second order and forward mode for every primitive, against SymPy at 50 digits.

Two columns of the per-primitive table (``cases.py``), one case per primitive
(its first smooth case with an array argument, else its first case):

- second order: the Hessian-vector product of ``L = sum(f(x, ...) * ct)`` in the
  first argument, ``grad(<grad L, v>)`` by symgrad (the VJP of each VJP rule),
  against SymPy's ``sum_j d(dL/dx_i)/dx_j v_j``;
- forward mode: ``jvp(f, args, tangents)`` (the double-VJP trick) against SymPy's
  directional derivative ``sum_j df/dx_j t_j`` over all arguments.

Both on the numpy interpreter; on Numba for every sixth primitive (CI time:
each is a kernel compile; ``SYMGRAD_FULL=1`` runs all of them on Numba), except the
second order of ``eig`` and ``cholesky`` (``SECOND_ORDER_FULL_ONLY``).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import sympy as sp

import symgrad as sg
from symgrad.core.sympy_bridge import evaluate, gradient_expressions, input_symbols, to_sympy

from cases import CASES, Case
from oracle import assert_close, forward_graph, rng_for


def _representatives() -> list[Case]:
    chosen: dict[str, Case] = {}
    for case in CASES:
        if not case.prims or case.orders < 2:
            continue
        best = chosen.get(case.prims[0])
        if case.fixed is not None and best is not None:
            continue  # fixed arguments (eig's real spectrum): only where nothing else is
        good = case.smooth and any(len(s) == 1 and s[0] > 1 for s in case.shapes[:1])
        if best is None or good and not (best.smooth and any(
                len(s) == 1 and s[0] > 1 for s in best.shapes[:1])):
            chosen[case.prims[0]] = case
    return list(chosen.values())


REPRESENTATIVES = _representatives()
FULL = os.environ.get("SYMGRAD_FULL") == "1"
#: on Numba in CI besides every sixth: complex values in kernels (|z|'s VJP) and between
#: them (the FFT runs on numpy between kernels)
ON_NUMBA = {"cabs", "fft"}
PARAMS = [pytest.param(case, backend, id=f"{case}-{backend}")
          for k, case in enumerate(REPRESENTATIVES)
          for backend in ("numpy", "numba")
          if backend == "numpy" or FULL or k % 6 == 0 or case.prims[0] in ON_NUMBA]
#: second order on Numba with SYMGRAD_FULL=1 only: eig's is a compile of about 40 s (the
#: suite's longest test, at the end of a worker's share), cholesky's of 13 s CPU (the
#: column's others: under 4 s); cholesky's forward mode, which runs on Numba in CI,
#: compiles the VJP of its VJP as well (the double-VJP trick)
SECOND_ORDER_FULL_ONLY = {"eig", "cholesky"}
SECOND_ORDER_PARAMS = [p for p in PARAMS if FULL or p.values[1] == "numpy"
                       or p.values[0].prims[0] not in SECOND_ORDER_FULL_ONLY]


def _setup(case: Case):
    args = [np.asarray(a, dtype=float) if np.ndim(a) else float(a) for a in case.args()]
    out = np.asarray(case.fn(*args))
    rng = rng_for(case.name + "/higher")
    ct = None if out.ndim == 0 else rng.uniform(-1, 1, out.shape)
    v = rng.uniform(-1, 1, np.shape(args[0]))
    tangents = [rng.uniform(-1, 1, np.shape(a)) if np.ndim(a) else float(rng.uniform(-1, 1))
                for a in args]
    return args, ct, v, tangents


def _contract(expr: object, symbols: object, direction: object) -> object:
    """sum_j d expr / d s_j * direction_j over the symbols of one input (the terms of the
    symbols ``expr`` contains: the others are 0)."""
    syms = np.ravel(np.asarray(symbols, dtype=object))
    dirs = np.ravel(np.asarray(direction, dtype=float))
    free = expr.free_symbols if isinstance(expr, sp.Basic) else set()
    return sp.Add(*(sp.diff(expr, s) * sp.Float(float(d), 30) for s, d in zip(syms, dirs)
                    if s in free))


@pytest.mark.parametrize(("case", "backend"), SECOND_ORDER_PARAMS)
def test_second_order_matches_sympy(case: Case, backend: str):
    """H v against SymPy at 30 digits (against central differences of the gradient where
    SymPy has no form: ``oracle="fd"``)."""
    args, ct, v, _ = _setup(case)
    rest = args[1:]
    weight = 1.0 if ct is None else ct

    def loss(x):
        return np.sum(case.fn(x, *rest) * weight)

    def directional(x):
        return np.sum(sg.grad(loss, backend=backend)(x) * v)

    got = sg.grad(directional, backend=backend)(args[0])
    if case.oracle == "fd":  # the gradient's central differences along v
        g = sg.grad(loss, backend="numpy")
        x = np.asarray(args[0], dtype=float)
        h = 1e-5 * max(1.0, float(np.max(np.abs(x))) if x.size else 1.0)
        want = (g(x + h * v) - g(x - h * v)) / (2 * h)
        assert_close(got, want, rtol=max(case.rtol, 1e-5), atol=max(case.atol, 1e-6),
                     what=f"{case}: H v vs central differences of the gradient")
        return
    graph = forward_graph(case.fn, *args)
    (g0,) = gradient_expressions(graph, ct, wrt=[0])
    symbols = input_symbols(graph)[0]
    hv = np.frompyfunc(lambda e: _contract(e, symbols, v), 1, 1)(np.asarray(g0, dtype=object))
    want = evaluate(hv, graph, args)
    assert_close(got, want, rtol=max(case.rtol, 1e-11), atol=max(case.atol, 1e-11),
                 what=f"{case}: H v vs SymPy")


@pytest.mark.parametrize(("case", "backend"), PARAMS)
def test_forward_mode_matches_sympy(case: Case, backend: str):
    args, _, _, tangents = _setup(case)
    value, jt = sg.jvp(case.fn, tuple(args), tuple(tangents), backend=backend)
    if case.oracle == "fd":  # central differences of the function along the tangents
        def along(h):
            return np.asarray(case.fn(*(np.asarray(a, dtype=float) + h * np.asarray(t)
                                        for a, t in zip(args, tangents))), dtype=float)
        assert_close(value, along(0.0), rtol=case.rtol, atol=case.atol, what=f"{case}: value")
        want = (along(1e-6) - along(-1e-6)) / 2e-6
        assert_close(jt, want, rtol=max(case.rtol, 1e-6), atol=max(case.atol, 1e-7),
                     what=f"{case}: J t vs central differences")
        return
    graph = forward_graph(case.fn, *args)
    symbols = input_symbols(graph)
    (y,) = to_sympy(graph, symbols)

    def pushed(e):
        return sp.Add(*(_contract(e, s, t) for s, t in zip(symbols, tangents)))

    want = evaluate(np.frompyfunc(pushed, 1, 1)(np.asarray(y, dtype=object)), graph, args)
    assert_close(value, evaluate(y, graph, args), rtol=case.rtol, atol=case.atol,
                 what=f"{case}: value")
    assert_close(jt, want, rtol=max(case.rtol, 1e-11), atol=max(case.atol, 1e-11),
                 what=f"{case}: J t vs SymPy")


def test_the_columns_cover_every_primitive():
    from symgrad.prims import REGISTRY

    covered = {p for c in REPRESENTATIVES for p in c.prims}
    first_only = {c.prims[0] for c in CASES if c.orders < 2}  # test_custom.py says why
    assert covered == set(REGISTRY) - {"count", "extremum_weights"} - first_only, \
        sorted(set(REGISTRY) - covered)
    print(f"\nsecond-order and forward-mode columns: {len(REPRESENTATIVES)} primitives, "
          f"{sum(p.values[1] == 'numba' for p in PARAMS)} of them also on Numba")


@pytest.mark.parametrize("case", REPRESENTATIVES[::4], ids=str)
def test_jvp_and_vjp_are_transposes(case: Case):
    """<J t, c> = <t, J^T c>, both by symgrad (forward by double VJP, reverse by VJP)."""
    args, ct, _, tangents = _setup(case)
    out = np.asarray(case.fn(*args))
    c = np.ones(()) if out.ndim == 0 else ct
    _, jt = sg.jvp(case.fn, tuple(args), tuple(tangents), backend="numpy")
    _, pullback = sg.vjp(case.fn, *args, backend="numpy")
    jtc = pullback(c)
    left = float(np.sum(np.asarray(jt) * c))
    right = sum(float(np.sum(np.asarray(g) * t)) for g, t in zip(jtc, tangents))
    assert left == pytest.approx(right, rel=1e-10, abs=1e-12)
