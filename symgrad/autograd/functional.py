"""``torch.autograd.functional``: ``vjp``, ``jvp``, ``jacobian``, ``hessian``, ``vhp``,
``hvp`` on Tensors, with PyTorch's signatures, shapes and tuple conventions.

``inputs`` is a Tensor or a tuple of Tensors and every result follows it: a Tensor
input gives Tensors, a tuple input tuples (``jacobian`` of a tuple-valued ``func``
gives a tuple per output, of a tuple per input). Inside, each input is a fresh
leaf that requires grad (with ``create_graph`` and an input that requires grad,
a recorded copy of it, so the results stay differentiable in the caller's
tensors), and everything is built on :func:`symgrad.autograd.grad`:

- ``vjp``: one ``grad`` with ``grad_outputs=v``;
- ``jvp``: the double-backward trick (the VJP with a cotangent ``u`` that requires
  grad is linear in ``u``; its VJP in ``u`` with ``v`` is ``J v``);
- ``jacobian``: one ``grad`` per output element (a basis cotangent, so every row
  reuses the same compiled backward); ``vectorize`` and ``strategy`` are accepted
  and give the same values;
- ``hessian``: the ``jacobian`` of the gradient (taken with ``create_graph``);
- ``vhp``/``hvp``: the gradient of ``<grad f, v>`` (the Hessian is symmetric, so
  both are ``H v``, as PyTorch's are for twice-differentiable functions).

An output independent of an input gives zeros, or with ``strict=True`` PyTorch's
error. Unless ``create_graph``, results are detached.

    >>> import symgrad as torch
    >>> from symgrad.autograd.functional import hessian
    >>> hessian(lambda x: (x ** 3).sum(), torch.tensor([1., 2.]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.tracing import Traced
from ..eager.double import grad
from ..eager.functions import stack
from ..eager.grad_mode import enable_grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


def _as_tuple(x: Any, arg: str, fn: str) -> tuple[bool, tuple[Any, ...]]:
    """(whether ``x`` was a tuple, ``x`` as a tuple of Tensors)."""
    is_tuple = isinstance(x, tuple)
    items = x if is_tuple else (x,)
    for i, t in enumerate(items):
        if not isinstance(t, Traced):
            where = f"the value at index {i}" if is_tuple else f"the given {arg}"
            raise TypeError(f"The {arg} given to {fn} must be either a Tensor or a tuple of "
                            f"Tensors but {where} has type {type(t)}.")
    return is_tuple, items


def _prepare(inputs: tuple[Any, ...], create_graph: bool) -> tuple[Any, ...]:
    """Fresh leaves that require grad; with ``create_graph``, an input that requires grad
    enters as a recorded copy, so the results depend on it."""
    if create_graph:
        with enable_grad():
            return tuple(t * 1.0 if t._requires_grad else t.detach().requires_grad_(True)
                         for t in inputs)
    return tuple(t.detach().requires_grad_(True) for t in inputs)


def _finish(x: Any, create_graph: bool) -> Any:
    """Detach results unless ``create_graph`` (nested tuples too)."""
    if isinstance(x, tuple):
        return tuple(_finish(e, create_graph) for e in x)
    return x if create_graph or x is None else x.detach()


def _unpack(x: tuple[Any, ...], is_tuple: bool) -> Any:
    return x if is_tuple else x[0]


def _check_v(v: tuple[Any, ...], other: tuple[Any, ...], is_tuple: bool) -> None:
    if len(v) != len(other):
        if is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but "
                               f"got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, other)):
        if tuple(a.shape) != tuple(b.shape):
            prefix = f"Entry {i} in " if is_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {b.shape} but got "
                               f"{a.shape}.")


def _outputs(func: Callable, inputs: tuple[Any, ...], fn: str) -> tuple[bool, tuple]:
    with enable_grad():
        out = func(*inputs)
    return _as_tuple(out, "outputs of the user-provided function", fn)


def _grads(outputs: tuple, inputs: tuple, cts: Any, create_graph: bool, strict: bool,
           stage: str) -> tuple[Any, ...]:
    """``grad`` with unused inputs as zeros (or ``strict``'s error)."""
    used = tuple(o for o in outputs if o._requires_grad)
    if not used:
        found: tuple = (None,) * len(inputs)
    else:
        keep = [k for k, o in enumerate(outputs) if o._requires_grad]
        ct = None if cts is None else [cts[k] for k in keep]
        found = grad(used, inputs, ct, retain_graph=True, create_graph=create_graph,
                     allow_unused=True)
    result = []
    for i, (g, t) in enumerate(zip(found, inputs)):
        if g is None:
            if strict:
                raise RuntimeError(_STRICT.get(stage, stage).format(i))
            g = type(t)._make(np.zeros(t.shape, dtype=t._value.dtype))
        result.append(g)
    return tuple(result)


_STRICT = {
    "back": "The output of the user-provided function is independent of input {}. This is "
            "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {}. "
                   "This is not allowed in strict mode.",
}


def _default_v(v: Any, like: tuple[Any, ...], is_tuple: bool, fn: str, what: str) -> tuple:
    """``v`` as a tuple checked against ``like``; ones when omitted for one element."""
    if v is None:
        if len(like) != 1 or like[0]._value.size != 1:
            raise RuntimeError(f"The vector v can only be None if the {what} a single Tensor "
                               "with a single element.")
        return (type(like[0])._make(np.ones(like[0].shape)),)
    _, vs = _as_tuple(v, "v", fn)
    _check_v(vs, like, is_tuple)
    return vs


def vjp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), vᵀ J)``: the vector-Jacobian product, shaped as ``inputs``."""
    is_in_tuple, xs = _as_tuple(inputs, "inputs", "vjp")
    xs = _prepare(xs, create_graph)
    is_out_tuple, outs = _outputs(func, xs, "vjp")
    vs = _default_v(v, outs, is_out_tuple, "vjp", "user-provided function returns")
    grads = _grads(outs, xs, vs, create_graph, strict, "back")
    return (_finish(_unpack(outs, is_out_tuple), create_graph),
            _finish(_unpack(grads, is_in_tuple), create_graph))


def jvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), J v)``: the Jacobian-vector product, shaped as the outputs."""
    is_in_tuple, xs = _as_tuple(inputs, "inputs", "jvp")
    xs = _prepare(xs, create_graph)
    vs = _default_v(v, xs, is_in_tuple, "jvp", "input to the user-provided function is")
    is_out_tuple, outs = _outputs(func, xs, "jvp")
    with enable_grad():  # a cotangent u that requires grad: the VJP is linear in u
        us = tuple(type(o)._make(np.zeros(o.shape)).requires_grad_(True) for o in outs)
    back = _grads(outs, xs, us, True, strict, "back")
    result = _grads(back, us, vs, create_graph, strict, "back_trick")
    return (_finish(_unpack(outs, is_out_tuple), create_graph),
            _finish(_unpack(result, is_out_tuple), create_graph))


