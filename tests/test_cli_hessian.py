"""``symgrad hessian`` and ``symgrad grad --jacobian`` (issue 15, "The command").

Values are compared with Hessians and Jacobians derived by hand and computed
here with numpy (``diag(p) - p pᵀ`` of logsumexp and softmax, ``Xᵀ diag(s(1 - s)) X``
of the logistic loss); printed formulas, rebuilt from the JSON ``srepr`` strings
(symgrad's own output, parsed by the test only), with SymPy's ``hessian`` and
``jacobian`` of the same function built here. Most tests call ``main`` in this
process, which is faster than a subprocess; a few run the real command.
"""

from __future__ import annotations

import json
import re
import time

import numpy as np
import pytest
import sympy as sp
from test_cli import ok, refused, symgrad

from symgrad.cli import main


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def text_of(capsys, *args: str) -> str:
    code, out, err = run(capsys, *args, "--format", "text", "--sympy-seconds", "3")
    assert code == 0 and err == "", (code, out, err)
    return out


def json_of(capsys, *args: str) -> dict:
    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} is not JSON")

    code, out, err = run(capsys, *args, "--format", "json", "--sympy-seconds", "3")
    assert code == 0 and err == "", (code, out, err)
    return json.loads(out, parse_constant=refuse)


def symbols(name: str, shape: tuple[int, ...]) -> np.ndarray:
    out = np.empty(shape, dtype=object)
    for idx in np.ndindex(*shape):
        out[idx] = sp.Symbol(f"{name}[{', '.join(map(str, idx))}]", real=True)
    return out


def rebuild(entry: dict, shape: tuple[int, ...]) -> np.ndarray:
    """A block's element expressions from its JSON formula entry: the pattern at each
    index (its Piecewise decided there), or the listed elements."""
    from sympy.parsing.sympy_parser import parse_expr

    out = np.empty(shape, dtype=object)
    if entry["pattern_srepr"] is None:
        for element in entry["elements"]:
            out[tuple(element["index"])] = parse_expr(element["srepr"])
        return out
    pattern = parse_expr(entry["pattern_srepr"])
    index = [sp.Symbol(c, integer=True) for c in entry["index"]]
    for idx in np.ndindex(*shape):
        e = pattern.subs(dict(zip(index, idx)))
        e = e.doit() if e.has(sp.Sum) else e  # a Σ written out, by SymPy
        out[idx] = e.xreplace({a: sp.Symbol(f"{a.base}[{', '.join(map(str, a.indices))}]",
                                            real=True) for a in e.atoms(sp.Indexed)})
    return out


def agree(got: np.ndarray, want: np.ndarray, point: dict) -> None:
    for idx in np.ndindex(*want.shape):
        a, b = sp.N(got[idx].xreplace(point), 30), sp.N(want[idx].xreplace(point), 30)
        assert abs(a - b) < 1e-25, (idx, got[idx], want[idx])


# ---------------------------------------------------------------------------
# formulas and values against independent Hessians


def test_a_separable_function_has_one_diagonal_pattern(capsys):
    out = text_of(capsys, "hessian", "sum(x**3)", "--shape", "x=3", "--at", "x=1,2,3")
    assert "d^2f/dx[i] dx[j] = Piecewise((6*x[i], Eq(i, j)), (0, True))    for i < 3, j < 3" \
        in out.splitlines()
    data = json_of(capsys, "hessian", "sum(x**3)", "--shape", "x=3", "--at", "x=1,2,3")
    np.testing.assert_array_equal(data["hessian"]["x"]["x"], np.diag([6.0, 12.0, 18.0]))


def test_blocks_per_pair_of_variables(capsys):
    x, y = np.array([0.1, 0.2, 0.3]), 2.0
    args = ("hessian", "sum(sin(x)*y)", "--shape", "x=3", "--at", "x=0.1,0.2,0.3", "--at", "y=2")
    data = json_of(capsys, *args)
    h = data["hessian"]
    np.testing.assert_allclose(h["x"]["x"], np.diag(-y * np.sin(x)), rtol=1e-15)
    np.testing.assert_allclose(h["x"]["y"], np.cos(x), rtol=1e-15)
    np.testing.assert_allclose(h["y"]["x"], np.cos(x), rtol=1e-15)
    assert h["y"]["y"] == 0.0
    assert data["formulas"]["x"]["y"]["pattern"] == "cos(x[i])"
    assert data["formulas"]["x"]["x"]["pattern"] == "Piecewise((-y*sin(x[i]), Eq(i, j)), (0, True))"
    lines = text_of(capsys, *args).splitlines()
    assert "d^2f/dx[i] dy = cos(x[i])    for i < 3" in lines
    assert "d^2f/dy dy = 0" in lines and "d^2f/dy dy = 0.0" in lines


