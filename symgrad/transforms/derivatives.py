"""Forward mode, Jacobians and Hessians, composed from ``vjp``, ``grad`` and ``vmap``.

Every function here builds a traced function out of the transformations that
already exist and compiles it with ``jit``, so the result is one kernel whose
graph the passes, fusion and codegen see whole:

- ``jvp`` (forward mode) by the *double-VJP trick*: the pullback
  ``ct -> J^T ct`` is linear in ``ct``, so the gradient in ``ct`` of
  ``<J^T ct, t>`` is ``J t``, at any ``ct`` (zeros);
- ``jacrev``: the pullback mapped (``vmap``) over the basis of the output;
  ``jacfwd``: the pushforward mapped over the basis of the input;
- ``hessian``: ``jacfwd(jacrev(f))``, forward over reverse;
- ``hvp``: the gradient of ``<grad f(x), v>``, without forming the Hessian.

    >>> import numpy as np, symgrad as sg
    >>> sg.jvp(np.sin, (np.array([0.0, 1.0]),), (np.array([1.0, 2.0]),))[1]
    array([1.        , 1.08060461])
    >>> sg.hessian(lambda x: np.sum(x ** 3))(np.array([1.0, 2.0]))
    array([[ 6.,  0.],
           [ 0., 12.]])
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..core.pytree import flatten, unflatten
from ..core.tracing import current_trace, forward_mode, shape_of
from .api import Jit, Transformed, grad, vjp
from .captured import world
from .signature import LinearizedJit
from .sparse_derivatives import SparseDerivative
from .vectorize import vmap

#: compiled helpers kept per (function, options): a jvp or hvp called in a loop traces once
_KEPT: dict[tuple, tuple[Any, Transformed]] = {}
_KEPT_LIMIT = 64


def _kept(kind: str, fun: Callable, build: Callable[[], Callable], *options: Any) -> Transformed:
    key = (kind, id(fun), *options)
    entry = _KEPT.get(key)
    if entry is None or entry[0] is not fun:
        if len(_KEPT) >= _KEPT_LIMIT:
            _KEPT.pop(next(iter(_KEPT)))
        entry = _KEPT[key] = (fun, Transformed(Jit(build(), backend=options[-1])))
    return entry[1]


def _vdot(a: Any, b: Any) -> Any:
    """The sum of the products of the leaves of two pytrees of one structure; its real
    part for complex leaves: ``Re <J^T ct, t> = Re <ct, J t>``, whose gradient in ``ct``
    is ``J t`` under JAX's convention (README, "Complex numbers")."""
    total = 0.0
    for x, y in zip(flatten(a)[0], flatten(b)[0], strict=True):
        total = total + np.sum(np.real(x * y))
    return total


def _float_dtype(x: Any) -> Any:
    """The dtype of a tangent of ``x`` (a cotangent has its primal's dtype): float32 for a
    float32 ``x``, complex for a complex one, else float64."""
    dtype = getattr(x, "dtype", None)
    if dtype is not None and np.dtype(dtype).kind == "c":
        return np.dtype(dtype).type
    return np.float32 if dtype == np.float32 else np.float64


def _zeros_like(x: Any) -> np.ndarray:
    return np.zeros(tuple(shape_of(x)), dtype=_float_dtype(x))


# ---------------------------------------------------------------------------
# forward mode


def _pushforward(fun: Callable, primals: Sequence[Any], tangents: Sequence[Any]) -> tuple:
    """``(fun(*primals), J tangents)``, recorded in the current trace (double VJP)."""
    out, pullback = vjp(fun, *primals)
    leaves, tree = flatten(out)

    def inner(*cts: Any) -> Any:
        grads = pullback(unflatten(tree, list(cts)))
        return _vdot(grads, tuple(tangents))

    zeros = [_zeros_like(leaf) for leaf in leaves]
    with forward_mode():  # a custom_vjp's bwd may not be differentiated in ct here
        jt = grad(inner, argnums=tuple(range(len(zeros))))(*zeros)
    return out, unflatten(tree, list(jt))


def jvp(fun: Callable, primals: Sequence[Any], tangents: Sequence[Any],
        backend: str = "numba") -> tuple[Any, Any]:
    """``(fun(*primals), J·tangents)``: the Jacobian-vector product, forward mode.

    ``primals`` and ``tangents`` are tuples with one entry per argument of ``fun``
    (arrays, numbers or pytrees of them, each tangent of its primal's structure).
    """
    primals, tangents = tuple(primals), tuple(tangents)
    _check_tangents(primals, tangents)
    n = len(primals)
    kernel = _kept("jvp", fun, lambda: _push(fun, n), n, backend)
    return kernel(*primals, *tangents)


