"""``check_grad``: check a symgrad gradient against SymPy and finite differences.

For users who want to know that the gradient of *their* function is right:
symgrad's gradient is compared with SymPy's exact derivative of the traced
function, evaluated at 50 digits (when the graph converts to SymPy and is
small enough), and with central finite differences. The result is a report of
the worst relative error per argument (:func:`relative_error`, which
``symgrad grad --check`` uses too), printable as a table; over tolerance,
``check_grad`` raises AssertionError with that table.

Importing this module loads neither SymPy nor Numba; SymPy is imported when a
check needs it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .core.ir import Aval
from .core.tracing import arg_names
from .numpy_api import trace
from .transforms.api import grad
from .transforms.calls import _is_array_like
from .transforms.derivatives import hessian

#: SymPy differentiates element by element: beyond this many input elements it is skipped
SYMPY_MAX_ELEMENTS = 400
#: why finite differences are not compared at an element where they are nan
NAN_AT_STEP = "f is nan at x - h or x + h"


def not_finite(value: Any) -> str:
    """Why a derivative cannot be confirmed: "" where every element is finite, else how
    many are nan or infinite. A check never calls such a value ok: a reference that is
    nan or infinite there too (finite differences of a function that overflows, inf -
    inf) shows only that both failed, not that the derivative is right.

        >>> not_finite(np.array([1.0, np.nan, np.inf])), not_finite(2.0)
        ('symgrad gives 1 nan and 1 infinite of 3 elements', '')
    """
    v = np.asarray(value, dtype=float)
    nan, inf = int(np.count_nonzero(np.isnan(v))), int(np.count_nonzero(np.isinf(v)))
    if not nan and not inf:
        return ""
    parts = [f"{nan} nan"] * bool(nan) + [f"{inf} infinite"] * bool(inf)
    return f"symgrad gives {' and '.join(parts)} of {v.size} elements"


def _unconfirmed(comparisons: list[Comparison], got: Any) -> tuple[Comparison, ...]:
    """``comparisons`` of a derivative ``got``; where ``got`` is not finite, those that
    agree with it are set aside (skipped, with the reason): only a mismatch stays."""
    why = not_finite(got)
    if not why:
        return tuple(comparisons)
    why += ": not finite, so not confirmed"
    return tuple(c if c.skipped or not c.ok else
                 Comparison(c.reference, float("nan"), (), c.rtol, c.atol, why)
                 for c in comparisons)


def relative_error(got: Any, want: Any, floor: float = 0.0, *, either_sign: Any = None,
                   where: Any = None) -> float:
    """How far ``got`` is from the reference ``want``: the largest absolute difference
    over the elements, divided by the largest absolute finite value of ``want`` or by
    ``floor``, whichever is larger. :func:`check_grad` and ``symgrad grad --check``
    both measure with it.

    Non-finite values compare as values: an infinity matches an infinity of the
    same sign, nan matches only nan. Where ``either_sign`` (a bool mask like
    ``want``) is True, ``want`` is an infinity whose sign is unknown, SymPy's
    complex infinity ``zoo`` (the derivative ``1/(2*sqrt(x))`` of ``sqrt`` at 0 is
    ``1/0``), and an infinity of either sign matches it. Any other difference that
    involves a non-finite value, and a difference of shapes, is an infinite error.
    ``where`` (a bool mask) leaves the other elements out.

        >>> import numpy as np
        >>> relative_error([2.0, 1e-9], [2.0, 0.0])            # 1e-9 / 2
        5e-10
        >>> relative_error(np.inf, np.inf), relative_error(-np.inf, np.inf)
        (0.0, inf)
        >>> relative_error(-np.inf, np.inf, either_sign=True)  # SymPy's zoo
        0.0
        >>> relative_error(np.nan, np.nan), relative_error(np.inf, np.nan)
        (0.0, inf)
    """
    return _worst(got, want, floor, either_sign, where)[0]


def _worst(got: Any, want: Any, floor: float, either_sign: Any = None,
           where: Any = None) -> tuple[float, tuple[int, ...]]:
    """:func:`relative_error` and the index of the element where it is worst."""
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    if got.shape != want.shape:
        return float("inf"), ()
    where = np.ones(want.shape, bool) if where is None else np.asarray(where, bool)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    if either_sign is not None:
        same |= np.asarray(either_sign, bool) & np.isinf(got)
    with np.errstate(invalid="ignore"):  # inf - inf
        diff = np.where(same | ~where, 0.0, np.abs(got - want))
    diff = np.where(np.isnan(diff), np.inf, diff)  # nan against a number
    if diff.size == 0:
        return 0.0, ()
    index = np.unravel_index(int(np.argmax(diff)), diff.shape)
    worst = float(diff[index])
    scale = max(float(np.abs(want[np.isfinite(want) & where]).max(initial=0.0)), floor)
    error = 0.0 if worst == 0 else worst / scale if scale else float("inf")
    return error, tuple(int(i) for i in index)


@dataclass(frozen=True)
class Comparison:
    """symgrad's gradient of one argument against one reference."""

    reference: str            # "SymPy" or "finite differences"
    error: float              # worst relative_error, nan if not compared
    index: tuple[int, ...]    # where it is worst
    rtol: float
    atol: float
    skipped: str = ""         # why there is no comparison
    note: str = ""            # which elements were left out, and why

    @property
    def ok(self) -> bool:
        return bool(self.skipped) or self.error <= self.rtol

    def cell(self) -> str:
        if self.skipped:
            return f"n/a ({self.skipped})"
        text = f"{self.error:.1e}"
        text = text if self.ok else f"{text} FAIL at {list(self.index)}"
        return f"{text} ({self.note})" if self.note else text


