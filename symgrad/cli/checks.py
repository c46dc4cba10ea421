"""``symgrad grad --check``: symgrad's gradient against SymPy and finite differences.

Both comparisons measure with :func:`symgrad.testing.relative_error`, as
``check_grad`` does: the largest absolute difference over the elements, over
the largest absolute finite reference value (or a floor); infinities match
infinities of the same sign, SymPy's complex infinity ``zoo`` (``sqrt'(0) =
1/0``) an infinity of either sign, nan only nan. The finite differences are
:func:`symgrad.testing.finite_differences` of every element up to ``FD_LIMIT``,
above that of a fixed sample; elements where the function is nan at ``x ± h``
are left out (and the row says how many).

One rule decides a variable: a MISMATCH of either comparison fails it;
otherwise it passes when at least one comparison confirmed it (within its
tolerance, and reliable). When neither did (SymPy not asked, out of time or
failed; finite differences not compared or unreliable here) it is NOT CHECKED:
nothing confirmed the gradient, and the command exits 1 as for a mismatch.
A derivative with a nan or infinite element is never confirmed
(:func:`symgrad.testing.not_finite`): a reference that agrees with it there
(finite differences of a function that overflows are nan too) shows only that
both failed, so it is NOT CHECKED, or a MISMATCH where a reference is finite.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .limits import (
    FD_FLOOR,
    FD_LIMIT,
    FD_MAX_STEP,
    FD_ROUNDING,
    FD_RTOL,
    FD_SAMPLE,
    FD_STEP,
    FD_WORK,
    SYMPY_FLOOR,
    SYMPY_RTOL,
)

if TYPE_CHECKING:
    from .problem import Problem


@dataclass(frozen=True)
class SymPyCheck:
    """symgrad's gradient of one variable against SymPy's derivative (50 digits)."""

    error: float | None   # relative_error; None where SymPy gave no derivative
    why_not: str = ""     # why it did not
    not_finite: str = ""  # why symgrad's value cannot be confirmed ("" if it is finite)

    @property
    def ok(self) -> bool:
        return self.error is not None and self.error <= SYMPY_RTOL and not self.not_finite

    @property
    def mismatch(self) -> bool:
        return self.error is not None and not self.error <= SYMPY_RTOL

    @property
    def status(self) -> str:
        """"ok", "mismatch", "not confirmed: why" or "not compared: why" (as --format
        json says it)."""
        if self.ok or self.mismatch:
            return "ok" if self.ok else "mismatch"
        return f"not confirmed: {self.not_finite}" if self.error is not None else \
            f"not compared: {self.why_not}"


@dataclass(frozen=True)
class FDCheck:
    """symgrad's gradient of one variable against central finite differences."""

    error: float | None   # relative_error over the elements compared; None: none was
    checked: int          # how many elements were differenced: all, or a fixed sample
    size: int
    unreliable: str = ""  # why the differences cannot judge this point ("" if they can)
    left_out: int = 0     # elements where the function is nan at x - h or x + h
    why_not: str = ""     # why nothing was compared
    not_finite: str = ""  # why symgrad's value cannot be confirmed ("" if it is finite)

    @property
    def ok(self) -> bool:
        return self.error is not None and not self.unreliable and self.error <= FD_RTOL \
            and not self.not_finite

    @property
    def mismatch(self) -> bool:
        return self.error is not None and not self.unreliable and not self.error <= FD_RTOL

    @property
    def status(self) -> str:
        """"ok", "mismatch", "not confirmed: why", "unreliable: why" or "not compared:
        why"."""
        if self.ok or self.mismatch:
            return "ok" if self.ok else "mismatch"
        if self.error is None:
            return f"not compared: {self.why_not}"
        return f"not confirmed: {self.not_finite}" if self.not_finite else \
            f"unreliable: {self.unreliable}"