def _check_tangents(primals: tuple, tangents: tuple) -> None:
    if len(primals) != len(tangents):
        raise ValueError(f"jvp: {len(primals)} primals but {len(tangents)} tangents; give one "
                         "tangent per primal")
    for p, t in zip(primals, tangents):
        if flatten(p)[1] != flatten(t)[1] or any(
                np.shape(a) != np.shape(b) for a, b in zip(flatten(p)[0], flatten(t)[0])):
            raise ValueError("jvp: each tangent must have its primal's structure and shapes")


def _push(fun: Callable, n: int) -> Callable:
    """The function ``(*primals, *tangents) -> (fun(*primals), J·tangents)`` of ``n``
    primals, to be compiled with ``jit``."""
    return _named(lambda *xs: _pushforward(fun, xs[:n], xs[n:]), fun, "jvp")


def _copy(tree: Any) -> Any:
    """A pytree with every array leaf copied (and its containers rebuilt)."""
    leaves, structure = flatten(tree)
    return unflatten(structure, [np.array(a, subok=True) if isinstance(a, np.ndarray) else a
                                 for a in leaves])


def linearize(fun: Callable, *primals: Any, backend: str = "numba") -> tuple[Any, Callable]:
    """``(fun(*primals), f_jvp)`` where ``f_jvp(*tangents)`` is ``J·tangents`` at these
    primals (copied now, every array of a pytree too, so later changes to them do not
    move the point). Each ``f_jvp`` call runs one compiled kernel, which computes the
    primal again alongside the tangent (forward mode by the double VJP keeps no
    residuals between calls). As ``sg.vjp``'s pullback, ``f_jvp`` belongs to the world
    of this call: it raises once a value ``fun`` reads from outside its arguments has
    changed."""
    primals = tuple(_copy(p) for p in primals)
    out = Transformed(LinearizedJit(fun, backend=backend))(*primals)  # JAX's primal
    n = len(primals)
    guards = world(fun, primals) if current_trace() is None else None
    if guards is not None and guards.unguarded is not None:
        # reads that cannot be guarded: trace f_jvp now, in this world, and keep it
        push = Transformed(Jit(_push(fun, n), backend=backend))
        push._pinned = True
        try:
            push(*primals, *(_copy(p) for p in _zero_tangents(primals)))
        except Exception:  # noqa: BLE001 -- f_jvp's own call says what is wrong
            pass
    else:
        push = _kept("jvp", fun, lambda: _push(fun, n), n, backend)

    def f_jvp(*tangents: Any) -> Any:
        if guards is not None and not guards.known(primals):
            raise RuntimeError(
                f"a value that {getattr(fun, '__name__', 'the function')} reads from outside "
                "its arguments (a global, a closure variable or an attribute) changed since "
                "sg.linearize was called, so this f_jvp no longer belongs to its point; call "
                "sg.linearize again")
        _check_tangents(primals, tuple(tangents))
        return push(*primals, *tangents)[1]

    return out, f_jvp


def _zero_tangents(primals: tuple) -> list:
    out = []
    for p in primals:
        leaves, structure = flatten(p)
        out.append(unflatten(structure, [_zeros_like(a) for a in leaves]))
    return out


# ---------------------------------------------------------------------------
# Jacobians


def _argnums(argnums: int | Sequence[int], n: int) -> tuple[tuple[int, ...], bool]:
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    if not nums or any(not isinstance(i, int) or not -n <= i < n for i in nums):
        raise ValueError(f"argnums {argnums!r} is out of range for {n} arguments")
    return tuple(i % n for i in nums), single


def _call_with(fun: Callable, args: tuple, nums: tuple[int, ...]) -> Callable:
    """``fun`` as a function of the arguments at ``nums``, the others fixed."""
    def partial(*chosen: Any) -> Any:
        full = list(args)
        for i, x in zip(nums, chosen):
            full[i] = x
        return fun(*full)
    return partial


def _basis(x: Any) -> Any:
    """The standard basis of the space of ``x``'s shape: ``size`` arrays, stacked."""
    shape = tuple(shape_of(x))
    size = math.prod(shape)
    return np.eye(size, dtype=_float_dtype(x)).reshape((size, *shape))


