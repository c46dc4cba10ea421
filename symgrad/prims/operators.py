"""Python's operators on traced values, as primitives.

:class:`Operators` is the arithmetic every traced value has (``+ - * / **``,
unary minus, ``abs``, comparisons), with numpy's promotion of booleans.
:class:`PrimTracer` is the tracer the adjoint gives VJP rules: operators, the
ufuncs of elementwise primitives (``np.cos(x)`` is ``cos_p``), and the recording
helpers of :mod:`symgrad.prims`; nothing else of numpy's API (``np.where`` on it
is a TypeError: VJP rules use ``where`` from :mod:`symgrad.prims.elementwise`).
:class:`symgrad.numpy_api.ArrayTracer` adds the rest of numpy.
"""

from __future__ import annotations

from typing import Any

from ..core.tracing import Tracer
from . import elementwise as E
from .bitwise import bitwise
from .registry import of_numpy


class Operators:
    """Arithmetic and comparisons of traced values, each one primitive."""

    __slots__ = ()
    __array_priority__ = 1000

    def __add__(self, o): return E.add(self, o)
    def __radd__(self, o): return E.add(o, self)
    def __sub__(self, o): return E.sub(self, o)
    def __rsub__(self, o): return E.sub(o, self)
    def __mul__(self, o): return E.mul(self, o)
    def __rmul__(self, o): return E.mul(o, self)
    def __truediv__(self, o): return E.div(self, o)
    def __rtruediv__(self, o): return E.div(o, self)
    def __pow__(self, o): return E.power(self, o)  # numpy's fast paths: the pow rewrites
    def __rpow__(self, o): return E.power(o, self)
    def __neg__(self): return E.neg(self)
    def __pos__(self): return self
    # numpy's bitwise operators: logical on bools, bitwise on integers (symgrad.prims.bitwise)
    def __and__(self, o): return bitwise(self, o, op="and")
    def __rand__(self, o): return bitwise(o, self, op="and")
    def __or__(self, o): return bitwise(self, o, op="or")
    def __ror__(self, o): return bitwise(o, self, op="or")
    def __xor__(self, o): return bitwise(self, o, op="xor")
    def __rxor__(self, o): return bitwise(o, self, op="xor")
    def __invert__(self): return bitwise(self, op="invert")
    def __lshift__(self, o): return bitwise(self, o, op="left_shift")
    def __rlshift__(self, o): return bitwise(o, self, op="left_shift")
    def __rshift__(self, o): return bitwise(self, o, op="right_shift")
    def __rrshift__(self, o): return bitwise(o, self, op="right_shift")
    def __abs__(self): return E.absolute(self)
    def __lt__(self, o): return E.less(self, o)
    def __le__(self, o): return E.less_equal(self, o)
    def __gt__(self, o): return E.greater(self, o)
    def __ge__(self, o): return E.greater_equal(self, o)
    def __eq__(self, o): return E.equal(self, o)  # type: ignore[override]
    def __ne__(self, o): return E.not_equal(self, o)  # type: ignore[override]
    __hash__ = None  # type: ignore[assignment]  # elementwise ==, as numpy arrays


class PrimTracer(Operators, Tracer):
    """A traced value inside a VJP rule: operators and elementwise ufuncs, no other
    numpy functions."""

    __slots__ = ()

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        prim = of_numpy(ufunc)
        if method != "__call__" or kwargs or prim is None or prim.kind != "elementwise":
            return NotImplemented  # numpy raises a TypeError
        return E.call(prim, *inputs)
