"""The pieces textbook gradients are built from, and how they are tidied for print.

:mod:`.textbook` differentiates the typed expression with SymPy matrix expressions
(:mod:`.notation`); these are its building blocks: an array as the element of a
scalar body (:func:`lift`, :func:`elem`), a scalar times an array (:func:`scale`),
cotangents summed (:func:`add`), ``sum`` with its constant factors outside
(:func:`sum_all`), a repeated softmax named ``P`` (:func:`name_repeats`), and
:func:`tidy`, which writes the result as a person does (``2⋅Xᵀ⋅(X⋅w - y)``).
They know nothing of the deriver; :mod:`.textbook` imports them.
"""

from __future__ import annotations

from typing import Any

import sympy as sp

from .expr import Call, Num, Op
from .notation import Elem, InvT, LogSumExp, Norm, Show, Softmax, SumAll, sigmoid

#: the names a repeated softmax of a matrix gets (:func:`name_repeats`)
NAMES = "PSRUZ"


def name_repeats(grads: dict[str, Any], taken: set[str]) -> tuple[dict[str, Any], dict]:
    """A softmax of a matrix that a formula holds twice or more gets a name, ``P``."""
    counts: dict[Any, int] = {}
    for g in grads.values():
        for a in sp.preorder_traversal(g):
            if isinstance(a, Softmax) and a.args[0].shape[1] != 1:
                counts[a] = counts.get(a, 0) + 1
    names = iter(n for n in NAMES if n not in taken)
    where = {}
    for part, count in counts.items():
        name = next(names, None)
        if count < 2 or name is None:
            continue
        where[sp.MatrixSymbol(name, *part.shape)] = part
    if not where:
        return grads, {}
    swap = {part: name for name, part in where.items()}
    return {n: _swap(g, swap) for n, g in grads.items()}, where


def _swap(e: Any, swap: dict[Any, Any]) -> Any:
    if e in swap:
        return swap[e]
    if not e.args or isinstance(e, sp.MatrixSymbol):
        return e
    return e.func(*(_swap(a, swap) for a in e.args))


def number(value: float) -> Any:
    from ..core.sympy_bridge import exact, nice_numbers

    return nice_numbers(exact(value))


def norm_pattern(node: Any) -> Any:
    """``x`` for ``sqrt(sum(x*x))`` or ``sqrt(sum(x**2))``, else None."""
    if not (isinstance(node, Call) and node.name == "sqrt" and isinstance(node.args[0], Call)
            and node.args[0].name == "sum" and not node.args[0].keywords):
        return None
    inner = node.args[0].args[0]
    if isinstance(inner, Op) and inner.symbol == "*" and inner.args[0] == inner.args[1]:
        return inner.args[0]
    if isinstance(inner, Op) and inner.symbol == "**" and inner.args[1] == Num(2.0):
        return inner.args[0]
    return None


def lift(v: Any) -> Any:
    """A value as a scalar body: an array's element (its own body if it is one)."""
    if isinstance(v, Elem):
        return v.body
    if isinstance(v, sp.MatMul):
        c, mats = v.as_coeff_matrices()
        if c != 1:
            return c * Show(sp.MatMul(*mats).doit(deep=False) if len(mats) > 1 else mats[0])
    if getattr(v, "is_Matrix", False):
        return Show(v)
    return v


def sum_all(m: Any) -> Any:
    """``sum(m)``, with the factors that are the same for every element outside."""
    if not isinstance(m, Elem):
        c, rest = lift(m).as_coeff_Mul()
        return c * SumAll(rest.matrix) if isinstance(rest, Show) else SumAll(m)
    body = tidy_body(m.body)
    factors = sp.Mul.make_args(body)
    inside = [f for f in factors if _shows_of(f)]
    outside = [f for f in factors if not _shows_of(f)]
    return sp.Mul(*outside) * SumAll(elem(sp.Mul(*inside), m.shape))


def _shows_of(e: Any) -> bool:
    from .notation import _shows

    return bool(_shows(e))


def elem(body: Any, shape: tuple[Any, Any]) -> Any:
    """The array of ``body``: the matrix itself where the body is one element of it."""
    if isinstance(body, Show) and getattr(body.matrix, "shape", None) == shape:
        return body.matrix
    return Elem(body, *shape)


def scale(c: Any, m: Any) -> Any:
    """A scalar times an array (or a scalar)."""
    if c == 1:
        return m
    if not getattr(m, "is_Matrix", False):
        return c * m
    if isinstance(m, Elem):
        return elem(c * m.body, m.shape)
    return sp.MatMul(c, m)


def add(a: Any, b: Any) -> Any:
    """Two cotangents of one variable summed."""
    ma, mb = getattr(a, "is_Matrix", False), getattr(b, "is_Matrix", False)
    if not ma and not mb:
        return a + b
    shape = a.shape if ma else b.shape
    return elem(lift(a) + lift(b), shape)


