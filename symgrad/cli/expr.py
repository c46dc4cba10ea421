"""Math expressions typed by a user (``"mean(3*(x+2)**2)"``), parsed safely.

The text goes through ``ast.parse(mode="eval")`` and an allowlist that turns
the Python AST into :class:`Node` data; :meth:`Expression.function` then
interprets that data with numpy functions, which symgrad traces like any
user code. User text never reaches ``eval``, ``exec``, ``compile``,
``sympify``, ``parse_expr`` or ``lambdify``.

Allowed: printable ASCII; numbers; variable names (ASCII identifiers not
starting with ``_``); the constants ``pi`` and ``e``; ``+ - * / **``, unary
``-``/``+``, one comparison ``< <= > >= == !=``; calls of the functions in
:data:`FUNCTIONS` with positional arguments and, for reductions, the keywords
``axis`` (an integer or a tuple of integers) and ``keepdims`` (``True`` or
``False``); ``@`` and the linear algebra of :data:`FUNCTIONS` (``dot det inv solve
trace norm logdet transpose``), ``.T``, and indexing by literal integers and slices
(``x[0]``, ``x[1:]``, ``A[0, 1:3]``). Limits: :data:`MAX_LENGTH` characters,
:data:`MAX_NODES` AST nodes, depth :data:`MAX_DEPTH`, constants up to
:data:`MAX_CONSTANT` in magnitude and
constant exponents up to :data:`MAX_EXPONENT`. Anything else is an
:class:`ExpressionError` naming the offending part.

    >>> import numpy as np
    >>> e = parse("mean(3*(x+2)**2)")
    >>> e.variables
    ('x',)
    >>> float(e.function()(np.ones((2, 2))))
    27.0
    >>> parse("x.__class__")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    symgrad.cli.expr.ExpressionError: attribute access (only .T, ...) is not allowed: x.__class__
"""

from __future__ import annotations

import ast
import inspect
import math
import operator
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

from ..numpy_api import functions as F

MAX_LENGTH = 1000
MAX_NODES = 400
MAX_DEPTH = 40
MAX_CONSTANT = 1e100
MAX_EXPONENT = 1000.0


class ExpressionError(ValueError):
    """The expression is refused; the message names the offending part."""


@dataclass(frozen=True)
class Function:
    """An allowlisted function: how to call it and what it accepts."""

    impl: Callable[..., Any]
    min_args: int
    max_args: int
    keywords: tuple[str, ...] = ()


_REDUCTION = ("axis", "keepdims")

#: the functions an expression may call, by name
FUNCTIONS: dict[str, Function] = {
    **{name: Function(getattr(np, name), 1, 1) for name in (
        "exp", "log", "log1p", "expm1", "sqrt", "sin", "cos", "tan", "tanh", "sinh", "cosh",
        "arcsin", "arccos", "arctan", "sign", "square", "reciprocal", "absolute",
        "floor", "ceil", "trunc", "rint")},
    "abs": Function(np.absolute, 1, 1),
    "maximum": Function(np.maximum, 2, 2),
    "minimum": Function(np.minimum, 2, 2),
    "where": Function(F.where, 3, 3),
    "clip": Function(np.clip, 3, 3),
    **{name: Function(getattr(np, name), 2, 2) for name in ("hypot", "arctan2", "logaddexp")},
    **{name: Function(getattr(F, name), 1, 1) for name in ("sigmoid", "softplus", "relu")},
    "xlogy": Function(F.xlogy, 2, 2),
    "dot": Function(np.dot, 2, 2),
    "det": Function(np.linalg.det, 1, 1),
    "inv": Function(np.linalg.inv, 1, 1),
    "solve": Function(np.linalg.solve, 2, 2),
    "trace": Function(np.trace, 1, 1),
    "norm": Function(np.linalg.norm, 1, 1),
    "logdet": Function(lambda a: np.linalg.slogdet(a)[1], 1, 1),  # log|det(A)|
    "transpose": Function(np.transpose, 1, 1),
    "logsumexp": Function(F.logsumexp, 1, 1, _REDUCTION),
    **{name: Function(getattr(F, name), 1, 1, ("axis",)) for name in ("softmax", "log_softmax")},
    **{name: Function(getattr(np, name), 1, 1, _REDUCTION)
       for name in ("sum", "mean", "prod", "max", "min")},
    **{name: Function(getattr(np, name), 1, 1, (*_REDUCTION, "ddof")) for name in ("var", "std")},
}

#: named constants
CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e}