@dataclass(frozen=True)
class ArgumentReport:
    name: str
    shape: tuple[int, ...]
    gradient: Any
    comparisons: tuple[Comparison, ...]

    @property
    def checked(self) -> bool:
        """Whether any reference was compared (else the gradient is not checked)."""
        return any(not c.skipped for c in self.comparisons)

    @property
    def ok(self) -> bool:
        return self.checked and all(c.ok for c in self.comparisons)

    @property
    def worst(self) -> float:
        """The worst relative error over the references compared."""
        errors = [c.error for c in self.comparisons if not c.skipped]
        return max(errors) if errors else float("nan")


@dataclass(frozen=True)
class GradReport:
    """The result of :func:`check_grad`: one row per differentiated argument."""

    function: str
    arguments: tuple[ArgumentReport, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return all(a.ok for a in self.arguments)

    @property
    def worst(self) -> dict[str, float]:
        """Worst relative error per argument name."""
        return {a.name: a.worst for a in self.arguments}

    def _verdict(self) -> str:
        if any(not c.ok for a in self.arguments for c in a.comparisons):
            return "GRADIENT MISMATCH"
        unchecked = [a.name for a in self.arguments if not a.checked]
        if not unchecked:
            return "ok"
        why = [f"; {a.name}: {w}: not finite, so not confirmed" for a in self.arguments
               if not a.checked and (w := not_finite(a.gradient))]
        return f"NOT CHECKED (no reference for {', '.join(unchecked)}{''.join(why)})"

    def __str__(self) -> str:
        refs = [(c.reference, c.rtol) for c in self.arguments[0].comparisons]
        header = ["argument", "shape"] + [f"vs {r} (rtol {t:.0e})" for r, t in refs]
        rows = [[a.name, str(a.shape)] + [c.cell() for c in a.comparisons]
                for a in self.arguments]
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
                 for r in [header, *rows]]
        title = f"check_grad of {self.function}: {self._verdict()}; worst relative error " \
                "per argument"
        return "\n".join([title, *lines])


#: the tolerances check_grad uses at least for a float32 argument (float32's epsilon is
#: 1.2e-7: a gradient rounded a few times, relative to its largest element)
F32_RTOL, F32_ATOL = 1e-4, 1e-6


