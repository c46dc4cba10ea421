"""``layer_norm``: one primitive, as PyTorch's ``native_layer_norm`` is one node
(``NativeLayerNormBackward0``), which ``F.layer_norm`` (``nn.LayerNorm``) records for
float32 and float64 tensors.

``layer_norm(x, *affine, ndim, eps, weight, bias)`` normalizes ``x`` over its last
``ndim`` axes: each row (the elements sharing the leading indices) less its mean, times
``rstd = 1 / sqrt(var + eps)``, ``var`` the biased variance (the mean of the squared
deviations), then times the ``weight`` and plus the ``bias`` when present (``affine``:
the weight if ``weight``, then the bias if ``bias``, each of ``x``'s last ``ndim``
axes' shape). Computed in ``x``'s dtype as PyTorch's CPU kernel (float32 accumulates in
float32 there too), two passes over a row (the mean, then the squared deviations: no
cancellation; PyTorch's Welford update rounds otherwise, within a few ulps), ``rstd``
multiplied as PyTorch's. A row holding an inf or a nan is nan, as PyTorch's.

Its VJP is PyTorch's formula (``layer_norm_backward``), written with primitives so a
second derivative differentiates it: with ``xhat = (x - mean) * rstd`` and
``gw = g * weight``, ``dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat))`` (the
sums taken of ``x - mean``, times ``rstd`` after),
``dweight = sum(g * xhat)`` and ``dbias = sum(g)`` over the leading axes. The mean and
``rstd`` are recomputed from ``x`` (PyTorch saves them; a kernel recomputes them in the
loops it fuses).

    >>> import numpy as np
    >>> layer_norm(np.array([[1.0, 2.0, 3.0]]), ndim=1, eps=0.0)
    array([[-1.22474487,  0.        ,  1.22474487]])
    >>> layer_norm(np.array([[1.0, 3.0]]), np.array([2.0, 1.0]), np.array([0.0, 5.0]),
    ...            ndim=1, eps=0.0)
    array([[-2.,  6.]])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.errors import ShapeError
from ..core.ir import FLOAT, Aval, float_of
from ..core.tracing import apply
from .elementwise import add_p, mul_p, sqrt
from .reductions import expand, mean_p, reduce, sum_p
from .registry import register, require


def _rule(x: Aval, *affine: Aval, ndim: int, eps: float, weight: bool, bias: bool) -> Aval:
    require("layer_norm", (x, *affine), FLOAT)
    if not 1 <= ndim <= x.ndim:
        raise ShapeError(f"layer_norm: normalizes 1 to {x.ndim} trailing axes of {x}, "
                         f"not {ndim}")
    rows = x.shape[x.ndim - ndim:]
    if len(affine) != weight + bias or any(a.shape != rows for a in affine):
        raise ShapeError(f"layer_norm: takes {int(weight)} weight and {int(bias)} bias of "
                         f"shape {rows} after {x}; got {', '.join(map(str, affine))}")
    return Aval(x.shape, float_of(x, *affine))


def _axes(x: Any, ndim: int) -> tuple[int, ...]:
    return tuple(range(np.ndim(x) - ndim, np.ndim(x)))


def _layer_norm(x: Any, *affine: Any, ndim: int, eps: float, weight: bool,
                bias: bool) -> Any:
    """The values, computed by numpy in the operands' dtype."""
    x = np.asarray(x)
    if x.size == 0:
        out = x.copy()
    else:  # (numpy's reductions without their Python wrappers; in place where it can)
        axes = _axes(x, ndim)
        n = math.prod(x.shape[x.ndim - ndim:])
        mean = np.add.reduce(x, axis=axes, keepdims=True)
        mean /= n
        out = x - mean
        var = np.add.reduce(out * out, axis=axes, keepdims=True)
        var /= n
        var += x.dtype.type(eps)
        out *= 1 / np.sqrt(var)
    if weight:
        out = _into(np.multiply, out, affine[0])
    return _into(np.add, out, affine[-1]) if bias else out


def _into(ufunc: Any, out: np.ndarray, a: Any) -> np.ndarray:
    """``ufunc(out, a)``, written into ``out`` (a fresh array) where the dtype allows."""
    return ufunc(out, a, out=out if np.result_type(out, a) == out.dtype else None)


def _vjp(g: Any, ans: Any, x: Any, *affine: Any, ndim: int, eps: float, weight: bool,
         bias: bool) -> tuple:
    axes, lead = _axes(x, ndim), tuple(range(x.ndim - ndim))

    def row_mean(v: Any) -> Any:
        return expand(reduce(mean_p, v, axes), x.shape, axes)

    centred = x - row_mean(x)
    rstd = 1.0 / sqrt(row_mean(centred * centred) + eps)
    gw = g * affine[0] if weight else g
    # (rstd out of the row's sums: a row whose deviations sum to 0 exactly, under a
    # constant gw, has the gradient 0 exactly, as PyTorch's)
    grads = [rstd * (gw - row_mean(gw) - centred * (rstd * rstd * row_mean(gw * centred)))]
    if weight:
        grads.append(reduce(sum_p, g * (centred * rstd), lead))
    if bias:
        grads.append(reduce(sum_p, g, lead))
    return tuple(grads)


def _sympy(sp: Any, x: np.ndarray, *affine: np.ndarray, ndim: int, eps: float, weight: bool,
           bias: bool) -> np.ndarray:
    m = math.prod(x.shape[x.ndim - ndim:])
    rows = x.reshape(-1, m)
    out = np.empty(rows.shape, dtype=object)
    for i, row in enumerate(rows):
        mean = sp.Add(*row) / m
        rstd = 1 / sp.sqrt(sp.Add(*((v - mean) ** 2 for v in row)) / m + sp.Rational(eps))
        out[i] = [(v - mean) * rstd for v in row]
    out = out.reshape(x.shape)
    if weight:
        out = out * affine[0]
    return out + affine[-1] if bias else out


def _batch(b: Any, args: list, flags: list, *, ndim: int, eps: float, weight: bool,
           bias: bool) -> tuple:
    """``x`` batched along a new first axis, the weight and bias not: one equation; a
    batched weight or bias: the normalized rows, then each example's affine map."""
    x = args[0] if flags[0] else b.with_batch(args[0])
    if not any(flags[1:]):
        return b.bind(layer_norm_p, [x, *args[1:]], ndim=ndim, eps=eps, weight=weight,
                      bias=bias), True
    out = b.bind(layer_norm_p, [x], ndim=ndim, eps=eps, weight=False, bias=False)
    rank = len(b.shape(x)) - 1
    for prim, a, f in zip((mul_p, add_p)[not weight:], args[1:], flags[1:]):
        out = b.bind(prim, [out, b.aligned(a, f, rank)])
    return out, True


layer_norm_p = register(
    name="layer_norm", kind="array", shape_rule=_rule, impl=_layer_norm, vjp=_vjp,
    sympy=_sympy, batch=_batch)


def layer_norm(x: Any, weight: Any = None, bias: Any = None, *, ndim: int,
               eps: float) -> Any:
    """``x`` normalized over its last ``ndim`` axes, times ``weight`` and plus ``bias``
    when given (one equation)."""
    affine = [a for a in (weight, bias) if a is not None]
    return apply(layer_norm_p, x, *affine, ndim=int(ndim), eps=float(eps),
                 weight=weight is not None, bias=bias is not None)

