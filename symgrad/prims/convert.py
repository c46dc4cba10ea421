"""``convert``: a float value in another float dtype (float32 <-> float64), a real value
as a complex one and a complex value's real part (JAX's ``convert_element_type``).

Contract: ``convert(x, dtype)`` is ``x.astype(dtype)``, one equation the text
form shows (``b: f64[3] = convert(a, dtype='float64')``) and generated code
spells ``a.astype(np.float64)`` (``np.float64(a)`` for a scalar or an element of
a fused loop). Its VJP converts the cotangent back to the operand's dtype, so a
cotangent always has its primal's dtype (JAX's rule). The adjoint inserts it
where a VJP rule mixed dtypes (:mod:`symgrad.passes.adjoint`); a primitive
that has no float32 kernel computes in float64 between two of them.

    >>> import numpy as np
    >>> bool(convert(np.float32(0.1), "float64") == np.float64(np.float32(0.1)))
    True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.ir import COMPLEXES, INEXACT, Aval
from ..core.tracing import Traced, apply
from .registry import register


def _convert_rule(x: Aval, *, dtype: str) -> Aval:
    if x.dtype not in INEXACT or dtype not in INEXACT:
        raise TypeError(f"convert turns a float or complex value into float32, float64, "
                        f"complex64 or complex128, not {x} into {dtype}")
    return Aval(x.shape, dtype)


def _convert_impl(x: Any, dtype: str) -> Any:
    """``x.astype(dtype)``; a complex value to a real dtype is its real part (the
    transpose of real -> complex: a cotangent of a real value is real)."""
    if np.iscomplexobj(x) and dtype not in COMPLEXES:
        x = np.real(x)
    return np.asarray(x, dtype=dtype)[()] if np.ndim(x) == 0 else np.asarray(x, dtype=dtype)


convert_p = register(
    name="convert", complex=True, kind="elementwise", shape_rule=_convert_rule,
    impl=_convert_impl,
    vjp=lambda g, ans, x, dtype: (convert(g, np.dtype(x.dtype).name),),
    sympy=lambda sp, x, **params: x, linear=True)


def convert(x: Any, dtype: str) -> Any:
    """``x`` as a ``dtype`` value (float32 or float64): one ``convert`` equation for a
    traced value of another dtype; a traced value of that dtype as it is."""
    if isinstance(x, Traced):  # a traced value, or an eager Tensor
        return x if x.dtype == np.dtype(dtype) else apply(convert_p, x, dtype=dtype)
    return _convert_impl(x, dtype)
