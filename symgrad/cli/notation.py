"""The SymPy objects of textbook formulas, how they print and how they evaluate.

A textbook formula (:mod:`.textbook`) is a SymPy matrix expression over
``MatrixSymbol`` s whose dimensions are symbols (``X: n×m``), so its text does not
depend on the sizes. SymPy's own classes carry matrix algebra (``MatMul``,
``Transpose``, ``Inverse``, ``HadamardProduct``, ``Trace``, ``Determinant``); the
classes here add what SymPy lacks or prints badly:

- :class:`Elem`: an array whose elements all read ``body``, a scalar formula in
  which :class:`Show` atoms stand for the element of a matrix at the same place:
  ``tanh(W⋅x + b)``, ``softmax(z) - y`` (functions of arrays apply elementwise);
- :class:`Softmax`, :class:`InvT` (``A⁻ᵀ``), and the scalars :class:`SumAll`
  (``sum(M)``), :class:`Norm` (``‖x‖``), :class:`LogSumExp`; ``sigmoid`` and
  ``softplus`` as SymPy functions that know their derivatives.

:func:`numeric` evaluates such an object with numbers for the symbols, walking the
object itself (not its text): the test of :mod:`.textbook`'s formulas.
:func:`render` prints it as text (numpy's notation: ``@``, ``.T``, ``*`` for the
elementwise product), pretty (``⋅``, ``ᵀ``, ``∘``) or LaTeX.
"""

from __future__ import annotations

from typing import Any

import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixExpr
from sympy.printing.latex import LatexPrinter
from sympy.printing.precedence import PRECEDENCE, precedence
from sympy.printing.pretty.pretty import PrettyPrinter
from sympy.printing.pretty.stringpict import prettyForm
from sympy.printing.str import StrPrinter


class sigmoid(sp.Function):  # noqa: N801  (printed by its name)
    """The logistic function 1/(1 + exp(-x))."""

    def fdiff(self, argindex: int = 1) -> Any:
        s = sigmoid(self.args[0])
        return s * (1 - s)

    def _eval_rewrite_as_exp(self, x: Any, **kwargs: Any) -> Any:
        return 1 / (1 + sp.exp(-x))


class softplus(sp.Function):  # noqa: N801
    """log(1 + exp(x))."""

    def fdiff(self, argindex: int = 1) -> Any:
        return sigmoid(self.args[0])

    def _eval_rewrite_as_exp(self, x: Any, **kwargs: Any) -> Any:
        return sp.log(1 + sp.exp(x))


class Show(sp.Expr):
    """Inside an :class:`Elem`'s body: the element of a matrix at the body's place;
    elsewhere (a 1×1 matrix such as ``xᵀ⋅A⋅x``): that matrix as a scalar."""

    is_commutative = True
    is_real = True

    @property
    def matrix(self) -> Any:
        return self.args[0]

    @property
    def precedence(self) -> int:
        """A product of matrices in a product or power of elements is bracketed:
        ``y ∘ (X⋅w)``, ``(X⋅w)²`` (in numpy's notation ``y*(X@w)``: ``*`` and ``@``
        bind alike, left to right)."""
        if isinstance(self.args[0], (sp.MatMul, sp.HadamardProduct, sp.MatAdd, sp.MatPow)):
            return PRECEDENCE["Add"]
        return precedence(self.args[0])


class SumAll(sp.Expr):
    """The sum of all elements of a matrix."""

    is_commutative = True
    is_real = True


class Norm(sp.Expr):
    """The Euclidean (Frobenius) norm of a matrix."""

    is_commutative = True
    is_real = True


class LogSumExp(sp.Expr):
    """log(sum(exp(z)))."""

    is_commutative = True
    is_real = True


class Elem(MatrixExpr):
    """An array of shape (rows, cols) whose elements read ``body`` (see the module)."""

    def __new__(cls, body: Any, rows: Any, cols: Any) -> Any:
        # strict: SymPy objects and numbers only, never text (no user text reaches here)
        args = (sp.sympify(a, strict=True) for a in (body, rows, cols))
        return MatrixExpr.__new__(cls, *args)

    @property
    def body(self) -> Any:
        return self.args[0]

    @property
    def shape(self) -> tuple[Any, Any]:
        return (self.args[1], self.args[2])

    @property
    def precedence(self) -> int:
        return precedence(self.body)

    def _entry(self, i: Any, j: Any, **kwargs: Any) -> Any:
        raise TypeError("Elem has no symbolic entries; use notation.numeric")