def test_a_dense_hessian_against_numpy_and_sympy(capsys):
    # logsumexp: H = diag(p) - p p^T, p = softmax(x); every element reads differently
    at = np.array([0.1, 0.5, -0.3])
    data = json_of(capsys, "hessian", "log(sum(exp(x)))", "--shape", "x=3",
                   "--at", "x=0.1,0.5,-0.3")
    p = np.exp(at) / np.exp(at).sum()
    np.testing.assert_allclose(data["hessian"]["x"]["x"], np.diag(p) - np.outer(p, p),
                               rtol=1e-13, atol=1e-15)
    entry = data["formulas"]["x"]["x"]  # one pattern, with its sums as Σ (issue 29)
    assert "Sum(exp(x[k]), (k, 0, 2))" in entry["pattern"] and not entry["elements"]
    x = symbols("x", (3,))
    want = np.array(sp.hessian(sp.log(sum(sp.exp(s) for s in x)), list(x)))
    agree(rebuild(entry, (3, 3)), want, {s: sp.Float(v, 30) for s, v in zip(x, [0.3, -1, 2])})


def test_a_two_dimensional_variable(capsys):
    data = json_of(capsys, "hessian", "sum(x**3)", "--shape", "x=2,2", "--at", "x=1,2,3,4")
    want = np.zeros((2, 2, 2, 2))
    for i, j in np.ndindex(2, 2):
        want[i, j, i, j] = 6 * (2 * i + j + 1)
    np.testing.assert_array_equal(data["hessian"]["x"]["x"], want)
    entry = data["formulas"]["x"]["x"]
    assert entry["index"] == ["i", "j", "k", "m"]
    x = symbols("x", (2, 2))
    f = sum(s**3 for s in x.ravel())
    want = np.empty((2, 2, 2, 2), dtype=object)
    for idx in np.ndindex(*want.shape):
        want[idx] = sp.diff(f, x[idx[:2]], x[idx[2:]])
    agree(rebuild(entry, (2, 2, 2, 2)), want,
          {s: sp.Float(v, 30) for s, v in zip(x.ravel(), [0.5, -1, 2, 3])})


def test_a_file_target_logistic_loss(tmp_path, capsys):
    source = tmp_path / "model.py"
    source.write_text("import numpy as np\n\ndef loss(w, X):\n"
                      "    return np.sum(np.log1p(np.exp(X @ w)))\n")
    w, X = np.array([0.5, -0.25]), np.arange(1.0, 7.0).reshape(3, 2)
    data = json_of(capsys, "hessian", f"{source}:loss", "--shape", "w=2", "--shape", "X=3,2",
                   "--wrt", "w", "--at", "w=0.5,-0.25", "--at", "X=1,2,3,4,5,6", "--check")
    s = 1 / (1 + np.exp(-X @ w))
    np.testing.assert_allclose(data["hessian"]["w"]["w"], X.T @ np.diag(s * (1 - s)) @ X,
                               rtol=1e-13)
    assert list(data["hessian"]) == ["w"] and data["check"]["w,w"]["verdict"] == "ok"
    out = text_of(capsys, "hessian", f"{source}:loss", "--shape", "w=2", "--shape", "X=3,2",
                  "--wrt", "w")
    assert out.startswith(f"loss(w, X) from {source}    (w: 2, X: 3") and \
        "\nd^2loss/dw[0] dw[1] = Sum(" in out  # listed elements, each a Σ over the rows


def test_wrt_restricts_the_blocks(capsys):
    data = json_of(capsys, "hessian", "sum(x**2)*y", "--shape", "x=2", "--wrt", "x",
                   "--at", "x=1,2", "--at", "y=3")
    assert data["hessian"] == {"x": {"x": [[6.0, 0.0], [0.0, 6.0]]}}
    assert list(data["formulas"]) == ["x"] and list(data["formulas"]["x"]) == ["x"]


