"""``torch.func``'s derivative transforms over the eager autograd: ``grad``,
``grad_and_value``, ``vjp``, ``jvp``, ``linearize``, ``jacrev``, ``jacfwd``, ``hessian``.

Each call is a level of :mod:`.levels`: the differentiated arguments (pytrees of
Tensors: tuples, lists, dicts) enter as private leaves, the function runs, and
the derivatives are :func:`symgrad.autograd.grad` calls (recorded when an outer
level needs them, so the transforms nest: ``grad(grad(f))``, ``jacrev(grad(f))``,
``vmap(grad(f))``). ``jvp`` and ``jacfwd`` are forward mode by the double-vjp trick,
exact: the VJP ``u -> uᵀJ`` taken with a cotangent ``u`` that requires grad is
linear in ``u``, and its VJP in ``u`` with the tangent ``v`` is ``J v``. ``jacrev``
takes one VJP per output element, ``jacfwd`` one JVP per input element (loops, not
batched). ``hessian`` is ``jacfwd(jacrev(f))``, as PyTorch's. Results require grad
only when they depend on a tensor the caller can differentiate (see :mod:`.levels`).

    >>> import symgrad as torch
    >>> from symgrad.func import grad
    >>> x = torch.tensor([1., 2.])
    >>> grad(lambda x: (x ** 3).sum())(x)
    tensor([ 3., 12.])
    >>> grad(lambda x: grad(lambda y: (y ** 3).sum())(x).sum())(x)
    tensor([ 6., 12.])
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ..eager.functions import stack
from ..eager.grad_mode import enable_grad
from ..eager.tensor import Tensor
from . import pytree
from .levels import Level, depends_on

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian"]

_JVP_OUTPUTS = ("jvp(f, primals, tangents): expected f(*args) to return only tensors, got "
                "unsupported type {}")


def _argnums(argnums: Any, n: int) -> tuple[int, ...]:
    if isinstance(argnums, int) and not isinstance(argnums, bool):
        nums: tuple[Any, ...] = (argnums,)
    elif isinstance(argnums, tuple):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        nums = argnums
    else:
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    out = []
    for a in nums:
        if not isinstance(a, int):
            raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
        if not -n <= a < n:
            raise RuntimeError(f"Got argnum={a}, but only {n} positional inputs")
        out.append(a % n)
    if len(set(out)) != len(out):
        raise RuntimeError(f"argnums must be unique, got {argnums}")
    return tuple(out)


class _Inputs:
    """The differentiated arguments of one call, entered into ``level``: their leaves
    (flat), and how to rebuild per-argument trees of results."""

    def __init__(self, level: Level, args: tuple, argnums: Any):
        self.single = isinstance(argnums, int)
        self.nums = _argnums(argnums, len(args))
        self.args = list(args)
        self.specs, self.leaves = [], []
        for i in self.nums:
            leaves, spec = pytree.flatten(args[i])
            entered = [level.enter(t) for t in leaves]
            self.args[i] = pytree.unflatten(entered, spec)
            self.specs.append(spec)
            self.leaves += entered

    def rebuild(self, flat: list[Any]) -> Any:
        """Per-input results (one per leaf, in order) as the arguments' trees."""
        trees, k = [], 0
        for spec in self.specs:
            n = pytree.leaves_count(spec)
            trees.append(pytree.unflatten(flat[k:k + n], spec))
            k += n
        return trees[0] if self.single else tuple(trees)


def _split_aux(out: Any, has_aux: bool, fn: str) -> tuple[Any, Any]:
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{fn}: output of function f should be a tuple: (output, aux) if "
                           "has_aux is True")
    return out


def _unwrap_tree(tree: Any, level: Level) -> Any:
    """``aux`` handed back: a pytree of Tensors only (None too is refused, as PyTorch's)."""
    leaves, spec = pytree.flatten(tree)
    if pytree.has_none(spec):
        raise RuntimeError("Expected tensors, got unsupported type <class 'NoneType'>")
    for t in leaves:
        if not isinstance(t, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(t)}")
    return pytree.unflatten([level.unwrap(t) for t in leaves], spec)


def _run(func: Callable, args: list, kwargs: dict) -> Any:
    with enable_grad():
        return func(*args, **kwargs)


