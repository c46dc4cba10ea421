"""Index arithmetic as kernel source: where a fused loop reads an element.

Codegen reads operands of elementwise work with :func:`broadcast_index`, and
the ``element`` facets of primitives that move elements (see
:class:`symgrad.core.ir.Primitive`) compose their index expressions with these
helpers, so both spell an index the same way.

    >>> broadcast_index((3, 1), (2, 3, 4), ("i0", "i1", "i2"))
    ('i1', '0')
"""

from __future__ import annotations


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
