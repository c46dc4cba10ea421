"""PyTorch's linear algebra Tensor methods: batched products (``bmm``, ``baddbmm``,
``addbmm``, ``addmv``, ``addr``), ``ger``, ``inner``, ``vdot``,
``kron`` and ``dist``. A mixin of :class:`~symgrad.eager.tensor.Tensor` (the older names
of :mod:`torch.linalg`, ``x.det()``, are in :mod:`.linalg_names`); the functions of the
same names (``torch.bmm``) are in :mod:`.shape_functions`.

Each is a composite of ops with their own gradients, so its gradient and double backward
come from those.

    >>> import symgrad as torch
    >>> b = torch.ones(2, 2, 3)
    >>> torch.bmm(b, b.mT).shape
    torch.Size([2, 2, 2])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..numpy_api.traced_array import ArrayMethods
from ..prims.linalg import matmul_p
from .fastpath import apply_f64
from .method_args import named, same_dtype


def _scaled_sum(self: Any, product: Any, beta: Any, alpha: Any, name: str,
                factors: tuple[Any, Any]) -> Any:
    """``beta * self + alpha * product`` (of ``factors``); ``self`` is not read for
    ``beta=0`` (its NaNs do not reach the result), as PyTorch's."""
    same_dtype(name.removesuffix("Backward0").lower(), self, product)
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return named(product, self, name, (self, *factors))
    return named((self if beta == 1 else self * beta) + product, self, name, (self, *factors))


def _check_ndim(x: Any, n: int, what: str) -> None:
    if x.ndim != n:
        raise RuntimeError(f"{what} must be a {n}D tensor, got {x.ndim}-D")




#: PyTorch's node of ``a @ b`` for ``(a.ndim, b.ndim)`` up to 2 (its matmul calls ``dot``,
#: ``mv``, ``unsqueeze(0).mm(b).squeeze_(0)`` or ``mm``)
_PRODUCT_NAMES = {(1, 1): "DotBackward0", (2, 1): "MvBackward0", (1, 2): "SqueezeBackward4",
                  (2, 2): "MmBackward0"}


def _product_name(a: Any, b: Any) -> str:
    """PyTorch's name of the node of ``a @ b`` (a name only: symgrad's is one product).
    Of stacks, that of the reshape that ends PyTorch's matmul: ``CloneBackward0`` of a
    matrix (or a 3-D stack of one matrix, by a larger 3-D stack) by a stack when the
    matrix requires grad (``(b.mT @ a.mT).mT``, copied), else ``UnsafeViewBackward0``."""
    x, y = a._value, getattr(b, "_value", None)
    n, m = x.ndim, np.ndim(b) if y is None else y.ndim
    if n <= 2 and m <= 2:
        return _PRODUCT_NAMES.get((n, m), "MmBackward0")
    matrix = n == 2 or n == m == 3 and x.shape[0] == 1 and np.shape(b)[0] != 1
    return "CloneBackward0" if matrix and m >= 3 and a._requires_grad else "UnsafeViewBackward0"


class LinalgMethods:
    """See the module docstring."""

    __slots__ = ()

    # -- products ---------------------------------------------------------------------
    def __matmul__(self, o: Any) -> Any:
        """``self @ o``: two matrices of float64 (or float32) Tensors, or two stacks of them
        with the same batch axes (attention's (N, H, L, D) products), go to the fast path
        (:func:`.fastpath.apply_f64`) without numpy's dispatch (``array_function``, which
        reaches the same primitive, node and value through six calls more: 12.5 us
        instead of 5.7 for a 4x3 by 3x5 product); anything else, numpy's rules."""
        a, b = self._value, getattr(o, "_value", None)
        if b is not None and a.dtype != b.dtype:
            same_dtype("matmul", self, o)
        if a.dtype == np.bool_ and b is not None:  # (numpy's rules counted them in float64)
            raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool': "
                                      "convert the masks first (a.float() @ b.float())")
        if (type(b) is np.ndarray and a.ndim == b.ndim >= 2 and a.shape[-1] == b.shape[-2]
                and a.shape[:-2] == b.shape[:-2]):  # (matrices, or stacks of one batch)
            result = apply_f64(matmul_p, (self, o), {}, self._make)
            if result is not None:
                return result if a.ndim == 2 else named(result, self, "UnsafeViewBackward0")
        return named(ArrayMethods.__matmul__(self, o), self, _product_name(self, o))

    def bmm(self, mat2: Any) -> Any:
        _check_ndim(self, 3, "batch1")
        _check_ndim(mat2, 3, "batch2")
        if self.shape[0] != mat2.shape[0] or self.shape[2] != mat2.shape[1]:
            raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                               f"[{self.shape[0]}, {self.shape[2]}] but got: "
                               f"[{mat2.shape[0]}, {mat2.shape[1]}].")
        return named(self @ mat2, self, "BmmBackward0")

    def baddbmm(self, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
        return _scaled_sum(self, batch1.bmm(batch2), beta, alpha, "BaddbmmBackward0",
                           (batch1, batch2))

    def addbmm(self, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
        return _scaled_sum(self, batch1.bmm(batch2).sum(0), beta, alpha, "AddbmmBackward0",
                           (batch1, batch2))

    def addmv(self, mat: Any, vec: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
        return _scaled_sum(self, mat.mv(vec), beta, alpha, "AddmvBackward0",
                           (mat, vec))

    def addr(self, vec1: Any, vec2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
        _check_ndim(vec1, 1, "vec1")
        _check_ndim(vec2, 1, "vec2")
        return _scaled_sum(self, vec1.outer(vec2), beta, alpha, "AddrBackward0",
                           (vec1, vec2))

    def _add_product_(self, product: Any, beta: Any, alpha: Any) -> Any:
        """``self = beta * self + alpha * product`` in place (``self`` not read for
        ``beta=0``); the product is recorded before, so that its operands' gradients are
        kept when ``self`` does not require grad."""
        scaled = product * alpha if alpha != 1 else product
        if beta == 0:
            return self._inplace(lambda a, p: p, scaled)
        return self._inplace(lambda a, p: (a * beta if beta != 1 else a) + p, scaled)

    def baddbmm_(self, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
        return self._add_product_(batch1.bmm(batch2), beta, alpha)

    def addbmm_(self, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
        return self._add_product_(batch1.bmm(batch2).sum(0), beta, alpha)

    def addmv_(self, mat: Any, vec: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
        return self._add_product_(mat.mv(vec), beta, alpha)

    def addr_(self, vec1: Any, vec2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
        _check_ndim(vec1, 1, "vec1")
        _check_ndim(vec2, 1, "vec2")
        return self._add_product_(vec1.outer(vec2), beta, alpha)

    def ger(self, vec2: Any) -> Any:
        return self.outer(vec2)

    def inner(self, other: Any) -> Any:
        """The sums of products over the last dim (a product with a 0-d operand)."""
        if self.ndim == 0 or other.ndim == 0:
            return self * other
        same_dtype("inner", self, other)
        return named(np.inner(self, other), self, "InnerBackward0")

    def vdot(self, other: Any) -> Any:
        if self.ndim != 1 or other.ndim != 1:
            raise RuntimeError(f"1D tensors expected, but got {self.ndim}D and {other.ndim}D "
                               "tensors")
        return self.dot(other)

    def kron(self, other: Any) -> Any:
        return named(np.kron(self, other), self, "KronBackward0")

    def dist(self, other: Any, p: Any = 2) -> Any:
        """``norm(self - other, p)``, gradient 0 at a zero distance (PyTorch's)."""
        return named((self - other).norm(p), self, "DistBackward0")
