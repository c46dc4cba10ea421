"""Gradients in the notation of a textbook: ``softmax(z) - y``, ``2⋅Xᵀ⋅(X⋅w - y)``,
``A⁻ᵀ``, ``(A + Aᵀ)⋅x``, ``x/‖x‖``, whatever the sizes.

:func:`derive` differentiates the expression the user typed (the tree of
:mod:`.expr`), in reverse mode, at the level of the functions the user called:
``logsumexp``, ``softmax``, ``log(det(A))``, ``sqrt(sum(x*x))`` keep their names,
and their derivatives are written with named functions (``softmax``, ``A⁻ᵀ``,
``x/‖x‖``), not with the primitives that symgrad's kernels compute them with.
Values are SymPy matrix expressions (:mod:`.notation`) over ``MatrixSymbol`` s
whose dimensions are symbols (a vector of ``--shape x=300`` is ``x: n×1``), so
the formula is the same text for every size.

Why here and not from symgrad's adjoint graph: the adjoint graph is written in
primitives (a ``softmax`` is ``exp(z - max(z))/sum(...)``, and how a rule avoids
overflow, with ``max`` or ``where``, is the rule's own business and changes);
recognising textbook forms in it would tie the printer to those choices. The
typed expression says what the user meant. The formula is never trusted on its
own: :func:`.symbolic._formulas` evaluates it (:func:`.notation.numeric`) at a
random point against symgrad's own gradient and prints it only if they agree,
else the per-element formulas of the adjoint graph as before.

Arrays of rank 1 are column vectors, of rank 2 matrices; rank 3 and more, ``axis=``
reductions, indexing, comparisons and broadcasting other than with a scalar are
not covered (:class:`Unsupported`): those get the per-element formulas.

The matrix-expression building blocks and the tidying of the result for print are
:mod:`.textbook_forms`'.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import sympy as sp

from .expr import Call, Expression, Index, Name, Num, Op
from .notation import InvT, LogSumExp, Norm, RowSum, Show, Softmax, SumAll, sigmoid, softplus
from .textbook_forms import add, elem, lift, scale, sum_all, tidy
from .textbook_forms import name_repeats as _name_repeats
from .textbook_forms import norm_pattern as _norm_pattern
from .textbook_forms import number as _number


class Unsupported(Exception):
    """No textbook form for this expression: print the per-element formulas."""


#: elementwise functions by the name the expression calls them, as SymPy functions
ELEMENTWISE = {
    "exp": sp.exp, "log": sp.log, "sqrt": sp.sqrt, "sin": sp.sin, "cos": sp.cos,
    "tan": sp.tan, "tanh": sp.tanh, "sinh": sp.sinh, "cosh": sp.cosh, "arcsin": sp.asin,
    "arccos": sp.acos, "arctan": sp.atan, "abs": sp.Abs, "absolute": sp.Abs,
    "sigmoid": sigmoid, "softplus": softplus,
    "log1p": lambda t: sp.log(1 + t), "expm1": lambda t: sp.exp(t) - 1,
    "square": lambda t: t**2, "reciprocal": lambda t: 1 / t,
}

#: what a formula's derivative assumes where the function has a kink, said once below it
KINKS = {"abs": "sign(0) = 0", "absolute": "sign(0) = 0", "norm": "x/‖x‖ is 0 at x = 0"}

LETTERS = "nmkpqrst"


@dataclass(frozen=True)
class Formula:
    """The gradient with respect to each variable, and the notes said once below it."""

    grads: dict[str, Any]
    notes: tuple[str, ...]
    dims: dict[Any, int]          # dimension symbol -> its size
    symbols: dict[str, Any]       # variable -> its Symbol or MatrixSymbol
    where: dict[Any, Any] = dataclasses.field(default_factory=dict)
    # a name (MatrixSymbol) -> what it stands for: ``P = softmax(Q⋅Kᵀ/√d)``, printed
    # below the formulas, for a part that a formula would otherwise repeat


def derive(expression: Expression, shapes: dict[str, tuple[int, ...]],
           wrt: tuple[str, ...]) -> Formula:
    """The gradient of the scalar ``expression`` with respect to ``wrt``, in matrix
    notation, or :class:`Unsupported`."""
    return _Deriver(shapes).run(expression, wrt)


def _cols(shape: tuple[int, ...]) -> tuple[int, int]:
    return (shape[0], 1) if len(shape) == 1 else shape  # type: ignore[return-value]


class _Deriver:
    def __init__(self, shapes: dict[str, tuple[int, ...]]):
        if any(len(s) > 2 for s in shapes.values()):
            raise Unsupported("rank 3 and more")
        self.shapes = shapes
        self.dims: dict[int, Any] = {}
        self.symbols: dict[str, Any] = {}
        for name, shape in shapes.items():
            if not shape:
                self.symbols[name] = sp.Symbol(name, real=True)
            else:
                r, c = _cols(shape)
                self.symbols[name] = sp.MatrixSymbol(name, self.dim(r), self.dim(c))
        self.grads: dict[str, Any] = {}
        self.notes: list[str] = []
        self._memo: dict[int, Any] = {}

    def dim(self, size: int) -> Any:
        """The symbol of a size (n, m, ...: not a variable's name); 1 stays 1."""
        if size == 1:
            return sp.Integer(1)
        if size not in self.dims:
            letters = [c for c in LETTERS if c not in self.shapes]
            if len(self.dims) >= len(letters):
                raise Unsupported("too many sizes")
            self.dims[size] = sp.Symbol(letters[len(self.dims)], integer=True, positive=True)
        return self.dims[size]

    def run(self, expression: Expression, wrt: tuple[str, ...]) -> Formula:
        value, shape = self.forward(expression.tree)
        if shape:
            raise Unsupported("the function is not scalar")
        self.back(expression.tree, sp.Integer(1))
        grads = {}
        for name in wrt:
            g = self.grads.get(name, sp.Integer(0))
            grads[name] = tidy(self.as_shape(g, self.shapes[name]))
        grads, where = _name_repeats(grads, set(self.symbols))
        return Formula(grads, tuple(dict.fromkeys(self.notes)),
                       {s: n for n, s in self.dims.items()}, dict(self.symbols), where)

    # -- values ---------------------------------------------------------------

    def forward(self, node: Any) -> tuple[Any, tuple[int, ...]]:
        """The SymPy value of ``node`` and its numpy shape (memoized on the node)."""
        key = id(node)
        if key not in self._memo:  # the node is kept alive beside it: ids stay unique
            self._memo[key] = (self._forward(node), node)
        return self._memo[key][0]

    def _forward(self, node: Any) -> tuple[Any, tuple[int, ...]]:
        if isinstance(node, Num):
            return _number(node.value), ()
        if isinstance(node, Name):
            return self.symbols[node.name], self.shapes[node.name]
        if isinstance(node, Index):
            raise Unsupported("indexing")
        if isinstance(node, Op):
            return self.op(node)
        return self.call(node)

    def op(self, node: Op) -> tuple[Any, tuple[int, ...]]:
        if node.symbol == "@":
            return self.matmul(*(self.forward(a) for a in node.args))
        args = [self.forward(a) for a in node.args]
        if node.symbol in ("neg", "-") and len(args) == 1:
            return self.ew(lambda a: -a, args)
        if node.symbol == "+" and len(args) == 1:
            return args[0]
        fns = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
               "/": lambda a, b: a / b, "**": lambda a, b: a**b}
        if node.symbol not in fns:
            raise Unsupported(f"the operator {node.symbol}")
        if node.symbol == "*" and all(s for _, s in args):
            if args[0][1] != args[1][1]:
                raise Unsupported("broadcasting")
            return sp.HadamardProduct(args[0][0], args[1][0]), args[0][1]
        return self.ew(fns[node.symbol], args)

    def ew(self, fn: Any, args: list[tuple[Any, tuple[int, ...]]]) -> tuple[Any, tuple]:
        """An elementwise function of values (arrays of one shape, or scalars)."""
        shapes = {s for _, s in args if s}
        if len(shapes) > 1:
            raise Unsupported("broadcasting")
        shape = shapes.pop() if shapes else ()
        body = fn(*(lift(v) for v, _ in args))
        return (elem(body, self.matrix_shape(shape)) if shape else body), shape

    def matrix_shape(self, shape: tuple[int, ...]) -> tuple[Any, Any]:
        r, c = _cols(shape)
        return self.dim(r), self.dim(c)

    def matmul(self, a: tuple[Any, tuple], b: tuple[Any, tuple]) -> tuple[Any, tuple]:
        (x, sx), (y, sy) = a, b
        if not sx or not sy:
            raise Unsupported("@ of a scalar")
        if len(sx) == 1 and len(sy) == 1:
            return Show(sp.MatMul(x.T, y)), ()
        if len(sx) == 1:
            return sp.MatMul(y.T, x), (sy[1],)  # x@Y is (Yᵀx)ᵀ: a vector is a column
        if len(sy) == 1:
            return sp.MatMul(x, y), (sx[0],)
        return sp.MatMul(x, y), (sx[0], sy[1])

    def call(self, node: Call) -> tuple[Any, tuple[int, ...]]:
        if node.keywords:
            raise Unsupported("axis= and keepdims=")
        name = node.name
        norm_of = _norm_pattern(node)
        if norm_of is not None:
            x, s = self.forward(norm_of)
            return (Norm(x) if s else sp.Abs(x)), ()
        if name == "log" and isinstance(node.args[0], Call) and node.args[0].name == "det":
            name, node = "logdet", node.args[0]
        args = [self.forward(a) for a in node.args]
        if name in ELEMENTWISE:
            if name in KINKS:
                self.notes.append(KINKS[name])
            return self.ew(ELEMENTWISE[name], args)
        (x, s), *rest = args
        if name in ("sum", "mean"):
            if not s:
                return x, ()
            total = SumAll(x)
            if name == "mean":
                r, c = self.matrix_shape(s)
                total = total / (r * c)
            return total, ()
        if name == "norm":
            self.notes.append(KINKS["norm"])
            return (Norm(x) if s else sp.Abs(x)), ()
        if name == "logsumexp" and len(s) == 1:
            return LogSumExp(x), ()
        if name == "softmax" and s:  # of a vector, or of each row of a matrix (axis=-1)
            return Softmax(x), s
        if name == "log_softmax" and len(s) == 1:
            return elem(lift(x) - LogSumExp(x), self.matrix_shape(s)), s
        if name in ("dot",):
            return self.matmul(args[0], args[1])
        if len(s) == 2 and s[0] == s[1]:
            if name == "det":
                return sp.Determinant(x), ()
            if name == "logdet":
                return sp.log(sp.Determinant(x)), ()
            if name == "inv":
                return sp.Inverse(x), s
            if name == "trace":
                return sp.Trace(x), ()
            if name == "solve":
                y, sy = rest[0]
                return sp.MatMul(sp.Inverse(x), y), sy
        if name == "transpose" and len(s) == 2:
            return sp.Transpose(x), (s[1], s[0])
        if name == "transpose" and len(s) < 2:
            return x, s
        raise Unsupported(f"{name}()")

    # -- cotangents ------------------------------------------------------------

    def as_shape(self, g: Any, shape: tuple[int, ...]) -> Any:
        """``g`` (a scalar standing for every element, or a matrix) as a matrix."""
        if not shape or getattr(g, "is_Matrix", False):
            return g
        return scale(g, sp.OneMatrix(*self.matrix_shape(shape)))

    def back(self, node: Any, g: Any) -> None:
        """Send the cotangent ``g`` of ``node`` to its variables."""
        if g == 0:
            return
        if isinstance(node, Num):
            return
        if isinstance(node, Name):
            previous = self.grads.get(node.name)
            self.grads[node.name] = g if previous is None else add(previous, g)
            return
        if isinstance(node, Op):
            return self.back_op(node, g)
        return self.back_call(node, g)

    def reduce_to(self, g: Any, shape: tuple[int, ...], target: tuple[int, ...]) -> Any:
        """The cotangent of a scalar operand broadcast to ``shape``: its sum."""
        if target or not shape:
            return g
        if getattr(g, "is_Matrix", False):
            return sum_all(g)
        r, c = self.matrix_shape(shape)
        return g * r * c

    def back_op(self, node: Op, g: Any) -> None:
        _, shape = self.forward(node)
        args = [self.forward(a) for a in node.args]
        sym = node.symbol
        if len(args) == 1:
            if sym in ("neg", "-"):
                self.back(node.args[0], scale(-1, g))
            elif sym == "+":
                self.back(node.args[0], g)
            return
        (a, sa), (b, sb) = args
        if sym == "@":
            return self.back_matmul(node, g, (a, sa), (b, sb))
        if sym in ("+", "-"):
            self.back(node.args[0], self.reduce_to(g, shape, sa))
            self.back(node.args[1], self.reduce_to(scale(-1 if sym == "-" else 1, g), shape, sb))
            return
        la, lb = lift(a), lift(b)
        if sym == "*":
            da, db = lb, la
        elif sym == "/":
            da, db = 1 / lb, -la / lb**2
        elif sym == "**":
            da = lb * la ** (lb - 1)
            db = sp.log(la) * la**lb if not isinstance(node.args[1], Num) else 0
        else:
            raise Unsupported(sym)
        for child, d, s in ((node.args[0], da, sa), (node.args[1], db, sb)):
            if d != 0:
                self.back(child, self.reduce_to(self.times(g, d, shape), shape, s))

    def times(self, g: Any, d: Any, shape: tuple[int, ...]) -> Any:
        """The cotangent ``g`` times the elementwise derivative body ``d``."""
        if not shape:
            return g * d
        return elem(lift(g) * d, self.matrix_shape(shape))

    def back_matmul(self, node: Any, g: Any, a: tuple, b: tuple) -> None:
        (x, sx), (y, _) = a, b
        _, shape = self.forward(node)
        g = self.as_shape(g, shape)
        if not shape:  # x·y of two vectors
            self.back(node.args[0], scale(g, y))
            self.back(node.args[1], scale(g, x))
        elif len(sx) == 1:  # (Yᵀx): d x = Y g, d Y = x gᵀ
            self.back(node.args[0], sp.MatMul(y, g))
            self.back(node.args[1], sp.MatMul(x, g.T))
        else:  # X Y (Y a matrix or a column)
            self.back(node.args[0], sp.MatMul(g, y.T))
            self.back(node.args[1], sp.MatMul(x.T, g))

    def back_call(self, node: Call, g: Any) -> None:
        value, shape = self.forward(node)
        norm_of = _norm_pattern(node)
        if norm_of is not None:
            return self.back(norm_of, self.norm_grad(g, self.forward(norm_of)))
        name = node.name
        if name == "log" and isinstance(node.args[0], Call) and node.args[0].name == "det":
            name, node = "logdet", node.args[0]
        (x, s) = self.forward(node.args[0])
        arg = node.args[0]
        if name in ELEMENTWISE:
            t = sp.Dummy("t", real=True)
            d = sp.diff(ELEMENTWISE[name](t), t)
            if name in ("abs", "absolute"):
                d = sp.sign(t)
            return self.back(arg, self.times(g, d.xreplace({t: lift(x)}), shape))
        if name in ("sum", "mean"):
            if s and name == "mean":
                r, c = self.matrix_shape(s)
                g = g / (r * c)
            return self.back(arg, g)
        if name == "norm":
            return self.back(arg, self.norm_grad(g, (x, s)))
        if name == "logsumexp":
            return self.back(arg, scale(g, Softmax(x)))
        if name == "softmax":  # s∘(g - sᵀg); of each row of a matrix: P∘(G - rowsum(P∘G))
            sm = Softmax(x)
            if not getattr(g, "is_Matrix", False):
                return  # a constant cotangent: softmax sums to 1
            dot = Show(sp.MatMul(sm.T, g)) if len(s) == 1 else \
                Show(RowSum(sp.HadamardProduct(sm, g)))
            inner = elem(lift(g) - dot, self.matrix_shape(s))
            return self.back(arg, sp.HadamardProduct(sm, inner))
        if name == "log_softmax":  # g - softmax(z)·sum(g)
            total = sum_all(g) if getattr(g, "is_Matrix", False) else \
                g * self.matrix_shape(s)[0]
            return self.back(arg, elem(lift(g) - Show(Softmax(x)) * total,
                                       self.matrix_shape(s)))
        if name == "dot":
            return self.back_matmul(node, g, self.forward(node.args[0]),
                                    self.forward(node.args[1]))
        if name == "det":
            return self.back(arg, scale(g * sp.Determinant(x), InvT(x)))
        if name == "logdet":
            return self.back(arg, scale(g, InvT(x)))
        if name == "inv":  # -A⁻ᵀ g A⁻ᵀ
            g = self.as_shape(g, shape)
            return self.back(arg, scale(-1, sp.MatMul(InvT(x), g, InvT(x))))
        if name == "trace":
            return self.back(arg, scale(g, sp.Identity(self.matrix_shape(s)[0])))
        if name == "solve":  # u = A⁻¹b: d b = A⁻ᵀ g, d A = -(A⁻ᵀ g) uᵀ
            g = self.as_shape(g, shape)
            gb = sp.MatMul(InvT(x), g)
            self.back(node.args[1], gb)
            return self.back(arg, scale(-1, sp.MatMul(gb, value.T)))
        if name == "transpose":
            return self.back(arg, g.T if getattr(g, "is_Matrix", False) else g)
        raise Unsupported(f"{name}()")

    def norm_grad(self, g: Any, x: tuple[Any, tuple]) -> Any:
        v, s = x
        if not s:
            return g * sp.sign(v)
        return elem(g * Show(v) / Norm(v), self.matrix_shape(s))


__all__ = ["derive", "Formula", "Unsupported", "KINKS"]