def _jacobian(fun: Callable, args: tuple, argnums: Any, has_aux: bool, forward: bool,
              holomorphic: bool = False) -> Any:
    nums, single = _argnums(argnums, len(args))
    chosen = tuple(args[i] for i in nums)
    _check_complex(chosen, forward, holomorphic)
    aux = None
    if has_aux:
        aux = _pair(fun(*args))[1]  # recorded here; the value's graph is derived below
        value_fun = fun
        fun = lambda *a: _pair(value_fun(*a))[0]  # noqa: E731
    partial = _call_with(fun, args, nums)
    in_leaves, in_tree = flatten(chosen)
    if forward:
        blocks = _forward_blocks(partial, chosen, in_leaves, in_tree)
    else:
        blocks = _reverse_blocks(partial, chosen, in_leaves)
    out_leaves, out_tree = blocks.pop()
    if holomorphic and not all(_is_complex(o) for o in out_leaves):  # JAX's rule
        raise TypeError(f"{'jacfwd' if forward else 'jacrev'} with holomorphic=True requires "
                        "outputs with complex dtype, but the function returns a real value "
                        "(a real function of complex values is not holomorphic: use "
                        "holomorphic=False)")
    if not holomorphic and not forward and any(_is_complex(o) for o in out_leaves):
        raise TypeError("jacrev requires real-valued outputs, but the function returns a "
                        "complex value. For holomorphic differentiation, pass "
                        "holomorphic=True; for a non-holomorphic function use symgrad.vjp")
    # blocks[j][k]: d out_j / d in_k, of shape out_j.shape + in_k.shape
    per_out = [unflatten(in_tree, blocks[j]) for j in range(len(out_leaves))]
    per_out = [b[0] if single else b for b in per_out]
    jac = unflatten(out_tree, per_out)
    return (jac, aux) if has_aux else jac


def _is_complex(x: Any) -> bool:
    return np.dtype(_float_dtype(x)).kind == "c"


def _check_complex(chosen: tuple, forward: bool, holomorphic: bool) -> None:
    """JAX's rules: ``holomorphic=True`` takes complex arguments only; without it,
    ``jacfwd`` takes real arguments only (a real basis would miss the imaginary
    directions) and ``jacrev`` real outputs only (checked once they are known)."""
    leaves = flatten(chosen)[0]
    name = "jacfwd" if forward else "jacrev"
    if holomorphic and not all(map(_is_complex, leaves)):
        raise TypeError(f"{name} with holomorphic=True requires inputs with complex dtype")
    if forward and not holomorphic and any(map(_is_complex, leaves)):
        raise TypeError("jacfwd requires real-valued inputs, but got a complex one. For "
                        "holomorphic differentiation, pass holomorphic=True; for a "
                        "non-holomorphic function, differentiate in the real and imaginary "
                        "parts")


def _pair(result: Any) -> tuple:
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        raise TypeError("with has_aux=True the function must return a pair (out, aux)")
    return tuple(result)


def _reverse_blocks(partial: Callable, chosen: tuple, in_leaves: list) -> list:
    out, pullback = vjp(partial, *chosen)
    out_leaves, out_tree = flatten(out)
    blocks = []
    for j, leaf in enumerate(out_leaves):
        def row(ct: Any, j: int = j) -> Any:
            cts = [ct if k == j else _zeros_like(o) for k, o in enumerate(out_leaves)]
            return flatten(pullback(unflatten(out_tree, cts)))[0]
        rows = vmap(row)(_basis(leaf))  # one per element of output j
        shape = tuple(shape_of(leaf))
        blocks.append([np.reshape(r, (*shape, *shape_of(x))) for r, x in zip(rows, in_leaves)])
    blocks.append((out_leaves, out_tree))
    return blocks


def _forward_blocks(partial: Callable, chosen: tuple, in_leaves: list, in_tree: Any) -> list:
    out = Transformed(Jit(partial))(*chosen)
    out_leaves, out_tree = flatten(out)
    columns = []  # columns[k][j]: (size_k, *out_j.shape)
    for k, leaf in enumerate(in_leaves):
        def column(t: Any, k: int = k) -> Any:
            ts = [t if i == k else _zeros_like(x) for i, x in enumerate(in_leaves)]
            return flatten(_pushforward(partial, chosen, unflatten(in_tree, ts))[1])[0]
        columns.append(vmap(column)(_basis(leaf)))
    blocks = []
    for j, o in enumerate(out_leaves):
        row = []
        for k, x in enumerate(in_leaves):
            c = np.moveaxis(columns[k][j], 0, -1)  # (*out_j.shape, size_k)
            row.append(np.reshape(c, (*shape_of(o), *shape_of(x))))
        blocks.append(row)
    blocks.append((out_leaves, out_tree))
    return blocks