def verdict(sympy: SymPyCheck, fd: FDCheck) -> str:
    """The one rule: "MISMATCH" if either comparison is one, else "ok" if either
    confirmed the gradient (never one that is not finite), else "NOT CHECKED"."""
    if sympy.mismatch or fd.mismatch:
        return "MISMATCH"
    return "ok" if sympy.ok or fd.ok else "NOT CHECKED"


def sympy_check(grad: Any, oracle: Any, why_not: str) -> SymPyCheck:
    """``grad`` against SymPy's ``(values, zoo)`` (see ``symbolic._oracle``), or why
    there is none."""
    from ..testing import not_finite, relative_error

    if oracle is None:
        return SymPyCheck(None, why_not, not_finite(grad))
    want, zoo = oracle
    return SymPyCheck(relative_error(grad, want, SYMPY_FLOOR, either_sign=zoo),
                      not_finite=not_finite(grad))


def fd_check(p: Problem, at: list[Any], k: int, grad: Any, cotangent: Any) -> FDCheck:
    """:func:`_fd_check`, never confirming a ``grad`` that is not finite."""
    from dataclasses import replace

    from ..testing import not_finite

    return replace(_fd_check(p, at, k, grad, cotangent), not_finite=not_finite(grad))


def _fd_check(p: Problem, at: list[Any], k: int, grad: Any, cotangent: Any) -> FDCheck:
    """Central differences against ``grad`` (of wrt variable ``k``) at the --at point.

    An element where they disagree is looked at again: the differences with half
    the step estimate their truncation error (``4/3 |d(h) - d(h/2)|``), a few
    units in the last place of the function's value over the step their rounding
    error; where rounding dominates (a sum of a million elements), a longer step
    is tried once. A disagreement that these errors explain, or a function that is
    not finite within a step, makes the comparison unreliable there, not a
    mismatch: ``(x**1000)**1000`` at 1.0001 curves too fast for a step of 1e-6.
    Each element's error is :func:`symgrad.testing.relative_error` with the
    floor of the whole comparison (the largest finite difference), so that the
    elements add up to the comparison's error.
    """
    import numpy as np

    from ..testing import NAN_AT_STEP, relative_error

    i = p.argnums[k]
    x = np.array(at[i], dtype=float)
    picked = _fd_sample(x.size)
    n = len(picked)
    got = np.ravel(np.asarray(grad, dtype=float))[picked]
    flat = np.ravel(x)[picked]
    steps = FD_STEP * np.maximum(1.0, np.abs(np.nan_to_num(flat)))
    try:
        first, noise, nan_at_step = _differences(p, at, i, cotangent, picked, steps)
    except Exception as e:  # noqa: BLE001  a FILE.py function may refuse a nearby point
        from .bounds import describe

        return FDCheck(None, n, x.size,
                       why_not=f"calling the function a step away raised {describe(e)}")
    compared = ~nan_at_step
    left_out = n - int(np.count_nonzero(compared))
    if not left_out < n:
        return FDCheck(None, n, x.size, left_out=left_out, why_not=NAN_AT_STEP)
    finite = np.isfinite(first) & compared
    floor = max(FD_FLOOR, float(np.abs(first[finite]).max(initial=0.0)))
    error = relative_error(got, first, floor, where=compared)
    if error <= FD_RTOL:
        return FDCheck(error, n, x.size, left_out=left_out)
    worst, said, own = 0.0, set(), 0.0
    for j in np.flatnonzero(compared):
        off = relative_error(got[j], first[j], floor)
        if off <= FD_RTOL:
            worst = max(worst, off)
            continue

        def differences(h: float, j: int = j) -> tuple[float, float]:
            d, noise, _ = _differences(p, at, i, cotangent, picked[j:j + 1], np.array([h]))
            return float(d[0]), float(noise[0])

        try:
            off, judged, mine = _judge(got[j], differences, float(steps[j]), float(flat[j]),
                                        (float(first[j]), float(noise[j])), floor)
        except Exception as e:  # noqa: BLE001  as above, at another step
            from .bounds import describe

            return FDCheck(None, n, x.size, left_out=left_out,
                           why_not=f"calling the function a step away raised {describe(e)}")
        worst, own = max(worst, off), max(own, mine)
        said.add(judged)
    if "mismatch" in said:  # a disagreement their own errors do not explain
        return FDCheck(max(error, worst), n, x.size, left_out=left_out)
    if said == {"ok"}:  # agreement with a longer step
        return FDCheck(worst, n, x.size, left_out=left_out)
    if "not finite" in said:
        return FDCheck(worst, n, x.size, "the function is not finite within a step of the "
                       "point", left_out)
    return FDCheck(worst, n, x.size,
                   f"their own error is about {own:.0e}, more than the {FD_RTOL:.0e} "
                   "tolerance (the function changes too fast for their step, or rounds "
                   "too coarsely)", left_out)


