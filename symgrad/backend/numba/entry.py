"""The compiled function behind a warm Numba dispatcher, for one signature.

Calling a Numba dispatcher types every argument (in C) and looks its
signature up among the compiled overloads before it calls the overload's
``entry_point``: the compiled function itself, which unboxes the arguments
as the signature says and checks nothing. :func:`entry` returns that entry
point for the types of given arguments, so a caller that already knows each
later call has arguments of exactly those Numba types (symgrad's fast path:
its key holds each array's dtype, shape and C-contiguous/aligned/writeable
flags, and each number's type, which fix the Numba type) may call it and skip
the dispatch. Same machine code, same results; a caller that cannot vouch for
the types calls the dispatcher, which compiles or refuses.

Anything that is not a plain Numba dispatcher with that overload compiled
(a parallel kernel's serializing wrapper, the interpreter, a chain of
pieces) comes back as it is.

    >>> import numba, numpy as np
    >>> f = numba.njit(lambda x, y: (x * y,))
    >>> x = np.ones(3)
    >>> _ = f(x, 2.0)
    >>> entry(f, (x, 2.0))(x, 3.0)
    (array([3., 3., 3.]),)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def entry(kernel: Callable[..., Any], args: tuple) -> Callable[..., Any]:
    """The compiled overload of the Numba dispatcher ``kernel`` for the types of ``args``
    (all of its arguments, in order), or ``kernel`` itself when it is not a dispatcher
    or has no such overload (then the caller keeps paying for Numba's dispatch)."""
    overloads = getattr(kernel, "overloads", None)
    typeof = getattr(kernel, "typeof_pyval", None)
    if not isinstance(overloads, dict) or typeof is None \
            or not type(kernel).__module__.startswith("numba"):
        return kernel
    try:
        found = overloads.get(tuple(typeof(a) for a in args))
    except Exception:  # noqa: BLE001 -- an argument Numba cannot type: keep the dispatcher
        return kernel
    point = getattr(found, "entry_point", None)
    if found is None or getattr(found, "objectmode", False) or not callable(point):
        return kernel
    return point
