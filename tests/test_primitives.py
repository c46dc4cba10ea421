"""Every primitive against SymPy at 50 digits, plain numpy, and the other backend."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import symgrad as sg

from cases import CASES, Case
from oracle import assert_close, rng_for, sympy_gradient, sympy_value

BACKENDS = ["numba", "numpy"]


@functools.cache
def _problem(case: Case):
    """Arguments, cotangent (None for scalar outputs) and SymPy's answers for ``case``."""
    args = case.args()
    out = np.asarray(case.fn(*args))
    ct = None if out.ndim == 0 else rng_for(case.name + "/ct").uniform(-1, 1, out.shape)
    value = sympy_value(case.fn, *args)
    grads = sympy_gradient(case.fn, args, ct)
    return args, ct, out, value, grads


def _run(case: Case, backend: str):
    args, ct, *_ = _problem(case)
    argnums = tuple(range(len(args)))
    f = sg.value_and_grad(case.fn, argnums=argnums, backend=backend)
    return f(*args, gradient=ct)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_value_and_gradient_match_sympy(case: Case, backend: str):
    args, ct, numpy_out, want_value, want_grads = _problem(case)
    value, grads = _run(case, backend)
    assert_close(value, want_value, what=f"{case} value vs SymPy")
    assert_close(value, numpy_out, what=f"{case} value vs numpy")
    assert len(grads) == len(args)
    for k, (got, want) in enumerate(zip(grads, want_grads)):
        assert np.shape(got) == np.shape(args[k]), f"gradient {k} has the argument's shape"
        assert_close(got, want, what=f"{case} gradient {k} vs SymPy")


@pytest.mark.parametrize("case", CASES, ids=str)
def test_backends_agree(case: Case):
    value_nb, grads_nb = _run(case, "numba")
    value_np, grads_np = _run(case, "numpy")
    assert_close(value_nb, value_np, rtol=1e-14, atol=1e-15, what="value")
    for a, b in zip(grads_nb, grads_np):
        assert_close(a, b, rtol=1e-14, atol=1e-15, what="gradient")
