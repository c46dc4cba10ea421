"""numpy's ufuncs that are compositions of primitives, and ``np.sinc``, ``divmod``.

``fabs`` is ``abs``; ``deg2rad``/``radians`` and ``rad2deg``/``degrees`` multiply
by numpy's own constants (``pi / 180``, ``180 / pi``), so values agree bit for
bit; ``fmax``/``fmin`` are ``maximum``/``minimum`` that return the other operand
where one is nan, and give it the gradient there (ties share it, ½ each);
``logaddexp2(x, y)`` is ``logaddexp(x ln 2, y ln 2) / ln 2``; ``nan_to_num``
selects, so the replaced entries get zero gradient.

    >>> import numpy as np, symgrad as sg
    >>> sg.grad(lambda x: np.sum(np.fmax(x, np.array([np.nan, 1.0]))))(np.array([2.0, 0.0]))
    array([1., 0.])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.errors import UnsupportedFunctionError, user_location
from ..prims import complex as C
from ..prims import elementwise as E
from ..prims import special as S
from ..prims.bitwise import bitwise
from ..prims.elementwise import as_float
from ..prims.integers import logical_and as _and
from ..prims.integers import logical_not as _not
from ..prims.integers import logical_or as _or
from ..prims.integers import logical_xor as _xor
from .complex_order import is_complex
from .dispatch import float_dtype, implements, refuse_kwargs

_DEG2RAD = math.pi / 180.0  # numpy's constants (npy_math: NPY_PI / 180.0, 180.0 / NPY_PI)
_RAD2DEG = 180.0 / math.pi
_LN2 = math.log(2.0)


def _ufunc_kwargs(name: str, kwargs: dict) -> None:
    refuse_kwargs(name, kwargs, allowed={"dtype": float_dtype})


@implements(np.fabs)
def fabs(x: Any, /, **kwargs: Any) -> Any:
    _ufunc_kwargs("np.fabs", kwargs)
    return E.absolute(x)


@implements(np.deg2rad, np.radians)
def deg2rad(x: Any, /, **kwargs: Any) -> Any:
    _ufunc_kwargs("np.deg2rad", kwargs)
    return E.mul(x, _DEG2RAD)


@implements(np.rad2deg, np.degrees)
def rad2deg(x: Any, /, **kwargs: Any) -> Any:
    _ufunc_kwargs("np.rad2deg", kwargs)
    return E.mul(x, _RAD2DEG)


def _isnan(x: Any) -> Any:
    return E.not_equal(x, x)


@implements(np.fmax)
def fmax(x1: Any, x2: Any, /, **kwargs: Any) -> Any:
    """``maximum`` that ignores a nan operand (nan only where both are)."""
    _ufunc_kwargs("np.fmax", kwargs)
    return E.where(_isnan(x2), x1, E.where(_isnan(x1), x2, E.maximum(x1, x2)))


@implements(np.fmin)
def fmin(x1: Any, x2: Any, /, **kwargs: Any) -> Any:
    """``minimum`` that ignores a nan operand (nan only where both are)."""
    _ufunc_kwargs("np.fmin", kwargs)
    return E.where(_isnan(x2), x1, E.where(_isnan(x1), x2, E.minimum(x1, x2)))


@implements(np.logaddexp2)
def logaddexp2(x1: Any, x2: Any, /, **kwargs: Any) -> Any:
    """``log2(2**x1 + 2**x2)``, through ``logaddexp`` (its ties and tails)."""
    _ufunc_kwargs("np.logaddexp2", kwargs)
    return E.div(E.logaddexp(E.mul(x1, _LN2), E.mul(x2, _LN2)), _LN2)


@implements(np.divmod)
def divmod_(x1: Any, x2: Any, /, **kwargs: Any) -> tuple[Any, Any]:
    """``(x1 // x2, x1 % x2)``: numpy's pair (the quotient has zero gradient)."""
    _ufunc_kwargs("np.divmod", kwargs)
    return S.floor_divide(x1, x2), S.remainder(x1, x2)


@implements(np.sinc)
def sinc(x: Any) -> Any:
    """``sin(pi x) / (pi x)``, 1 at 0, with ``sinc'(0) = 0``."""
    return S.sinc(x)


@implements(np.nan_to_num)
def nan_to_num(x: Any, copy: bool = True, nan: float = 0.0, posinf: Any = None,
               neginf: Any = None) -> Any:
    """nan and infinities replaced (by ``nan``, the largest finite floats, or the values
    given); the replaced entries have zero gradient, the others gradient 1."""
    big = float(np.finfo(np.float64).max)
    x = as_float(x)
    if is_complex(x):  # numpy's: each part on its own (nan + 1j -> 0 + 1j)
        return C.make_complex(*(nan_to_num(part, copy, nan, posinf, neginf)
                                for part in (C.real(x), C.imag(x))))
    out = E.where(_isnan(x), nan, x)
    out = E.where(E.equal(x, np.inf), big if posinf is None else posinf, out)
    return E.where(E.equal(x, -np.inf), -big if neginf is None else neginf, out)


# complex parts: of a complex value, the primitives of symgrad.prims.complex; a real
# value is its own real part and conjugate, and its imaginary part is 0


@implements(np.iscomplexobj)
def iscomplexobj(x: Any) -> bool:
    """Whether a traced value has a complex dtype (known when tracing)."""
    return is_complex(x)


@implements(np.isrealobj)
def isrealobj(x: Any) -> bool:
    return not is_complex(x)


@implements(np.conjugate)
def conjugate(x: Any, /, **kwargs: Any) -> Any:
    """A real value is its own conjugate."""
    _ufunc_kwargs("np.conjugate", kwargs)
    return C.conj(x) if is_complex(x) else as_float(x)


@implements(np.real)
def real(val: Any) -> Any:
    return C.real(val) if is_complex(val) else as_float(val)


@implements(np.real_if_close)
def real_if_close(a: Any, tol: float = 100) -> Any:
    """A real value as it is; a complex one is refused: numpy's result is real or complex
    depending on the values, which are not known when the function is traced."""
    if is_complex(a):
        raise UnsupportedFunctionError(
            f"np.real_if_close of a complex traced value (at {user_location()}): its result's "
            "dtype depends on the values; take np.real(z) (or keep z complex)")
    return as_float(a)


@implements(np.imag)
def imag(val: Any) -> Any:
    """0 for a real value (a constant)."""
    return C.imag(val) if is_complex(val) else np.zeros(np.shape(val))


@implements(np.angle)
def angle(z: Any, deg: bool = False) -> Any:
    """``arctan2(imag, real)`` of a complex value; for a real one 0 for positive values,
    pi (180) for negative ones, nan for nan, with zero gradient."""
    half_turn = 180.0 if deg else math.pi
    if is_complex(z):
        a = E.arctan2(C.imag(z), C.real(z))
        return E.mul(a, _RAD2DEG) if deg else a
    x = as_float(z)
    return E.where(_isnan(x), np.nan, E.where(E.less(x, 0.0), half_turn, 0.0))


# logical functions take numpy's truth of any operand (x != 0); bitwise ones integers and
# bools (symgrad.prims.bitwise). Neither carries a gradient


@implements(np.logical_and)
def logical_and(x1: Any, x2: Any, /, **kwargs: Any) -> Any:
    _ufunc_kwargs("np.logical_and", kwargs)
    return _and(x1, x2)


@implements(np.logical_or)
def logical_or(x1: Any, x2: Any, /, **kwargs: Any) -> Any:
    _ufunc_kwargs("np.logical_or", kwargs)
    return _or(x1, x2)


@implements(np.logical_xor)
def logical_xor(x1: Any, x2: Any, /, **kwargs: Any) -> Any:
    _ufunc_kwargs("np.logical_xor", kwargs)
    return _xor(x1, x2)


@implements(np.logical_not)
def logical_not(x: Any, /, **kwargs: Any) -> Any:
    _ufunc_kwargs("np.logical_not", kwargs)
    return _not(x)


def _bitwise(ufunc: np.ufunc, op: str) -> None:
    def fn(*args: Any, **kwargs: Any) -> Any:
        _ufunc_kwargs(f"np.{ufunc.__name__}", kwargs)
        return bitwise(*args, op=op)
    implements(ufunc)(fn)


for _ufunc, _op in ((np.bitwise_and, "and"), (np.bitwise_or, "or"), (np.bitwise_xor, "xor"),
                    (np.invert, "invert"), (np.left_shift, "left_shift"),
                    (np.right_shift, "right_shift")):
    _bitwise(_ufunc, _op)
