"""Index arithmetic as kernel source: where a fused loop reads an element.

Codegen reads operands of elementwise work with :func:`broadcast_index`, and
the ``element`` facets of primitives that move elements (see
:class:`symgrad.core.ir.Primitive`) compose their index expressions with these
helpers, so both spell an index the same way. Loop nests over every axis of an
array (codegen's fused loops, the emits of reductions and of stacks of matrices)
open with :func:`loop_nest`.

    >>> broadcast_index((3, 1), (2, 3, 4), ("i0", "i1", "i2"))
    ('i1', '0')
"""

from __future__ import annotations

from collections.abc import Sequence

#: at most this many loops nested in kernel source: Python refuses a function with
#: more than 20 nested blocks ("too many statically nested blocks"), which a loop per
#: axis of a 21-d array would be
MAX_NESTED = 6
INDENT = "    "


def broadcast_index(shape: tuple[int, ...], out: tuple[int, ...],
                    index: tuple[str, ...]) -> tuple[str, ...]:
    """Where an operand of ``shape`` is read for the element ``index`` of ``out``
    (numpy broadcasting: leading axes dropped, axes of length 1 at 0)."""
    lead = len(out) - len(shape)
    return tuple("0" if d == 1 and out[lead + k] != 1 else index[lead + k]
                 for k, d in enumerate(shape))


def term(i: str) -> str:
    """An index expression as an operand: parenthesized unless a name or a number."""
    return i if i.isidentifier() or i.isdigit() else f"({i})"


def loop_nest(sizes: Sequence[object], index: str = "i") -> tuple[list[str], int]:
    r"""The lines that open loops binding ``i0``, ``i1``, ... (``index`` names them) over
    ``sizes`` (source text or ints), C order, and the depth of the loop body.

    Past :data:`MAX_NESTED` axes, the leading ones are one loop over the product of
    their sizes, whose counter (``i<n>`` for ``n`` axes) gives their indices, so that
    an array of any rank is a nest of at most ``MAX_NESTED + 1`` loops:

        >>> print("\n".join(loop_nest(["2", "3"])[0]))
        for i0 in range(2):
            for i1 in range(3):
        >>> lines, depth = loop_nest([f"n{k}" for k in range(9)])
        >>> print("\n".join(lines[:5])); depth
        for i9 in range(n0 * n1 * n2):
            i0 = i9 // (n1 * n2) % n0
            i1 = i9 // n2 % n1
            i2 = i9 % n2
            for i3 in range(n3):
        7
    """
    sizes = [str(s) for s in sizes]
    n = len(sizes)
    lead = n - MAX_NESTED if n - MAX_NESTED > 1 else 0
    lines: list[str] = []
    depth = 0
    if lead:
        flat = f"{index}{n}"
        lines.append(f"for {flat} in range({' * '.join(term(s) for s in sizes[:lead])}):")
        depth = 1
        for k in range(lead):
            rest = [term(s) for s in sizes[k + 1:lead]]
            stride = rest[0] if len(rest) == 1 else f"({' * '.join(rest)})"
            quotient = f"{flat} // {stride}" if rest else flat
            lines.append(INDENT + f"{index}{k} = {quotient} % {term(sizes[k])}")
    for k in range(lead, n):
        lines.append(INDENT * depth + f"for {index}{k} in range({sizes[k]}):")
        depth += 1
    return lines, depth
