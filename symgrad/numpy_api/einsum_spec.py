"""``np.einsum``'s subscripts, normalized to explicit letters, and longer products in pairs.

:func:`normalize` turns the sublist form (``np.einsum(x, [0, 1], y, [1, 2])``)
into a subscripts string as numpy does (label ``k`` is ``A``..``Z``, then
``a``..``z``), replaces ``...`` by letters the subscripts do not use (numpy's
broadcasting of those axes: an axis of length 1 against a longer one is dropped
from its operand) and makes the output explicit. :func:`in_pairs` contracts
three or more operands left to right, each step keeping the letters still
needed later, with the two-operand einsum it is given.

    >>> import numpy as np
    >>> normalize("...ij,...jk", [np.ones((2, 3, 4)), np.ones((4, 5))])[0]
    'aij,jk->aik'
"""

from __future__ import annotations

import string
from collections.abc import Callable, Sequence
from typing import Any

from ..core.errors import ShapeError
from ..core.tracing import shape_of
from .functions import reshape

#: numpy's letters for sublist labels 0..51
LABELS = string.ascii_uppercase + string.ascii_lowercase


def _from_sublists(args: Sequence[Any]) -> tuple[str, list[Any]]:
    pairs = list(args)
    output = pairs.pop() if len(pairs) % 2 else None

    def letters(sublist: Any) -> str:
        out = []
        for s in sublist:
            if s is Ellipsis:
                out.append("...")
            elif isinstance(s, int) and 0 <= s < len(LABELS):
                out.append(LABELS[s])
            else:
                raise ValueError(f"np.einsum: subscript labels are integers in [0, 52) or "
                                 f"Ellipsis, got {s!r}")
        return "".join(out)

    operands = pairs[0::2]
    spec = ",".join(letters(s) for s in pairs[1::2])
    if output is not None:
        spec += "->" + letters(output)
    return spec, operands


def normalize(subscripts: Any, operands: Sequence[Any]) -> tuple[str, list[Any]]:
    """Explicit-letter subscripts (with ``->``) and the operands, some with size-1
    broadcast axes dropped."""
    if not isinstance(subscripts, str):
        subscripts, operands = _from_sublists((subscripts, *operands))
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    operands = list(operands)
    if len(terms) != len(operands):
        raise ValueError(f"np.einsum({spec!r}, ...): {len(terms)} subscript terms for "
                         f"{len(operands)} operands")
    if not arrow:  # implicit output: broadcast axes, then letters used once, sorted
        joined = "".join(terms).replace("...", "")
        output = ("..." if "..." in inputs else "") + "".join(
            sorted(c for c in set(joined) if joined.count(c) == 1))
    if "." not in spec:
        return ",".join(terms) + "->" + output, operands
    spare = [c for c in string.ascii_letters if c not in spec]
    counts = []
    for t, x in zip(terms, operands):
        n = len(shape_of(x)) - (len(t) - 3) if "..." in t else 0
        if n < 0 or ("..." not in t and "." in t):
            raise ShapeError(f"np.einsum({spec!r}, ...): term {t!r} does not fit an operand "
                             f"of shape {shape_of(x)}")
        counts.append(n)
    width = max(counts)
    broadcast = "".join(spare[:width])
    lengths: dict[str, int] = {}
    placed = []
    for t, x, n in zip(terms, operands, counts):
        term = t.replace("...", broadcast[width - n:])
        for c, d in zip(term, shape_of(x)):
            if c in broadcast and d != 1:
                if lengths.setdefault(c, d) != d:
                    raise ShapeError(f"np.einsum({spec!r}, ...): operands could not be "
                                     f"broadcast together ({[shape_of(o) for o in operands]})")
        placed.append((term, x))
    terms, operands = [], []
    for term, x in placed:  # drop broadcast axes of length 1 that others make longer
        shape = shape_of(x)
        drop = [k for k, c in enumerate(term) if c in broadcast and shape[k] == 1
                and lengths.get(c, 1) > 1]
        if drop:
            x = reshape(x, tuple(d for k, d in enumerate(shape) if k not in drop))
            term = "".join(c for k, c in enumerate(term) if k not in drop)
        terms.append(term)
        operands.append(x)
    output = output.replace("...", broadcast)
    return ",".join(terms) + "->" + output, operands


def in_pairs(spec: str, operands: Sequence[Any], einsum: Callable[..., Any]) -> Any:
    """Three or more operands, contracted left to right by the two-operand ``einsum``."""
    inputs, _, output = spec.partition("->")
    terms = inputs.split(",")
    term, result = terms[0], operands[0]
    for k in range(1, len(terms)):
        later = output + "".join(terms[k + 1:])
        if k == len(terms) - 1:
            keep = output
        else:
            keep = "".join(dict.fromkeys(c for c in term + terms[k] if c in later))
        result = einsum(f"{term},{terms[k]}->{keep}", result, operands[k])
        term = keep
    return result
