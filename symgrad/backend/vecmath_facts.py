"""What the code generator must know about :mod:`.vecmath` without importing it.

:mod:`.vecmath` imports Numba, and :mod:`.codegen` writes kernel source without
it (``sg.jit(f).source(x)``, the CLI's ``--show source``): the facts that decide
which text codegen writes live here, and :mod:`.vecmath` takes them from here.

    >>> sorted(POWI_EXPONENTS)
    [3, 4, 5, 6, 7, 8]
"""

from __future__ import annotations

#: the integer exponents n for which a fused loop computes ``x ** n`` (``pow`` with a
#: literal exponent) as ``vecmath.powi(x, n)``: a double-double product chain of n - 1
#: steps, within 1 ulp. 2 is ``square``, 1, 0.5 and -1 have their own primitives (the
#: pow primitive's simplifications); the others call libm's ``pow``
POWI_EXPONENTS = frozenset(range(3, 9))