def test_latex(capsys):
    code, out, _ = run(capsys, "hessian", "sum(x**3)", "--shape", "x=2", "--format", "latex")
    assert code == 0
    assert r"\frac{\partial^2 f}{\partial x_{i} \partial x_{j}} = \begin{cases} 6 {x}_{i} " \
        r"& \text{for}\: i = j \\0 & \text{otherwise} \end{cases}    for i < 2, j < 2" in out


# ---------------------------------------------------------------------------
# the Jacobian


def test_jacobian_of_an_elementwise_function(capsys):
    x, y = np.array([0.1, 0.2, 0.3]), 2.0
    args = ("grad", "sin(x)*y", "--shape", "x=3", "--jacobian", "--at", "x=0.1,0.2,0.3",
            "--at", "y=2", "--check")
    data = json_of(capsys, *args)
    np.testing.assert_allclose(data["jacobian"]["x"], np.diag(y * np.cos(x)), rtol=1e-15)
    np.testing.assert_allclose(data["jacobian"]["y"], np.sin(x), rtol=1e-15)
    assert data["formulas"]["x"]["pattern"] == "Piecewise((y*cos(x[i]), Eq(i, j)), (0, True))"
    assert data["formulas"]["y"]["pattern"] == "sin(x[i])"
    assert {k: c["verdict"] for k, c in data["check"].items()} == {"x": "ok", "y": "ok"}
    lines = text_of(capsys, *args).splitlines()
    assert "df[i]/dx[j] = Piecewise((y*cos(x[i]), Eq(i, j)), (0, True))    for i < 3, j < 3" \
        in lines
    assert lines[-1].startswith("  df/dy: symgrad vs SymPy (50 digits) 0.00e+00 ok; ")


def test_jacobian_of_a_softmax_against_numpy_and_sympy(capsys):
    at = np.array([0.2, -1.0, 0.7])
    data = json_of(capsys, "grad", "exp(x)/sum(exp(x))", "--shape", "x=3", "--jacobian",
                   "--at", "x=0.2,-1,0.7", "--check")
    p = np.exp(at) / np.exp(at).sum()
    np.testing.assert_allclose(data["jacobian"]["x"], np.diag(p) - np.outer(p, p),
                               rtol=1e-13, atol=1e-15)
    assert data["check"]["x"]["ok"]
    x = symbols("x", (3,))
    total = sum(sp.exp(s) for s in x)
    want = np.array(sp.Matrix([sp.exp(s) / total for s in x]).jacobian(list(x)))
    agree(rebuild(data["formulas"]["x"], (3, 3)), want,
          {s: sp.Float(v, 30) for s, v in zip(x, [1, 0.5, -2])})


def test_jacobian_of_a_reduction_has_the_output_shape_first(capsys):
    data = json_of(capsys, "grad", "sum(x*x, axis=1)", "--shape", "x=2,3", "--jacobian",
                   "--at", "x=1,2,3,4,5,6")
    x = np.arange(1.0, 7.0).reshape(2, 3)
    want = np.zeros((2, 2, 3))
    want[0, 0], want[1, 1] = 2 * x[0], 2 * x[1]
    np.testing.assert_array_equal(data["jacobian"]["x"], want)


# ---------------------------------------------------------------------------
# --check: the verdict of grad, and a wrong Hessian that fails


@pytest.mark.parametrize("args", [
    ("hessian", "sum(sin(x)*y)", "--shape", "x=3", "--at", "x=0.1,0.2,0.3", "--at", "y=2"),
    ("hessian", "log(sum(exp(x)))", "--shape", "x=4", "--at", "x=0.1,0.5,-0.3,2"),
    ("hessian", "x**3 - 2*x*y + log(y)", "--at", "x=1.5", "--at", "y=0.5"),
    # SymPy's Derivative(floor(u), (u, 2)): before, nan, and a false MISMATCH
    ("hessian", "sum(floor(10*x)*x**2)", "--shape", "x=3", "--at", "x=0.55,1.45,2.35"),
    ("grad", "tanh(x)*y", "--shape", "x=2", "--at", "x=0.3,-2", "--at", "y=4", "--jacobian"),
], ids=lambda a: a[1])
def test_check_ok(args, capsys):
    code, out, _ = run(capsys, *args, "--check", "--format", "text", "--sympy-seconds", "5")
    rows = out.split("check at the --at point (worst relative error):\n")[1].splitlines()
    assert code == 0, out
    assert rows and all("symgrad vs SymPy (50 digits) 0.00e+00 ok" in row or
                        re.search(r"SymPy \(50 digits\) \d\.\d\de-1\d ok", row) for row in rows)


