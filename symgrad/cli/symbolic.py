"""What ``symgrad grad`` and ``symgrad hessian`` ask of SymPy, under one budget: the
formulas (simplified and rendered as the report prints them), ``--check``'s oracle
(SymPy's derivative, Hessian or Jacobian of the traced function at the ``--at``
point, 50 digits) and ``--show sympy``.

:func:`run_sympy` (a gradient) and :func:`run_sympy_blocks` (the blocks of a Hessian
or a Jacobian) hand these steps to :func:`symgrad.cli.bounds.run`, which runs them
in a child process killed at the deadline; :class:`SymPyResults` says what each
step gave, or why it gave nothing, in words for the output. SymPy is asked nothing
where a value of the function (or of the graph that computes the Hessian or the
Jacobian) has more than ``SYMBOLIC_LIMIT`` elements.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .limits import SYMBOLIC_LIMIT

if TYPE_CHECKING:
    from .problem import Problem
    from .report import Block, Report


@dataclass(frozen=True)
class SymPyResults:
    """How the SymPy steps of one command ended (:class:`symgrad.cli.bounds.Outcome`
    by step name), or why none ran."""

    seconds: float
    outcomes: dict[str, Any]
    skipped: str | None = None
    unchecked: str | None = None  # why there is no SymPy check (the formulas may print)

    def get(self, step: str) -> Any:
        """The result of ``step``, or None where it gave none."""
        outcome = self.outcomes.get(step)
        return outcome.value if outcome is not None and outcome.status == "done" else None

    def why(self, step: str) -> str:
        """Why ``step`` has no result, in words for the user."""
        if self.skipped and step not in self.outcomes:
            return self.skipped
        if step == "check" and self.unchecked:
            return self.unchecked
        outcome = self.outcomes[step]
        if outcome.status == "timeout":
            return (f"timed out: SymPy's {self.seconds:g} s budget ran out "
                    "(--sympy-seconds S raises it)")
        return f"SymPy failed: {outcome.error}"


def user_rules(graph: Any) -> str | None:
    """Why SymPy cannot check the gradient of ``graph``: it calls functions whose
    derivative the user gave (``sg.custom_vjp``, ``custom_jvp``, ``pure_callback``), which
    SymPy prints by name only (finite differences still check them); or None."""
    from ..core.ir import subgraphs

    names: set[str] = set()
    todo = [graph]
    while todo:
        g = todo.pop()
        for e in g.eqns:
            if e.prim.name in ("call", "callback"):
                names.add(str(e.params.get("name", e.prim.name)))
            todo += [sub for _, sub in subgraphs(e)]
    if not names:
        return None
    return (f"it calls {', '.join(sorted(names))}, whose derivative you gave "
            "(sg.custom_vjp, custom_jvp or pure_callback): SymPy prints it by name only")


def too_symbolic(graph: Any, what: str = "the function") -> str | None:
    """Why SymPy is not asked (too many elements in a value of ``graph``, which
    computes ``what``), or None."""
    sizes = [v.aval.size for v in graph.inputs] + [e.out.aval.size for e in graph.eqns]
    if max(sizes, default=0) <= SYMBOLIC_LIMIT:
        return None
    return (f"a value of {what} has {max(sizes)} elements; SymPy is asked for at most "
            f"{SYMBOLIC_LIMIT}")


def run_sympy(p: Problem, g: Any, graph: Any, sample: list[Any], at: list[Any] | None,
              cotangent: Any, check: bool, show: bool, report: Report,
              seconds: float, expand: bool = False) -> SymPyResults:
    """Run every SymPy step this command asks for under one budget of ``seconds``
    (see :mod:`symgrad.cli.bounds`): ``--check``'s oracle first (it decides the exit
    status), then the formulas (rendered there, as the report prints them), then
    ``--show sympy``. The formulas are the textbook ones (:mod:`.textbook`) where the
    expression has them, unless ``expand``: those do not depend on the sizes, so they
    are printed whatever the sizes; the per-element ones only up to
    ``SYMBOLIC_LIMIT`` elements."""
    textbook = None if expand else getattr(p.fun, "expression", None)
    skipped = too_symbolic(graph)
    if skipped and (textbook is None or cotangent is not None):
        return SymPyResults(seconds, {}, skipped)
    import sympy  # noqa: F401  imported before the budget starts (and before a fork)

    from ..core import sympy_bridge  # noqa: F401
    from . import bounds

    steps: dict[str, Any] = {}
    unchecked = user_rules(graph)
    if check and not skipped and not unchecked:
        steps["check"] = lambda deadline: _oracle(p, graph, at, cotangent)

    def formulas(deadline: float) -> dict[str, Any]:
        found = _textbook(p, cotangent) if textbook is not None else None
        if found is None and skipped:
            return {n: ("omitted", skipped) for n in p.wrt}
        return found or _formulas(p, g, graph, sample, cotangent, deadline, not expand)
    steps["formulas"] = lambda deadline: report.section(
        lambda r: r.formulas(formulas(deadline)))
    if skipped:  # the textbook formulas only: the rest is skipped, and says why
        return SymPyResults(seconds, bounds.run(steps, seconds), skipped)
    if show:
        steps["sympy"] = lambda deadline: report.section(
            lambda r: r.show("sympy", _sympy_derivative(p, graph, cotangent, deadline)))
    return SymPyResults(seconds, bounds.run(steps, seconds), unchecked=unchecked)


def _textbook(p: Problem, cotangent: Any) -> dict[str, Any] | None:
    """Per wrt variable ("matrix", (expr, notes, where)): the textbook formula of the typed
    expression (:mod:`.textbook`), if it has one and it agrees with symgrad's own
    gradient at a random point (:func:`agrees`); else None."""
    from .textbook import Unsupported, derive

    expression = getattr(p.fun, "expression", None)
    if expression is None or cotangent is not None:
        return None
    try:
        formula = derive(expression, p.shapes, p.wrt)
    except (Unsupported, TypeError, ValueError, AttributeError):
        return None
    if not any(map(needs_matrices, formula.grads.values())):
        return None  # elementwise: the per-element formula says the same, as before
    if not agrees(p.fun, p.names, p.shapes, p.wrt, formula):
        return None
    return {n: ("matrix", (formula.grads[n], formula.notes, formula.where)) for n in p.wrt}


def needs_matrices(expr: Any) -> bool:
    """Whether a textbook formula says more than a per-element one: it holds a matrix
    product, a transpose, an inverse, a sum over elements, a norm, a softmax...
    (per element, those would be written out element by element). ``y⋅cos(x)`` does
    not: ``∂f/∂x[i] = y⋅cos(x[i])`` says the same."""
    import sympy as sp

    from .notation import Elem, Show

    if isinstance(expr, (sp.MatrixSymbol, sp.OneMatrix)) or not isinstance(expr, sp.Basic):
        return False  # x, or 1 everywhere
    if isinstance(expr, (Elem, Show)):
        return needs_matrices(expr.args[0])
    if isinstance(expr, sp.MatMul) and sum(a.is_Matrix for a in expr.args) == 1:
        return any(needs_matrices(a) for a in expr.args)  # 6*X: a number times an array
    if getattr(expr, "is_Matrix", False):
        return True  # MatMul, Transpose, Softmax, InvT, ... (Elem and symbols above)
    if expr.__class__.__module__.endswith("notation") or isinstance(
            expr, (sp.Trace, sp.Determinant)):
        return True  # SumAll, Norm, LogSumExp
    return any(needs_matrices(a) for a in expr.args)


def agrees(fun: Any, names: tuple[str, ...], shapes: dict[str, tuple[int, ...]],
           wrt: tuple[str, ...], formula: Any, seed: int = 0,
           tolerance: float = 1e-9) -> bool:
    """Whether ``formula`` (a :class:`.textbook.Formula`) evaluated by
    :func:`.notation.numeric` (30 digits) agrees with symgrad's gradient of ``fun`` (the
    numpy interpreter) at a random point, at small sizes: the formula does not depend on
    them (each dimension symbol gets its own size, 2, 3, 4...; a matrix of one square
    shape gets 2·I added, so that det, inv and solve are well defined)."""
    import numpy as np
    import sympy as sp

    from ..transforms import api
    from .notation import numeric

    small = {sym: 2 + k for k, sym in enumerate(formula.dims)}
    rng = np.random.default_rng(seed)
    args, env = [], dict(small)
    for name in names:
        sym = formula.symbols[name]
        if not isinstance(sym, sp.MatrixSymbol):
            value = rng.uniform(0.5, 1.5)
            env[sym] = sp.Float(value, 30)
            args.append(value)
            continue
        rows, cols = (int(sp.sympify(d).xreplace(small)) for d in sym.shape)
        matrix = rng.uniform(-1, 1, (rows, cols)) + (2 * np.eye(rows) if rows == cols else 0)
        env[sym] = sp.Matrix(matrix.tolist())
        args.append(matrix[:, 0] if len(shapes[name]) == 1 else matrix)
    try:
        for short, part in formula.where.items():  # P = softmax(...)
            env[short] = numeric(part, env, digits=30)
        grads = api.grad(fun, argnums=tuple(names.index(n) for n in wrt),
                         backend="numpy")(*args)
        for name, want in zip(wrt, grads):
            got = numeric(formula.grads[name], env, digits=30)
            got = np.array(got.tolist() if hasattr(got, "tolist") else float(got),
                           dtype=float).reshape(np.shape(want))
            scale = max(1.0, float(np.max(np.abs(want))))
            if not np.all(np.isfinite(want)) or np.max(np.abs(got - want)) > tolerance * scale:
                return False
    except Exception:  # noqa: BLE001  (no textbook formula rather than a wrong one)
        return False
    return True


def _simplify_seconds(deadline: float, parts: int) -> float:
    """Simplification's share of what is left: half of it, at most
    ``SIMPLIFY_SECONDS`` per part; the rest is for printing."""
    import time

    from ..core.sympy_bridge import SIMPLIFY_SECONDS

    return max(0.0, min(SIMPLIFY_SECONDS, (deadline - time.monotonic()) / 2 / max(parts, 1)))


def _formulas(p: Problem, g: Any, graph: Any, sample: list[Any], cotangent: Any,
              deadline: float, fold: bool = True) -> dict[str, Any]:
    """Per wrt variable: ("pattern", expr) or ("elements", array); with ``fold``, sums
    over an axis written as ``Σ`` (:func:`folded`)."""
    import numpy as np

    from ..core.ir import Printer
    from ..core.sympy_bridge import element_pattern, input_symbols, simplify, simplify_all

    # named as the IR names them (a variable called np or l is printed np_1, l_1)
    printer = Printer(graph)
    symbols = {printer.name(v): s for v, s in zip(graph.inputs, input_symbols(graph))}
    exprs = g.expressions(*sample, gradient=cotangent, seconds=0)  # simplified below
    if fold:
        exprs = [folded(e, symbols, _simplify_seconds(deadline, len(exprs))) for e in exprs]
    patterns = [_pattern(e, symbols, element_pattern) if np.ndim(e) else None for e in exprs]
    seconds = _simplify_seconds(deadline, len(exprs))
    result: dict[str, Any] = {}
    for name, e, pattern in zip(p.wrt, exprs, patterns):
        if np.ndim(e) == 0:
            result[name] = ("pattern", simplify(e, seconds))
        elif pattern is not None:
            result[name] = ("pattern", simplify(pattern, seconds))
        else:
            result[name] = ("elements", simplify_all(e, seconds))
    return result


def folded(exprs: Any, symbols: dict[str, Any], seconds: float = 1.0) -> Any:
    """Each element of ``exprs`` (an expression or an object array) with its sums over
    an input's axis as ``Σ`` (:func:`.sums.fold_sums`), its other
    elements the element symbols again (for :func:`element_pattern`). The summed
    indices take letters that the element pattern of ``exprs``'s rank does not. Within
    ``seconds`` in all; past them, the rest of the elements stay as they are."""
    import time

    import numpy as np
    import sympy as sp

    from ..core.sympy_bridge import INDEX_LETTERS, OutOfTime, time_limit
    from .sums import fold_sums

    ndim = np.ndim(exprs)
    letters = [*INDEX_LETTERS[ndim:], *"qrst"]
    back = {}
    for name, syms in symbols.items():
        a = np.asarray(syms, dtype=object)
        if a.ndim:
            base = sp.IndexedBase(name, real=True)
            back.update({base[idx]: a[idx] for idx in np.ndindex(*a.shape)})

    deadline = time.monotonic() + seconds
    cache: dict[Any, Any] = {}  # elements often repeat one expression

    def one(e: Any) -> Any:
        if not isinstance(e, sp.Basic) or e.is_Atom:
            return e
        if e not in cache:
            cache[e] = e
            left = deadline - time.monotonic()
            if left > 0:
                try:
                    with time_limit(left):
                        cache[e] = fold_sums(e, symbols, letters).xreplace(back)
                except OutOfTime:
                    pass
        return cache[e]

    if ndim == 0:
        return one(exprs)
    with np.errstate(all="ignore"):
        return np.frompyfunc(one, 1, 1)(np.asarray(exprs, dtype=object))


def _pattern(exprs: Any, symbols: dict[str, Any], element_pattern: Any) -> Any:
    """One formula for every element: in ``x[i]``, or the same one everywhere."""
    pattern = element_pattern(exprs, symbols)
    if pattern is None:
        first = exprs.flat[0]
        if all(e == first for e in exprs.flat):  # d(sum(x)**3)/dx[i]: one long expression
            return first
    return pattern


def _oracle(p: Problem, graph: Any, at: list[Any] | None, cotangent: Any) -> list[Any]:
    """SymPy's gradient of the traced function at the --at point, per wrt variable: the
    values and where they are SymPy's complex infinity ``zoo`` (an infinity of either
    sign, as ``sqrt'(0) = 1/0``), as :func:`symgrad.testing.relative_error` takes them."""
    from ..core.sympy_bridge import evaluate, gradient_expressions

    exprs = gradient_expressions(graph, cotangent, p.argnums)
    return [evaluate(e, graph, at or [], with_zoo=True) for e in exprs]


