"""Views, ``.data`` and values changed behind a node's back: PyTorch's rules for them.

A result that shares its input's memory (``y[0:2]``, ``y.t()``, ``y.view(4)``,
``y[1]``) is a *view* of that input's root tensor (``_base``): it shares the
root's version counter (as ``detach()`` does), so changing either in place makes
a backward that saved the other raise "modified by an inplace operation", as in
PyTorch. A recorded in-place operation on a view changes its root as PyTorch's
``CopySlices`` does: the root takes a node that writes the view's new values
into its old ones (``root.flatten().at[positions].set(view)``), and the root's
other live views take a node reading them from the root's new node (PyTorch
regenerates a view's ``grad_fn`` the same way). The positions of a view's
elements in its root come from their memory offsets, so every strided view is
covered without a rule per method. An in-place operation with grad recording on
a view of a leaf that requires grad raises PyTorch's error.

A backward recomputes intermediate values from the leaves (:mod:`.backward`),
whereas PyTorch's backward reads the tensors themselves. The two differ when a
result's values were changed without its node knowing: through ``.data``
(``y.data.mul_(2)``; not counted by the version counter, as in PyTorch), through
``detach()``, under ``no_grad``, or by ``y.data = other``. :func:`stale` finds
such a result; the backward then takes its current values as PyTorch does, and
sends its cotangent through its node by a second backward (see
:func:`symgrad.eager.backward.run_backward`).

    >>> import symgrad as torch
    >>> x = torch.tensor([1., 2., 3.], requires_grad=True)
    >>> y = x * 2
    >>> _ = y[0:2].mul_(3)          # y is [6, 12, 6]; its grad_fn is CopySlices
    >>> (y * y).sum().backward()
    >>> x.grad
    tensor([ 72., 144.,  24.])
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from ..numpy_api.indexing import at
from . import grad_mode, replay
from .graph import next_seq
from .methods import named
from .torch_facts import torch_facts

OVERLAP_ERROR = (
    "unsupported operation: more than one element of the written-to tensor refers to a "
    "single memory location. Please clone() the tensor before performing the operation.")


def join(group_of: Any, t: Any) -> None:
    """Make ``t`` share ``group_of``'s version counter (the list of weak references both
    hold); dead references are dropped now and then, so a tensor viewed every step of a
    training loop keeps a short list."""
    group = group_of._aliases
    if group is None:
        group = group_of._aliases = [weakref.ref(group_of)]
    if len(group) >= 32 and not len(group) & (len(group) - 1):
        group[:] = [r for r in group if r() is not None]
    group.append(weakref.ref(t))
    t._aliases = group


def note(args: Any, result: Any) -> None:
    """If ``result`` shares memory with a Tensor among ``args``, make it a view of that
    Tensor's root."""
    v = result._value
    if not v.size:
        return
    for a in args:
        if hasattr(a, "_aliases") and a is not result and np.may_share_memory(a._value, v):
            result._base = a._base if a._base is not None else a
            join(a, result)
            if a._no_grad_view or (result._base._requires_grad
                                   and not grad_mode.is_grad_enabled()):
                result._no_grad_view = True
                if result._node is None:  # PyTorch's: a leaf that requires grad, whose
                    result._requires_grad = True  # backward fills no .grad (backward.py)
            return


def refuse_no_grad_view(t: Any) -> None:
    """PyTorch's error for an in-place change with grad enabled of ``t``, a view made under
    ``no_grad`` of a tensor that requires grad (or a view of such a view): its change
    would be neither recorded nor refused as a leaf's is."""
    if t._no_grad_view and grad_mode.is_grad_enabled():
        raise RuntimeError(
            "A view was created in no_grad mode and is being modified inplace "
            "with grad mode enabled. Given that this use case is ambiguous and error-prone, "
            "it is forbidden. You can clarify your code by moving both the view and the "
            "inplace either both inside the no_grad block (if you don't want the inplace to "
            "be tracked) or both outside (if you want the inplace to be tracked).")


def root_is_leaf(t: Any) -> bool:
    """``t`` is a view of a leaf that requires grad: its root, or another view of the root
    that is such a leaf and shares ``t``'s memory (``x = a.view(3, 4).requires_grad_()``:
    for PyTorch ``x[1]`` is a view of the leaf ``x``; its in-place change made x a result)."""
    base = t._base
    if base is None:
        return False
    if base._node is None and base._requires_grad:
        return True
    for ref in base._aliases or ():
        w = ref()
        if (w is not None and w is not t and w._node is None and w._requires_grad
                and np.may_share_memory(w._value, t._value)):
            return True
    return False


