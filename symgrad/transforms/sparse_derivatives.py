"""Sparse Jacobians and Hessians: ``sg.hessian(f, sparse=True)``, ``sg.jacfwd(f,
sparse=True)``, ``sg.jacrev(f, sparse=True)``, returned as ``scipy.sparse`` CSR matrices.

The pattern comes from the IR (:mod:`symgrad.passes.sparsity`: conservative, any
primitive without a rule makes its outputs depend on everything its operands do), the
columns (rows for ``jacrev``) are coloured (:mod:`symgrad.passes.colouring`,
Curtis-Powell-Reid), and one compiled kernel computes the products with the seed of
each colour, batched (``vmap``): Hessian-vector products for ``hessian``, Jacobian-vector
products for ``jacfwd``, vector-Jacobian products for ``jacrev``. A tridiagonal Hessian
thus costs 3 Hessian-vector products at any ``n``: O(n) time and memory.

The pattern and the colouring are computed once per traced graph (they depend on its
structure only, not on the numbers) and kept with it; a new shape, or a captured value
that makes the function trace again, computes them again.

    >>> import numpy as np, symgrad as sg
    >>> f = lambda x: np.sum(x[1:] * x[:-1])
    >>> sg.hessian(f, sparse=True, backend="numpy")(np.ones(4)).toarray()
    array([[0., 1., 0., 0.],
           [1., 0., 1., 0.],
           [0., 1., 0., 1.],
           [0., 0., 1., 0.]])
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.tracing import forward_mode
from .api import Jit, Transformed, grad, vjp
from .vectorize import vmap

if TYPE_CHECKING:
    import scipy.sparse as sp

KINDS = ("hessian", "jacfwd", "jacrev")


def _is_input(x: Any) -> bool:
    """Whether an argument becomes a kernel input (arrays and numbers; not bools)."""
    return isinstance(x, (np.ndarray, np.generic, float, int)) and \
        not isinstance(x, (bool, np.bool_))


class SparseDerivative:
    """``kind`` of ``fun`` with respect to argument ``argnum``, as a CSR matrix."""

    def __init__(self, fun: Callable, kind: str, argnums: Any, backend: str):
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}")
        if not isinstance(argnums, int) or isinstance(argnums, bool):
            raise ValueError(f"{kind}(..., sparse=True) differentiates one argument (an int "
                             f"argnums), got argnums={argnums!r}; use sparse=False for "
                             "several")
        self.fun, self.kind, self.argnum, self.backend = fun, kind, argnums, backend
        # scipy.sparse (0.1-0.6 s to import) is loaded by the first sparse derivative, not
        # by ``import symgrad``, as SymPy is by the bridge
        from ..passes import colouring, sparsity  # noqa: PLC0415
        self._colouring, self._sparsity = colouring, sparsity
        # the graph the pattern is read from: the gradient's (hessian) or the function's
        self._structure = grad(fun, argnums, backend="numpy") if kind == "hessian" else \
            Transformed(Jit(fun, backend="numpy"))
        self._products = Transformed(Jit(_named(self._batched, fun, kind), backend=backend))
        self._kept: dict[int, tuple[Any, sp.csr_matrix, np.ndarray, np.ndarray, np.ndarray]] \
            = {}
        functools.update_wrapper(self, fun, updated=())

    # -- the pattern ---------------------------------------------------------------
    def _check(self, args: tuple) -> int:
        """The position of the differentiated argument among the kernel inputs."""
        name = f"{self.kind}(..., sparse=True)"
        if not -len(args) <= self.argnum < len(args):
            raise ValueError(f"argnums {self.argnum} is out of range for {len(args)} "
                             "arguments")
        k = self.argnum % len(args)
        x = args[k]
        if not isinstance(x, np.ndarray) or x.ndim != 1:
            raise ValueError(f"{name} needs a 1-D array argument (it returns a "
                             f"scipy.sparse matrix), got shape {np.shape(x)}; flatten "
                             "the argument (x.ravel()) or use sparse=False")
        if any(isinstance(a, (list, tuple, dict)) for a in args[:k]):
            raise ValueError(f"{name}: pass the arguments before the differentiated one "
                             "as arrays or numbers, not containers")
        return sum(1 for a in args[:k] if _is_input(a))

    def _pattern(self, args: tuple) -> tuple:
        """``(pattern, colours, seeds, gather index)`` for the graph these arguments trace
        to (kept with it)."""
        wrt = self._check(args)
        graph = self._structure.graph(*args)
        kept = self._kept.get(id(graph))
        if kept is not None and kept[0] is graph:
            return kept[1:]
        x = graph.inputs[wrt]
        if x.shape != np.shape(args[self.argnum % len(args)]):
            raise ValueError(f"{self.kind}(..., sparse=True): could not find the "
                             "differentiated argument among the traced inputs")
        if self.kind == "hessian":
            out = graph.outputs[0]
            if len(graph.outputs) != 1 or out.shape != x.shape:
                raise ValueError("hessian(..., sparse=True) needs a function with one "
                                 "scalar output")
            pattern = self._sparsity.hessian_pattern(graph, wrt)
        else:
            if len(graph.outputs) != 1 or len(graph.outputs[0].shape) != 1:
                raise ValueError(f"{self.kind}(..., sparse=True) needs a function with one "
                                 "1-D array output (it returns a scipy.sparse matrix); got "
                                 f"outputs of shapes {[o.shape for o in graph.outputs]}")
            pattern = self._sparsity.jacobian_pattern(graph, wrt)
        pattern.sort_indices()
        colouring = self._colouring
        by = "rows" if self.kind == "jacrev" else "columns"
        if by == "rows":
            colours = colouring.row_colouring(pattern)
            colouring.check_colouring(pattern.T.tocsr(), colours)
        else:
            colours = colouring.column_colouring(pattern)
            colouring.check_colouring(pattern, colours)
        kept = (graph, pattern, colours, colouring.seeds(colours),
                colouring.gather_index(pattern, colours, by))
        if len(self._kept) >= 8:
            self._kept.pop(next(iter(self._kept)))
        self._kept[id(graph)] = kept
        return kept[1:]

    def pattern(self, *args: Any) -> sp.csr_matrix:
        """The sparsity pattern used at these arguments (boolean CSR)."""
        return self._pattern(args)[0]

    def colours(self, *args: Any) -> np.ndarray:
        """The colour of each column (each row for ``jacrev``): the number of products
        one call computes is ``colours.max() + 1``."""
        return self._pattern(args)[1]

    # -- the products --------------------------------------------------------------
    def _batched(self, seeds: Any, *args: Any) -> Any:
        """The product of the derivative with each row of ``seeds`` (traced)."""
        k = self.argnum % len(args)

        def partial(y: Any) -> Any:
            return self.fun(*args[:k], y, *args[k + 1:])

        x = args[k]
        if self.kind == "hessian":
            def one(v: Any) -> Any:
                return grad(lambda y: np.sum(grad(partial)(y) * v))(x)
        elif self.kind == "jacrev":
            def one(ct: Any) -> Any:
                return vjp(partial, x)[1](ct)[0]
        else:
            def one(t: Any) -> Any:  # J t by the double VJP: d/dct <J^T ct, t>
                out, pullback = vjp(partial, x)
                with forward_mode():
                    return grad(lambda ct: np.sum(pullback(ct)[0] * t))(
                        np.zeros(np.shape(out)))
        return vmap(one)(seeds)

    def __call__(self, *args: Any) -> sp.csr_matrix:
        pattern, colours, seeds, index = self._pattern(args)
        if colours.size == 0 or pattern.nnz == 0:  # nothing to compute
            return self._colouring.decompress(pattern, index, np.zeros(0))
        return self._colouring.decompress(pattern, index, self._products(seeds, *args))


def _named(f: Callable, fun: Callable, what: str) -> Callable:
    """``f`` named after ``fun`` (for the kernel), holding it as ``fun`` for
    :mod:`symgrad.captured`, which then guards what ``fun`` reads."""
    wrapper = functools.wraps(fun, updated=())(lambda *a: f(*a))
    wrapper.fun = fun  # type: ignore[attr-defined]
    return wrapper


__all__ = ["SparseDerivative"]