def _sympy_derivative(p: Problem, graph: Any, cotangent: Any, deadline: float) -> dict:
    """--show sympy: the traced function and SymPy's own derivative of it."""
    from ..core.sympy_bridge import gradient_expressions, simplify_all, to_sympy

    exprs = gradient_expressions(graph, cotangent, p.argnums)
    function = to_sympy(graph)[0]
    seconds = _simplify_seconds(deadline, len(exprs))
    return {"function": function,
            "gradient": {n: simplify_all(e, seconds) for n, e in zip(p.wrt, exprs)}}


# ---------------------------------------------------------------------------
# the blocks of a Hessian or a Jacobian


def run_sympy_blocks(p: Problem, kind: str, blocks: list[Block], graph: Any, derived: Any,
                     at: list[Any] | None, check: bool, show: bool, report: Report,
                     seconds: float, expand: bool = False) -> SymPyResults:
    """As :func:`run_sympy`, for ``kind`` "hessian" or "jacobian": ``graph`` is the
    traced function, ``derived`` the optimized graph of symgrad's Hessian (Jacobian),
    whose outputs are the ``blocks`` in order."""
    what = {"hessian": "the Hessian's graph", "jacobian": "the Jacobian's graph"}[kind]
    skipped = too_symbolic(graph) or too_symbolic(derived, what)
    if skipped:
        return SymPyResults(seconds, {}, skipped)
    import sympy  # noqa: F401  imported before the budget starts (and before a fork)

    from ..core import sympy_bridge  # noqa: F401
    from . import bounds

    steps: dict[str, Any] = {}
    if check:
        steps["check"] = lambda deadline: [
            evaluate_block(e, graph, at) for e in _sympy_blocks(p, kind, blocks, graph)]
    steps["formulas"] = lambda deadline: report.section(
        lambda r: r.block_formulas(_block_formulas(blocks, derived, deadline, not expand)))
    if show:
        steps["sympy"] = lambda deadline: report.section(
            lambda r: r.show("sympy", _sympy_blocks_shown(p, kind, blocks, graph, deadline)))
    return SymPyResults(seconds, bounds.run(steps, seconds))


