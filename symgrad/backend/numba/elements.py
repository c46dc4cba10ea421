"""The statements of one fused loop's body: each value as a scalar at an element.

:mod:`.codegen` makes the loop nest of a fused loop (serial, or a ``prange`` over
chunks) and asks :class:`Elements` for its body; :func:`vector_call` decides where
that body calls :mod:`.vecmath` (``vm.exp``) instead of the primitive's ``emit``.
An Elements' ``kernel`` is codegen's ``_Kernel`` (its plan, names, sizes and flags);
this module imports nothing of codegen, and codegen imports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...core.index_text import INDENT, broadcast_index
from ...core.ir import (
    BOOL,
    F32,
    FLOAT,
    Atom,
    Aval,
    Eqn,
    Literal,
    Var,
    is_complex,
    is_float,
    origin_changes,
)
from ..vecmath_facts import FLOAT32_FUNCTIONS, POWI_EXPONENTS, TanhPair, tanh_pairs
from .fusion import Loop, inline
from .lowering import lowering
from .scope import zero


class Elements:
    """The statements of one loop body: each value as a scalar at an element.

    Values the loop computes sit at the loop's element ``(i0, i1, ...)``;
    values it reads through (cheap elementwise ones, and element moves by their
    ``element`` facets: :func:`symgrad.backend.numba.fusion.inline`) are computed where
    they are read, at the element that read needs (``x[1:]`` at ``i0`` is
    ``x[i0 + 1]``), once per element and name. Everything else is read from its
    array.
    """

    def __init__(self, kernel: Any, loop: Loop, vector: bool = False, ok: str = "",
                 rows: str = "", pairs: bool = False):
        self.kernel = kernel
        self.loop = loop
        self.vector = vector  # call vecmath's functions where the primitive names one
        self.pairs = pairs    # tanh and its derivative by one vm.tanh_sech2 (codegen.TANH_PAIRS)
        self.ok = ok          # the flag that range checks clear
        self.rows = rows      # if set, the prefix of scratch rows for sums over the last axis
        self.scratch: list[str] = []  # the scratch rows made: r<k>_<j>
        self.after: list[str] = []    # what adds them up, after each innermost loop
        self.checks: list[str] = []  # the range checks emitted
        self.index = tuple(f"i{k}" for k in range(len(loop.shape)))
        self.lines: list[str] = []
        self.depth = 0
        self.scopes: list[dict[tuple[int, tuple[str, ...]], str]] = [{}]
        self.names: dict[tuple[int, tuple[str, ...]], str] = {}
        self.taken: set[str] = set()

    def body(self, live: list[Eqn], targets: Mapping[int, str]) -> list[str]:
        """The loop body; ``targets``: where a sum accumulates, if not in its own name."""
        pairs: dict[int, TanhPair] = {}
        skip: set[int] = set()
        if self.vector and self.pairs:
            for pair in tanh_pairs(live, self.kernel.plan.producer, self.kernel.plan.arrays):
                pairs[id(pair.tanh)] = pair
                skip.update(id(e) for e in (*pair.inner, pair.sech2))
        for cite, e in origin_changes(live):
            if id(e) in skip:
                continue  # computed with its tanh, by vm.tanh_sech2
            if cite is not None:
                self.emit(f"# grad of: {self.kernel.comments.eqn(cite)}")
            if id(e) in pairs:
                self.tanh_pair(pairs[id(e)])
            elif e.prim.accumulate:
                axes = e.params["axes"]
                kept = ", ".join(i for k, i in enumerate(self.index) if k not in axes)
                acc = f"{self.kernel.name(e.out)}[{kept}]" if kept else self.kernel.name(e.out)
                target, term = targets.get(id(e.out), acc), self.read(e.inputs[0], self.index)
                last = len(self.index) - 1
                # every element of the last axis adds here; the rows are float64 (a
                # complex sum adds where its terms are made)
                if self.rows and last in axes and not is_complex(e.inputs[0].dtype):
                    row = f"{self.rows}_{len(self.scratch)}"
                    self.scratch.append(row)
                    self.emit(f"{row}[i{last}] = {term}")
                    self.after.append(f"{target} += vm.row_sum({row})")
                    self.kernel.root.uses_vecmath = True  # (a float32 kernel imports vm32 only)
                else:
                    self.emit(f"{target} += {term}")
            else:
                self.compute(e, self.index)
        return self.lines

    def emit(self, line: str) -> None:
        self.lines.append(INDENT * self.depth + line)

    def tanh_pair(self, pair: TanhPair) -> None:
        """tanh(c) and its derivative at the loop's element, by one ``vm.tanh_sech2``."""
        index = self.index
        (c,) = pair.tanh.inputs
        arg = self.read(c, index)
        names = [self.name_at(v, index) for v in (pair.tanh.out, pair.sech2.out)]
        self.kernel.root.uses_vecmath = True
        self.emit(f"# {self.kernel.name(pair.sech2.out)} = tanh'({self.kernel.name(c)}), "
                  f"from tanh's exponential")
        self.emit(f"{names[0]}, {names[1]} = vm.tanh_sech2({arg})")
        for v, name in zip((pair.tanh.out, pair.sech2.out), names):
            if id(v) in self.kernel.plan.arrays:
                self.emit(f"{self.kernel.name(v)}[{', '.join(index)}] = {name}")
            self.scopes[-1][(id(v), index)] = name

    def known(self, key: tuple[int, tuple[str, ...]]) -> str | None:
        for scope in reversed(self.scopes):
            if key in scope:
                return scope[key]
        return None

    def name_at(self, v: Var, index: tuple[str, ...]) -> str:
        """The scalar holding ``v`` at ``index``: v's own name the first time, unless that
        names v's array; then ``<name>_1``, ``<name>_2``... (never a name the kernel has)."""
        key = (id(v), index)
        if key not in self.names:
            base = name = self.kernel.name(v)
            k = 0
            while (name in self.taken or (name != base and name in self.kernel.all_names)
                   or (name == base and id(v) in self.kernel.plan.arrays)):
                k += 1
                name = f"{base}_{k}"
            self.names[key] = name
            self.taken.add(name)
            self.kernel.all_names.add(name)
        return self.names[key]

    def read(self, a: Atom, index: tuple[str, ...]) -> str:
        """``a`` at the element ``index`` (one index per axis of ``a``)."""
        if isinstance(a, Literal) or not a.shape:
            return self.kernel.atom(a)
        hit = self.known((id(a), index))
        if hit is not None:
            return hit
        e = self.kernel.plan.producer.get(id(a))
        ours = id(a) in self.loop.scalars
        if e is not None and (ours or (inline(e) and id(a) not in self.kernel.plan.arrays)):
            return self.compute(e, index)
        return f"{self.kernel.name(a)}[{', '.join(index)}]"

    def compute(self, e: Eqn, index: tuple[str, ...]) -> str:
        """Statements for ``e``'s output at ``index``; the text of its value."""
        if lowering(e.prim).moves_elements:
            return self.moved(e, index)
        stored = index == self.index and id(e.out) in self.kernel.plan.arrays
        out = (f"{self.kernel.name(e.out)}[{', '.join(index)}]" if stored
               else self.name_at(e.out, index))
        at = [broadcast_index(a.shape, e.out.shape, index) for a in e.inputs]
        args = [self.read(a, i) for a, i in zip(e.inputs, at)]
        if lowering(e.prim).selects:
            args = [self.loaded(a, t, i) for a, t, i in zip(e.inputs, args, at)]
        if _float32_only(e):  # numpy's float32 * 2.0 is float32; Numba's would be float64
            args = [f"np.float32({t})" if isinstance(a, Literal) and isinstance(a.value, float)
                    else t for a, t in zip(e.inputs, args)]
        call = vector_call(e, args) if self.vector else None
        if call is not None:
            function, args = call
            module = "vm32" if function.endswith("32") else "vm"
            if module == "vm32":
                self.kernel.root.uses_vecmath32 = True
            else:
                self.kernel.root.uses_vecmath = True
            check = lowering(e.prim).range_check
            if check and module == "vm32":  # sin32, cos32: their own reduction's range
                check += "32"
            if check:
                self.checks.append(check)
                self.emit(f"{self.ok} &= {module}.{check}({', '.join(args)})")
            self.emit(f"{out} = {module}.{function}({', '.join(args)})")
        else:
            for line in lowering(e.prim).emit(out, args,
                                              [Aval((), a.dtype) for a in e.inputs],
                                              Aval((), e.out.dtype), **e.params):
                self.emit(line)
        self.scopes[-1][(id(e.out), index)] = out
        return out

    def loaded(self, a: Atom, text: str, index: tuple[str, ...]) -> str:
        """An operand of a choice (``Lowering.selects``) as a scalar: its element loaded
        from its array into a fresh name, read from there by later reads at ``index``."""
        if not isinstance(a, Var) or not text.startswith(f"{self.kernel.name(a)}["):
            return text
        base = self.kernel.name(a)
        k, name = 1, f"{base}_1"
        while name in self.taken or name in self.kernel.all_names:
            k += 1
            name = f"{base}_{k}"
        self.taken.add(name)
        self.kernel.all_names.add(name)
        self.emit(f"{name} = {text}")
        self.scopes[-1][(id(a), index)] = name
        return name

    def moved(self, e: Eqn, index: tuple[str, ...]) -> str:
        """An element move at ``index``: the operand's element its ``element`` facet
        names, or a choice among operands (0 where none holds it)."""
        sizes = self.kernel.sizes
        pieces = lowering(e.prim).element(index, [sizes.aval(a.aval) for a in e.inputs],
                                          sizes.aval(e.out.aval), **sizes.params(e.params))
        if len(pieces) == 1 and not pieces[0][0]:  # one operand, everywhere: read through
            _, k, at = pieces[0]
            return self.read(e.inputs[k], at)
        out = self.name_at(e.out, index)
        if pieces[-1][0]:  # the element is 0 where no piece holds it
            self.emit(f"{out} = {'False' if e.out.dtype == BOOL else zero(e.out.dtype)}")
        for n, (conditions, k, at) in enumerate(pieces):
            if len(pieces) > 1 and n == len(pieces) - 1 and not conditions:
                self.emit("else:")
            else:
                self.emit(f"{'elif' if n else 'if'} {' and '.join(conditions)}:")
            self.depth += 1
            self.scopes.append({})
            self.emit(f"{out} = {self.read(e.inputs[k], at)}")
            self.scopes.pop()
            self.depth -= 1
        self.scopes[-1][(id(e.out), index)] = out
        return out


