"""The eager fast path (:mod:`.fastpath`) for several Tensor operands of one floating
dtype: ``F.linear``'s rows, weight and bias, ``layer_norm``'s input and affine
parameters, ``nll_loss``'s log-probabilities and data. What cannot change between two
calls with the same shapes and parameters (the aval, the implementation, the node class
and signature) is looked up once per (primitive, dtype, shapes, parameters), as
:func:`.fastpath.unary_f64` does for one operand. Contract: the same value, dtype and
node as :func:`.fastpath.apply_f64` (the general path's); ``tests/test_eager_fastpath.py``
compares them, and PyTorch.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.ir import Aval, Primitive
from ..prims import layer_norm as layer_norm_prims
from ..prims import linalg as linalg_prims
from ..prims import softmax as softmax_prims
from ..prims.reductions import transpose_p
from . import fastpath as fp
from . import grad_mode
from .graph import Node
from .method_args import named
from .replay import keep

_F64 = np.dtype(np.float64)
_F32 = np.dtype(np.float32)


#: :func:`tensors_f64`'s recipes, per (primitive, dtype, shapes, parameters)
_TENSORS: dict[tuple, tuple | None] = {}


def tensors_f64(prim: Primitive, args: Sequence[Any], params: dict[str, Any], make: Any
                ) -> Any:
    """:func:`.fastpath.apply_f64` of ``prim(*args, **params)`` for Tensors all float64
    or all float32 and hashable ``params``, memoized per shapes as
    :func:`.fastpath.unary_f64`: the same value, node and result; None for any other
    operands (the caller's path). Not for views (no alias is noted)."""
    tensor, values, grad = fp.TENSOR[0], [], False
    kind = args[0]._value.dtype if isinstance(args[0], tensor) else None
    if (kind is not _F64 and kind is not _F32) or fp._ERRSTATE is None:
        return None
    for a in args:
        if not isinstance(a, tensor) or a._value.dtype is not kind:
            return None
        values.append(a._value)
        grad = grad or a._requires_grad
    key = (prim, kind, *[v.shape for v in values], *params.items())
    recipe = _TENSORS.get(key, False)
    if recipe is False:
        recipe = _tensors_recipe(prim, tuple(v.shape for v in values), params, key, kind)
    if recipe is None:
        return None
    aval, impl, cls, sig = recipe
    token = fp._ERRSTATE.set(fp._IGNORE)
    try:
        value = impl(*values, **params)
    finally:
        fp._ERRSTATE.reset(token)
    if type(value) is not np.ndarray or value.dtype is not kind:
        value = np.asarray(value, dtype=kind)
    if not (grad and grad_mode.is_grad_enabled()):
        return make(value, None)
    inputs = tuple([(a._node if a._node is not None else a) if a._requires_grad else v
                    for a, v in zip(args, values)])
    node = cls(prim, params, inputs, aval, sig)
    result = make(value, node)
    node.made = (weakref.ref(result), 0)
    node.versions, node.reads = fp.watched(prim, args, result)
    keep(node, value, values)
    return result


def _tensors_recipe(prim: Primitive, shapes: tuple, params: dict[str, Any], key: tuple,
                    kind: np.dtype) -> tuple | None:
    try:
        hash(key)
    except TypeError:
        return None
    recipe = None if prim.view or prim.name == "convert" else \
        fp.shaped_recipe(prim, shapes, params, kind)
    if len(_TENSORS) < 10_000:
        _TENSORS[key] = recipe
    return recipe


# ---------------------------------------------------------------------------
# nn's primitives of several Tensors (nn reaches primitives through here)


def nll_loss_rows(logp: Any, target: np.ndarray, w: np.ndarray, total: np.ndarray, axis: int,
                  reduction: str) -> Any:
    """``F.nll_loss``'s node (:func:`symgrad.prims.softmax.nll_loss`; nn reaches primitives
    through here): its data as Tensors of ``logp``'s dtype, which the fast path takes."""
    make = type(logp)._make
    args = (logp, make(target), make(w), make(total))
    # (the fast path at once: the node and value the primitive's call reaches)
    fast = tensors_f64(softmax_prims.nll_loss_p, args,
                       {"axis": int(axis), "reduction": reduction}, make)
    return softmax_prims.nll_loss(*args, axis, reduction) if fast is None else fast


def linear_rows(x: Any, weight: Any, bias: Any = None) -> Any:
    """``F.linear``'s product of the rows of an ``x`` of three axes or more by
    ``weight.T``, plus ``bias`` when given: one node, one matrix product
    (:func:`symgrad.prims.linalg.linear`; nn reaches primitives through here)."""
    args = (x, weight) if bias is None else (x, weight, bias)
    fast = tensors_f64(linalg_prims.linear_p, args, {}, x._make)  # (the node and value the
    return linalg_prims.linear(x, weight, bias) if fast is None else fast  # call reaches)


def addmm_rows(x: Any, weight: Any, bias: Any) -> Any:
    """``F.linear`` of a matrix ``x``, a matrix ``weight`` and a bias: :func:`linear_rows`'s
    one node and one ``gemm`` (``x @ weight.t() + bias`` is three nodes and a second pass
    over the product), named as PyTorch 2.13's ``AddmmBackward0``, whose
    ``next_functions`` show the bias, the input and a ``TBackward0`` of the weight. That
    ``TBackward0`` is only shown (no gradient flows through it: the node's own gradient of
    ``weight`` goes to the weight's node or leaf, which it shows)."""
    out = linear_rows(x, weight, bias)
    node = out._node
    if node is None:
        return out
    node.rename("AddmmBackward0")
    w = weight._node if weight._node is not None else weight if weight._requires_grad \
        else None
    wt = None
    if w is not None:
        wt = Node(transpose_p, {"perm": (1, 0)}, (w,),
                  Aval(weight._value.shape[::-1], node.aval.dtype))
        wt.rename("TBackward0")
    node.shown = tuple(a._node if a._node is not None else a if a._requires_grad else None
                       for a in (bias, x)) + (wt,)
    return out


def layer_norm_rows(x: Any, weight: Any, bias: Any, ndim: int, eps: float) -> Any:
    """``F.layer_norm``'s node (:func:`symgrad.prims.layer_norm.layer_norm`; nn reaches
    primitives through here). Its ``next_functions`` show the input, the weight and the
    bias, None for those not given, as PyTorch's."""
    affine = tuple(a for a in (weight, bias) if a is not None)
    out = tensors_f64(layer_norm_prims.layer_norm_p, (x, *affine),
                      {"ndim": int(ndim), "eps": float(eps), "weight": weight is not None,
                       "bias": bias is not None}, x._make)  # (as the primitive's call)
    if out is None:
        out = layer_norm_prims.layer_norm(x, weight, bias, ndim=ndim, eps=eps)
    if weight is None or bias is None:
        named(out, x, "NativeLayerNormBackward0", (x, weight, bias))
    return out