def jacobian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """The Jacobian: for output ``i`` and input ``j`` a Tensor of shape
    ``outputs[i].shape + inputs[j].shape``; a Tensor when both are single Tensors, a
    tuple over the tuple side, a tuple of tuples when both are tuples."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                         "Hint: If your function has more outputs than inputs, "
                         '"forward-mode" tends to be more performant. Otherwise, prefer to '
                         'use "reverse-mode".')
    if strategy == "forward-mode" and not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse "
                                  "Hessian isonly implemented for `vectorize=True`.")
    if strategy == "forward-mode" and create_graph:
        raise NotImplementedError("torch.autograd.functional.jacobian: `create_graph=True` "
                                  "and `strategy=\"forward-mode\"` are not supported together "
                                  "yet.")
    is_in_tuple, xs = _as_tuple(inputs, "inputs", "jacobian")
    xs = _prepare(xs, create_graph)
    is_out_tuple, outs = _outputs(func, xs, "jacobian")
    blocks = []
    for i, out in enumerate(outs):
        rows: list[list[Any]] = [[] for _ in xs]
        for k in range(out._value.size):  # one backward per element: a basis cotangent
            basis = np.zeros(out._value.size)
            basis[k] = 1.0
            cts = (type(out)._make(basis.reshape(out.shape)),)
            grads = _grads((out,), xs, cts, create_graph, strict, f"Output {i} of the "
                           "user-provided function is independent of input {}. This is not "
                           "allowed in strict mode.")
            for j, g in enumerate(grads):
                rows[j].append(g)
        blocks.append(tuple(_stack(r, out, x, create_graph) for r, x in zip(rows, xs)))
    result = tuple(_unpack(b, is_in_tuple) for b in blocks)
    return _finish(_unpack(result, is_out_tuple), create_graph)


def _stack(rows: list[Any], out: Any, x: Any, create_graph: bool) -> Any:
    """One Jacobian block, shape ``out.shape + x.shape``, from its rows."""
    shape = (*out.shape, *x.shape)
    if not rows:
        return type(x)._make(np.zeros(shape, dtype=x._value.dtype))
    if create_graph and any(r._requires_grad for r in rows):
        with enable_grad():
            return stack(rows).reshape(shape)
    return type(x)._make(np.stack([r._value for r in rows]).reshape(shape))


def hessian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a ``func`` returning one element: shape ``x.shape + x.shape`` for a
    Tensor input, a tuple of tuples (block ``i, j``) for a tuple of inputs."""
    is_in_tuple, xs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError("outer_jacobian_strategy must be \"forward-mode\" or "
                         "\"reverse-mode\"")

    def gradient(*ys: Any) -> tuple[Any, ...]:
        _, outs = _outputs(func, ys, "hessian")
        if len(outs) != 1 or outs[0]._value.size != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian "
                               "should contain a single element")
        return _grads(outs, ys, None, True, strict, "double_back")

    result = jacobian(gradient, xs, create_graph=create_graph, strict=strict,
                      vectorize=vectorize, strategy=outer_jacobian_strategy)
    return result if is_in_tuple else result[0][0]


