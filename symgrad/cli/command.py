"""The ``symgrad`` command: derived gradients, Hessians and Jacobians, generated code
and graph pictures.

    symgrad grad "mean(3*(x+2)**2)" --wrt x --shape x=2,2 --at x=1
    symgrad grad "x*x" --wrt x --shape x=5 --at x=1,2,3,4,5 --gradient 5
    symgrad grad path/to/file.py:func --shape x=10 --show code
    symgrad hessian "sum(x**3)" --shape x=3 --at x=1,2,3 --check
    symgrad grad "sin(x)*y" --shape x=3 --jacobian --at x=1 --at y=2
    symgrad graph "mean(3*(x+2)**2)" --shape x=2,2 --adjoint -o graph.svg

Expressions are parsed by :mod:`symgrad.cli.expr` (an allowlist over ``ast``,
never ``eval``). Exit codes: 0 success; 2 a refused command line or
expression, or values that would not fit in memory (one ``symgrad: error:``
line, nothing else done); 1 the function cannot be differentiated as asked,
or ``--check`` found a mismatch or could confirm nothing; 130 interrupted.
Every failure is one ``symgrad: error:`` line.

Startup stays light: this module imports only ``argparse`` until a command
runs; one-shot values use symgrad's numpy interpreter (``--jit`` compiles
with Numba), and SymPy is imported only to print formulas or to check. All
that SymPy does runs under one budget, ``--sympy-seconds``, in a child process
(:mod:`.symbolic` asks, :mod:`.bounds` runs); ``--check``'s comparisons and their
one verdict are :mod:`.checks`, what is printed :mod:`.report`. What every
command starts from (the function, its variables and values) is :mod:`.problem`;
``hessian`` and ``grad --jacobian`` are :mod:`.hessians`.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, NoReturn

from .limits import SYMPY_SECONDS
from .problem import (
    CLIError,
    floats,
    forward,
    prepared,
    problem,
    refuse_what_would_not_fit,
    shaped,
)

_TARGET = """\
TARGET is either a math expression in Python syntax over named variables,
e.g. "mean(3*(x+2)**2)", or FILE.py:FUNC. An expression is parsed with an
allowlist (numbers, variables, + - * / ** @, comparisons, .T, indexing by
literal integers and slices (x[0], x[1:]), and the functions abs absolute
arccos arcsin arctan arctan2 ceil clip cos cosh det dot exp expm1 floor hypot
inv log log1p log_softmax logaddexp logdet logsumexp max maximum mean min
minimum norm prod reciprocal relu rint sigmoid sign sin sinh softmax softplus
solve sqrt square std sum tan tanh trace transpose trunc var where xlogy, with
axis= and keepdims= for reductions
(and ddof= for var, std); constants pi and e); it is never passed to eval.
FILE.py:FUNC IMPORTS AND RUNS FILE.py as Python code: use it only on your own
code.
"""

_BUDGET = """\
SymPy's work (simplifying and printing formulas, --check's SymPy side,
--show sympy) shares one budget of --sympy-seconds (default 5 s); past it the
values are printed without what SymPy did not finish, and the output says so.
A TARGET that starts with '-' ("-x*x") is read as the TARGET.
exit codes: 0 ok; 1 cannot differentiate as asked, --check found a mismatch
or could confirm nothing (NOT CHECKED); 2 refused command line or expression
(or more memory than is available); 130 interrupted."""

_FINITE_DIFFERENCES = """\
Finite differences check every element up to 2000, above that a fixed sample,
and leave out elements where the function is nan at x +- h; where their own
error (estimated with a step half as long) exceeds the tolerance they are
reported as unreliable there, not as a mismatch."""

EPILOG_GRAD = f"""{_TARGET}
examples:
  symgrad grad "mean(3*(x+2)**2)" --wrt x --shape x=2,2 --at x=1
  symgrad grad "x*x" --wrt x --shape x=5 --at x=1,2,3,4,5 --gradient 5
  symgrad grad "sum(sin(x)*y)" --shape x=3 --at x=0.1,0.2,0.3 --at y=2 --check
  symgrad grad "sin(x)*y" --shape x=3 --at x=0.1,0.2,0.3 --at y=2 --jacobian

--check compares symgrad's gradient at the --at point with SymPy's derivative
of the traced function (50 digits) and with central finite differences, and
prints the relative error max |a - b| / max(max |b|, floor) of each comparison
(symgrad.testing.relative_error: infinities match infinities of the same sign,
SymPy's complex infinity zoo, as sqrt'(0) = 1/0, either sign; nan only nan).
{_FINITE_DIFFERENCES} A variable that neither
comparison confirmed is NOT CHECKED.

--jacobian prints the Jacobian of a function of any output shape instead, one
block per --wrt variable x, of shape output.shape + x.shape (as sg.jacrev),
under the key "jacobian" in --format json; --check compares it with SymPy's
jacobian and with finite differences of the function, as symgrad hessian does.

