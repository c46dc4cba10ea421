"""The tests a kernel makes where int64 ``+ - *`` or negation would wrap.

The meaning (refuse a wrapped int64 result with an OverflowError whose message says
what to do) is :mod:`symgrad.prims.overflow`'s, which the interpreter applies by
comparing with Python integers; a kernel tests the operands and the wrapped result
instead: a sign test for ``+``/``-``, the float product's magnitude for ``*`` (which
also refuses products within 2**-50 of the bound).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ....core.ir import INT, Aval
from ....prims.overflow import message

#: |a * b| at least this (2**63 (1 - 2**-50)) in float64 may not fit an int64
PRODUCT_LIMIT = 9223372036854767616.0

_WRAPPED = {
    "add": "(({0} ^ {out}) & ({1} ^ {out})) < 0",
    "subtract": "(({0} ^ {1}) & ({0} ^ {out})) < 0",
    "multiply": f"np.abs(({{0}} * 1.0) * ({{1}} * 1.0)) >= {PRODUCT_LIMIT!r}",
    "negative": "{0} == -9223372036854775808",
}


def checked_emit(emit: Callable[..., list[str]], ufunc: np.ufunc) -> Callable[..., list[str]]:
    """``emit``, followed for an int64 result by a test that raises where it wrapped."""
    wrapped = _WRAPPED[ufunc.__name__]
    text = message(f"np.{ufunc.__name__}")

    def emit_checked(out: str, args: list[str], avals: Any, out_aval: Aval,
                     **params: Any) -> list[str]:
        lines = emit(out, args, avals, out_aval, **params)
        if out_aval.dtype != INT:
            return lines
        test = wrapped.format(*args, out=out)
        test = f"np.any({test})" if out_aval.shape else test
        return [*lines, f"if {test}: raise OverflowError({text!r})"]
    return emit_checked
