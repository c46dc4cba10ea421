"""What ``symgrad grad`` and ``symgrad hessian`` print: formulas, values, checks and
``--show`` sections, collected by :class:`Report` and printed in one of the formats
pretty, text, latex or json (see :mod:`symgrad.cli.command`). A Hessian or a
Jacobian is printed block by block (:class:`Block`), as a gradient is variable by
variable."""

from __future__ import annotations

import copy
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .limits import FD_STEP, LISTED_ELEMENTS

if TYPE_CHECKING:
    from .checks import FDCheck, SymPyCheck
    from .problem import Problem


@dataclass(frozen=True)
class Block:
    """One block of a Hessian, ``∂²f/∂row∂col`` (``row`` a variable), or of a Jacobian,
    ``∂f/∂col`` (``row`` None: the rows are the elements of the output). Its shape is
    ``row_shape + col_shape``, as ``sg.hessian`` and ``sg.jacrev`` return it."""

    row: str | None
    col: str
    row_shape: tuple[int, ...]
    col_shape: tuple[int, ...]

    @property
    def shape(self) -> tuple[int, ...]:
        return (*self.row_shape, *self.col_shape)

    @property
    def key(self) -> str:
        """Its name in ``--format json``'s "check": ``"x,y"``, or ``"x"`` for a Jacobian."""
        return self.col if self.row is None else f"{self.row},{self.col}"

    def nest(self, table: dict[str, Any], value: Any) -> None:
        """Put ``value`` in ``table`` as JSON keeps blocks: ``table[row][col]``, or
        ``table[col]`` for a Jacobian."""
        if self.row is None:
            table[self.col] = value
        else:
            table.setdefault(self.row, {})[self.col] = value