{_BUDGET}"""

EPILOG_HESSIAN = f"""{_TARGET}
examples:
  symgrad hessian "sum(x**3)" --shape x=3 --at x=1,2,3
  symgrad hessian "sum(sin(x)*y)" --shape x=3 --at x=0.1,0.2,0.3 --at y=2 --check
  symgrad hessian "sum(x**2)*y" --shape x=2 --wrt x --format json --at x=1 --at y=3

The function must return a scalar (for the first derivatives of a vector
function: symgrad grad --jacobian). With several --wrt variables the Hessian
is printed in blocks, one per pair: d2f/dx dy has the shape x.shape + y.shape,
as sg.hessian(f, argnums=(...)) returns it. A block's formula is one pattern
in its indices where every element reads the same (a Piecewise where the
diagonal i = j differs), else its elements are listed. --format json puts the
values under "hessian": data["hessian"]["x"]["y"] is the block d2f/dx dy.

--check compares each block at the --at point with SymPy's hessian of the
traced function (50 digits) and with central finite differences of symgrad's
gradient (row r of d2f/dx dy: the derivative in y of element r of df/dx), by
the relative error and the one verdict rule of symgrad grad --check.
{_FINITE_DIFFERENCES}

{_BUDGET}"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, not usage + message
        self.exit(2, f"symgrad: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="symgrad",
        description="symgrad: gradients of numpy functions, derived symbolically and "
                    "compiled with Numba. Run 'symgrad grad --help' for the main command, "
                    "'symgrad hessian --help' for second derivatives.")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("target", metavar="TARGET",
                       help='a math expression such as "mean(3*(x+2)**2)", or FILE.py:FUNC '
                            "(imports and runs FILE.py)")
        p.add_argument("--wrt", metavar="X[,Y]",
                       help="variables to differentiate with respect to (default: all)")
        p.add_argument("--shape", action="append", default=[], metavar="NAME=D1,D2",
                       help="a variable's shape (repeat per variable; default: scalar)")

    def derivative(p: argparse.ArgumentParser, what: str) -> None:
        common(p)
        p.add_argument("--at", action="append", default=[], metavar="NAME=V1,V2,...",
                       help="evaluate at these values (C order, or one value broadcast to "
                            "the shape); repeat per variable")
        p.add_argument("--format", choices=("pretty", "text", "latex", "json"),
                       default="pretty", help="how to print formulas and values "
                                              "(default: pretty)")
        p.add_argument("--show", action="append", default=[], choices=("ir", "code", "sympy"),
                       help=f"also print the IR (forward, and optimized {what}), the "
                            "generated Numba source, or SymPy's own derivative; repeatable")
        p.add_argument("--check", action="store_true",
                       help="compare with SymPy and finite differences at the --at point")
        p.add_argument("--expand", action="store_true",
                       help="print the formulas per element with sums written out, as "
                            "symgrad's derivation computes them (default: a grad's "
                            "textbook formula, e.g. softmax(z) - y, where the expression "
                            "has one, and sums over an axis as Σ)")
        p.add_argument("--jit", action="store_true",
                       help="compute values with the compiled Numba kernel (default: the "
                            "numpy interpreter, which starts faster)")
        p.add_argument("--sympy-seconds", type=_seconds, default=None, metavar="S",
                       help=f"seconds SymPy may take in all: formulas, --check's SymPy side, "
                            f"--show sympy (default: {SYMPY_SECONDS:g})")

    grad = commands.add_parser(
        "grad", help="print the derived gradient of an expression or FILE.py:FUNC",
        description="Print the gradient formula symgrad derives (one per element "
                    "pattern for arrays) and, with --at, the value and gradient there.",
        epilog=EPILOG_GRAD, formatter_class=argparse.RawDescriptionHelpFormatter)
    derivative(grad, "forward + adjoint")
    grad.add_argument("--gradient", metavar="V1,...",
                      help="cotangent for a non-scalar output: differentiate "
                           "sum(output * gradient) (one value is broadcast)")
    grad.add_argument("--jacobian", action="store_true",
                      help="print the Jacobian (any output shape) instead: its formulas, "
                           "value and --check, as symgrad hessian prints a Hessian")

    hessian = commands.add_parser(
        "hessian", help="print the derived Hessian of a scalar expression or FILE.py:FUNC",
        description="Print the second-derivative formulas symgrad derives (one pattern "
                    "per block of the Hessian where the structure allows) and, with --at, "
                    "the value and the Hessian there. Options as for symgrad grad.",
        epilog=EPILOG_HESSIAN, formatter_class=argparse.RawDescriptionHelpFormatter)
    derivative(hessian, "Hessian")

    graph = commands.add_parser(
        "graph", help="draw the computational graph (svg, png, pdf or dot)",
        description="Draw the traced graph as the seed tutorials draw it: leaves "
                    "(variables you create) as boxes, results as ellipses, requires_grad "
                    "marked; --adjoint draws symgrad's forward + adjoint graph beside it. "
                    ".dot output needs nothing; .svg/.png/.pdf need the graphviz package "
                    "(pip install 'symgrad[graph]') and Graphviz's dot program. "
                    "FILE.py:FUNC imports and runs FILE.py.")
    common(graph)
    graph.add_argument("-o", "--output", required=True, metavar="OUT.svg|png|pdf|dot")
    graph.add_argument("--adjoint", action="store_true", help="draw the adjoint graph too")
    return parser