def check_grad(f: Callable, *args: Any, gradient: Any = None,
               argnums: int | Sequence[int] | None = None, rtol: float = 1e-9,
               atol: float = 1e-12, fd_rtol: float = 1e-5, fd_atol: float = 1e-8,
               eps: float = 1e-6, backend: str = "numba", sympy: bool = True,
               order: int = 1) -> GradReport:
    """Compare symgrad's gradient of ``f`` at ``args`` with SymPy and finite differences.

    ``order=2`` checks the Hessian of a scalar ``f`` instead, one block per argument
    in ``argnums`` (``symgrad.hessian(f, argnums=i)``, shape ``x.shape + x.shape``):
    against SymPy's second derivatives, and against central differences of
    symgrad's gradient (itself checked by ``order=1``), with the same errors.

    ``gradient`` is the cotangent of a non-scalar output (the gradient is then
    that of ``sum(f(*args) * gradient)``, as in :func:`symgrad.grad`);
    ``argnums`` defaults to every array or number argument. The error of a
    gradient is its :func:`relative_error` against the reference, with
    ``floor=atol / rtol``: the largest absolute difference over its elements
    divided by the largest absolute value of the reference (or by
    ``atol / rtol`` where that is larger); infinities match infinities of the
    same sign, and SymPy's complex infinity ``zoo`` (``sqrt'(0) = 1/0``) an
    infinity of either sign; nan matches only nan. The error must be at most
    ``rtol`` against SymPy's derivative (evaluated at 50 digits; skipped where
    the graph does not convert or has more than ``SYMPY_MAX_ELEMENTS`` input
    elements, or with ``sympy=False``) and at most ``fd_rtol`` against central
    differences with step ``eps * max(1, |x|)``, which leave out (and the
    report says so) the elements where they are nan: where the function is nan
    at ``x ± h``, as ``sqrt`` at 0. Finite differences are meaningless at a
    kink (``abs`` at 0, ties of ``maximum``): check at smooth points. A gradient
    with a nan or infinite element is never ok (:func:`not_finite`): a reference
    that agrees there is set aside, and the argument is NOT CHECKED (or a
    mismatch, where a reference is finite).

    A float32 argument is differentiated in float32 (its gradient must be float32) and
    checked against the same float64 references (SymPy and finite differences at the
    float32 values, in float64) with float32 tolerances: ``rtol`` and ``fd_rtol`` at
    least :data:`F32_RTOL`, ``atol`` and ``fd_atol`` at least :data:`F32_ATOL`.

    Returns a :class:`GradReport` (``print`` it: a table); raises
    AssertionError with the same table when a gradient is over tolerance, or
    when no reference could check an argument at all.

        >>> import numpy as np
        >>> from symgrad.testing import check_grad
        >>> report = check_grad(lambda x, y: np.sum(np.sin(x) * y), np.array([0.5, 1.0]), 2.0)
        >>> report.ok
        True
        >>> print(report)                                        # doctest: +ELLIPSIS
        check_grad of <lambda>: ok; worst relative error per argument
        argument  shape  vs SymPy (rtol 1e-09)  vs finite differences (rtol 1e-05)
        x         (2,)   ...
        y         ()     ...
    """
    names = arg_names(f, len(args))
    traced = [i for i, a in enumerate(args) if _is_array_like(a)]
    if argnums is None:
        wrt = tuple(traced)
    else:
        wrt = (argnums,) if isinstance(argnums, int) else tuple(argnums)
        wrt = tuple(i % len(args) for i in wrt)
    single = [i for i in wrt if getattr(args[i], "dtype", None) == np.float32]
    if single:  # float32 arguments: float32 tolerances against the float64 references
        rtol, atol = max(rtol, F32_RTOL), max(atol, F32_ATOL)
        fd_rtol, fd_atol = max(fd_rtol, F32_RTOL), max(fd_atol, F32_ATOL)
    values = [np.array(a, dtype=float) if i in wrt else a for i, a in enumerate(args)]
    if order == 2:
        return _check_hessian(f, values, names, wrt, (rtol, atol, fd_rtol, fd_atol), eps,
                              backend, sympy, gradient)
    if order != 1:
        raise ValueError(f"check_grad checks order 1 (the gradient) or 2 (the Hessian), not "
                         f"{order!r}")
    got = grad(f, argnums=wrt, backend=backend)(*args, gradient=gradient)
    for k, i in enumerate(wrt):
        if i in single and np.asarray(got[k]).dtype != np.float32:
            raise AssertionError(f"the gradient in the float32 argument {names[i]} is "
                                 f"{np.asarray(got[k]).dtype}, not float32")

    exact: list[Any] | None = None
    reason = "disabled"
    if sympy:
        exact, reason = _sympy_gradient(f, values, names, wrt, gradient)

    rows = []
    for k, i in enumerate(wrt):
        g = np.asarray(got[k], dtype=float)
        comparisons = []
        if exact is not None:
            want, zoo = exact[k]
            comparisons.append(_compare("SymPy", g, want, rtol, atol, either_sign=zoo))
        else:
            comparisons.append(Comparison("SymPy", float("nan"), (), rtol, atol, reason))
        fd = finite_differences(f, values, i, gradient, eps)
        comparisons.append(_compare("finite differences", g, fd, fd_rtol, fd_atol,
                                    where=~np.isnan(fd)))
        rows.append(ArgumentReport(names[i], np.shape(values[i]), got[k],
                                   _unconfirmed(comparisons, g)))
    report = GradReport(getattr(f, "__name__", "the function"), tuple(rows))
    if not report.ok:
        raise AssertionError(f"\n{report}")
    return report


