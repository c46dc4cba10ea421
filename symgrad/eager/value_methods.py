"""A Tensor's values as Python and numpy see them: ``numpy()``, ``item()``, ``tolist()``,
``float(x)``, ``int(x)``, ``operator.index(x)``, ``bool(x)``, ``format``, ``repr`` and
iteration, with PyTorch's refusals (``numpy()`` of a tensor that requires grad, ``bool``
of several values, ``index`` of a float). :class:`ValueMethods` is a base of
:class:`~symgrad.eager.tensor.Tensor`, first among its bases, so these methods are
found before numpy's (:class:`~symgrad.numpy_api.traced_array.ArrayMethods`).
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from . import dtypes as dt
from . import exposed, views
from .printing import format_tensor


class ValueMethods:
    """Conversions and printing of a Tensor's values (see the module docstring)."""

    __slots__ = ()

    # -- values ------------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        self._check_numpy()
        if self._aliases is not None or self._data_of is not None:
            views.expose(self)  # writes into the array are seen by a backward
        return self._handed()

    def _handed(self) -> np.ndarray:
        """The values handed to numpy, whose writes count no version: the leaves and
        data sharing them keep a copy, compared at backward (:mod:`.exposed`)."""
        if type(self._value) is not np.ndarray:  # (a ufunc's numpy scalar, x.isnan() of a
            self._value = np.asarray(self._value)  # 0-d x: a 0-d array to share, as PyTorch's)
        origin = self._data_of() if self._data_of is not None else None
        sharing = [self, origin]
        for t in (self, origin):
            if t is not None and t._aliases:
                sharing += [r() for r in t._aliases]
        exposed.handed_after(sharing)
        return exposed.shared(self)

    def _check_numpy(self) -> None:
        if self.dtype is dt.bfloat16:  # PyTorch's error: numpy has no bfloat16
            raise TypeError("Got unsupported ScalarType BFloat16")
        if self._requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                               "Use tensor.detach().numpy() instead.")

    def _held_value(self) -> np.ndarray:
        return self._value

    @classmethod
    def _holding(cls, value: np.ndarray) -> Any:
        return cls._make(value)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        # as PyTorch's: numpy would drop the graph (np.array([x, 2 * x]) of Tensors that
        # require grad would give values whose gradient is silently lost)
        if dtype is not None or copy:  # (a copy: the memory is not handed out)
            self._check_numpy()
            # numpy 2 passes copy=True for np.array(t) and trusts the copy: the values as
            # they are now, not the tensor's memory, as np.array of a PyTorch tensor
            return self._value.astype(dtype) if dtype is not None else self._value.copy()
        return self.numpy()

    def item(self) -> Any:
        if self._value.size != 1:
            raise RuntimeError(f"a Tensor with {self._value.size} elements cannot be "
                               "converted to Scalar")
        return self._value.reshape(()).item()

    def tolist(self) -> Any:
        return self._value.tolist()

    def __float__(self) -> float:
        return builtins.float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self._value.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self.item())

    def __bool__(self) -> bool:
        if self._value.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with more than one value is ambiguous "
                               f"(this one has {self._value.size}); use .any() or .all()")
        return builtins.bool(self.item())

    def __format__(self, spec: str) -> str:
        return format(self.item(), spec) if self.ndim == 0 else repr(self)

    def __repr__(self) -> str:
        suffixes = []
        dtype = self.dtype
        if dtype not in (dt.DEFAULT, dt.complex_of(dt.DEFAULT), dt.int64, dt.bool):
            suffixes.append(f"dtype={dtype!r}")
        if self._node is not None:
            suffixes.append(f"grad_fn=<{self._node.name()}>")
        elif self._requires_grad:
            suffixes.append("requires_grad=True")
        value = self._value  # (bfloat16 prints as its float32 values, as PyTorch's)
        return format_tensor(value.astype(np.float32) if dtype is dt.bfloat16 else value,
                             suffixes)

    __str__ = __repr__

    def __iter__(self) -> Any:
        return (self[i] for i in range(len(self)))
