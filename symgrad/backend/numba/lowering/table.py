"""The Numba backend's lowering table: how each primitive is written in kernel source.

A primitive (:mod:`symgrad.prims`) says what an operation means; this table says how
the Numba backend writes it, keyed by the :class:`~symgrad.core.ir.Primitive` object
(never by its name, so a renamed or shadowed primitive cannot pick up another's code).
Each family module of this package (:mod:`.elementwise`, :mod:`.reductions`, ...)
files its primitives' :class:`Lowering` with :func:`lower`; the registry test
(``tests/test_registry.py``) demands one for every registered primitive.

An elementwise primitive whose ``numpy`` is a ufunc needs no entry: it lowers to
``np.<ufunc>(<operands>)`` (:func:`lowering`). An entry is needed for another
spelling, a ``vectorized`` function of :mod:`symgrad.backend.vecmath`, or a layout
fact that fusion reads (``cheap``, ``shape_only``, ``transposes``,
``transposed_operands``, an ``element`` facet).
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ....core.ir import Aval, Eqn, Primitive, is_complex


@dataclass(frozen=True)
class Lowering:
    """How the Numba backend writes one primitive.

    - ``emit(out, args, avals, out_aval, **params) -> list[str]``: the statements that
      compute ``out`` from the operands' source ``args`` (control flow also gets
      ``scope=``, which renders a held graph as statements);
    - ``element(at, avals, out_aval, **params)``, for primitives that only move
      elements: where a fused loop finds the output's element at the index ``at`` (a
      tuple of source expressions), as a list of ``(conditions, operand,
      operand_index)``; the first piece whose conditions all hold gives it, and if none
      does it is 0. Loops read through such primitives instead of storing their output;
    - ``vectorized``: the function of :mod:`symgrad.backend.vecmath` that fused loops
      call for it (one LLVM vectorizes, within 1 ulp); ``""``: ``emit`` (libm) everywhere;
    - ``range_check``: where ``vectorized`` is valid on a range only, the function of
      :mod:`symgrad.backend.vecmath` that checks an argument is in it: a loop that calls
      it runs again with libm if some argument was not;
    - ``cheap``: a fused loop computes it again where it is read, never stores it;
    - ``shape_only``: reads only its operands' shapes, which kernels know;
    - ``transposes``: ``perm=(1, 0)`` makes its output the view ``c.T``;
    - ``transposed_operands``: takes ``c.T`` of a C-contiguous ``c`` as it is (BLAS
      reads F-contiguous matrices without a copy);
    - ``contiguous``: a view primitive whose output the kernel makes C-contiguous
      (reshape's emit copies an operand that is not);
    - ``selects``: its emit chooses between operands (``a if c else b``): a fused loop
      loads the operands it reads from arrays into scalars first, so that LLVM selects
      without a branch (it loads an element only on the branch that reads it, and a
      branch on a random mask, ReLU's or max pooling's, mispredicts: 5x slower).
    """

    emit: Callable[..., list[str]]
    element: Callable[..., list] | None = None
    vectorized: str = ""
    range_check: str = ""
    cheap: bool = False
    shape_only: bool = False
    transposes: bool = False
    transposed_operands: bool = False
    contiguous: bool = False
    selects: bool = False

    @property
    def moves_elements(self) -> bool:
        """Fused loops read through it by index arithmetic (it has an ``element`` facet)."""
        return self.element is not None


#: primitive -> its lowering (filled by the family modules of this package)
TABLE: dict[Primitive, Lowering] = {}
#: primitives no Numba kernel can hold, each with the reason: the backend cuts the graph
#: around them and runs their ``impl`` on the interpreter in between (host primitives,
#: Python callbacks, and the FFT, which Numba does not have)
INTERPRETED: dict[Primitive, str] = {}
#: those of :data:`INTERPRETED` a kernel still holds inside a loop or branch body (or an
#: exported module), by an object-mode block: the FFT (filled by .complex)
IN_KERNELS: set[Primitive] = set()
#: the lowerings :func:`lowering` made from a ufunc, made once per primitive
_DEFAULTS: dict[Primitive, Lowering] = {}


def expression(template: str) -> Callable[..., list[str]]:
    """Numba emit for ``out = <template filled with the operands>``."""
    def emit(out: str, args: list[str], avals: Any, out_aval: Aval, **params: Any) -> list[str]:
        return [f"{out} = {template.format(*args)}"]
    return emit


def ufunc_template(prim: Primitive) -> str | None:
    """``np.<ufunc>({0}, ...)`` for an elementwise primitive of a numpy ufunc, else None."""
    ufunc = prim.numpy
    if prim.kind != "elementwise" or not isinstance(ufunc, np.ufunc):
        return None
    return f"np.{ufunc.__name__}({', '.join(f'{{{k}}}' for k in range(ufunc.nin))})"


def lower(prim: Primitive, emit: Callable[..., list[str]] | str | None = None,
          **facts: Any) -> Lowering:
    """File ``prim``'s lowering: ``emit`` a function, a template (``"{0} + {1}"``) or
    None for the ufunc default; ``facts`` the other fields of :class:`Lowering`."""
    if prim in TABLE:
        raise ValueError(f"primitive {prim.name} is lowered twice")
    if emit is None:
        emit = ufunc_template(prim)
        if emit is None:
            raise TypeError(f"primitive {prim.name} is not of a ufunc: give its emit")
    found = Lowering(expression(emit) if isinstance(emit, str) else emit, **facts)
    TABLE[prim] = found
    return found


def interpreted(prim: Primitive, reason: str, emit: Callable[..., list[str]]) -> None:
    """Declare that ``prim`` runs on the interpreter between kernels, and why; ``emit``
    is what a kernel says where one is met anyway (inside a loop body: an error that
    says what to do)."""
    if prim.subgraphs:
        raise TypeError(f"{prim.name}: a control-flow primitive cannot run between kernels")
    INTERPRETED[prim] = reason
    lower(prim, emit)


#: whether kernels call numpy's complex functions (:mod:`symgrad.backend.npymath`: libm's
#: ``clog``, ``ctanh``... through the C ABI of x86-64, which Windows' numpy does not use)
NPYMATH = platform.machine().lower() in ("x86_64", "amd64") and sys.platform != "win32"
#: primitives whose Numba functions of complex values are not numpy's to a few ulps (the
#: reason): an equation of one with a complex operand runs between kernels
COMPLEX_INTERPRETED: dict[Primitive, str] = {}


def between(e: Eqn) -> str | None:
    """Why equation ``e`` runs in Python between kernels, or None (it is kernel code): a
    host primitive (a callback), one of :data:`INTERPRETED`, or one of
    :data:`COMPLEX_INTERPRETED` of a complex operand."""
    if e.prim.host:
        return "a host primitive: sg.pure_callback, scipy.special"
    if e.prim in INTERPRETED:
        return INTERPRETED[e.prim]
    if e.prim in COMPLEX_INTERPRETED and any(is_complex(a.dtype) for a in e.inputs):
        return COMPLEX_INTERPRETED[e.prim]
    return None


def lowering(prim: Primitive) -> Lowering:
    """``prim``'s lowering: its entry, else the ufunc default; a primitive with neither
    has no Numba lowering (a KeyError that says which)."""
    found = TABLE.get(prim) or _DEFAULTS.get(prim)
    if found is not None:
        return found
    template = ufunc_template(prim)
    if template is None:
        raise KeyError(f"the Numba backend has no lowering of primitive {prim.name}: add one "
                       "to symgrad/backend/numba/lowering/ (see CONTRIBUTING.md)")
    found = _DEFAULTS[prim] = Lowering(expression(template))
    return found


def transposed(x: str, perm: tuple[int, ...]) -> str:
    """The text of ``x`` with its axes permuted by ``perm``: ``x`` itself for the identity,
    ``np.transpose(x)`` for the reversal (a 2-d transpose), else with the axes. The
    spelling matters to compile time: Numba compiles ``np.transpose`` with an axes tuple
    in about 4-5 s of CPU the first time a process meets it (measured on 2 cores, a
    2-d ``(1, 0)``), and the reversal, its ``.T``, in 0.2 s."""
    n = len(perm)
    if perm == tuple(range(n)):
        return x
    if perm == tuple(range(n - 1, -1, -1)):
        return f"np.transpose({x})"
    return f"np.transpose({x}, {perm!r})"
