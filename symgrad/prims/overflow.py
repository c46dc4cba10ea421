"""int64 arithmetic that refuses to wrap: ``+ - *`` and unary minus on integers.

A Python int argument is traced as an int64 (a trip count stays a kernel argument), and
an int64 array as integers; where int64 arithmetic would wrap (``n * n`` at
``n = 5e9``) Python's answer is a bigger integer and numpy's a silently wrapped one.
Neither can be given in int64, so both backends raise an OverflowError instead: the
interpreter by comparing with the exact result (Python integers), kernels by a test
on the operands and the wrapped result (a sign test for ``+``/``-``, the float
product's magnitude for ``*``, which also refuses products within 2**-50 of the
bound). Float arithmetic is untouched, and integers are rare in kernels (counters,
trip counts), so the tests cost nothing measurable.

    >>> import numpy as np
    >>> int(CheckedUfunc(np.multiply)(np.int64(3), np.int64(4)))
    12
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.ir import INT, Aval

#: |a * b| at least this (2**63 (1 - 2**-50)) in float64 may not fit an int64
PRODUCT_LIMIT = 9223372036854767616.0


def message(what: str) -> str:
    return (f"integer overflow in {what}: symgrad computes integers (Python ints and int64 "
            "arrays) in int64, where the result does not fit; Python would give a larger "
            "integer and numpy a wrapped one. Convert to float first (float(n), "
            "x.astype(np.float64)) or keep the integers smaller")


class CheckedUfunc:
    """``ufunc`` as an impl: numpy's result, and an OverflowError where an int64 result
    differs from the exact one (Python integers)."""

    def __init__(self, ufunc: np.ufunc):
        self.ufunc, self.nin, self.__name__ = ufunc, ufunc.nin, ufunc.__name__

    def __call__(self, *args: Any) -> Any:
        out = self.ufunc(*args)  # (the float path, eager Tensors' too: one dtype test more)
        if getattr(out, "dtype", None) == np.int64:
            exact = self.ufunc(*(np.asarray(a).astype(object) for a in args))
            if np.any(np.asarray(exact != out, dtype=bool)):
                raise OverflowError(message(f"np.{self.__name__}"))
        return out


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