def _float32_only(e: Eqn) -> bool:
    """Whether ``e`` computes in float32 by numpy's rules: a float32 operand, no float64
    one (Python float literals are weak: they take the other operand's dtype)."""
    dtypes = {a.dtype for a in e.inputs if isinstance(a, Var)}
    return F32 in dtypes and FLOAT not in dtypes


def vector_call(e: Eqn, args: list[str]) -> tuple[str, list[str]] | None:
    """The function of :mod:`.vecmath` a fused loop calls for ``e`` and its arguments
    (``args``: the operands' text), or None for the primitive's ``emit`` (libm). The
    primitive names the function; ``powi`` (pow's) takes only a float base and a literal
    integer exponent in :data:`POWI_EXPONENTS`, written as an int (``vm.powi(x, 3)``)."""
    function = lowering(e.prim).vectorized
    if function and any(is_complex(a.dtype) for a in (*e.inputs, e.out)):
        return None  # vecmath computes real values only: complex ones call numpy's (libm's)
    if function in FLOAT32_FUNCTIONS and e.out.dtype == F32 and all(
            a.dtype == F32 for a in e.inputs):
        # float32 in float32 (vecmath32); np.float32(): a float64 scalar of the loop (a
        # kernel argument) is rounded first, as numpy rounds it
        return f"{function}32", [t if t.startswith("np.float32(") else f"np.float32({t})"
                                 for t in args]
    if function != "powi":
        return (function, args) if function else None
    x, y = e.inputs
    n = y.value if isinstance(y, Literal) else None
    if (is_float(x.dtype) and isinstance(n, (int, float)) and not isinstance(n, bool)
            and float(n).is_integer() and int(n) in POWI_EXPONENTS):
        return function, [*args[:1], str(int(n))]
    return None