def _check_hessian(f: Callable, values: list[Any], names: list[str], wrt: tuple[int, ...],
                   tolerances: tuple[float, ...], eps: float, backend: str, sympy: bool,
                   gradient: Any) -> GradReport:
    """``check_grad(..., order=2)``: each argument's Hessian block against SymPy and
    against central differences of symgrad's gradient."""
    if gradient is not None:
        raise ValueError("check_grad(order=2) checks the Hessian of a scalar function; "
                         "it takes no gradient=")
    rtol, atol, fd_rtol, fd_atol = tolerances
    rows = []
    for i in wrt:
        shape = np.shape(values[i])
        got = np.asarray(hessian(f, argnums=i, backend=backend)(*values), dtype=float)
        comparisons = []
        exact, reason = _sympy_hessian(f, values, names, i) if sympy else (None, "disabled")
        if exact is not None:
            comparisons.append(_compare("SymPy", got, exact, rtol, atol))
        else:
            comparisons.append(Comparison("SymPy", float("nan"), (), rtol, atol, reason))
        first = grad(f, argnums=i, backend="numpy")
        columns = []
        for j in range(int(np.prod(shape))):
            def component(x: Any, j: int = j, i: int = i, first: Callable = first) -> Any:
                full = list(values)
                full[i] = x
                return np.ravel(first(*full))[j]
            columns.append(finite_differences(component, [values[i]], 0, None, eps))
        fd = np.reshape(np.stack(columns), shape + shape) if shape else np.asarray(columns[0])
        comparisons.append(_compare("finite differences", got, fd, fd_rtol, fd_atol,
                                    where=~np.isnan(fd)))
        rows.append(ArgumentReport(names[i], shape, got, _unconfirmed(comparisons, got)))
    report = GradReport(f"the Hessian of {getattr(f, '__name__', 'the function')}", tuple(rows))
    if not report.ok:
        raise AssertionError(f"\n{report}")
    return report


def _sympy_hessian(f: Callable, values: list[Any], names: list[str],
                   i: int) -> tuple[Any, str]:
    """SymPy's second derivatives of ``f`` in argument ``i`` (shape ``x.shape * 2``)."""
    avals = [Aval(np.shape(v)) if k == i or _is_array_like(v) else None
             for k, v in enumerate(values)]
    if int(np.prod(np.shape(values[i]))) ** 2 > SYMPY_MAX_ELEMENTS:
        return None, f"over {SYMPY_MAX_ELEMENTS} Hessian elements"
    import sympy as sp

    from .core.sympy_bridge import evaluate, gradient_expressions, input_symbols

    try:
        graph, _ = trace(f, avals, values, names)
        k = [n for n, a in enumerate(avals) if a is not None].index(i)
        (g,) = gradient_expressions(graph, None, [k])
        symbols = np.ravel(np.asarray(input_symbols(graph)[k], dtype=object))
        rows = [[sp.diff(e, s) for s in symbols] for e in np.ravel(np.asarray(g, dtype=object))]
        h = np.asarray(rows, dtype=object).reshape(np.shape(values[i]) * 2)
        h = h[()] if h.ndim == 0 else h  # a scalar argument: one expression
        inputs = [np.asarray(v, dtype=float) for v, a in zip(values, avals) if a is not None]
        return evaluate(h, graph, inputs), ""
    except NotImplementedError as e:
        return None, f"no SymPy form: {e}"


def _compare(reference: str, got: np.ndarray, want: Any, rtol: float, atol: float,
             either_sign: Any = None, where: Any = None) -> Comparison:
    """A :class:`Comparison`; ``where`` is False where finite differences are nan."""
    note = ""
    if where is not None and not np.all(where):
        left_out = int(np.size(where) - np.count_nonzero(where))
        if left_out == np.size(where):
            return Comparison(reference, float("nan"), (), rtol, atol, NAN_AT_STEP)
        note = f"{left_out} of {np.size(where)} elements left out: {NAN_AT_STEP}"
    error, index = _worst(got, want, atol / rtol, either_sign, where)
    return Comparison(reference, error, index, rtol, atol, note=note)