class Softmax(MatrixExpr):
    """softmax of a column vector: exp(z)/sum(exp(z))."""

    @property
    def shape(self) -> tuple[Any, Any]:
        return self.args[0].shape

    def _entry(self, i: Any, j: Any, **kwargs: Any) -> Any:
        raise TypeError("Softmax has no symbolic entries; use notation.numeric")


class RowSum(MatrixExpr):
    """The sums of the rows of a matrix, a column; in an :class:`Elem`'s body the
    sum of the element's row."""

    @property
    def shape(self) -> tuple[Any, Any]:
        return (self.args[0].shape[0], sp.Integer(1))

    def _entry(self, i: Any, j: Any, **kwargs: Any) -> Any:
        raise TypeError("RowSum has no symbolic entries; use notation.numeric")


class InvT(MatrixExpr):
    """The inverse of the transpose, ``A⁻ᵀ``."""

    @property
    def shape(self) -> tuple[Any, Any]:
        return self.args[0].shape

    def _entry(self, i: Any, j: Any, **kwargs: Any) -> Any:
        raise TypeError("InvT has no symbolic entries; use notation.numeric")


# ---------------------------------------------------------------------------
# numbers: the object evaluated with numbers for its symbols


def numeric(expr: Any, env: dict[Any, Any], digits: int = 50) -> Any:
    """``expr`` with ``env`` (a MatrixSymbol -> sp.Matrix, a Symbol -> number)
    substituted: a SymPy number, or an ``sp.Matrix`` of numbers, ``digits``
    significant digits."""

    memo: dict[Any, Any] = {}

    def mat(e: Any) -> Any:
        if e in memo:
            return memo[e]
        memo[e] = value = _mat(e)
        return value

    def _mat(e: Any) -> Any:
        if isinstance(e, sp.MatrixSymbol):
            return env[e]
        if isinstance(e, Elem):
            shows = {s: mat(s.matrix) for s in _shows(e.body)}
            rows, cols = (int(sp.sympify(d).xreplace(env)) for d in e.shape)
            return sp.Matrix(rows, cols, lambda i, j: sp.N(fill(  # a column: along rows
                e.body, {s: m[i, j if m.shape[1] > 1 else 0] for s, m in shows.items()}),
                digits))
        if isinstance(e, sp.MatMul):
            out: Any = sp.Integer(1)
            for a in e.args:
                out = out * (mat(a) if a.is_Matrix else scalar(a))
            return out
        if isinstance(e, sp.MatAdd):
            parts = [mat(a) for a in e.args]
            return sum(parts[1:], parts[0])
        if isinstance(e, sp.Transpose):
            return mat(e.arg).T
        if isinstance(e, sp.Inverse):
            return mat(e.arg).inv()
        if isinstance(e, InvT):
            return mat(e.args[0]).T.inv()
        if isinstance(e, sp.HadamardProduct):
            parts = [mat(a) for a in e.args]
            out = parts[0]
            for p in parts[1:]:
                out = out.multiply_elementwise(p)
            return out
        if isinstance(e, Softmax):  # of a column, or of each row of a matrix
            z = mat(e.args[0])
            if z.shape[1] == 1:
                top = max(z)
                w = z.applyfunc(lambda t: sp.exp(t - top))
                return w / sum(w)
            rows = [mat(Softmax(sp.ImmutableMatrix(z.row(i).T))).T for i in range(z.shape[0])]
            return sp.Matrix.vstack(*rows)
        if isinstance(e, RowSum):
            m = mat(e.args[0])
            return sp.Matrix([sum(m.row(i)) for i in range(m.shape[0])])
        if isinstance(e, sp.ImmutableMatrix):
            return sp.Matrix(e)
        if isinstance(e, sp.MatPow) and e.exp.is_Integer:
            return mat(e.base) ** int(e.exp)
        if isinstance(e, sp.OneMatrix):
            return sp.ones(*(int(d.xreplace(env)) for d in e.shape))
        if isinstance(e, sp.Identity):
            return sp.eye(int(e.shape[0].xreplace(env)))
        raise TypeError(f"cannot evaluate {type(e).__name__}")

    def scalar(e: Any) -> Any:
        if e in memo:
            return memo[e]
        memo[e] = value = sp.N(fill(e, {}), digits)
        return value

    def fill(e: Any, at: dict[Any, Any]) -> Any:
        """``e`` with numbers: ``at`` gives the elementwise Show atoms' values."""
        if isinstance(e, SumAll):
            return sum(mat(e.args[0]))
        if isinstance(e, Norm):
            return sp.sqrt(sum(t * t for t in mat(e.args[0])))
        if isinstance(e, LogSumExp):
            z = mat(e.args[0])
            top = max(z)
            return top + sp.log(sum(sp.exp(t - top) for t in z))
        if isinstance(e, sp.Trace):
            return mat(e.arg).trace()
        if isinstance(e, sp.Determinant):
            return mat(e.arg).det()
        if isinstance(e, Show):
            return at[e] if e in at else mat(e.matrix)[0, 0]
        if not e.args:
            return env.get(e, e)
        args = [fill(a, at) for a in e.args]
        if e.func is sigmoid:
            return 1 / (1 + sp.exp(-args[0]))
        if e.func is softplus:
            return sp.log(1 + sp.exp(args[0]))
        return e.func(*args)

    return mat(expr) if getattr(expr, "is_Matrix", False) else scalar(expr)


