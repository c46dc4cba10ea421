"""``symgrad.testing.check_grad``: passes on right gradients, raises a table on wrong ones."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from symgrad.testing import (
    NAN_AT_STEP,
    SYMPY_MAX_ELEMENTS,
    GradReport,
    check_grad,
    relative_error,
)

from oracle import replaced_vjp

ROOT = Path(__file__).parent.parent
X = np.array([[0.3, -1.2, 0.8], [1.5, 0.1, -0.4]])


def loss(x, w):
    return np.mean(np.tanh(x * w) ** 2 + np.exp(-x))


def test_a_right_gradient_passes_with_a_report_per_argument():
    report = check_grad(loss, X, np.array([0.5, -2.0, 1.5]))
    assert isinstance(report, GradReport) and report.ok
    assert set(report.worst) == {"x", "w"}
    assert report.worst["x"] < 1e-5 and report.worst["w"] < 1e-5
    (x_sympy, x_fd), _ = (a.comparisons for a in report.arguments)
    assert x_sympy.reference == "SymPy" and x_sympy.error < 1e-12 and not x_sympy.skipped
    assert x_fd.reference == "finite differences" and 0 < x_fd.error < 1e-6
    text = str(report)
    assert text.splitlines()[0].startswith("check_grad of loss: ok")
    assert "x         (2, 3)" in text and "w         (3,)" in text


def test_argnums_gradient_and_static_arguments():
    f = lambda x, power, y: x ** power * y
    report = check_grad(f, X, 3, 2.0, gradient=np.ones((2, 3)) * 0.5, argnums=(0, -1),
                        backend="numpy")
    assert [a.name for a in report.arguments] == ["x", "y"]
    np.testing.assert_allclose(report.arguments[0].gradient, 0.5 * 3 * X ** 2 * 2.0)
    np.testing.assert_allclose(report.arguments[1].gradient, 0.5 * np.sum(X ** 3))


def test_a_wrong_gradient_raises_with_a_readable_table():
    # sin's VJP with the wrong sign: symgrad's gradient is wrong, SymPy's and the
    # finite differences are not (they never use the VJP rules)
    f = lambda x: np.sum(np.sin(x) * x)
    with replaced_vjp("sin", lambda g, ans, x: (-g * np.cos(x),)):
        with pytest.raises(AssertionError) as raised:
            check_grad(f, X, backend="numpy")
    lines = str(raised.value).strip().splitlines()
    title = "check_grad of <lambda>: GRADIENT MISMATCH; worst relative error per argument"
    assert lines[0] == title
    assert lines[1].split() == ["argument", "shape", "vs", "SymPy", "(rtol", "1e-09)", "vs",
                                "finite", "differences", "(rtol", "1e-05)"]
    assert lines[2].startswith("x") and lines[2].count("FAIL at [") == 2
    assert check_grad(f, X, backend="numpy").ok, "restored afterwards"


def test_only_one_reference_wrong_is_still_a_failure():
    """Finite differences straddling a kink disagree with the (right) gradient: a failure
    (abs(x - 1e-7) at x = 0: the gradient is -1, the central difference -0.1)."""
    with pytest.raises(AssertionError, match=r"n/a \(disabled\) +9.0e-01 FAIL at \[1\]"):
        check_grad(lambda x: np.sum(np.abs(x - 1e-7)), np.array([1.0, 0.0]), sympy=False,
                   backend="numpy")


def test_sympy_is_skipped_for_large_inputs():
    x = np.linspace(0.1, 1.0, SYMPY_MAX_ELEMENTS + 1)
    report = check_grad(lambda x: np.sum(np.log(x)), x, backend="numpy")
    (comparison, fd), = (a.comparisons for a in report.arguments)
    assert comparison.skipped.startswith("over") and fd.error < 1e-6
    assert "n/a (over" in str(report)


def test_sg_testing_is_reached_from_the_package_and_imported_on_first_use():
    """``sg.testing.check_grad`` after ``import symgrad``, as ``np.testing``; until then
    neither symgrad.testing nor SymPy is imported (a fresh process sees the imports)."""
    code = ("import sys, numpy as np, symgrad as sg\n"
            "loaded = lambda: [m for m in ('symgrad.testing', 'sympy') if m in sys.modules]\n"
            "print(loaded())\n"
            "report = sg.testing.check_grad(lambda x: np.sum(np.sin(x)), np.array([0.5, 1.0]),"
            " backend='numpy')\n"
            "print(loaded(), report.ok, sg.testing is sys.modules['symgrad.testing'])\n"
            "print(hasattr(sg, 'no_such_module'))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[]", "['symgrad.testing', 'sympy'] True True", "False"]


@pytest.mark.parametrize("got, want, either_sign, error", [
    ([2.0, 1e-9], [2.0, 0.0], None, 5e-10),           # over the largest |want|
    ([1e-12], [0.0], None, np.inf),                    # no scale and no floor
    (np.inf, np.inf, None, 0.0),
    (-np.inf, -np.inf, None, 0.0),
    (-np.inf, np.inf, None, np.inf),                   # signed infinities keep their sign
    (np.inf, 1e300, None, np.inf),
    (np.nan, np.nan, None, 0.0),                       # nan matches only nan
    (np.inf, np.nan, None, np.inf),
    (1.0, np.nan, None, np.inf),
    (np.nan, 1.0, None, np.inf),
    ([np.inf, -np.inf], [np.inf, np.inf], [True, True], 0.0),   # SymPy's zoo: either sign
    ([np.nan, 1.0], [np.inf, 1.0], [True, False], np.inf),      # but an infinity
    ([5.0, 1.0], [np.inf, 1.0], [True, False], np.inf),
    ([1.0, 2.0], [1.0], None, np.inf),                 # shapes differ
])
def test_relative_error_compares_infinities_as_infinities(got, want, either_sign, error):
    assert relative_error(got, want, either_sign=either_sign) == pytest.approx(error)


def test_relative_error_floor_and_where():
    assert relative_error([1e-9], [0.0], floor=1e-3) == pytest.approx(1e-6)
    assert relative_error([1.0, 7.0], [1.0, np.nan], where=[True, False]) == 0.0
    assert relative_error([1.0, 7.0], [1.0, 5.0], where=[True, False]) == 0.0


@pytest.mark.parametrize("f, x, gradient", [
    (lambda x: np.sqrt(x), 0.0, np.inf),
    (lambda x: -np.sqrt(x), 0.0, -np.inf),            # SymPy's zoo matches -inf too
    (lambda x: np.arcsin(x), 1.0, np.inf),
])
def test_an_infinite_gradient_is_not_checked_even_where_sympy_agrees(f, x, gradient):
    # SymPy's 1/0 agrees with the inf, but a check never confirms a value that is not
    # finite (issue 25, part 6): NOT CHECKED, and check_grad raises
    with pytest.raises(AssertionError) as raised:
        check_grad(f, x, backend="numpy")
    text = str(raised.value)
    assert "NOT CHECKED (no reference for x; x: symgrad gives 1 infinite of 1 elements" in text
    assert "GRADIENT MISMATCH" not in text and "FAIL" not in text


def test_a_nan_gradient_is_never_ok(monkeypatch):
    # log(1 + exp(800)) overflows: the function is inf (numpy's too) and its gradient nan;
    # central differences are nan as well (inf - inf), which once "agreed" with it
    f = lambda x: np.sum(np.log(1 + np.exp(x)))
    x = np.full(3, 800.0)
    with np.errstate(over="ignore"):
        assert np.isinf(f(x))
        with pytest.raises(AssertionError) as raised:  # SymPy says 1: a mismatch
            check_grad(f, x, backend="numpy")
        assert "GRADIENT MISMATCH" in str(raised.value) and "inf FAIL" in str(raised.value)
        with pytest.raises(AssertionError) as raised:  # no finite reference: not checked
            check_grad(f, x, backend="numpy", sympy=False)
        assert "NOT CHECKED (no reference for x; x: symgrad gives 3 nan of 3 elements: not " \
            "finite, so not confirmed)" in str(raised.value)
        with pytest.raises(AssertionError, match="NOT CHECKED .*symgrad gives 9 nan of 9"):
            check_grad(f, x, backend="numpy", sympy=False, order=2)   # the Hessian too


def test_not_finite_counts_what_is_not():
    from symgrad.testing import not_finite

    assert not_finite(np.array([1.0, -2.0])) == "" and not_finite(0.0) == ""
    assert not_finite(np.array([np.nan, -np.inf, 1.0])) == \
        "symgrad gives 1 nan and 1 infinite of 3 elements"


def test_elements_where_finite_differences_are_nan_are_left_out_and_said_so():
    # log(x) at 1e-7: x - h is negative, where log is nan; the gradient 1e7 is finite
    f = lambda x: np.sum(np.log(x) * np.array([1.0, 2.0]))
    report = check_grad(f, np.array([1e-7, 0.25]), backend="numpy")
    sympy, fd = report.arguments[0].comparisons
    assert sympy.error == 0.0 and fd.error < 1e-8
    assert f"(1 of 2 elements left out: {NAN_AT_STEP})" in str(report)


def test_a_wrong_gradient_next_to_an_infinite_one_still_fails():
    wrong = lambda g, ans, x: (g / ans,)  # twice sqrt's derivative: inf at 0 all the same
    with replaced_vjp("sqrt", wrong):
        with pytest.raises(AssertionError) as raised:
            check_grad(lambda x: np.sum(np.sqrt(x)), np.array([0.0, 0.25]), backend="numpy")
    assert str(raised.value).count("FAIL at [1]") == 2


def test_an_argument_no_reference_can_check_is_a_failure():
    with pytest.raises(AssertionError, match=r"NOT CHECKED \(no reference for x\)"):
        # log at 1e-7: finite differences step below 0, where log is nan; no SymPy
        check_grad(lambda x: np.log(x), 1e-7, sympy=False, backend="numpy")
