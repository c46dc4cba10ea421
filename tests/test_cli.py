"""The ``symgrad`` command: ``main(argv)`` in this process, and the real command.

Most tests run the command in this process (``symgrad()``: ``main`` with its own
stdout and stderr, working directory, environment and warnings filters, the exit
status from its return or ``SystemExit``), which spares each test a Python start-up
and the imports of numpy, SymPy and Numba. The entry point itself runs as a
subprocess of the checkout under test (``python -m symgrad``, with this process's
environment, so PYTHONPATH picks the same checkout) where it is what is tested: the
seed example, exit codes and one-line refusals, imports (``-X importtime``), the
environment (PATH), hostile input, and in the other CLI files signals and pipes
(``command()``, or ``symgrad(..., real=True)``).

Printed gradient formulas are compared
with ``sympy.diff`` of the same function built here with SymPy; the JSON
output carries ``srepr`` strings, which the test (only the test) rebuilds
with SymPy's parser: they are symgrad's own output, not user text.
"""

from __future__ import annotations

import contextlib
import gc
import io
import json
import locale
import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from oracle import replaced_vjp

ROOT = Path(__file__).parent.parent


def command(*args: str, cwd: Path | None = None, env: dict | None = None,
            python: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """``python -m symgrad ARGS``, the real command, as a subprocess."""
    return subprocess.run([sys.executable, *python, "-m", "symgrad", *args], cwd=cwd or ROOT,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


class _Stream(io.StringIO):
    """A captured stdout or stderr with the encoding the real command's pipe would have."""

    def __init__(self, encoding: str) -> None:
        super().__init__()
        self._encoding = encoding

    @property
    def encoding(self) -> str:
        return self._encoding


#: what Python starts with (``python -m symgrad`` shows what these leave through)
_DEFAULT_WARNINGS = [("ignore", DeprecationWarning), ("ignore", PendingDeprecationWarning),
                     ("ignore", ImportWarning), ("ignore", ResourceWarning)]
#: variables that act at the start-up of Python only: no meaning in this process
_START_UP = {"PYTHONPATH", "PYTHONIOENCODING", "PYTHONDONTWRITEBYTECODE"}


def symgrad(*args: str, cwd: Path | None = None, env: dict | None = None,
            python: tuple[str, ...] = (), real: bool = False) -> subprocess.CompletedProcess:
    """``symgrad ARGS`` as ``main(ARGS)`` in this process (the real command with
    ``real=True`` or Python options): the exit status, stdout and stderr it would
    have, with warnings printed on stderr as a fresh Python prints them (pytest's
    own capture of warnings would hide them)."""
    if real or python:
        return command(*args, cwd=cwd, env=env, python=python)
    from symgrad.cli import main

    encoding = (env or {}).get("PYTHONIOENCODING") or locale.getpreferredencoding(False)
    out, err = _Stream(encoding), _Stream(encoding)
    changed = {k: v for k, v in (env or {}).items() if k not in _START_UP}
    saved = {k: os.environ.get(k) for k in changed}

    def show(message, category, filename, lineno, file=None, line=None):
        err.write(warnings.formatwarning(message, category, filename, lineno, line))

    here = os.getcwd()
    try:
        os.environ.update(changed)
        os.chdir(cwd or ROOT)
        with warnings.catch_warnings(), contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err):
            warnings.resetwarnings()
            for action, category in _DEFAULT_WARNINGS:
                warnings.simplefilter(action, category)
            warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")
            # this test process's own state, not the command's: JAX (imported by other
            # tests in this worker) warns at every fork, which a real `symgrad` never sees
            warnings.filterwarnings("ignore", message=r"os\.fork\(\) was called",
                                    category=RuntimeWarning)
            warnings.showwarning = show
            try:
                code = main(list(args))
            except SystemExit as e:  # argparse: --help, and its usage errors
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        os.chdir(here)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return subprocess.CompletedProcess([sys.executable, "-m", "symgrad", *args], code,
                                       out.getvalue(), err.getvalue())


def ok(*args: str, **kw) -> str:
    done = symgrad(*args, **kw)
    assert done.returncode == 0, done.stderr
    return done.stdout


def refused(done: subprocess.CompletedProcess, code: int = 2) -> str:
    """The one ``symgrad: error:`` line of a refusal (nothing on stdout)."""
    assert done.returncode == code, (done.returncode, done.stdout, done.stderr)
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("symgrad: error: "), done.stderr
    return lines[0]


# ---------------------------------------------------------------------------
# the seed examples


def test_seed_mean_square_formula_and_values():
    out = ok("grad", "mean(3*(x+2)**2)", "--wrt", "x", "--shape", "x=2,2", "--at", "x=1",
             "--format", "text", real=True)  # the README's example, as the user runs it
    assert "df/dx[i, j] = 3*(x[i, j] + 2)/2    for i < 2, j < 2" in out.splitlines()
    assert "f = 27.0" in out
    assert "df/dx =\n[[4.5 4.5]\n [4.5 4.5]]" in out


def test_seed_mean_square_pretty_by_default():
    out = ok("grad", "mean(3*(x+2)**2)", "--wrt", "x", "--shape", "x=2,2", "--at", "x=1",
             env={"PYTHONIOENCODING": "utf-8"})
    assert "3⋅(x[i, j] + 2)" in out and "∂f/∂x[i, j] =" in out
    assert "[[4.5 4.5]\n [4.5 4.5]]" in out


def test_seed_vector_output_with_gradient():
    out = ok("grad", "x*x", "--wrt", "x", "--shape", "x=5", "--at", "x=1,2,3,4,5",
             "--gradient", "5", "--format", "text")
    assert "dL/dx = [10. 20. 30. 40. 50.]" in out.splitlines()
    assert "dL/dx[i] = 10*x[i]    for i < 5" in out.splitlines()


def test_vector_output_without_gradient_is_the_scalar_output_error():
    done = symgrad("grad", "x*x", "--shape", "x=5", "--at", "x=1,2,3,4,5")
    line = refused(done, code=1)
    assert "grad can be implicitly created only for scalar outputs" in line
    assert "--gradient" in line


# ---------------------------------------------------------------------------
# printed formulas against sympy.diff of the same function built with SymPy

def _x(n: int) -> list:
    return [sp.Symbol(f"x[{i}]", real=True) for i in range(n)]


Y = sp.Symbol("y", real=True)
FORMULAS = [  # (expression, --shape options, SymPy function of the element symbols)
    ("sum(sin(x)*y)", ["x=3"], lambda x, y: sum(sp.sin(xi) * y for xi in x)),
    ("mean(exp(x)/(1+x**2)) + y", ["x=4"],
     lambda x, y: sum(sp.exp(xi) / (1 + xi**2) for xi in x) / 4 + y),
    ("x**3 - 2*x*y + log(y)", [], lambda x, y: x**3 - 2 * x * y + sp.log(y)),
    ("sum(sqrt(x*x + y) * tanh(x))", ["x=2"],
     lambda x, y: sum(sp.sqrt(xi * xi + y) * sp.tanh(xi) for xi in x)),
    ("prod(x) * y", ["x=3"], lambda x, y: sp.Mul(*x) * y),  # no common pattern: per element
]


def _rebuild(entry: dict, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """Element expressions from the JSON ``srepr`` strings, over the symbols ``x[0]``..."""
    from sympy.parsing.sympy_parser import parse_expr

    out = np.empty(shape, dtype=object)
    if entry["pattern_srepr"] is not None:
        pattern = parse_expr(entry["pattern_srepr"])
        index = [sp.Symbol(c, integer=True) for c in entry["index"]]
        for idx in np.ndindex(*shape):
            elements = {}
            for e in pattern.atoms(sp.Indexed):
                at = tuple(int(a.subs(dict(zip(index, idx)))) for a in e.indices)
                elements[e] = sp.Symbol(f"{e.base}[{', '.join(map(str, at))}]", real=True)
            out[idx] = pattern.xreplace(elements)
    else:
        for element in entry["elements"]:
            out[tuple(element["index"])] = parse_expr(element["srepr"])
    return out


@pytest.mark.parametrize("text,shapes,build", FORMULAS, ids=[f[0] for f in FORMULAS])
def test_printed_formula_matches_sympy_diff(text, shapes, build):
    shape = tuple(int(d) for d in shapes[0].split("=")[1].split(",")) if shapes else ()
    args = ["grad", text, "--format", "json", "--expand"]  # symgrad's own per element
    for s in shapes:
        args += ["--shape", s]
    data = json.loads(ok(*args))
    x = np.array(_x(int(np.prod(shape)))).reshape(shape) if shape else sp.Symbol("x", real=True)
    f = build(list(x.ravel()) if shape else x, Y)
    rng = np.random.default_rng(len(text))
    points = [{s: sp.Float(v, 30) for s, v in zip([*np.ravel(x), Y], rng.uniform(0.5, 2, 8))}
              for _ in range(3)]
    for name, symbols in (("x", x), ("y", Y)):
        got = _rebuild(data["formulas"][name], name, shape if name == "x" else ())
        for idx in np.ndindex(*np.shape(symbols)):
            want = sp.diff(f, np.asarray(symbols, dtype=object)[idx])
            for point in points:
                a, b = got[idx].evalf(30, subs=point), want.evalf(30, subs=point)
                assert abs(a - b) <= 1e-25 * max(1, abs(b)), (name, idx, got[idx], want)
    if text.startswith("prod"):
        assert data["formulas"]["x"]["pattern"] is None
        assert len(data["formulas"]["x"]["elements"]) == 3
    else:
        assert data["formulas"]["x"]["pattern"] is not None


# ---------------------------------------------------------------------------
# each option


def test_latex_format():
    out = ok("grad", "mean(3*(x+2)**2)", "--shape", "x=2,2", "--format", "latex")
    assert r"\frac{\partial f}{\partial x_{i,j}} = \frac{3 \left({x}_{i,j} + 2\right)}{2}" in out


def test_json_format_values():
    data = json.loads(ok("grad", "sum(x*y)", "--shape", "x=2", "--at", "x=1,2", "--at", "y=3",
                         "--format", "json"))
    assert data["wrt"] == ["x", "y"] and data["variables"] == {"x": [2], "y": []}
    assert data["value"] == 9.0 and data["grad"] == {"x": [3.0, 3.0], "y": 3.0}
    # the textbook formulas (a sum over x is sum(x) whatever its size), and with
    # --expand symgrad's per-element ones, sums written out
    assert data["formulas"]["x"]["matrix"] == "y" and data["formulas"]["y"]["matrix"] == \
        "sum(x)"
    data = json.loads(ok("grad", "sum(x*y)", "--shape", "x=2", "--format", "json", "--expand"))
    assert data["formulas"]["x"]["pattern"] == "y" and data["formulas"]["y"]["pattern"] == \
        "x[0] + x[1]"


def test_wrt_selects_variables_and_at_takes_c_order_values():
    data = json.loads(ok("grad", "sum(x*x*y)", "--wrt", "y", "--shape", "x=2,2",
                         "--at", "x=1,2,3,4", "--at", "y=2", "--format", "json"))
    assert data["wrt"] == ["y"] and list(data["grad"]) == ["y"]
    assert data["grad"]["y"] == 30.0 and data["at"]["x"] == [[1.0, 2.0], [3.0, 4.0]]


def test_gradient_with_all_values():
    data = json.loads(ok("grad", "x*y", "--shape", "x=3", "--at", "x=1,2,3", "--at", "y=2",
                         "--gradient", "1,0,-1", "--format", "json"))
    assert data["grad"] == {"x": [2.0, 0.0, -2.0], "y": -2.0}
    assert data["formulas"]["x"]["pattern"] is None  # the cotangent differs per element


def test_show_ir_code_sympy():
    out = ok("grad", "sum(sin(x))", "--shape", "x=3", "--show", "ir", "--show", "code",
             "--show", "sympy", "--format", "text")
    ir = out.split("--- ir ---")[1]
    assert ir.count("f(x: f64[3]) {") == 2 and "a: f64[3] = sin(x)" in ir
    assert "# grad of: a: f64[3] = sin(x)" in ir
    assert "@njit(cache=True" in out and "grad_x[i0] = np.cos(x[i0])" in out
    assert "df/dx = [cos(x[0]), cos(x[1]), cos(x[2])]" in out.split("--- sympy ---")[1]


def assert_check_passes(out: str, variables: int, fd_error: float) -> None:
    """Each variable's --check row: ok against SymPy (to 1e-14) and finite differences."""
    rows = [line for line in out.splitlines() if "symgrad vs SymPy" in line]
    assert len(rows) == variables
    for row in rows:
        errors = [float(e) for e in re.findall(r"(\d\.\d\de[-+]\d+) ok", row)]
        assert len(errors) == 2 and errors[0] < 1e-14 and errors[1] < fd_error, row


def test_check_reports_worst_errors():
    out = ok("grad", "sum(sin(x)*y)", "--shape", "x=3", "--at", "x=0.1,0.2,0.3", "--at", "y=2",
             "--check", "--format", "text")
    assert_check_passes(out, 2, 1e-8)


def test_stable_and_two_argument_functions_check_against_sympy():
    text = ("sum(log_softmax(x)*y) + logsumexp(x, axis=0) + sum(clip(x, 0, 1)*softplus(y))"
            " + sum(hypot(x, y) + xlogy(y, sigmoid(x)) + relu(x)*arctan2(y, 2))")
    out = ok("grad", text, "--shape", "x=3", "--shape", "y=3", "--at", "x=0.5,2,-1",
             "--at", "y=1,0.5,2", "--check", "--format", "text")
    assert_check_passes(out, 2, 1e-7)


def test_check_says_finite_differences_cannot_follow_a_jump():
    # at the jump of where(x > 1, 2*x, 0), symgrad and SymPy say 0, a central difference 1e6;
    # with half the step it says 2e6: its own error explains the disagreement
    done = symgrad("grad", "where(x > 1, 2*x, 0)", "--at", "x=1", "--check", "--format", "text")
    assert done.returncode == 0, done.stdout
    assert "SymPy (50 digits) 0.00e+00 ok" in done.stdout and "MISMATCH" not in done.stdout
    assert "vs finite differences 1.00e+00, unreliable here" in done.stdout


def test_check_fails_on_a_wrong_gradient(monkeypatch, capsys):
    from symgrad.cli import command as cli

    right = cli._call
    monkeypatch.setattr(cli, "_call", lambda g, at, ct: (lambda v, gs: (v, tuple(
        1.001 * x for x in gs)))(*right(g, at, ct)))
    assert cli.main(["grad", "sum(sin(x))", "--shape", "x=3", "--at", "x=0.1,0.2,0.3",
                     "--check", "--format", "text"]) == 1
    row = capsys.readouterr().out.splitlines()[-1]
    assert "SymPy (50 digits) 1.00e-03 MISMATCH" in row
    assert "finite differences 1.00e-03 MISMATCH" in row


@pytest.mark.parametrize("args", [("sqrt(x)", "--at", "x=0"),
                                  ("0 - sqrt(x)", "--at", "x=0"),     # SymPy's zoo: any sign
                                  ("sum(sqrt(x))", "--shape", "x=2", "--at", "x=0,0.25")])
def test_check_of_an_infinite_gradient_is_not_checked(args, capsys):
    # sqrt'(0) is 1/0: SymPy's zoo agrees with the inf (no MISMATCH), but a check never
    # confirms a value that is not finite (issue 25, part 6): NOT CHECKED, exit 1
    from symgrad.cli import command as cli

    assert cli.main(["grad", *args, "--check", "--format", "text"]) == 1
    row, = (line for line in capsys.readouterr().out.splitlines() if "symgrad vs SymPy" in line)
    assert "SymPy (50 digits) 0.00e+00, not confirmed: symgrad's value is not finite" in row
    assert "MISMATCH" not in row and " ok" not in row, row
    assert "NOT CHECKED: nothing confirmed this gradient (symgrad gives 1 infinite of" in row


NOT_FINITE = {  # issue 25's example: log(1 + exp(800)) overflows, the gradient is nan
    "grad": ["grad", "sum(log(1+exp(x)))", "--shape", "x=500", "--at", "x=800"],
    "grad-sympy": ["grad", "sum(log(1+exp(x)))", "--shape", "x=3", "--at", "x=800"],
    "hessian": ["hessian", "sum(log(1+exp(x)))", "--shape", "x=3", "--at", "x=800",
                "--sympy-seconds", "0.001"],                     # SymPy runs out of time
    "hessian-sympy": ["hessian", "sum(log(1+exp(x)))", "--shape", "x=3", "--at", "x=800"],
    "jacobian": ["grad", "log(1+exp(x))", "--shape", "x=3", "--at", "x=800", "--jacobian"],
}


@pytest.mark.parametrize("fmt", ["pretty", "text", "latex", "json"])
@pytest.mark.parametrize("path", sorted(NOT_FINITE))
def test_check_never_confirms_a_value_that_is_not_finite(path, fmt, capsys):
    """Finite differences of the overflowing function are nan too (inf - inf), which once
    matched the nan gradient: "0.00e+00 ok", exit 0. Now NOT CHECKED where no reference
    is finite, a MISMATCH where SymPy's is (1 for the gradient, 0 for the Hessian),
    with the reason, exit 1: every command and format."""
    from symgrad.cli import command as cli

    args = NOT_FINITE[path]
    with np.errstate(over="ignore", invalid="ignore"):
        assert cli.main([*args, "--check", "--format", fmt]) == 1
    out = capsys.readouterr().out
    compared = path not in ("grad", "hessian")  # SymPy: at most 400 values, in time
    if fmt == "json":
        (check,) = json.loads(out)["check"].values()
        assert check["verdict"] == ("MISMATCH" if compared else "NOT CHECKED")
        assert not check["ok"] and check["not_finite"].startswith("symgrad gives ")
        assert check["sympy_status"] == "mismatch" if compared else \
            check["sympy_status"].startswith("not compared")
        return
    row, = (line for line in out.splitlines() if "symgrad vs SymPy" in line)
    assert " ok" not in row, row
    if compared:
        assert "inf MISMATCH" in row and " nan of " in row and ": not finite" in row, row
    else:
        assert "NOT CHECKED: nothing confirmed this" in row and " nan of " in row, row


def test_check_of_a_wrong_gradient_beside_an_infinite_one_fails(capsys):
    from symgrad.cli import command as cli

    wrong_sign = lambda g, ans, x: (-g / (2 * ans),)  # -inf at 0: zoo cannot tell
    with replaced_vjp("sqrt", wrong_sign):
        code = cli.main(["grad", "sum(sqrt(x))", "--shape", "x=2", "--at", "x=0,0.25",
                         "--check", "--format", "text"])
    row, = (line for line in capsys.readouterr().out.splitlines() if "vs SymPy" in line)
    assert code == 1 and row.count("MISMATCH") == 2, row


def test_one_rule_decides_a_checked_variable():
    # a mismatch fails; else one confirming comparison passes; else NOT CHECKED (exit 1)
    from symgrad.cli.checks import FDCheck, SymPyCheck, verdict

    agrees, disagrees = SymPyCheck(0.0), SymPyCheck(1e-3)
    timed_out = SymPyCheck(None, "timed out")
    fd_agrees, fd_disagrees = FDCheck(1e-9, 3, 3), FDCheck(1e-3, 3, 3)
    unreliable = FDCheck(0.5, 3, 3, "their own error is about 1e+00")
    nan_everywhere = FDCheck(None, 3, 3, left_out=3, why_not="f is nan at x - h or x + h")
    assert verdict(agrees, unreliable) == verdict(timed_out, fd_agrees) == "ok"
    assert verdict(agrees, nan_everywhere) == "ok"
    assert verdict(disagrees, fd_agrees) == verdict(agrees, fd_disagrees) == "MISMATCH"
    assert verdict(disagrees, unreliable) == verdict(timed_out, fd_disagrees) == "MISMATCH"
    assert verdict(timed_out, unreliable) == verdict(timed_out, nan_everywhere) == "NOT CHECKED"
    assert unreliable.status.startswith("unreliable: ") and not unreliable.mismatch
    assert nan_everywhere.status == "not compared: f is nan at x - h or x + h"
    # a value that is not finite: never ok, whatever agrees with it; still a mismatch
    why = "symgrad gives 1 nan of 3 elements"
    nan_agrees, fd_nan_agrees = SymPyCheck(0.0, not_finite=why), FDCheck(0.0, 3, 3, not_finite=why)
    assert verdict(nan_agrees, fd_nan_agrees) == verdict(nan_agrees, unreliable) == "NOT CHECKED"
    assert verdict(nan_agrees, FDCheck(1.0, 3, 3, not_finite=why)) == "MISMATCH"
    assert nan_agrees.status == fd_nan_agrees.status == f"not confirmed: {why}"


def test_jit_computes_with_the_compiled_kernel():
    data = json.loads(ok("grad", "x*x", "--shape", "x=2", "--at", "x=1,2", "--gradient", "5",
                         "--jit", "--format", "json"))
    assert data["grad"] == {"x": [10.0, 20.0]}


def test_file_func(tmp_path):
    source = tmp_path / "model.py"
    source.write_text("import numpy as np\n\n"
                      "def loss(w, b):\n    return np.sum((w * 2.0 + b) ** 2)\n")
    data = json.loads(ok("grad", f"{source}:loss", "--shape", "w=2", "--at", "w=1,2",
                         "--at", "b=0.5", "--show", "code", "--format", "json"))
    assert data["grad"] == {"w": [10.0, 18.0], "b": 14.0}
    assert data["formulas"]["w"]["pattern"] == "4*(b + 2*w[i])"
    assert "def loss(w, b):" in data["show"]["code"]
    line = refused(symgrad("grad", f"{source}:nothing"))
    assert "defines no function nothing" in line


def test_file_func_derivatives_are_named_after_the_function(tmp_path):
    source = tmp_path / "model.py"
    source.write_text("import numpy as np\n\n"
                      "def loss(w, b):\n    return np.sum((w * 2.0 + b) ** 2)\n\n"
                      "def scaled(w):\n    return w * 2.0\n")
    lines = ok("grad", f"{source}:loss", "--shape", "w=2", "--at", "w=1,2", "--at", "b=0.5",
               "--format", "text").splitlines()
    assert "dloss/dw[i] = 4*(b + 2*w[i])    for i < 2" in lines
    assert {"loss = 26.5", "dloss/dw = [10. 18.]", "dloss/db = 14.0"} <= set(lines)
    assert not any(line.startswith(("df/", "f = ")) for line in lines)
    latex = ok("grad", f"{source}:loss", "--shape", "w=2", "--format", "latex")
    assert r"\frac{\partial \mathrm{loss}}{\partial b} = " in latex
    lines = ok("grad", f"{source}:scaled", "--shape", "w=2", "--at", "w=1,2", "--gradient", "1",
               "--format", "text").splitlines()
    assert "L = sum(scaled * gradient), gradient = 1 everywhere" in lines
    assert {"scaled = [2. 4.]", "dL/dw = [2. 2.]"} <= set(lines)


def test_help_says_the_file_is_imported():
    out = ok("grad", "--help")
    assert "IMPORTS AND RUNS FILE.py" in out and "--check" in out


@pytest.mark.parametrize("args", [["--help"], ["grad", "--help"], ["graph", "--help"]])
def test_help_imports_neither_numba_nor_sympy(args):
    done = symgrad(*args, python=("-X", "importtime"))
    assert done.returncode == 0
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines()}
    assert not {m for m in imported if m.split(".")[0] in ("numba", "sympy")}


def test_one_shot_values_do_not_import_numba():
    """... and the command, run from the command line (``main()`` reading ``sys.argv``),
    leaves what is alive to the system: its exit does not collect it (0.3-0.6 s of CPU
    with SymPy loaded; symgrad.core.teardown)."""
    code = ("import gc, sys; from symgrad.cli import main; "
            "sys.argv = ['symgrad', 'grad', 'x*x', '--shape', 'x=2', '--at', 'x=1', "
            "'--gradient', '1']; main(); "
            "print('numba' in sys.modules, gc.get_freeze_count() > 1000)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120, env={**os.environ})
    assert done.stdout.splitlines()[-1] == "False True", done.stdout + done.stderr


def test_main_called_with_arguments_leaves_the_garbage_collector_alone():
    frozen = gc.get_freeze_count()
    assert symgrad("grad", "x*x", "--shape", "x=2", "--at", "x=1", "--gradient", "1",
                   "--format", "text").returncode == 0
    assert gc.get_freeze_count() == frozen


@pytest.mark.parametrize("args,message", [
    (["--shape", "y=2"], "y is not a variable"),
    (["--shape", "x=0"], "positive dimensions"),
    (["--shape", "x=2", "--at", "x=1,2,3"], "3 values for shape (2,)"),
    (["--at", "x=one"], "'one' is not a number"),
    (["--wrt", "z"], "--wrt z: not a variable"),
    (["--format", "html"], "invalid choice: 'html'"),
    (["--check"], "--check needs a point"),
])
def test_bad_options_are_one_line_refusals(args, message):
    assert message in refused(symgrad("grad", "sum(x)", *args))


@pytest.mark.parametrize("text,args,message", [
    # a broadcast that would allocate 10**10 elements is refused before anything runs
    ("sum(x*y)", ["--shape", "x=100000,1", "--shape", "y=1,100000", "--at", "x=1", "--at",
                  "y=1"], "builds a value of 10000000000 elements"),
    ("x*x", ["--shape", "x=2", "--gradient", "nan", "--at", "x=1"],
     "--gradient takes finite numbers"),
    ("var(x, ddof=(1, 2))", ["--shape", "x=3"], "ddof= takes a small non-negative integer"),
])
def test_resource_and_value_refusals(text, args, message):
    assert message in refused(symgrad("grad", text, *args))


def test_json_writes_non_finite_numbers_as_strings():
    data = json.loads(ok("grad", "sqrt(x)", "--at", "x=0", "--format", "json"))
    assert data["value"] == 0.0 and data["grad"] == {"x": "inf"}


@pytest.mark.parametrize("seconds", [0.001, 0.2])  # the deadline in tracing, or in SymPy
def test_formulas_that_sympy_cannot_build_in_time_are_omitted(seconds, capsys):
    from symgrad.cli import command as cli

    assert cli.main(["grad", "prod(x)", "--shape", "x=30", "--format", "text",
                     "--sympy-seconds", str(seconds)]) == 0
    assert (f"df/dx: formulas omitted: timed out: SymPy's {seconds:g} s budget ran out "
            "(--sympy-seconds S raises it)") in capsys.readouterr().out


# ---------------------------------------------------------------------------
# hostile expressions: refused with exit code 2, one line, and nothing done

HOSTILE = {  # in this process; REAL_HOSTILE as subprocesses too
    "attribute": "x.__class__",
    "dunder name": "__builtins__",
    "import": "__import__('os').system('touch CANARY')",
    "lambda": "(lambda: __import__('os').system('touch CANARY'))()",
    "comprehension": "[__import__('os').system('touch CANARY') for a in x]",
    "huge exponent": "2**10**10",
    "deep calls": "exp(" * 60 + "x" + ")" * 60,
    "deep parens": "(" * 300 + "x" + ")" * 300,
    "cyrillic e": "\u0435xp(x)",
    "string": "'touch CANARY'",
    "subscript": "x[y]",
    "starred": "sum(*x)",
    "walrus": "(y := x)",
}
#: the real command, exit status 2 and nothing run, for code that would write a file
REAL_HOSTILE = ("import", "lambda")
MORE_HOSTILE = {  # the same refusals, run in this process with main() directly
    "open": "open('CANARY', 'w')",
    "eval": "eval('1')",
    "subclasses": "x.__class__.__base__.__subclasses__()",
    "generator": "sum(open('CANARY', 'w') for a in x)",
    "tower": "9**9**9**9",
    "huge constant": "x*1e400",
    "deep unary": "x*" + "-" * 500 + "x",
    "long": "+".join(["x"] * 600),
    "fullwidth": "\uff58 * 2",
    "double star": "sum(**x)",
    "if-else": "x if x > 0 else 0",
    "and": "x > 0 and x",
    "keyword": "sum(x, out=x)",
    "statement": "x; import os",
    "f-string": "f'{x}'",
    "bytes": "b'x' * 2",
}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_expression_is_refused(name, tmp_path):
    done = symgrad("grad", HOSTILE[name], "--at", "x=1", "--check", "--show", "code",
                   cwd=tmp_path, real=name in REAL_HOSTILE,
                   env={"PYTHONPATH": os.environ.get("PYTHONPATH", "") or str(ROOT)})
    line = refused(done)
    assert len(line) < 400
    assert list(tmp_path.iterdir()) == []  # no CANARY, nothing else


@pytest.mark.parametrize("text", MORE_HOSTILE.values(), ids=MORE_HOSTILE.keys())
def test_more_hostile_expressions_are_refused(text, tmp_path, monkeypatch, capsys):
    from symgrad.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["grad", text, "--at", "x=1", "--check", "--show", "code"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and err.startswith("symgrad: error: ")
    assert list(tmp_path.iterdir()) == []


def test_refusal_names_the_offending_part():
    assert refused(symgrad("grad", "x + y.real")).endswith(
        "attribute access (only .T, the transpose) is not allowed: y.real")
    assert "U+0435 CYRILLIC SMALL LETTER IE" in refused(symgrad("grad", "\u0435xp(x)"))
    assert "exponent 10**10" in refused(symgrad("grad", "2**10**10"))


# ---------------------------------------------------------------------------
# symgrad graph

SEED = "docs/seed_graph.py:seed"


def _dot(text: str, cluster: str) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """Labels by node id and edges of one cluster of the DOT text."""
    nodes = dict(re.findall(rf'^\s+({cluster}\w+) \[.*label="(.*)"\];$', text, re.M))
    edges = re.findall(rf"^\s+({cluster}\w+) -> ({cluster}\w+);$", text, re.M)
    return nodes, edges


def test_seed_graph_dot_has_the_seed_nodes_and_edges(tmp_path):
    out = tmp_path / "seed.dot"
    assert ok("graph", SEED, "--shape", "x=2,2", "-o", str(out)).strip() == f"wrote {out}"
    nodes, edges = _dot(out.read_text(), "f")
    labels = {k: v.split("\\n")[0] for k, v in nodes.items()}
    by_label = {v: k for k, v in labels.items()}
    assert sorted(labels.values()) == sorted([
        "x", "2.0", "a = add(x, 2.0)", "b = mul(a, a)", "3.0", "c = mul(b, 3.0)",
        "output: d = mean(c, axes=(0, 1))"])
    x, a, b, c, d = (by_label[n] for n in ("x", "a = add(x, 2.0)", "b = mul(a, a)",
                                           "c = mul(b, 3.0)", "output: d = mean(c, axes=(0, 1))"))
    assert sorted(edges) == sorted([(x, a), (by_label["2.0"], a), (a, b), (a, b), (b, c),
                                    (by_label["3.0"], c), (c, d)])
    assert "leaf, requires_grad=True" in nodes[x]
    assert "grad_fn=<AddBackward>, requires_grad=True" in nodes[a]
    assert "a0" not in out.read_text()  # no adjoint without --adjoint


def test_adjoint_graph_beside_the_forward_one(tmp_path):
    out = tmp_path / "seed.dot"
    ok("graph", SEED, "--shape", "x=2,2", "--adjoint", "-o", str(out))
    nodes, edges = _dot(out.read_text(), "a")
    grads = [v for v in nodes.values() if v.startswith("output: grad_x = ")]
    assert len(grads) == 1 and "grad of b = mul(...)" in grads[0]
    assert _dot(out.read_text(), "f")[0]  # the forward cluster is there too


def test_graph_of_an_expression_with_a_constant_input_not_requiring_grad(tmp_path):
    out = tmp_path / "g.dot"
    ok("graph", "sum(x*y)", "--wrt", "x", "--shape", "x=3", "-o", str(out))
    nodes, _ = _dot(out.read_text(), "f")
    assert any(v.startswith("y\\n") and "requires_grad=False" in v for v in nodes.values())


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_graph_renders_svg(tmp_path):
    pytest.importorskip("graphviz")
    out = tmp_path / "seed.svg"
    ok("graph", SEED, "--shape", "x=2,2", "-o", str(out))
    svg = out.read_text()
    assert svg.startswith("<?xml") and "a = add(x, 2.0)" in svg


def test_graph_without_dot_says_so(tmp_path):
    out = tmp_path / "seed.svg"
    done = symgrad("graph", SEED, "--shape", "x=2,2", "-o", str(out), env={"PATH": str(tmp_path)},
                   real=True)  # exit status 1 of the real command
    line = refused(done, code=1)
    assert "dot" in line and ".dot file" in line
    assert not out.exists()


def test_graph_refuses_unknown_formats(tmp_path):
    line = refused(symgrad("graph", "x*2", "-o", str(tmp_path / "g.jpg")))
    assert "must end in .svg" in line


def test_committed_seed_svg_is_the_current_drawing():
    svg = (ROOT / "docs" / "seed_graph.svg").read_text()
    assert "<svg" in svg and "grad_fn=&lt;MeanBackward&gt;" in svg
    assert "docs/seed_graph.svg" in (ROOT / "README.md").read_text()


def test_help_lists_exactly_the_allowlisted_functions():
    from symgrad.cli import command as cli
    from symgrad.cli import expr

    text = " ".join(cli.EPILOG_GRAD.split("the functions", 1)[1].split(", with")[0].split())
    assert text.split() == sorted(expr.FUNCTIONS)
