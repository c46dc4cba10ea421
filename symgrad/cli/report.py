"""What ``symgrad grad`` prints: formulas, values, checks and ``--show`` sections,
collected by :class:`Report` and printed in one of the formats pretty, text,
latex or json (see :mod:`symgrad.cli.command`)."""

from __future__ import annotations

import copy
import math
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .limits import FD_STEP, LISTED_ELEMENTS

if TYPE_CHECKING:
    from .checks import FDCheck, SymPyCheck
    from .problem import Problem


class Report:
    """Collects what ``symgrad grad`` prints, then prints it in one format."""

    def __init__(self, p: Problem, fmt: str, cotangent: Any):
        self.p, self.fmt, self.cotangent = p, fmt, cotangent
        self.lines: list[str] = []
        self.data: dict[str, Any] = {
            "function": p.title, "variables": {n: list(p.shapes[n]) for n in p.names},
            "wrt": list(p.wrt),
            "gradient": None if cotangent is None else cotangent.tolist()}
        self.f = p.label if cotangent is None else "L"  # ∂f/∂x, ∂loss/∂w, ∂L/∂x
        unicode = (sys.stdout.encoding or "").lower().replace("-", "").startswith("utf")
        self.unicode = unicode and fmt == "pretty"
        shapes = ", ".join(f"{n}: {_shape_text(p.shapes[n])}" for n in p.names)
        self.lines.append(f"{p.title}    ({shapes})")
        if cotangent is not None:
            self.lines.append(f"L = sum({p.label} * gradient), gradient = "
                              f"{_array_text(cotangent)}")

    def _d(self, name: str, index: str = "") -> str:
        if self.fmt == "latex":
            sub = f"_{{{index}}}" if index else ""
            f = self.f if len(self.f) == 1 else rf"\mathrm{{{self.f}}}".replace("_", r"\_")
            return rf"\frac{{\partial {f}}}{{\partial {name}{sub}}}"
        d = "∂" if self.unicode else "d"
        return f"{d}{self.f}/{d}{name}{f'[{index}]' if index else ''}"

    def _equation(self, lhs: str, expr: Any) -> str:
        import sympy as sp

        if self.fmt == "latex":
            return f"{lhs} = {sp.latex(expr)}"
        if self.fmt == "pretty":
            return sp.pretty(sp.Eq(sp.Symbol(lhs), expr, evaluate=False),
                             use_unicode=self.unicode)
        return f"{lhs} = {sp.sstr(expr)}"

    def section(self, render: Callable[[Report], None]) -> tuple[list[str], dict[str, Any]]:
        """The lines and data that ``render`` adds to a blank copy of this report. The
        SymPy process renders formulas so, for this report to :meth:`add`."""
        blank = copy.copy(self)
        blank.lines, blank.data = [], {}
        render(blank)
        return blank.lines, blank.data

    def add(self, section: tuple[list[str], dict[str, Any]]) -> None:
        """Add what :meth:`section` rendered."""
        lines, data = section
        self.lines += lines
        for key, value in data.items():
            if isinstance(value, dict) and isinstance(self.data.get(key), dict):
                self.data[key].update(value)
            else:
                self.data[key] = value

    def formulas(self, formulas: dict[str, Any]) -> None:
        import numpy as np

        out: dict[str, Any] = {}
        self.lines.append("")
        for name, (kind, value) in formulas.items():
            shape = self.p.shapes[name]
            if kind == "omitted":
                self.lines.append(f"{self._d(name)}: formulas omitted: {value}")
                out[name] = {"omitted": value}
                continue
            import sympy as sp

            from ..sympy_bridge import index_symbols

            letters = [str(s) for s in index_symbols(len(shape))]
            entry: dict[str, Any] = {"pattern": None, "pattern_srepr": None,
                                     "index": letters, "elements": []}
            if kind == "pattern":
                entry["pattern"], entry["pattern_srepr"] = sp.sstr(value), sp.srepr(value)
                where = ", ".join(f"{c} < {d}" for c, d in zip(letters, shape))
                lhs = self._d(name, ", ".join(letters) if self.fmt != "latex"
                              else ",".join(letters))
                self.lines.append(_suffixed(self._equation(lhs, value), lhs,
                                            f"    for {where}" if shape else ""))
            else:
                printed: dict[Any, tuple[str, str]] = {}  # elements often repeat a formula
                for n, idx in enumerate(np.ndindex(*shape)):
                    if n == LISTED_ELEMENTS:
                        self.lines.append(f"... {value.size - n} more elements "
                                          "(--format json lists all)")
                    e = value[idx]
                    if e not in printed:
                        printed[e] = sp.sstr(e), sp.srepr(e)
                    text, srepr = printed[e]
                    entry["elements"].append({"index": list(idx), "expr": text, "srepr": srepr})
                    if n < LISTED_ELEMENTS:
                        sep = "," if self.fmt == "latex" else ", "
                        self.lines.append(self._equation(
                            self._d(name, sep.join(map(str, idx))), e))
            out[name] = entry
        self.data["formulas"] = out

    def values(self, at: list[Any], value: Any, grads: tuple) -> None:
        point = ", ".join(f"{n} = {_array_text(v)}" for n, v in zip(self.p.names, at))
        self.lines += ["", f"at {point}:", _labelled(self.p.label, value)]
        for name, g in zip(self.p.wrt, grads):
            self.lines.append(_labelled(self._d(name) if self.fmt != "latex"
                                        else f"d{self.f}/d{name}", g))
        if self.fmt != "json":  # a list of ten million numbers is a gigabyte
            return
        self.data["at"] = {n: _json_value(v) for n, v in zip(self.p.names, at)}
        self.data["value"] = _json_value(value)
        self.data["grad"] = {n: _json_value(g) for n, g in zip(self.p.wrt, grads)}

    def check(self, rows: list[tuple[str, SymPyCheck, FDCheck]]) -> bool:
        """Rows (name, vs SymPy, vs finite differences) of :mod:`.checks`; whether the
        check failed: a mismatch, or a variable that nothing confirmed (NOT CHECKED),
        by :func:`.checks.verdict`."""
        from .checks import verdict

        failed = False
        self.lines += ["", "check at the --at point (worst relative error):"]
        out = {}
        for name, sympy, fd in rows:
            said = verdict(sympy, fd)
            failed |= said != "ok"
            line = f"  {name}: symgrad vs SymPy (50 digits) {_sympy_verdict(sympy)}; " \
                f"vs finite differences {_fd_verdict(fd, sympy)}"
            if said == "NOT CHECKED":
                line += "; NOT CHECKED: nothing confirmed this gradient"
            self.lines.append(line)
            out[name] = {"sympy": sympy.error, "sympy_status": sympy.status,
                         "finite_differences": fd.error,
                         "finite_differences_status": fd.status,
                         "finite_differences_elements": [fd.checked - fd.left_out, fd.size],
                         "finite_differences_step": FD_STEP,
                         "verdict": said,
                         "ok": said == "ok"}
            if fd.left_out and fd.error is not None:
                out[name]["notes"] = {"finite_differences": _left_out(fd)}
        self.data["check"] = out
        return failed

    def show(self, what: str, content: Any) -> None:
        if what == "sympy" and not isinstance(content, str):
            text = [f"SymPy's derivative of the traced function (independent of symgrad's "
                    f"adjoint): function = {_sympy_text(content['function'])}"]
            for name, e in content["gradient"].items():
                text.append(f"d{self.f}/d{name} = {_sympy_text(e)}")
            self.data.setdefault("show", {})["sympy"] = {
                "function": _sympy_text(content["function"]),
                "gradient": {n: _sympy_text(e) for n, e in content["gradient"].items()}}
            content = "\n".join(text)
        else:
            self.data.setdefault("show", {})[what] = content
        self.lines += ["", f"--- {what} ---", content.rstrip("\n")]

    def emit(self) -> None:
        if self.fmt == "json":
            import json

            print(json.dumps(_json_safe(self.data), indent=2, allow_nan=False))
        else:
            print("\n".join(self.lines))