def tidy(e: Any) -> Any:
    """The formula as a person writes it: ``2⋅Xᵀ⋅(X⋅w - y)`` (a common factor out of
    a sum, a number out of a product of matrices), ``(A + Aᵀ)⋅x`` (a common right
    factor of a sum of products), ``A⁻ᵀ`` (for SymPy's ``(Aᵀ)⁻¹``)."""
    if isinstance(e, sp.Inverse) and isinstance(e.arg, sp.Transpose):
        return InvT(e.arg.arg)
    if isinstance(e, Elem):
        body = _factor(tidy_body(e.body, keep=True))
        if isinstance(body, Show):
            return elem(body, e.shape)
        c, rest = body.as_coeff_Mul() if body.is_Mul else (1, body)
        if c != 1 and isinstance(rest, Show):
            return sp.MatMul(c, rest.matrix)
        if c != 1:
            return sp.MatMul(c, Elem(rest, *e.shape))
        return Elem(body, *e.shape)
    if isinstance(e, (sp.MatMul, sp.Transpose, sp.HadamardProduct)):
        return type(e)(*(tidy(a) if getattr(a, "is_Matrix", False) else a
                         for a in e.args)).doit(deep=False)
    if isinstance(e, sp.Basic) and not getattr(e, "is_Matrix", False):
        factored = tidy_body(e)
        # sum((x - mu)**2)/s**3 - 5/s, not (sum((x - mu)**2)/s**2 - 5)/s
        expanded = sp.expand(factored, deep=False)
        return min([factored, expanded], key=lambda c: len(str(c)))
    return e


def tidy_body(body: Any, keep: bool = False) -> Any:
    """A common factor out of a sum, with every matrix inside kept as it is (SymPy
    would turn a ``MatMul`` it meets into a ``Mul``). With ``keep``, a number factored
    out stays out (an unevaluated product: SymPy would multiply it in again)."""
    body = body.xreplace({s: Show(tidy(s.matrix)) for s in _show_atoms(body)})
    opaque = {a: sp.Dummy(real=True) for a in sp.preorder_traversal(body)
              if isinstance(a, (Show, SumAll, Norm, LogSumExp, sp.Trace, sp.Determinant))}
    back = {d: a for a, d in opaque.items()}
    factored = sp.factor_terms(_sigmoids(body.xreplace(opaque)))
    c, rest = factored.as_coeff_Mul()
    if keep and c != 1 and rest.is_Add:
        return sp.Mul(c, rest.xreplace(back), evaluate=False)
    return factored.xreplace(back)


def _sigmoids(e: Any) -> Any:
    """``exp(a)/(exp(a) + 1)`` is ``sigmoid(a)``, ``1/(1 + exp(a))`` is ``sigmoid(-a)``:
    the logistic function by its name (``log(1 + exp(X⋅w))`` differentiates to them).
    Products are looked at before their factors, so that the numerator is seen."""
    if not e.args:
        return e
    if e.is_Mul or e.is_Pow:
        rewritten = _sigmoid_here(list(sp.Mul.make_args(e)))
        if rewritten is not None:
            return _sigmoids(rewritten)
    return e.func(*(_sigmoids(a) for a in e.args))


def _sigmoid_here(factors: list[Any]) -> Any:
    for f in factors:
        if not (f.is_Pow and f.exp == -1 and f.base.is_Add and len(f.base.args) == 2
                and sp.Integer(1) in f.base.args):
            continue
        (other,) = [a for a in f.base.args if a != 1]
        if not isinstance(other, sp.exp):
            continue
        rest = list(factors)
        rest.remove(f)
        if other in rest:
            rest.remove(other)
            return sp.Mul(*rest) * sigmoid(other.args[0])
        return sp.Mul(*rest) * sigmoid(-other.args[0])
    return None


def _show_atoms(body: Any) -> set[Any]:
    from .notation import _shows

    return _shows(body)


def _factor(body: Any) -> Any:
    """A common left factor out of a sum of matrix products, then a common right one:
    ``Xᵀ⋅σ(X⋅w) - Xᵀ⋅y`` -> ``Xᵀ⋅(σ(X⋅w) - y)``, ``A⋅x + Aᵀ⋅x`` -> ``(A + Aᵀ)⋅x``."""
    for side in (0, -1):
        body = _factor_side(body, side)
    return body


def _factor_side(body: Any, side: int) -> Any:
    if not body.is_Add:
        return body
    groups: dict[Any, list[Any]] = {}
    shapes: dict[Any, Any] = {}
    other = []
    for term in body.args:
        c, rest = term.as_coeff_Mul()
        if isinstance(rest, Show) and isinstance(rest.matrix, sp.MatMul):
            factors = [f for f in rest.matrix.args if f.is_Matrix]
            c = c * sp.Mul(*[f for f in rest.matrix.args if not f.is_Matrix])
            remaining = factors[1:] if side == 0 else factors[:-1]
            part = sp.MatMul(*remaining).doit(deep=False) if len(remaining) > 1 \
                else remaining[0]
            groups.setdefault(factors[side], []).append((term, c * lift(part)))
            shapes[factors[side]] = part.shape
        else:
            other.append(term)
    terms = list(other)
    for common, pairs in groups.items():
        if len(pairs) == 1:  # nothing to factor: the term as it was
            terms.append(pairs[0][0])
            continue
        total = sp.Add(*(part for _, part in pairs))
        c, rest = total.as_coeff_Mul()
        operand = rest.matrix if isinstance(rest, Show) else Elem(rest, *shapes[common])
        pair = (common, operand) if side == 0 else (operand, common)
        terms.append(c * Show(sp.MatMul(*pair)))
    return sp.Add(*terms)