def vhp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), vᵀ H)``, shaped as ``inputs``; ``func`` returns one element."""
    return _hessian_product(func, inputs, v, create_graph, strict, "vhp")


def hvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), H v)``, shaped as ``inputs``; ``func`` returns one element."""
    return _hessian_product(func, inputs, v, create_graph, strict, "hvp")


def _hessian_product(func: Callable, inputs: Any, v: Any, create_graph: bool, strict: bool,
                     fn: str) -> tuple[Any, Any]:
    is_in_tuple, xs = _as_tuple(inputs, "inputs", fn)
    xs = _prepare(xs, create_graph)
    vs = _default_v(v, xs, is_in_tuple, fn, "input to the user-provided function is")
    is_out_tuple, outs = _outputs(func, xs, fn)
    if is_out_tuple or len(outs) != 1 or outs[0]._value.size != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn} should "
                           "contain a single element")
    jac = _grads(outs, xs, None, True, strict, "double_back")
    with enable_grad():
        inner = sum(((g * v).sum() for g, v in zip(jac, vs)))
    if not isinstance(inner, Traced) or not inner._requires_grad:
        if strict:
            raise RuntimeError(_STRICT["double_back"].format(0))
        result = tuple(type(x)._make(np.zeros(x.shape, dtype=x._value.dtype)) for x in xs)
    else:
        result = _grads((inner,), xs, None, create_graph, strict, "double_back")
    return (_finish(outs[0], create_graph), _finish(_unpack(result, is_in_tuple), create_graph))
