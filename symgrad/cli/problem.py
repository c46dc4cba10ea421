"""What every ``symgrad`` command starts from: the function named by TARGET, its
variables, their shapes and ``--at`` values (a :class:`Problem`), its traced
graph, and :class:`CLIError`, the one-line error that every refusal is.

:mod:`.command` (grad, graph) and :mod:`.hessians` (hessian, grad --jacobian)
build on it; like :mod:`.command`, it imports nothing heavy until a function runs.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .limits import MAX_ELEMENTS

if TYPE_CHECKING:
    import argparse


class CLIError(Exception):
    """A one-line error for the user; ``code`` is the exit status."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code


@dataclass
class Problem:
    """What a command differentiates: the function, its positional parameters, their
    shapes, and the variables to differentiate with respect to (``wrt``)."""

    fun: Any
    names: tuple[str, ...]
    title: str                    # "f(x) = mean(3*(x+2)**2)"
    shapes: dict[str, tuple[int, ...]]
    wrt: tuple[str, ...]
    label: str = "f"              # the function in ∂f/∂x: f, or FUNC of FILE.py:FUNC

    @property
    def argnums(self) -> tuple[int, ...]:
        return tuple(self.names.index(n) for n in self.wrt)

    def zeros(self) -> list[Any]:
        import numpy as np

        return [np.zeros(self.shapes[n]) for n in self.names]


def load(target: str) -> tuple[Any, tuple[str, ...], str, str]:
    """The function named by TARGET, its parameter names, how to print it, and its name
    in derivatives (``f`` for an expression)."""
    import re

    match = re.fullmatch(r"(.+\.py):([A-Za-z_][A-Za-z0-9_]*)", target)
    if match is None:
        from .expr import ExpressionError, parse

        try:
            expression = parse(target)
        except ExpressionError as e:
            raise CLIError(str(e)) from None
        if not expression.variables:
            raise CLIError(f"the expression {expression.text} has no variable to differentiate")
        names = expression.variables
        return expression.function(), names, f"f({', '.join(names)}) = {expression.text}", "f"
    return _load_file(match.group(1), match.group(2))


def _load_file(path: str, name: str) -> tuple[Any, tuple[str, ...], str, str]:
    import importlib.util
    import inspect
    from pathlib import Path

    file = Path(path)
    if not file.is_file():
        raise CLIError(f"no such file: {path}")
    spec = importlib.util.spec_from_file_location(f"symgrad_user_{file.stem}", file)
    if spec is None or spec.loader is None:
        raise CLIError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # no __pycache__ there
    try:
        spec.loader.exec_module(module)  # the user's own code, as --help says
    except Exception as e:  # noqa: BLE001
        raise CLIError(f"importing {path} failed: {type(e).__name__}: {e}", 1) from None
    finally:
        sys.dont_write_bytecode = bytecode
    fun = getattr(module, name, None)
    if not callable(fun):
        raise CLIError(f"{path} defines no function {name}")
    params = [p for p in inspect.signature(fun).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
              and p.default is inspect.Parameter.empty]
    names = tuple(p.name for p in params)
    if not names:
        raise CLIError(f"{name} in {path} takes no positional argument to differentiate")
    return fun, names, f"{name}({', '.join(names)}) from {path}", name