def _jac_transform(forward: bool, name: str, doc: str) -> Callable:
    def transform(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
                  backend: str = "numba", sparse: bool = False,
                  holomorphic: bool = False) -> Any:
        if not callable(fun):
            raise TypeError(f"{name} needs a function, got {type(fun).__name__}")
        if sparse:
            if has_aux or holomorphic:
                raise ValueError(f"{name}(..., sparse=True) does not take has_aux=True or "
                                 "holomorphic=True")
            return SparseDerivative(fun, name, argnums, backend)
        jac = _named(lambda *args: _jacobian(fun, args, argnums, has_aux, forward,
                                             holomorphic), fun, name)
        return Transformed(Jit(jac, backend=backend))
    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = doc
    return transform


jacrev = _jac_transform(False, "jacrev", """The Jacobian of ``fun``, by reverse mode.

    ``jacrev(f, argnums=0)(*args)`` has shape ``out.shape + x.shape`` (a tuple over
    ``argnums`` for a tuple; pytrees of outputs and arguments give pytrees of
    blocks). One ``vjp`` per output element, batched (``vmap``) into one kernel:
    the choice when the output is smaller than the input. ``has_aux=True``: ``f``
    returns ``(out, aux)`` and the result is ``(jacobian, aux)``. ``sparse=True``: a
    ``scipy.sparse`` CSR matrix for a 1-D argument and output, from one product per
    colour of the rows (:mod:`symgrad.transforms.sparse_derivatives`).
    """)

jacfwd = _jac_transform(True, "jacfwd", """The Jacobian of ``fun``, by forward mode.

    As :func:`jacrev`; one ``jvp`` per input element, batched into one kernel: the
    choice when the input is smaller than the output. ``sparse=True``: a ``scipy.sparse``
    CSR matrix, one product per colour of the columns.
    """)

jacobian = jacrev


def hessian(fun: Callable, argnums: int | Sequence[int] = 0, backend: str = "numba",
            sparse: bool = False, holomorphic: bool = False) -> Any:
    """The Hessian of a scalar function: shape ``x.shape + x.shape``, forward over
    reverse (``jacfwd(jacrev(f))``), compiled as one kernel. ``sparse=True``: a
    ``scipy.sparse`` CSR matrix for a 1-D argument, from one Hessian-vector product per
    colour of its sparsity pattern (:mod:`symgrad.transforms.sparse_derivatives`).
    ``holomorphic=True`` (JAX's): both Jacobians holomorphic, so a holomorphic ``f`` of
    complex arguments has the complex Hessian ``f''(z)``."""
    if sparse:
        if holomorphic:
            raise ValueError("hessian(..., sparse=True) does not take holomorphic=True")
        return SparseDerivative(fun, "hessian", argnums, backend)
    return jacfwd(jacrev(fun, argnums, backend=backend, holomorphic=holomorphic), argnums,
                  backend=backend, holomorphic=holomorphic)


def hvp(fun: Callable, x: Any, v: Any, backend: str = "numba") -> Any:
    """``H(x)·v`` for a scalar ``fun`` of one argument, without forming ``H``: the
    gradient of ``<grad f(x), v>``, one compiled kernel whose cost is a small multiple
    of one gradient. ``x`` is passed to ``fun`` whole: a tuple ``x`` is one pytree
    argument, not JAX's ``jvp(grad(f), (x,), (v,))`` tuple of arguments (a ``fun`` that
    fails on the tuple raises a TypeError that says so).

        >>> import numpy as np, symgrad as sg
        >>> sg.hvp(lambda x: np.sum(x ** 3), np.array([1.0, 2.0]), np.array([1.0, 0.0]),
        ...        backend="numpy")
        array([6., 0.])
    """
    kernel = _kept("hvp", fun, lambda: _named(
        lambda x, v: grad(lambda y: _vdot(grad(fun)(y), v))(x), fun, "hvp"), backend)
    if not isinstance(x, (tuple, list)):
        return kernel(x, v)
    try:
        return kernel(x, v)
    except Exception as e:
        raise TypeError(
            f"sg.hvp(fun, x, v) calls fun(x) with x whole, here a {type(x).__name__} of "
            f"{len(x)}, and fun raised {type(e).__name__}: {e}. For JAX's convention "
            f"(hvp(f, (x,), (v,)) calling f(x)), call sg.hvp(f, x, v); for a fun of several "
            f"arguments, make it take them as one tuple: sg.hvp(lambda t: f(*t), (a, b), "
            f"(u, w))") from e


def _named(f: Callable, fun: Callable, what: str) -> Callable:
    """``f`` named after ``fun`` (for the kernel and messages), and holding it as ``fun``
    for :mod:`symgrad.transforms.captured`, which then guards what ``fun`` reads."""
    wrapper = functools.wraps(fun, updated=())(lambda *a: f(*a))
    wrapper.fun = fun  # type: ignore[attr-defined]
    return wrapper


__all__ = ["hessian", "hvp", "jacfwd", "jacobian", "jacrev", "jvp", "linearize"]
