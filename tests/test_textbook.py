"""Textbook formulas (``symgrad grad`` of a typed expression, :mod:`symgrad.cli.textbook`):
a table of the functions people differentiate, each formula evaluated as the SymPy
object it is (50 digits, :func:`symgrad.cli.notation.numeric`, not its text) against
central finite differences (independent of symgrad) and against symgrad's gradient on
the numpy interpreter, at random points; its length bounded and the same at n = 3 and
n = 300; its text kept in ``tests/golden/textbook.txt`` (regenerate with
``SYMGRAD_UPDATE_GOLDEN=1`` and read the diff).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

import symgrad as sg
from symgrad.cli import main
from symgrad.cli.expr import parse
from symgrad.cli.notation import numeric, render
from symgrad.cli.textbook import Unsupported, derive

GOLDEN = Path(__file__).parent / "golden" / "textbook.txt"
UPDATE = os.environ.get("SYMGRAD_UPDATE_GOLDEN") == "1"

# name: (expression, shapes, wrt)
TABLE = {
    "least squares": ("sum((X@w - y)**2)", {"X": (5, 3), "w": (3,), "y": (5,)}, ("w",)),
    "ridge": ("sum((X@w - y)**2) + lam*sum(w**2)",
              {"X": (5, 3), "w": (3,), "y": (5,), "lam": ()}, ("w", "lam")),
    "logistic regression": ("sum(softplus(X@w) - y*(X@w))",
                            {"X": (5, 3), "w": (3,), "y": (5,)}, ("w",)),
    "logistic regression, labels +-1": ("sum(log(1 + exp(-y*(X@w))))",
                                        {"X": (5, 3), "w": (3,), "y": (5,)}, ("w",)),
    "softmax cross-entropy": ("logsumexp(z) - sum(y*z)", {"z": (4,), "y": (4,)}, ("z",)),
    "cross-entropy of log_softmax": ("-sum(y*log_softmax(z))", {"y": (4,), "z": (4,)},
                                     ("z",)),
    "log-det": ("log(det(A))", {"A": (3, 3)}, ("A",)),
    "logdet": ("logdet(A) + trace(inv(A))", {"A": (3, 3)}, ("A",)),
    "quadratic form": ("x@A@x", {"x": (3,), "A": (3, 3)}, ("x", "A")),
    "trace(AXB)": ("trace(A@X@B)", {"A": (2, 3), "X": (3, 4), "B": (4, 2)}, ("X",)),
    "Frobenius norm": ("sum(X*X)", {"X": (3, 2)}, ("X",)),
    "dense layer": ("sum(tanh(W@x + b))", {"W": (2, 3), "x": (3,), "b": (2,)},
                    ("W", "b", "x")),
    "Gaussian log-likelihood": ("-sum((x - mu)**2)/(2*s**2) - 5*log(s)",
                                {"x": (5,), "mu": (), "s": ()}, ("mu", "s")),
    "attention scores": ("sum(V*softmax(Q@K.T/sqrt(d)))",
                         {"Q": (3, 2), "K": (4, 2), "V": (3, 4), "d": ()}, ("Q",)),
    "norm": ("sqrt(sum(x*x))", {"x": (3,)}, ("x",)),
    "l1": ("sum(abs(x - y))", {"x": (3,), "y": (3,)}, ("x",)),
    "log-sigmoid": ("sum(log(sigmoid(x)))", {"x": (3,)}, ("x",)),
}


def _bigger(shapes: dict, factor: int) -> dict:
    """Every size times ``factor`` (sizes stay equal where they were): n = 3 -> 300."""
    return {n: tuple(d * factor for d in s) for n, s in shapes.items()}


def _point(shapes: dict, rng: np.random.Generator) -> dict:
    """Random values; a square matrix gets 2·I (det, inv well away from singular), a
    scalar is in [0.5, 1.5] (log(s), sqrt(d))."""
    point = {}
    for name, shape in shapes.items():
        if not shape:
            point[name] = float(rng.uniform(0.5, 1.5))
        else:
            value = rng.uniform(-1, 1, shape)
            if len(shape) == 2 and shape[0] == shape[1]:
                value += 2 * np.eye(shape[0])
            point[name] = value
    return point


def _env(formula, shapes: dict, point: dict) -> dict:
    env = dict(formula.dims)
    for name, sym in formula.symbols.items():
        v = np.asarray(point[name], dtype=float)
        env[sym] = (sp.Matrix(v.reshape(v.shape[0], -1).tolist()) if v.ndim
                    else sp.Float(float(v), 60))
    for short, part in formula.where.items():  # P = softmax(...): what P stands for
        env[short] = numeric(part, env, digits=50)
    return env


def _central(f, args: list, k: int, h: float = 1e-6) -> np.ndarray:
    x = np.array(args[k], dtype=float)
    out = np.empty(x.shape)
    for idx in np.ndindex(*x.shape):
        up, down = x.copy(), x.copy()
        up[idx] += h
        down[idx] -= h
        out[idx] = (f(*args[:k], up, *args[k + 1:]) - f(*args[:k], down, *args[k + 1:])) / (2 * h)
    return out


def _formula(text: str, shapes: dict, wrt: tuple):
    expression = parse(text)
    return expression, derive(expression, {n: shapes[n] for n in expression.variables}, wrt)


@pytest.mark.parametrize("name", TABLE)
def test_textbook_formula(name):
    text, shapes, wrt = TABLE[name]
    start = time.monotonic()
    expression, formula = _formula(text, shapes, wrt)
    printed = {w: {fmt: render(formula.grads[w], fmt) for fmt in ("text", "pretty", "latex")}
               for w in wrt}
    assert time.monotonic() - start < 5
    _, big = _formula(text, _bigger(shapes, 100), wrt)
    f = expression.function()
    names = expression.variables
    rng = np.random.default_rng(len(name))
    for w in wrt:
        shown = printed[w]
        assert len(shown["text"]) <= 120 and len(shown["latex"]) <= 200, shown
        assert max(map(len, shown["pretty"].split("\n"))) <= 120
        for kink in ("Piecewise", "Heaviside", "Max", "Min", "ITE", "zoo"):
            assert kink not in sp.srepr(formula.grads[w])
        assert render(big.grads[w], "text") == shown["text"]  # n = 3 and n = 300
    for part in formula.where.values():
        assert len(render(part, "text")) <= 120 and len(render(part, "latex")) <= 200
    for _ in range(2):  # random points
        point = _point({n: shapes[n] for n in names}, rng)
        args = [point[n] for n in names]
        env = _env(formula, shapes, point)
        for w in wrt:
            k = names.index(w)
            got = numeric(formula.grads[w], env, digits=50)
            got = np.array(got.tolist() if hasattr(got, "tolist") else float(got),
                           dtype=float).reshape(np.shape(point[w]))
            fd = _central(f, args, k)
            assert np.allclose(got, fd, rtol=1e-6, atol=1e-6), (w, got, fd)
            ours = sg.grad(f, argnums=k, backend="numpy")(*args)
            assert np.allclose(got, ours, rtol=1e-12, atol=1e-12), (w, got, ours)


def test_golden_text():
    """The printed formulas, as a person reads them (reviewed by eye once)."""
    lines = []
    for name, (text, shapes, wrt) in TABLE.items():
        _, formula = _formula(text, shapes, wrt)
        lines.append(f"# {name}: f = {text}")
        for w in wrt:
            lines.append(f"df/d{w} = {render(formula.grads[w], 'text')}")
            lines.append(f"latex: {render(formula.grads[w], 'latex')}")
            lines.append(render(formula.grads[w], "pretty"))
        for short, part in formula.where.items():
            lines.append(f"where {short} = {render(part, 'text')}")
        if formula.notes:
            lines.append(f"notes: {'; '.join(formula.notes)}")
        lines.append("")
    got = "\n".join(lines)
    if UPDATE or not GOLDEN.exists():
        GOLDEN.write_text(got, encoding="utf-8")
    assert got == GOLDEN.read_text(encoding="utf-8")


@pytest.mark.parametrize("text, shapes", [
    ("sum(x, axis=0)", {"x": (2, 3)}),        # axis=: per element
    ("x[0]*sum(x)", {"x": (3,)}),             # indexing
    ("sum(x*y)", {"x": (2, 3), "y": (3,)}),   # broadcasting a row
    ("sum(t)", {"t": (2, 2, 2)}),             # rank 3
    ("x@x", {"x": (3,)}),                     # not... this one is supported
])
def test_unsupported_falls_back(text, shapes):
    expression = parse(text)
    if text == "x@x":
        assert render(derive(expression, shapes, ("x",)).grads["x"], "text") == "2*x"
        return
    with pytest.raises(Unsupported):
        derive(expression, shapes, tuple(shapes)[:1])


def test_command_prints_the_issue_examples(capsys):
    """The three examples of issue 29, through the command (in this process)."""
    assert main(["grad", "logsumexp(z) - sum(y*z)", "--shape", "z=4", "--shape", "y=4",
                 "--wrt", "z", "--format", "text"]) == 0
    out = capsys.readouterr().out
    assert "df/dz = softmax(z) - y\n" in out and len(out) < 300
    assert main(["grad", "-sum(y*log_softmax(z))", "--shape", "z=4", "--shape", "y=4",
                 "--wrt", "z", "--format", "latex"]) == 0
    assert r"\operatorname{softmax}\left(z\right) \operatorname{sum}\left(y\right) - y" \
        in capsys.readouterr().out
    for n in ("3", "300"):
        assert main(["grad", "sqrt(sum(x*x))", "--shape", f"x={n}", "--format", "text"]) == 0
        assert "df/dx = x/norm(x)\n" in capsys.readouterr().out
    # --expand: the per-element formulas of symgrad's adjoint graph, as before
    assert main(["grad", "sqrt(sum(x*x))", "--shape", "x=2", "--format", "text",
                 "--expand"]) == 0
    assert "df/dx[1] = x[1]/sqrt(x[0]**2 + x[1]**2)" in capsys.readouterr().out
