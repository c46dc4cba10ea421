"""The parts of a complex value: ``real``, ``imag``, ``conj`` and ``cabs`` (``|z|``), and
``complex``, the value ``x + iy`` of two real parts.

symgrad differentiates complex code with JAX's convention (README, "Complex
numbers"): a VJP rule is the transpose of the JVP under the real pairing
``<a, b> = Re(sum(a * b))`` (no conjugate), so for a real-valued ``f`` of a
complex ``z = x + iy`` the gradient is ``df/dx - i df/dy``, and for a
holomorphic ``f`` it is ``f'(z)`` itself. The rules here are the transposes of
the maps that are not complex-linear:

- ``real(z)``: cotangent ``g`` (a real ``g`` as a complex value);
- ``imag(z)``: ``-1j * g``;
- ``conj(z)``: ``conj(g)``;
- ``cabs(z) = |z|``: ``g * conj(z) / |z|``, and 0 at ``z = 0`` (``abs'(0) = 0``,
  as for real ``abs`` and JAX);
- ``complex(x, y) = x + iy``: ``(Re g, -Im g)``, JAX's ``lax.complex``'s.

A real value entering complex arithmetic is converted (``convert``), whose
transpose takes the real part of the cotangent: a real input's gradient is real.
These primitives only take complex operands (``np.real`` of a real value is the
value itself, in :mod:`symgrad.numpy_api.ufuncs`). Numba kernels compute them with
numpy's functions (``backend/numba/lowering/complex.py``).

    >>> import numpy as np
    >>> float(cabs_p.impl(np.complex128(3 + 4j)))
    5.0
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.ir import COMPLEXES, Aval, complex_of, holds_complex, real_of
from ..core.tracing import apply
from .convert import convert
from .elementwise import absolute, add, div, eq_p, maximum, mul, where
from .registry import broadcast_shapes, register


def _part_rule(name: str, real: bool):
    """A complex operand; a real result (``real``, ``imag``, ``cabs``) or a complex one."""
    def rule(x: Aval) -> Aval:
        if x.dtype not in COMPLEXES:
            raise TypeError(f"{name} takes a complex operand, got {x}")
        return Aval(broadcast_shapes(name, x), real_of(x.dtype) if real else x.dtype)
    return rule


real_p = register(
    name="real", kind="elementwise", complex=True, shape_rule=_part_rule("real", True),
    impl=np.real,
    vjp=lambda g, ans, z: (convert(g, z.dtype.name),),
    sympy=lambda sp, z: sp.re(z), linear=True)

imag_p = register(
    name="imag", kind="elementwise", complex=True, shape_rule=_part_rule("imag", True),
    impl=np.imag,
    vjp=lambda g, ans, z: (mul(convert(g, z.dtype.name), -1j),),
    sympy=lambda sp, z: sp.im(z), linear=True)


def _conj_vjp(g: Any, ans: Any, z: Any) -> tuple:
    return (conj(g),)


conj_p = register(
    name="conj", kind="elementwise", complex=True, shape_rule=_part_rule("conj", False),
    impl=np.conjugate, vjp=_conj_vjp,
    sympy=lambda sp, z: sp.conjugate(z), linear=True)


def _cabs_vjp(g: Any, ans: Any, z: Any) -> tuple:
    # d|z| = Re(conj(z) dz) / |z|: its transpose is g * conj(z) / |z|; 0 at z = 0. As
    # hypot's, computed on z divided by the larger magnitude m of its parts: right where
    # |z| is subnormal (|5e-324 (1 + i)| rounds to 5e-324; complex division there gave
    # nan) or overflows
    x, y = real(z), imag(z)
    m = maximum(absolute(x), absolute(y))
    s = where(m > 0.0, where(m < np.inf, m, 1.0), 1.0)
    kind = z.dtype.name
    zs = add(convert(div(x, s), kind), mul(convert(div(y, s), kind), 1j))
    h = apply(cabs_p, zs)  # in [1, sqrt(2)], or 0 at z = 0 (where zs is 0 too)
    unit = div(conj(zs), convert(where(apply(eq_p, h, 0.0), 1.0, h), kind))
    return (mul(convert(g, kind), unit),)


cabs_p = register(
    name="cabs", kind="elementwise", complex=True, shape_rule=_part_rule("cabs", True),
    impl=np.absolute, vjp=_cabs_vjp,
    sympy=lambda sp, z: sp.Abs(z))


def _make_rule(x: Aval, y: Aval) -> Aval:
    if x.dtype in COMPLEXES or y.dtype in COMPLEXES or x.dtype != y.dtype:
        raise TypeError(f"complex takes two real operands of one dtype, got {x} and {y}")
    return Aval(broadcast_shapes("complex", x, y), complex_of(x.dtype))


def _make_impl(x: Any, y: Any) -> Any:
    x, y = np.asarray(x), np.asarray(y)
    out = np.empty(np.broadcast_shapes(x.shape, y.shape), complex_of(x.dtype.name))
    out.real, out.imag = x, y  # (x + 1j * y would turn -0.0 into 0.0, inf into nan)
    return out[()]


def _make_vjp(g: Any, ans: Any, x: Any, y: Any) -> tuple:
    # dz = dx + i dy: Re(g dz) = Re(g) dx - Im(g) dy
    return (real(g), mul(imag(g), -1.0)) if np.dtype(g.dtype).kind == "c" else (g, None)


#: the complex number ``x + iy`` of two real values, each part exact (``lax.complex``)
complex_p = register(
    name="complex", kind="elementwise", complex=True, shape_rule=_make_rule,
    impl=_make_impl, vjp=_make_vjp, sympy=lambda sp, x, y: x + sp.I * y, linear=True)


def make_complex(x: Any, y: Any) -> Any:
    """``x + iy`` of real ``x``, ``y`` (one ``complex`` equation), bit for bit: numpy
    computes ``x + 1j * y`` with a complex product, whose ``0 * inf`` is nan."""
    return apply(complex_p, x, y)


def real(z: Any) -> Any:
    """The real part of a complex value (one ``real`` equation)."""
    return apply(real_p, z)


def imag(z: Any) -> Any:
    """The imaginary part of a complex value (one ``imag`` equation)."""
    return apply(imag_p, z)


def conj(z: Any) -> Any:
    """The complex conjugate of a complex value (one ``conj`` equation); a real value
    (a real cotangent in a second derivative) is its own conjugate."""
    return apply(conj_p, z) if holds_complex(z) else z


def cabs(z: Any) -> Any:
    """``|z|`` of a complex value (one ``cabs`` equation), a real value."""
    return apply(cabs_p, z)
