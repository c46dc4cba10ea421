"""Leaf and data memory handed to numpy: writes no version counts, found by comparing copies.

A leaf or data tensor may share its memory with numpy arrays outside symgrad: the
array given to ``torch.from_numpy(a)`` (``as_tensor``, ``Variable(a)``,
``nn.Parameter(a)``, ``t.data = a``), and the arrays ``t.numpy()`` and
``np.asarray(t)`` hand out, of the tensor or of one sharing its memory
(``x.detach().numpy()``, ``x.data.numpy()``, a view's). A write into such an array
changes the tensor as a ``.data`` write does: no version counts it, and PyTorch's
backward reads the changed values where a node saved the tensor, and the values its
nodes saved elsewhere. symgrad's backward recomputes the forward from the leaves, so
it must know of the change: a write found here is marked on the tensor as a ``.data``
write is (``Tensor._untracked``), and :mod:`.replay` then reads the forward's saved
values and gives PyTorch's gradient, or raises where it cannot (the recomputed value
would come from the new values), naming the tensor's shape and the fix.

How a write is found. The memory's owner (numpy points every view's ``.base`` at it)
is registered when handed out (:func:`hand_out`). A node that reads a leaf or data
tensor whose owner is registered (:func:`read`, from :func:`.fastpath.watched`) takes a
copy of its values, once per version (the nodes reading that version share it and hold
it: it goes with the graph; the tensor refers to it weakly); each later node reading it
compares (values that differ were written between the two nodes), and so do
``backward`` and ``torch.autograd.grad`` before anything else (:func:`check`). Memory
handed out after a node read it (``x.detach().numpy()`` after the forward) is copied
then, for the tensors known to share it (its aliases, views, ``.data`` origin, and
``Variable(c)``, ``nn.Parameter(c)`` of it), and that copy is held by the tensor.

Memory nobody else holds cannot be written. ``from_numpy(a)`` makes a tensor holding a
view of ``a``, and ``numpy()`` of such a tensor hands out a new view, so the owner's
reference count tells whether any array outside still refers to it; when none does
(the seeds' ``Variable(torch.from_numpy(temp))``) the registration is dropped at the
next read, and the tensor costs nothing more. A tensor owning its memory
(``torch.tensor(...)``) that handed it out by ``numpy()`` stays registered while the
memory lives (symgrad's own references to it cannot be told from a user's): each of its
versions read by a node is copied once. A tensor whose ``numpy()`` was called holds the
copy taken then until its version changes or it dies (each ``backward`` compares it).

    >>> import numpy as np
    >>> import symgrad as torch
    >>> a = np.full(2, 0.5)
    >>> x = torch.ones(2, requires_grad=True)
    >>> y = (x * torch.from_numpy(a)).sin().sum()
    >>> a[:] = 50.0                     # PyTorch's sin node kept sin's input, 0.5
    >>> y.backward()                    # cos(0.5) * 50, read as PyTorch's reads it
    >>> x.grad
    tensor([43.8791, 43.8791])
"""

from __future__ import annotations

import sys
import weakref
from typing import Any

import numpy as np

from .graph import next_seq

#: id(owner) -> a weak reference keeping the registration while the memory lives
HANDED: dict[int, Any] = {}
#: id -> weak reference of each tensor keeping a copy of its values (``Tensor._kept``:
#: (version, copy)); not a WeakSet, which compares Tensors by ``==`` (elementwise)
KEEPING: dict[int, Any] = {}


def _owner(v: np.ndarray) -> Any:
    b = v.base
    return v if b is None else b  # (numpy points a view of a view at the owner)


def hand_out(v: np.ndarray) -> None:
    """``v``'s memory is now reachable by numpy arrays outside symgrad."""
    o = _owner(v)
    k = id(o)
    if k in HANDED:
        return
    try:  # (while registered, id(o) is o's: the callback drops the entry with o)
        HANDED[k] = weakref.ref(o, lambda r, k=k: HANDED.get(k) is r and HANDED.pop(k))
    except TypeError:  # (a buffer numpy points at, such as a bytearray: v keeps it alive)
        HANDED[k] = weakref.ref(v, lambda r, k=k: HANDED.get(k) is r and HANDED.pop(k))