_MATRIX_SCALARS = (SumAll, Norm, LogSumExp, sp.Trace, sp.Determinant)


def _shows(body: Any) -> set[Any]:
    """The Show atoms of an elementwise body, not those inside a sum, norm, ..."""
    found: set[Any] = set()
    stack = [body]
    while stack:
        e = stack.pop()
        if isinstance(e, Show):
            found.add(e)
        elif not isinstance(e, _MATRIX_SCALARS):
            stack.extend(e.args)
    return found


# ---------------------------------------------------------------------------
# text: three printers


def _negatives_last(terms: list[Any]) -> list[Any]:
    """``softmax(z) - y``, not ``-y + softmax(z)``."""
    return sorted(terms, key=lambda t: t.could_extract_minus_sign())


def _arrays(e: Any) -> list[Any]:
    return [a for a in e.args if _shows(a)]


class TextPrinter(StrPrinter):
    """numpy's notation: ``2*X.T@(X@w - y)``, ``inv(A).T``, ``*`` elementwise."""

    def _as_ordered_terms(self, expr: Any, order: Any = None) -> list[Any]:
        return _negatives_last(super()._as_ordered_terms(expr, order=order))

    def _print_Show(self, e: Any) -> str:
        return self._print(e.matrix)

    def _print_Elem(self, e: Any) -> str:
        return self._print(e.body)

    def _print_MatMul(self, e: Any) -> str:
        c, factors = e.as_coeff_matrices()
        text = "@".join(self.parenthesize(f, PRECEDENCE["Mul"]) for f in factors)
        if c == 1:
            return text
        if c == -1:
            return "-" + text
        return f"{self.parenthesize(c, PRECEDENCE['Mul'])}*{text}"

    def _print_HadamardProduct(self, e: Any) -> str:
        return "*".join(self.parenthesize(a, PRECEDENCE["Mul"]) for a in e.args)

    def _print_Transpose(self, e: Any) -> str:
        return f"{self.parenthesize(e.arg, PRECEDENCE['Pow'])}.T"

    def _print_Inverse(self, e: Any) -> str:
        return f"inv({self._print(e.arg)})"

    def _print_InvT(self, e: Any) -> str:
        return f"inv({self._print(e.args[0])}).T"

    def _print_Softmax(self, e: Any) -> str:
        return f"softmax({self._print(e.args[0])})"

    def _print_SumAll(self, e: Any) -> str:
        return f"sum({self._print(e.args[0])})"

    def _print_RowSum(self, e: Any) -> str:
        return f"rowsum({self._print(e.args[0])})"

    def _print_Norm(self, e: Any) -> str:
        return f"norm({self._print(e.args[0])})"

    def _print_LogSumExp(self, e: Any) -> str:
        return f"logsumexp({self._print(e.args[0])})"

    def _print_Trace(self, e: Any) -> str:
        return f"trace({self._print(e.arg)})"

    def _print_Determinant(self, e: Any) -> str:
        return f"det({self._print(e.arg)})"

    def _print_Identity(self, e: Any) -> str:
        return "I"

    def _print_MatPow(self, e: Any) -> str:  # A**2 would read as elementwise
        if e.exp.is_Integer and 0 < e.exp < 5:
            return "@".join([self.parenthesize(e.base, PRECEDENCE["Mul"], strict=True)]
                            * int(e.exp))
        return f"matrix_power({self._print(e.base)}, {self._print(e.exp)})"

    def _print_OneMatrix(self, e: Any) -> str:
        return "ones"