def test_check_fails_on_a_wrong_hessian(monkeypatch, capsys):
    from symgrad.cli import hessians as second

    right = second._values

    def wrong(*args):  # the block d2f/dx dx, 0.1% too large
        value, blocks = right(*args)
        return value, [m * 1.001 if m.ndim == 2 else m for m in blocks]

    monkeypatch.setattr(second, "_values", wrong)
    code, out, _ = run(capsys, "hessian", "sum(sin(x)*y)", "--shape", "x=3",
                       "--at", "x=0.1,0.2,0.3", "--at", "y=2", "--check", "--format", "text")
    assert code == 1
    rows = out.split("(worst relative error):\n")[1].splitlines()
    assert "d^2f/dx dx: symgrad vs SymPy (50 digits) 1.00e-03 MISMATCH; vs finite " \
        "differences 1.00e-03 MISMATCH" in rows[0]
    assert all(" ok; " in row for row in rows[1:])  # the other blocks were not touched


def test_a_mismatch_in_one_row_fails_the_block():
    # rows of a block are checked one at a time; one rule makes their verdict
    from symgrad.cli.checks import FDCheck
    from symgrad.cli.hessians import _combined
    from symgrad.testing import NAN_AT_STEP

    good, bad = FDCheck(1e-10, 3, 3), FDCheck(2e-3, 3, 3)
    unreliable = FDCheck(0.5, 3, 3, "their own error is about 1e+00")
    assert _combined([good, bad, unreliable], 9).mismatch
    assert _combined([good, bad, unreliable], 9).error == 2e-3
    assert _combined([good, unreliable], 6).status.startswith("unreliable: ")
    assert _combined([good, good], 6).ok
    nan_row = FDCheck(None, 3, 3, left_out=3, why_not=NAN_AT_STEP)
    both = _combined([good, nan_row], 6)
    assert both.ok and both.left_out == 3
    raised = FDCheck(None, 3, 3, why_not="calling the function a step away raised E")
    assert _combined([good, raised], 6).status == \
        "not compared: calling the function a step away raised E"


def test_sympy_second_derivatives_it_leaves_unevaluated_are_numbers():
    from symgrad.core.sympy_bridge import _numerically

    x = sp.Symbol("x", real=True)
    point = {x: sp.Float(0.3, 60)}
    d = sp.Derivative(sp.sin(x) ** 3 * sp.sign(sp.acos(x)), (x, 2))  # sign(acos(x)) is 1
    want = sp.diff(sp.sin(x) ** 3, x, 2).xreplace(point)
    assert abs(_numerically(d, point, 50) - want) < 1e-45
    assert _numerically(sp.Derivative(sp.floor(x) * x, (x, 2)), point, 50) == 0


def test_block_pattern():
    from symgrad.core.sympy_bridge import block_pattern, element_symbols

    x, w = element_symbols("x", (3,)), element_symbols("w", (2,))
    y = element_symbols("y", ())
    i, j = sp.symbols("i j", integer=True)
    X, W = sp.IndexedBase("x", real=True), sp.IndexedBase("w", real=True)
    outer = np.array([[a * b for b in w] for a in x])  # rows x, columns w
    assert block_pattern(outer, {"x": x, "w": w}, 1) == X[i] * W[j]
    assert block_pattern(np.array([y * s for s in x]), {"x": x, "y": y}, 1) == y * X[i]
    dense = np.array([[a + b + (a if a == b else 0) for b in x] for a in x])
    assert block_pattern(dense, {"x": x}, 1) == sp.Piecewise(
        (3 * X[i], sp.Eq(i, j)), (X[i] + X[j], True))
    first = np.array([[x[0] * a for b in x] for a in x])
    assert block_pattern(first, {"x": x}, 1) is None


# ---------------------------------------------------------------------------
# bounds, JSON, errors


def test_formulas_out_of_time_still_print_the_values(monkeypatch, capsys):
    from symgrad.cli import symbolic

    monkeypatch.setattr(symbolic, "_block_formulas", lambda *args: time.sleep(60))
    start = time.monotonic()
    code, out, _ = run(capsys, "hessian", "sum(x**3)", "--shape", "x=2", "--at", "x=1,2",
                       "--check", "--sympy-seconds", "1", "--format", "text")
    assert time.monotonic() - start < 10
    assert code == 0  # SymPy's check came first; finite differences confirm too
    assert "d^2f/dx dx: formulas omitted: timed out: SymPy's 1 s budget ran out" in out
    assert "d^2f/dx dx =\n[[ 6.  0.]\n [ 0. 12.]]" in out