def _offsets(a: np.ndarray) -> np.ndarray:
    """The byte offset of each element of ``a`` from its first byte, in C order."""
    off = np.zeros((), dtype=np.int64)
    for d, (n, s) in enumerate(zip(a.shape, a.strides)):
        off = np.add.outer(off, np.arange(n, dtype=np.int64) * s) if d else (
            np.arange(n, dtype=np.int64) * s)
    return np.asarray(off).reshape(-1)


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def strided_places(x: Any, size: Any, stride: Any, storage_offset: int | None,
                   name: str) -> tuple[Any, np.ndarray, np.ndarray]:
    """``as_strided``'s geometry on ``x`` (its storage is its root's, which must be
    C-contiguous): (the root's value, the storage place of each of ``x``'s elements in C
    order, the storage place of each element of the strided view, in its ``size``).
    PyTorch's errors for bad sizes, strides and places outside the storage."""
    size, stride = [int(n) for n in size], [int(n) for n in stride]
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(stride)} strides "
                           f"for {len(size)} sizes")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"{name}: Negative strides are not supported at the moment, "
                           f"got strides: {stride}")
    root = x._base if x._base is not None else x
    r, a = root._value, x._value
    if not r.flags.c_contiguous:
        raise NotImplementedError(f"{name} of a tensor whose root is not C-contiguous "
                                  "(its storage order is not tracked): .contiguous() first")
    item = a.itemsize
    start = (_address(a) - _address(r)) // item if a.size else 0
    offset = start if storage_offset is None else int(storage_offset)
    places = np.full((), offset, np.int64)
    for n, st in zip(size, stride):
        places = np.add.outer(places, np.arange(n, dtype=np.int64) * st)
    if places.size and (places.min() < 0 or places.max() >= r.size):
        raise RuntimeError(f"setStorage: sizes {size}, strides {stride}, storage offset "
                           f"{offset}, and itemsize {item} requiring a storage size of "
                           f"{(int(places.max()) + 1) * item} are out of bounds for storage of "
                           f"size {r.size * item}")
    return r, _offsets(a) // item + start, places


def positions(view: Any) -> np.ndarray | None:
    """The flat (C order) index in its root of each element of ``view``, in ``view``'s
    shape; None when the root no longer holds that memory (``root.data = other``)."""
    root = view._base._value
    r, v = _offsets(root), _offsets(view._value) + (_address(view._value) - _address(root))
    order = np.argsort(r, kind="stable")
    k = np.searchsorted(r[order], v)
    if (k >= len(r)).any() or not (r[order[np.minimum(k, len(r) - 1)]] == v).all():
        return None
    return order[k].reshape(view._value.shape)


def after_inplace(t: Any, made: Any) -> None:
    """After a recorded in-place change of ``t`` (``t._node`` is new): write a view's new
    values into its root (``CopySlices``), and give the root's other live views nodes
    that read the root's new node. ``made(node, tensor)`` records that ``tensor`` now
    holds ``node``'s value."""
    root = t._base if t._base is not None else t
    if t._base is not None:
        where = positions(t)
        if where is None:
            return
        if len(np.unique(where)) != where.size:
            raise RuntimeError(OVERLAP_ERROR)
        # a root without history enters as data: a copy, so that later changes of the
        # root (through its other views) are not taken for changes of what this node read
        base = root if root._requires_grad else type(root)._make(root._value.copy())
        new = at(base.reshape(-1))[where.reshape(-1)].set(t.reshape(-1))
        new = named(new.reshape(root.shape), root, "CopySlices")
        root._node = new._node
        root._requires_grad = True
        made(root._node, root)
    for ref in list(root._aliases or ()):
        w = ref()
        if w is None or w is t or w._base is not root:
            continue
        where = positions(w)
        if where is None:
            continue
        new = root.reshape(-1)[where.reshape(-1)].reshape(w._value.shape)
        w._node, w._requires_grad = new._node, True
        made(w._node, w)


def stale(node: Any) -> Any:
    """The Tensor ``node`` made, if it is alive, still has ``node`` as its ``grad_fn``,
    and its values were changed since without a new node (through ``.data``, an alias,
    a view under ``no_grad``): a backward must read its values instead of recomputing
    them. None otherwise."""
    ref = node.made
    t = None if ref is None else ref[0]()
    if t is None or t._node is not node:
        return None
    if t._seen is not None and not np.array_equal(t._seen, t._value, equal_nan=True):
        t._untracked = -next_seq()  # changed through a numpy array: no version counted it
        t._seen = None
    return t if t._untracked else None


def expose(alias: Any) -> None:
    """``alias.numpy()`` (``y.detach().numpy()``, ``y.data.numpy()``) hands out y's memory:
    y and the other results sharing it keep a copy of their values, which :func:`stale`
    compares with theirs (numpy writes count no version), and so do the nodes whose kept
    values share it (:func:`.replay.handed_array`)."""
    origin = alias._data_of() if alias._data_of is not None else alias
    for ref in (origin._aliases if origin is not None and origin._aliases else ()):
        t = ref()
        if t is not None and t._node is not None and t._seen is None:
            t._seen = t._value.copy()
            replay.expose(t)
    if origin is not None and origin._node is not None and origin._seen is None:
        origin._seen = origin._value.copy()
        replay.expose(origin)
    replay.handed_array(alias._value)


def refuse_saved_output(node: Any, t: Any) -> None:
    """Raise if PyTorch's node would read ``t``'s changed values as its saved output
    (``exp``, ``tanh``, ...: ``saves_output`` in :mod:`.torch_facts`), which symgrad's
    derivative recomputes: a backward through one whose output was changed behind its
    back would read the changed output in PyTorch (``max()``, ``amax``: the elements
    equal to it share the gradient)."""
    facts = torch_facts(node.prim)
    if facts.saves_output or facts.saves_both:
        raise RuntimeError(
            f"the values of a {t.type()} {list(t.shape)}, output 0 of {node.name()}, were "
            "changed after it was computed without being recorded (through .data, "
            "detach(), under no_grad, or .data = ...); PyTorch's backward would use the "
            "changed values as that node's saved output, and symgrad recomputes them, so "
            "it refuses rather than return another gradient. Change the values by a "
            "recorded operation, or compute from a copy (.clone()).")
