"""``polygamma(n, z)`` of complex ``z`` for ``n >= 1``: the derivatives of scipy's complex
``psi``, which scipy does not have (its ``polygamma`` is real only). The derivative of
``psi``, ``gamma`` and their compositions of complex values need it.

Vectorized numpy, in complex128:

- reflection for ``Re z < 1/2``: ``psi_n(z) = (-1)**n psi_n(1 - z) - pi**(n+1)
  P_n(cot(pi z))``, where ``d**n/du**n cot(u) = P_n(cot u)``, ``P_0(c) = c`` and
  ``P_(k+1)(c) = -(1 + c**2) P_k'(c)``; ``P_n(c) = (1 + c**2) Q_n(c)`` is taken as
  ``Q_n(cot) / sin**2``, since ``1 + cot**2`` cancels where ``cot`` is near ``-+i``
  (``|Im z|`` past a few units; past 20, ``1/sin**2 = -4 exp(+-2 pi i z)`` to the last
  bit, which the overflowing ``sin`` cannot give); ``z`` is reduced by its nearest
  integer first (exact: the period is 1), so the poles ``z = 0, -1, -2, ...`` give nan,
  as scipy's complex psi;
- the recurrence ``psi_n(w) = psi_n(w + m) - (-1)**n n! sum_(k<m) (w + k)**-(n+1)`` up to
  ``|w + m| >= 20 + n``;
- there the asymptotic series ``(-1)**(n+1) [(n-1)!/u**n + n!/(2 u**(n+1)) +
  sum_k B_2k (2k+n-1)!/(2k)! / u**(2k+n)]`` to ``k = 12`` (the next term is below 1e-20
  of the first for ``n <= 6``).

Measured against mpmath (tests/test_complex_special.py): a few ulp away from the zeros
of ``psi_n``, which the reflection's difference approaches only in absolute terms.

    >>> import numpy as np
    >>> print(round(complex_polygamma(1, np.complex128(1.0)).real, 12))  # pi**2 / 6
    1.644934066848
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np
from numpy.polynomial import polynomial as npp

#: B_2, B_4, ..., B_24
_BERNOULLI = (Fraction(1, 6), Fraction(-1, 30), Fraction(1, 42), Fraction(-1, 30),
              Fraction(5, 66), Fraction(-691, 2730), Fraction(7, 6), Fraction(-3617, 510),
              Fraction(43867, 798), Fraction(-174611, 330), Fraction(854513, 138),
              Fraction(-236364091, 2730))


@functools.cache
def _cot_derivative(n: int) -> np.ndarray:
    """The coefficients of ``Q_n`` (lowest first), ``n >= 1``: ``d**n/du**n cot(u) =
    (1 + cot(u)**2) Q_n(cot u)``."""
    q = np.array([-1.0])  # P_1 = -(1 + c**2)
    for _ in range(n - 1):  # P' = (1 + c**2) Q' + 2c Q, P_(k+1) = -(1 + c**2) P_k'
        q = -npp.polyadd(npp.polymul([1.0, 0.0, 1.0], npp.polyder(q)),
                         npp.polymul([0.0, 2.0], q))
    return q


def _cot_term(n: int, w: np.ndarray) -> np.ndarray:
    """``pi**(n+1) P_n(cot(pi w))`` (see the module docstring)."""
    u = np.pi * ((w.real - np.round(w.real)) + 1j * w.imag)
    cot = 1.0 / np.tan(u)
    near = np.abs(w.imag) < 20.0
    q = np.exp(2j * np.where(w.imag < 0, -u, u))
    csc2 = np.where(near, 1.0 / np.square(np.sin(np.where(near, u, 0.0))), -4.0 * q)
    return np.pi ** (n + 1) * csc2 * npp.polyval(cot, _cot_derivative(n))


@functools.cache
def _series(n: int) -> tuple[float, ...]:
    """``B_2k (2k+n-1)! / (2k)!`` for k = 1, 2, ...: the asymptotic series' coefficients."""
    return tuple(float(b * math.factorial(2 * k + n - 1) / math.factorial(2 * k))
                 for k, b in enumerate(_BERNOULLI, start=1))


def _asymptotic(n: int, u: np.ndarray) -> np.ndarray:
    inv = 1.0 / u
    inv2 = inv * inv
    tail = np.zeros_like(u)
    for c in reversed(_series(n)):
        tail = c + inv2 * tail
    lead = math.factorial(n - 1) + math.factorial(n) / 2.0 * inv + inv2 * tail
    return (-1.0) ** (n + 1) * lead * inv ** n


def _right_half(n: int, w: np.ndarray) -> np.ndarray:
    """``psi_n(w)`` for ``Re w >= 1/2`` (the recurrence, then the series)."""
    edge = 20.0 + n
    far = ~(np.abs(w) < edge)  # (nan too)
    steps = np.where(far, 0.0, np.ceil(edge - w.real))
    total = np.zeros_like(w)
    for k in range(int(steps.max(initial=0.0))):
        total += np.where(k < steps, (w + k) ** -(n + 1), 0.0)
    return _asymptotic(n, w + steps) - (-1.0) ** n * math.factorial(n) * total


def complex_polygamma(n: int, z: object) -> object:
    """``psi_n(z)``, the n-th derivative of digamma, of complex ``z`` (``n >= 1``), in
    ``z``'s complex dtype (complex64 computed in complex128)."""
    if n < 1 or n != int(n):
        raise ValueError(f"complex_polygamma takes an order n >= 1, got {n!r}")
    n = int(n)
    z = np.asarray(z)
    w = z.astype(np.complex128)
    with np.errstate(all="ignore"):
        left = w.real < 0.5
        right = _right_half(n, np.where(left, 1.0 - w, w))
        mirror = (-1.0) ** n * right - _cot_term(n, w)
        out = np.where(left, mirror, right)
    return out.astype(z.dtype if z.dtype.kind == "c" else np.complex128)[()]