def test_sympy_is_not_asked_for_a_large_hessian(capsys):
    code, out, _ = run(capsys, "hessian", "sum(sin(x))", "--shape", "x=30", "--at", "x=1",
                       "--check", "--format", "text")
    assert code == 0
    assert "formulas omitted: a value of the Hessian's graph has 900 elements; SymPy is " \
        "asked for at most 400" in out
    assert re.search(r"vs finite differences \d\.\d\de-\d\d ok$", out.splitlines()[-1])


def test_json_has_no_nan_or_infinity_and_shows_sympy(capsys):
    # sqrt'' at 0 is -inf, as SymPy's zoo; finite differences nan: a value that is not
    # finite is never confirmed (issue 25, part 6), so NOT CHECKED and exit 1
    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} is not JSON")

    code, out, err = run(capsys, "hessian", "sqrt(x)", "--at", "x=0", "--check", "--show",
                         "sympy", "--format", "json", "--sympy-seconds", "3")
    assert code == 1 and err == "", (code, out, err)
    data = json.loads(out, parse_constant=refuse)
    assert data["hessian"] == {"x": {"x": "-inf"}}
    check = data["check"]["x,x"]
    assert check["verdict"] == "NOT CHECKED" and check["sympy"] == 0.0
    assert check["not_finite"] == "symgrad gives 1 infinite of 1 elements"
    assert data["show"]["sympy"] == {"function": "sqrt(x)",
                                     "hessian": {"x": {"x": "-1/(4*x**(3/2))"}}}


def test_show_ir_and_code(capsys):
    out = text_of(capsys, "hessian", "sum(x**3)", "--shape", "x=2", "--show", "ir",
                  "--show", "code")
    assert "--- ir ---\nf(x: f64[2]) {\n  a: f64[2] = pow(x, 3.0)" in out
    assert "--- code ---\n# symgrad kernel" in out


@pytest.mark.parametrize("args,code,message", [
    (("hessian", "sin(x)*x", "--shape", "x=3"), 1,
     "hessian is for a scalar function, and f returns f64[3]; for the first derivatives of "
     "a vector function use symgrad grad --jacobian"),
    (("hessian", "x > 1"), 1, "the function returns bool[] values, which have no derivative"),
    (("grad", "x*x", "--shape", "x=2", "--jacobian", "--gradient", "1"), 2,
     "--jacobian and --gradient exclude each other"),
    (("hessian", "x*y", "--check"), 2, "--check needs a point: give --at for every variable"),
    (("hessian", "sum(x)", "--wrt", "z"), 2, "--wrt z: not a variable (variables: x)"),
    (("hessian", "sum(x)", "--shape", "x=5000"), 2,
     "the Hessian would have 25000000 elements; at most 10000000"),
    (("hessian", "x.real"), 2, "attribute access (only .T, the transpose) is not allowed: x.real"),
])
def test_errors_are_one_line(args, code, message, capsys):
    got, out, err = run(capsys, *args)
    assert got == code and out == ""
    assert len(err.splitlines()) == 1 and err.startswith(f"symgrad: error: {message}"), err


# ---------------------------------------------------------------------------
# the real command


def test_the_command_pretty_and_its_exit_codes():
    out = ok("hessian", "sum(sin(x)*y)", "--shape", "x=3", "--at", "x=0.1,0.2,0.3",
             "--at", "y=2", "--check", env={"PYTHONIOENCODING": "utf-8"}, real=True)
    assert "∂²f/∂x[i]∂y = cos(x[i])    for i < 3" in out
    assert "⎧-y⋅sin(x[i])  for i = j" in out
    assert "  ∂²f/∂y∂y: symgrad vs SymPy (50 digits) 0.00e+00 ok; vs finite differences " \
        "0.00e+00 ok" in out
    assert "d^2f/dx dx = -2.0" in ok("hessian", "-x*x", "--at", "x=3", "--format", "text")
    line = refused(symgrad("hessian", "x*x", "--shape", "x=2", real=True), code=1)
    assert line.endswith("use symgrad grad --jacobian")
    helped = ok("hessian", "--help")
    assert 'data["hessian"]["x"]["y"]' in helped and "symgrad grad --jacobian" in helped