def _seconds(text: str) -> float:
    import math

    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < 10**6:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds above 0")
    return value


#: the options of grad and graph that take a value (so that a value is not a TARGET)
TAKES_VALUE = ("--wrt", "--shape", "--at", "--gradient", "--format", "--show",
               "--sympy-seconds", "-o", "--output")


def _protect_target(argv: list[str]) -> tuple[list[str], str | None]:
    """argv with a TARGET that starts with '-' ("-x*x") marked so that argparse
    reads it as the positional it is, and that TARGET (or None).

    argparse takes every argument that starts with '-' for an option, except
    negative numbers and arguments with a space: the mark is a trailing space,
    which the expression parser ignores and :func:`main` removes again."""
    if not argv or argv[0] not in ("grad", "graph", "hessian"):
        return argv, None
    out = list(argv)
    i = 1
    while i < len(out):
        token = out[i]
        if token == "--" or not token.startswith("-") or token == "-":
            return out, None  # the TARGET is plain (or after --): nothing to do
        if token in TAKES_VALUE or (token.startswith("--") and "=" not in token and any(
                o.startswith(token) for o in TAKES_VALUE)):  # argparse takes prefixes too
            i += 2
            continue
        known = token.startswith("--") or token == "-h" or (
            argv[0] == "graph" and token.startswith("-o"))
        if not known:
            out[i] = token + " "
            return out, token
        i += 1
    return out, None


def main(argv: list[str] | None = None) -> int:
    """Run the command in ``argv`` (the command line's, ``sys.argv``, if None); the exit
    status. Run from the command line, the process ends next, and its exit skips
    collecting what SymPy and Numba left alive (:mod:`symgrad.core.teardown`)."""
    code = _main(argv)
    if argv is None:
        from ..core.teardown import skip_teardown

        skip_teardown()
    return code


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    argv, dashed = _protect_target(sys.argv[1:] if argv is None else list(argv))
    args = parser.parse_args(argv)
    if dashed is not None and getattr(args, "target", None) == dashed + " ":
        args.target = dashed
    if args.version:
        from ..core.version import __version__

        print(f"symgrad {__version__}")
        return 0
    if args.command is None:
        parser.print_help()
        return 0
    try:
        if args.command == "hessian":
            from .hessians import run_hessian

            code = run_hessian(args)
        else:
            code = run_grad(args) if args.command == "grad" else run_graph(args)
        _note_background_compiles(args)
        return code
    except CLIError as e:
        return _error(str(e), e.code)
    except KeyboardInterrupt:
        return _error("interrupted", 130)
    except BrokenPipeError:  # the reader went away (symgrad ... | head): nothing to say
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except MemoryError:
        return _error("out of memory; try a smaller --shape", 1)
    except RecursionError:
        return _error("the function nests too deeply to trace or print", 1)
    except Exception as e:  # noqa: BLE001  a bug in symgrad: still one line, and what to do
        from .bounds import describe

        return _error(f"unexpected {describe(e)}; this is a bug in symgrad: please report it "
                      "with the command line", 1)


def _note_background_compiles(args: argparse.Namespace) -> None:
    """With ``--jit``, say on stderr when the numpy interpreter answered because the
    kernel still compiles in the background (tiered execution), or when a compile took
    the time: the next run, loading the kernel from disk, is faster."""
    if not getattr(args, "jit", False):
        return
    from ..backend.numba.stats import compile_note

    note = compile_note()
    if note:
        print(note, file=sys.stderr)


def _error(message: str, code: int) -> int:
    """Print the one ``symgrad: error:`` line; the exit status."""
    message = " ".join(message.split())
    print(f"symgrad: error: {message}", file=sys.stderr)
    return code


# ---------------------------------------------------------------------------
# symgrad grad