def _sympy_gradient(f: Callable, values: list[Any], names: list[str], wrt: tuple[int, ...],
                    gradient: Any) -> tuple[list[Any] | None, str]:
    """SymPy's gradient (one array per argument in ``wrt``), or None and why not."""
    avals = [Aval(np.shape(v)) if i in wrt or _is_array_like(v) else None
             for i, v in enumerate(values)]
    if sum(int(np.prod(a.shape)) for a in avals if a is not None) > SYMPY_MAX_ELEMENTS:
        return None, f"over {SYMPY_MAX_ELEMENTS} elements"
    from .core.sympy_bridge import evaluate, gradient_expressions  # imports SymPy

    try:
        graph, _ = trace(f, avals, values, names)
        position = {i: k for k, i in enumerate(i for i, a in enumerate(avals) if a is not None)}
        exprs = gradient_expressions(graph, gradient, [position[i] for i in wrt])
        inputs = [np.asarray(v, dtype=float) for v, a in zip(values, avals) if a is not None]
        return [evaluate(e, graph, inputs, with_zoo=True) for e in exprs], ""
    except NotImplementedError as e:  # a primitive without a SymPy translation
        return None, f"no SymPy form: {e}"


def finite_differences(f: Callable, values: Sequence[Any], i: int, gradient: Any = None,
                       eps: float = 1e-6, *, elements: Any = None, steps: Any = None,
                       ends: bool = False) -> Any:
    """Central differences of ``sum(f(*values) * gradient)`` in argument ``i``, with
    step ``h = eps * max(1, |x|)`` per element ``x``; nan where ``f`` is nan at ``x ± h``
    (or the same infinity at both).

    ``elements`` (flat indices into argument ``i``) differences only those elements,
    and the result is then flat, one per index; ``steps`` (one per element
    differenced) replaces ``h``. With ``ends=True`` the result is a triple: the
    differences, and the sums at ``x + h`` and at ``x - h``, from which a caller
    tells where ``f`` itself is nan or estimates the rounding error (``symgrad grad
    --check`` does both).

        >>> import numpy as np
        >>> finite_differences(lambda x: np.sum(x ** 2), [np.array([1.0, 3.0])], 0).round(6)
        array([2., 6.])
        >>> finite_differences(np.sqrt, [0.0], 0)
        array(nan)
        >>> finite_differences(lambda x: np.sum(x ** 2), [np.arange(5.0)], 0, elements=[4],
        ...                    steps=[0.5])
        array([8.])
    """
    ct = 1.0 if gradient is None else np.asarray(gradient, dtype=float)
    x = np.array(values[i], dtype=float)
    flat = x.ravel()
    picked = np.arange(x.size) if elements is None else np.asarray(elements, dtype=int)
    h = eps * np.fmax(1.0, np.abs(flat[picked])) if steps is None else \
        np.asarray(steps, dtype=float)
    moved = x.copy()  # one element moved at a time, and put back
    call = list(values)

    def loss() -> float:
        # a copy, as f may write to its argument; a scalar as np.float64 (a float)
        call[i] = moved.copy() if moved.ndim else moved[()]
        # f's own RuntimeWarnings (np.var with ddof > n) say what its nan or inf says
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return float(np.sum(np.asarray(f(*call), dtype=float) * ct))

    out, up, down = (np.empty(len(picked)) for _ in range(3))
    with np.errstate(all="ignore"):  # at inf or nan: a nan, not a RuntimeWarning
        for j, (k, step) in enumerate(zip(picked, h)):
            moved.flat[k] = flat[k] + step
            up[j] = loss()
            moved.flat[k] = flat[k] - step
            down[j] = loss()
            moved.flat[k] = flat[k]
            out[j] = (up[j] - down[j]) / (2 * step)
    if elements is None:
        out, up, down = (a.reshape(x.shape) for a in (out, up, down))
    return (out, up, down) if ends else out


__all__ = ["check_grad", "relative_error", "finite_differences", "GradReport",
           "ArgumentReport", "Comparison"]
