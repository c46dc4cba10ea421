"""Sums written as ``Σ``: a sum over every index of an input's axis, which SymPy keeps
written out term by term (``x[0]**2 + x[1]**2 + ...``, as long as the input), folded
into a SymPy ``Sum`` over an index, so that a per-element formula's length does not
grow with the sizes (issue 29). :func:`symgrad.cli.symbolic.folded` applies it to the
formulas of ``symgrad grad`` and ``symgrad hessian`` unless ``--expand``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import sympy as sp


def fold_sums(expr: Any, symbols: dict[str, Any], letters: Sequence[str] = "jkmnpq") -> Any:
    """``expr`` with each sum written out over every index of an input axis folded
    into a SymPy ``Sum`` over an index: ``x[0]**2 + x[1]**2 + x[2]**2`` is
    ``Sum(x[j]**2, (j, 0, 2))``, so the formula's length does not grow with the size.

    ``symbols`` maps each input's name to its element symbols (as for
    :func:`symgrad.core.sympy_bridge.element_pattern`); the elements of the result are
    ``Indexed`` (``x[0]`` is ``x[0]`` of ``IndexedBase("x")``), summed indices take
    the ``letters`` in order. A group of terms is folded only when every one of its ``n`` terms is
    there (with its multiplicity), so the result is the same sum, reordered.

        >>> from symgrad.core.sympy_bridge import element_symbols
        >>> x = element_symbols("x", (3,))
        >>> fold_sums(x[0]**2 + x[1]**2 + x[2]**2 + 1, {"x": x})
        Sum(x[j]**2, (j, 0, 2)) + 1
    """
    if not isinstance(expr, sp.Basic):
        return expr
    shapes: dict[Any, tuple[int, ...]] = {}
    indexed = {}
    for name, syms in symbols.items():
        a = np.asarray(syms, dtype=object)
        if a.ndim == 0:
            continue
        base = sp.IndexedBase(name, real=True)
        shapes[base] = a.shape
        for idx in np.ndindex(*a.shape):
            indexed[a[idx]] = base[idx]
    expr = expr.xreplace(indexed)
    pool = [sp.Symbol(c, integer=True) for c in [*letters, *(f"j{d}" for d in range(20))]]
    free = {str(s) for s in expr.free_symbols}
    pool = [p for p in pool if str(p) not in free]

    def fold(e: Any) -> Any:
        if not e.args or isinstance(e, (sp.Indexed, sp.IndexedBase)):
            return e
        e = e.func(*(fold(a) for a in e.args))
        if not e.is_Add or len(e.args) < 2:
            return e
        terms = list(e.args)
        while True:
            folded = next((f for t in terms
                           if (f := _fold_group(t, terms, shapes, pool)) is not None), None)
            if folded is None:
                return sp.Add(*terms)
            terms = folded

    return fold(expr)


def _depth(e: Any) -> int:
    """How many Sums nest in ``e``."""
    if isinstance(e, sp.Sum):
        return 1 + _depth(e.function)
    return max((_depth(a) for a in e.args), default=0)


def _fold_group(t: Any, terms: list[Any], shapes: dict[Any, tuple[int, ...]],
                pool: list[Any]) -> list[Any] | None:
    """``terms`` with ``t`` and the others of its sum over one index replaced by a
    ``Sum``, or None. A candidate writes an integer index ``v`` of an element of ``t``
    (on an axis of length ``n``) as the index ``j``: at that place and at every place
    of the other inputs where ``v`` is on an axis of length ``n`` (``A[0, 0]*x[0]`` ->
    ``A[0, j]*x[j]``), or at all such places; it folds if the terms hold it at every
    ``j < n``. ``j`` is the pool's letter for the depth of Sums in ``t``, so that sums
    of one shape read alike and fold again (``Σ_j X[0, j]²`` and ``Σ_j X[1, j]²``)."""
    depth = _depth(t)
    if depth >= len(pool):
        return None
    j = pool[depth]
    elements = [e for e in t.atoms(sp.Indexed) if e.base in shapes]
    places = [(e, a) for e in elements for a in range(len(e.indices))]
    tried = set()
    for el, axis in reversed(places):  # the last axis first: row sums before column sums
        v, n = el.indices[axis], shapes[el.base][axis]
        if not v.is_Integer or n < 2:
            continue
        same = [(e, a) for e, a in places if e.indices[a] == v and shapes[e.base][a] == n]
        for chosen in ({(el, axis)} | {(e, a) for e, a in same if e.base != el.base},
                       set(same), {(el, axis)}):
            key = frozenset(chosen)
            if key in tried:
                continue
            tried.add(key)
            template = t.xreplace({
                e: e.base[tuple(j if (e, a) in chosen else i for a, i in enumerate(e.indices))]
                for e in elements})
            rest = list(terms)
            try:
                for k in range(n):
                    rest.remove(template.xreplace({j: sp.Integer(k)}))
            except ValueError:
                continue
            return [*rest, sp.Sum(template, (j, 0, n - 1))]
    return None


__all__ = ["fold_sums"]