def grad_and_value(func: Callable, argnums: int | tuple[int, ...] = 0,
                   has_aux: bool = False) -> Callable:
    """``(gradient, value)`` of a function returning a scalar Tensor (``(gradient,
    (value, aux))`` with ``has_aux``); the gradient is shaped as the argument
    (``argnums`` an int) or a tuple over ``argnums``."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with Level() as level:
            inputs = _Inputs(level, args, argnums)
            out, aux = _split_aux(_run(func, inputs.args, kwargs), has_aux,
                                  "grad_and_value(f)(*args)")
            if not isinstance(out, Tensor):
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"Tensor, got {type(out)}")
            if out.dim() != 0:
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"scalar Tensor, got tensor with {out.dim()} dims. Maybe you "
                                   "wanted to use the vjp or jacrev APIs instead?")
            g = inputs.rebuild(level.grads([out], inputs.leaves, None))
            value = level.unwrap(out)
            if has_aux:
                return g, (value, _unwrap_tree(aux, level))
            return g, value

    return wrapper


def grad(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable:
    """The gradient of a function returning a scalar Tensor (``(gradient, aux)`` with
    ``has_aux``): ``grad_and_value`` without the value."""
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, value = inner(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def _tensor_leaves(tree: Any, message: str) -> tuple[list[Any], Any]:
    leaves, spec = pytree.flatten(tree)
    for t in leaves:
        if not isinstance(t, Tensor):
            raise RuntimeError(message.format(type(t)))
    return leaves, spec


def vjp(func: Callable, *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """``(func(*primals), vjp_fn)`` (and ``aux``): ``vjp_fn(cotangents)`` is the tuple of
    ``cotangentsᵀ J`` per primal; it may be called many times."""
    with Level() as level:
        inputs = _Inputs(level, primals, tuple(range(len(primals))) or 0)
        out, aux = _split_aux(_run(func, inputs.args, {}), has_aux, "vjp(f, *primals)")
        outs, out_spec = _tensor_leaves(out, "vjp(f, *primals): expected f(*primals) to "
                                             "return only tensors, got unsupported type {}")
        value = pytree.unflatten([level.unwrap(t) for t in outs], out_spec)
        aux = _unwrap_tree(aux, level) if has_aux else None

    def vjp_fn(cotangents: Any) -> tuple[Any, ...]:
        cts, spec = pytree.flatten(cotangents)
        if spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as "
                               f"pytree structure of outputs to the function. cotangents: "
                               f"{pytree.describe(spec)}, primal output: "
                               f"{pytree.describe(out_spec)}")
        with Level() as outer:  # (a level of its own: the primals' leaves are finished)
            found = outer.grads(outs, inputs.leaves, cts)
        trees = inputs.rebuild(found)
        return trees if isinstance(trees, tuple) else (trees,)

    return (value, vjp_fn, aux) if has_aux else (value, vjp_fn)


def _linear_in_tangents(level: Level, outs: list[Any], xs: list[Any]) -> tuple[list, list]:
    """(private cotangents ``u``, the VJP ``uᵀJ`` per input, recorded): the double-vjp
    trick's first half; :meth:`Level.grads` of it in ``u`` with ``v`` is ``J v``."""
    us = [level.private(Tensor._make(np.zeros_like(o._value))) for o in outs]
    back = level.grads(outs, xs, us, keep_graph=True)
    return us, back


def jvp(func: Callable, primals: Any, tangents: Any, *, strict: bool = False,
        has_aux: bool = False) -> tuple[Any, ...]:
    """``(func(*primals), J tangents)`` (and ``aux``), by the double-vjp trick (exact:
    the VJP is linear in its cotangent)."""
    for name, v in (("primals", primals), ("tangents", tangents)):
        if not isinstance(v, tuple):
            raise RuntimeError(f"jvp(f, primals, tangents): Expected {name} to be a tuple. "
                               "E.g. it should be valid to call f(*primals).")
    if pytree.flatten(primals)[1] != pytree.flatten(tangents)[1]:
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to "
                           "have the same python structure.")
    with Level() as level:
        inputs = _Inputs(level, primals, tuple(range(len(primals))) or 0)
        vs = pytree.flatten(tangents)[0]
        for x, v in zip(inputs.leaves, vs):
            if tuple(v.shape) != tuple(x.shape):
                raise RuntimeError("Trying to set a forward gradient that has a different "
                                   "size than that of the original Tensor, this is not "
                                   f"supported. Tensor is of size {list(x.shape)} while the "
                                   f"given forward gradient is of size {list(v.shape)}.")
        out, aux = _split_aux(_run(func, inputs.args, {}), has_aux,
                              "jvp(f, primals, tangents)")
        outs, spec = _tensor_leaves(out, _JVP_OUTPUTS)
        if strict and not all(depends_on(o, inputs.leaves) for o in outs):
            raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is "
                               "independent of the inputs. This is not allowed with "
                               "strict=True.")
        us, back = _linear_in_tangents(level, outs, inputs.leaves)
        tangent_out = level.grads(back, us, vs)
        result = (pytree.unflatten([level.unwrap(t) for t in outs], spec),
                  pytree.unflatten(tangent_out, spec))
        return (*result, _unwrap_tree(aux, level)) if has_aux else result