def run_grad(args: argparse.Namespace) -> int:
    if args.jacobian:
        from .hessians import run_jacobian

        return run_jacobian(args)
    import numpy as np

    from ..core.errors import SCALAR_OUTPUT_ERROR
    from ..transforms.api import value_and_grad

    p, at, sample, graph = prepared(args, "gradient")
    out = graph.outputs[0]
    cotangent = None
    if args.gradient is not None:
        cotangent = shaped(floats(args.gradient, "--gradient"), out.shape, "--gradient")
        if not np.all(np.isfinite(cotangent)):
            raise CLIError("--gradient takes finite numbers (it weights the output: "
                           "sum(output * gradient))")
    elif out.shape != ():
        raise CLIError(f"{SCALAR_OUTPUT_ERROR}: the function returns {out.aval}; pass "
                       "--gradient V1,... (the output's shape, or one value) to differentiate "
                       "sum(output * gradient)", 1)
    g = value_and_grad(p.fun, argnums=p.argnums, backend="numba" if args.jit else "numpy")
    from .checks import fd_check, sympy_check
    from .report import Report
    from .symbolic import run_sympy

    report = Report(p, args.format, cotangent)
    value = grads = None
    fd: list[Any] = []
    if at is not None:
        refuse_what_would_not_fit(p, g, at, cotangent, args.jit)
        value, grads = _call(g, at, cotangent)
        if args.check:
            fd = [fd_check(p, at, k, grads[k], cotangent) for k in range(len(p.wrt))]
    seconds = SYMPY_SECONDS if args.sympy_seconds is None else args.sympy_seconds
    sympy = run_sympy(p, g, graph, sample, at, cotangent, args.check, "sympy" in args.show,
                      report, seconds, expand=args.expand)
    if sympy.get("formulas") is not None:
        report.add(sympy.get("formulas"))
    else:
        report.formulas({n: ("omitted", sympy.why("formulas")) for n in p.wrt})
    if at is not None:
        report.values(at, value, grads)
    failed = False
    if args.check:
        assert grads is not None
        oracle = sympy.get("check")  # per variable: SymPy's values, and where they are zoo
        why = "" if oracle is not None else sympy.why("check")
        failed = report.check([
            (name, sympy_check(grads[k], None if oracle is None else oracle[k], why), fd[k])
            for k, name in enumerate(p.wrt)])
    for what in args.show:
        if what != "sympy":
            report.show(what, _shown(what, g, graph, sample, cotangent))
        elif sympy.get("sympy") is not None:
            report.add(sympy.get("sympy"))
        else:
            report.show("sympy", f"omitted: {sympy.why('sympy')}")
    report.emit()
    return 1 if failed else 0


def _call(g: Any, at: list[Any], cotangent: Any) -> tuple[Any, tuple]:
    try:
        return g(*at, gradient=cotangent)
    except Exception as e:  # noqa: BLE001
        raise CLIError(f"{type(e).__name__}: {e}", 1) from None


def _shown(what: str, g: Any, graph: Any, sample: list[Any], cotangent: Any) -> str:
    if what == "ir":
        return f"{graph}\n{g.graph(*sample, gradient=cotangent)}"
    return g.source(*sample, gradient=cotangent)


# ---------------------------------------------------------------------------
# symgrad graph


def run_graph(args: argparse.Namespace) -> int:
    from pathlib import Path

    import numpy as np

    from .drawing import FORMATS, RenderError, render, to_dot

    out = Path(args.output)
    if out.suffix.lstrip(".").lower() not in FORMATS:
        raise CLIError(f"-o {args.output}: the output must end in "
                       f"{', '.join('.' + f for f in FORMATS)}")
    _check_writable(out, args.output)
    p = problem(args)
    sample = p.zeros()
    graph = forward(p, sample)
    adjoint, n_primal = None, len(graph.outputs)
    if args.adjoint:
        from ..transforms.api import value_and_grad

        ct = None if graph.outputs[0].shape == () else np.ones(graph.outputs[0].shape)
        try:  # value_and_grad: the adjoint beside the value it starts from
            adjoint = value_and_grad(p.fun, argnums=p.argnums, backend="numpy").graph(
                *sample, gradient=ct)
        except Exception as e:  # noqa: BLE001
            raise CLIError(f"{type(e).__name__}: {e}", 1) from None
    dot = to_dot(graph, set(p.argnums), adjoint, n_primal, p.wrt)
    try:
        render(dot, out)
    except RenderError as e:
        raise CLIError(str(e), 1) from None
    except OSError as e:
        raise CLIError(f"cannot write {out}: {e.strerror or e}", 1) from None
    print(f"wrote {out}")
    return 0


def _check_writable(out: Any, text: str) -> None:
    """Refuse an -o path that cannot be written, before anything runs."""
    import os

    parent = out.parent
    if out.is_dir():
        raise CLIError(f"-o {text}: that is a directory; give a file name")
    if not parent.exists():
        raise CLIError(f"-o {text}: the directory {parent} does not exist")
    if not parent.is_dir():
        raise CLIError(f"-o {text}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise CLIError(f"-o {text}: the directory {parent} is not writable")


if __name__ == "__main__":
    sys.exit(main())