def shared(t: Any) -> np.ndarray:
    """``t``'s values handed to numpy (``t.numpy()``): a view when ``t`` holds a view, so
    that the owner's reference count shows whether the caller keeps it."""
    v = t._value
    out = v if v.base is None else v.view()
    hand_out(v)
    return out


def handed_after(tensors: Any) -> None:
    """The memory of ``tensors`` (a tensor whose array ``numpy()`` hands out, and those
    known to share it) may be written from now on: each leaf or data one keeps a copy of
    its values (a node may have read them already; the tensor holds this copy itself)."""
    for t in tensors:
        if t is not None and t._node is None and _copy(t) is None:
            _keep(t, True)


def _copy(t: Any) -> np.ndarray | None:
    """The copy ``t`` keeps of its current version's values, if any is still held."""
    kept = t._kept
    return kept[1]() if kept is not None and kept[0] == t._version else None


def _keep(t: Any, held_by_tensor: bool = False) -> np.ndarray:
    """A new copy of ``t``'s values: ``t`` refers to it weakly (the nodes that read it hold
    it, so it goes with the graph) unless ``held_by_tensor``."""
    c = np.array(t._value)  # (an array: a 0-d tensor may hold a ufunc's numpy scalar)
    t._kept = (t._version, weakref.ref(c), c if held_by_tensor else None)
    k = id(t)
    if k not in KEEPING:
        KEEPING[k] = weakref.ref(t, lambda r, k=k: KEEPING.get(k) is r and KEEPING.pop(k))
    return c


def _drop(t: Any) -> None:
    t._kept = None
    KEEPING.pop(id(t), None)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit for bit (a write of -0.0 over 0.0, or of another NaN, is a write)."""
    if type(b) is not np.ndarray:  # (a numpy scalar)
        b = np.asarray(b)
    if a.shape != b.shape:
        return False
    n = a.dtype.itemsize
    if n in (1, 2, 4, 8):
        bits = np.dtype(f"u{n}")
        return bool(np.array_equal(a.view(bits), b.view(bits)))
    return bool(np.array_equal(a, b, equal_nan=True))


def _written(t: Any, seq: int) -> None:
    """``t``'s values were written through numpy before node number ``seq`` (and after
    the nodes before it that read them): marked as a ``.data`` write marks them, on
    ``t`` and the tensors sharing its memory (:func:`.tensor._untracked_change`), and
    its copy is dropped (the mark stays for the nodes made before: a later copy is
    only for the later nodes)."""
    t._untracked = -seq
    for ref in t._aliases or ():
        w = ref()
        if w is not None:
            w._untracked = -seq
    _drop(t)


def read(t: Any, node: Any) -> None:
    """``node`` reads ``t``, a leaf or data tensor (call only while memory is registered:
    ``if HANDED``). If ``t``'s memory was handed out, the node holds a copy of its values
    (one per version, shared by the nodes reading it); a copy kept before is compared
    (numpy wrote them since the last node read them, if they differ)."""
    v = t._value
    o = _owner(v)
    ref = HANDED.get(id(o))
    held = ref is not None and ref() is not None
    # (o's references: v.base, the local o, the call's argument: no other array's)
    if held and o is not v and type(o) is np.ndarray and sys.getrefcount(o) <= 3:
        HANDED.pop(id(o), None)
        held = False
    c = _copy(t)
    if c is not None:
        if not _same(c, v):
            _written(t, node.seq)
        elif held:
            node.copies += (c,)
            return
        else:  # (unheld, nobody can write it any more: a handout copies it again)
            _drop(t)
    if held:
        node.copies += (_keep(t),)


def check() -> None:
    """Before a backward: mark each tensor whose values changed since it kept a copy
    (:func:`read`) as written now; drop the copies of older versions (a counted change
    since: the versions tell) and those no node holds any more."""
    if not KEEPING:
        return
    for ref in list(KEEPING.values()):
        t = ref()
        if t is None:
            continue
        c = _copy(t)
        if c is None:
            _drop(t)
        elif not _same(c, t._value):
            _written(t, next_seq())


def adopt(value: np.ndarray, data: Any) -> np.ndarray:
    """What a tensor made from ``data`` (``from_numpy``, ``Variable``, ``nn.Parameter``)
    holds when ``value``, its values, is ``data``, the caller's array: a view of it, its
    memory registered (:func:`hand_out`); else ``value`` (a copy)."""
    if value is not data:
        return value
    hand_out(value)
    return value.view()