def linearize(func: Callable, *primals: Any) -> tuple[Any, Callable]:
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is ``J tangents`` at the
    primals, for many tangents (the double-vjp trick's first half is kept)."""
    with Level() as level:
        inputs = _Inputs(level, primals, tuple(range(len(primals))) or 0)
        outs, spec = _tensor_leaves(_run(func, inputs.args, {}), _JVP_OUTPUTS)
        us, back = _linear_in_tangents(level, outs, inputs.leaves)
        value = pytree.unflatten([level.unwrap(t) for t in outs], spec)

    def jvp_fn(*tangents: Any) -> Any:
        vs, tspec = pytree.flatten(tangents)
        if tspec != pytree.flatten(primals)[1]:
            raise RuntimeError("Expected the tangents to have the same pytree structure as "
                               f"the primals {pytree.describe(pytree.flatten(primals)[1])}, "
                               f"got {pytree.describe(tspec)}")
        with Level() as outer:  # (a level of its own: the primals' leaves are finished)
            return pytree.unflatten(outer.grads(back, us, vs), spec)

    return value, jvp_fn


def _block(cols: list[Any], out: Any, x: Any, along_end: bool) -> Any:
    """One Jacobian block ``out.shape + x.shape`` from rows (one per output element)
    or columns (one per input element, ``along_end``)."""
    shape = (*out.shape, *x.shape)
    if not cols:
        return Tensor._make(np.zeros(shape, dtype=x._value.dtype))
    with enable_grad():
        return stack(cols, dim=len(out.shape) if along_end else 0).reshape(shape)


def _jac_tree(blocks: dict[tuple[int, int], Any], outs: list, out_spec: Any,
              inputs: _Inputs) -> Any:
    per_out = [inputs.rebuild([blocks[i, j] for j in range(len(inputs.leaves))])
               for i in range(len(outs))]
    return pytree.unflatten(per_out, out_spec)


def _basis(t: Any, k: int) -> Tensor:
    flat = t._value.reshape(-1) * 0.0
    flat[k] = 1.0
    return Tensor._make(flat.reshape(t.shape))


def jacrev(func: Callable, argnums: int | tuple[int, ...] = 0, *, has_aux: bool = False,
           chunk_size: int | None = None, _preallocate_and_copy: bool = False) -> Callable:
    """The Jacobian by reverse mode, one VJP per output element: for each output a block
    ``out.shape + x.shape`` per argument (a tuple over ``argnums`` when it is a tuple);
    ``(jacobian, aux)`` with ``has_aux``. ``chunk_size`` is accepted (the rows are
    computed one by one anyway)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with Level() as level:
            inputs = _Inputs(level, args, argnums)
            out, aux = _split_aux(_run(func, inputs.args, kwargs), has_aux,
                                  "jacrev(f, ...)(*args)")
            outs, spec = _tensor_leaves(out, "vjp(f, *primals): expected f(*primals) to "
                                             "return only tensors, got unsupported type {}")
            blocks = {}
            for i, o in enumerate(outs):
                rows = [level.grads([o], inputs.leaves, [_basis(o, k)])
                        for k in range(o.numel())]
                for j, x in enumerate(inputs.leaves):
                    blocks[i, j] = level.unwrap(_block([r[j] for r in rows], o, x, False))
            jac = _jac_tree(blocks, outs, spec, inputs)
            return (jac, _unwrap_tree(aux, level)) if has_aux else jac

    return wrapper


def jacfwd(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable:
    """The Jacobian by forward mode (the double-vjp trick), one JVP per input element;
    the same layout as :func:`jacrev`."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with Level() as level:
            inputs = _Inputs(level, args, argnums)
            out, aux = _split_aux(_run(func, inputs.args, kwargs), has_aux,
                                  "jvp(f, primals, tangents)")
            outs, spec = _tensor_leaves(out, _JVP_OUTPUTS)
            us, back = _linear_in_tangents(level, outs, inputs.leaves)
            zeros = [Tensor._make(np.zeros_like(x._value)) for x in inputs.leaves]
            blocks = {}
            for j, x in enumerate(inputs.leaves):
                cols = []
                for k in range(x.numel()):
                    vs = list(zeros)
                    vs[j] = _basis(x, k)
                    cols.append(level.grads(back, us, vs))
                for i, o in enumerate(outs):
                    blocks[i, j] = level.unwrap(_block([c[i] for c in cols], o, x, True))
            jac = _jac_tree(blocks, outs, spec, inputs)
            return (jac, _unwrap_tree(aux, level)) if has_aux else jac

    return wrapper


def hessian(func: Callable, argnums: int | tuple[int, ...] = 0) -> Callable:
    """``jacfwd(jacrev(func, argnums), argnums)``, as PyTorch's."""
    return jacfwd(jacrev(func, argnums), argnums)