_BINARY: dict[type, tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Add: ("+", operator.add), ast.Sub: ("-", operator.sub),
    ast.Mult: ("*", operator.mul), ast.Div: ("/", operator.truediv),
    ast.Pow: ("**", operator.pow), ast.MatMult: ("@", operator.matmul),
}
_UNARY: dict[type, tuple[str, Callable[[Any], Any]]] = {
    ast.USub: ("-", operator.neg), ast.UAdd: ("+", operator.pos),
}
_COMPARE: dict[type, tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Lt: ("<", operator.lt), ast.LtE: ("<=", operator.le), ast.Gt: (">", operator.gt),
    ast.GtE: (">=", operator.ge), ast.Eq: ("==", operator.eq), ast.NotEq: ("!=", operator.ne),
}
_REFUSED: dict[type, str] = {
    ast.Attribute: "attribute access",
    ast.Lambda: "a lambda", ast.ListComp: "a comprehension", ast.SetComp: "a comprehension",
    ast.DictComp: "a comprehension", ast.GeneratorExp: "a comprehension",
    ast.NamedExpr: "an assignment expression (:=)", ast.Starred: "a starred argument",
    ast.BoolOp: "and/or (use where(cond, a, b))", ast.IfExp: "if/else (use where(cond, a, b))",
    ast.JoinedStr: "an f-string", ast.List: "a list", ast.Tuple: "a tuple outside axis=",
    ast.Dict: "a dict", ast.Set: "a set", ast.Await: "await", ast.Yield: "yield",
    ast.YieldFrom: "yield", ast.Slice: "a slice outside [...]",
}

#: what a user coming from another notation may mean: the fix to suggest
_ALIASES: dict[str, str] = {
    "ln": "log", "asin": "arcsin", "acos": "arccos", "atan": "arctan", "atan2": "arctan2",
    "pow": "x**y", "power": "x**y", "expit": "sigmoid", "logistic": "sigmoid",
    "matmul": "a @ b", "T": "x.T", "tr": "trace", "mean_squared": "mean((x - y)**2)",
}


# ---------------------------------------------------------------------------
# the parsed form: plain data


@dataclass(frozen=True)
class Num:
    value: float


@dataclass(frozen=True)
class Name:
    name: str


@dataclass(frozen=True)
class Op:
    """An operator: ``symbol`` is ``+``, ``neg``, ``<``...; ``fn`` applies it."""

    symbol: str
    fn: Callable[..., Any]
    args: tuple[Node, ...]


@dataclass(frozen=True)
class Call:
    name: str
    args: tuple[Node, ...]
    keywords: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class Index:
    """``value[index]``: each item of ``index`` an int or a ``(start, stop, step)``
    triple of ints or None (a slice), as literal in the text."""

    value: Node
    index: tuple[Any, ...]

    def key(self) -> tuple[Any, ...]:
        return tuple(slice(*k) if isinstance(k, tuple) else k for k in self.index)


Node = Union[Num, Name, Op, Call, Index]  # noqa: UP007


@dataclass(frozen=True)
class Expression:
    """A parsed expression: its tree, free variables (in order of appearance) and text."""

    tree: Node
    variables: tuple[str, ...]
    text: str

    def function(self, names: tuple[str, ...] | None = None) -> Callable[..., Any]:
        """A numpy function of the variables ``names`` (default: :attr:`variables`).

        Its signature names the parameters, so symgrad's traces and printed
        code use the user's variable names.
        """
        names = self.variables if names is None else tuple(names)
        missing = set(self.variables) - set(names)
        if missing:
            raise ExpressionError(f"no value for variable {sorted(missing)[0]}")
        tree = self.tree

        def f(*args: Any) -> Any:
            return evaluate(tree, dict(zip(names, args)))

        f.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names])
        f.expression = self  # type: ignore[attr-defined]  (for textbook formulas)
        return f


def evaluate(node: Node, env: dict[str, Any]) -> Any:
    """The value of ``node`` with numpy (or traced) values for the variables."""
    if isinstance(node, Num):
        return node.value
    if isinstance(node, Name):
        return env[node.name]
    if isinstance(node, Op):
        return node.fn(*(evaluate(a, env) for a in node.args))
    if isinstance(node, Index):
        return evaluate(node.value, env)[node.key()]
    return FUNCTIONS[node.name].impl(*(evaluate(a, env) for a in node.args),
                                     **dict(node.keywords))


# ---------------------------------------------------------------------------
# parsing