def _pairs(options: list[str], flag: str, names: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for option in options:
        name, sep, value = option.partition("=")
        name = name.strip()
        if not sep:
            raise CLIError(f"{flag} {option}: expected NAME=VALUES")
        if name not in names:
            raise CLIError(f"{flag} {option}: {name} is not a variable "
                           f"(variables: {', '.join(names)})")
        if name in out:
            raise CLIError(f"{flag} gives {name} twice")
        out[name] = value
    return out


def floats(text: str, what: str) -> list[float]:
    import math

    values = []
    for item in text.split(","):
        try:
            value = float(item.strip())
        except ValueError:
            raise CLIError(f"{what}: {item.strip()!r} is not a number") from None
        if math.isinf(value) and "inf" not in item.lower():
            raise CLIError(f"{what}: {item.strip()} is too large for float64")
        values.append(value)
    return values


def problem(args: argparse.Namespace) -> Problem:
    fun, names, title, label = load(args.target)
    shapes: dict[str, tuple[int, ...]] = {n: () for n in names}
    for name, dims in _pairs(args.shape, "--shape", names).items():
        try:
            shape = tuple(int(d) for d in dims.split(",")) if dims.strip() not in ("", "()") \
                else ()
        except ValueError:
            raise CLIError(f"--shape {name}={dims}: dimensions are integers, e.g. 2,3") from None
        size = 1
        for d in shape:
            size *= d
        if any(d < 1 for d in shape) or len(shape) > 8 or size > MAX_ELEMENTS:
            raise CLIError(f"--shape {name}={dims}: need 1 to 8 positive dimensions and at "
                           f"most {MAX_ELEMENTS} elements")
        shapes[name] = shape
    wrt = names
    if args.wrt:
        wrt = tuple(dict.fromkeys(w.strip() for w in args.wrt.split(",")))
        for w in wrt:
            if w not in names:
                raise CLIError(f"--wrt {w}: not a variable (variables: {', '.join(names)})")
    return Problem(fun, names, title, shapes, wrt, label)


def values_at(p: Problem, options: list[str]) -> list[Any] | None:
    import numpy as np

    given = _pairs(options, "--at", p.names)
    if not given:
        return None
    missing = [n for n in p.names if n not in given]
    if missing:
        raise CLIError(f"--at gives no value for {', '.join(missing)}; give every variable")
    out = []
    for n in p.names:
        out.append(shaped(floats(given[n], f"--at {n}"), p.shapes[n], f"--at {n}"))
    return [np.asarray(v) for v in out]


def shaped(values: list[float], shape: tuple[int, ...], what: str) -> Any:
    import numpy as np

    size = int(np.prod(shape))
    if len(values) == 1:
        return np.full(shape, values[0])
    if len(values) != size:
        raise CLIError(f"{what}: {len(values)} values for shape {shape} ({size} elements); "
                       "give one value or all of them in C order")
    return np.array(values).reshape(shape)


def forward(p: Problem, args: list[Any]) -> Any:
    """The traced forward graph, with symgrad's errors as one-line CLI errors."""
    from ..core.ir import Aval
    from ..numpy_api import trace

    try:
        graph, is_tuple = trace(p.fun, [Aval(p.shapes[n]) for n in p.names], args,
                                list(p.names))
    except CLIError:
        raise
    except Exception as e:  # noqa: BLE001  symgrad's messages say what is wrong
        raise CLIError(f"{type(e).__name__}: {e}", 1) from None
    if is_tuple:
        raise CLIError("the function returns a tuple; return one array to differentiate", 1)
    largest = max(graph.eqns, key=lambda e: e.out.aval.size, default=None)
    if largest is not None and largest.out.aval.size > MAX_ELEMENTS:
        raise CLIError(f"the expression builds a value of {largest.out.aval.size} elements "
                       f"({largest.out.aval}, by broadcasting?); at most {MAX_ELEMENTS}")
    return graph



def prepared(args: argparse.Namespace, what: str) -> tuple[Problem, list[Any] | None,
                                                            list[Any], Any]:
    """The problem ``args`` name, its ``--at`` point (None without one), the point its
    graph is traced at (zeros without one) and that graph, whose output must be float64
    (else it has no ``what``: "gradient", "derivative")."""
    p = problem(args)
    at = values_at(p, args.at)
    if args.check and at is None:
        raise CLIError("--check needs a point: give --at for every variable")
    sample = at if at is not None else p.zeros()
    graph = forward(p, sample)
    out = graph.outputs[0]
    if out.dtype != "float64":
        raise CLIError(f"the function returns {out.aval} values, which have no {what}", 1)
    return p, at, sample, graph

def refuse_what_would_not_fit(p: Problem, g: Any, at: list[Any], cotangent: Any,
                               jit: bool, what: str = "the value and gradient") -> None:
    """A CLIError where ``what`` ``g`` computes at ``at`` would not fit in memory (see
    :func:`symgrad.cli.bounds.memory_refusal`)."""
    from .bounds import memory_refusal

    try:
        why = memory_refusal(p.shapes, g, at, cotangent, jit, what)
    except Exception as e:  # noqa: BLE001  as the call itself would say it
        raise CLIError(f"{type(e).__name__}: {e}", 1) from None
    if why:
        raise CLIError(why)
