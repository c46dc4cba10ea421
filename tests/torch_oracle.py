"""Running one program with real PyTorch and with symgrad, and comparing what it printed.

A program is a function of the module, ``program(torch, show, data, **options)``;
``show`` is its ``print``. :func:`run_both` runs it with ``torch`` (the oracle,
default dtype float64 as symgrad's) and with ``symgrad`` and requires the same
printed text (addresses as ``0x...``, zeros without their sign) and the same
numbers to ``rtol``. Used by tests/test_torch_programs.py and
tests/test_torch_semantics.py; imported only after ``pytest.importorskip("torch")``.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
import torch as torch_real

import symgrad

RTOL = 1e-9


@pytest.fixture(autouse=True)
def float64_default():  # imported by the test modules, which makes it theirs
    """PyTorch's default float dtype as symgrad's (float64), for each test only."""
    before = torch_real.get_default_dtype()
    torch_real.set_default_dtype(torch_real.float64)
    yield
    torch_real.set_default_dtype(before)


class Printed:
    """What a program printed: lines of text, and the numbers behind them."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.values: list[tuple[str, Any]] = []

    def __call__(self, *items: Any) -> None:
        self.lines.append(" ".join(_text(i) for i in items))
        for k, item in enumerate(items):
            self.values.append((f"line {len(self.lines)} item {k}: {self.lines[-1][:60]}",
                                _numbers(item)))


def _text(item: Any) -> str:
    """The printed text, with addresses as ``0x...`` and zeros without their sign (a
    gradient that is exactly 0 may be +0 or -0 depending on the order of a sum)."""
    if isinstance(item, float):  # printed in full by Python: compared as a number instead
        return f"{item:.8g}"
    text = re.sub(r"0x[0-9A-Fa-f]+", "0x...", str(item))
    return re.sub(r"-(0\.0*)(?![0-9])", r" \1", text)


def _numbers(item: Any) -> Any:
    if hasattr(item, "detach") and hasattr(item, "shape"):  # a tensor of either library
        return ("tensor", str(item.dtype).replace("torch.", ""),
                np.array(item.detach().numpy(), copy=True))
    if isinstance(item, (tuple, list)):
        return [_numbers(i) for i in item]
    if isinstance(item, (int, float, np.number)):
        return float(item)
    return None


def _compare(want: Printed, got: Printed, rtol: float = RTOL) -> None:
    if rtol > 1e-6:  # float32: printed digits may differ in the last place; values compared
        number = re.compile(r"-?\d+\.\d*(e[+-]\d+)?")
        assert [number.sub("#", t) for t in got.lines] == [number.sub("#", t) for t in want.lines]
    else:
        assert got.lines == want.lines
    assert len(got.values) == len(want.values)
    for (what, w), (_, g) in zip(want.values, got.values):
        _close(g, w, what, rtol)


def _close(got: Any, want: Any, what: str, rtol: float) -> None:
    if isinstance(want, tuple):
        assert got[:2] == want[:2], what  # kind and dtype
        np.testing.assert_allclose(got[2], want[2], rtol=rtol, atol=rtol * 1e-3, err_msg=what)
    elif isinstance(want, list):
        for g, w in zip(got, want):
            _close(g, w, what, rtol)
    elif isinstance(want, float):
        np.testing.assert_allclose(got, want, rtol=rtol, err_msg=what)


def run_both(program: Any, data: dict[str, np.ndarray], rtol: float = RTOL, **kw: Any):
    want, got = Printed(), Printed()
    program(torch_real, want, data, **kw)
    program(symgrad, got, data, **kw)
    assert want.lines, "the program printed nothing"
    _compare(want, got, rtol)
    return got


def normal_data(seed: int, **shapes: Any) -> dict[str, np.ndarray]:
    """Standard normal arrays of the given shapes, by name (the programs' data)."""
    rng = np.random.default_rng(seed)
    return {name: rng.standard_normal(shape) for name, shape in shapes.items()}


def show_error(show: Any, fn: Any, length: int = 60, result: bool = False) -> None:
    """Run ``fn``; show the type of the error it raises and the start of its message
    (or "no error", and with ``result`` what it returned)."""
    try:
        value = fn()
    except Exception as e:  # noqa: BLE001 -- the type and message are what is compared
        show(type(e).__name__, str(e)[:length])
    else:
        show("no error", value) if result else show("no error")