def evaluate_block(exprs: Any, graph: Any, at: list[Any] | None) -> Any:
    """A block of SymPy's expressions at the --at point, 50 digits: the values and
    where they are ``zoo``, as :func:`.checks.sympy_check` takes them."""
    from ..core.sympy_bridge import evaluate

    return evaluate(exprs, graph, at or [], with_zoo=True)


def _sympy_blocks(p: Problem, kind: str, blocks: list[Block], graph: Any) -> list[Any]:
    """SymPy's own ``hessian`` (``jacobian``) of the traced function, cut into
    ``blocks`` (object arrays of their shapes)."""
    import numpy as np
    import sympy as sp

    from ..core.sympy_bridge import exact, input_symbols, to_sympy

    symbols = input_symbols(graph)
    wrt = [np.ravel(np.asarray(symbols[p.names.index(n)], dtype=object)) for n in p.wrt]
    offsets = dict(zip(p.wrt, np.cumsum([0] + [len(w) for w in wrt])))
    variables = [s for w in wrt for s in w]
    y = to_sympy(graph)[0]
    if kind == "hessian":
        matrix = sp.hessian(y if isinstance(y, sp.Basic) else exact(y), variables)
    else:
        outputs = [e if isinstance(e, sp.Basic) else exact(e) for e in np.ravel(y)]
        matrix = sp.Matrix(outputs).jacobian(variables)
    result = []
    for b in blocks:
        top = 0 if b.row is None else offsets[b.row]
        left = offsets[b.col]
        rows, cols = int(np.prod(b.row_shape)), int(np.prod(b.col_shape))
        part = np.empty((rows, cols), dtype=object)
        for r in range(rows):
            for c in range(cols):
                part[r, c] = matrix[top + r, left + c]
        result.append(part.reshape(b.shape) if b.shape else part[0, 0])
    return result


