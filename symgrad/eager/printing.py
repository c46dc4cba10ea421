"""PyTorch's printed form of a tensor, for numpy arrays.

Follows ``torch/_tensor_str.py`` with its default print options (precision 4,
line width 80, summarization beyond 1000 elements with 3 edge items): values
that are all integers print as ``1.``, otherwise with 4 decimals (``4.5000``),
in scientific notation when the magnitudes span more than a factor 1000, exceed
1e8 or go below 1e-4. float64 is symgrad's default dtype, so, like float32 in
PyTorch, it is not printed.

    >>> import numpy as np
    >>> print(format_tensor(np.full((2, 2), 4.5)))
    tensor([[4.5000, 4.5000],
            [4.5000, 4.5000]])
    >>> print(format_tensor(np.array(9.0), ["grad_fn=<SumBackward0>"]))
    tensor(9., grad_fn=<SumBackward0>)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

PRECISION = 4
LINEWIDTH = 80
THRESHOLD = 1000
EDGEITEMS = 3


class _Formatter:
    """How every element of one tensor is written: one mode and one width for all."""

    def __init__(self, values: np.ndarray):
        self.floating = values.dtype.kind == "f"
        self.int_mode, self.sci_mode, self.max_width = True, False, 1
        flat = values.reshape(-1)
        if not self.floating:
            for v in flat:
                self.max_width = max(self.max_width, len(self._plain(v)))
            return
        finite = flat[np.isfinite(flat) & (flat != 0)]
        if finite.size == 0:
            return
        magnitude = np.abs(finite)
        lo, hi = float(magnitude.min()), float(magnitude.max())
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        if self.int_mode:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8
            if not self.sci_mode:
                self.max_width = max(len(f"{v:.0f}") + 1 for v in finite)
        else:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        if self.sci_mode:
            self.max_width = max(len(f"{v:.{PRECISION}e}") for v in finite)
        elif not self.int_mode:
            self.max_width = max(len(f"{v:.{PRECISION}f}") for v in finite)

    @staticmethod
    def _plain(v: object) -> str:
        return str(bool(v)) if isinstance(v, (bool, np.bool_)) else str(v)

    def format(self, value: object) -> str:
        if not self.floating:
            text = self._plain(value)
        else:
            v = float(value)  # type: ignore[arg-type]
            if self.sci_mode:
                text = f"{v:{self.max_width}.{PRECISION}e}"
            elif self.int_mode:
                text = f"{v:.0f}" + ("" if math.isinf(v) or math.isnan(v) else ".")
            else:
                text = f"{v:.{PRECISION}f}"
        return " " * (self.max_width - len(text)) + text


class _ComplexFormatter:
    """PyTorch's complex elements: the real parts formatted as a real tensor, then the
    imaginary parts (their own mode and width, unpadded) with their sign and ``j``."""

    def __init__(self, values: np.ndarray):
        self.real, self.imag = _Formatter(values.real), _Formatter(values.imag)
        self.max_width = self.real.max_width + self.imag.max_width + 1

    def format(self, value: complex) -> str:
        imag = (self.imag.format(value.imag) + "j").lstrip()
        return self.real.format(value.real) + ("" if imag[0] in "+-" else "+") + imag


def _summarized(values: np.ndarray) -> np.ndarray:
    """The elements a summarized print shows (the first and last ``EDGEITEMS`` per axis)."""
    if values.ndim == 0:
        return values
    if values.shape[0] > 2 * EDGEITEMS:
        values = np.concatenate([values[:EDGEITEMS], values[-EDGEITEMS:]])
    return np.stack([_summarized(v) for v in values]) if values.ndim > 1 else values


def _body(values: np.ndarray, indent: int, summarize: bool,
          fmt: _Formatter | _ComplexFormatter) -> str:
    if values.ndim == 0:
        return fmt.format(values[()])
    n = values.shape[0]
    edges = summarize and n > 2 * EDGEITEMS
    if values.ndim == 1:
        per_line = max(1, (LINEWIDTH - indent) // (fmt.max_width + 2))
        items = [fmt.format(v) for v in values]
        if edges:
            items = items[:EDGEITEMS] + [" ..."] + items[-EDGEITEMS:]
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = range(n) if not edges else [*range(EDGEITEMS), -1, *range(n - EDGEITEMS, n)]
    slices = ["..." if i == -1 else _body(values[i], indent + 1, summarize, fmt) for i in rows]
    return "[" + ("," + "\n" * (values.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def format_tensor(values: np.ndarray, suffixes: Sequence[str] = ()) -> str:
    """``tensor(...)`` as PyTorch prints it, with ``suffixes`` such as ``requires_grad=True``."""
    prefix = "tensor("
    indent = len(prefix)
    suffixes = list(suffixes)
    if values.size == 0:
        body = "[]"
        if values.ndim != 1:
            suffixes.insert(0, f"size={tuple(values.shape)}")
    else:
        summarize = values.size > THRESHOLD
        shown = _summarized(values) if summarize else values
        fmt = _ComplexFormatter(shown) if values.dtype.kind == "c" else _Formatter(shown)
        body = _body(values, indent, summarize, fmt)
    text = prefix + body
    last_line = len(text) - text.rfind("\n") + 1
    parts = [text]
    for suffix in suffixes:
        if last_line + len(suffix) + 2 > LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line += len(suffix) + 2
    return "".join(parts) + ")"
