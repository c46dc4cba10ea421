"""Properties of every gradient: linear in the cotangent, adjoint of the Jacobian
(the dot-product test against finite differences), SymPy's gradient of
``sum(y * gradient)`` for a symbolic cotangent, and the same numbers from the
compiled kernel, the numpy backend and the kernel reloaded from disk in a
second process.

The table-wide properties run on the numpy backend (no compile: the table's
kernels are compared with it in test_primitives.py); the others compile.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import symgrad as sg
from symgrad.core.sympy_bridge import element_symbols, evaluate, exact, gradient_expressions

from cases import CASES, Case
from expressions import load_corpus
from oracle import assert_close, forward_graph, replaced_vjp, rng_for

SMOOTH_VECTOR = [c for c in CASES if c.smooth and np.ndim(c.fn(*c.args())) > 0]
SMOOTH = [c for c in CASES if c.smooth]


def _pullback(case: Case, backend: str = "numpy"):
    args = case.args()
    _, pullback = sg.vjp(case.fn, *args, backend=backend)
    return args, pullback


@pytest.mark.parametrize("case", SMOOTH_VECTOR, ids=str)
def test_vjp_is_linear_in_the_cotangent(case: Case):
    args, pullback = _pullback(case)
    shape = np.shape(case.fn(*args))
    rng = rng_for(case.name + "/linear")
    c1, c2 = rng.uniform(-1, 1, shape), rng.uniform(-1, 1, shape)
    a, b = 1.75, -0.5
    combined = pullback(a * c1 + b * c2)
    for k, (g, g1, g2) in enumerate(zip(combined, pullback(c1), pullback(c2))):
        assert_close(g, a * g1 + b * g2, rtol=1e-12, atol=1e-12, what=f"argument {k}")


@settings(max_examples=20)
@given(st.floats(-4, 4), st.floats(-4, 4),
       arrays(np.float64, (2, 3), elements=st.floats(-2, 2)),
       arrays(np.float64, (2, 3), elements=st.floats(-2, 2)))
def test_compiled_vjp_is_linear_in_the_cotangent(a, b, c1, c2):
    x, y = np.array([[0.3, -1.2, 0.8], [1.5, 0.1, -0.4]]), np.array([0.7, 1.1, 2.0])
    _, pullback = sg.vjp(lambda x, y: np.sin(x) * np.exp(y) + x / y, x, y)  # one kernel
    combined = pullback(a * c1 + b * c2)
    for g, g1, g2 in zip(combined, pullback(c1), pullback(c2)):
        scale = 1e-12 * (1 + np.abs(a * g1) + np.abs(b * g2))
        assert np.all(np.abs(g - (a * g1 + b * g2)) <= scale)


@pytest.mark.parametrize("case", SMOOTH, ids=str)
def test_dot_product_with_finite_differences(case: Case):
    """<J t, c> = <t, J^T c>: J t by central differences along t, J^T c by symgrad."""
    jt_c, t_jtc, tol = _dot_products(case)
    assert abs(jt_c - t_jtc) <= tol, (jt_c, t_jtc)


def test_the_properties_fail_for_a_wrong_vjp():
    (case,) = [c for c in CASES if c.name == "sin-2x3"]
    with replaced_vjp("sin", lambda g, ans, x: (g * np.cos(x) + 0.01 * np.square(g),)):
        jt_c, t_jtc, tol = _dot_products(case)
        assert abs(jt_c - t_jtc) > 100 * tol, "the dot-product test sees a wrong VJP"
        _, wrong = _pullback(case)  # and the VJP is no longer linear
        c = np.ones((2, 3))
        assert not np.allclose(wrong(2 * c)[0], 2 * wrong(c)[0])
    jt_c, t_jtc, tol = _dot_products(case)
    assert abs(jt_c - t_jtc) <= tol


def _dot_products(case: Case) -> tuple[float, float, float]:
    """<J t, c>, <t, J^T c> and the tolerance of their difference."""
    args = [np.asarray(a, dtype=float) for a in case.args()]
    rng = rng_for(case.name + "/dot")
    tangents = [rng.uniform(-1, 1, np.shape(a)) for a in args]
    out = np.asarray(case.fn(*args))
    c = rng.uniform(-1, 1, out.shape)
    grads = sg.grad(case.fn, argnums=tuple(range(len(args))), backend="numpy")(
        *args, gradient=c)
    h = 1e-6 * max(1.0, *(float(np.max(np.abs(a), initial=0.0)) for a in args))
    up = np.asarray(case.fn(*(a + h * t for a, t in zip(args, tangents))))
    down = np.asarray(case.fn(*(a - h * t for a, t in zip(args, tangents))))
    jt_c = np.sum((up - down) / (2 * h) * c)
    t_jtc = sum(np.sum(t * g) for t, g in zip(tangents, grads))
    # central differences: O(h**2) truncation, O(eps * |f| / h) rounding
    size = sum(np.sum(np.abs(t * g)) for t, g in zip(tangents, grads))
    size += float(np.sum(np.abs(out * c)))
    return jt_c, t_jtc, 1e-6 * (1.0 + size)


VECTOR_CASES = ["sin-2x3", "pow-2x3_3", "maximum-2x1_1x3", "sum-2x3-axis0-keepdimsFalse",
                "prod-2x3x2-axis1-keepdimsTrue", "broadcast_to-3_2x3", "where-2x3_3_2x1",
                "div-1x1_2x3"]


@pytest.mark.parametrize("name", VECTOR_CASES)
def test_compiled_gradient_is_sympys_gradient_of_sum_y_times_a_symbolic_gradient(name):
    (case,) = [c for c in CASES if c.name == name]
    args = case.args()
    graph = forward_graph(case.fn, *args)
    cs = element_symbols("cotangent__", graph.outputs[0].shape)  # no input has this name
    exprs = gradient_expressions(graph, cs)  # linear in the symbols c[i, j]
    # value_and_grad with every argnum: the kernel of test_primitives.py, reused
    g = sg.value_and_grad(case.fn, argnums=tuple(range(len(args))))
    for seed in range(2):
        ct = rng_for(f"{name}/symbolic/{seed}").uniform(-1, 1, graph.outputs[0].shape)
        at = {s: exact(v) for s, v in zip(np.ravel(cs), np.ravel(ct))}
        subs = np.frompyfunc(lambda e, at=at: sp.sympify(e).xreplace(at), 1, 1)
        want = [evaluate(subs(np.asarray(e, dtype=object)), graph, args) for e in exprs]
        for got, w in zip(g(*args, gradient=ct)[1], want):
            assert_close(got, np.reshape(w, np.shape(got)), what=name)


CHILD = """
import json, sys
import numpy as np
import symgrad as sg
from symgrad.backend.numba import compile
from expressions import Problem