def parse(text: str) -> Expression:
    """Parse ``text`` against the allowlist, or raise :class:`ExpressionError`."""
    if not isinstance(text, str):
        raise ExpressionError("the expression must be text")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"the expression is {len(text)} characters long "
                              f"(the limit is {MAX_LENGTH})")
    for column, ch in enumerate(text, 1):
        if not (" " <= ch <= "~"):
            name = unicodedata.name(ch, "a control character")
            raise ExpressionError(
                f"character {ch!r} (U+{ord(ch):04X} {name}) at column {column} is not allowed: "
                "expressions are printable ASCII")
    if not text.strip():
        raise ExpressionError("the expression is empty")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        where = f" at column {e.offset}" if e.offset else ""
        detail = "" if e.msg == "invalid syntax" else f": {e.msg}"
        raise ExpressionError(f"invalid syntax{where}{detail}") from None
    except (RecursionError, MemoryError, ValueError):
        raise ExpressionError("the expression nests too deeply to parse") from None
    _check_size(tree.body)
    parser = _Parser(text.strip())
    node = parser.node(tree.body)
    return Expression(node, tuple(dict.fromkeys(parser.variables)), text.strip())


def _check_size(root: ast.AST) -> None:
    """Node count and depth, without recursion (the tree may be hostile)."""
    count = 0
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        count += 1
        if count > MAX_NODES:
            raise ExpressionError(f"the expression has more than {MAX_NODES} parts")
        if depth > MAX_DEPTH:
            raise ExpressionError(f"the expression nests deeper than {MAX_DEPTH} levels")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.variables: list[str] = []

    def part(self, node: ast.AST) -> str:
        segment = ast.get_source_segment(self.text, node) or ast.dump(node)
        return segment if len(segment) <= 60 else segment[:57] + "..."

    def refuse(self, what: str, node: ast.AST) -> ExpressionError:
        return ExpressionError(f"{what} is not allowed: {self.part(node)}")

    def node(self, node: ast.AST) -> Node:
        if isinstance(node, ast.Constant):
            return Num(self.number(node))
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            symbol, fn = _BINARY[type(node.op)]
            left, right = self.node(node.left), self.node(node.right)
            if symbol == "**":
                self.check_exponent(right, node.right)
            return self.fold(Op(symbol, fn, (left, right)), node)
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            symbol, unary = _UNARY[type(node.op)]
            return self.fold(Op(symbol, unary, (self.node(node.operand),)), node)
        if isinstance(node, ast.Compare):
            if len(node.ops) != 1:
                raise self.refuse("a chained comparison", node)
            if type(node.ops[0]) not in _COMPARE:
                raise self.refuse("this comparison", node)
            symbol, compare = _COMPARE[type(node.ops[0])]
            return Op(symbol, compare, (self.node(node.left), self.node(node.comparators[0])))
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Attribute):
            if node.attr == "T":
                return Call("transpose", (self.node(node.value),), ())
            raise self.refuse("attribute access (only .T, the transpose)", node)
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitXor):
            raise ExpressionError(f"^ is not a power here (Python reads it as xor): write "
                                  f"** instead, e.g. x**2: {self.part(node)}")
        if isinstance(node, (ast.BinOp, ast.UnaryOp)):
            raise self.refuse(f"the operator {type(node.op).__name__}", node)
        raise self.refuse(_REFUSED.get(type(node), type(node).__name__), node)

    def number(self, node: ast.Constant) -> float:
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            what = {str: "a string", bytes: "bytes", bool: "True/False outside keepdims="}
            raise self.refuse(what.get(type(value), f"the constant {value!r:.20}"), node)
        if isinstance(value, int) and abs(value) > MAX_CONSTANT:
            raise ExpressionError(f"the constant {self.part(node)} is too large "
                                  f"(the limit is {MAX_CONSTANT:g})")
        number = float(value)
        if not math.isfinite(number) or abs(number) > MAX_CONSTANT:
            raise ExpressionError(f"the constant {self.part(node)} is too large "
                                  f"(the limit is {MAX_CONSTANT:g})")
        return number

    def name(self, node: ast.Name) -> Node:
        name = node.id
        if name.startswith("_"):
            raise self.refuse("a name starting with _", node)
        if name in FUNCTIONS:
            raise ExpressionError(f"{name} is a function: call it, {name}(...)")
        if name in CONSTANTS:
            return Num(CONSTANTS[name])
        self.variables.append(name)
        return Name(name)

    def call(self, node: ast.Call) -> Node:
        if not isinstance(node.func, ast.Name):
            raise self.refuse("calling anything but a function name", node)
        name = node.func.id
        if name.startswith("_"):
            raise self.refuse("a name starting with _", node.func)
        fn = FUNCTIONS.get(name)
        if fn is None:
            raise ExpressionError(f"unknown function {name}(){_suggest(name)}; known: "
                                  f"{', '.join(sorted(FUNCTIONS))}")
        for a in node.args:
            if isinstance(a, ast.Starred):
                raise self.refuse("a starred argument", a)
        if not fn.min_args <= len(node.args) <= fn.max_args:
            raise ExpressionError(f"{name}() takes {fn.min_args} argument"
                                  f"{'s' if fn.min_args > 1 else ''}, got {len(node.args)}: "
                                  f"{self.part(node)}")
        keywords = []
        for k in node.keywords:
            if k.arg is None:
                raise self.refuse("a ** argument", k)
            if k.arg not in fn.keywords:
                raise ExpressionError(f"{name}() takes no keyword {k.arg}=: {self.part(node)}")
            keywords.append((k.arg, self.keyword(k.arg, k.value)))
        return Call(name, tuple(self.node(a) for a in node.args), tuple(keywords))

    def subscript(self, node: ast.Subscript) -> Node:
        """``x[0]``, ``x[1:]``, ``A[0, ::2]``: literal integers and slices only."""
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if len(items) > 8:
            raise self.refuse("indexing with more than 8 items", node)
        index: list[Any] = []
        for item in items:
            if isinstance(item, ast.Slice):
                index.append(tuple(None if part is None else self.integer(part, node)
                                   for part in (item.lower, item.upper, item.step)))
                if index[-1][2] == 0:
                    raise ExpressionError(f"a slice step cannot be zero: {self.part(node)}")
            else:
                index.append(self.integer(item, node))
        return Index(self.node(node.value), tuple(index))

    def integer(self, node: ast.AST, whole: ast.AST) -> int:
        sign = 1
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            sign, node = -1, node.operand
        if (isinstance(node, ast.Constant) and isinstance(node.value, int)
                and not isinstance(node.value, bool) and node.value < 2**31):
            return sign * node.value
        raise ExpressionError(f"an index is a literal integer or slice (x[0], x[1:], "
                              f"A[0, 1:3]), not {self.part(node)}: {self.part(whole)}")

    def keyword(self, key: str, value: ast.AST) -> Any:
        if key == "keepdims":
            if isinstance(value, ast.Constant) and isinstance(value.value, bool):
                return value.value
            raise ExpressionError(f"keepdims= takes True or False, not {self.part(value)}")
        if key == "ddof":
            if (isinstance(value, ast.Constant) and isinstance(value.value, int)
                    and not isinstance(value.value, bool) and 0 <= value.value < 32):
                return value.value
            raise ExpressionError(f"ddof= takes a small non-negative integer, not "
                                  f"{self.part(value)}")
        items = value.elts if isinstance(value, ast.Tuple) else [value]
        axes = [self.axis(v) for v in items]
        return tuple(axes) if isinstance(value, ast.Tuple) else axes[0]

    def axis(self, node: ast.AST) -> int:
        sign = 1
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            sign, node = -1, node.operand
        if (isinstance(node, ast.Constant) and isinstance(node.value, int)
                and not isinstance(node.value, bool) and node.value < 32):
            return sign * node.value
        raise ExpressionError(f"axis= takes small integers, not {self.part(node)}")

    def check_exponent(self, exponent: Node, node: ast.AST) -> None:
        if isinstance(exponent, Num) and abs(exponent.value) > MAX_EXPONENT:
            raise ExpressionError(f"the exponent {self.part(node)} = {exponent.value:g} is too "
                                  f"large (the limit is {MAX_EXPONENT:g})")

    def fold(self, op: Op, node: ast.AST) -> Node:
        """An operator on constants becomes a constant, so limits apply to it too."""
        if not all(isinstance(a, Num) for a in op.args):
            return op
        with np.errstate(all="ignore"):
            value = float(op.fn(*(np.float64(a.value) for a in op.args)))  # type: ignore[union-attr]
        if not math.isfinite(value) or abs(value) > MAX_CONSTANT:
            raise ExpressionError(f"the constant {self.part(node)} is too large or undefined "
                                  f"(the limit is {MAX_CONSTANT:g})")
        return Num(value)


def _suggest(name: str) -> str:
    """``: did you mean log?`` for ``ln``, the closest known names for a typo, or ``""``."""
    import difflib

    if name in _ALIASES:
        return f": did you mean {_ALIASES[name]}?"
    close = difflib.get_close_matches(name, [*FUNCTIONS, *CONSTANTS], n=3, cutoff=0.6)
    return f": did you mean {' or '.join(close)}?" if close else ""


__all__ = ["parse", "Expression", "ExpressionError", "FUNCTIONS", "CONSTANTS", "evaluate"]