class Pretty(PrettyPrinter):
    """``2⋅Xᵀ⋅(X⋅w - y)``, ``A⁻ᵀ``, ``∘`` for the elementwise product."""

    def _as_ordered_terms(self, expr: Any, order: Any = None) -> list[Any]:
        return _negatives_last(super()._as_ordered_terms(expr, order=order))

    def _print_Show(self, e: Any) -> Any:
        return self._print(e.matrix)

    def _print_Elem(self, e: Any) -> Any:
        return self._print(e.body)

    def _print_Mul(self, e: Any) -> Any:
        if len(_arrays(e)) < 2:
            return super()._print_Mul(e)
        return self._hadamard(e.args)

    def _hadamard(self, args: Any) -> Any:
        coeff = sp.Mul(*[a for a in args if not _shows(a) and not a.is_Matrix])
        parts = [a for a in args if _shows(a) or a.is_Matrix]
        form = None
        for a in parts:
            p = self._print(a)
            if precedence(a) < PRECEDENCE["Mul"] or isinstance(a, sp.MatMul):
                p = prettyForm(*p.parens())
            form = p if form is None else prettyForm(*form.right(" ∘ ", p))
        if coeff == -1:
            return prettyForm(*form.left("-"))
        if coeff != 1:
            c = self._print(coeff)
            return prettyForm(*prettyForm(*c.right("⋅")).right(form))
        return form

    def _print_HadamardProduct(self, e: Any) -> Any:
        return self._hadamard(e.args)

    def _print_MatMul(self, e: Any) -> Any:
        """As SymPy's, with an elementwise factor bracketed: ``Xᵀ⋅(y ∘ σ(X⋅w))``."""
        args = list(e.args)
        for i, a in enumerate(args):
            bracket = isinstance(a, (sp.MatAdd, sp.HadamardProduct)) or (
                isinstance(a, Elem) and precedence(a) <= PRECEDENCE["Mul"])
            args[i] = prettyForm(*self._print(a).parens()) if bracket and len(args) > 1 \
                else self._print(a)
        return prettyForm.__mul__(*args)

    def _print_InvT(self, e: Any) -> Any:
        base = self._print(e.args[0])
        if not isinstance(e.args[0], sp.MatrixSymbol):
            base = prettyForm(*base.parens())
        return prettyForm(*base.right("⁻ᵀ"))

    def _named(self, name: str, arg: Any) -> Any:
        return prettyForm(*prettyForm(name).right(prettyForm(*self._print(arg).parens())))

    def _print_Softmax(self, e: Any) -> Any:
        return self._named("softmax", e.args[0])

    def _print_SumAll(self, e: Any) -> Any:
        return self._named("sum", e.args[0])

    def _print_RowSum(self, e: Any) -> Any:
        return self._named("rowsum", e.args[0])

    def _print_LogSumExp(self, e: Any) -> Any:
        return self._named("logsumexp", e.args[0])

    def _print_Norm(self, e: Any) -> Any:
        p = self._print(e.args[0])
        return prettyForm(*prettyForm(*p.left("‖")).right("‖"))


