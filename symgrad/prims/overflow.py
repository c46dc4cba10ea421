"""int64 arithmetic that refuses to wrap: ``+ - *`` and unary minus on integers.

A Python int argument is traced as an int64 (a trip count stays a kernel argument), and
an int64 array as integers; where int64 arithmetic would wrap (``n * n`` at
``n = 5e9``) Python's answer is a bigger integer and numpy's a silently wrapped one.
Neither can be given in int64, so both backends raise an OverflowError instead: the
interpreter by comparing with the exact result (Python integers), kernels by a test
on the operands and the wrapped result (a sign test for ``+``/``-``, the float
product's magnitude for ``*``, which also refuses products within 2**-50 of the
bound; :mod:`symgrad.backend.numba.lowering.overflow` writes those tests). Float
arithmetic is untouched, and integers are rare in kernels (counters, trip counts), so
the tests cost nothing measurable.

    >>> import numpy as np
    >>> int(CheckedUfunc(np.multiply)(np.int64(3), np.int64(4)))
    12
"""

from __future__ import annotations

from typing import Any

import numpy as np


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


#: the largest magnitude below which every int64 is a float64 (2**53)
EXACT_LIMIT = 9007199254740992
#: a bound on the sum of magnitudes below which every partial sum, in any order, is exact
#: in float64 (2**53 less a margin for the rounding of that float sum itself)
TOTAL_LIMIT = float(2**53 - 2**33)


def inexact_message(what: str, total: bool = False) -> str:
    values = ("the sum of their magnitudes is" if total else "a value is")
    return (f"{what} of an int64 array whose values are too large: numpy computes it exactly "
            f"in int64, symgrad in float64, which is exact only where {values} at most 2**53; "
            "here it would round. Convert to float first (x.astype(np.float64)) to accept "
            "the rounding, or keep the integers smaller")


def check_exact(x: Any, what: str, total: bool = False) -> None:
    """Refuse (ValueError) int64 values that float64 would not carry exactly: each
    value's magnitude, or (``total``) the sum of magnitudes, for sums of them."""
    x = np.asarray(x)
    if total:
        bad = np.sum(np.abs(x.astype(np.float64))) > TOTAL_LIMIT
    else:
        bad = np.any((x > EXACT_LIMIT) | (x < -EXACT_LIMIT))
    if bad:
        raise ValueError(inexact_message(what, total))
