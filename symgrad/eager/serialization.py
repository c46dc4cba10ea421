"""``torch.save`` and ``torch.load``: pickle, as PyTorch's (whose files are zip archives
of pickles; symgrad's are plain pickles and cannot be read by PyTorch, nor PyTorch's
by symgrad).

A tensor pickles as its values, dtype and ``requires_grad`` (a leaf again when
loaded: its graph is not saved, as in PyTorch); ``nn.Parameter`` stays a
Parameter; state dicts, optimizers' state dicts, whole modules and any picklable
structure of them work. ``torch.load`` unpickles, so load only files you trust
(PyTorch's ``weights_only=True`` is accepted and restricts loading to tensors,
numbers, strings and the containers of them).

    >>> import io, symgrad as torch
    >>> buffer = io.BytesIO()
    >>> torch.save({"w": torch.tensor([1.0, 2.0], requires_grad=True)}, buffer)
    >>> _ = buffer.seek(0)
    >>> torch.load(buffer)["w"]
    tensor([1., 2.], requires_grad=True)
"""

from __future__ import annotations

import os
import pickle
from typing import Any

#: what ``weights_only=True`` lets a file name: the rebuilders, numpy's arrays and
#: dtypes, and the containers state dicts use
_SAFE = {("symgrad.eager.extra_methods", "rebuild_tensor"), ("symgrad.eager.tensor", "Tensor"),
         ("symgrad.nn.parameter", "Parameter"),
         ("collections", "OrderedDict"), ("numpy", "dtype"), ("numpy", "ndarray"),
         ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
         ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
         ("builtins", "set"), ("builtins", "frozenset"), ("builtins", "slice"),
         ("_codecs", "encode")}  # protocol 2 writes bytes as _codecs.encode(str, "latin1")
_SAFE_PREFIXES = ("numpy.dtypes",)


class _WeightsOnly(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _SAFE or module.startswith(_SAFE_PREFIXES):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(
            f"Weights only load failed: {module}.{name} is not a tensor, number, string or "
            "container of them. Load with weights_only=False only if you trust the file.")


def save(obj: Any, f: Any, pickle_module: Any = pickle, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True) -> None:
    """Pickle ``obj`` into ``f`` (a path or a binary file object)."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as out:
            pickle_module.dump(obj, out, protocol=pickle_protocol)
    else:
        pickle_module.dump(obj, f, protocol=pickle_protocol)


def load(f: Any, map_location: Any = None, pickle_module: Any = None, *,
         weights_only: bool = False, mmap: Any = None, **pickle_load_args: Any) -> Any:
    """Unpickle what :func:`save` wrote; ``map_location`` is accepted (CPU only)."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as source:
            return load(source, map_location, pickle_module, weights_only=weights_only)
    if weights_only:
        return _WeightsOnly(f).load()
    return (pickle_module or pickle).load(f, **pickle_load_args)


__all__ = ["save", "load"]