def _sympy_verdict(c: SymPyCheck) -> str:
    """``0.00e+00 ok``, ``1.00e-03 MISMATCH`` or ``not compared, why``."""
    if c.error is None:
        return f"not compared, {c.why_not}"
    return f"{c.error:.2e} {'ok' if c.ok else 'MISMATCH'}"


def _fd_verdict(c: FDCheck, sympy: SymPyCheck) -> str:
    """As :func:`_sympy_verdict`, or ``1.49e-01, unreliable here: why``; then which
    elements were compared, where not all."""
    if c.error is None:
        return f"not compared, {c.why_not}"
    text = f"{c.error:.2e} {'ok' if c.ok else 'MISMATCH'}"
    if c.unreliable:
        text = f"{c.error:.2e}, unreliable here: {c.unreliable}" + \
            ("; SymPy agrees with symgrad" if sympy.ok else "")
    notes = [f"{c.checked} of {c.size} elements, a fixed sample"] if c.checked < c.size else []
    if c.left_out:
        notes.append(_left_out(c))
    return f"{text} ({'; '.join(notes)})" if notes else text


def _left_out(c: FDCheck) -> str:
    from ..testing import NAN_AT_STEP

    return f"{c.left_out} of {c.checked} elements left out: {NAN_AT_STEP}"


