"""Every primitive against SymPy at 50 digits, plain numpy, and the other backend.

Generated from the table in ``cases.py``: one test per case and backend (each
case names its backends; the interpreter runs every case). The Numba column in CI runs
every primitive at least once: the elementwise ones' 0-d and 1-d cases as family
kernels (``FAMILIES``), the first case of every other primitive alone; with
``SYMGRAD_FULL=1`` the 2-d family kernels too and every case alone on Numba (the budget
note in ``cases.py``).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import symgrad as sg

from cases import CASES, FAMILIES, TABLE, Case, Family, with_layout
from oracle import (
    assert_close,
    finite_differences,
    rng_for,
    sympy_value_and_gradient,
)

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
    value, grads = sympy_value_and_gradient(case.fn, args, ct)
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


def _family_problem(family: Family):
    """The family's function (each member's output weighted by its cotangent, summed),
    its arguments, and where each member's arguments sit among them."""
    problems = [_problem(case) for case in family.members]
    args, spans = [], []
    for case_args, *_ in problems:
        spans.append(slice(len(args), len(args) + len(case_args)))
        args += case_args

    def fn(*xs):
        total = 0.0
        for case, span, (_, ct, *_) in zip(family.members, spans, problems):
            out = case.fn(*xs[span])
            total = total + (out if ct is None else np.sum(out * ct))
        return total

    return fn, args, spans, problems


@pytest.mark.parametrize("family", FAMILIES, ids=str)
def test_family_kernel_matches_sympy(family: Family):
    """The Numba column of the table: one kernel holds a case of each primitive of a
    family; its gradient with respect to a case's arguments is that case's gradient
    (against SymPy, as the interpreter's), its value the cotangent-weighted sum of the
    cases' values; and it agrees with the interpreter on the same function."""
    fn, args, spans, problems = _family_problem(family)
    argnums = tuple(range(len(args)))
    value, grads = sg.value_and_grad(fn, argnums=argnums, backend="numba")(*args)
    value_np, grads_np = sg.value_and_grad(fn, argnums=argnums, backend="numpy")(*args)
    # float32 values round once per equation on the interpreter, once per stored array in
    # a fused loop (README, "float32"): the backends agree to float32's precision there
    convert = any("convert" in case.prims for case in family.members)
    rtol, atol = (1e-6, 1e-7) if convert else (1e-14, 1e-15)
    assert_close(value, value_np, rtol=rtol, atol=atol, what=f"{family} value vs numpy backend")
    want_value, slack = 0.0, 0.0
    for case, span, (case_args, ct, _, want, want_grads) in zip(family.members, spans, problems):
        weighted = np.asarray(want) if ct is None else np.asarray(want) * ct
        want_value += np.sum(weighted)
        slack += case.atol * (1 if ct is None else np.sum(np.abs(ct)))
        slack += case.rtol * np.sum(np.abs(weighted))
        tol = {"rtol": case.rtol, "atol": case.atol}
        if case.oracle == "fd":  # central differences: truncation and rounding near 1e-9
            tol = {"rtol": max(case.rtol, 1e-6), "atol": max(case.atol, 1e-7)}
        for k, got, got_np, want_grad in zip(range(len(case_args)), grads[span],
                                              grads_np[span], want_grads):
            assert np.shape(got) == np.shape(case_args[k]), f"{case} gradient {k}: shape"
            assert_close(got, want_grad, **tol, what=f"{case} gradient {k} vs {case.oracle}")
            assert_close(got, got_np, rtol=rtol, atol=atol, what=f"{case} gradient {k}")
    assert_close(value, want_value, rtol=0, atol=slack, what=f"{family} value vs SymPy")
    # the same kernel on non-contiguous arguments (it takes contiguous copies)
    for layout in ("F", "strided"):
        moved = [with_layout(a, layout) if np.ndim(a) else a for a in args]
        if all(m is a for m, a in zip(moved, args)):
            continue
        value_l, grads_l = sg.value_and_grad(fn, argnums=argnums, backend="numba")(*moved)
        assert_close(value_l, value, rtol=1e-15, atol=0, what=f"{family} value, {layout}")
        for k, (got, want) in enumerate(zip(grads_l, grads)):
            assert_close(got, want, rtol=1e-15, atol=0, what=f"{family} gradient {k}, {layout}")


def test_every_primitive_of_the_table_runs_on_numba():
    """The budget (``cases.py``) cuts cases, never a primitive: each one that a case runs
    on Numba runs on Numba in CI, in a family kernel or in a case alone."""
    want = {p for case in TABLE if "numba" in case.backends for p in case.prims}
    got = {p for case in CASES if "numba" in case.backends for p in case.prims}
    got |= {p for family in FAMILIES for case in family.members for p in case.prims}
    assert want - got == set()
    assert len(want) > 100


def test_the_table_has_every_kind_of_shape_for_every_primitive():
    """0-d, 1-d, 2-d, size-1, empty and non-contiguous arguments, per primitive."""
    kinds: dict[str, set[str]] = {}
    numba_cases = {case.name for family in FAMILIES for case in family.members}
    for case in CASES:
        if case.fixed is not None or not case.prims:
            continue
        found = kinds.setdefault(case.prims[0], set())
        found |= {f"{len(s)}-d" for s in case.shapes if len(s) <= 2}
        found |= {"size-1" for s in case.shapes if 1 in s}
        found |= {"empty" for s in case.shapes if 0 in s}
        found |= {"non-contiguous" for a in case.args() if np.ndim(a) and
                  not a.flags.c_contiguous}
        if "numba" in case.backends or case.name in numba_cases:
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
