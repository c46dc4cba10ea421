"""Simplifying SymPy expressions within a time budget: :func:`simplify`, :func:`simplify_all`
(the shortest of ``factor`` and ``simplify`` found in time), :func:`nice_numbers` (a
float64 that rounds a small fraction written as that fraction) and :func:`time_limit`
(SymPy has no timeouts: ``SIGALRM`` in the main thread). Split from
:mod:`.sympy_bridge`, which turns graphs into the expressions simplified here and
re-exports these names; like it, importing this imports SymPy."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import sympy as sp

#: seconds SymPy may spend simplifying the gradient expressions of one call
SIMPLIFY_SECONDS = 2.0


class OutOfTime(BaseException):
    """A :func:`time_limit` ran out. A BaseException, as KeyboardInterrupt: the alarm
    may fire anywhere in the block, and no ``except Exception`` on the way (the IR
    checker's, SymPy's) may turn it into an error of its own."""


def _can_time() -> bool:
    import signal
    import threading

    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


#: after its first alarm, a time limit rings again this often: an OutOfTime raised where
#: Python only prints exceptions (a gc callback such as hypothesis's, a ``__del__``) is
#: lost, and a limit that rang once would then never end its block
ALARM_REPEAT = 0.05


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`OutOfTime` in the block after ``seconds`` (and again every
    :data:`ALARM_REPEAT` seconds until it leaves): SymPy has no timeouts of its own.
    Uses ``SIGALRM``, so it limits only the main thread of a Unix process; elsewhere
    the block runs unlimited. Nested limits keep the outer one's deadline (an inner
    block ends at the earlier of the two)."""
    if not _can_time():
        yield
        return
    import signal
    import time

    inside = [True]

    def out_of_time(signum: int, frame: Any) -> None:
        if inside[0]:
            raise OutOfTime

    outer = signal.getitimer(signal.ITIMER_REAL)[0]  # 0.0: no limit around this one
    start = time.monotonic()
    previous = signal.signal(signal.SIGALRM, out_of_time)
    signal.setitimer(signal.ITIMER_REAL, max(min(seconds, outer or seconds), 1e-3),
                     ALARM_REPEAT)
    try:
        yield
    finally:
        inside[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer:  # the outer limit goes on (and fires at once if it was this one's)
            signal.setitimer(signal.ITIMER_REAL, max(outer - (time.monotonic() - start), 1e-3),
                             ALARM_REPEAT)


def nice_numbers(expr: Any, max_denominator: int = 10**6) -> Any:
    """``expr`` with each number that is the float64 rounding of a small fraction
    written as that fraction: the ``0.1`` of a program reads ``1/10``, not
    ``3602879701896397/36028797018963968``. Other numbers stay exact.

        >>> import sympy as sp
        >>> from symgrad.core.sympy_bridge import exact
        >>> nice_numbers(exact(0.1) * sp.Symbol("x") + exact(1 / 3))
        x/10 + 1/3
    """
    if not isinstance(expr, sp.Basic):
        return expr
    replace = {}
    for r in expr.atoms(sp.Rational):
        if r.q > max_denominator:
            fraction = r.limit_denominator(max_denominator)
            if float(fraction) == float(r):
                replace[r] = fraction
    return expr.xreplace(replace) if replace else expr


def simplify(expr: Any, seconds: float = SIMPLIFY_SECONDS) -> Any:
    """``expr`` in its shortest simplified form, if SymPy finds it within ``seconds``.

    Numbers go through :func:`nice_numbers` first.

    Tries ``sp.factor`` and ``sp.simplify`` and keeps the one with the fewest
    operations (the factored one on a tie: ``3*(x + 2)/2`` over ``3*x/2 + 3``).
    The budget is enforced with ``SIGALRM`` in the main thread of a Unix
    process; elsewhere only the cheap ``factor`` is tried. Out of time, ``expr``
    comes back as it is, which is correct, only longer.

        >>> import sympy as sp
        >>> x = sp.Symbol("x")
        >>> simplify(sp.Rational(3, 2) * x + 3)
        3*(x + 2)/2
    """
    expr = nice_numbers(expr)
    if not isinstance(expr, sp.Basic) or expr.is_Atom or seconds <= 0:
        return expr
    sums = {s: sp.Dummy(real=True) for s in expr.atoms(sp.Sum)}
    if sums:  # a Σ stays as it is: simplify would write it out (doit) or mangle it
        inside = simplify(expr.xreplace(sums), seconds)
        return inside.xreplace({d: s for s, d in sums.items()})
    timed = _can_time()
    candidates = [expr]
    try:
        with time_limit(seconds):
            candidates.append(sp.factor(expr))
            if timed:
                candidates.append(sp.simplify(expr))
    except OutOfTime:
        pass
    except Exception:  # noqa: BLE001  (SymPy cannot factor some Piecewise/Max forms)
        pass
    # fewest operations; on a tie the first of factor, simplify, expr
    return min([*candidates[1:], expr], key=sp.count_ops)


def simplify_all(exprs: Any, seconds: float = SIMPLIFY_SECONDS) -> Any:
    """Each expression (of a scalar or an object array) simplified, ``seconds`` in all."""
    import time

    deadline = time.monotonic() + seconds
    cache: dict[Any, Any] = {}  # arrays often repeat one expression

    def one(e: Any) -> Any:
        if e not in cache:
            cache[e] = simplify(e, deadline - time.monotonic())
        return cache[e]

    if np.ndim(exprs) == 0:
        return one(exprs)
    with np.errstate(all="ignore"):  # numpy reads SymPy's float flags as its own
        return np.frompyfunc(one, 1, 1)(np.asarray(exprs, dtype=object))


__all__ = ["SIMPLIFY_SECONDS", "OutOfTime", "time_limit", "nice_numbers", "simplify",
           "simplify_all"]