class Latex(LatexPrinter):
    """``2 X^{T} \\left(X w - y\\right)``, ``A^{-T}``, ``\\circ``."""

    def _as_ordered_terms(self, expr: Any, order: Any = None) -> list[Any]:
        return _negatives_last(super()._as_ordered_terms(expr, order=order))

    def _print_Show(self, e: Any) -> str:
        return self._print(e.matrix)

    def _print_Elem(self, e: Any) -> str:
        return self._print(e.body)

    def _print_Mul(self, e: Any) -> str:
        if len(_arrays(e)) < 2:
            return super()._print_Mul(e)
        coeff = sp.Mul(*[a for a in e.args if not _shows(a)])
        text = r" \circ ".join(self.parenthesize(a, PRECEDENCE["Mul"]) for a in _arrays(e))
        return text if coeff == 1 else ("-" + text if coeff == -1 else
                                        f"{self._print(coeff)} {text}")

    def _print_InvT(self, e: Any) -> str:
        return f"{self.parenthesize(e.args[0], PRECEDENCE['Pow'])}^{{-T}}"

    def _print_MatMul(self, e: Any) -> str:
        """As SymPy's, with an elementwise factor bracketed whatever the sign."""
        c, factors = e.as_coeff_matrices()

        def one(a: Any) -> str:
            bracket = isinstance(a, (sp.MatAdd, sp.HadamardProduct)) or (
                isinstance(a, Elem) and precedence(a) <= PRECEDENCE["Mul"])
            return rf"\left({self._print(a)}\right)" if bracket and len(factors) > 1 \
                else self.parenthesize(a, PRECEDENCE["Mul"], strict=True)
        text = " ".join(one(a) for a in factors)
        if c == 1:
            return text
        if c == -1:
            return "- " + text
        return f"{self.parenthesize(c, PRECEDENCE['Mul'])} {text}"

    def _print_HadamardProduct(self, e: Any) -> str:
        return r" \circ ".join(
            rf"\left({self._print(a)}\right)" if isinstance(a, sp.MatMul) or
            precedence(a) < PRECEDENCE["Mul"] else self._print(a) for a in e.args)

    def _print_Softmax(self, e: Any) -> str:
        return rf"\operatorname{{softmax}}\left({self._print(e.args[0])}\right)"

    def _print_SumAll(self, e: Any) -> str:
        return rf"\operatorname{{sum}}\left({self._print(e.args[0])}\right)"

    def _print_LogSumExp(self, e: Any) -> str:
        return rf"\operatorname{{logsumexp}}\left({self._print(e.args[0])}\right)"

    def _print_RowSum(self, e: Any) -> str:
        return rf"\operatorname{{rowsum}}\left({self._print(e.args[0])}\right)"

    def _print_Norm(self, e: Any) -> str:
        return rf"\left\|{self._print(e.args[0])}\right\|"

    def _print_sigmoid(self, e: Any, exp: Any = None) -> str:
        text = rf"\sigma\left({self._print(e.args[0])}\right)"
        return text if exp is None else f"{text}^{{{exp}}}"


def conventions(expr: Any) -> set[str]:
    """Which reading conventions ``expr`` relies on: "elementwise" (a function or power
    of an array), "product" (an elementwise product of arrays), "rows" (a softmax or
    rowsum of a matrix, by rows)."""
    found: set[str] = set()
    for e in sp.preorder_traversal(expr):
        if isinstance(e, sp.HadamardProduct) or (isinstance(e, sp.Mul) and len(_arrays(e)) > 1):
            found.add("product")
        if isinstance(e, RowSum) or (isinstance(e, Softmax) and e.args[0].shape[1] != 1):
            found.add("rows")
        if isinstance(e, (sp.Function, sp.Pow)) and _shows(e) and not isinstance(e, Show):
            found.add("elementwise")
    return found


def render(expr: Any, fmt: str, unicode: bool = True) -> str:
    """``expr`` in ``fmt``: "text", "pretty" or "latex"."""
    if fmt == "latex":
        return Latex().doprint(expr)
    if fmt == "pretty":
        return Pretty({"use_unicode": unicode}).doprint(expr)
    return TextPrinter().doprint(expr)


def pretty_equation(lhs: str, expr: Any, unicode: bool = True) -> str:
    """``lhs = expr``, pretty (on the baseline of a formula of several lines)."""
    printer = Pretty({"use_unicode": unicode})
    form = printer._print(expr)
    return str(prettyForm(*form.left(f"{lhs} = "))) if unicode else \
        printer.doprint(sp.Eq(sp.Symbol(lhs), expr, evaluate=False))


__all__ = ["Elem", "Show", "SumAll", "Norm", "LogSumExp", "Softmax", "InvT", "sigmoid",
           "softplus", "RowSum", "numeric", "conventions", "render", "pretty_equation"]
