"""Index tensors that PyTorch's indexing nodes save (``gather``, ``index_select``, ``x[i]``,
``scatter``, ``index_add``, ``take``, ``F.embedding``), watched between forward and backward.

symgrad's node holds the positions the forward computed from the indices; PyTorch's holds
the index tensor itself. So a change of the indices after the forward is caught here:
an in-place change (counted by the version) raises PyTorch's "modified by an inplace
operation" error, one through ``.data`` or ``numpy()`` (PyTorch's backward would use the
new indices) is refused. :func:`watch_copied` watches the tensors of which a node holds
a copy (their versions, and their writes through ``.data``). Nothing else depends on
this module but numpy.

    >>> import symgrad as torch
    >>> x = torch.tensor([1., 2., 3.], requires_grad=True)
    >>> i = torch.tensor([2, 0])
    >>> y = x[i]
    >>> _ = i.add_(0)
    >>> try:
    ...     y.sum().backward()
    ... except RuntimeError as e:
    ...     print(str(e)[:60])
    one of the variables needed for gradient computation has bee
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import exposed


def watch_indices(result: Any, *indices: Any) -> Any:
    """``result`` (of ``gather``, ``index_select``, ``x[i]``, ``scatter``, ...) was
    computed at positions taken from the index tensors among ``indices``, which PyTorch's
    node saves: its backward raises "modified by an inplace operation" when one was
    changed in place since, and reads the new indices after a change through ``.data``
    or numpy. symgrad's node holds the positions of the forward, so it watches each index
    tensor's version (:func:`.backward._check_versions` raises PyTorch's error) and keeps
    a copy of its values (an uncounted change is refused rather than differentiated at the
    old positions). Returns ``result``."""
    node = getattr(result, "_node", None)
    if node is None:
        return result
    for t in indices:
        if isinstance(t, tuple):
            watch_indices(result, *t)
        elif hasattr(t, "_version") and hasattr(t, "_value"):
            node.indices += ((t, t._version, t._value.copy()),)
    return result


def watch_copied(result: Any, position: int, *tensors: Any) -> Any:
    """``result``'s node holds, at input ``position``, an array computed from ``tensors``
    (a copy: a convolution's windows of its input, ``F.nll_loss``'s targets and weights
    as floats), where PyTorch's node saves the tensors themselves. So, as for a data input
    the node holds as it is: an in-place change of one (counted by its version) raises
    PyTorch's "modified by an inplace operation" error (:func:`.backward._check_versions`),
    and one through ``.data`` (uncounted; PyTorch's backward would read the new values) is
    refused (:func:`.replay.refuse_unmatched`: the node's input there is no view of the
    tensor) rather than differentiated with the old values; so is a write through numpy
    into a leaf or data tensor's memory handed out (:mod:`.exposed`). Returns ``result``."""
    node = getattr(result, "_node", None)
    if node is None:
        return result
    for t in tensors:
        if hasattr(t, "_version") and hasattr(t, "_value"):
            node.versions += ((t, t._version),)
            node.reads += ((position, t, t._version),)
            if exposed.HANDED and t._node is None:
                exposed.read(t, node)
    return result


def saved_by_indexing(index: Any) -> list[Any]:
    """The index tensors of ``x[index]`` that PyTorch's indexing node saves: all but a 0-d
    int64 one (an integer, read once)."""
    parts = index if isinstance(index, tuple) else (index,)
    return [p for p in parts if hasattr(p, "_version") and hasattr(p, "_value")
            and not (p._value.ndim == 0 and p._value.dtype == np.int64)]


def check_indices(node: Any) -> None:
    """Raise if an index tensor of ``node`` (:func:`watch_indices`) changed since the
    forward: PyTorch's error for a counted change, a refusal for one through ``.data``
    or numpy (PyTorch would use the new indices; symgrad's positions are the old ones).
    Versions first: a node may watch a tensor sharing the memory of one it was given (a
    reshaped copy of the indices), which sees an in-place change as uncounted."""
    for t, version, _ in node.indices:
        if t._version != version:
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by "
                f"an inplace operation: [{t.type()} {list(t.shape)}], the indices of "
                f"{node.name()}, is at version {t._version}; expected version {version} "
                "instead. Hint: change it after backward(), or index with a copy (.clone()).")
    for t, _, values in node.indices:
        if t._value.shape != values.shape or not np.array_equal(t._value, values):
            raise RuntimeError(
                f"the indices of {node.name()} ([{t.type()} {list(t.shape)}]) were changed "
                "after the forward without a version (through .data, numpy() or .data = "
                "...): PyTorch's backward would use the new indices, and symgrad's the "
                "positions the forward used, so it refuses rather than return another "
                "gradient. Change the indices after backward(), or index with a copy "
                "(.clone()).")
