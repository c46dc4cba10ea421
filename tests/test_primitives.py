"""Every primitive against SymPy at 50 digits, plain numpy, and the other backend.

Generated from the table in ``cases.py``: one test per case and backend (each
case names its backends; see the budget note there).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import symgrad as sg

from cases import CASES, Case
from oracle import assert_close, finite_differences, rng_for, sympy_gradient, sympy_value

CASE_BACKENDS = [pytest.param(case, backend, id=f"{case}-{backend}")
                 for case in CASES for backend in case.backends]
BOTH = [case for case in CASES if {"numba", "numpy"} <= set(case.backends)]


@functools.cache
def _problem(case: Case):
    """Arguments, cotangent (None for scalar outputs) and SymPy's answers for ``case``
    (for ``oracle="fd"``: numpy's value and central differences)."""
    args = case.args()
    out = np.asarray(case.fn(*args))
    ct = None if out.ndim == 0 else rng_for(case.name + "/ct").uniform(-1, 1, out.shape)
    if case.oracle == "fd":
        grads = [finite_differences(case.fn, args, k, ct) for k in range(len(args))]
        return args, ct, out, out, grads
    value = sympy_value(case.fn, *args)
    grads = sympy_gradient(case.fn, args, ct)
    return args, ct, out, value, grads


def _run(case: Case, backend: str):
    args, ct, *_ = _problem(case)
    argnums = tuple(range(len(args)))
    f = sg.value_and_grad(case.fn, argnums=argnums, backend=backend)
    return f(*args, gradient=ct)


@pytest.mark.parametrize(("case", "backend"), CASE_BACKENDS)
def test_value_and_gradient_match_sympy(case: Case, backend: str):
    args, ct, numpy_out, want_value, want_grads = _problem(case)
    value, grads = _run(case, backend)
    tol = {"rtol": case.rtol, "atol": case.atol}
    assert_close(value, want_value, **tol, what=f"{case} value vs SymPy")
    assert_close(value, numpy_out, **tol, what=f"{case} value vs numpy")
    assert len(grads) == len(args)
    if case.oracle == "fd":  # central differences: truncation and rounding near 1e-9
        tol = {"rtol": max(case.rtol, 1e-6), "atol": max(case.atol, 1e-7)}
    for k, (got, want) in enumerate(zip(grads, want_grads)):
        assert np.shape(got) == np.shape(args[k]), f"gradient {k} has the argument's shape"
        assert_close(got, want, **tol, what=f"{case} gradient {k} vs {case.oracle}")


def test_the_table_has_every_kind_of_shape_for_every_primitive():
    """0-d, 1-d, 2-d, size-1, empty and non-contiguous arguments, per primitive."""
    kinds: dict[str, set[str]] = {}
    for case in CASES:
        if case.fixed is not None or not case.prims:
            continue
        found = kinds.setdefault(case.prims[0], set())
        found |= {f"{len(s)}-d" for s in case.shapes if len(s) <= 2}
        found |= {"size-1" for s in case.shapes if 1 in s}
        found |= {"empty" for s in case.shapes if 0 in s}
        found |= {"non-contiguous" for a in case.args() if np.ndim(a) and
                  not a.flags.c_contiguous}
        if "numba" in case.backends:
            found.add("numba")
    want = {"0-d", "1-d", "2-d", "size-1", "empty", "non-contiguous", "numba"}
    # the families added in parallel (array, linalg, stable) bring their own shapes
    from cases import (
        ARRAY_CASES,
        CONTROL_CASES,
        DECOMPOSITION_CASES,
        LINALG_CASES,
        NUMPY_CASES,
        STABLE_CASES,
    )
    later = {p for c in ARRAY_CASES + LINALG_CASES + STABLE_CASES + NUMPY_CASES
             + DECOMPOSITION_CASES + CONTROL_CASES for p in c.prims}
    later.add("fft")  # a transform of a 0-d or empty array does not exist
    # transposing a 0-d or 1-d array is the identity: no equation to test there
    kinds["transpose"] |= {"0-d", "1-d"}
    missing = {prim: sorted(want - found) for prim, found in kinds.items()
               if want - found and prim not in later}
    assert not missing, f"primitives lacking shape kinds in tests/cases.py: {missing}"


@pytest.mark.parametrize("case", BOTH, ids=str)
def test_backends_agree(case: Case):
    value_nb, grads_nb = _run(case, "numba")
    value_np, grads_np = _run(case, "numpy")
    # float32 values round once per equation on the interpreter, once per stored array in
    # a fused loop (README, "float32"): the backends agree to float32's precision there
    rtol, atol = (1e-6, 1e-7) if "convert" in case.prims else (1e-14, 1e-15)
    assert_close(value_nb, value_np, rtol=rtol, atol=atol, what="value")
    for a, b in zip(grads_nb, grads_np):
        assert_close(a, b, rtol=rtol, atol=atol, what="gradient")