def _suffixed(block: str, lhs: str, suffix: str) -> str:
    """``suffix`` after the baseline (the line with ``lhs =``) of a printed equation."""
    lines = [line.rstrip() for line in block.split("\n")]
    k = next((i for i, line in enumerate(lines) if lhs in line), len(lines) - 1)
    lines[k] = lines[k].rstrip() + suffix if k == len(lines) - 1 else \
        lines[k].ljust(max(map(len, lines))) + suffix
    return "\n".join(lines)


def _shape_text(shape: tuple[int, ...]) -> str:
    return "scalar" if not shape else "×".join(map(str, shape)) if _utf() else \
        "x".join(map(str, shape))


def _utf() -> bool:
    return (sys.stdout.encoding or "").lower().replace("-", "").startswith("utf")


def _array_text(a: Any) -> str:
    import numpy as np

    a = np.asarray(a)
    if a.ndim and np.all(a == a.flat[0]):
        return f"{a.flat[0]:g} everywhere"
    return str(a) if a.ndim else f"{float(a):g}"


def _labelled(label: str, value: Any) -> str:
    import numpy as np

    text = str(np.asarray(value)) if np.ndim(value) else str(float(value))
    return f"{label} = {text}" if "\n" not in text else f"{label} =\n{text}"


def _json_safe(data: Any) -> Any:
    """``data`` with every inf, -inf and nan (which JSON lacks) as the strings
    "inf", "-inf" and "nan", as :func:`_json_value` writes values."""
    if isinstance(data, float):
        return data if math.isfinite(data) else str(float(data))
    if isinstance(data, dict):
        return {k: _json_safe(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_json_safe(v) for v in data]
    return data


def _json_value(value: Any) -> Any:
    """Numbers as JSON numbers; inf, -inf and nan (which JSON lacks) as strings."""
    import numpy as np

    def number(v: float) -> Any:
        return v if np.isfinite(v) else str(v)

    array = np.asarray(value, dtype=float)
    if not array.ndim:
        return number(float(array))
    if np.all(np.isfinite(array)):  # the usual case, without a Python call per element
        return array.tolist()
    return np.frompyfunc(number, 1, 1)(array).tolist()


def _sympy_text(e: Any) -> str:
    import numpy as np
    import sympy as sp

    if np.ndim(e):
        return str(np.asarray(e, dtype=object).tolist())
    return sp.sstr(e)


__all__ = ["Report"]