def _judge(got: float, differences: Any, step: float, x: float,
           first: tuple[float, float], floor: float) -> tuple[float, str, float]:
    """One element that disagrees with ``first`` (its difference and rounding error
    at ``step``): its relative error with the last step tried, the verdict ("ok",
    "mismatch", "not finite" or "unreliable"), and the differences' own error, all
    relative to ``max(|difference|, floor)``."""
    import numpy as np

    from ..testing import relative_error

    longest = FD_MAX_STEP * max(1.0, abs(x))
    d1, noise = first
    for attempt in (1, 2):
        if attempt == 2:
            d1, noise = differences(step)
        off = relative_error(got, d1, floor)
        if off <= FD_RTOL:
            return off, "ok", 0.0
        rounding = noise / max(abs(d1), floor)
        if attempt == 1 and off <= FD_RTOL + 2 * rounding and step < longest:
            step = min(longest, step * 10 * rounding / FD_RTOL)  # rounding explains it
            continue
        d2, _ = differences(step / 2)
        if not (np.isfinite(d1) and np.isfinite(d2)):
            return off, "not finite", 0.0
        truncation = 4 / 3 * abs(d1 - d2) / max(abs(d1), floor)
        if off > FD_RTOL + 2 * (truncation + rounding):
            return off, "mismatch", truncation + rounding
        if attempt == 2 or rounding <= truncation or step >= longest:
            return off, "unreliable", truncation + rounding
        step = min(longest, step * 10 * rounding / FD_RTOL)  # rounding dominates: longer
    raise AssertionError("unreachable")


def _fd_sample(size: int) -> Any:
    """Which elements (flat indices) finite differences check: all of a small
    input, else a fixed (seeded) sample, so that the output does not change from
    run to run."""
    import numpy as np

    n = min(size, FD_LIMIT, max(FD_SAMPLE, FD_WORK // size))
    if n == size:
        return np.arange(size)
    return np.sort(np.random.default_rng(0).choice(size, n, replace=False))


def _differences(p: Problem, at: list[Any], i: int, cotangent: Any, picked: Any,
                 steps: Any) -> tuple[Any, Any, Any]:
    """:func:`symgrad.testing.finite_differences` of ``sum(f * cotangent)`` in argument
    ``i`` at the flat indices ``picked`` with the steps ``steps``; an estimate of
    their rounding error (:data:`FD_ROUNDING` units in the last place of the larger
    value, over the step); and where the function itself is nan at ``x ± h``."""
    import numpy as np

    from ..testing import finite_differences

    d, up, down = finite_differences(p.fun, at, i, cotangent, elements=picked, steps=steps,
                                     ends=True)
    with np.errstate(all="ignore"):
        noise = FD_ROUNDING * np.spacing(np.fmax(np.abs(up), np.abs(down))) / (2 * steps)
    return d, noise, np.isnan(up) | np.isnan(down)


__all__ = ["FDCheck", "SymPyCheck", "fd_check", "sympy_check", "verdict"]