class Report:
    """Collects what a command prints, then prints it in one format. ``kind`` is the
    command: "grad", "hessian" or "jacobian" (``grad --jacobian``)."""

    def __init__(self, p: Problem, fmt: str, cotangent: Any, kind: str = "grad"):
        self.p, self.fmt, self.cotangent, self.kind = p, fmt, cotangent, kind
        self.lines: list[str] = []
        self.data: dict[str, Any] = {
            "function": p.title, "variables": {n: list(p.shapes[n]) for n in p.names},
            "wrt": list(p.wrt)}
        if kind == "grad":
            self.data["gradient"] = None if cotangent is None else cotangent.tolist()
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
            return rf"\frac{{\partial {self._latex_f()}}}{{\partial {name}{sub}}}"
        d = "∂" if self.unicode else "d"
        return f"{d}{self.f}/{d}{name}{f'[{index}]' if index else ''}"

    def _latex_f(self) -> str:
        return self.f if len(self.f) == 1 else rf"\mathrm{{{self.f}}}".replace("_", r"\_")

    def label(self, b: Block) -> str:
        """How a block is named where its value is printed: ``∂²f/∂x∂y``, ``df/dx``."""
        return self._d_block(b, plain=True)

    def _d_block(self, b: Block, index: list[str] | None = None, plain: bool = False) -> str:
        """``∂²f/∂x[i]∂y[j]`` or ``∂f[i]/∂x[j]``; without ``index``, ``∂²f/∂x∂y``. In
        LaTeX unless ``plain`` (labels of values are plain text in every format)."""
        n = len(b.row_shape)
        ri, ci = (index[:n], index[n:]) if index is not None else ([], [])
        if self.fmt == "latex" and not plain:
            f = self._latex_f()

            def el(name: str, idx: list[str]) -> str:
                return f"{name}_{{{','.join(idx)}}}" if idx else name
            if b.row is None:
                return rf"\frac{{\partial {el(f, ri)}}}{{\partial {el(b.col, ci)}}}"
            return rf"\frac{{\partial^2 {f}}}{{\partial {el(b.row, ri)} \partial {el(b.col, ci)}}}"

        def at(name: str, idx: list[str]) -> str:
            return f"{name}[{', '.join(idx)}]" if idx else name
        d = "∂" if self.unicode else "d"
        if b.row is None:
            return f"{d}{at(self.f, ri)}/{d}{at(b.col, ci)}"
        if self.unicode:
            return f"∂²{self.f}/∂{at(b.row, ri)}∂{at(b.col, ci)}"
        return f"d^2{self.f}/d{at(b.row, ri)} d{at(b.col, ci)}"  # d^2f/dx dy

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
        """Per wrt variable: ("pattern", expr), ("elements", array) or ("omitted", why)."""
        sep = "," if self.fmt == "latex" else ", "
        self.lines.append("")
        self.data["formulas"] = {
            name: self._formula(kind, value, self.p.shapes[name],
                                lambda idx, name=name: self._d(name, sep.join(idx)),
                                self._d(name))
            for name, (kind, value) in formulas.items()}
        matrices = [v for k, v in formulas.values() if k == "matrix"]
        if matrices:
            from .notation import conventions

            where = {s: part for _, _, w in matrices for s, part in w.items()}
            self._where(where)
            used = set().union(*(conventions(e) for e in [*where.values(),
                                                           *(m[0] for m in matrices)]))
            said = self._conventions(used, sorted({n for _, ns, _ in matrices for n in ns}))
            if said:
                self.lines.append(said)

    def block_formulas(self, formulas: list[tuple[Block, tuple[str, Any]]]) -> None:
        """As :meth:`formulas`, per block of a Hessian or a Jacobian."""
        self.lines.append("")
        out: dict[str, Any] = {}
        for b, (kind, value) in formulas:
            b.nest(out, self._formula(kind, value, b.shape,
                                      lambda idx, b=b: self._d_block(b, idx), self._d_block(b)))
        self.data["formulas"] = out

    def _formula(self, kind: str, value: Any, shape: tuple[int, ...],
                 lhs: Callable[[list[str]], str], bare: str) -> dict[str, Any]:
        """The lines of one formula (``lhs`` of the index letters or numbers), and its
        JSON entry."""
        import numpy as np

        if kind == "omitted":
            self.lines.append(f"{bare}: formulas omitted: {value}")
            return {"omitted": value}
        import sympy as sp

        from ..core.sympy_bridge import index_symbols

        if kind == "matrix":
            return self._matrix(value, bare)
        letters = [str(s) for s in index_symbols(len(shape))]
        entry: dict[str, Any] = {"pattern": None, "pattern_srepr": None,
                                 "index": letters, "elements": []}
        if kind == "pattern":
            entry["pattern"], entry["pattern_srepr"] = sp.sstr(value), sp.srepr(value)
            where = ", ".join(f"{c} < {d}" for c, d in zip(letters, shape))
            self.lines.append(_suffixed(self._equation(lhs(letters), value), lhs(letters),
                                        f"    for {where}" if shape else ""))
            return entry
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
                self.lines.append(self._equation(lhs([str(i) for i in idx]), e))
        return entry

    def _conventions(self, used: set[str], kinks: list[str]) -> str | None:
        """What the textbook formulas assume, said once below them (None: nothing)."""
        product = {"text": "* is the elementwise product, @ the matrix product",
                   "latex": r"\circ is the elementwise product"}.get(
            self.fmt, "∘ is the elementwise product" if self.unicode else
            "o is the elementwise product")
        said = [text for key, text in (
            ("elementwise", "functions and powers of arrays apply elementwise"),
            ("product", product), ("rows", "softmax and rowsum of a matrix are by rows"))
            if key in used]
        said += [k if self.unicode else k.replace("‖", "|") for k in kinks]
        if not said:
            return None
        return f"% {'; '.join(said)}" if self.fmt == "latex" else f"({'; '.join(said)})"

    def _where(self, where: dict[Any, Any]) -> None:
        """``where P = softmax(Q⋅Kᵀ/√d)``: a part the formulas name (:mod:`.textbook`)."""
        from .notation import pretty_equation, render

        for short, part in where.items():
            if self.fmt == "pretty":
                self.lines.append(pretty_equation(f"where {short}", part, self.unicode))
            else:
                self.lines.append(f"where {short} = {render(part, self.fmt)}")
            self.data.setdefault("where", {})[str(short)] = render(part, "text")

    def _matrix(self, value: tuple[Any, ...], bare: str) -> dict[str, Any]:
        """A textbook formula (:mod:`.textbook`): one line for the whole gradient, and
        below the last one what it assumes (elementwise functions, kinks), once."""
        from .notation import pretty_equation, render

        expr, notes, _ = value
        if self.fmt == "pretty":
            self.lines.append(pretty_equation(bare, expr, self.unicode))
        else:
            self.lines.append(f"{bare} = {render(expr, self.fmt)}")
        return {"matrix": render(expr, "text"), "latex": render(expr, "latex"),
                "notes": list(notes), "pattern": None, "pattern_srepr": None, "index": [],
                "elements": []}

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

    def matrices(self, at: list[Any], value: Any, blocks: list[tuple[Block, Any]]) -> None:
        """As :meth:`values`, for the blocks of a Hessian or a Jacobian; in JSON under
        "hessian" (``[row][col]``) or "jacobian" (``[col]``)."""
        point = ", ".join(f"{n} = {_array_text(v)}" for n, v in zip(self.p.names, at))
        self.lines += ["", f"at {point}:", _labelled(self.p.label, value)]
        for b, m in blocks:
            self.lines.append(_labelled(self.label(b), m))
        if self.fmt != "json":
            return
        self.data["at"] = {n: _json_value(v) for n, v in zip(self.p.names, at)}
        self.data["value"] = _json_value(value)
        table: dict[str, Any] = {}
        for b, m in blocks:
            b.nest(table, _json_value(m))
        self.data[self.kind] = table

    def check(self, rows: list[tuple[str, SymPyCheck, FDCheck]],
              labels: dict[str, str] | None = None) -> bool:
        """Rows (name, vs SymPy, vs finite differences) of :mod:`.checks`; whether the
        check failed: a mismatch, or a variable (a block) that nothing confirmed (NOT
        CHECKED), by :func:`.checks.verdict`. ``labels``: how to print a row's name."""
        from .checks import verdict

        failed = False
        self.lines += ["", "check at the --at point (worst relative error):"]
        what = {"grad": "gradient", "hessian": "Hessian block",
                "jacobian": "Jacobian block"}[self.kind]
        out = {}
        for name, sympy, fd in rows:
            said = verdict(sympy, fd)
            failed |= said != "ok"
            line = f"  {(labels or {}).get(name, name)}: symgrad vs SymPy (50 digits) " \
                f"{_sympy_verdict(sympy)}; vs finite differences {_fd_verdict(fd, sympy)}"
            reason = sympy.not_finite or fd.not_finite
            if said == "NOT CHECKED":
                line += f"; NOT CHECKED: nothing confirmed this {what}"
                line += f" ({reason}: not finite, which no comparison confirms)" if reason else ""
            elif reason:
                line += f"; {reason}: not finite"
            self.lines.append(line)
            out[name] = {"sympy": sympy.error, "sympy_status": sympy.status,
                         "finite_differences": fd.error,
                         "finite_differences_status": fd.status,
                         "finite_differences_elements": [fd.checked - fd.left_out, fd.size],
                         "finite_differences_step": FD_STEP,
                         "verdict": said,
                         "not_finite": reason,
                         "ok": said == "ok"}
            if fd.left_out and fd.error is not None:
                out[name]["notes"] = {"finite_differences": _left_out(fd)}
        self.data["check"] = out
        return failed

    def show(self, what: str, content: Any) -> None:
        if what == "sympy" and isinstance(content, dict) and "blocks" in content:
            content = self._sympy_blocks(content)
        elif what == "sympy" and not isinstance(content, str):
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

    def _sympy_blocks(self, content: dict[str, Any]) -> str:
        """--show sympy of a Hessian or a Jacobian: SymPy's own, block by block."""
        name = {"hessian": "Hessian", "jacobian": "Jacobian"}[self.kind]
        function = _sympy_text(content["function"])
        text = [f"SymPy's {name} of the traced function (independent of symgrad's "
                f"derivation): function = {function}"]
        table: dict[str, Any] = {}
        for b, e in content["blocks"]:
            text.append(f"{self.label(b)} = {_sympy_text(e)}")
            b.nest(table, _sympy_text(e))
        self.data.setdefault("show", {})["sympy"] = {"function": function, self.kind: table}
        return "\n".join(text)

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
    if c.not_finite and not c.mismatch:
        return f"{c.error:.2e}, not confirmed: symgrad's value is not finite"
    return f"{c.error:.2e} {'ok' if c.ok else 'MISMATCH'}"


def _fd_verdict(c: FDCheck, sympy: SymPyCheck) -> str:
    """As :func:`_sympy_verdict`, or ``1.49e-01, unreliable here: why``; then which
    elements were compared, where not all."""
    if c.error is None:
        return f"not compared, {c.why_not}"
    text = f"{c.error:.2e} {'ok' if c.ok else 'MISMATCH'}"
    if c.not_finite and not c.mismatch:
        text = f"{c.error:.2e}, not confirmed: symgrad's value is not finite"
    elif c.unreliable:
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


__all__ = ["Block", "Report"]