out = []
for entry in json.loads(sys.argv[1]):
    p = Problem(**entry)
    args = p.args()
    value, grads = sg.value_and_grad(p.fn, argnums=tuple(range(len(args))))(
        *args, gradient=p.cotangent(np.shape(p.fn(*args))))
    out.append([float(value).hex() if np.ndim(value) == 0 else [v.hex() for v in np.ravel(value)],
                [[float(v).hex() for v in np.ravel(g)] for g in grads]])
print(json.dumps({"results": out, **compile.compile_stats()}))
"""


def _child(cache: Path, problems: str) -> dict:
    tests = str(Path(__file__).parent)
    env = {**os.environ, "SYMGRAD_CACHE_DIR": str(cache),
           "PYTHONPATH": os.pathsep.join([tests, os.environ.get("PYTHONPATH", "")])}
    env.pop("NUMBA_CACHE_DIR", None)
    done = subprocess.run([sys.executable, "-c", CHILD, problems], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _hex(x) -> list:
    return [float(v).hex() for v in np.ravel(x)]


def test_compiled_numpy_and_reloaded_kernels_agree(tmp_path):
    problems = load_corpus()[:4]
    entries = json.dumps([json.loads(p.to_json()) for p in problems])
    first = _child(tmp_path, entries)
    assert first["compiled"] == first["kernels"] == len(problems)
    second = _child(tmp_path, entries)
    assert second["compiled"] == 0, "the second process loads every kernel from disk"
    assert second["loaded_from_disk"] == len(problems)
    assert second["results"] == first["results"], "bit for bit"
    for p, (value, grads) in zip(problems, first["results"]):
        args = p.args()
        ct = p.cotangent(np.shape(p.fn(*args)))
        argnums = tuple(range(len(args)))
        for backend in ["numba", "numpy"]:  # in this process
            v, gs = sg.value_and_grad(p.fn, argnums=argnums, backend=backend)(*args, gradient=ct)
            got = [[float.fromhex(h) for h in np.ravel([value])], *[
                [float.fromhex(h) for h in g] for g in grads]]
            want = [np.ravel(v), *[np.ravel(g) for g in gs]]
            for a, b in zip(got, want):
                assert_close(a, b, rtol=1e-14, atol=1e-15, what=f"{p} {backend}")