def _sympy_blocks_shown(p: Problem, kind: str, blocks: list[Block], graph: Any,
                        deadline: float) -> dict:
    """--show sympy: the traced function and SymPy's own Hessian (Jacobian) of it."""
    from ..core.sympy_bridge import simplify_all, to_sympy

    exprs = _sympy_blocks(p, kind, blocks, graph)
    seconds = _simplify_seconds(deadline, len(exprs))
    return {"function": to_sympy(graph)[0],
            "blocks": [(b, simplify_all(e, seconds)) for b, e in zip(blocks, exprs)]}


def _block_formulas(blocks: list[Block], derived: Any, deadline: float,
                    fold: bool = True) -> list[tuple]:
    """Per block: ("pattern", expr) or ("elements", array), of symgrad's own graph;
    with ``fold``, sums over an axis as ``Σ`` (:func:`folded`)."""
    import numpy as np
    import sympy as sp

    from ..core.ir import Printer
    from ..core.sympy_bridge import block_pattern, input_symbols, simplify, simplify_all, to_sympy

    printer = Printer(derived)  # named as the IR names them, as for a gradient
    symbols = input_symbols(derived)
    by_name = {printer.name(v): s for v, s in zip(derived.inputs, symbols)}
    outputs = to_sympy(derived, symbols)
    if fold:
        outputs = [folded(e, by_name, _simplify_seconds(deadline, len(blocks)))
                   for e in outputs]
    seconds = _simplify_seconds(deadline, len(blocks))
    result = []
    for b, e in zip(blocks, outputs):
        pattern = block_pattern(e, by_name, len(b.row_shape)) if np.ndim(e) else e
        if pattern is None:
            result.append((b, ("elements", simplify_all(e, seconds))))
        elif isinstance(pattern, sp.Piecewise):  # each piece on its own: SymPy's simplify
            pieces = [(simplify(x, seconds / 2), c) for x, c in pattern.args]
            result.append((b, ("pattern", sp.Piecewise(*pieces))))  # may fold the pieces
        else:
            result.append((b, ("pattern", simplify(pattern, seconds))))
    return result


__all__ = ["SymPyResults", "run_sympy", "run_sympy_blocks", "too_symbolic"]
