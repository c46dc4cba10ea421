"""IR -> SymPy: a graph as SymPy expressions over one symbol per input element.

The bridge interprets a graph on numpy object arrays whose elements are SymPy
expressions. Each primitive's ``sympy`` facet is applied according to its
kind: elementwise facets elementwise (with numpy broadcasting), reduction
facets to the list of elements reduced, structural facets (numpy functions)
to the object array itself, array facets (matmul, inv, cumsum, ...) to the
object arrays of all operands. Literals and constants become exact rationals,
so expressions mean exactly what the float64 program means.

It is the independent oracle of the test suite (SymPy differentiates the
*forward* graph; symgrad's VJP rules play no part) and the printer of
derivative formulas. Importing it imports SymPy; nothing else in the core does.
It lives in the core (it was ``symgrad/sympy_bridge.py`` until issue 30) because it
needs nothing but the IR and the primitives' ``sympy`` facets: it is the graph
interpreted in SymPy, as :mod:`.interpreter` is the graph interpreted in numpy.

    >>> import numpy as np, symgrad as sg
    >>> from symgrad.core.sympy_bridge import gradient_expressions
    >>> graph = sg.jit(lambda x: np.sum(np.sin(x) * x)).graph(np.ones(2))
    >>> list(gradient_expressions(graph)[0])
    [x[0]*cos(x[0]) + sin(x[0]), x[1]*cos(x[1]) + sin(x[1])]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import sympy as sp

from .ir import BOOL, COMPLEXES, Atom, Graph, Literal, Primitive, Printer
from .sympy_simplify import (  # (importable from here, as before)
    SIMPLIFY_SECONDS,
    OutOfTime,
    nice_numbers,
    simplify,
    simplify_all,
    time_limit,
)


def exact(value: float | bool | complex) -> Any:
    """A float64, complex128 or bool as the SymPy number it denotes exactly."""
    if isinstance(value, (bool, np.bool_)):
        return sp.true if value else sp.false
    if isinstance(value, (complex, np.complexfloating)):
        return exact(value.real) + sp.I * exact(value.imag)
    value = float(value)
    if math.isnan(value):
        return sp.nan
    if math.isinf(value):
        return sp.oo if value > 0 else -sp.oo
    return sp.Rational(value)


def element_symbols(name: str, shape: tuple[int, ...], real: bool = True) -> Any:
    """``x`` for a scalar, else an object array of symbols ``x[i, j]``: real ones, or
    complex ones (``real=False``, for a complex input: ``re(z)`` stays ``re(z)``)."""
    if not shape:
        return sp.Symbol(name, real=True) if real else sp.Symbol(name, complex=True)
    out = np.empty(shape, dtype=object)
    for idx in np.ndindex(*shape):
        label = f"{name}[{', '.join(map(str, idx))}]"
        out[idx] = sp.Symbol(label, real=True) if real else sp.Symbol(label, complex=True)
    return out


def input_symbols(graph: Graph) -> list[Any]:
    """Symbols for every input of ``graph``, named as the printer names them."""
    p = Printer(graph)
    return [element_symbols(p.name(v), v.shape, v.dtype not in COMPLEXES)
            for v in graph.inputs]


def to_sympy(graph: Graph, inputs: Sequence[Any] | None = None) -> list[Any]:
    """The outputs of ``graph`` as SymPy expressions (object arrays for arrays)."""
    inputs = input_symbols(graph) if inputs is None else inputs
    env: dict[int, Any] = {id(v): x for v, x in zip(graph.inputs, inputs)}
    for v, value in graph.consts:
        env[id(v)] = _exact_array(value) if value.ndim else exact(value.item())

    def read(a: Atom) -> Any:
        return exact(a.value) if isinstance(a, Literal) else env[id(a)]

    for eqn in _live(graph):
        env[id(eqn.out)] = _apply(eqn.prim, [read(a) for a in eqn.inputs], dict(eqn.params))
    return [read(a) for a in graph.outputs]


def _live(graph: Graph) -> list:
    """The equations the outputs depend on, in order: a value traced but unused (the
    singular values ``np.linalg.lstsq`` also returns) needs no SymPy form."""
    needed = {id(a) for a in graph.outputs}
    live = []
    for eqn in reversed(graph.eqns):
        if id(eqn.out) in needed:
            live.append(eqn)
            needed.update(id(a) for a in eqn.inputs)
    return live[::-1]


def _exact_array(value: np.ndarray) -> np.ndarray:
    out = np.empty(value.shape, dtype=object)
    for idx in np.ndindex(*value.shape):
        out[idx] = exact(value[idx].item())
    return out


#: the most decimal digits a number in an expression may have: SymPy computes powers
#: of numbers exactly (``(10**1000)**5`` has 5001 digits), in C, for as long as that
#: takes, and Python prints at most 4300 digits (``sys.get_int_max_str_digits``)
MAX_DIGITS = 4000


class TooLarge(ValueError):
    """A number in the expression would have more than :data:`MAX_DIGITS` digits."""


def _digits(number: Any) -> float:
    """About how many decimal digits the numerator or denominator of ``number`` has
    (0 for what is not a rational number)."""
    if not isinstance(number, sp.Rational):
        return 0.0
    return max(abs(number.p).bit_length(), number.q.bit_length()) * math.log10(2)


def _bounded(value: Any) -> Any:
    """``value``, unless its numeric coefficient is longer than :data:`MAX_DIGITS`."""
    if isinstance(value, sp.Expr):
        digits = _digits(value.as_coeff_Mul()[0])
        if digits > MAX_DIGITS:
            raise TooLarge(f"a number in the formula would have about {digits:.0f} digits "
                           f"(at most {MAX_DIGITS} are built)")
    return value


def _elementwise(prim: Primitive, args: tuple, params: dict[str, Any]) -> Any:
    # SymPy multiplies out c**n, or (c*x)**n, before anyone can stop it (the bridge
    # imports core only: the primitive by its registered name, which is unique)
    if prim.name == "pow":
        base, exponent = args
        if isinstance(base, sp.Expr) and isinstance(exponent, sp.Rational):
            digits = _digits(base.as_coeff_Mul()[0]) * abs(float(exponent))
            if digits > MAX_DIGITS:
                raise TooLarge(f"a number in the formula would have about {digits:.0f} digits "
                               f"(a power of {_short(base)}; at most {MAX_DIGITS} are built)")
    return _bounded(prim.sympy(sp, *args, **params))


def _short(e: Any) -> str:
    text = sp.sstr(e) if _digits(e) < 60 else f"a number of {_digits(e):.0f} digits"
    return text if len(text) < 60 else text[:57] + "..."


def _apply(prim: Primitive, args: list[Any], params: dict[str, Any]) -> Any:
    if prim.kind == "elementwise":
        with np.errstate(all="ignore"):  # numpy reads SymPy's float flags as its own
            return np.frompyfunc(lambda *a: _elementwise(prim, a, params), len(args), 1)(*args)
    if prim.kind == "reduction":
        return _reduce(prim, np.asarray(args[0], dtype=object), params["axes"])
    if prim.kind == "structural":
        result = prim.sympy(sp, *(np.asarray(a, dtype=object) for a in args), **params)
        return result[()] if np.ndim(result) == 0 else np.array(result)
    if prim.kind == "control":  # control flow: the facet evaluates its graphs with to_sympy
        tools = {"evaluate": to_sympy} if prim.subgraphs else {}
        return prim.sympy(sp, *args, **params, **tools)
    if prim.kind == "array":  # facets of whole object arrays (np.matmul, sympy.Matrix)
        result = np.asarray(prim.sympy(sp, *(np.asarray(a, dtype=object) for a in args),
                                       **params), dtype=object)
        return result[()] if result.ndim == 0 else result
    raise NotImplementedError(f"no SymPy translation for {prim.kind} primitive {prim.name}")


def _reduce(prim: Primitive, x: np.ndarray, axes: tuple[int, ...]) -> Any:
    if not axes:
        return x[()] if x.ndim == 0 else x
    kept = [i for i in range(x.ndim) if i not in axes]
    n = math.prod(x.shape[a] for a in axes)
    rows = np.transpose(x, kept + list(axes)).reshape([x.shape[i] for i in kept] + [n])
    out = np.empty(rows.shape[:-1], dtype=object)
    for idx in np.ndindex(*out.shape):
        out[idx] = _bounded(prim.sympy(sp, list(rows[idx])))
    return out[()] if out.ndim == 0 else out


def gradient_expressions(graph: Graph, cotangent: Any = None,
                         wrt: Sequence[int] | None = None, outputs: Any = None) -> list[Any]:
    """SymPy's gradient of ``sum(output * cotangent)`` for the first output of ``graph``.

    ``cotangent`` defaults to 1 (a scalar output); it may be numbers or symbols.
    Returns one expression (or object array) per input in ``wrt`` (default: all).
    ``outputs``: what ``to_sympy(graph)`` returned, if the caller has it already.

    The sum's terms are differentiated with respect to a symbol where they contain it
    (the derivative of a sum is the sum of its terms' derivatives; SymPy's own
    ``diff`` of the sum would look through every term for every symbol).
    """
    symbols = input_symbols(graph)
    y = np.asarray((to_sympy(graph, symbols) if outputs is None else outputs)[0], dtype=object)
    ct = np.broadcast_to(np.asarray(1 if cotangent is None else cotangent, dtype=object), y.shape)
    ct = np.asarray(np.frompyfunc(lambda c: c if isinstance(c, sp.Basic) else exact(c), 1, 1)(ct),
                    dtype=object)
    total = sp.Add(*(yi * ci for yi, ci in zip(y.ravel(), ct.ravel())))
    containing: dict[Any, list[Any]] = {}
    for term in sp.Add.make_args(total):
        for s in term.free_symbols:
            containing.setdefault(s, []).append(term)

    def derivative(s: Any) -> Any:
        return sp.Add(*(term.diff(s) for term in containing.get(s, ())))

    result = []
    for k in (range(len(graph.inputs)) if wrt is None else wrt):
        s = symbols[k]
        if graph.inputs[k].dtype == BOOL:
            raise TypeError(f"input {k} is boolean and has no gradient")
        result.append(derivative(s) if not np.ndim(s)
                      else np.frompyfunc(derivative, 1, 1)(s))
    return result


def evaluate(expressions: Any, graph: Graph, values: Sequence[Any], digits: int = 50,
             with_zoo: bool = False) -> Any:
    """Evaluate expressions over ``graph``'s input symbols at float ``values``.

    Each input is substituted by a SymPy Float of ``digits + 10`` digits, which
    holds the float64 value exactly (53 bits need 16 digits), and the result is
    evaluated to ``digits`` significant digits, then rounded to float64 (an
    array for arrays). Floats rather than exact rationals: SymPy would search
    for exact roots of rational powers, which takes forever for 2**-52 steps.

    SymPy's ``oo`` and ``-oo`` become ``inf`` and ``-inf``; nan and complex
    values become nan, and so does SymPy's complex infinity ``zoo`` (what
    ``1/0`` is, an infinity without a sign: ``1/(2*sqrt(x))`` at 0), unless
    ``with_zoo``: then it becomes ``inf`` and the result is a pair, the values
    and a bool mask of the elements that are ``zoo``, whose sign is unknown
    (:func:`symgrad.testing.relative_error` takes the mask as ``either_sign``).

        >>> import numpy as np, symgrad as sg
        >>> graph = sg.jit(lambda x: np.sqrt(x)).graph(0.0)
        >>> (d,) = gradient_expressions(graph)
        >>> d, float(evaluate(d, graph, [0.0]))
        (1/(2*sqrt(x)), nan)
        >>> value, zoo = evaluate(d, graph, [0.0], with_zoo=True)
        >>> float(value), bool(zoo)
        (inf, True)
    """
    subs: dict[Any, Any] = {}
    for s, v in zip(input_symbols(graph), values):
        for sym, val in zip(np.ravel(np.asarray(s, dtype=object)), np.ravel(np.asarray(v))):
            subs[sym] = sp.Float(float(val), digits + 10)

    def one(e: Any) -> tuple[float, bool]:
        """The value of ``e``, and whether it is ``zoo``."""
        if not isinstance(e, sp.Basic):  # a Python number, e.g. the 0 of a constant
            return float(e), False
        substitutions = e.atoms(sp.Subs)  # d floor(u)/du at u = 10*x: first the point
        if substitutions:
            e = e.xreplace({s: _at_point(s, subs, digits) for s in substitutions})
        derivatives = e.atoms(sp.Derivative)
        if derivatives:  # xreplace cannot put a number where a derivative's variable is
            e = e.xreplace({d: _numerically(d, subs, digits) for d in derivatives})
        value = sp.N(e.xreplace(subs), digits)
        if value is sp.zoo:
            return (math.inf if with_zoo else math.nan), True
        if not value.is_extended_real and value.is_finite:
            # a real part of complex values (re(erf(x + I*y))): evalf leaves the imaginary
            # parts' difference as a residue below its precision ("0.e-62*I", 2**-205);
            # an imaginary part above it is a complex value (sqrt(-1): nan)
            real, imag = value.as_real_imag()
            if real.is_extended_real and imag.is_extended_real and \
                    abs(imag) <= sp.Float(10, digits) ** (10 - digits) * max(abs(real), 1):
                value = real
        return (float(value) if value.is_extended_real else math.nan), False  # nan, complex

    if np.ndim(expressions) == 0:
        number, zoo = one(expressions)
        result, mask = np.float64(number), np.bool_(zoo)
    else:
        with np.errstate(all="ignore"):  # numpy reads SymPy's float flags as its own
            numbers, zoos = np.frompyfunc(one, 1, 2)(np.asarray(expressions, dtype=object))
        result, mask = numbers.astype(np.float64), zoos.astype(bool)
    return (result, mask) if with_zoo else result


def _at_point(s: Any, subs: dict[Any, Any], digits: int) -> Any:
    """``Subs(expr, u, point)`` (SymPy's chain rule through a function it cannot
    differentiate, such as ``floor(10*x)``) evaluated with ``u`` at the numeric point."""
    point = {u: sp.N(p.xreplace(subs), digits + 10) for u, p in zip(s.variables, s.point)}
    inner = s.expr
    inner = inner.xreplace({d: _numerically(d, point, digits)
                            for d in inner.atoms(sp.Derivative)})
    return inner.xreplace(point)


def _numerically(d: Any, subs: dict[Any, Any], digits: int) -> Any:
    """A derivative SymPy left unevaluated, at the point ``subs``, by mpmath's numerical
    differentiation at ``digits + 10`` digits. SymPy leaves ``sign(f(x))``
    unevaluated where it cannot tell that ``f(x)`` is real (``sign(acos(x))``), and
    the derivatives of ``floor``; a second derivative (a Hessian's
    ``Derivative(floor(x), (x, 2))``) is of one variable, taken twice. A mixed
    partial derivative gives nan."""
    import mpmath

    if len(set(d.variables)) != 1:
        return sp.nan
    x, order = d.variables[0], len(d.variables)  # variables (x, x): the second in x
    d = d.xreplace({s: v for s, v in subs.items() if s != x})
    if not isinstance(d, sp.Derivative):  # evaluated once the others are numbers
        return d
    if not d.expr.has(x):  # sign(0.5**y) is 1: a derivative of a constant
        return sp.Integer(0)
    with mpmath.workdps(digits + 10):
        if order == 1:
            return d.doit_numerically(subs[x])

        def at(t: Any) -> Any:  # as doit_numerically: at the precision mpmath.diff sets
            prec = mpmath.mp.prec
            value = d.expr.xreplace({x: sp.Expr._from_mpmath(t, prec)})
            return value.evalf(mpmath.libmp.prec_to_dps(prec))._to_mpmath(prec)
        prec = mpmath.mp.prec
        return sp.Expr._from_mpmath(mpmath.diff(at, subs[x]._to_mpmath(prec), order), prec)


# ---------------------------------------------------------------------------
# derived formulas: symgrad's adjoint graph as SymPy (simplified by :mod:`.sympy_simplify`),
# per element pattern

def adjoint_expressions(graph: Graph, n_primal: int, n_inputs: int,
                        cotangents: Sequence[Any] = ()) -> list[Any]:
    """The gradient outputs of an adjoint ``graph`` (forward + adjoint) as SymPy.

    The first ``n_inputs`` inputs of ``graph`` become element symbols; the rest
    are the cotangent inputs, given as numbers in ``cotangents`` (exact values).
    This is symgrad's own derivation, printed; :func:`gradient_expressions` is
    SymPy's, the independent check.
    """
    symbols = input_symbols(graph)[:n_inputs]
    values = [_exact_array(np.asarray(c, dtype=float)) if np.ndim(c) else exact(float(c))
              for c in cotangents]
    outs = to_sympy(graph, [*symbols, *values])
    return [o if np.ndim(o) == 0 else np.asarray(o, dtype=object) for o in outs[n_primal:]]


INDEX_LETTERS = "ijkmnp"


def index_symbols(ndim: int) -> tuple[Any, ...]:
    """``i, j, k...``: the generic indices of element patterns."""
    letters = INDEX_LETTERS if ndim <= len(INDEX_LETTERS) else [f"i{d}" for d in range(ndim)]
    return tuple(sp.Symbol(c, integer=True) for c in letters[:ndim])


def element_pattern(exprs: Any, symbols: dict[str, Any]) -> Any:
    """One formula in ``x[i, j]`` for all elements of ``exprs``, or ``None``.

    ``exprs`` is an object array (e.g. a gradient with respect to an input of
    its shape); ``symbols`` maps each input's name to its element symbols.
    Element ``x[0, 1]`` of every input aligned with ``exprs`` by numpy
    broadcasting is replaced by the indexed ``x[i, j]`` (``x[0, j]`` along a
    broadcast axis of length 1); if every element then reads the same, that
    formula is returned.

        >>> import numpy as np, sympy as sp
        >>> x = element_symbols("x", (3,))
        >>> element_pattern(np.array([2 * s for s in x]), {"x": x})
        2*x[i]
        >>> element_pattern(np.array([x[0], x[0], x[0]]), {"x": x}) is None
        True
    """
    exprs = np.asarray(exprs, dtype=object)
    shape = exprs.shape
    index = index_symbols(len(shape))
    pattern = None
    for idx in np.ndindex(*shape):
        replace = {}
        for name, syms in symbols.items():
            s = np.asarray(syms, dtype=object)
            if s.ndim == 0 or s.ndim > len(shape):
                continue
            lead = len(shape) - s.ndim
            if any(d not in (1, shape[lead + a]) for a, d in enumerate(s.shape)):
                continue
            element = tuple(0 if d == 1 and shape[lead + a] != 1 else idx[lead + a]
                            for a, d in enumerate(s.shape))
            generic = tuple(0 if d == 1 and shape[lead + a] != 1 else index[lead + a]
                            for a, d in enumerate(s.shape))
            replace[s[element]] = sp.IndexedBase(name, real=True)[generic]
        e = exprs[idx]
        e = e if isinstance(e, sp.Basic) else exact(e)
        if e.has(sp.Sum):  # x[0, k] inside Σ_k, at element (0, ...): x[i, k]
            replace.update(_partly_indexed(e, symbols, shape, idx, index))
        candidate = e.xreplace(replace)
        if pattern is None:
            pattern = candidate
        elif candidate != pattern:
            return None
    return pattern


def _partly_indexed(e: Any, symbols: dict[str, Any], shape: tuple[int, ...],
                    idx: tuple[int, ...], index: tuple[Any, ...]) -> dict[Any, Any]:
    """For :func:`element_pattern`: each element ``x[0, k]`` of a Σ (an integer index
    and a summed one) of an input aligned with ``exprs`` as ``x[i, k]``, where the
    integer is the index of the element on that axis (as for an element symbol)."""
    replace = {}
    for el in e.atoms(sp.Indexed):
        name = str(el.base)
        s = np.asarray(symbols.get(name, ()), dtype=object)
        if name not in symbols or s.ndim == 0 or s.ndim > len(shape):
            continue
        lead = len(shape) - s.ndim
        if any(d not in (1, shape[lead + a]) for a, d in enumerate(s.shape)):
            continue
        generic = tuple(index[lead + a] if (i.is_Integer and d != 1 and int(i) == idx[lead + a])
                        else i for a, (i, d) in enumerate(zip(el.indices, s.shape)))
        replace[el] = el.base[generic]
    return replace


def block_pattern(exprs: Any, symbols: dict[str, Any], row_ndim: int) -> Any:
    """One formula in ``x[i]``, ``y[j]`` for all elements of a block of a Hessian or a
    Jacobian, or ``None``.

    ``exprs`` has the shape ``rows + cols``, ``rows`` its first ``row_ndim`` axes
    (``x.shape + y.shape`` for the block of ``∂²f/∂x∂y``, ``f.shape + x.shape`` for
    ``∂f/∂x``); ``symbols`` maps each input's name to its element symbols. The
    element of an input of shape ``rows`` at the row index is replaced by the
    indexed ``x[i]`` (the row letters), the element of an input of shape ``cols`` at
    the column index by ``x[j]`` (the column letters). Where rows and columns have
    one shape, the diagonal (``i == j``) may read differently from the rest, as the
    second derivatives of an elementwise function do: then the formula is a
    ``Piecewise`` of the two.

        >>> x = element_symbols("x", (3,))
        >>> block_pattern(np.diag([2 * s for s in x]), {"x": x}, 1)
        Piecewise((2*x[i], Eq(i, j)), (0, True))
        >>> block_pattern(np.array([[a * b for b in x] for a in x]), {"x": x}, 1)
        x[i]*x[j]
        >>> block_pattern(np.array([[a * x[0] for b in x] for a in x]), {"x": x}, 1) is None
        True
    """
    exprs = np.asarray(exprs, dtype=object)
    rows, cols = exprs.shape[:row_ndim], exprs.shape[row_ndim:]
    letters = index_symbols(exprs.ndim)
    ri, ci = letters[:row_ndim], letters[row_ndim:]
    square = rows == cols and rows != ()
    arrays = {name: np.asarray(s, dtype=object) for name, s in symbols.items()}
    bases = {name: sp.IndexedBase(name, real=True) for name in symbols}
    parts: dict[bool, Any] = {}  # on the diagonal or not: the one formula of those elements
    for idx in np.ndindex(*exprs.shape):
        r, c = idx[:row_ndim], idx[row_ndim:]
        diagonal = square and r == c
        replace = {}
        for name, s in arrays.items():
            if s.ndim and s.shape == cols and not diagonal:
                replace[s[c]] = bases[name][ci]
            if s.ndim and s.shape == rows:  # on the diagonal x[r] is x[c]: read as x[i]
                replace[s[r]] = bases[name][ri]
        e = exprs[idx]
        candidate = (e if isinstance(e, sp.Basic) else exact(e)).xreplace(replace)
        if parts.setdefault(diagonal, candidate) != candidate:
            return None
    diagonal, rest = parts.get(True), parts.get(False)
    if diagonal is None or rest is None:  # all elements on one side
        return rest if diagonal is None else diagonal
    if rest.xreplace(dict(zip(ci, ri))) == diagonal:  # x[i]*x[j] is x[i]**2 there too
        return rest
    return sp.Piecewise((diagonal, sp.And(*(sp.Eq(a, b) for a, b in zip(ri, ci)))),
                        (rest, True))


__all__ = ["to_sympy", "gradient_expressions", "evaluate", "element_symbols", "input_symbols",
           "exact", "simplify", "simplify_all", "adjoint_expressions", "element_pattern",
           "block_pattern", "index_symbols", "nice_numbers", "time_limit", "OutOfTime",
           "TooLarge", "MAX_DIGITS", "SIMPLIFY_SECONDS"]
